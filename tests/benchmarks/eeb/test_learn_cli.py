"""`eeb learn --max-steps` caps every episode of Agent-ExpVer's rounds (a short real-model run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli


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
