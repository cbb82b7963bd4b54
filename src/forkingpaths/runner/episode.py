"""Plays one episode of a RunSpec into an EpisodeRecord; errors become errored records."""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from dataclasses import dataclass
from typing import Any

from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.errors import ModelError
from forkingpaths.core.human import HumanInputEnded
from forkingpaths.core.records import EpisodeRecord, RunOptions, RunSpec, utc_now
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.factory import RunParamsModel, make_model
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.usage import UsageMeter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeJob:
    """One (instance, trial) to play; picklable so remote executors can ship it."""

    instance: Instance
    trial: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        return (self.instance.id, self.trial)


def plan_jobs(spec: RunSpec, benchmark: Benchmark) -> list[EpisodeJob]:
    instances = benchmark.select_instances(spec.split, spec.instances)
    return [
        EpisodeJob(instance, trial, benchmark.episode_seed(instance, trial, spec.seed))
        for instance in instances
        for trial in range(spec.trials)
    ]


def longest_first(jobs: list[EpisodeJob], benchmark: Benchmark) -> list[EpisodeJob]:
    """The order jobs start in: the largest step cap first (`Benchmark.max_steps`: a griddag
    map's budget, a level's size), plan order among equals. With episodes of unequal length,
    plan order can leave the longest to start last, while the other slots idle through the
    run's end (LPT scheduling: on griddag's main split, 64 at a time, the schedule's bound rises
    from 0.86 to 0.98 of ideal). Only when they start changes: records are written as episodes
    finish, and the plan's order is the report's."""
    caps: dict[str, int] = {}
    for job in jobs:
        if job.instance.id not in caps:
            caps[job.instance.id] = benchmark.max_steps(job.instance)
    return sorted(jobs, key=lambda job: -caps[job.instance.id])


@dataclass(frozen=True)
class EpisodeContext:
    """What a process needs to build an EpisodeRunner: picklable, so each Ray worker can build
    its own benchmark and model from it."""

    run_id: str
    spec: RunSpec
    options: RunOptions

    def build(
        self,
        meter: UsageMeter | None = None,
        benchmark: Benchmark | None = None,
        **runtime_overrides: Any,
    ) -> EpisodeRunner:
        """`runtime_overrides`: ModelRuntime fields an executor sets for its processes (shared
        limits, a node's cache file, the driver's prices)."""
        if benchmark is None:
            benchmark = make_benchmark(self.spec.benchmark, **self.spec.benchmark_options)
        meter = meter or UsageMeter()
        model = build_model(self.spec, self.options, meter, **runtime_overrides)
        roles = build_role_models(self.spec, self.options, meter, **runtime_overrides)
        if model is not None:
            for role in benchmark.roles_default_to_agent - roles.keys():
                roles[role] = model
        return EpisodeRunner(self.run_id, self.spec, benchmark, model, meter, roles)


def build_model(
    spec: RunSpec, options: RunOptions, meter: UsageMeter, **runtime_overrides: Any
) -> ChatModel | None:
    if spec.model is None:
        return None
    runtime = ModelRuntime.from_run_options(options, meter, **runtime_overrides)
    model = make_model(spec.model, spec.model_options, runtime)
    return RunParamsModel(model, spec.model_options.params)


def build_role_models(
    spec: RunSpec, options: RunOptions, meter: UsageMeter, **runtime_overrides: Any
) -> dict[str, ChatModel]:
    """The protocol's role models (judge...), sharing the run's cache, limits and meter."""
    if not spec.roles:
        return {}
    runtime = ModelRuntime.from_run_options(options, meter, **runtime_overrides)
    return {
        role: RunParamsModel(make_model(ref.model, ref.options, runtime), ref.options.params)
        for role, ref in spec.roles.items()
    }


def new_record(
    run_id: str, spec: RunSpec, job: EpisodeJob, benchmark: str | None = None
) -> EpisodeRecord:
    """The record an episode starts with; `benchmark`: the benchmark's id (default: the spec's,
    which a run resolves to the id before any episode)."""
    return EpisodeRecord(
        run_id=run_id,
        benchmark=benchmark or spec.benchmark,
        split=job.instance.split,
        instance_id=job.instance.id,
        trial=job.trial,
        seed=job.seed,
        agent=spec.agent,
        agent_options=dict(spec.agent_options),
        model=spec.model,
    )


def errored_record(run_id: str, spec: RunSpec, job: EpisodeJob, error: str) -> EpisodeRecord:
    """The record of an episode that could not be played to its end (kept, so the run goes on
    and `--retry-errors` plays it again)."""
    record = new_record(run_id, spec, job)
    record.status, record.error = "error", error
    record.finished_at = utc_now()
    return record


class EpisodeRunner:
    """Builds an agent per episode and plays it; one instance per process, shared model."""

    def __init__(
        self,
        run_id: str,
        spec: RunSpec,
        benchmark: Benchmark,
        model: ChatModel | None,
        meter: UsageMeter,
        roles: dict[str, ChatModel] | None = None,
    ) -> None:
        self.run_id, self.spec, self.benchmark, self.model, self.meter = (
            run_id,
            spec,
            benchmark,
            model,
            meter,
        )
        self.roles = roles or {}
        self.in_flight: dict[tuple[str, int], EpisodeRecord] = {}

    async def __call__(self, job: EpisodeJob) -> EpisodeRecord:
        spec = self.spec
        record = new_record(self.run_id, spec, job, self.benchmark.id)
        self.in_flight[job.key] = record
        start = time.perf_counter()
        try:
            agent = self.benchmark.make_agent(spec.agent, self.model, spec.agent_options)
            agent.reset(job.instance, job.seed)
            await self.benchmark.run_episode(job.instance, agent, record, self.roles)
            record.agent_state = agent.state()
        except ModelError as exc:
            record.status, record.error = "error", f"ModelError: {exc}"
        except HumanInputEnded as exc:  # the person stopped (Ctrl-D): no crash, no traceback
            record.status, record.error = "error", f"HumanInputEnded: {exc}"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crash in one episode must not take the run down
            log.exception("episode %s trial %d crashed", job.instance.id, job.trial)
            tail = "".join(traceback.format_exception(exc)[-3:])
            record.status, record.error = "error", f"{type(exc).__name__}: {exc}\n{tail}"
        finally:
            self.in_flight.pop(job.key, None)
        record.tally_calls()
        record.finished_at = utc_now()
        record.duration_s = time.perf_counter() - start
        if record.status == "ok":
            # Metrics can be heavy (trajectory analysis); keep the event loop free meanwhile.
            record.metrics = await asyncio.to_thread(self.benchmark.episode_metrics, record)
        return record
