"""Scores a run from its records alone, in one pass that holds one record at a time: per-episode
rows, aggregates, usage, metrics.json."""

from __future__ import annotations

import statistics
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, NamedTuple

from forkingpaths.core.benchmark import Benchmark, ScoredEpisode, scored_episode
from forkingpaths.core.records import (
    CallStats,
    CallTiming,
    EpisodeCounts,
    EpisodeError,
    EpisodeRecord,
    RunHeader,
    RunMetrics,
    RunTiming,
    UsageTotals,
)
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import EpisodeJob, plan_jobs
from forkingpaths.runner.rundir import RunDirectory


class PurposeCalls(NamedTuple):
    """One episode's model calls of one purpose, as the run's call tables add them up (a tuple:
    a run keeps one per episode and purpose)."""

    purpose: str
    calls: int
    tokens: int
    """Prompt + completion tokens."""
    empty: int
    """Calls whose reply was empty."""
    timed_completion_tokens: int
    """Completion tokens of the calls not served from the cache."""
    timed_latency: array
    """Latency of each call not served from the cache, in order: the run's sum adds the very
    same numbers in the same order as a sum over the records did (identical floats)."""


class EpisodeUsage(NamedTuple):
    """What the run-level usage, call and step tables need of one episode beyond its row."""

    n_cached: int
    reasoning_tokens: int
    valid_steps: int
    invalid_steps: int
    calls: tuple[PurposeCalls, ...]

    @classmethod
    def of(cls, record: EpisodeRecord) -> EpisodeUsage:
        valid = invalid = 0
        tallies: dict[str, list[Any]] = {}
        for step in record.steps:
            if step.valid:
                valid += 1
            else:
                invalid += 1
            for call in step.calls:
                tally = tallies.get(call.purpose)
                if tally is None:
                    tally = tallies[call.purpose] = [0, 0, 0, 0, array("d")]
                tally[0] += 1
                tally[1] += call.prompt_tokens + call.completion_tokens
                tally[2] += not call.response.strip()
                if not call.cached:
                    tally[3] += call.completion_tokens
                    tally[4].append(call.latency_s)
        return cls(
            record.n_cached,
            record.usage.reasoning_tokens,
            valid,
            invalid,
            tuple(PurposeCalls(sys.intern(p), *t) for p, t in tallies.items()),
        )


@dataclass
class ScoredRun:
    """A run as its scoring pass leaves it: one row per planned episode that has a record (its
    latest), in plan order, and where those records lie, to read a few of them back."""

    run_dir: RunDirectory
    episodes: list[ScoredEpisode]
    usage: list[EpisodeUsage]
    """Beside `episodes`, one each."""
    positions: array
    """Beside `episodes`: the position of each one's record among the run's records
    (`RunDirectory.iter_records()`), 8 bytes an episode."""

    def records(self, episodes: Sequence[ScoredEpisode] | None = None) -> Iterator[EpisodeRecord]:
        """The full records of `episodes` (in their order), or of every episode (in the order
        they were recorded), read from the run directory one line at a time. Only the records
        asked for are held, so asking for a few is cheap in memory; every one streams."""
        if episodes is None:
            latest = array("q", sorted(self.positions))
            for position, record in enumerate(self.run_dir.iter_records()):
                i = bisect_left(latest, position)
                if i < len(latest) and latest[i] == position:
                    yield record
            return
        where = {e.key: i for i, e in enumerate(self.episodes)}
        wanted = {self.positions[where[e.key]] for e in episodes if e.key in where}
        found: dict[tuple[str, int], EpisodeRecord] = {}
        last = max(wanted, default=-1)
        for position, record in enumerate(self.run_dir.iter_records()):
            if position > last:
                break  # the rest of the file holds none of them
            if position in wanted:
                found[record.key] = record
        for episode in episodes:
            if episode.key in found:
                yield found[episode.key]

    @property
    def ok(self) -> list[ScoredEpisode]:
        return [e for e in self.episodes if e.status == "ok"]

    @property
    def errored(self) -> list[ScoredEpisode]:
        return [e for e in self.episodes if e.status == "error"]


def score_run(
    run_dir: RunDirectory,
    benchmark: Benchmark,
    jobs: Sequence[EpisodeJob],
    *,
    recompute: bool = False,
) -> ScoredRun:
    """One pass over the run's records: a row (and usage tally) per planned episode from its
    latest record; with `recompute` every per-episode metric is computed afresh."""
    planned = {job.key for job in jobs}
    rows: dict[tuple[str, int], tuple[ScoredEpisode, EpisodeUsage, int]] = {}
    for position, record in enumerate(run_dir.iter_records()):
        key = record.key
        if key not in planned:
            continue
        # A retried episode's later record supersedes the earlier one (its error).
        rows[key] = (
            scored_episode(benchmark, record, recompute=recompute),
            EpisodeUsage.of(record),
            position,
        )
    ordered = [rows.pop(job.key) for job in jobs if job.key in rows]
    return ScoredRun(
        run_dir,
        [row for row, _, _ in ordered],
        [usage for _, usage, _ in ordered],
        array("q", (position for _, _, position in ordered)),
    )


def summarize(
    header: RunHeader, benchmark: Benchmark, scored: ScoredRun, planned: int
) -> RunMetrics:
    """The content of metrics.json."""
    episodes, usage = scored.episodes, scored.usage
    ok = [e for e in episodes if e.status == "ok"]
    errored = [e for e in episodes if e.status == "error"]
    durations = [e.duration_s for e in episodes]
    spec = header.spec
    return RunMetrics(
        run_id=header.run_id,
        benchmark=benchmark.id,
        split=spec.split,
        agent=spec.agent,
        agent_options=spec.agent_options,
        model=spec.model,
        complete=len(episodes) >= planned,
        episodes=EpisodeCounts(planned=planned, ok=len(ok), errored=len(errored)),
        # Errored episodes (model outages, crashes) are counted but excluded from the metrics,
        # so an infrastructure failure never reads as an agent failure.
        metrics=benchmark.aggregate(ok) if ok else {},
        usage=UsageTotals(
            calls=sum(e.n_calls for e in episodes),
            cached_calls=sum(u.n_cached for u in usage),
            prompt_tokens=sum(e.prompt_tokens for e in episodes),
            completion_tokens=sum(e.completion_tokens for e in episodes),
            reasoning_tokens=sum(u.reasoning_tokens for u in usage),
            cost_usd=round(sum(e.cost_usd for e in episodes), 6),
        ),
        calls_by_purpose=call_stats(usage, len(episodes)),
        invalid_step_rate=_invalid_step_rate(usage),
        timing=RunTiming(
            episode_seconds_mean=round(statistics.fmean(durations), 4) if durations else None,
            episode_seconds_total=round(sum(durations), 4),
            calls_by_purpose=call_timing(usage),
        ),
        errors=[
            EpisodeError(instance_id=e.instance_id, trial=e.trial, error=(e.error or "")[:500])
            for e in errored
        ],
    )


def _purposes(usage: Sequence[EpisodeUsage]) -> dict[str, list[PurposeCalls]]:
    by_purpose: dict[str, list[PurposeCalls]] = {}
    for episode in usage:
        for tally in episode.calls:
            by_purpose.setdefault(tally.purpose, []).append(tally)
    return dict(sorted(by_purpose.items()))


def call_stats(usage: Sequence[EpisodeUsage], episodes: int) -> dict[str, CallStats]:
    """Calls, tokens and empty replies by call purpose, per episode of `episodes`."""
    episodes = max(episodes, 1)
    return {
        purpose: CallStats(
            calls=sum(t.calls for t in group),
            calls_per_episode=round(sum(t.calls for t in group) / episodes, 4),
            tokens_per_episode=round(sum(t.tokens for t in group) / episodes, 2),
            empty_replies=sum(t.empty for t in group),
        )
        for purpose, group in _purposes(usage).items()
    }


def call_timing(usage: Sequence[EpisodeUsage]) -> dict[str, CallTiming]:
    """Latency and completion tokens per second by call purpose (cache hits left out)."""
    out = {}
    for purpose, group in _purposes(usage).items():
        timed = sum(len(t.timed_latency) for t in group)
        latency = sum(chain.from_iterable(t.timed_latency for t in group))
        out[purpose] = CallTiming(
            seconds_per_call=round(latency / timed, 4) if timed else 0.0,
            tokens_per_second=(
                round(sum(t.timed_completion_tokens for t in group) / latency, 2)
                if latency
                else None
            ),
        )
    return out


def _invalid_step_rate(usage: Sequence[EpisodeUsage]) -> float | None:
    invalid = sum(u.invalid_steps for u in usage)
    steps = invalid + sum(u.valid_steps for u in usage)
    return round(invalid / steps, 4) if steps else None


def finalize_run(
    run_dir: RunDirectory,
    benchmark: Benchmark,
    jobs: Sequence[EpisodeJob],
    *,
    recompute: bool = False,
) -> tuple[dict[str, Any], ScoredRun]:
    """Write metrics.json for the planned episodes of a run and return it with their rows;
    with `recompute` every per-episode metric is recomputed from the steps first."""
    header = run_dir.read_header()
    scored = score_run(run_dir, benchmark, jobs, recompute=recompute)
    summary = summarize(header, benchmark, scored, len(jobs))
    run_dir.write_metrics(summary)
    return summary.model_dump(), scored


def rescore_run(run_dir: RunDirectory) -> tuple[dict[str, Any], Benchmark, ScoredRun]:
    """Recompute every metric of a run directory from its records and rewrite metrics.json;
    no model is called. Returns the metrics, the benchmark and the scored episodes (for a
    report)."""
    spec = run_dir.read_header().spec
    benchmark = make_benchmark(spec.benchmark, **spec.benchmark_options)
    metrics, scored = finalize_run(run_dir, benchmark, plan_jobs(spec, benchmark), recompute=True)
    return metrics, benchmark, scored
