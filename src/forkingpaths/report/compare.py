"""Compares runs side by side: a table of headline metrics and an HTML page with figures."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from forkingpaths.core.benchmark import PlotArtifact
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.registry import make_benchmark
from forkingpaths.report.html import render_page
from forkingpaths.report.tables import Table, headline_keys
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run


def load_summary(path: Path) -> dict[str, Any]:
    """metrics.json of a run directory (re-scored from the records when missing)."""
    run_dir = RunDirectory(path)
    if not run_dir.exists():
        raise InvalidFile(f"{path}: not a run directory (no spec.json)")
    if run_dir.metrics_path.exists():
        return json.loads(run_dir.metrics_path.read_text())
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
    header = ["run", "benchmark", "agent", "model", "ok", "errored", *keys, "cost_usd"]
    return Table("Comparison", header, rows)


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
