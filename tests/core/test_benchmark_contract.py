"""One contract test over every registered benchmark: ids, determinism, records, metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.errors import ResetNeeded
from forkingpaths.core.records import EpisodeRecord, RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import benchmark_names, make_benchmark
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import load_records

BENCHMARKS = benchmark_names()


@pytest.mark.parametrize("name", BENCHMARKS)
def test_instances_are_unique_and_stable(name: str) -> None:
    bench = make_benchmark(name)
    params: dict[str, dict[str, object]] = {}
    for split in bench.splits:
        instances = bench.instances(split)
        ids = [i.id for i in instances]
        assert ids and len(ids) == len(set(ids)), split
        assert all(i.split == split for i in instances), split
        # A suite split may regroup instances of others, but an id always means one task.
        for instance in instances:
            assert params.setdefault(instance.id, instance.params) == instance.params
    again = make_benchmark(name)
    assert [i.id for i in bench.instances(bench.default_split)] == [
        i.id for i in again.instances(again.default_split)
    ]
    assert bench.default_split in bench.splits
    assert bench.id.startswith(f"{bench.name}-v")


@pytest.mark.parametrize("name", BENCHMARKS)
async def test_env_never_raises_on_bad_actions(name: str) -> None:
    bench = make_benchmark(name)
    instance = bench.instances(bench.default_split)[0]
    env = bench.wrap_env(bench.make_env(instance), instance)
    env.reset(seed=0)
    for action in ("", "???", '{"action": 42}', "x" * 5000):
        step = await env.astep(action)
        assert step.info.get("valid") is False, action
        if step.done:
            break


@pytest.mark.parametrize("name", BENCHMARKS)
async def test_a_step_before_reset_is_refused(name: str) -> None:
    bench = make_benchmark(name)
    instance = bench.instances(bench.default_split)[0]
    env = bench.wrap_env(bench.make_env(instance), instance)
    with pytest.raises(ResetNeeded, match="call reset"):
        await env.astep("anything")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_protocol_is_played_by_the_one_episode_loop(name: str) -> None:
    # The records come from Benchmark.run_episode (play_episode over make_env), so the envs the
    # tests and the Gymnasium adapter drive are the code that writes the records.
    bench = make_benchmark(name)
    assert type(bench).run_episode is Benchmark.run_episode
    assert set(bench.headline_metrics) <= set(bench.metric_specs)
    assert all(
        spec.direction in ("higher", "lower", "none") for spec in bench.metric_specs.values()
    )


async def _quick_records(name: str, runs_dir: Path) -> list[EpisodeRecord]:
    bench = make_benchmark(name)
    # A config with model roles (a judge) exercises the most of the protocol.
    quick = next((q for q in bench.quick if q.roles), bench.quick[0])
    ids = [i.id for i in bench.instances(quick.split)][:3]
    spec = RunSpec(
        benchmark=bench.id,
        split=quick.split,
        instances=list(quick.instances or ids),
        agent=quick.agent,
        agent_options=dict(quick.agent_options),
        model=quick.model,
        roles={role: RoleModel(model=model) for role, model in quick.roles.items()},
    )
    result = await execute_run(spec, RunOptions(progress=False), runs_dir=runs_dir)
    # Records stream in the order they were recorded, which concurrency may change.
    return sorted(result.records(), key=lambda r: r.key)


@pytest.mark.parametrize("name", BENCHMARKS)
async def test_same_seed_same_episode_and_metrics_recomputable(name: str, tmp_path: Path) -> None:
    first = await _quick_records(name, tmp_path / "a")
    second = await _quick_records(name, tmp_path / "b")
    assert first and all(r.status == "ok" for r in first)
    for a, b in zip(first, second, strict=True):
        assert [(s.action, s.feedback, s.valid) for s in a.steps] == [
            (s.action, s.feedback, s.valid) for s in b.steps
        ]
        assert a.metrics == b.metrics
    bench = make_benchmark(name)
    (run_dir,) = [p for p in (tmp_path / "a").iterdir() if (p / "spec.json").exists()]
    loaded = load_records(run_dir)
    assert sorted(r.key for r in loaded) == sorted(r.key for r in first)
    for record in loaded:
        again = EpisodeRecord.model_validate_json(record.model_dump_json())
        assert again == record
        assert bench.episode_metrics(again) == record.metrics
        for call in (c for s in record.steps for c in s.calls):
            # Every model call keeps its exact request, whoever made it (agent, responder, judge).
            assert call.messages and call.params is not None, call.purpose
            assert call.request().messages == call.messages
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["metrics"] == json.loads(json.dumps(bench.score_records(loaded)))
