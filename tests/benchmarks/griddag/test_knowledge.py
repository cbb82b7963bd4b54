"""Tests of griddag agent knowledge: observation parsing, the known map and the frontier move."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tests.benchmarks.griddag.worlds import SMALL_WORLD

from forkingpaths.benchmarks.griddag.agents.knowledge import (
    KnownMap,
    ObservationFacts,
    ObservationFormatError,
    choose_frontier_move,
    parse_observation,
    parse_prerequisites,
    plan_frontier_move,
)
from forkingpaths.benchmarks.griddag.agents.memory import HarnessMemory
from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.metric import score_trajectory
from forkingpaths.benchmarks.griddag.world import DIRECTION_ORDER, World, format_prerequisites

# ---- parse_observation on every text form of docs/dev/griddag-observation-format.md ----


def test_empty_cell_at_reset() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [7, 0]. You found nothing here. Available directions: up. "
        "You spent 0 steps."
    )
    assert facts == ObservationFacts(position=(7, 0), available=("up",), steps=0, nothing_here=True)


def test_first_visit_primitive_with_successors() -> None:
    # The paper's example turn (App. C.3), with the step count of the contract.
    facts = parse_observation(
        "OBSERVATION: You are at [0, 1]. You discovered state U_02. U_02 has no prerequisites "
        "and is immediately activated! U_02 has ancestors: R_01, G_00. Available directions: "
        "up, down, right. You spent 3 steps."
    )
    assert facts.position == (0, 1)
    assert facts.available == ("up", "down", "right")
    assert facts.steps == 3
    assert (facts.node, facts.first_visit, facts.options) == ("U_02", True, ())
    assert facts.children == ("R_01", "G_00")
    assert facts.activated and facts.activated_now
    assert not facts.is_goal and not facts.task_complete


def test_first_visit_satisfied_with_or_options() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [2, 2]. You discovered state K9. K9 requires A1 and B2, or C3. "
        "Its prerequisites are satisfied, so K9 is now activated! K9 has ancestors: Z0. "
        "Available directions: left. You spent 12 steps."
    )
    assert facts.node == "K9" and facts.first_visit
    assert facts.options == (("A1", "B2"), ("C3",))
    assert facts.activated and facts.activated_now
    assert facts.children == ("Z0",)


def test_first_visit_not_yet_activated_goal() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [3, 1]. You discovered state G_00. G_00 requires B_02. G_00 is "
        "not activated yet. G_00 is the goal state. Available directions: down, left. "
        "You spent 9 steps."
    )
    assert facts.node == "G_00" and facts.first_visit and facts.is_goal
    assert facts.options == (("B_02",),)
    assert not facts.activated and not facts.task_complete
    assert facts.children == ()


def test_first_visit_goal_completed() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [3, 1]. You discovered state G. G requires B. Its prerequisites "
        "are satisfied, so G is now activated! G is the goal state. You activated the goal state "
        "G. Task complete! Available directions: down. You spent 20 steps."
    )
    assert facts.is_goal and facts.activated_now and facts.task_complete


def test_revisit_already_activated() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [0, 0]. State R_01 is already activated. Available directions: "
        "up, right. You spent 5 steps."
    )
    assert (facts.node, facts.first_visit, facts.activated, facts.activated_now) == (
        "R_01",
        False,
        True,
        False,
    )
    assert facts.options is None  # a revisit does not restate the prerequisites


def test_revisit_now_satisfied_and_goal_completed() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [1, 2]. State Tomato Pasta with Cheese's prerequisites are "
        "satisfied, so Tomato Pasta with Cheese is now activated! You activated the goal state "
        "Tomato Pasta with Cheese. Task complete! Available directions: up. You spent 31 steps."
    )
    assert facts.node == "Tomato Pasta with Cheese"
    assert facts.activated_now and facts.is_goal and facts.task_complete
    assert not facts.first_visit


def test_revisit_still_waiting_restates_prerequisites() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [1, 2]. State Tomato Pasta is not activated yet. Tomato Pasta "
        "requires Pasta and Tomato Sauce. Available directions: up, left. You spent 4 steps."
    )
    assert facts.node == "Tomato Pasta"
    assert facts.options == (("Pasta", "Tomato Sauce"),)
    assert not facts.activated and not facts.first_visit


def test_invalid_action() -> None:
    facts = parse_observation(
        'OBSERVATION: Invalid action: reply with exactly one JSON object such as {"action":"up"}. '
        "You are at [2, 3]. Available directions: up, down. You spent 7 steps."
    )
    assert facts.invalid and not facts.blocked
    assert (facts.position, facts.available, facts.steps, facts.node) == (
        (2, 3),
        ("up", "down"),
        7,
        None,
    )


def test_blocked_move() -> None:
    facts = parse_observation(
        "OBSERVATION: You cannot move left from [2, 3]. You are at [2, 3]. Available directions: "
        "up, down. You spent 8 steps."
    )
    assert facts.blocked and facts.blocked_direction == "left" and not facts.invalid
    assert facts.position == (2, 3)


def test_prefix_optional_and_harness_summary_ignored() -> None:
    observation = (
        "You are at [1, 1]. You found nothing here. Available directions: up, left. "
        "You spent 2 steps."
    )
    memory = HarnessMemory()
    memory.observe(
        "OBSERVATION: You are at [0, 0]. You discovered state R_01. R_01 has no prerequisites "
        "and is immediately activated! Available directions: up, right. You spent 0 steps."
    )
    with_summary = f"OBSERVATION: {observation}\n\n{memory.summary()}"
    assert "You discovered R_01 at [0, 0]" in with_summary
    expected = parse_observation(observation)
    assert parse_observation(with_summary) == expected
    assert expected.node is None and expected.nothing_here


def test_paper_harness_wording_of_directions() -> None:
    facts = parse_observation(
        "OBSERVATION: You are at [2, 3]. You found nothing here. Your available action is up, "
        "down, left, or right. You spent 12 steps."
    )
    assert facts.available == DIRECTION_ORDER


def test_not_an_observation() -> None:
    with pytest.raises(ObservationFormatError) as excinfo:
        parse_observation("Let's explore the grid!")
    assert str(excinfo.value) == (
        "not a griddag observation (expected 'You are at [x, y]' and 'You spent N steps.'): "
        '"Let\'s explore the grid!"'
    )


@pytest.mark.parametrize("options", [(("A",),), (("A", "B"), ("C",)), (("X Y", "Z"),)])
def test_parse_prerequisites_inverts_format(options: tuple[tuple[str, ...], ...]) -> None:
    assert parse_prerequisites(format_prerequisites(options)) == options


def _random_rollout(world: World, seed: int, steps: int) -> list:
    """Observations of a random walk, with some unparseable and blocked actions mixed in."""
    env = GridDagEnv(world)
    rng = random.Random(seed)
    observations = [env.reset(seed=0)]
    for _ in range(steps):
        action = rng.choice([*DIRECTION_ORDER, "jump", '{"action":"north"}'])
        result = env.step(action)
        observations.append(result.observation)
        if result.done:
            break
    return observations


@pytest.mark.parametrize("seed", range(5))
def test_round_trip_of_env_renders(seed: int) -> None:
    for observation in _random_rollout(SMALL_WORLD, seed, 40):
        facts = parse_observation(observation.text)
        data = observation.data
        assert list(facts.position) == data["position"]
        assert list(facts.available) == data["available"]
        assert facts.steps == data["steps"]
        assert facts.invalid == (data["event"] == "invalid")
        assert facts.blocked == (data["event"] == "blocked")
        node = data["node"]
        if node is None or data["event"] in ("invalid", "blocked"):
            assert facts.node is None
            continue
        assert facts.node == node["name"]
        assert facts.first_visit == node["first_visit"]
        assert facts.activated == (node["status"] == "achieved")
        assert facts.activated_now == node["activated_now"]
        if node["first_visit"]:
            assert facts.options == tuple(tuple(o) for o in node["options"])
            assert facts.children == tuple(node["children"])
            assert facts.is_goal == node["is_goal"]


# ---- KnownMap ----


def _known(*texts: str) -> KnownMap:
    known = KnownMap()
    for text in texts:
        known.update(parse_observation(text))
    return known


def test_known_map_frontier_obstacles_and_pending() -> None:
    known = _known(
        "OBSERVATION: You are at [0, 0]. You found nothing here. Available directions: up, "
        "right. You spent 0 steps.",
        "OBSERVATION: You are at [1, 0]. You discovered state B. B requires A. B is not "
        "activated yet. B has ancestors: G. Available directions: left, right. You spent 1 steps.",
        "OBSERVATION: You are at [2, 0]. You discovered state A. A has no prerequisites and is "
        "immediately activated! A has ancestors: B. Available directions: up, left. "
        "You spent 2 steps.",
    )
    assert known.position == (2, 0) and known.steps == 2
    assert known.visited == {(0, 0), (1, 0), (2, 0)}
    assert known.frontier == {(0, 1), (2, 1)}
    assert known.obstacles == {(0, -1), (-1, 0), (1, 1), (1, -1), (2, -1), (3, 0)}
    assert known.states["B"].pos == (1, 0) and known.states["B"].children == ("G",)
    assert known.activated == {"A"}
    assert known.goal is None
    assert known.pending() == ["B"]
    assert known.shortest_path((2, 0), (0, 1)) == ["left", "left", "up"]
    assert known.shortest_path((2, 0), (5, 5)) is None
    assert known.distances_from((0, 0))[(2, 1)] == 3


def test_known_map_revisit_keeps_first_visit_facts() -> None:
    known = _known(
        "OBSERVATION: You are at [0, 0]. You discovered state G. G requires A. G is not "
        "activated yet. G is the goal state. Available directions: right. You spent 0 steps.",
        "OBSERVATION: You are at [1, 0]. You discovered state A. A has no prerequisites and is "
        "immediately activated! A has ancestors: G. Available directions: left. "
        "You spent 1 steps.",
    )
    assert known.goal == "G" and known.pending() == ["G"]
    known.update(
        parse_observation(
            "OBSERVATION: You are at [0, 0]. State G's prerequisites are satisfied, so G is now "
            "activated! You activated the goal state G. Task complete! Available directions: "
            "right. You spent 2 steps."
        )
    )
    assert known.states["G"].options == (("A",),)
    assert known.activated == {"A", "G"} and known.pending() == []


@pytest.mark.parametrize("seed", range(3))
def test_update_from_data_agrees_with_text(seed: int) -> None:
    from_text, from_data = KnownMap(), KnownMap()
    for observation in _random_rollout(SMALL_WORLD, seed, 40):
        from_text.update(parse_observation(observation.text))
        from_data.update_from_data(observation.data)
        assert from_data.position == from_text.position
        assert from_data.visited == from_text.visited
        assert from_data.frontier == from_text.frontier
        assert from_data.obstacles == from_text.obstacles
        assert from_data.activated == from_text.activated
        assert from_data.goal == from_text.goal
        assert from_data.pending() == from_text.pending()
        assert {n: s.pos for n, s in from_data.states.items()} == {
            n: s.pos for n, s in from_text.states.items()
        }


# ---- choose_frontier_move ----


def _corridor(
    ups: tuple[int, ...] = (), pending: int | None = None, *, goal: bool = False, needs: str = "Q"
) -> KnownMap:
    """A visited corridor x = -3..3 at y = 0 with the agent back at the origin. `ups`: the x where
    the cell above is open (frontier); `pending`: the x of state P, which requires `needs`; the
    primitive state Q at x = -3 is activated."""
    known = KnownMap()
    for x in [*range(-3, 4), 0]:
        moves = (("up", x in ups), ("left", x > -3), ("right", x < 3))
        node: dict[str, Any] = {}
        if x == -3:
            node = {"node": "Q", "first_visit": True, "options": (), "activated": True}
        elif x == pending:
            node = {"node": "P", "first_visit": True, "options": ((needs,),), "is_goal": goal}
        available = tuple(d for d, ok in moves if ok)
        known.update(ObservationFacts(position=(x, 0), available=available, steps=0, **node))
    return known


def test_frontier_move_goes_to_nearest_frontier() -> None:
    plan = plan_frontier_move(_corridor(ups=(3, -2)))
    assert (plan.direction, plan.target, plan.kind, plan.distance) == (
        "left",
        (-2, 1),
        "frontier",
        3,
    )
    assert choose_frontier_move(_corridor(ups=(0, 3))) == "up"


def test_frontier_move_prefers_pending_on_equal_distance() -> None:
    known = _corridor(ups=(-2,), pending=3)
    assert known.pending() == ["P"]
    plan = plan_frontier_move(known)
    assert (plan.direction, plan.kind, plan.state, plan.target) == ("right", "pending", "P", (3, 0))


def test_frontier_move_prefers_closer_frontier_over_pending() -> None:
    assert choose_frontier_move(_corridor(ups=(-1,), pending=3)) == "left"


def test_pending_goal_beats_closer_frontier() -> None:
    plan = plan_frontier_move(_corridor(ups=(-1,), pending=3, goal=True))
    assert (plan.direction, plan.kind, plan.distance) == ("right", "goal", 3)


def test_unsatisfied_state_is_not_a_target() -> None:
    known = _corridor(ups=(-3,), pending=1, goal=True, needs="Z")
    assert known.pending() == []
    assert choose_frontier_move(known) == "left"


def test_frontier_ties_follow_direction_order() -> None:
    assert choose_frontier_move(_corridor(ups=(2, -2))) == "left"  # left comes before right


def test_no_target_falls_back_to_an_available_direction() -> None:
    assert choose_frontier_move(_corridor()) == "left"
    assert choose_frontier_move(KnownMap()) == "up"


def test_frontier_agent_policy_makes_no_errors_on_small_world() -> None:
    env = GridDagEnv(SMALL_WORLD)
    known = KnownMap()
    observation = env.reset(seed=0)
    trajectory = [SMALL_WORLD.start]
    for _ in range(SMALL_WORLD.budget):
        known.update(parse_observation(observation.text))
        result = env.step(choose_frontier_move(known))
        observation = result.observation
        trajectory.append(tuple(observation.data["position"]))
        if result.done:
            break
    score = score_trajectory(SMALL_WORLD, trajectory)
    assert (score.success, score.n_moves) == (True, 11)
    assert score.exploration_errors == 0 and score.exploitation_errors == 0
    assert (score.exploration_error, score.exploitation_error) == (0.0, 0.0)
