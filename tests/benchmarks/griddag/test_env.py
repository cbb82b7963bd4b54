"""GridDagEnv: rules of paper §3/App. B and the exact observation contract."""

from __future__ import annotations

import pytest

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.world import TaskNode, World
from forkingpaths.core.env import OrderEnforcing, Step
from forkingpaths.core.errors import ConfigError, ResetNeeded

# The tiny world used throughout (y grows upwards; '#' is an obstacle):
#
#   y=1   B #
#   y=0   S C A D G
#         0 1 2 3 4
#
# A, B primitives; C = A OR B; D = A AND B; G (goal) = C AND D.


def tiny_world(budget: int | None = None) -> World:
    cells = frozenset({(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (0, 1)})
    nodes = {
        "A": TaskNode("A", (2, 0)),
        "B": TaskNode("B", (0, 1)),
        "C": TaskNode("C", (1, 0), (("A",), ("B",))),
        "D": TaskNode("D", (3, 0), (("A", "B"),)),
        "G": TaskNode("G", (4, 0), (("C", "D"),)),
    }
    return World(
        cells=cells,
        start=(0, 0),
        nodes=nodes,
        goal="G",
        budget=budget if budget is not None else 3 * len(cells),
    )


def play(env: GridDagEnv, *actions: str) -> list[Step]:
    return [env.step(a) for a in actions]


def test_reset_text_and_data() -> None:
    env = GridDagEnv(tiny_world())
    obs = env.reset(seed=0)
    assert obs.text == (
        "OBSERVATION: You are at [0, 0]. You found nothing here. "
        "Available directions: up, right. You spent 0 steps."
    )
    assert obs.data == {
        "position": [0, 0],
        "available": ["up", "right"],
        "steps": 0,
        "node": None,
        "valid": True,
        "event": "reset",
        "outcome": {"success": False, "steps": 0, "budget": 18},
    }


def test_primitive_node_is_activated_on_first_visit() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    env.step("up")
    step = env.step("down")
    assert step.observation.text.endswith("You spent 2 steps.")
    env.reset()
    step = env.step("up")
    assert step.observation.text == (
        "OBSERVATION: You are at [0, 1]. You discovered state B. "
        "B has no prerequisites and is immediately activated! B has ancestors: C, D. "
        "Available directions: down. You spent 1 steps."
    )
    assert env.status("B") == "achieved"
    assert step.info == {
        "valid": True,
        "position": [0, 1],
        "moved": True,
        "achieved": ["B"],
        "discovered": ["B"],
        "error_reason": None,
    }
    assert step.observation.data["node"] == {
        "name": "B",
        "status": "achieved",
        "options": [],
        "children": ["C", "D"],
        "is_goal": False,
        "first_visit": True,
        "activated_now": True,
    }
    assert step.reward == 0.0 and not step.terminated and not step.truncated


def test_unmet_prerequisites_then_revisit_activates() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    first = env.step("right")
    assert first.observation.text == (
        "OBSERVATION: You are at [1, 0]. You discovered state C. "
        "C requires A, or B. C is not activated yet. C has ancestors: G. "
        "Available directions: left, right. You spent 1 steps."
    )
    assert env.status("C") == "discovered"
    assert first.info["discovered"] == ["C"] and first.info["achieved"] == []
    assert first.observation.data["node"]["status"] == "discovered"
    # Achieve the parent A, then come back: the OR option is met by A alone.
    a = env.step("right")
    assert a.observation.text == (
        "OBSERVATION: You are at [2, 0]. You discovered state A. "
        "A has no prerequisites and is immediately activated! A has ancestors: C, D. "
        "Available directions: left, right. You spent 2 steps."
    )
    back = env.step("left")
    assert back.observation.text == (
        "OBSERVATION: You are at [1, 0]. "
        "State C's prerequisites are satisfied, so C is now activated! "
        "Available directions: left, right. You spent 3 steps."
    )
    assert env.status("C") == "achieved"
    assert back.info["achieved"] == ["C"] and back.info["discovered"] == []
    assert back.observation.data["node"]["first_visit"] is False
    assert back.observation.data["node"]["activated_now"] is True
    again = env.step("right")
    assert again.observation.text == (
        "OBSERVATION: You are at [2, 0]. State A is already activated. "
        "Available directions: left, right. You spent 4 steps."
    )
    assert again.info["achieved"] == []


def test_and_option_needs_every_parent() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    play(env, "right", "right")  # C (discovered), A (achieved)
    d = env.step("right")
    assert d.observation.text == (
        "OBSERVATION: You are at [3, 0]. You discovered state D. "
        "D requires A and B. D is not activated yet. D has ancestors: G. "
        "Available directions: left, right. You spent 3 steps."
    )
    assert env.status("D") == "discovered"
    play(env, "left")
    revisit = env.step("right")
    assert revisit.observation.text == (
        "OBSERVATION: You are at [3, 0]. State D is not activated yet. D requires A and B. "
        "Available directions: left, right. You spent 5 steps."
    )
    play(env, "left", "left", "left", "up")  # to B
    assert env.status("B") == "achieved"
    play(env, "down", "right", "right")
    done = env.step("right")
    assert done.observation.text == (
        "OBSERVATION: You are at [3, 0]. State D's prerequisites are satisfied, so D is now "
        "activated! Available directions: left, right. You spent 13 steps."
    )
    assert env.status("D") == "achieved"


def test_goal_first_visit_unmet_and_completion_on_revisit() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    steps = play(env, "right", "right", "right", "right")
    assert steps[-1].observation.text == (
        "OBSERVATION: You are at [4, 0]. You discovered state G. "
        "G requires C and D. G is not activated yet. G is the goal state. "
        "Available directions: left. You spent 4 steps."
    )
    assert steps[-1].observation.data["node"]["is_goal"] is True
    assert not steps[-1].terminated
    # Back to B, then C and D become achievable on the way to G.
    play(env, "left", "left", "left", "left", "up", "down", "right", "right", "right")
    final = env.step("right")
    assert final.observation.text == (
        "OBSERVATION: You are at [4, 0]. State G's prerequisites are satisfied, so G is now "
        "activated! You activated the goal state G. Task complete! "
        "Available directions: left. You spent 14 steps."
    )
    assert final.terminated and not final.truncated and final.reward == 1.0
    assert final.observation.data["outcome"] == {"success": True, "steps": 14, "budget": 18}
    assert final.info["achieved"] == ["G"]


def test_goal_completed_on_first_visit_wording() -> None:
    cells = frozenset({(0, 0), (1, 0), (2, 0)})
    world = World(
        cells=cells,
        start=(0, 0),
        nodes={"P": TaskNode("P", (1, 0)), "Q": TaskNode("Q", (2, 0), (("P",),))},
        goal="Q",
        budget=9,
    )
    env = GridDagEnv(world)
    env.reset()
    env.step("right")
    step = env.step("right")
    assert step.observation.text == (
        "OBSERVATION: You are at [2, 0]. You discovered state Q. Q requires P. Its "
        "prerequisites are satisfied, so Q is now activated! Q is the goal state. "
        "You activated the goal state Q. Task complete! "
        "Available directions: left. You spent 2 steps."
    )
    assert step.terminated and step.reward == 1.0


def test_blocked_move_keeps_agent_in_place() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    step = env.step("left")
    assert step.observation.text == (
        "OBSERVATION: You cannot move left from [0, 0]. You are at [0, 0]. "
        "Available directions: up, right. You spent 1 steps."
    )
    assert step.info == {
        "valid": False,
        "position": [0, 0],
        "moved": False,
        "achieved": [],
        "discovered": [],
        "error_reason": "blocked",
    }
    assert step.observation.data["valid"] is False
    assert step.observation.data["event"] == "blocked"
    assert env.position == (0, 0) and env.steps == 1


def test_blocked_on_a_node_cell_reports_node_in_data_only() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    env.step("up")
    step = env.step("up")
    assert step.observation.text == (
        "OBSERVATION: You cannot move up from [0, 1]. You are at [0, 1]. "
        "Available directions: down. You spent 2 steps."
    )
    node = step.observation.data["node"]
    assert node["name"] == "B" and not node["first_visit"] and not node["activated_now"]


@pytest.mark.parametrize("action", ["jump", "", "I think I'll go north", '{"action": "diagonal"}'])
def test_unparseable_action_is_invalid(action: str) -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    step = env.step(action)
    assert step.observation.text == (
        'OBSERVATION: Invalid action: reply with exactly one JSON object such as {"action":"up"}. '
        "You are at [0, 0]. Available directions: up, right. You spent 1 steps."
    )
    assert step.info["valid"] is False
    assert step.info["error_reason"] == "unparseable"
    assert step.observation.data["event"] == "invalid"
    assert env.position == (0, 0)


def test_json_action_inside_prose() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    step = env.step('Thought: the right side is unexplored.\n```json\n{"action": "right"}\n```')
    assert step.info["valid"] and step.info["moved"]
    assert step.info["position"] == [1, 0]
    assert env.step("LEFT").info["position"] == [0, 0]


def test_budget_truncates() -> None:
    env = GridDagEnv(tiny_world(budget=3))
    env.reset()
    results = play(env, "right", "nonsense", "left")
    assert [r.truncated for r in results] == [False, False, True]
    assert not any(r.terminated for r in results)
    assert results[-1].reward == 0.0
    assert results[-1].observation.data["outcome"] == {
        "success": False,
        "steps": 3,
        "budget": 3,
    }


def test_step_before_reset_raises() -> None:
    # The bare env keeps this one guard: before reset there is no episode to step.
    with pytest.raises(ResetNeeded, match=r"^GridDagEnv\.step called before reset\(\)$"):
        GridDagEnv(tiny_world()).step("up")


async def test_order_enforcing_refuses_steps_before_reset_and_after_the_end() -> None:
    # The runner and the Gymnasium adapter wrap every env in OrderEnforcing; stepping past the
    # end (goal achieved or hidden budget spent) is refused there, not by GridDagEnv itself.
    env = OrderEnforcing(GridDagEnv(tiny_world(budget=3)))
    with pytest.raises(ResetNeeded, match="GridDagEnv: step called before reset"):
        await env.astep("right")
    env.reset()
    truncated = [await env.astep(a) for a in ("right", "left", "right")]
    assert [(s.terminated, s.truncated) for s in truncated] == [
        (False, False),
        (False, False),
        (False, True),
    ]
    with pytest.raises(ResetNeeded, match="after the episode ended"):
        await env.astep("left")
    assert env.reset().data["position"] == [0, 0]
    goal = GridDagEnv(tiny_world())
    wrapped = OrderEnforcing(goal)
    wrapped.reset()
    moves = ["up", "down", "right", "right", "left", "right", "right", "right"]
    results = [await wrapped.astep(a) for a in moves]
    assert [s.terminated for s in results] == [False] * 7 + [True]
    assert results[-1].observation.data["outcome"] == {"success": True, "steps": 8, "budget": 18}
    with pytest.raises(ResetNeeded, match="after the episode ended"):
        await wrapped.astep("left")


def test_reset_starts_a_fresh_episode() -> None:
    env = GridDagEnv(tiny_world())
    first = env.reset()
    play(env, "up", "down", "right")
    assert env.reset() == first
    assert env.status("B") == "undiscovered"
    assert env.step("up").info["discovered"] == ["B"]


def test_reset_rejects_unknown_options() -> None:
    with pytest.raises(ConfigError, match="options"):
        GridDagEnv(tiny_world()).reset(options={"difficulty": 3})


def test_determinism() -> None:
    actions = ["right", "up", "x", "right", "left", "left", "up", "down", "right"] * 2

    def rollout() -> list[tuple[str, float, bool, bool, dict[str, object]]]:
        env = GridDagEnv(tiny_world())
        env.reset(seed=7)
        return [
            (s.observation.text, s.reward, s.terminated, s.truncated, s.info)
            for s in play(env, *actions)
        ]

    assert rollout() == rollout()


def test_snapshot_and_restore() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    play(env, "right", "right")
    saved = env.snapshot()
    seen_text = env.render().text
    branch = play(env, "left", "left", "up")
    assert env.status("B") == "achieved"
    restored = env.restore(saved)
    assert restored.text == seen_text
    assert env.position == (2, 0) and env.steps == 2
    assert env.status("B") == "undiscovered" and env.status("C") == "discovered"
    # The same actions from the restored state replay identically.
    assert [s.observation.text for s in play(env, "left", "left", "up")] == [
        s.observation.text for s in branch
    ]
    # The snapshot is a value: later steps do not change it.
    assert saved.achieved == frozenset({"A"})


def test_render_is_pure() -> None:
    env = GridDagEnv(tiny_world())
    env.reset()
    step = env.step("right")
    assert env.render() == step.observation
    assert env.render() == env.render()
    assert env.steps == 1
