"""Match2Env: App. B.1 scoring and props, gravity and seeded refill, episode end, metrics."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from typing import Any

import pytest

from forkingpaths.benchmarks.eeb.match2 import (
    MATCH2_METRIC_LABELS,
    UNPARSEABLE,
    Match2Env,
    Match2EpisodeMetrics,
    aggregate_match2,
    match2_episode_metrics,
    match2_score,
    parse_match2_action,
)
from forkingpaths.benchmarks.eeb.match2_levels import Match2Level, load_match2_split
from forkingpaths.core.env import OrderEnforcing, Step
from forkingpaths.core.errors import ConfigError, InvalidFile, ResetNeeded
from forkingpaths.gym import to_gymnasium

# A board with exactly one legal group: the three B tiles at [6, 1], [7, 0], [7, 1].
#
#      0 1 2 3 4 5 6 7
#   0  A B C D A B C D
#   1  C D A B C D A B
#   ..   (rows alternate)
#   6  A B C D A B C D
#   7  B B A B C D A B
BOARD = ["ABCDABCD", "CDABCDAB"] * 3 + ["ABCDABCD", "BBABCDAB"]
CHECKER_KEYS = {"t", "action", "valid", "reward", "score", "done", "board", "steps_remaining"}


def make_level(
    targets: dict[str, int] | None = None,
    max_steps: int = 10,
    inventory: dict[str, int] | None = None,
    board: list[str] | None = None,
) -> Match2Level:
    return Match2Level(
        board=tuple(board or BOARD),
        max_steps=max_steps,
        inventory=inventory
        if inventory is not None
        else {"row": 1, "col": 1, "bomb": 1, "hammer": 1},
        color_targets=targets or {"A": 20, "B": 20, "C": 20, "D": 20},
    )


def act(kind: str, *, pos: tuple[int, int] | None = None, index: int | None = None) -> str:
    action: dict[str, Any] = {"type": kind}
    if pos is not None:
        action["pos"] = list(pos)
    if index is not None:
        action["index"] = index
    return json.dumps({"action": action})


def with_score(env: Match2Env, score: int) -> None:
    """Give a started env `score` points, so props can be paid for."""
    env.restore(dataclasses.replace(env.snapshot(), score=score))


def draw(rng: random.Random) -> str:
    """One refill tile, drawn as Match2Env documents it."""
    return "ABCD"[min(int(rng.random() * 4), 3)]


# ---- scoring and parsing ----


@pytest.mark.parametrize(("tiles", "points"), [(2, 10), (3, 18), (5, 34), (10, 74)])
def test_scoring_formula(tiles: int, points: int) -> None:
    assert match2_score(tiles) == points


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"action": {"type": "eliminate", "pos": [4, 3]}}', {"type": "eliminate", "pos": [4, 3]}),
        (
            'Best move:\n```json\n{\n  "action": {\n    "type": "eliminate",\n    "pos": [4, 3]\n'
            "  }\n}\n```\nRationale: largest group.",
            {"type": "eliminate", "pos": [4, 3]},
        ),
        ('{"action": {"type": "row", "index": 2, "pos": null}}', {"type": "row", "index": 2}),
        ('{"action": {"type": "Column", "index": 5}}', {"type": "col", "index": 5}),
        ('{"action": {"type": "bomb", "pos": "(1, 6)"}}', {"type": "bomb", "pos": [1, 6]}),
        ('{"action": "hammer", "pos": [0, 0]}', {"type": "hammer", "pos": [0, 0]}),
        ('{"type": "eliminate", "pos": [1, 1]}', {"type": "eliminate", "pos": [1, 1]}),
        (
            'first {"action": {"type": "row", "index": 1}} then {"action": {"type": "col", '
            '"index": 7}}',
            {"type": "col", "index": 7},
        ),
        ("eliminate at (4,3)", {"type": "eliminate", "pos": [4, 3]}),
        ("Action: bomb [2, 5].", {"type": "bomb", "pos": [2, 5]}),
        ("`row 6`", {"type": "row", "index": 6}),
        ('{"action": {"type": "eliminate", "pos": [9, 3]}}', {"type": "eliminate", "pos": [9, 3]}),
    ],
)
def test_parser_reads_actions_leniently(text: str, expected: dict[str, Any]) -> None:
    assert parse_match2_action(text) == (expected, None)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I would eliminate the big group.", "no action found"),
        ('{"action": null}', "null action"),
        ('{"action": {"type": "rocket", "pos": [1, 1]}}', '"type" must be one of'),
        ('{"action": {"type": "row"}}', 'row needs "index"'),
        ('{"action": {"type": "eliminate", "pos": [1]}}', 'eliminate needs "pos": \\[i, j\\]'),
        ('{"action": {"type": "hammer", "pos": [true, 1]}}', 'hammer needs "pos"'),
        ('{"action": {"type": "eliminate", "pos": [1, 2]', "no action found"),
    ],
)
def test_parser_refuses_with_a_reason(text: str, reason: str) -> None:
    action, error = parse_match2_action(text)
    assert action is None and error is not None
    assert re.search(reason, error)


# ---- eliminate, gravity, refill ----


def test_elimination_gravity_and_seeded_refill_give_the_exact_board() -> None:
    env = Match2Env(make_level())
    env.reset(seed=7)
    step = env.step(act("eliminate", pos=(7, 1)))
    # Column 0 lost row 7 and column 1 rows 6-7: the tiles above fall, and the gaps at the
    # top are refilled column by column, top row first, from random.Random(7).
    rng = random.Random(7)
    c0_r0, c1_r0, c1_r1 = draw(rng), draw(rng), draw(rng)
    assert (c0_r0, c1_r0, c1_r1) == ("B", "A", "C")  # pins the draws themselves
    expected = [
        c0_r0 + c1_r0 + "CDABCD",
        "A" + c1_r1 + "ABCDAB",
        "CBCDABCD",
        "ADABCDAB",
        "CBCDABCD",
        "ADABCDAB",
        "CBCDABCD",
        "ADABCDAB",
    ]
    assert step.info["board"] == expected == env.board
    assert step.observation.data["board"] == expected
    assert step.reward == 18.0
    assert step.info["score"] == 18
    assert step.info["cleared"] == {"A": 0, "B": 3, "C": 0, "D": 0}
    assert step.info["cleared_total"] == 3
    assert step.info["valid"] is True and step.info["error"] is None
    assert step.info["action"] == {"type": "eliminate", "pos": [7, 1]}
    assert step.observation.data["cleared"]["B"] == 3
    assert "eliminate [7, 1] cleared 3 B (+18 points)" in step.observation.text


def test_one_tile_elimination_is_invalid_and_spends_the_step() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    step = env.step(act("eliminate", pos=(0, 0)))
    assert step.info["valid"] is False
    assert "no same-colour neighbour" in step.info["error"]
    assert step.info["board"] == BOARD and step.info["score"] == 0 and step.reward == 0.0
    assert step.info["steps_remaining"] == 9 and step.info["t"] == 1
    assert "was invalid and used a step" in step.observation.text


def test_off_board_position_is_invalid() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    step = env.step(act("eliminate", pos=(8, 0)))
    assert step.info["valid"] is False and "pos [8, 0] is off the board" in step.info["error"]
    assert step.info["action"] == {"type": "eliminate", "pos": [8, 0]}


# ---- props ----


@pytest.mark.parametrize(
    ("action", "cost", "cleared"),
    [
        (act("row", index=1), 32, {"A": 2, "B": 2, "C": 2, "D": 2}),
        (act("col", index=0), 32, {"A": 4, "B": 1, "C": 3, "D": 0}),
        (act("bomb", pos=(3, 3)), 12, {"A": 3, "B": 1, "C": 3, "D": 2}),
        (act("bomb", pos=(0, 0)), 12, {"A": 1, "B": 1, "C": 1, "D": 1}),
        (act("hammer", pos=(0, 0)), 4, {"A": 1, "B": 0, "C": 0, "D": 0}),
    ],
)
def test_prop_clears_counts_toward_targets_and_costs_points(
    action: str, cost: int, cleared: dict[str, int]
) -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    with_score(env, 40)
    kind = json.loads(action)["action"]["type"]
    step = env.step(action)
    assert step.info["valid"] is True
    assert step.reward == -cost and step.info["score"] == 40 - cost
    assert step.info["cleared"] == cleared
    assert step.observation.data["cleared"] == cleared
    assert step.observation.data["inventory"][kind] == 0
    again = env.step(action)
    assert again.info["valid"] is False and f"no {kind} prop left" in again.info["error"]
    assert again.info["score"] == 40 - cost and again.info["steps_remaining"] == 8


def test_prop_needs_a_score_that_covers_its_cost() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    with_score(env, 3)
    step = env.step(act("hammer", pos=(2, 2)))
    assert step.info["valid"] is False
    assert step.info["error"] == "score 3 cannot cover the hammer cost of 4 points"
    assert step.info["board"] == BOARD and step.info["steps_remaining"] == 9
    assert step.observation.data["inventory"]["hammer"] == 1
    with_score(env, 4)
    assert env.step(act("hammer", pos=(2, 2))).info["score"] == 0


def test_prop_paid_from_points_earned_in_play() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    assert env.step(act("row", index=0)).info["error"].startswith("score 0 cannot cover")
    env.step(act("eliminate", pos=(6, 1)))
    step = env.step(act("bomb", pos=(4, 4)))
    assert step.info["valid"] is True and step.info["score"] == 18 - 12


def test_prop_index_off_the_board_is_invalid() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    with_score(env, 40)
    step = env.step(act("col", index=8))
    assert step.info["valid"] is False and "column index 8 is off the board" in step.info["error"]


def test_inventory_counts_allow_repeated_use() -> None:
    env = Match2Env(make_level(inventory={"bomb": 2}))
    env.reset(seed=0)
    with_score(env, 30)
    assert env.step(act("bomb", pos=(1, 1))).info["valid"] is True
    assert env.step(act("bomb", pos=(1, 1))).info["score"] == 6
    assert "no hammer prop left" in env.step(act("hammer", pos=(0, 0))).info["error"]


def test_noprops_refuses_props_and_does_not_offer_them() -> None:
    env = Match2Env(make_level(), props=False)
    obs = env.reset(seed=0)
    assert obs.data["inventory"] == {} and obs.data["prop_costs"] == {}
    assert obs.data["props_enabled"] is False
    for word in ("bomb", "hammer", "Props"):
        assert word not in obs.text
    with_score(env, 100)
    step = env.step(act("row", index=0))
    assert step.info["valid"] is False and "NoProps" in step.info["error"]
    assert step.info["board"] == BOARD and step.info["score"] == 100
    assert env.step(act("eliminate", pos=(7, 0))).info["valid"] is True


# ---- episode end ----


def test_meeting_every_target_terminates_with_success() -> None:
    env = Match2Env(make_level(targets={"B": 3}))
    env.reset(seed=0)
    step = env.step(act("eliminate", pos=(7, 0)))
    assert step.terminated and not step.truncated
    assert step.info["success"] is True and step.info["done"] is True
    assert step.observation.data["targets_remaining"] == {"A": 0, "B": 0, "C": 0, "D": 0}


def test_running_out_of_steps_ends_without_success() -> None:
    env = Match2Env(make_level(max_steps=2))
    env.reset(seed=0)
    first = env.step(act("eliminate", pos=(7, 0)))
    assert not first.done and first.info["done"] is False
    last = env.step("pass")
    assert last.truncated and not last.terminated
    assert last.info["success"] is False and last.info["done"] is True
    assert last.info["steps_remaining"] == 0


async def test_the_runners_wrapper_refuses_a_step_before_reset() -> None:
    with pytest.raises(ResetNeeded):
        await OrderEnforcing(Match2Env(make_level())).astep(act("eliminate", pos=(7, 0)))


@pytest.mark.parametrize(
    ("level", "actions", "end"),
    [
        (make_level(targets={"B": 3}), [act("eliminate", pos=(7, 0))], "terminated"),
        (make_level(max_steps=2), [act("eliminate", pos=(7, 0)), "pass"], "truncated"),
    ],
)
async def test_the_runners_wrapper_refuses_a_step_after_the_end(
    level: Match2Level, actions: list[str], end: str
) -> None:
    """Ordering is the OrderEnforcing wrapper's, which the runner, Agent-ExpVer and the
    Gymnasium ids put around the env; the env itself keeps only the game's rules."""
    env = OrderEnforcing(Match2Env(level))
    env.reset(seed=0)
    results = [await env.astep(action) for action in actions]
    assert getattr(results[-1], end) and not any(r.done for r in results[:-1])
    with pytest.raises(ResetNeeded):
        await env.astep("pass")
    env.reset(seed=0)
    assert not (await env.astep("pass")).done


def test_unparseable_reply_spends_the_step() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    step = env.step("Let me think about the board...")
    assert step.info["valid"] is False and step.info["action"] is None
    assert step.info["error"] == UNPARSEABLE
    assert step.info["steps_remaining"] == 9 and step.info["board"] == BOARD
    assert step.observation.data["valid"] is False


def test_info_carries_what_a_replay_checker_prints() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    for action in (act("eliminate", pos=(7, 0)), "???"):
        info = env.step(action).info
        assert info.keys() >= CHECKER_KEYS
        assert len(info["board"]) == 8 and all(len(row) == 8 for row in info["board"])
        json.dumps(info)  # one JSON line per step


# ---- observation ----


def test_observation_shows_board_indices_targets_props_and_format() -> None:
    level = make_level(targets={"A": 10, "B": 6, "C": 8, "D": 6}, max_steps=15)
    obs = Match2Env(level).reset(seed=0)
    text = obs.text
    assert "    0 1 2 3 4 5 6 7" in text
    assert " 7  B B A B C D A B" in text
    assert "Score: 0. Steps remaining: 15 of 15." in text
    assert "Colour targets (cleared/target): A 0/10, B 0/6, C 0/8, D 0/6." in text
    assert "row x1 (32), col x1 (32), bomb x1 (12), hammer x1 (4)" in text
    assert "tiles*5 + 3*max(0, tiles-2)" in text
    assert '{"action": {"type": "eliminate", "pos": [i, j]}}' in text
    assert obs.data["groups"] == [{"colour": "B", "size": 3, "pos": [6, 1]}]
    assert obs.data["steps_remaining"] == 15 and obs.data["targets"]["C"] == 8
    assert text.isascii()


def test_render_is_pure() -> None:
    env = Match2Env(make_level())
    env.reset(seed=0)
    env.step(act("eliminate", pos=(7, 0)))
    assert env.render() == env.render()


def test_constructor_and_reset_validate_arguments() -> None:
    with pytest.raises(ConfigError, match="level must be a Match2Level"):
        Match2Env({"board": BOARD})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="props must be True or False"):
        Match2Env(make_level(), props="no")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="none are supported"):
        Match2Env(make_level()).reset(seed=0, options={"props": False})


# ---- determinism ----


def greedy_episode(env: Match2Env, seed: int) -> list[Step]:
    """Always eliminate the largest group (the first in data["groups"]), else pass."""
    obs = env.reset(seed=seed)
    steps = []
    while True:
        groups = obs.data["groups"]
        action = act("eliminate", pos=tuple(groups[0]["pos"])) if groups else "pass"
        step = env.step(action)
        steps.append(step)
        obs = step.observation
        if step.done:
            return steps


def test_same_seed_same_trajectory_other_seed_other_refills() -> None:
    level = load_match2_split("test")["easy/000"]
    first = greedy_episode(Match2Env(level), 11)
    again = greedy_episode(Match2Env(level), 11)
    assert [s.info for s in first] == [s.info for s in again]
    assert [s.observation for s in first] == [s.observation for s in again]
    other = greedy_episode(Match2Env(level), 12)
    assert [s.info["board"] for s in first] != [s.info["board"] for s in other]


def test_snapshot_restore_replays_identically() -> None:
    env = Match2Env(load_match2_split("test")["medium/004"])
    env.reset(seed=3)
    env.step(act("eliminate", pos=tuple(env.render().data["groups"][0]["pos"])))
    state = env.snapshot()
    groups = env.render().data["groups"]
    later = env.step(act("eliminate", pos=tuple(groups[0]["pos"])))
    env.restore(state)
    assert env.step(act("eliminate", pos=tuple(groups[0]["pos"]))).info == later.info


def test_gymnasium_checker_accepts_the_env() -> None:
    pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    check_env(
        to_gymnasium(Match2Env(load_match2_split("test")["hard/000"])), skip_render_check=True
    )


# ---- metrics ----


def test_metrics_of_a_hand_computed_episode() -> None:
    env = Match2Env(make_level(targets={"A": 1, "B": 3}, max_steps=5))
    env.reset(seed=0)
    infos = [
        env.step("no idea").info,  # invalid: step spent
        env.step(act("eliminate", pos=(7, 1))).info,  # 3 B, +18
    ]
    last = env.step(act("hammer", pos=(7, 2)))  # the A at [7, 2], -4; targets met
    infos.append(last.info)
    assert last.terminated
    metrics = match2_episode_metrics(infos, max_steps=5)
    assert metrics == Match2EpisodeMetrics(
        success=True, score=14, steps=3, max_steps=5, valid_actions=2, cleared=4
    )
    assert metrics.remaining_step_ratio == pytest.approx(2 / 5)
    assert metrics.score_per_step == pytest.approx(14 / 3)
    assert metrics.clear_per_step == pytest.approx(4 / 3)
    assert metrics.api_efficiency == pytest.approx(2 / 3)
    failed = Match2EpisodeMetrics(
        success=False, score=20, steps=5, max_steps=5, valid_actions=5, cleared=10
    )
    summary = aggregate_match2([metrics, failed.to_dict()])
    assert summary == pytest.approx(
        {
            "episodes": 2,
            "success_rate": 0.5,
            "avg_score": 17.0,
            "remaining_step_ratio": 0.2,
            "score_per_step": (14 / 3 + 4) / 2,
            "clear_per_step": (4 / 3 + 2) / 2,
            "api_efficiency": 7 / 8,
        }
    )
    assert set(MATCH2_METRIC_LABELS) == set(summary) - {"episodes"}


def test_invalid_actions_lower_api_efficiency() -> None:
    env = Match2Env(make_level(max_steps=4))
    env.reset(seed=0)
    infos = [env.step(a).info for a in ("x", "y", act("eliminate", pos=(7, 0)), "z")]
    metrics = match2_episode_metrics(infos, max_steps=4)
    assert metrics.api_efficiency == 0.25 and metrics.remaining_step_ratio == 0.0
    assert metrics.success is False and metrics.score == 18


def test_metrics_edge_cases() -> None:
    empty = match2_episode_metrics([], max_steps=12)
    assert empty.score == 0 and empty.success is False and empty.remaining_step_ratio == 1.0
    assert empty.score_per_step is None and empty.api_efficiency is None
    assert aggregate_match2([])["success_rate"] is None
    with pytest.raises(ConfigError, match="max_steps"):
        match2_episode_metrics([], max_steps=0)
    with pytest.raises(InvalidFile, match="step 0: info lacks"):
        match2_episode_metrics([{"valid": True}], max_steps=3)
    with pytest.raises(InvalidFile, match="missing field 'cleared'"):
        aggregate_match2(
            [{"success": True, "score": 1, "steps": 1, "max_steps": 2, "valid_actions": 1}]
        )
