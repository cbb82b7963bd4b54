"""Scores a run from its records alone: per-episode metrics, aggregates, usage, metrics.json."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.records import (
    CallStats,
    CallTiming,
    EpisodeCounts,
    EpisodeError,
    EpisodeRecord,
    ModelCallRecord,
    RunHeader,
    RunMetrics,
    RunTiming,
    UsageTotals,
)
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import EpisodeJob, plan_jobs
from forkingpaths.runner.rundir import RunDirectory


def summarize(
    header: RunHeader,
    benchmark: Benchmark,
    records: Sequence[EpisodeRecord],
    planned: int,
) -> RunMetrics:
    """The content of metrics.json."""
    ok = [r for r in records if r.status == "ok"]
    errored = [r for r in records if r.status == "error"]
    durations = [r.duration_s for r in records]
    by_purpose = calls_by_purpose(records)
    spec = header.spec
    return RunMetrics(
        run_id=header.run_id,
        benchmark=benchmark.id,
        split=spec.split,
        agent=spec.agent,
        agent_options=spec.agent_options,
        model=spec.model,
        complete=len(records) >= planned,
        episodes=EpisodeCounts(planned=planned, ok=len(ok), errored=len(errored)),
        # Errored episodes (model outages, crashes) are counted but excluded from the metrics,
        # so an infrastructure failure never reads as an agent failure.
        metrics=benchmark.aggregate(ok) if ok else {},
        usage=UsageTotals(
            calls=sum(r.n_calls for r in records),
            cached_calls=sum(r.n_cached for r in records),
            prompt_tokens=sum(r.usage.prompt_tokens for r in records),
            completion_tokens=sum(r.usage.completion_tokens for r in records),
            reasoning_tokens=sum(r.usage.reasoning_tokens for r in records),
            cost_usd=round(sum(r.cost_usd for r in records), 6),
        ),
        calls_by_purpose=call_stats(by_purpose, len(records)),
        invalid_step_rate=_invalid_step_rate(records),
        timing=RunTiming(
            episode_seconds_mean=round(statistics.fmean(durations), 4) if durations else None,
            episode_seconds_total=round(sum(durations), 4),
            calls_by_purpose=call_timing(by_purpose),
        ),
        errors=[
            EpisodeError(instance_id=r.instance_id, trial=r.trial, error=(r.error or "")[:500])
            for r in errored
        ],
    )


def calls_by_purpose(records: Sequence[EpisodeRecord]) -> dict[str, list[ModelCallRecord]]:
    calls: dict[str, list[ModelCallRecord]] = {}
    for record in records:
        for step in record.steps:
            for call in step.calls:
                calls.setdefault(call.purpose, []).append(call)
    return dict(sorted(calls.items()))


def call_stats(by_purpose: dict[str, list[ModelCallRecord]], episodes: int) -> dict[str, CallStats]:
    """Calls, tokens and empty replies by call purpose, per episode of `episodes`."""
    episodes = max(episodes, 1)
    return {
        purpose: CallStats(
            calls=len(group),
            calls_per_episode=round(len(group) / episodes, 4),
            tokens_per_episode=round(
                sum(c.prompt_tokens + c.completion_tokens for c in group) / episodes, 2
            ),
            empty_replies=sum(not c.response.strip() for c in group),
        )
        for purpose, group in by_purpose.items()
    }


def call_timing(by_purpose: dict[str, list[ModelCallRecord]]) -> dict[str, CallTiming]:
    """Latency and completion tokens per second by call purpose (cache hits left out)."""
    out = {}
    for purpose, group in by_purpose.items():
        timed = [c for c in group if not c.cached]
        latency = sum(c.latency_s for c in timed)
        out[purpose] = CallTiming(
            seconds_per_call=round(latency / len(timed), 4) if timed else 0.0,
            tokens_per_second=(
                round(sum(c.completion_tokens for c in timed) / latency, 2) if latency else None
            ),
        )
    return out


def _invalid_step_rate(records: Sequence[EpisodeRecord]) -> float | None:
    steps = [s for r in records for s in r.steps]
    return round(sum(not s.valid for s in steps) / len(steps), 4) if steps else None


def finalize_run(
    run_dir: RunDirectory,
    benchmark: Benchmark,
    jobs: Sequence[EpisodeJob],
    *,
    recompute: bool = False,
) -> tuple[dict[str, Any], list[EpisodeRecord]]:
    """Write metrics.json for the planned episodes of a run and return it with their records;
    with `recompute` every per-episode metric is recomputed from the steps first."""
    header = run_dir.read_header()
    latest = run_dir.latest_records()
    records = [latest[job.key] for job in jobs if job.key in latest]
    if recompute:
        for record in records:
            if record.status == "ok":
                record.metrics = benchmark.episode_metrics(record)
    summary = summarize(header, benchmark, records, len(jobs))
    run_dir.write_metrics(summary)
    metrics = summary.model_dump()
    return metrics, records


def rescore_run(run_dir: RunDirectory) -> tuple[dict[str, Any], Benchmark, list[EpisodeRecord]]:
    """Recompute every metric of a run directory from its records and rewrite metrics.json;
    no model is called. Returns the metrics, the benchmark and the records (for a report)."""
    spec = run_dir.read_header().spec
    benchmark = make_benchmark(spec.benchmark, **spec.benchmark_options)
    metrics, records = finalize_run(run_dir, benchmark, plan_jobs(spec, benchmark), recompute=True)
    return metrics, benchmark, records
