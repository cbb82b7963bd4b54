"""`rules=release`: the release's wall hit, landing-cell moves, A.Explor, item levels, points."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.maze import MazeEnv, maze_episode_metrics
from forkingpaths.benchmarks.eeb.maze_levels import MazeLevel
from forkingpaths.benchmarks.eeb.scoring import score_variants, table4_fit
from forkingpaths.core.env import Step
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.reproduce import load_published

UP1, LEFT1, RIGHT1, RIGHT3 = 0, 6, 9, 11


def board(*rows: str, level: int | None = None) -> MazeLevel:
    """A hand-built level (S start, G goal, # wall, C coin, T shovel, W sword, K key)."""
    data: dict[str, object] = {"grid": list(rows)}
    if level is not None:
        data["level"] = level
    return MazeLevel.from_json(data, source="test board")


def play(level: MazeLevel, rules: str, *actions: int) -> tuple[MazeEnv, Step]:
    env = MazeEnv(level, rules=rules)  # type: ignore[arg-type]
    env.reset(seed=0)
    result = None
    for number in actions:
        result = env.step(f"Action: {number}")
    assert result is not None
    return env, result


WALL_ABOVE = board("...G", "....", ".#..", "S...")


@pytest.mark.parametrize(
    ("rules", "position", "text"),
    [
        ("paper", (3, 1), "Hit the wall at (2,1): lost a life (-1000)."),
        ("release", (3, 0), "Hit the wall at (2,1): lost a life (-1000) and went back to the "),
    ],
)
def test_a_wall_hit_costs_a_life_and_under_release_sends_to_start(
    rules: str, position: tuple[int, int], text: str
) -> None:
    env, result = play(WALL_ABOVE, rules, RIGHT1, UP1)  # (3,1): +20 -50; the wall: -1050
    assert env.position == position
    assert env.lives == 2
    assert env.score == -30 - 1050 == -1080
    assert result.reward == -1050
    assert text in result.observation.text


JUMP = board("....G", ".....", ".....", ".....", "S#C..")


def test_a_three_cell_move_stops_at_the_wall_under_paper() -> None:
    env, result = play(JUMP, "paper", RIGHT3)
    assert env.position == (4, 0)
    assert (env.lives, env.score) == (2, -1050)
    assert result.info["events"] == [{"event": "wall_hit", "position": [4, 1]}]


def test_a_three_cell_move_jumps_the_wall_and_skips_the_coin_under_release() -> None:
    env, result = play(JUMP, "release", RIGHT3)
    assert env.position == (4, 3)
    assert env.lives == 3
    assert env.score == 6 * 10 - 50 == 10  # rows 3-4, cols 2-4 newly seen
    assert result.info["coins_collected"] == 0  # (4,2) was jumped, its coin stays
    assert (4, 2) in env.snapshot().coins


def test_a_landing_cell_off_the_board_leaves_the_agent_in_place_under_release() -> None:
    moves = (RIGHT1, RIGHT1, RIGHT3)  # from (4,2) three cells right is off the 5-wide board
    paper, _ = play(board("....G", ".....", ".....", ".....", "S.C.."), "paper", *moves)
    release, result = play(JUMP, "release", RIGHT3, LEFT1, RIGHT3)
    assert paper.position == (4, 4)  # paper walks to the edge
    assert release.position == (4, 2)
    assert result.info["events"] == [{"event": "edge", "position": [4, 2]}]


WALLED = board("..G", ".#.", "S..")


@pytest.mark.parametrize(
    ("rules", "at_reset", "at_end"),
    [("paper", 400 / 9, 800 / 9), ("release", 50.0, 100.0)],
)
def test_explored_fraction_divides_by_non_wall_cells_under_release(
    rules: str, at_reset: float, at_end: float
) -> None:
    env = MazeEnv(WALLED, rules=rules)  # type: ignore[arg-type]
    env.reset(seed=0)
    # 4 cells seen at the start, the wall (1,1) among them: 4/9 or 4/8.
    assert maze_episode_metrics(env.outcome())["explored_pct"] == pytest.approx(at_reset)
    for number in (RIGHT1, RIGHT1, UP1):
        env.step(f"Action: {number}")
    # 8 of 9 seen ((0,0) never): 8/9, or under release min(8, 8)/8 although a cell is unseen.
    outcome = env.outcome()
    assert outcome["explored"] == 8
    assert maze_episode_metrics(outcome)["explored_pct"] == pytest.approx(at_end)


SWORD = ("...G", "....", "....", "SW..")


@pytest.mark.parametrize(
    ("level", "rules", "sword", "score"),
    [
        (3, "paper", True, -30),
        (2, "paper", True, -30),  # paper follows the board's content
        (3, "release", True, -30 + 200),  # picked up, +200
        (2, "release", False, -30),  # the release picks items up on level 3 only
    ],
)
def test_items_are_picked_up_by_level_under_release(
    level: int, rules: str, sword: bool, score: int
) -> None:
    env, result = play(board(*SWORD, level=level), rules, RIGHT1)
    assert env.items_held()["sword"] is sword
    assert env.score == score
    assert result.info["bonus"] == score + 30
    assert ((3, 1) in dict(env.snapshot().items)) is not sword


def test_the_key_locks_the_goal_only_on_level_3_under_release() -> None:
    rows = ("..G", "...", "S.K")
    _, locked = play(board(*rows, level=3), "release", UP1, UP1, RIGHT1, RIGHT1)
    _, open_goal = play(board(*rows, level=2), "release", UP1, UP1, RIGHT1, RIGHT1)
    assert locked.info["events"][0]["event"] == "locked"
    assert locked.info["position"] == [0, 1]
    assert open_goal.info["success"] is True


SHOVEL = board("...G", "....", "....", "ST#.", level=3)


@pytest.mark.parametrize(
    ("rules", "score", "bonus"),
    [("paper", -30 - 30, 0), ("release", -30 + 100 - 30 + 500, 600)],
)
def test_items_and_broken_walls_pay_points_under_release(
    rules: str, score: int, bonus: int
) -> None:
    env, result = play(SHOVEL, rules, RIGHT1, RIGHT1)  # the shovel, then break (3,2)
    assert env.position == (3, 2)
    assert (env.score, result.info["bonus"], result.info["barriers"]) == (score, bonus, 1)
    variants = score_variants(maze_episode_metrics(result.info))
    # Whatever the rules, the formulas see B.1's -60; release's script adds 500 per wall.
    assert variants == {
        "score_game": score,
        "score_b1": -60,
        "score_table4": -60,
        "score_release": -60 + 500,
    }


def test_snapshot_and_restore_keep_the_bonus() -> None:
    env, _ = play(SHOVEL, "release", RIGHT1)
    state = env.snapshot()
    env.step("Action: 9")
    env.restore(state)
    assert (env.score, env.outcome()["bonus"]) == (70, 100)


def test_options_compose_and_bad_values_are_refused_in_one_line() -> None:
    bench = EEBBenchmark(rules="release", geometry="release", scoring="table4")
    instance = bench.instances("maze")[0]
    env = bench.make_env(instance)
    assert isinstance(env, MazeEnv)
    assert env.rules == "release"
    with pytest.raises(ConfigError) as refused:
        EEBBenchmark(rules="wild")
    assert "rules" in str(refused.value) and "\n" not in str(refused.value).strip()
    with pytest.raises(ConfigError, match="rules must be one of paper, release, got 'wild'"):
        MazeEnv(SHOVEL, rules="wild")  # type: ignore[arg-type]


def test_table4_fit_is_not_improved_by_the_release_rules_or_its_score() -> None:
    rows = table4_fit(load_published(Path(EEBBenchmark().published_dir()) / "table4.yaml"))
    human = rows[0]
    assert human.model == "Human Baseline"
    assert (human.b1, human.table4) == (pytest.approx(2493.574), pytest.approx(3478.574))
    assert human.release == pytest.approx(3478.574 + 500 * 1.43)
    assert human.release_rules_b1 == pytest.approx(2493.574 + 500 * 1.43)

    def rms(name: str) -> float:
        residuals = [row.printed - getattr(row, name) for row in rows]
        return (sum(r * r for r in residuals) / len(residuals)) ** 0.5

    fits = {name: round(rms(name)) for name in ("b1", "table4", "release", "release_rules_b1")}
    assert fits == {"b1": 1842, "table4": 145, "release": 384, "release_rules_b1": 1562}
