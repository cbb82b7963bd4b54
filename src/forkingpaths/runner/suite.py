"""Suites: named sets of runs (the offline `quick` suite), and terminal summaries of runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.errors import NameNotFound
from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import SUITES, benchmark_names, make_benchmark
from forkingpaths.report.compare import comparison_table, write_comparison
from forkingpaths.report.tables import format_value
from forkingpaths.runner.run import RunResult, execute_run


def quick_specs() -> list[RunSpec]:
    """One spec per QuickConfig of every registered benchmark."""
    specs = []
    for name in benchmark_names():
        bench = make_benchmark(name)
        for quick in bench.quick:
            specs.append(
                RunSpec(
                    benchmark=bench.id,
                    split=quick.split,
                    instances=list(quick.instances) if quick.instances else None,
                    agent=quick.agent,
                    agent_options=dict(quick.agent_options),
                    model=quick.model,
                    roles={r: RoleModel(model=m) for r, m in quick.roles.items()},
                )
            )
    return specs


def run_suite(
    suite: str, options: RunOptions, *, runs_dir: Path, console: Console
) -> list[RunResult]:
    """Run every spec of a suite (resuming finished ones), print a table, write its report."""
    if suite not in SUITES:
        raise NameNotFound("suite", suite, list(SUITES))

    results = []
    for spec in quick_specs():
        result = asyncio.run(execute_run(spec, options, runs_dir=runs_dir))
        results.append(result)

    summaries = [r.metrics for r in results]
    for bench_id in dict.fromkeys(m["benchmark"] for m in summaries):
        # One table per benchmark, its headline metrics as columns (run id and benchmark dropped).
        table = comparison_table([m for m in summaries if m["benchmark"] == bench_id])
        rich_table = RichTable(title=f"Suite {suite}: {bench_id}", title_justify="left")
        for col in table.header[2:]:
            rich_table.add_column(col)
        for row in table.rows:
            rich_table.add_row(*(format_value(c) for c in row[2:]))
        console.print(rich_table)
    report = write_comparison(
        [r.run_dir.path for r in results],
        Path(runs_dir) / f"suite-{suite}" / "report.html",
        summaries,
    )
    console.print(f"report: {report}")
    return results


def print_metrics(console: Console, bench: Benchmark, metrics: dict[str, Any]) -> None:
    eps = metrics["episodes"]
    table = RichTable(title=f"{metrics['run_id']}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in metrics["metrics"].items():
        if not isinstance(value, dict):
            table.add_row(key, format_value(value))
    table.add_row(
        "episodes ok / errored / planned", f"{eps['ok']} / {eps['errored']} / {eps['planned']}"
    )
    usage = metrics["usage"]
    table.add_row("model calls (cached)", f"{usage['calls']:,} ({usage['cached_calls']:,})")
    table.add_row("tokens in / out", f"{usage['prompt_tokens']:,} / {usage['completion_tokens']:,}")
    table.add_row("cost (USD)", f"{usage['cost_usd']:.4f}")
    console.print(table)


def print_run_summary(console: Console, bench: Benchmark, result: RunResult) -> None:
    print_metrics(console, bench, result.metrics)
    if result.skipped_episodes:
        console.print(f"resumed: {result.skipped_episodes} episodes were already recorded")
    if result.budget_exhausted:
        console.print(
            "[yellow]budget reached: re-run with a larger --budget-usd to finish[/yellow]"
        )
    console.print(f"run directory: {result.run_dir.path}")
    console.print(f"report: {result.run_dir.report_path}")
