"""`forkingpaths turtlesoup import`: a file with no puzzle to import is a failure (exit 2, one
line); a file whose puzzles load exits 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

RELEASE = Path(__file__).parent / "fixtures" / "release"


def test_a_file_with_nothing_to_import_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"story": "no puzzle here"}\n')
    out_file = tmp_path / "out.yaml"
    code, out, err = run_cli(["turtlesoup", "import", str(bad), "--out", str(out_file)], capsys)
    assert code == 2
    assert out == ""
    assert err.strip().splitlines() == [
        f"error: no puzzle imported: {bad}: unsupported file: expected *.yaml (ours), "
        "stories.json or a category *.json"
    ]
    assert not out_file.exists(), "nothing written"


def test_json_report_of_nothing_imported_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run_cli(["turtlesoup", "import", str(empty), "--json"], capsys)
    assert code == 2
    report = json.loads(out)
    assert (report["instances"], report["puzzles"]) == (0, 0) and len(report["errors"]) == 1


def test_importable_puzzles_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["turtlesoup", "import", str(RELEASE)], capsys)
    assert code == 0, err
    # Instances are puzzle x language: the fixture's 3 stories in both languages.
    assert out.splitlines()[:3] == [
        "6 instances: 3 puzzles x en, zh",
        "  crime_thriller: 4 instances (2 puzzles)",
        "  supernatural: 2 instances (1 puzzle)",
    ]
