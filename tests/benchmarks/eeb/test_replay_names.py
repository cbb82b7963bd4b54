"""`forkingpaths eeb replay maze` reads the actions by the names the game lists them with, and
says which lines it plays as invalid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.eeb.cli import MAZE_ACTION_NAMES, maze_action_line
from forkingpaths.benchmarks.eeb.maze import ACTION_LABELS

LEVEL = (
    Path(__file__).resolve().parents[3]
    / "src/forkingpaths/benchmarks/eeb/data/maze/test/level1/000.json"
)


def test_every_listed_action_name_is_its_number() -> None:
    assert len(MAZE_ACTION_NAMES) == 12
    assert [maze_action_line(label) for label in ACTION_LABELS] == [str(i) for i in range(12)]
    assert ACTION_LABELS[0] == "Move UP 1 step" and ACTION_LABELS[11] == "Move RIGHT 3 steps"
    assert maze_action_line("  move   right 2 step ") == "10"
    assert maze_action_line("MOVE LEFT 1 STEPS") == "6"
    # Numbers and model replies reach the env as they are; unknown words too.
    assert [maze_action_line(x) for x in ("9", "Action: 4", "right")] == ["9", "Action: 4", "right"]


def replay(
    actions: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, list[dict], str]:
    path = tmp_path / "moves.txt"
    path.write_text(actions)
    code, out, err = run_cli(["eeb", "replay", "maze", str(LEVEL), "--actions", str(path)], capsys)
    return code, [json.loads(line) for line in out.splitlines()], err


def test_names_replay_as_their_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, by_name, err = replay(
        "Move RIGHT 1 step\nmove up 2 steps\nMove LEFT 1 step\n", tmp_path, capsys
    )
    assert code == 0, err
    code, by_number, err = replay("9\n1\n6\n", tmp_path, capsys)
    assert code == 0, err
    assert by_name == by_number
    assert [(s["action"], s["valid"]) for s in by_name] == [(9, True), (1, True), (6, True)]


def test_an_unreadable_line_is_played_invalid_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, steps, err = replay("right\nMove RIGHT 1 step\n", tmp_path, capsys)
    assert code == 0, err
    assert [(s["action"], s["valid"], s["reward"]) for s in steps] == [
        (None, False, -50),
        (9, True, -30),
    ]
    # One warning line on stderr (the CLI's log handler), naming the line and what it cost.
    assert " ".join(err.split()).count("is no maze action") == 1
    assert (
        "WARNING action 1 'right' is no maze action (0-11 or a name such as 'Move UP 1 step'): "
        "played as an invalid action (-50 points)"
    ) in " ".join(err.split())


def test_help_names_the_action_forms(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["eeb", "replay", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.replace("│", " ").split())
    assert "Maze actions: the numbers 0-11 or the names the game lists them with" in flat
    assert "'Move UP 1 step' ... 'Move RIGHT 3 steps', any case" in flat
    assert "A line the game cannot read is played as an invalid action" in flat
