"""griddag world view (`forkingpaths view`): frames by position, fog of war, Table 1 cases from
the metric itself, the DAG as revealed, and records that are errored, old or hostile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.griddag.worlds import played_record

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.benchmarks.griddag.metric import ErrorMetric, score_trajectory
from forkingpaths.core.records import EpisodeRecord

INSTANCES = ["low-medium-s0", "medium-hard-s1", "high-medium-s1"]
HOSTILE = ["<script>alert(1)</script>", '" onmouseover="x', "javascript:alert(1)"]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EpisodeRecord]:
    """Real episodes: the reference agents and the ReAct agent on a scripted model, read back
    from their run directories without the calls' messages, as the viewer reads them."""
    runs = tmp_path_factory.mktemp("runs")
    out: list[EpisodeRecord] = []
    for agent, model in (
        ("frontier", None),
        ("random", None),
        ("react", "scripted/griddag-frontier"),
    ):
        result = run("griddag", agent=agent, model=model, instances=INSTANCES, runs_dir=runs)
        out += load_records(result.run_dir.path, transcripts=False)
    out += load_records(
        run(
            "griddag",
            agent="frontier",
            split="semantic",
            instances=["custom-201-semantic-s0"],
            runs_dir=runs,
        ).run_dir.path,
        transcripts=False,
    )
    return out


def test_frames_are_indexed_by_position_and_follow_the_recorded_positions(
    records: list[EpisodeRecord],
) -> None:
    bench = GridDagBenchmark()
    for record in records:
        view = bench.world_view(record)
        assert view is not None and view["kind"] == "griddag"
        json.dumps(view)
        frames = view["frames"]
        assert len(frames) == len(record.steps) + 1 == len(view["lanes"])
        assert len(view["moves"]) == len(record.steps)
        assert frames[0]["pos"] == record.initial_info["position"]
        for p, frame in enumerate(frames[1:], start=1):
            assert frame["pos"] == record.steps[p - 1].info["position"]


def test_moves_carry_the_metrics_own_cases_errors_and_stale_scores(
    records: list[EpisodeRecord],
) -> None:
    bench = GridDagBenchmark()
    for record in records:
        view = bench.world_view(record)
        assert view is not None
        world = bench.world(bench.instance(record.instance_id))
        score = score_trajectory(world, bench.trajectory(record))
        assert [(m["case"], m["err"], m["stale"]) for m in view["moves"]] == [
            (s.case, s.err, s.stale) for s in score.steps
        ]
        # The view's totals are the episode's metrics.
        assert view["score"]["case_counts"] == record.metrics["case_counts"]
        last = view["frames"][-1]
        assert last["exploration_errors"] == record.metrics["exploration_errors"]
        assert last["exploitation_errors"] == record.metrics["exploitation_errors"]
        # The case shown at a position is the one the move from it is judged in.
        for p, move in enumerate(view["moves"]):
            assert view["frames"][p]["case"] == move["case"]
            assert view["frames"][p]["stale"] == (view["moves"][p - 1]["stale"] if p else 0)
    cases = {m["case"] for r in records for m in bench.world_view(r)["moves"]}  # type: ignore[index]
    assert cases >= {1, 4}  # the fixture's episodes meet more than one case


def test_fog_of_war_is_what_the_agent_had_seen_and_only_lifts(
    records: list[EpisodeRecord],
) -> None:
    bench = GridDagBenchmark()
    for record in records[:6]:
        view = bench.world_view(record)
        assert view is not None
        world = bench.world(bench.instance(record.instance_id))
        positions = bench.trajectory(record)
        metric = ErrorMetric(world)
        metric.start(positions[0])
        for p in range(len(positions)):
            if p:
                metric.update(positions[p])
            observed = {(x, y) for x, y, seen, _ in view["cells"] if 0 <= seen <= p}
            known = {(x, y) for x, y, _, k in view["cells"] if 0 <= k <= p}
            # Eq. 2: observed = visited by p; unobserved = beside an observed cell, not visited.
            assert observed == set(positions[: p + 1])
            assert known - observed == set(metric.unobserved)
            # T(t) is the metric's; after the goal no move is judged, so none is shown.
            targets = set() if metric.done else set(metric.targets)
            assert {tuple(c) for c in view["frames"][p]["targets"]} == targets
        for _x, _y, seen, known_at in view["cells"]:
            assert seen == -1 or 0 <= known_at <= seen
        for x, y, known_at in view["walls"]:
            assert (x, y) not in world.cells
            beside = [(x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)]
            first = [positions.index(c) for c in beside if c in positions]
            assert known_at == (min(first) if first else -1)


def test_dag_is_revealed_by_discovery_and_never_shrinks(records: list[EpisodeRecord]) -> None:
    bench = GridDagBenchmark()
    for record in records:
        view = bench.world_view(record)
        assert view is not None
        world = bench.world(bench.instance(record.instance_id))
        positions = bench.trajectory(record)
        nodes = {n["name"]: n for n in view["nodes"]}
        assert set(nodes) == set(world.nodes)
        for name, node in nodes.items():
            cell = world.nodes[name].pos
            first = positions.index(cell) if cell in positions else -1
            assert node["discovered_at"] == first  # a node shows when its cell is observed
            if node["achieved_at"] != -1:
                assert node["achieved_at"] >= node["discovered_at"] >= 0
            if node["discovered_at"] != -1:
                assert 0 <= node["named_at"] <= node["discovered_at"]
            # Layered by depth: every prerequisite sits on a higher row.
            assert all(nodes[p]["layer"] < node["layer"] for p in world.nodes[name].parents)
        goal = nodes[world.goal]
        assert goal["is_goal"] and (goal["achieved_at"] != -1) == record.outcome["success"]
        assert sorted(map(tuple, view["edges"])) == sorted(
            (parent, name, i)
            for name, node in world.nodes.items()
            for i, option in enumerate(node.options)
            for parent in option
        )


def test_errored_record_without_steps_gives_a_valid_view() -> None:
    bench = GridDagBenchmark()
    record = EpisodeRecord(
        run_id="t",
        benchmark=bench.id,
        split="main",
        instance_id="low-easy-s0",
        seed=0,
        agent="react",
        status="error",
        error=HOSTILE[0],
    )
    view = bench.world_view(record)
    assert view is not None
    json.dumps(view)
    world = bench.world(bench.instance("low-easy-s0"))
    assert view["moves"] == [] and len(view["frames"]) == 1
    assert view["frames"][0]["pos"] == list(world.start)
    assert view["error"] == HOSTILE[0] and view["status"] == "error"
    unknown = record.model_copy(update={"instance_id": "no-such-instance"})
    assert bench.world_view(unknown) is None


def test_model_text_comes_back_unchanged_as_plain_strings() -> None:
    bench = GridDagBenchmark()
    record = played_record(bench, "low-easy-s0", [*HOSTILE, "up"])
    view = bench.world_view(record)
    assert view is not None
    assert [m["action"] for m in view["moves"]] == [*HOSTILE, "up"]
    assert [m["valid"] for m in view["moves"]] == [False, False, False, True]
    assert view["moves"][0]["error_reason"] == "unparseable"
    # Refused moves stay in place and are errors of the case they were made in (Eq. 1).
    assert [f["pos"] for f in view["frames"][:4]] == [record.initial_info["position"]] * 4
    assert [m["err"] for m in view["moves"][:3]] == [1, 1, 1]
    assert json.loads(json.dumps(view)) == view


def test_records_without_positions_are_replayed_from_their_actions() -> None:
    bench = GridDagBenchmark()
    world = bench.world(bench.instance("low-medium-s0"))
    moves = ["up", "left", "down", "down", "right", "oops", "up", "up", "up", "left"]
    full = played_record(bench, "low-medium-s0", moves)
    old = full.model_copy(
        update={
            "initial_info": {},
            "steps": [s.model_copy(update={"info": {}}) for s in full.steps],
        }
    )
    new_view, old_view = bench.world_view(full), bench.world_view(old)
    assert new_view is not None and old_view is not None
    assert [f["pos"] for f in old_view["frames"]] == [f["pos"] for f in new_view["frames"]]
    assert old_view["cells"] == new_view["cells"]
    assert old_view["nodes"] == new_view["nodes"]
    assert old_view["frames"][0]["pos"] == list(world.start)


def test_a_budget_long_episode_stays_compact(records: list[EpisodeRecord], tmp_path: Path) -> None:
    bench = GridDagBenchmark()
    longest = max(records, key=lambda r: len(r.steps))
    assert len(longest.steps) >= 150  # a random walk that runs to the hidden budget
    assert len(json.dumps(bench.world_view(longest))) < 200_000
