"""Compares runs side by side: a table of headline metrics and an HTML page with figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from forkingpaths.core.benchmark import MetricSpec, PlotArtifact
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.registry import make_benchmark
from forkingpaths.report.html import render_page
from forkingpaths.report.tables import Best, Table, headline_keys
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run


def load_summary(path: Path) -> dict[str, Any]:
    """metrics.json of a run directory (re-scored from the records when missing)."""
    run_dir = RunDirectory(path)
    if not run_dir.exists():
        raise InvalidFile(f"{path}: not a run directory (no spec.json)")
    if run_dir.metrics_path.exists():
        return run_dir.read_metrics().model_dump()
    return rescore_run(run_dir)[0]


def comparison_table(summaries: Sequence[dict[str, Any]]) -> Table:
    keys: list[str] = []
    for s in summaries:
        bench = make_benchmark(s["benchmark"])
        for k in headline_keys(bench, s["metrics"]):
            if k not in keys:
                keys.append(k)
    rows = []
    for s in summaries:
        options = ",".join(f"{k}={v}" for k, v in (s.get("agent_options") or {}).items())
        agent = f"{s['agent']}({options})" if options else s["agent"]
        rows.append(
            [
                s["run_id"],
                s["benchmark"],
                agent,
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
        specs = make_benchmark(bid).metric_specs
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
    run_dirs: Sequence[Path], out: Path, summaries: Sequence[dict[str, Any]] | None = None
) -> Path:
    if summaries is None:
        summaries = [load_summary(Path(p)) for p in run_dirs]
    table = comparison_table(summaries)
    out.parent.mkdir(parents=True, exist_ok=True)
    plots: list[PlotArtifact] = []
    by_bench: dict[str, list[dict[str, Any]]] = {}
    for s in summaries:
        by_bench.setdefault(s["benchmark"], []).append(s)
    for bid, group in by_bench.items():
        plots += make_benchmark(bid).compare_plots(group, out.parent / "plots")
    links = Table(
        "Run reports",
        ["run", "report"],
        [
            [s["run_id"], str(Path(p) / "report.html")]
            for s, p in zip(summaries, run_dirs, strict=True)
        ],
    )
    out.write_text(render_page("Comparison of runs", out.parent, [table, links], plots))
    return out


def compare_runs(run_dirs: Sequence[Path], html: Path | None) -> tuple[Table, Path | None]:
    summaries = [load_summary(Path(p)) for p in run_dirs]
    path = write_comparison(run_dirs, html, summaries) if html else None
    return comparison_table(summaries), path
