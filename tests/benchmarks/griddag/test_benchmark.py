"""griddag-v1 benchmark: splits of §5/App. C.2 and E, solvability within the hidden budget,
per-episode metrics from records, aggregation by configuration."""

from __future__ import annotations

from collections import deque

import pytest

from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.benchmarks.griddag.world import World
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, StepRecord


def oracle_steps(world: World) -> int | None:
    """Fewest moves to the goal with full knowledge: BFS over (cell, achieved set)."""
    names = sorted(world.nodes)
    bit = {n: 1 << i for i, n in enumerate(names)}

    def arrive(cell: tuple[int, int], achieved: int) -> int:
        name = world.node_at(cell)
        if name is None or achieved & bit[name]:
            return achieved
        options = world.nodes[name].options
        if not options or any(all(achieved & bit[p] for p in o) for o in options):
            return achieved | bit[name]
        return achieved

    start = (world.start, arrive(world.start, 0))
    dist = {start: 0}
    queue = deque([start])
    while queue:
        cell, achieved = queue.popleft()
        if achieved & bit[world.goal]:
            return dist[(cell, achieved)]
        for nxt in world.neighbours(cell):
            state = (nxt, arrive(nxt, achieved))
            if state not in dist:
                dist[state] = dist[(cell, achieved)] + 1
                queue.append(state)
    return None


def test_splits_match_the_paper() -> None:
    bench = GridDagBenchmark()
    assert len(bench.instances("main")) == 27  # 3 presets x 3 DAG difficulties x seeds 0-2
    assert len(bench.instances("semantic")) == 4 * 2 * 5  # 4 maps x {semantic, symbolic} x 5
    assert {i.params["exploration"] for i in bench.instances("main")} == {"low", "medium", "high"}


@pytest.mark.parametrize("split", ["main", "semantic"])
def test_every_instance_is_solvable_within_its_hidden_budget(split: str) -> None:
    bench = GridDagBenchmark()
    for instance in bench.instances(split):
        world = bench.world(instance)
        steps = oracle_steps(world)
        assert steps is not None and steps <= world.budget, instance.id


def test_budget_alpha_option_and_unknown_options() -> None:
    bench = GridDagBenchmark(budget_alpha=5)
    world = bench.world(bench.instances("main")[0])
    assert world.budget == 5 * len(world.cells)
    with pytest.raises(ConfigError, match="budget_alpha"):
        GridDagBenchmark(alpha=3)


def _record(bench: GridDagBenchmark, instance_id: str, moves: list[str]) -> EpisodeRecord:
    env = bench.make_env(bench.instance(instance_id))
    obs = env.reset(seed=0)
    record = EpisodeRecord(
        run_id="t",
        benchmark=bench.id,
        split="main",
        instance_id=instance_id,
        seed=0,
        agent="scripted",
        initial_observation=obs.text,
        initial_info=dict(obs.data),
    )
    for i, move in enumerate(moves):
        step = env.step(move)
        record.steps.append(
            StepRecord(
                index=i,
                observation=obs.text,
                action=move,
                feedback=step.observation.text,
                valid=step.info["valid"],
                info={k: v for k, v in step.info.items() if k != "valid"},
            )
        )
        obs = step.observation
    return record


def test_episode_metrics_count_refused_moves_as_errors() -> None:
    bench = GridDagBenchmark()
    instance_id = "low-easy-s0"
    world = bench.world(bench.instance(instance_id))
    blocked = next(
        d
        for d in ("up", "down", "left", "right")
        if d not in world.available_directions(world.start)
    )
    record = _record(bench, instance_id, [blocked, blocked, "garbage"])
    metrics = bench.episode_metrics(record)
    assert metrics["invalid_actions"] == 3
    assert metrics["exploration_errors"] == 3 and metrics["exploration_error"] == 1.0
    assert metrics["success"] is False


def test_aggregate_means_and_groups() -> None:
    bench = GridDagBenchmark()
    records = []
    for instance_id, success, explore in (
        ("low-easy-s0", True, 0.0),
        ("low-easy-s1", False, 0.5),
        ("high-hard-s0", True, 0.25),
    ):
        record = EpisodeRecord(
            run_id="t", benchmark=bench.id, split="main", instance_id=instance_id, seed=0, agent="a"
        )
        record.metrics = {
            "success": success,
            "steps": 10,
            "exploration_error": explore,
            "exploitation_error": None,
            "exploration_errors": int(explore * 10),
            "exploitation_errors": 0,
            "exploration_required": 10,
            "exploitation_required": 0,
            "invalid_actions": 1,
        }
        records.append(record)
    agg = bench.aggregate(records)
    assert agg["success_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert agg["exploration_error"] == 0.25
    assert agg["exploitation_error"] is None
    assert agg["exploration_error_pooled"] == pytest.approx(7 / 30, abs=1e-6)
    assert agg["steps_success"] == 10
    assert set(agg["by_group"]) == {"low-easy", "high-hard"}
    assert agg["by_group"]["low-easy"]["success_rate"] == 0.5
