"""The exploration/exploitation error metric (§4, Table 1, Eq. 1, App. B) on hand-built worlds."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import pytest

from forkingpaths.benchmarks.griddag.metric import (
    ErrorMetric,
    StepScore,
    TrajectoryScore,
    load_score_input,
    score_trajectory,
)
from forkingpaths.benchmarks.griddag.world import Cell, TaskNode, World
from forkingpaths.core.errors import ConfigError, ForkingPathsError, InvalidFile


def corridor(length: int) -> frozenset[Cell]:
    return frozenset((x, 0) for x in range(length))


def make_world(
    cells: frozenset[Cell],
    start: Cell,
    nodes: list[TaskNode],
    goal: str = "G",
    budget: int | None = None,
) -> World:
    return World(
        cells=cells,
        start=start,
        nodes={n.name: n for n in nodes},
        goal=goal,
        budget=budget if budget is not None else 3 * len(cells),
    )


# Corridor x = 0..4; A at the far left, B (needs A) right of the start, G (needs B) at the end.
#   A . B . G      start at x = 1
CHAIN = make_world(
    corridor(5),
    (1, 0),
    [
        TaskNode("A", (0, 0)),
        TaskNode("B", (2, 0), (("A",),)),
        TaskNode("G", (4, 0), (("B",),)),
    ],
)

# A U-shaped map: the true distance from (0,0) to (2,0) is 6, not the Manhattan 2.
#   (0,2) (1,2) (2,2)
#   (0,1)   #   (2,1)
#   (0,0)   #   (2,0)
U_CELLS = frozenset({(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0)})
U_WORLD = make_world(U_CELLS, (1, 2), [TaskNode("A", (0, 0)), TaskNode("G", (2, 0), (("A",),))])


# B C G A      start on C; B and C need A, G needs B and C. B and C are seen before A is achieved,
# so they become pending once the agent reaches A at the far end, with every cell observed.
CASE3_WORLD = make_world(
    corridor(4),
    (1, 0),
    [
        TaskNode("B", (0, 0), (("A",),)),
        TaskNode("C", (1, 0), (("A",),)),
        TaskNode("A", (3, 0)),
        TaskNode("G", (2, 0), (("B", "C"),)),
    ],
)


def walk(world: World, positions: list[Cell]) -> tuple[ErrorMetric, list[StepScore]]:
    metric = ErrorMetric(world)
    metric.start(positions[0])
    return metric, [metric.update(p) for p in positions[1:]]


# ---- Table 1: the four cases and their target sets ----


def test_case_1_targets_the_unobserved_frontier() -> None:
    metric = ErrorMetric(CHAIN)
    metric.start((1, 0))
    assert metric.case == 1
    assert metric.unobserved == {(0, 0), (2, 0)}
    assert metric.targets == {(0, 0), (2, 0)}
    # B is seen before A is achieved: discovered, not pending; still case 1.
    metric.update((2, 0))
    assert metric.pending == frozenset()
    assert metric.case == 1
    assert metric.targets == {(0, 0), (3, 0)}


def test_case_4_targets_frontier_and_pending_and_case_3_only_pending() -> None:
    metric, _ = walk(CHAIN, [(1, 0), (2, 0), (1, 0), (0, 0)])
    assert metric.achieved == {"A"}
    assert metric.pending == {"B"}
    assert metric.case == 4
    assert metric.targets == {(3, 0), (2, 0)}
    step = metric.update((1, 0))
    assert (step.case, step.targets) == (4, 2)

    # Every cell observed while B and C are pending and the goal is not: case 3.
    metric, _ = walk(CASE3_WORLD, [(1, 0), (0, 0), (1, 0), (2, 0), (3, 0)])
    assert metric.achieved == {"A"}
    assert metric.pending == {"B", "C"}
    assert metric.unobserved == frozenset()
    assert metric.case == 3
    assert metric.targets == {(0, 0), (1, 0)}


def test_case_2_targets_only_the_goal_even_with_unobserved_cells() -> None:
    # A . G . .    start at x = 2 (on G, which needs A)
    world = make_world(
        corridor(5),
        (2, 0),
        [TaskNode("A", (0, 0)), TaskNode("G", (2, 0), (("A",),))],
    )
    metric, _ = walk(world, [(2, 0), (1, 0), (0, 0)])
    assert metric.pending == {"G"}
    assert metric.unobserved == {(3, 0)}
    assert metric.case == 2
    assert metric.targets == {(2, 0)}
    step = metric.update((1, 0))
    assert (step.case, step.targets, step.gain, step.err) == (2, 1, 1, 0)
    step = metric.update((2, 0))
    assert step.progress and metric.done


# ---- Eq. 6: gain on the true map ----


def test_gain_uses_true_map_distance_not_manhattan() -> None:
    positions = [(1, 2), (2, 2), (2, 1), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2), (0, 1), (0, 0)]
    metric, _ = walk(U_WORLD, positions)
    assert metric.pending == {"G"} and metric.case == 2
    # Up from (0,0): Manhattan distance to G grows 2 -> 3, true distance shrinks 6 -> 5.
    up = metric.update((0, 1))
    assert (up.gain, up.err) == (1, 0)
    down = metric.update((0, 0))
    assert (down.gain, down.err) == (0, 1)


def test_gain_when_closer_to_one_target_and_farther_from_another() -> None:
    world = make_world(corridor(7), (3, 0), [TaskNode("G", (0, 0))])
    metric, _ = walk(world, [(3, 0), (4, 0)])
    assert metric.targets == {(2, 0), (5, 0)}
    step = metric.update((3, 0))  # 1 step nearer (2,0), 1 step farther from (5,0)
    assert (step.progress, step.gain, step.err, step.targets) == (False, 1, 0, 2)


def test_move_away_from_every_target_is_an_error() -> None:
    # A T-junction: from (1,1) the frontier is (1,0); from (1,0) it is (0,0) and (2,0).
    cells = frozenset({(0, 0), (1, 0), (2, 0), (1, 1)})
    world = make_world(cells, (1, 1), [TaskNode("G", (0, 0))])
    metric, _ = walk(world, [(1, 1), (1, 0)])
    assert metric.targets == {(0, 0), (2, 0)}
    step = metric.update((1, 1))
    assert (step.progress, step.gain, step.err, step.targets) == (False, 0, 1, 2)


def test_refused_move_is_an_error() -> None:
    _, steps = walk(CHAIN, [(1, 0), (1, 0)])
    assert (steps[0].gain, steps[0].progress, steps[0].err, steps[0].stale) == (0, False, 1, 0)
    assert steps[0].position == (1, 0)


# ---- Eq. 1: progress, the stale score and |T| ----


def test_progress_events_score_zero_and_reset_the_segment() -> None:
    world = make_world(corridor(5), (2, 0), [TaskNode("G", (4, 0))])
    positions = [(2, 0), (1, 0), (2, 0), (1, 0), (2, 0), (1, 0), (2, 0), (3, 0), (2, 0), (3, 0)]
    _, steps = walk(world, positions)
    assert [s.progress for s in steps] == [
        True,
        False,
        False,
        False,
        False,
        False,
        True,
        False,
        False,
    ]
    # Within the first segment (from (1,0)) the oscillation piles up; after entering (3,0) the
    # segment holds (3,0) alone, so the same oscillation starts from zero again.
    assert [s.stale for s in steps] == [0, 0, 0, 1, 3, 5, 0, 0, 0]
    assert [s.err for s in steps] == [0, 0, 0, 1, 1, 1, 0, 0, 0]


def test_single_target_with_gain_is_never_an_error_even_if_stale_rises() -> None:
    # G . . . . S   : after walking left, the only target is (0,0).
    world = make_world(corridor(6), (5, 0), [TaskNode("G", (0, 0))])
    positions = [(5, 0), (4, 0), (3, 0), (2, 0), (1, 0)]
    positions += [(2, 0), (1, 0), (2, 0), (1, 0)]
    _, steps = walk(world, positions)
    tail = steps[4:]
    assert all(s.targets == 1 for s in tail)
    assert [s.gain for s in tail] == [0, 1, 0, 1]
    assert [s.stale for s in tail] == [0, 0, 1, 3]
    # The last move raises S from 1 to 3 but gains with |T| = 1: no error.
    assert [s.err for s in tail] == [1, 0, 1, 0]


def test_figure_3c_symmetric_targets_oscillation_flagged_by_stale_score() -> None:
    # Frontier at both ends of the corridor: every move gains, the repeats are still errors.
    world = make_world(corridor(5), (2, 0), [TaskNode("G", (0, 0))])
    metric, _ = walk(world, [(2, 0), (1, 0), (2, 0), (3, 0)])
    assert metric.targets == {(0, 0), (4, 0)}
    steps = [metric.update(p) for p in [(2, 0), (3, 0), (2, 0), (3, 0), (2, 0)]]
    assert all(s.gain == 1 and s.targets == 2 and not s.progress for s in steps)
    assert [s.stale for s in steps] == [0, 0, 1, 3, 5]
    assert [s.err for s in steps] == [0, 0, 1, 1, 1]


# ---- attribution, normalisation, success ----

CHAIN_TRAJECTORY: list[Cell] = [
    (1, 0),
    (2, 0),  # t0  case 1, progress (new cell; B discovered)
    (1, 0),  # t1  case 1, |T|=2, gain, S 0 -> 0
    (1, 0),  # t2  case 1, refused: error
    (0, 0),  # t3  case 1, progress (A achieved, B pending)
    (0, 0),  # t4  case 4, refused: error
    (1, 0),  # t5  case 4, gain, S 0 -> 0
    (0, 0),  # t6  case 4, farther from both targets: error
    (1, 0),  # t7  case 4, gain, S 0 -> 1 (edge used a 3rd time): error
    (2, 0),  # t8  case 4, progress (B achieved; G unseen, so nothing pending)
    (3, 0),  # t9  case 1, progress
    (2, 0),  # t10 case 1, away from the only target: error
    (3, 0),  # t11 case 1, gain, |T|=1
    (4, 0),  # t12 case 1, progress: G achieved
    (3, 0),  # ignored
    (4, 0),  # ignored
]


def test_attribution_and_normalisation_by_hand() -> None:
    score = score_trajectory(CHAIN, CHAIN_TRAJECTORY)
    assert [s.case for s in score.steps] == [1, 1, 1, 1, 4, 4, 4, 4, 4, 1, 1, 1, 1]
    assert [s.err for s in score.steps] == [0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0]
    assert [s.progress for s in score.steps] == [
        True, False, False, True, False, False, False, False, True, True, False, False, True,
    ]  # fmt: skip
    assert score.case_counts == {1: 8, 2: 0, 3: 0, 4: 5}
    assert score.case_errors == {1: 2, 2: 0, 3: 0, 4: 3}
    assert score.exploration_errors == 5
    assert score.exploitation_errors == 3
    assert score.exploration_error == pytest.approx(5 / 13)
    assert score.exploitation_error == pytest.approx(3 / 5)
    assert score.n_moves == 13
    assert score.success is True
    assert score.ignored_after_goal == 2


def test_cases_2_and_3_count_only_toward_exploitation() -> None:
    positions = [
        (1, 0),
        (0, 0),  # t0  case 1, progress (B discovered)
        (1, 0),  # t1  case 1, gain toward (2,0), |T|=1
        (2, 0),  # t2  case 1, progress (G discovered)
        (3, 0),  # t3  case 1, progress (A achieved: B, C pending, nothing left unobserved)
        (2, 0),  # t4  case 3, |T|=2, gain, S 0 -> 0
        (3, 0),  # t5  case 3, away from both: error
        (2, 0),  # t6  case 3, gain, S 0 -> 1: error
        (1, 0),  # t7  case 3, progress (C achieved)
        (0, 0),  # t8  case 3, progress (B achieved: the goal is pending)
        (1, 0),  # t9  case 2, gain
        (1, 0),  # t10 case 2, refused: error
        (2, 0),  # t11 case 2, progress: G achieved
    ]
    score = score_trajectory(CASE3_WORLD, positions)
    assert [s.err for s in score.steps] == [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0]
    assert score.case_counts == {1: 4, 2: 3, 3: 5, 4: 0}
    assert score.case_errors == {1: 0, 2: 1, 3: 2, 4: 0}
    assert (score.exploration_errors, score.exploitation_errors) == (0, 3)
    assert score.exploration_error == 0.0
    assert score.exploitation_error == pytest.approx(3 / 8)
    assert score.success


def test_budget_exceeded_is_not_a_success() -> None:
    tight = make_world(CHAIN.cells, CHAIN.start, list(CHAIN.nodes.values()), budget=12)
    score = score_trajectory(tight, CHAIN_TRAJECTORY)
    assert score.n_moves == 13
    assert score.success is False
    assert score.exploration_error == pytest.approx(5 / 13)


def test_unfinished_trajectory_and_empty_denominators() -> None:
    score = score_trajectory(CHAIN, [(1, 0), (2, 0), (3, 0)])
    assert score.success is False
    assert score.ignored_after_goal == 0
    assert score.exploration_error == 0.0
    assert score.exploitation_error is None
    only_start = score_trajectory(CHAIN, [(1, 0)])
    assert only_start.n_moves == 0
    assert only_start.exploration_error is None and only_start.exploitation_error is None


def test_to_json_shape_is_the_external_contract() -> None:
    out = score_trajectory(CHAIN, CHAIN_TRAJECTORY).to_json()
    assert list(out) == ["steps", "exploration_error", "exploitation_error", "success"]
    assert all(list(s) == ["t", "case", "gain", "progress", "err"] for s in out["steps"])
    assert out["steps"][2] == {"t": 2, "case": 1, "gain": 0, "progress": False, "err": 1}
    assert (out["exploration_error"], out["exploitation_error"]) == (5 / 13, 0.6)
    assert type(out["exploration_error"]) is float and out["success"] is True
    assert json.loads(json.dumps(out)) == out
    unfinished = score_trajectory(CHAIN, [(1, 0), (2, 0)]).to_json()
    assert '"exploitation_error": null' in json.dumps(unfinished)


def test_update_refuses_impossible_moves_and_moves_after_the_goal() -> None:
    metric = ErrorMetric(CHAIN)
    metric.start((1, 0))
    with pytest.raises(ConfigError, match=r"\[3, 0\] is not a 4-neighbour move"):
        metric.update((3, 0))
    with pytest.raises(ConfigError, match="not a traversable cell"):
        metric.update((1, 1))
    for p in [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]:
        metric.update(p)
    assert metric.done
    with pytest.raises(ForkingPathsError, match="goal is already achieved"):
        metric.update((3, 0))


# ---- load_score_input ----


def score_file(**overrides: Any) -> dict[str, Any]:
    data = CHAIN.to_json()
    data["positions"] = [[1, 0], [2, 0], [2, 0], [3, 0]]
    data.update(overrides)
    return data


def test_load_score_input_accepts_a_valid_file_with_refused_moves() -> None:
    world, positions = load_score_input(score_file(), "run.json")
    assert world == CHAIN
    assert positions == [(1, 0), (2, 0), (2, 0), (3, 0)]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"positions": None}, r"run\.json: positions: expected a list"),
        ({"positions": {"0": [1, 0]}}, r"run\.json: positions: expected a list"),
        ({"positions": []}, r"positions is empty.*start cell \[1, 0\]"),
        ({"positions": [[1, 0], [2]]}, r"positions\[1\]: expected \[x, y\] with two integers"),
        ({"positions": [[1, 0], [2.0, 0]]}, r"positions\[1\]: expected \[x, y\].*2\.0"),
        ({"positions": [[1, 0], [True, 0]]}, r"positions\[1\]: expected \[x, y\]"),
        ({"positions": [[1, 0], "right"]}, r"positions\[1\]: expected \[x, y\].*right"),
        (
            {"positions": [[2, 0], [1, 0]]},
            r"positions\[0\]: \[2, 0\] must be the start cell \[1, 0\]",
        ),
        ({"positions": [[1, 0], [1, 1]]}, r"positions\[1\]: \[1, 1\] is not a traversable cell"),
        (
            {"positions": [[1, 0], [2, 0], [4, 0]]},
            r"positions\[1\] -> positions\[2\]: \[2, 0\] -> \[4, 0\] is not a move",
        ),
        (
            {"positions": [[1, 0], [2, 0], [1, 1]]},
            r"positions\[2\]: \[1, 1\] is not a traversable",
        ),
    ],
)
def test_load_score_input_names_the_bad_field(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidFile, match=message):
        load_score_input(score_file(**overrides), "run.json")


def test_load_score_input_missing_positions_and_bad_world() -> None:
    data = score_file()
    del data["positions"]
    with pytest.raises(InvalidFile, match=r"run\.json: missing field 'positions'"):
        load_score_input(data, "run.json")
    with pytest.raises(InvalidFile) as excinfo:
        load_score_input(score_file(goal="Z"), "run.json")
    assert str(excinfo.value) == "run.json: goal 'Z' is not one of the nodes (A, B, G)"


# ---- the incremental metric equals a from-scratch reference ----


def _prec(world: World, name: str, achieved: set[str]) -> bool:
    options = world.nodes[name].options
    return not options or any(all(p in achieved for p in option) for option in options)


def _achieved(world: World, prefix: list[Cell]) -> set[str]:
    """Eq. 3 by replay: a node is achieved once visited while its prec holds."""
    done: set[str] = set()
    for cell in prefix:
        name = world.node_at(cell)
        if name is not None and name not in done and _prec(world, name, done):
            done.add(name)
    return done


def _stale(walk: list[Cell]) -> int:
    """S = c + e + n of a segment, counted from its positions (refused moves dropped)."""
    path = [p for i, p in enumerate(walk) if i == 0 or p != walk[i - 1]]
    visits = Counter(path)
    edges = Counter(tuple(sorted(pair)) for pair in itertools.pairwise(path))
    c = len(edges) - len(visits) + 1
    e = sum(max(0, m - 2) for m in edges.values())
    n = sum(max(0, m - 2) for m in visits.values())
    return c + e + n


def reference_score(world: World, positions: list[Cell]) -> list[tuple[Any, ...]]:
    """Eq. 1 recomputed from scratch at every step, straight from the definitions."""
    out: list[tuple[Any, ...]] = []
    segment_start = 0
    for t in range(len(positions) - 1):
        prefix = positions[: t + 1]
        achieved = _achieved(world, prefix)
        if world.goal in achieved:
            break
        observed = set(prefix)
        frontier = {
            c
            for c in world.cells
            if c not in observed and any(n in observed for n in world.neighbours(c))
        }
        pending = {
            u
            for u, node in world.nodes.items()
            if node.pos in observed and u not in achieved and _prec(world, u, achieved)
        }
        if not pending:
            case, targets = 1, frontier
        elif world.goal in pending:
            case, targets = 2, {world.nodes[world.goal].pos}
        elif not frontier:
            case, targets = 3, {world.nodes[u].pos for u in pending}
        else:
            case, targets = 4, frontier | {world.nodes[u].pos for u in pending}
        here, there = positions[t], positions[t + 1]
        d_here, d_there = world.distances_from(here), world.distances_from(there)
        gain = int(
            there in targets
            or any(d_there.get(z, math.inf) < d_here.get(z, math.inf) for z in targets)
        )
        progress = there in frontier or (
            world.node_at(there) is not None and world.node_at(there) in pending
        )
        if progress:
            err, stale = 0, 0
            segment_start = t + 1
        else:
            before = _stale(positions[segment_start : t + 1])
            stale = _stale(positions[segment_start : t + 2])
            if gain == 0:
                err = 1
            elif len(targets) == 1:
                err = 0
            else:
                err = int(stale > before)
        out.append((t, case, gain, progress, err, stale, len(targets), there))
    return out


def random_world(rng: random.Random) -> World:
    width, height = rng.randint(2, 7), rng.randint(1, 6)
    start = (rng.randrange(width), rng.randrange(height))
    # Obstacles may cut the map in pieces: unreachable targets must not break the metric.
    cells = frozenset(
        (x, y) for x in range(width) for y in range(height) if (x, y) == start or rng.random() > 0.2
    )
    k = rng.randint(1, min(6, len(cells)))
    # The start may hold a node now and then (a primitive one is achieved at t = 0).
    spots = rng.sample(sorted(cells), k)
    nodes = []
    for i, pos in enumerate(spots):
        earlier = [n.name for n in nodes]
        options = tuple(
            tuple(rng.sample(earlier, rng.randint(1, len(earlier))))
            for _ in range(rng.randint(0, 2) if earlier else 0)
        )
        if i == k - 1 and earlier and rng.random() < 0.7:
            # A goal that needs every other node keeps walks going through cases 2-4.
            options = (tuple(earlier),)
        nodes.append(TaskNode(f"N{i}", pos, options))
    return make_world(cells, start, nodes, goal=nodes[-1].name, budget=rng.randint(5, 120))


def random_walk(world: World, rng: random.Random, length: int) -> list[Cell]:
    positions = [world.start]
    for _ in range(length):
        options = world.neighbours(positions[-1])
        stay = rng.random() < 0.1 or not options
        positions.append(positions[-1] if stay else rng.choice(options))
    return positions


@pytest.mark.parametrize("seed", range(80))
def test_incremental_metric_equals_from_scratch_reference(seed: int) -> None:
    rng = random.Random(seed)
    world = random_world(rng)
    positions = random_walk(world, rng, rng.randint(0, 250))
    score = score_trajectory(world, positions)
    expected = reference_score(world, positions)
    got = [
        (s.t, s.case, s.gain, s.progress, s.err, s.stale, s.targets, s.position)
        for s in score.steps
    ]
    assert got == expected
    done = world.goal in _achieved(world, positions)
    assert score.n_moves == len(expected)
    assert score.ignored_after_goal == (len(positions) - 1 - len(expected) if done else 0)
    assert score.success == (done and len(expected) <= world.budget)
    for cases, got_error in [
        ((1, 4), score.exploration_error),
        ((2, 3, 4), score.exploitation_error),
    ]:
        moves = [row for row in expected if row[1] in cases]
        if moves:
            assert got_error == pytest.approx(sum(row[4] for row in moves) / len(moves))
        else:
            assert got_error is None


def test_score_of_a_short_trajectory_in_full() -> None:
    score = score_trajectory(CHAIN, CHAIN_TRAJECTORY[:3])
    assert score == TrajectoryScore(
        steps=[
            StepScore(0, 1, 1, True, 0, 0, 2, (2, 0)),  # B discovered: a new cell, progress
            StepScore(1, 1, 1, False, 0, 0, 2, (1, 0)),  # back toward (0,0): gain, no error
        ],
        exploration_error=0.0,
        exploitation_error=None,
        success=False,
        n_moves=2,
        case_counts={1: 2, 2: 0, 3: 0, 4: 0},
        case_errors={1: 0, 2: 0, 3: 0, 4: 0},
        exploration_errors=0,
        exploitation_errors=0,
        ignored_after_goal=0,
    )
