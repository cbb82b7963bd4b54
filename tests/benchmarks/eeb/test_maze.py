"""MazeEnv: the scoring and rules of EvoEmpirBench §3.1/App. B.1, observability, metrics."""

from __future__ import annotations

import json
import string

import pytest

from forkingpaths.benchmarks.eeb.maze import (
    ACTION_LABELS,
    METRIC_KEYS,
    MazeEnv,
    aggregate_maze,
    maze_episode_metrics,
    parse_maze_action,
)
from forkingpaths.benchmarks.eeb.maze_levels import MazeLevel, generate_maze_level
from forkingpaths.benchmarks.eeb.replay import replay_lines
from forkingpaths.core.env import OrderEnforcing, Step
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.gym import to_gymnasium

UP1, UP2, UP3, DOWN1, LEFT1, LEFT2, RIGHT1, RIGHT2, RIGHT3 = 0, 1, 2, 3, 6, 7, 9, 10, 11


def board(*rows: str, level: int | None = None) -> MazeLevel:
    """A hand-built level from map characters (S start, G goal, # wall, C coin, M monster,
    T shovel, W sword, N magnet, K key)."""
    data: dict[str, object] = {"grid": list(rows)}
    if level is not None:
        data["level"] = level
    return MazeLevel.from_json(data, source="test board")


def act(env: MazeEnv, number: int) -> Step:
    return env.step(f"Action: {number}")


def open_board(size: int = 5) -> MazeLevel:
    rows = ["." * size for _ in range(size)]
    rows[0] = "." * (size - 1) + "G"
    rows[-1] = "S" + "." * (size - 1)
    return board(*rows)


# ---- scoring (App. B.1) ----


def test_reset_state_and_start_view_is_explored_but_not_scored() -> None:
    env = MazeEnv(open_board())
    obs = env.reset(seed=0)
    assert env.position == (4, 0)
    assert env.lives == 3
    assert env.score == 0
    assert env.explored == {(3, 0), (3, 1), (4, 0), (4, 1)}
    assert obs.data["explored"] == 4
    assert obs.data["score"] == 0


def test_exploring_new_cells_scores_ten_each_and_a_step_costs_fifty() -> None:
    env = MazeEnv(open_board())
    env.reset(seed=0)
    result = act(env, RIGHT1)  # the view gains (3,2) and (4,2)
    assert result.reward == 2 * 10 - 50
    assert result.info["explored"] == 6
    result = act(env, LEFT1)  # back to the start: nothing new
    assert result.reward == -50
    assert result.info["score"] == -30 - 50


def test_a_coin_scores_five_hundred_and_is_collected_when_passed_over() -> None:
    env = MazeEnv(board("....G", ".....", ".....", ".....", "S.C.."))
    env.reset(seed=0)
    result = act(env, RIGHT3)  # over (4,1), the coin at (4,2), to (4,3)
    assert env.position == (4, 3)
    assert result.info["coins_collected"] == 1
    assert {"event": "coin", "position": [4, 2]} in result.info["events"]
    # New cells: (3,2),(4,2) from (4,1); (3,3),(4,3) from (4,2); (3,4),(4,4) from (4,3).
    assert result.reward == 500 + 6 * 10 - 50
    assert "C" not in "".join(result.observation.data["map"])


def test_reaching_the_goal_scores_two_thousand_and_terminates() -> None:
    env = MazeEnv(board("..G", "...", "S.."))
    env.reset(seed=0)
    first = act(env, UP2)  # (1,0) reveals (0,0) and (0,1); (0,0) reveals nothing more
    assert first.info["explored"] == 6
    result = act(env, RIGHT3)  # (0,1), then the goal at (0,2); the third cell is dropped
    assert env.position == (0, 2)
    assert result.terminated and not result.truncated and result.done
    assert result.info["success"]
    assert result.info["events"][-1] == {"event": "goal", "position": [0, 2]}
    assert result.reward == 2000 + 2 * 10 - 50  # (0,2) and (1,2), seen from (0,1)


def test_rewards_sum_to_the_score() -> None:
    env = MazeEnv(generate_maze_level(3, 11))
    env.reset(seed=5)
    total = 0.0
    for i in range(100):
        result = act(env, (i * 7) % 12)
        total += result.reward
        if result.done:
            break
    assert total == env.score == result.info["score"]


# ---- moves, walls and the edge ----


def test_a_multi_cell_move_stops_in_front_of_a_wall_and_costs_a_life() -> None:
    env = MazeEnv(board("....G", ".....", ".....", ".....", "S.#.."))
    env.reset(seed=0)
    result = act(env, RIGHT3)
    assert env.position == (4, 1)
    assert env.lives == 2
    assert result.info["events"] == [{"event": "wall_hit", "position": [4, 2]}]
    assert result.reward == 2 * 10 - 50 - 1000  # (3,2) and (4,2) were revealed on the way
    assert not result.done


def test_a_one_cell_move_into_a_wall_leaves_the_agent_in_place() -> None:
    env = MazeEnv(board("...G", "....", "....", "S#.."))
    env.reset(seed=0)
    result = act(env, RIGHT1)
    assert env.position == (3, 0)
    assert result.reward == -1050
    assert result.info["valid"]


def test_moving_off_the_map_stops_at_the_edge_without_cost() -> None:
    env = MazeEnv(open_board())
    env.reset(seed=0)
    result = act(env, DOWN1)
    assert env.position == (4, 0) and env.lives == 3
    assert result.info["valid"]
    assert result.info["events"] == [{"event": "edge", "position": [4, 0]}]
    assert result.reward == -50
    result = act(env, UP3)  # three cells fit: no edge event
    assert env.position == (1, 0)
    assert result.info["events"] == []
    result = act(env, UP3)  # only one cell left above
    assert env.position == (0, 0)
    assert result.info["events"] == [{"event": "edge", "position": [0, 0]}]


def test_losing_the_third_life_terminates_the_episode() -> None:
    env = MazeEnv(board("...G", "....", "....", "S#.."))
    env.reset(seed=0)
    results = [act(env, RIGHT1) for _ in range(3)]
    assert [r.info["lives"] for r in results] == [2, 1, 0]
    assert [r.terminated for r in results] == [False, False, True]
    assert not results[-1].truncated and not results[-1].info["success"]
    assert env.score == 3 * (-1000 - 50)


def test_the_step_cap_truncates() -> None:
    env = MazeEnv(open_board(), max_steps=2)
    env.reset(seed=0)
    assert not act(env, UP1).done
    result = act(env, RIGHT1)
    assert result.truncated and not result.terminated
    assert result.info["done"] and result.info["truncated"]


def test_the_default_step_cap_is_one_hundred() -> None:
    env = MazeEnv(open_board())
    env.reset(seed=0)
    results = [env.step("pass") for _ in range(100)]
    assert not any(r.done for r in results[:-1])
    assert results[-1].truncated and results[-1].info["t"] == 100


async def test_the_runners_wrapper_refuses_a_step_before_reset() -> None:
    with pytest.raises(ResetNeeded):
        await OrderEnforcing(MazeEnv(open_board())).astep("Action: 0")


@pytest.mark.parametrize(
    ("level", "max_steps", "actions", "end"),
    [
        (board("..G", "...", "S.."), 100, [UP2, RIGHT3], "terminated"),  # the goal
        (board("...G", "....", "....", "S#.."), 100, [RIGHT1] * 3, "terminated"),  # no lives
        (open_board(), 2, [UP1, RIGHT1], "truncated"),  # the step cap
    ],
)
async def test_the_runners_wrapper_refuses_a_step_after_the_end(
    level: MazeLevel, max_steps: int, actions: list[int], end: str
) -> None:
    """Ordering is the OrderEnforcing wrapper's, which the runner, Agent-ExpVer and the
    Gymnasium ids put around the env; the env itself keeps only the game's rules."""
    env = OrderEnforcing(MazeEnv(level, max_steps=max_steps))
    env.reset(seed=0)
    results = [await env.astep(f"Action: {number}") for number in actions]
    assert getattr(results[-1], end) and not any(r.done for r in results[:-1])
    with pytest.raises(ResetNeeded):
        await env.astep("Action: 0")
    env.reset(seed=0)
    assert not (await env.astep("Action: 0")).done


# ---- invalid actions and parsing ----


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Action: 9", 9),
        ("reasoning...\n**Action: 9**", 9),
        ("**Action:** 4 (move down 2)", 4),
        ("the chain reaction: 5 coins", None),
        ("Action: 1 first, but in the end Action: 10", 10),
        ('{"action": 4}', 4),
        ('```json\n{"action": "11"}\n```', 11),
        ("  7 ", 7),
        (3, 3),
        ("action=2", 2),
        ("Action: 12", None),
        ("Action: -1", None),
        ("Actions 0-2 move up", None),
        ("move right", None),
        ("", None),
        (True, None),
        (None, None),
    ],
)
def test_parse_maze_action(text: object, expected: int | None) -> None:
    assert parse_maze_action(text) == expected


def test_an_invalid_action_spends_the_step_and_nothing_else() -> None:
    level = board("....G", ".....", "..M..", ".....", "S....", level=2)
    env = MazeEnv(level)
    env.reset(seed=3)
    before = env.snapshot()
    result = env.step("I think I should go right")
    assert not result.info["valid"]
    assert result.info["action"] is None
    assert result.reward == -50 and result.info["t"] == 1
    assert env.position == before.position
    assert env.monsters == before.monsters  # monsters do not move either
    assert env.lives == 3
    assert "no action could be read" in result.observation.text


# ---- monsters ----

MONSTER_CORRIDOR = board(
    "....G",
    ".....",
    "###..",
    "#M#..",
    "S.#..",
)
"""The monster's only free neighbour is (4,1): the start is closed to monsters."""


def test_touching_a_monster_costs_a_life_and_returns_to_start() -> None:
    env = MazeEnv(board("....G", ".....", ".....", "#####", "S.M.."))
    env.reset(seed=0)
    result = act(env, RIGHT3)
    assert result.info["events"][0] == {"event": "monster_hit", "position": [4, 2]}
    assert env.position == (4, 0)
    assert env.lives == 2
    assert result.reward == 2 * 10 - 50 - 1000  # (3,2) and (4,2), seen from (4,1)


def test_a_monster_moving_onto_the_agent_counts_as_a_touch() -> None:
    env = MazeEnv(MONSTER_CORRIDOR)
    env.reset(seed=0)
    result = act(env, RIGHT1)
    assert result.info["events"] == [
        {"event": "monster_hit", "position": [4, 1], "monster_moved": True}
    ]
    assert env.position == (4, 0)
    assert env.lives == 2
    assert env.monsters == ((4, 1),)


def test_monsters_never_enter_walls_start_goal_or_each_other() -> None:
    env = MazeEnv(generate_maze_level(2, 5))
    level = env.level
    for seed in range(5):
        env.reset(seed=seed)
        for _ in range(60):
            result = env.step("not an action") if seed % 2 else act(env, (seed * 5) % 12)
            cells = env.monsters
            assert len(set(cells)) == len(cells)
            for cell in cells:
                assert cell not in level.walls and cell not in (level.start, level.goal)
            if result.done:
                break


def test_monster_movement_is_seeded() -> None:
    level = generate_maze_level(2, 17)

    def trajectory(seed: int) -> list[tuple[tuple[int, int], ...]]:
        env = MazeEnv(level, max_steps=30)
        env.reset(seed=seed)
        out = []
        for _ in range(30):
            # Stepping off the bottom-left corner keeps the agent home and alive.
            result = act(env, DOWN1)
            out.append(env.monsters)
            if result.done:
                break
        return out

    assert trajectory(4) == trajectory(4)
    assert len({tuple(trajectory(seed)) for seed in range(6)}) > 1


def test_reset_without_seed_is_seed_zero() -> None:
    level = generate_maze_level(2, 17)
    a, b = MazeEnv(level), MazeEnv(level)
    a.reset()
    b.reset(seed=0)
    for _ in range(10):
        assert act(a, DOWN1).info == act(b, DOWN1).info
        assert a.monsters == b.monsters


# ---- items (level 3) ----


def test_the_shovel_breaks_three_walls_then_walls_cost_lives_again() -> None:
    env = MazeEnv(board("......G", *["......."] * 5, "S.T####", level=3))
    env.reset(seed=0)
    result = act(env, RIGHT3)  # (6,1), the shovel at (6,2), breaks (6,3) and stops there
    assert env.position == (6, 3)
    assert env.items_held()["shovel"] == 2
    assert [e["event"] for e in result.info["events"]] == ["item", "barrier"]
    assert result.info["barriers"] == 1 and env.lives == 3
    assert result.observation.data["map"][6][3] == "A"
    assert "Your shovel broke the wall at (6,3) (2 uses left)" in result.observation.text
    act(env, RIGHT3)  # breaks (6,4)
    act(env, RIGHT1)  # breaks (6,5)
    assert env.items_held()["shovel"] == 0 and env.position == (6, 5)
    result = act(env, RIGHT1)  # no uses left: (6,6) costs a life
    assert result.info["events"] == [{"event": "wall_hit", "position": [6, 6]}]
    assert env.lives == 2 and env.position == (6, 5)
    assert result.info["barriers"] == 3


def test_the_sword_kills_a_monster_the_agent_walks_into_and_the_move_goes_on() -> None:
    env = MazeEnv(board(".....G", *["......"] * 3, "######", "SW.M..", level=3))
    env.reset(seed=0)
    result = act(env, RIGHT3)  # the sword at (5,1), (5,2), the monster at (5,3)
    assert env.position == (5, 3)
    assert result.info["kills"] == 1 and env.lives == 3
    assert env.monsters == ()
    assert [e["event"] for e in result.info["events"]] == ["item", "kill"]


def test_the_sword_kills_a_monster_that_moves_onto_the_agent() -> None:
    env = MazeEnv(board("....G", ".....", "###..", "#M#..", "SW#..", level=3))
    env.reset(seed=0)
    result = act(env, RIGHT1)
    assert [e["event"] for e in result.info["events"]] == ["item", "kill"]
    assert env.lives == 3 and env.monsters == () and result.info["kills"] == 1


def test_the_magnet_collects_coins_in_the_five_by_five_square() -> None:
    env = MazeEnv(board("C....G", "......", "......", "...C..", "......", "SN....", level=3))
    env.reset(seed=0)
    result = act(env, RIGHT1)  # picks the magnet at (5,1); (3,3) is 2 rows and 2 cols away
    coins = [e for e in result.info["events"] if e["event"] == "coin"]
    assert coins == [{"event": "coin", "position": [3, 3], "magnet": True}]
    assert result.info["coins_collected"] == 1
    assert env.items_held()["magnet"]
    act(env, UP3)  # to (2,1): (0,0) is 2 rows and 1 col away
    assert env.outcome()["coins_collected"] == 2


def test_the_key_gates_the_goal() -> None:
    env = MazeEnv(board("K.G", "...", "S..", level=3))
    env.reset(seed=0)
    act(env, RIGHT2)  # (2,2)
    result = act(env, UP3)  # (1,2), then the locked goal
    assert env.position == (1, 2)
    assert result.info["events"] == [{"event": "locked", "position": [0, 2]}]
    assert env.lives == 3 and not result.done
    assert "locked" in result.observation.text
    act(env, LEFT2)
    result = act(env, UP1)  # the key at (0,0)
    assert result.info["events"] == [{"event": "item", "item": "key", "position": [0, 0]}]
    result = act(env, RIGHT3)
    assert result.terminated and result.info["success"]


def test_a_board_without_a_key_has_an_open_goal_at_any_level() -> None:
    env = MazeEnv(board("..G", "...", "S..", level=3))
    env.reset(seed=0)
    act(env, UP2)
    assert act(env, RIGHT2).info["success"]


# ---- observability ----


def test_local_view_shows_the_three_by_three_and_the_goal_only() -> None:
    env = MazeEnv(board("....G", "..C..", ".....", "#....", "S...."))
    obs = env.reset(seed=0)
    assert obs.data["map"] == ["????G", "?????", "?????", "#.???", "A.???"]
    assert " 4 | A . ? ? ?" in obs.text
    assert "Current position (row,col): (4,0)" in obs.text


def test_seen_cells_stay_known_after_moving_away() -> None:
    env = MazeEnv(board("....G", ".....", ".....", "#....", "S...."))
    env.reset(seed=0)
    act(env, RIGHT3)
    result = act(env, UP3)
    # The start's surroundings (row 3-4, cols 0-1) are far out of view but still known.
    assert result.observation.data["map"] == ["??..G", "??.A.", "??...", "#....", "....."]


def test_monsters_show_only_inside_the_view() -> None:
    level = board("....G", ".....", "...M.", ".....", "S....", level=2)
    env = MazeEnv(level)
    obs = env.reset(seed=0)
    assert "M" not in "".join(obs.data["map"])
    assert obs.data["monsters_visible"] == []
    full = MazeEnv(level, full_vision=True).reset(seed=0)
    assert full.data["monsters_visible"] == [[2, 3]]
    assert full.data["map"][2][3] == "M"


def test_full_vision_shows_everything_but_scores_the_same() -> None:
    level = generate_maze_level(3, 21)
    partial, full = MazeEnv(level), MazeEnv(level, full_vision=True)
    obs = full.reset(seed=2)
    partial.reset(seed=2)
    assert "?" not in "".join(obs.data["map"])
    assert obs.data["explored"] == 4
    assert "Full vision" in obs.text
    for i in range(40):
        a, b = act(partial, (i * 5) % 12), act(full, (i * 5) % 12)
        assert a.info == b.info
        if a.done:
            break


def test_observation_text_lists_the_state_block() -> None:
    env = MazeEnv(generate_maze_level(3, 1))
    text = env.reset(seed=0).text
    for piece in (
        "Legend:",
        "T = shovel",
        "Lives: 3",
        "Score: 0",
        "Explored: 4 of 81 cells",
        "Coins: 0 of 5 collected",
        "- Key: not collected",
        "Available actions:",
        "Scoring:",
        "- Coin collected: +500 points",
        "- Life lost: -1000 points",
        'Answer with "Action: N"',
    ):
        assert piece in text
    for i, label in enumerate(ACTION_LABELS):
        assert f"- {i}: {label}" in text
    assert set(text) <= set(string.printable)
    text = act(env, RIGHT1).observation.text
    assert "Last step: Move RIGHT 1 step from (8,0)" in text


def test_level_one_text_omits_monsters_and_items() -> None:
    text = MazeEnv(generate_maze_level(1, 1)).reset(seed=0).text
    assert "monster" not in text.lower() and "Items:" not in text


def test_render_is_pure() -> None:
    env = MazeEnv(generate_maze_level(2, 3))
    env.reset(seed=1)
    act(env, RIGHT2)
    assert env.render() == env.render()


# ---- snapshot / restore, the checker contract, constructor validation ----


def test_snapshot_and_restore_replay_the_same_future() -> None:
    env = MazeEnv(generate_maze_level(3, 8))
    env.reset(seed=9)
    act(env, DOWN1)
    state = env.snapshot()
    observation = env.render()

    def play() -> list[dict[str, object]]:
        infos = []
        for i in range(30):
            result = act(env, (i * 7 + 3) % 12)
            infos.append(result.info)
            if result.done:
                break
        return infos

    first = play()
    assert env.restore(state) == observation
    assert play() == first


def test_restore_refuses_foreign_states() -> None:
    env = MazeEnv(open_board())
    with pytest.raises(ConfigError, match="MazeState"):
        env.restore("state")  # type: ignore[arg-type]
    other = MazeEnv(generate_maze_level(1, 2))
    other.reset(seed=0)
    with pytest.raises(ConfigError, match="does not belong"):
        env.restore(other.snapshot())


def test_step_info_carries_the_checker_fields() -> None:
    env = MazeEnv(generate_maze_level(2, 4))
    lines = replay_lines(env, ["Action: 9", "oops", "Action: 2"], seed=1)
    assert len(lines) == 3
    rows = [json.loads(line) for line in lines]
    for t, row in enumerate(rows, start=1):
        assert {"t", "action", "valid", "reward", "score", "done", "lives", "position"} <= set(row)
        assert row["t"] == t
    assert rows[1]["valid"] is False and rows[1]["action"] is None
    assert rows[0]["action"] == 9


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": True}, "max_steps"),
        ({"lives": -1}, "lives"),
        ({"full_vision": "yes"}, "full_vision"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        MazeEnv(open_board(), **kwargs)  # type: ignore[arg-type]


def test_constructor_and_reset_refuse_bad_input() -> None:
    with pytest.raises(ConfigError, match="MazeLevel"):
        MazeEnv({"grid": []})  # type: ignore[arg-type]
    env = MazeEnv(open_board())
    with pytest.raises(ConfigError, match="options"):
        env.reset(seed=0, options={"full_vision": True})
    with pytest.raises(ConfigError, match="seed"):
        env.reset(seed="1")  # type: ignore[arg-type]


def test_gymnasium_check_env_passes() -> None:
    pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    check_env(to_gymnasium(MazeEnv(generate_maze_level(3, 2))), skip_render_check=True)


# ---- metrics (Table 3) ----


def test_episode_metrics_of_a_hand_computed_episode() -> None:
    env = MazeEnv(board("..G", ".C.", "S.."))
    env.reset(seed=0)
    act(env, RIGHT1)  # (2,1): reveals (1,2),(2,2): +20 -50
    act(env, UP1)  # the coin at (1,1): reveals (0,0),(0,1),(0,2): +30 +500 -50
    result = act(env, UP1)  # (0,1): nothing new, -50
    result = act(env, RIGHT1)  # the goal: +2000 -50
    assert result.info["score"] == -30 + 480 - 50 + 1950 == 2350
    metrics = maze_episode_metrics(result.info)
    assert metrics == {
        "success": True,
        "score": 2350,
        "steps": 4,
        "explored_pct": 100.0,
        "gold_ratio": 1.0,
        "remaining_hp": 3,
        "kills": 0,
        "barriers": 0,
        "bonus": 0,
    }
    assert maze_episode_metrics(env.outcome()) == metrics


def test_aggregate_is_a_mean_over_all_episodes() -> None:
    won = {
        "success": True,
        "score": 2350,
        "steps": 4,
        "explored_pct": 100.0,
        "gold_ratio": 1.0,
        "remaining_hp": 3,
        "kills": 1,
        "barriers": 2,
    }
    lost = {
        "success": False,
        "score": -3150,
        "steps": 3,
        "explored_pct": 50.0,
        "gold_ratio": 0.2,
        "remaining_hp": 0,
        "kills": 0,
        "barriers": 0,
    }
    table = aggregate_maze([won, lost])
    assert tuple(table) == METRIC_KEYS
    assert table == pytest.approx(
        {
            "Suc.Rate": 50.0,
            "A.Score": -400.0,
            "A.Steps": 3.5,
            "A.Explor": 75.0,
            "A.Gold": 60.0,
            "Rem.HP": 1.5,
            "A.Kills": 0.5,
            "A.Barr": 1.0,
        }
    )
    with pytest.raises(ConfigError, match="episodes"):
        aggregate_maze([])
    with pytest.raises(ConfigError, match="coins_total"):
        maze_episode_metrics({"t": 1})
