"""Compares runs side by side: a table of headline metrics and an HTML page with figures."""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from forkingpaths.core.benchmark import MetricSpec, PlotArtifact
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.registry import make_benchmark
from forkingpaths.report.html import render_page
from forkingpaths.report.tables import Best, Link, Table, headline_keys, metric_cell, metric_title
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run

log = logging.getLogger(__name__)

BEST_NOTE = "↑ higher is better, ↓ lower is better; ★ the best of these runs"


def load_summary(path: Path) -> dict[str, Any]:
    """metrics.json of a run directory (re-scored from the records when missing)."""
    run_dir = RunDirectory(path)
    if not run_dir.exists():
        raise InvalidFile(f"{path}: not a run directory (no spec.json)")
    if run_dir.metrics_path.exists():
        return run_dir.read_metrics().model_dump()
    return rescore_run(run_dir)[0]


def _agent(summary: dict[str, Any]) -> str:
    options = ",".join(f"{k}={v}" for k, v in (summary.get("agent_options") or {}).items())
    return f"{summary['agent']}({options})" if options else summary["agent"]


def comparison_table(summaries: Sequence[dict[str, Any]]) -> Table:
    """All runs in one table, every benchmark's headline metrics as columns (by key)."""
    keys: list[str] = []
    for s in summaries:
        bench = make_benchmark(s["benchmark"])
        for k in headline_keys(bench, s["metrics"]):
            if k not in keys:
                keys.append(k)
    rows = []
    for s in summaries:
        rows.append(
            [
                s["run_id"],
                s["benchmark"],
                _agent(s),
                s["model"] or "–",
                s["episodes"]["ok"],
                s["episodes"]["errored"],
                *(s["metrics"].get(k) for k in keys),
                s["usage"]["cost_usd"],
            ]
        )
    _mark_best(summaries, keys, rows, first_metric=6)
    arrows = {"higher": " ↑", "lower": " ↓"}
    specs = _metric_specs(summaries)
    titles = [f"{k}{arrows.get(specs[k].direction, '') if k in specs else ''}" for k in keys]
    header = ["run", "benchmark", "agent", "model", "ok", "errored", *titles, "cost_usd"]
    note = "↑ higher is better, ↓ lower is better; ★ the best of the runs of a benchmark"
    return Table("Comparison", header, rows, note=note)


def benchmark_tables(
    summaries: Sequence[dict[str, Any]],
    run_dirs: Sequence[Path] | None = None,
    page_dir: Path | None = None,
) -> list[Table]:
    """One table per benchmark: a row per run, that benchmark's headline metrics as columns
    titled by their labels and directions, the best of the runs starred. With the run
    directories, a `roles` column lists the protocol's models (where some run configures one);
    with `page_dir` too, each run links to its report.html by a path relative to that page, so
    the links work when the folder is opened from disk."""
    dirs: Sequence[Path | None] = run_dirs if run_dirs is not None else [None] * len(summaries)
    tables = []
    for bid in dict.fromkeys(s["benchmark"] for s in summaries):
        members = [(s, d) for s, d in zip(summaries, dirs, strict=True) if s["benchmark"] == bid]
        bench = make_benchmark(bid)
        specs = bench.metric_specs
        keys: list[str] = []
        for s, _ in members:
            keys += [k for k in headline_keys(bench, s["metrics"]) if k not in keys]
        roles = [_roles(d) for _, d in members]
        with_roles = any(roles)
        rows = []
        for (s, run_dir), role in zip(members, roles, strict=True):
            rows.append(
                [
                    _run_cell(s["run_id"], run_dir, page_dir),
                    _agent(s),
                    s["model"] or "–",
                    *([role or "–"] if with_roles else []),
                    s["episodes"]["ok"],
                    s["episodes"]["errored"],
                    *(metric_cell(k, s["metrics"].get(k), specs) for k in keys),
                    s["usage"]["cost_usd"],
                ]
            )
        first_metric = 6 if with_roles else 5
        _mark_best([s for s, _ in members], keys, rows, first_metric=first_metric)
        header = [
            "run",
            "agent",
            "model",
            *(["roles"] if with_roles else []),
            "ok",
            "errored",
            *(metric_title(k, specs) for k in keys),
            "cost (USD)",
        ]
        tables.append(Table(bid, header, rows, note=BEST_NOTE))
    return tables


def _roles(run_dir: Path | None) -> str:
    """The protocol's models of a run (`judge=scripted/escape-judge`), from its spec.json."""
    if run_dir is None or not RunDirectory(run_dir).exists():
        return ""
    roles = RunDirectory(run_dir).read_header().spec.roles
    return ", ".join(f"{role}={ref.model}" for role, ref in roles.items())


def _run_cell(run_id: str, run_dir: Path | None, page_dir: Path | None) -> str | Link:
    if run_dir is None or page_dir is None:
        return run_id
    report = RunDirectory(run_dir).report_path
    if not report.exists():
        return run_id
    return Link(run_id, quote(Path(os.path.relpath(report, page_dir)).as_posix()))


def _metric_specs(summaries: Sequence[dict[str, Any]]) -> dict[str, MetricSpec]:
    specs: dict[str, MetricSpec] = {}
    for bid in dict.fromkeys(s["benchmark"] for s in summaries):
        for key, spec in make_benchmark(bid).metric_specs.items():
            specs.setdefault(key, spec)
    return specs


def _mark_best(
    summaries: Sequence[dict[str, Any]], keys: list[str], rows: list[list[Any]], first_metric: int
) -> None:
    """Rank the runs of each benchmark on every metric with a direction: its best cells become
    `Best` (ties all marked; nothing marked when only one run has a value)."""
    for bid in dict.fromkeys(s["benchmark"] for s in summaries):
        specs: Mapping[str, MetricSpec] = make_benchmark(bid).metric_specs
        members = [i for i, s in enumerate(summaries) if s["benchmark"] == bid]
        for column, key in enumerate(keys, start=first_metric):
            spec = specs.get(key)
            if spec is None or spec.direction == "none":
                continue
            values = {
                i: rows[i][column]
                for i in members
                if isinstance(rows[i][column], int | float)
                and not isinstance(rows[i][column], bool)
            }
            if len(values) < 2 or len(set(values.values())) < 2:
                continue
            pick = max if spec.direction == "higher" else min
            best = pick(values.values())
            for i, value in values.items():
                if value == best:
                    rows[i][column] = Best(value)


def write_comparison(
    run_dirs: Sequence[Path],
    out: Path,
    summaries: Sequence[dict[str, Any]] | None = None,
    *,
    title: str = "Comparison of runs",
    rebuild: str | None = None,
    recomputed: bool = False,
) -> Path:
    """The HTML comparison of runs: a table per benchmark (each run linked to its report) and
    the benchmarks' comparison figures. `rebuild` is the command that rebuilds the page (the
    `forkingpaths compare` that wrote it by default) and `recomputed` whether it recomputes the
    numbers from the records."""
    if summaries is None:
        summaries = [load_summary(Path(p)) for p in run_dirs]
    out.parent.mkdir(parents=True, exist_ok=True)
    tables = benchmark_tables(summaries, [Path(p) for p in run_dirs], out.parent)
    plots: list[PlotArtifact] = []
    by_bench: dict[str, list[dict[str, Any]]] = {}
    for s in summaries:
        by_bench.setdefault(s["benchmark"], []).append(s)
    for bid, group in by_bench.items():
        try:
            plots += make_benchmark(bid).compare_plots(group, out.parent / "plots")
        except Exception:  # a broken figure must not cost the user the rest of the comparison
            log.exception("comparison plotting failed for %s; its figures are left out", bid)
    if rebuild is None:
        rebuild = shlex.join(["forkingpaths", "compare", *map(str, run_dirs), "--html", str(out)])
    html = render_page(title, out.parent, tables, plots, rebuild=rebuild, recomputed=recomputed)
    out.write_text(html, encoding="utf-8")
    return out


def compare_runs(
    run_dirs: Sequence[Path],
    html: Path | None,
    *,
    show: Callable[[Table], None] | None = None,
) -> tuple[Table, Path | None]:
    """The comparison table of runs (`show` gets it first, before any figure is drawn) and the
    HTML page when `html` names one. A run without metrics.json is scored from its records in
    one pass."""
    summaries = [load_summary(Path(p)) for p in run_dirs]
    table = comparison_table(summaries)
    if show is not None:
        show(table)
    path = write_comparison(run_dirs, html, summaries) if html else None
    return table, path
