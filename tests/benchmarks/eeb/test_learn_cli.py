"""`eeb learn`: `--max-steps` caps every episode of Agent-ExpVer's rounds; `--levels` learns on
the release's level files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.eeb.test_level_files import (
    EASY,
    HARD,
    release_match2,
    release_maze,
    write,
)
from tests.doubles import run_cli

from forkingpaths.benchmarks.eeb.expver import game_levels, learning_levels
from forkingpaths.core.errors import ConfigError


def test_max_steps_caps_every_learning_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["eeb", "learn", "maze", "--model", "scripted/eeb-expver", "--rounds", "1",
         "--levels-per-round", "1", "--eval-levels", "1", "--max-steps", "3",
         "--runs-dir", str(tmp_path), "--run-id", "r"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    lines = (tmp_path / "r" / "expver_episodes.jsonl").read_text().splitlines()
    steps = [len(json.loads(line)["steps"]) for line in lines]
    assert steps and max(steps) == 3


def release_tree(root: Path) -> Path:
    """Training and held-out mazes and two match-2 boards in the release's data/levels layout."""
    easy, hard = release_maze(EASY, "Level 1"), release_maze(HARD, "Level 3")
    trained = release_maze([*EASY[:2], "0050000", *EASY[3:]], "Level 1")  # one coin more
    write(root / "maze_train" / "Level_1_1.json", trained)
    write(root / "maze_eval" / "Level_1_1.json", easy)
    write(root / "maze_eval" / "Level_3_2.json", hard)
    write(root / "maze_eval" / "Level_1_collection.json", [easy])  # the same maze again
    write(root / "match_game" / "hard" / "level01.json", release_match2(10))
    write(root / "match_game" / "easy" / "level01.json", release_match2(15))
    return root


def test_learning_levels_from_the_release_layout(tmp_path: Path) -> None:
    root = release_tree(tmp_path / "levels")
    train, held_out = learning_levels("maze", root)
    assert [i for i, _ in train] == ["maze-maze_train-Level_1_1"]
    assert [i for i, _ in held_out] == ["maze-maze_eval-Level_1_1", "maze-maze_eval-Level_3_2"]
    # no match-2 training boards in the release: the generated ones; held-out easy first
    train, held_out = learning_levels("match2", root)
    assert [i for i, _ in train] == [i for i, _ in game_levels("match2", "train")]
    assert [i for i, _ in held_out] == [
        "match2-match_game-easy-level01",
        "match2-match_game-hard-level01",
    ]
    with pytest.raises(ConfigError, match="holds no match2 level"):
        learning_levels("match2", root / "maze_eval")


def test_learn_plays_the_levels_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = release_tree(tmp_path / "levels")
    code, _, err = run_cli(
        ["eeb", "learn", "maze", "--model", "scripted/eeb-expver", "--rounds", "1",
         "--levels-per-round", "1", "--eval-levels", "2", "--levels", str(root),
         "--runs-dir", str(tmp_path), "--run-id", "r"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    spec = json.loads((tmp_path / "r" / "expver_config.json").read_text())
    assert spec["train_levels"] == ["maze-maze_train-Level_1_1"]
    assert spec["eval_levels"] == ["maze-maze_eval-Level_1_1", "maze-maze_eval-Level_3_2"]
    lines = (tmp_path / "r" / "expver_episodes.jsonl").read_text().splitlines()
    played = {json.loads(line)["instance_id"] for line in lines}
    assert played == {*spec["train_levels"], *spec["eval_levels"]}


def test_learn_refuses_a_missing_levels_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["eeb", "learn", "maze", "--model", "scripted/eeb-expver",
         "--levels", str(tmp_path / "nope"), "--runs-dir", str(tmp_path)],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert f"levels: {str(tmp_path / 'nope')!r} does not exist; give a level file or folder" in err
    assert not list(tmp_path.iterdir())


def test_run_with_levels_splits_them_as_learn_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run eeb --levels`: maze-train plays the maze_train files, maze the others; a split
    the path cannot fill is refused in one line, before anything is written."""
    root = release_tree(tmp_path / "levels")
    runs = tmp_path / "runs"
    for split, played in (
        ("maze-train", ["maze-maze_train-Level_1_1"]),
        ("maze", ["maze-maze_eval-Level_1_1", "maze-maze_eval-Level_3_2"]),
    ):
        code, _, err = run_cli(
            ["run", "eeb", "--split", split, "--agent", "reference", "--levels", str(root),
             "--runs-dir", str(runs), "--run-id", split],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        lines = (runs / split / "episodes.jsonl").read_text().splitlines()
        assert [json.loads(line)["instance_id"] for line in lines] == played
    code, _, err = run_cli(
        ["run", "eeb", "--split", "maze-train", "--agent", "reference",
         "--levels", str(root / "maze_eval"), "--runs-dir", str(runs), "--run-id", "refused"],
        capsys,
    )  # fmt: skip
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"error: levels: {str(root / 'maze_eval')!r} holds no training maze for split "
        "'maze-train' (it holds 2 held-out mazes; training levels are those in a folder whose "
        "name contains 'train', as the release's maze_train)"
    )
    assert not (runs / "refused").exists()
