"""Turns a RunSpec into a run directory: resume, schedule, budget, record, score, report."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from forkingpaths.core.benchmark import Benchmark, ScoredEpisode
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.factory import check_model_access, close_models
from forkingpaths.models.pricing import PriceTable
from forkingpaths.models.usage import UsageMeter
from forkingpaths.report.figures import FigureMode, Figures
from forkingpaths.report.html import write_run_report
from forkingpaths.runner.episode import (
    EpisodeContext,
    EpisodeJob,
    EpisodeRunner,
    longest_first,
    plan_jobs,
)
from forkingpaths.runner.executor import Executor, LocalExecutor
from forkingpaths.runner.progress import RunProgress
from forkingpaths.runner.ray_executor import RayExecutor, check_ray_address
from forkingpaths.runner.rundir import RecordWriter, RunDirectory, check_run_id
from forkingpaths.runner.scoring import ScoredRun, finalize_run

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a finished (or stopped) run produced."""

    run_dir: RunDirectory
    metrics: dict[str, Any]
    new_episodes: int
    skipped_episodes: int
    planned_episodes: int
    budget_exhausted: bool = False
    scored: ScoredRun | None = None
    """The planned episodes' rows (latest record each, in plan order), and their records."""
    figures: Figures | None = None
    """The report's figures when they are drawn in the background (`figures="background"`)."""
    report_written: bool = False
    """Whether this invocation wrote report.html (a resumed run with nothing new keeps its)."""

    @property
    def episodes(self) -> list[ScoredEpisode]:
        """The planned episodes that have a record: one row each (their latest)."""
        return self.scored.episodes if self.scored is not None else []

    @property
    def errored(self) -> list[ScoredEpisode]:
        """The planned episodes whose latest record is an error (this and earlier invocations)."""
        return [e for e in self.episodes if e.status == "error"]

    def records(self) -> Iterator[EpisodeRecord]:
        """The planned episodes' latest records, in the order they were recorded, read from
        the run directory one at a time (a run's records are never all in memory)."""
        return iter(()) if self.scored is None else self.scored.records()


class RunObserver(Protocol):
    """Told about a run as it goes (W&B logging: `forkingpaths.export.wandb_log.WandbLogger`).

    `run_started` comes once the run directory is open, before the first episode; raising
    there refuses the run. `episode_recorded` follows each record appended to episodes.jsonl,
    in the driver, whatever the executor. `run_finished` gets the result once metrics.json and
    the report are written, or None when the run stopped on an exception (Ctrl-C).
    """

    def run_started(
        self, run_dir: RunDirectory, spec: RunSpec, recorded: Iterable[EpisodeRecord]
    ) -> None: ...

    def episode_recorded(self, record: EpisodeRecord) -> None: ...

    def run_finished(self, result: RunResult | None) -> None: ...


RETRY_HINT = "re-run the same command with --retry-errors to retry them"
"""What a run with errored episodes tells the user (finished episodes are kept either way)."""

_CAUSE_WIDTH = 300
"""A cause longer than this is cut: one line stays one line in a terminal log."""

# Parts of a cause that differ per episode or request: ids (uuids, request ids, hex digests,
# dates) and numbers. Ids go first, so the digits inside one do not split a cause into many.
_VARIABLE = re.compile(
    r"\b(?=[A-Za-z_-]*\d)(?=\d*[A-Za-z_-])[A-Za-z0-9_-]{16,}\b"
    r"|\b(?=[a-fA-F-]*\d)[0-9a-fA-F-]{8,}\b"
    r"|\d+"
)


def error_cause(error: str | None) -> str:
    """The cause of an errored episode as its groups read it: the error's first line (its type
    and message; the traceback tail is left out)."""
    lines = (error or "").strip().splitlines()
    return lines[0].strip() if lines else "unknown error"


def _placeholder(value: str) -> str:
    return "#" if value.isdigit() else "<id>"


def group_errors(records: Iterable[EpisodeRecord | ScoredEpisode]) -> list[tuple[int, str]]:
    """Errored episodes grouped by cause, most frequent first: `(count, cause)`.

    Causes that differ only in numbers or ids (a step number, a request id) are one group; such
    a part is shown as it reads where every episode of the group agrees on it, else as `#` (a
    number) or `<id>`. A cause is cut to 300 characters.
    """
    groups: dict[tuple[str, ...], list[tuple[list[str], list[str]]]] = {}
    for record in records:
        if record.status != "error":
            continue
        cause = error_cause(record.error)
        texts, values = _VARIABLE.split(cause), _VARIABLE.findall(cause)
        key = (*texts, *(_placeholder(v) for v in values))
        groups.setdefault(key, []).append((texts, values))
    out = []
    for members in groups.values():
        texts = members[0][0]
        merged = texts[0]
        for i, text in enumerate(texts[1:]):
            seen = {values[i] for _, values in members}
            merged += (seen.pop() if len(seen) == 1 else _placeholder(members[0][1][i])) + text
        if len(merged) > _CAUSE_WIDTH:
            merged = merged[: _CAUSE_WIDTH - 3] + "..."
        out.append((len(members), merged))
    out.sort(key=lambda item: -item[0])  # stable: equal counts keep the order first seen
    return out


def describe_errors(records: Iterable[EpisodeRecord | ScoredEpisode], where: str = "") -> list[str]:
    """The lines that tell the user which episodes errored and why (empty when none did):
    `12 episodes errored[ in WHERE]:` then `  12 x CAUSE` per group."""
    groups = group_errors(records)
    if not groups:
        return []
    total = sum(count for count, _ in groups)
    noun = "episode" if total == 1 else "episodes"
    lines = [f"{total} {noun} errored{f' in {where}' if where else ''}:"]
    lines += [f"  {count} x {cause}" for count, cause in groups]
    return lines


def default_run_id(spec: RunSpec) -> str:
    """Readable and stable: the same command maps to the same directory (so it resumes)."""
    digest = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:6]
    model = re.sub(r"[^A-Za-z0-9.]+", "-", spec.model or "nomodel").strip("-")
    bench = spec.benchmark.rsplit("-v", 1)[0]
    return f"{bench}-{spec.split}-{spec.agent}-{model}-{digest}"


def with_default_roles(spec: RunSpec, benchmark: Benchmark) -> RunSpec:
    """The spec with the role models its benchmark gives the agent's model by default
    (`Benchmark.role_defaults_by_model`) for the roles the user left out."""
    defaults = {
        role: RoleModel(model=model)
        for role, model in benchmark.role_defaults_by_model.get(spec.model or "", {}).items()
        if role not in spec.roles
    }
    if not defaults:
        return spec
    return spec.model_copy(update={"roles": {**defaults, **spec.roles}})


def validate_spec(spec: RunSpec, benchmark: Benchmark) -> None:
    """Refuse a spec that cannot run, before any episode starts (no network used)."""
    agent = benchmark.agent_spec(spec.agent)
    if agent.needs_model and spec.model is None:
        example = benchmark.estimate_policy or "echo"
        raise ConfigError(
            f"agent {spec.agent!r} of {benchmark.name} needs a model: pass --model, e.g. "
            f"--model openai/gpt-4.1 or --model scripted/{example}"
        )
    if not agent.needs_model and spec.model is not None:
        raise ConfigError(
            f"agent {spec.agent!r} of {benchmark.name} decides without a model; drop --model "
            f"{spec.model!r}"
        )
    if spec.trials < 1:
        raise ConfigError(f"--trials must be >= 1, got {spec.trials}")
    unknown = sorted(set(spec.roles) - set(benchmark.model_roles))
    if unknown:
        offered = ", ".join(f"{r} ({d})" for r, d in benchmark.model_roles.items())
        raise ConfigError(
            f"--role {', '.join(unknown)}: {benchmark.name} has no such model role; "
            f"its roles: {offered or '(none)'}"
        )
    if spec.model is not None:
        check_model_access(spec.model, spec.model_options)
    for ref in spec.roles.values():
        check_model_access(ref.model, ref.options)


def make_executor(
    options: RunOptions,
    runner: EpisodeRunner | None = None,
    *,
    meter: UsageMeter | None = None,
    prices: PriceTable | None = None,
) -> Executor:
    """The executor `options` name; `runner` serves the local one, `meter` gets a remote
    executor's usage totals (for the progress display and the budget)."""
    if options.executor != "ray" and (
        options.ray_address is not None or options.ray_workers_per_node != 1
    ):
        raise ConfigError("--ray-address and --ray-workers-per-node need --executor ray")
    if options.executor == "local":
        return LocalExecutor(options.concurrency, runner)
    if options.executor == "ray":
        check_ray_address(options.ray_address)
        return RayExecutor(
            options.concurrency,
            address=options.ray_address,
            workers_per_node=options.ray_workers_per_node,
            meter=meter,
            prices=prices,
        )
    raise ConfigError(f"--executor {options.executor!r}: allowed: local, ray")


def resolve_run_dir(
    spec: RunSpec, runs_dir: Path, run_id: str | None, force_new: bool
) -> RunDirectory:
    base = run_id or default_run_id(spec)
    path = Path(runs_dir) / base
    if force_new:
        n = 2
        while (path / "spec.json").exists():
            path = Path(runs_dir) / f"{base}-{n}"
            n += 1
    return RunDirectory(path)


async def execute_run(
    spec: RunSpec,
    options: RunOptions,
    *,
    runs_dir: Path = Path("runs"),
    run_id: str | None = None,
    force_new: bool = False,
    write_report: bool = True,
    figures: FigureMode = "inline",
    observers: Sequence[RunObserver] = (),
) -> RunResult:
    """Run (or resume) a spec. Cancelling this coroutine (Ctrl-C) keeps every finished record.
    `observers` are told of the run's start, each recorded episode and its end. `figures`:
    how report.html gets its figures (`background` when a terminal waits for the summary:
    see `write_run_report`)."""
    if run_id is not None:
        check_run_id(run_id)
    # A price file that cannot be read is refused now, whatever the model (scripted ones too).
    prices = PriceTable.load(options.prices_path)
    benchmark = make_benchmark(spec.benchmark, **spec.benchmark_options)
    spec = with_default_roles(spec.model_copy(update={"benchmark": benchmark.id}), benchmark)
    validate_spec(spec, benchmark)
    if benchmark.agent_spec(spec.agent).interactive:
        # One terminal, one player: episodes in turn, nothing redrawing over the prompt.
        options = options.model_copy(update={"concurrency": 1, "progress": False})
    jobs = plan_jobs(spec, benchmark)
    run_dir = resolve_run_dir(spec, runs_dir, run_id, force_new)

    meter = UsageMeter()
    context = EpisodeContext(run_dir.run_id, spec, options)
    # Built for a remote executor too, to check the agent's options here (no model is called).
    runner = context.build(meter, benchmark)
    # Build one agent now, so a bad option value fails here and not in every episode.
    benchmark.make_agent(spec.agent, runner.model, spec.agent_options)
    local = options.executor == "local"
    executor = make_executor(options, runner if local else None, meter=meter, prices=prices)
    executor.check()
    run_dir.open(spec)

    # What resuming needs of each recorded episode (its latest record), not the records.
    existing = _recorded(run_dir)
    todo = [
        job
        for job in jobs
        if job.key not in existing or (options.retry_errors and existing[job.key][0] == "error")
    ]
    todo = longest_first(todo, benchmark)
    skipped = len(jobs) - len(todo)
    if skipped:
        log.info(
            "resuming %s: %d of %d episodes already recorded", run_dir.path, skipped, len(jobs)
        )

    if (
        options.budget_usd is not None
        and spec.model
        and not spec.model.startswith("scripted/")
        and not prices.is_priced(spec.model)
    ):
        log.warning(
            "%s has no price in the price table: --budget-usd cannot limit it (add it with "
            "--prices FILE)",
            spec.model,
        )
    for observer in observers:
        observer.run_started(run_dir, spec, _latest_records(run_dir, existing))
    # The budget covers the whole run, earlier invocations included.
    spent_before = sum(cost for _, cost, _ in existing.values())
    budget_hit = False

    def should_continue() -> bool:
        nonlocal budget_hit
        spent = spent_before + meter.cost_usd
        if options.budget_usd is not None and spent >= options.budget_usd:
            budget_hit = True
            return False
        return True

    live_steps = (
        (lambda: sum(len(r.steps) for r in runner.in_flight.values())) if local else (lambda: 0)
    )
    new = 0
    with (
        _collector_tuned(),
        RunProgress(
            len(todo),
            meter,
            live_steps,
            enabled=options.progress and bool(todo),
            description=benchmark.name,
        ) as progress,
    ):
        writer = RecordWriter(run_dir)

        def on_record(record: EpisodeRecord) -> None:
            nonlocal new
            writer.append(record)
            for observer in observers:
                observer.episode_recorded(record)
            new += 1
            progress.episode_done(len(record.steps), record.status == "error")

        async def tick() -> None:
            while True:
                await asyncio.sleep(0.5)
                progress.refresh()

        ticker = asyncio.create_task(tick())
        try:
            await executor.run(todo, context, on_record, should_continue)
        except BaseException:
            for observer in observers:
                observer.run_finished(None)
            raise
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
            # Every finished episode reaches the disk, on Ctrl-C too (in a thread: the loop
            # keeps serving the clients' shutdown meanwhile).
            await asyncio.to_thread(writer.close)
            # A role may be played by the agent's own model: close each client once.
            await close_models((runner.model, *runner.roles.values()))
            await benchmark.aclose()

    if budget_hit:
        log.warning(
            "budget of $%.4f reached after $%.4f: %d episodes not started; re-run to continue",
            options.budget_usd,
            spent_before + meter.cost_usd,
            len(todo) - new,
        )
    # A resumed run with nothing new keeps its report (drawing figures costs seconds; a
    # reproduction resumes many runs); `forkingpaths report RUN` rebuilds it on demand.
    report_written = write_report and (new > 0 or not run_dir.report_path.exists())
    metrics, scored, drawing = finish_run(
        run_dir, benchmark, jobs, write_report=report_written, figures=figures
    )
    result = RunResult(
        run_dir, metrics, new, skipped, len(jobs), budget_hit, scored, drawing, report_written
    )
    for observer in observers:
        observer.run_finished(result)
    return result


def draw_run_figures(result: RunResult) -> None:
    """Draw the figures of a run whose report was written without them (`figures="none"`) and
    write its report.html again, in this process, from the rows its scoring kept: no second
    pass over the records (the background drawer, a process of its own, has to make one)."""
    if result.scored is None:
        return
    header = result.run_dir.read_header()
    benchmark = make_benchmark(header.spec.benchmark, **header.spec.benchmark_options)
    write_run_report(
        result.run_dir, header, benchmark, result.scored, result.metrics, figures="inline"
    )


def finish_run(
    run_dir: RunDirectory,
    benchmark: Benchmark,
    jobs: Sequence[EpisodeJob],
    *,
    write_report: bool = True,
    figures: FigureMode = "inline",
) -> tuple[dict[str, Any], ScoredRun, Figures | None]:
    """A run's end: one pass over its records for metrics.json, then report.html (and its
    figures, as `figures` says). The records are read one at a time, never all held."""
    metrics, scored = finalize_run(run_dir, benchmark, jobs)
    drawing = None
    if write_report:
        drawing = write_run_report(
            run_dir, run_dir.read_header(), benchmark, scored, metrics, figures=figures
        )
    return metrics, scored, drawing


def _recorded(run_dir: RunDirectory) -> dict[tuple[str, int], tuple[str, float, int]]:
    """Each recorded episode's status and cost (its latest record) and that record's position
    among the run's records."""
    out: dict[tuple[str, int], tuple[str, float, int]] = {}
    for position, record in enumerate(run_dir.iter_records()):
        out[record.key] = (record.status, record.cost_usd, position)
    return out


def _latest_records(
    run_dir: RunDirectory, recorded: dict[tuple[str, int], tuple[str, float, int]]
) -> Iterator[EpisodeRecord]:
    """The latest record of each recorded episode, read again one at a time."""
    for position, record in enumerate(run_dir.iter_records()):
        entry = recorded.get(record.key)
        if entry is not None and entry[2] == position:
            yield record


@contextlib.contextmanager
def _collector_tuned() -> Iterator[None]:
    """Fewer garbage-collector passes while episodes run, restored afterwards.

    A run keeps every in-flight episode's history alive, and the default gen-0 threshold (700
    allocations) makes the collector walk that growing heap over and over; measured with
    benchmarks/bench_harness_overhead.py it cost ~15% of model calls/s. Objects alive before
    the run are frozen out of collection for its duration.
    """
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


__all__ = [
    "RETRY_HINT",
    "RunObserver",
    "RunResult",
    "describe_errors",
    "error_cause",
    "execute_run",
    "finish_run",
    "group_errors",
    "plan_jobs",
    "validate_spec",
]
