"""Episodes start longest-capped first (LPT), plan order among equals; reports keep plan order."""

from __future__ import annotations

import asyncio
import heapq
import json
from pathlib import Path

from forkingpaths.core.benchmark import Instance
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import EpisodeJob, longest_first, plan_jobs
from forkingpaths.runner.run import execute_run


class _Caps:
    """A benchmark whose step caps are given by instance id."""

    def __init__(self, caps: dict[str, int]) -> None:
        self.caps = caps
        self.asked: list[str] = []

    def max_steps(self, instance: Instance) -> int:
        self.asked.append(instance.id)
        return self.caps[instance.id]


def _job(instance: str, trial: int) -> EpisodeJob:
    return EpisodeJob(Instance(id=instance, split="main"), trial, seed=trial)


def test_the_largest_cap_starts_first_and_equals_keep_plan_order() -> None:
    bench = _Caps({"a": 5, "b": 9, "c": 9, "d": 3})
    jobs = [_job(name, trial) for name in "abcd" for trial in range(2)]
    order = longest_first(jobs, bench)  # type: ignore[arg-type]
    assert [job.key for job in order] == [
        ("b", 0), ("b", 1), ("c", 0), ("c", 1), ("a", 0), ("a", 1), ("d", 0), ("d", 1)
    ]  # fmt: skip
    assert sorted(bench.asked) == ["a", "b", "c", "d"]  # each instance's cap asked once


def test_the_order_shortens_the_schedule_of_unequal_episodes() -> None:
    # Greedy onto the first free of 2 slots, each episode as long as its cap: in plan order the
    # longest starts last and runs alone; longest first, the two slots end together.
    lengths = {"short1": 2, "short2": 2, "short3": 2, "long": 6}
    jobs = [_job(name, 0) for name in lengths]

    def makespan(order: list[EpisodeJob]) -> int:
        slots = [0, 0]
        for job in order:
            heapq.heappush(slots, heapq.heappop(slots) + lengths[job.instance.id])
        return max(slots)

    assert makespan(jobs) == 8
    assert makespan(longest_first(jobs, _Caps(lengths))) == 6  # type: ignore[arg-type]


def test_a_griddag_run_starts_its_largest_budgets_first(tmp_path: Path) -> None:
    instances = ["low-easy-s0", "high-hard-s0", "medium-easy-s0"]
    spec = RunSpec(
        benchmark="griddag", split="main", instances=instances, trials=2, agent="frontier"
    )
    bench = make_benchmark("griddag")
    budgets = {job.instance.id: bench.max_steps(job.instance) for job in plan_jobs(spec, bench)}
    assert len(set(budgets.values())) == 3
    options = RunOptions(concurrency=1, progress=False)
    result = asyncio.run(execute_run(spec, options, runs_dir=tmp_path, write_report=False))
    # One at a time, the records are written in the order the episodes started.
    lines = (result.run_dir.path / "episodes.jsonl").read_text().splitlines()
    started = [json.loads(line)["instance_id"] for line in lines]
    assert started == sorted(started, key=lambda i: -budgets[i])
    # What the run reports keeps the plan's order.
    assert [e.instance_id for e in result.episodes] == [i for i in instances for _ in range(2)]
