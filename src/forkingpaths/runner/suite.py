"""Suites: named sets of runs (the offline `quick` suite), and terminal summaries of runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.errors import InvalidFile, NameNotFound
from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import SUITES, benchmark_names, make_benchmark
from forkingpaths.report.compare import benchmark_tables, write_comparison
from forkingpaths.report.html import write_run_report
from forkingpaths.report.tables import Table, calls_table, format_value, metric_cell, rich_table
from forkingpaths.runner.local_suite import local_specs
from forkingpaths.runner.ray_executor import joined_cluster
from forkingpaths.runner.run import RunResult, draw_run_figures, execute_run
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run

SUITE_FILE = "suite.json"
"""In a suite's directory (runs/suite-quick): the run directories its report compares."""


class SuiteRecord(BaseModel):
    """Contents of `suite.json`: what `forkingpaths report SUITE_DIR` rebuilds."""

    suite: str
    """The suite's name (`quick`)."""
    runs: list[str]
    """The run directories, relative to the suite's directory (`../griddag-main-...`)."""


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
    """Run every spec of a suite (resuming finished ones), print a table per benchmark, write
    the suite's report and the suite.json that rebuilds it."""
    if suite not in SUITES:
        raise NameNotFound("suite", suite, list(SUITES))

    results = []
    cluster = (
        joined_cluster(options.ray_address)
        if options.executor == "ray"
        else contextlib.nullcontext()
    )
    with cluster:
        for spec in quick_specs() if suite == "quick" else local_specs():
            # Figures after the suite's tables, in this process: no drawer outlives the suite.
            result = asyncio.run(execute_run(spec, options, runs_dir=runs_dir, figures="none"))
            results.append(result)

    suite_dir = Path(runs_dir) / f"suite-{suite}"
    suite_dir.mkdir(parents=True, exist_ok=True)
    run_dirs = [r.run_dir.path for r in results]
    record = SuiteRecord(
        suite=suite, runs=[Path(os.path.relpath(p, suite_dir)).as_posix() for p in run_dirs]
    )
    (suite_dir / SUITE_FILE).write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    _write_suite_report(console, suite, suite_dir, run_dirs, [r.metrics for r in results])
    for result in results:
        if result.report_written:
            draw_run_figures(result)
    return results


def is_suite_directory(path: Path) -> bool:
    """Whether a directory is a suite's (it holds suite.json), not a run's."""
    return (Path(path) / SUITE_FILE).is_file()


def rebuild_suite_report(path: Path, console: Console | None = None) -> Path:
    """Re-score every run a suite's directory lists (no model is called), rebuild their
    metrics.json and report.html, then the suite's report; print the suite's tables to
    `console` when given. Returns the suite report's path."""
    suite_dir = Path(path)
    suite_file = suite_dir / SUITE_FILE
    try:
        record = SuiteRecord.model_validate_json(suite_file.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else exc.strerror
        raise InvalidFile(f"{suite_file}: not a suite record ({reason})") from None
    run_dirs = [Path(os.path.normpath(suite_dir / rel)) for rel in record.runs]
    summaries = []
    rescored = []
    for run_path in run_dirs:
        run_dir = RunDirectory(run_path)
        if not run_dir.exists():
            raise InvalidFile(f"{suite_file}: {run_path} is not a run directory (no spec.json)")
        metrics, bench, scored = rescore_run(run_dir)
        # The pages first without their figures (the suite's page links them), the tables on
        # the terminal, then the figures: matplotlib costs seconds, the tables come first.
        write_run_report(run_dir, run_dir.read_header(), bench, scored, metrics, figures="none")
        summaries.append(metrics)
        rescored.append((run_dir, bench, scored, metrics))
    report = _write_suite_report(
        console or Console(quiet=True), record.suite, suite_dir, run_dirs, summaries
    )
    for run_dir, bench, scored, metrics in rescored:
        if scored.ok:
            write_run_report(run_dir, run_dir.read_header(), bench, scored, metrics)
    return report


def _write_suite_report(
    console: Console,
    suite: str,
    suite_dir: Path,
    run_dirs: Sequence[Path],
    summaries: Sequence[dict[str, Any]],
) -> Path:
    for table in benchmark_tables(summaries, run_dirs):
        console.print(rich_table(_runs_as_columns(table), title=f"Suite {suite}: {table.title}"))
    report = write_comparison(
        run_dirs,
        suite_dir / "report.html",
        summaries,
        title=f"Suite {suite}",
        rebuild=f"forkingpaths report {suite_dir}",
        recomputed=True,
    )
    console.print(f"report: {report}")
    console.print(f"browse every episode: forkingpaths view {suite_dir.parent}", highlight=False)
    return report


def _runs_as_columns(table: Table) -> Table:
    """A benchmark's table for the terminal: its fields as rows and runs as columns (#1, #2...),
    which stays readable in 80 columns; the run ids are left to the HTML report."""
    fields = table.header[1:]
    rows = [[name, *(row[j] for row in table.rows)] for j, name in enumerate(fields, start=1)]
    return Table(table.title, ["", *(f"#{i + 1}" for i in range(len(table.rows)))], rows)


def print_metrics(console: Console, bench: Benchmark, metrics: dict[str, Any]) -> None:
    eps = metrics["episodes"]
    table = RichTable(title=f"{metrics['run_id']}", title_justify="left")
    table.add_column("metric", overflow="fold", no_wrap=False)
    table.add_column("value", justify="right", overflow="fold", no_wrap=False)
    for key, value in metrics["metrics"].items():
        if isinstance(value, dict | list):
            continue  # breakdowns (by group, by run) are in report.html and metrics.json
        table.add_row(key, format_value(metric_cell(key, value, bench.metric_specs)))
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
    calls = calls_table(result.metrics)
    if calls is not None:
        console.print(rich_table(calls))
        if calls.note:
            console.print(calls.note)
    if bench.options:
        # A deviation switched on changes what the numbers mean: say it beside them.
        shown = ", ".join(f"{k}={v}" for k, v in bench.options.items())
        console.print(f"benchmark options: {escape(shown)}", highlight=False)
    if result.skipped_episodes:
        console.print(f"resumed: {result.skipped_episodes} episodes were already recorded")
    if result.budget_exhausted:
        console.print(
            "[yellow]budget reached: re-run with a larger --budget-usd to finish[/yellow]"
        )
    console.print(f"run directory: {result.run_dir.path}")
    console.print(f"report: {result.run_dir.report_path}")
    console.print(
        f"browse its episodes: forkingpaths view {result.run_dir.path.parent}", highlight=False
    )
