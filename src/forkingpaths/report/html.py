"""Renders a run directory's report.html from its scored episodes and metrics."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2

from forkingpaths.core.benchmark import Benchmark, PlotArtifact
from forkingpaths.core.records import RunHeader
from forkingpaths.core.version import __version__
from forkingpaths.report.figures import FigureMode, Figures, start_figures
from forkingpaths.report.tables import (
    Link,
    Table,
    calls_table,
    episodes_table,
    format_value,
    group_table,
    is_numeric,
    record_tables,
    spec_table,
    summary_table,
    usage_table,
)
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import ScoredRun

log = logging.getLogger(__name__)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("forkingpaths.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    env.filters["fmt"] = format_value
    env.tests["numeric"] = is_numeric
    env.tests["link"] = lambda value: isinstance(value, Link)
    return env


def _page_context(
    title: str,
    run_dir: Path,
    plots: Sequence[PlotArtifact],
    errors: Sequence[dict[str, Any]],
    rebuild: str | None,
    recomputed: bool,
    figures_note: str,
) -> dict[str, Any]:
    return dict(
        title=title,
        version=__version__,
        run_dir=str(run_dir),
        rebuild=rebuild or f"forkingpaths report {run_dir}",
        recomputed=recomputed,
        plots=[
            {"src": _relative(p.path, run_dir), "title": p.title, "caption": p.caption}
            for p in plots
            if Path(p.path).is_file()
        ],
        errors=errors,
        figures_note=figures_note,
    )


def render_page(
    title: str,
    run_dir: Path,
    sections: Sequence[Table],
    plots: Sequence[PlotArtifact],
    errors: Sequence[dict[str, Any]] = (),
    *,
    rebuild: str | None = None,
    recomputed: bool = True,
    figures_note: str = "",
) -> str:
    """A report page. `rebuild` is the command that rebuilds it (`forkingpaths report RUN_DIR`
    by default); `recomputed` says whether that command recomputes every number from the
    records (otherwise they are read from the runs' metrics.json). A figure whose file is
    missing (a benchmark that had nothing to draw) is left out."""
    template = _environment().get_template("run.html.j2")
    context = _page_context(title, run_dir, plots, errors, rebuild, recomputed, figures_note)
    return template.render(sections=sections, **context)


def write_page(
    path: Path,
    title: str,
    run_dir: Path,
    sections: Sequence[Table],
    plots: Sequence[PlotArtifact],
    errors: Sequence[dict[str, Any]] = (),
    *,
    figures_note: str = "",
) -> None:
    """`render_page` written to `path` as it is rendered, a table's rows taken one at a time
    (they may be a generator), then moved into place: a reader never sees half a page."""
    template = _environment().get_template("run.html.j2")
    context = _page_context(title, run_dir, plots, errors, None, True, figures_note)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        template.stream(sections=sections, **context).dump(fh)
    os.replace(tmp, path)


def _relative(path: Path, base: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(base).resolve()))
    except ValueError:
        return str(path)


def run_sections(header: RunHeader, benchmark: Benchmark, summary: dict[str, Any]) -> list[Table]:
    """A run's tables above its list of episodes, as report.html and the viewer show them: the
    spec, the metrics, per-record metric tables, the groups, usage and the calls by purpose."""
    sections = [spec_table(header, summary, benchmark), summary_table(benchmark, summary)]
    sections += record_tables(benchmark, summary)
    groups = group_table(benchmark, summary)
    if groups:
        sections.append(groups)
    sections.append(usage_table(summary))
    calls = calls_table(summary)
    if calls is not None:
        sections.append(calls)
    return sections


def write_run_report(
    run_dir: RunDirectory,
    header: RunHeader,
    benchmark: Benchmark,
    scored: ScoredRun,
    summary: dict[str, Any],
    *,
    figures: FigureMode = "inline",
) -> Figures | None:
    """Write report.html: the run's tables and one row per episode, written as it is rendered
    (a run of any size in little memory), with its figures. `figures`: `inline` draws them
    first (the caller waits), `background` writes the page now, saying its figures are being
    drawn, and starts a process that draws them and writes the page again (returned, to
    wait for), `none` leaves them out (and the page refers to `forkingpaths report`)."""
    plots: list[PlotArtifact] = []
    ok = scored.ok
    drawing = figures == "background" and bool(ok)
    if figures == "inline" and ok:
        try:
            plots = benchmark.report_plots(ok, run_dir.path / "plots", scored.records)
        except Exception:  # a broken figure must not cost the user the rest of the report
            log.exception("plotting failed for %s; the report has no figures", run_dir.path)
    sections = [
        *run_sections(header, benchmark, summary),
        episodes_table(benchmark, scored.episodes),
    ]
    note = ""
    if drawing:
        note = (
            "Figures are being drawn in the background: reload this page in a few seconds"
            f" (if none appear, forkingpaths report {run_dir.path} draws them)."
        )
    elif figures == "none" and ok:
        note = f"Figures are left out: forkingpaths report {run_dir.path} draws them."
    write_page(
        run_dir.report_path,
        f"{benchmark.id} — {header.run_id}",
        run_dir.path,
        sections,
        plots,
        summary["errors"],
        figures_note=note,
    )
    return start_figures(run_dir) if drawing else None
