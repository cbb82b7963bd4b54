"""griddag-v1 benchmark: splits of §5/App. C.2 and E, solvability within the hidden budget,
per-episode metrics from records, aggregation by configuration."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest
from tests.benchmarks.griddag.worlds import played_record

from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark, GridDagOptions
from forkingpaths.benchmarks.griddag.plots import write_compare_plots
from forkingpaths.benchmarks.griddag.world import World
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.core.records import EpisodeRecord


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


def test_budget_alpha_defaults_to_the_papers_and_scales_the_hidden_budget() -> None:
    default = GridDagBenchmark()
    assert default.config == GridDagOptions(budget_alpha=3)  # App. C.1
    assert default.options == {}  # the RunSpec keeps only what the user gave
    assert all(
        default.world(i).budget == 3 * len(default.world(i).cells)
        for i in default.instances("main") + default.instances("semantic")
    )
    bench = GridDagBenchmark(budget_alpha=5)
    assert bench.options == {"budget_alpha": 5}
    world = bench.world(bench.instance("low-easy-s0"))
    assert (len(world.cells), world.budget) == (7, 35)
    assert default.world(default.instance("low-easy-s0")).budget == 21
    # alpha changes neither the grid nor the DAG (App. C.1).
    assert world.cells == default.world(default.instance("low-easy-s0")).cells
    assert world.nodes == default.world(default.instance("low-easy-s0")).nodes


_ALPHA = (
    "griddag option budget_alpha (alpha of the hidden step budget B = alpha x |cells|, "
    "App. C.1 Eq. 7; a positive integer, the paper's is 3): "
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"budget_alpha": 0}, _ALPHA + "Input should be greater than 0, got 0"),
        ({"budget_alpha": -2}, _ALPHA + "Input should be greater than 0, got -2"),
        ({"budget_alpha": True}, _ALPHA + "Input should be a valid integer, got true"),
        ({"budget_alpha": 2.5}, _ALPHA + "Input should be a valid integer, got 2.5"),
        ({"budget_alpha": "3"}, _ALPHA + 'Input should be a valid integer, got "3"'),
        ({"alpha": 3}, "griddag has no option 'alpha'; its options: budget_alpha"),
    ],
)
def test_bad_options_are_refused_in_one_line(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        GridDagBenchmark(**options)
    assert str(excinfo.value) == message


def test_metric_specs_cover_every_run_level_metric() -> None:
    bench = GridDagBenchmark()
    record = played_record(bench, "low-easy-s0", ["right"])
    record.metrics = bench.episode_metrics(record)
    keys = set(bench.score_records([record])) - {"by_group"}
    assert keys == set(bench.metric_specs)
    assert set(bench.headline_metrics) <= keys
    assert {k: s.direction for k, s in bench.metric_specs.items()} == {
        "episodes": "none",
        "success_rate": "higher",
        "exploration_error": "lower",
        "exploitation_error": "lower",
        "exploration_error_pooled": "lower",
        "exploitation_error_pooled": "lower",
        "steps_success": "lower",
        "steps_mean": "none",
        "invalid_action_rate": "lower",
    }


async def test_the_env_truncates_at_the_hidden_budget_inside_the_runners_wrappers() -> None:
    # The hidden budget is a game rule (GridDagEnv's); the runner's TurnLimit sits above it and
    # never fires, so no record gains a `turn_limit` mark.
    bench = GridDagBenchmark()
    instance = bench.instance("low-easy-s0")
    env = bench.wrap_env(bench.make_env(instance), instance)
    env.reset(seed=0)
    steps = []
    while not steps or not steps[-1].done:
        steps.append(await env.astep("nonsense"))
    assert (len(steps), bench.max_steps(instance)) == (21, 22)
    assert (steps[-1].terminated, steps[-1].truncated) == (False, True)
    assert steps[-1].info == {
        "valid": False,
        "position": list(bench.world(instance).start),
        "moved": False,
        "achieved": [],
        "discovered": [],
        "error_reason": "unparseable",
    }
    assert steps[-1].observation.data["outcome"] == {"success": False, "steps": 21, "budget": 21}
    with pytest.raises(ResetNeeded):
        await env.astep("up")


def test_episode_metrics_count_refused_moves_as_errors() -> None:
    bench = GridDagBenchmark()
    world = bench.world(bench.instance("low-easy-s0"))
    assert world.available_directions(world.start) == ["up", "down"]
    record = played_record(bench, "low-easy-s0", ["left", "left", "garbage"])
    # Three refused moves in case 1 (nothing pending): three exploration errors out of three.
    assert bench.episode_metrics(record) == {
        "success": False,
        "steps": 3,
        "exploration_error": 1.0,
        "exploitation_error": None,
        "exploration_errors": 3,
        "exploitation_errors": 0,
        "exploration_required": 3,
        "exploitation_required": 0,
        "case_counts": {"1": 3, "2": 0, "3": 0, "4": 0},
        "invalid_actions": 3,
        "budget": 21,
    }


def test_aggregate_means_and_groups() -> None:
    bench = GridDagBenchmark()
    records = []
    for instance_id, success, steps, explore in (
        ("low-easy-s0", True, 10, 0.0),
        ("low-easy-s1", False, 21, 0.5),  # a failure runs to its hidden budget
        ("high-hard-s0", True, 14, 0.25),
    ):
        record = EpisodeRecord(
            run_id="t", benchmark=bench.id, split="main", instance_id=instance_id, seed=0, agent="a"
        )
        record.metrics = {
            "success": success,
            "steps": steps,
            "exploration_error": explore,
            "exploitation_error": None,
            "exploration_errors": int(explore * 10),
            "exploitation_errors": 0,
            "exploration_required": 10,
            "exploitation_required": 0,
            "invalid_actions": 1,
        }
        records.append(record)
    low_easy = {
        "episodes": 2,
        "success_rate": 0.5,
        "exploration_error": 0.25,  # mean of the episodes' errors, 0.0 and 0.5
        "exploitation_error": None,  # no episode needed exploitation
        "exploration_error_pooled": 0.25,  # 5 errors / 20 required steps
        "exploitation_error_pooled": None,
        "steps_success": 10.0,
        "steps_mean": 15.5,
        "invalid_action_rate": round(2 / 31, 6),
    }
    high_hard = {
        "episodes": 1,
        "success_rate": 1.0,
        "exploration_error": 0.25,
        "exploitation_error": None,
        "exploration_error_pooled": 0.2,
        "exploitation_error_pooled": None,
        "steps_success": 14.0,
        "steps_mean": 14.0,
        "invalid_action_rate": round(1 / 14, 6),
    }
    assert bench.score_records(records) == {
        "episodes": 3,
        "success_rate": 0.666667,
        "exploration_error": 0.25,
        "exploitation_error": None,
        "exploration_error_pooled": 0.233333,  # 7 / 30: every required step weighs the same
        "exploitation_error_pooled": None,
        "steps_success": 12.0,  # successful episodes only (Table 2)
        "steps_mean": 15.0,
        "invalid_action_rate": round(3 / 45, 6),
        "by_group": {"high-hard": high_hard, "low-easy": low_easy},
    }


def test_no_empty_success_vs_log_error_figure(tmp_path: Path) -> None:
    flawless = {"agent": "frontier", "model": None, "agent_options": {}}
    summaries = [{**flawless, "metrics": {"success_rate": 1.0, "exploration_error": 0.0}}]
    assert write_compare_plots(summaries, tmp_path) == []
    erring = {**flawless, "agent": "random"}
    erring["metrics"] = {"success_rate": 0.5, "exploration_error": 0.3}
    (plot,) = write_compare_plots([*summaries, erring], tmp_path)
    assert plot.path.exists() and plot.path.name == "griddag_success_vs_log_exploration_error.png"
