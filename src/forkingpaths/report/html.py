"""Renders a run directory's report.html from its records and metrics."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2

from forkingpaths.core.benchmark import Benchmark, PlotArtifact
from forkingpaths.core.records import EpisodeRecord, RunHeader
from forkingpaths.core.version import __version__
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


def render_page(
    title: str,
    run_dir: Path,
    sections: Sequence[Table],
    plots: Sequence[PlotArtifact],
    errors: Sequence[dict[str, Any]] = (),
    *,
    rebuild: str | None = None,
    recomputed: bool = True,
) -> str:
    """A report page. `rebuild` is the command that rebuilds it (`forkingpaths report RUN_DIR`
    by default); `recomputed` says whether that command recomputes every number from the
    records (otherwise they are read from the runs' metrics.json). A figure whose file is
    missing (a benchmark that had nothing to draw) is left out."""
    template = _environment().get_template("run.html.j2")
    return template.render(
        title=title,
        version=__version__,
        run_dir=str(run_dir),
        rebuild=rebuild or f"forkingpaths report {run_dir}",
        recomputed=recomputed,
        sections=sections,
        plots=[
            {"src": _relative(p.path, run_dir), "title": p.title, "caption": p.caption}
            for p in plots
            if Path(p.path).is_file()
        ],
        errors=errors,
    )


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
    records: Sequence[EpisodeRecord],
    summary: dict[str, Any],
) -> Path:
    ok = [r for r in records if r.status == "ok"]
    plots: list[PlotArtifact] = []
    if ok:
        try:
            plots = benchmark.report_plots(ok, run_dir.path / "plots")
        except Exception:  # a broken figure must not cost the user the rest of the report
            log.exception("plotting failed for %s; the report has no figures", run_dir.path)
    sections = [*run_sections(header, benchmark, summary), episodes_table(benchmark, records)]
    html = render_page(
        f"{benchmark.id} — {header.run_id}", run_dir.path, sections, plots, summary["errors"]
    )
    run_dir.report_path.write_text(html, encoding="utf-8")
    return run_dir.report_path
