"""`forkingpaths escape play` (a human run under the protocol) and `escape agreement`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records

CELL = Path(__file__).parent / "fixtures" / "cell" / "cell.yaml"


def test_human_play_is_recorded_like_an_agent_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = iter(
        [
            "click(note) -- the note may hold a code",
            "input(4321, cell door) -- mirror script reversed",
            "input(4321, cell door)",  # attempt 2: forbidden now
        ]
    )
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, out, err = run_cli(
        ["escape", "play", str(CELL), "--attempts", "2", "--runs-dir", str(tmp_path)], capsys
    )
    # The input ends during attempt 2: the episode is recorded as errored, the steps kept; the
    # person ended it, so a clean line and exit 0, no traceback.
    assert code == 0, err
    assert "run directory:" in out
    assert (
        "stopped early: input ended before the scenario did; 3 steps played, recorded; re-run "
        "the same command to play again"
    ) in out
    assert "Traceback" not in err and "crashed" not in err
    run_dir = next(tmp_path.iterdir())
    (record,) = load_records(run_dir)
    assert record.agent == "human"
    assert record.steps[0].thought == "the note may hold a code"
    assert record.steps[1].info["path"] == "P1_B"
    assert record.steps[2].info["forbidden"] is True


def test_ctrl_d_records_the_episode_and_the_same_command_plays_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def ctrl_d(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", ctrl_d)
    args = ["escape", "play", str(CELL), "--attempts", "1", "--runs-dir", str(tmp_path)]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "stopped early: input ended before the scenario did; 0 steps played" in out
    assert err == "", "no traceback, no log line"
    run_dir = next(tmp_path.iterdir())
    (record,) = load_records(run_dir)
    assert record.status == "error"
    assert record.error == "HumanInputEnded: input ended before the scenario did"

    lines = iter(["click(note)"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert "1 step played" in out, "the stopped play is played again, not skipped"
    (record,) = load_records(run_dir)
    assert [s.action for s in record.steps] == ["click(note)"]


def test_play_refuses_an_unknown_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["escape", "play", "moon_base", "--runs-dir", str(tmp_path)], capsys)
    assert code == 2 and "moon_base" in err


def test_agreement_table_against_a_judged_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        [
            "run",
            "escape",
            "--agent",
            "redna",
            "--model",
            "scripted/escape-explorer",
            "--instances",
            "zombie_lab",
            "-b",
            "attempts=1",
            "--role",
            "judge=scripted/escape-judge",
            "--runs-dir",
            str(tmp_path),
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0, err
    run_dir = next(tmp_path.iterdir())
    (record,) = load_records(run_dir)
    judged = [s for s in record.steps if "judge" in s.info and "missing" not in s.info["judge"]]
    assert len(judged) >= 3
    human = tmp_path / "human.jsonl"
    with human.open("w") as f:
        for i, step in enumerate(judged):
            scores = {c: max(1, min(5, step.info["judge"][c] + (i % 3) - 1)) for c in
                      ("originality", "elaboration", "groundedness")}  # fmt: skip
            item = {"instance_id": "zombie_lab", "attempt": 0, "step": step.info["t"], **scores}
            f.write(json.dumps(item) + "\n")
    code, out, err = run_cli(["escape", "agreement", str(human), str(run_dir), "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[0]["Criterion"] == "Overall"
    assert rows[0]["n"] == 3 * len(judged)


def test_agreement_refuses_a_directory_that_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human = tmp_path / "h.jsonl"
    human.write_text("")
    code, _, err = run_cli(["escape", "agreement", str(human), str(tmp_path)], capsys)
    assert code == 2 and "not a run" in err
