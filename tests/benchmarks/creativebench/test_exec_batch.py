"""`forkingpaths creativebench exec --batch`: every row's verdict, in order, through one warm
pool, equal to one `exec` per row; and every bad row refused in one line before anything runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.creativebench.batch import exec_batch, read_batch
from forkingpaths.benchmarks.creativebench.sandbox import Sandbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

TESTS = "assert add(2, 3) == 5, 'sum'\n"
CASES = [
    ("ok", "def add(x, y):\n    return x + y\n", TESTS, None, "PASSED"),
    ("wrong", "def add(x, y):\n    return x - y\n", TESTS, None, "WRONG_ANSWER"),
    ("crash", "def add(x, y):\n    return 1 / 0\n", TESTS, None, "RUNTIME_ERROR"),
    ("syntax", "def add(x, y:\n", TESTS, None, "SYNTAX_ERROR"),
    ("slow", "import time\ntime.sleep(5)\n", "pass\n", 0.5, "TIME_LIMIT_EXCEEDED"),
]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(repeat: int = 1) -> list[dict[str, Any]]:
    rows = []
    for n in range(repeat):
        for name, solution, tests, timeout, _ in CASES:
            row: dict[str, Any] = {"id": f"{name}-{n}", "solution": solution, "tests": tests}
            if timeout is not None:
                row["timeout"] = timeout
            rows.append(row)
    return rows


def test_verdicts_come_in_file_order_and_equal_one_exec_per_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = _write(tmp_path / "rows.jsonl", _rows(repeat=4))  # 20 rows, more than the window
    code, out, err = run_cli(
        ["creativebench", "exec", "--batch", str(batch), "--workers", "1"], capsys
    )
    assert code == 0, err
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert [v["line"] for v in verdicts] == list(range(1, 21))
    assert [v["id"] for v in verdicts] == [r["id"] for r in _rows(repeat=4)]
    assert [v["verdict"] for v in verdicts] == [c[-1] for c in CASES] * 4
    assert "20 rows: 4 PASSED, 4 RUNTIME_ERROR, 4 SYNTAX_ERROR, 4 TIME_LIMIT_EXCEEDED" in err

    # The same rows one `exec` at a time give the same verdicts.
    for name, solution, tests, timeout, verdict in CASES:
        (tmp_path / "s.py").write_text(solution)
        (tmp_path / "t.py").write_text(tests)
        args = ["creativebench", "exec", str(tmp_path / "s.py"), "--tests", str(tmp_path / "t.py")]
        code, out, _ = run_cli(
            [*args, "--json", *(["--timeout", str(timeout)] if timeout else [])], capsys
        )
        assert json.loads(out)["verdict"] == verdict, name


def test_out_writes_the_verdicts_to_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = _write(tmp_path / "rows.jsonl", _rows()[:2])
    target = tmp_path / "verdicts.jsonl"
    code, out, err = run_cli(
        ["creativebench", "exec", "--batch", str(batch), "--out", str(target)], capsys
    )
    assert code == 0, err
    assert out == ""
    assert [json.loads(x)["verdict"] for x in target.read_text().splitlines()] == [
        "PASSED",
        "WRONG_ANSWER",
    ]
    assert f"verdicts in {target}" in err


async def test_exec_batch_streams_each_verdict_once_its_predecessors_are_done(
    tmp_path: Path,
) -> None:
    rows = read_batch(_write(tmp_path / "rows.jsonl", _rows(repeat=3)))
    seen: list[int] = []
    async with Sandbox(workers=2) as sandbox:
        counts = await exec_batch(rows, sandbox, lambda v: seen.append(v["line"]))
    assert seen == list(range(1, 16))
    assert counts == {
        "PASSED": 3,
        "WRONG_ANSWER": 3,
        "RUNTIME_ERROR": 3,
        "SYNTAX_ERROR": 3,
        "TIME_LIMIT_EXCEEDED": 3,
    }


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"solution": "x"\n', "rows.jsonl:1: not valid JSON"),
        ("[1, 2]\n", "rows.jsonl:1: expected a JSON object, got [1, 2]"),
        ('{"tests": "pass"}\n', "rows.jsonl:1: field 'solution': expected a string, got missing"),
        (
            '{"solution": "x", "tests": 12}\n',
            "rows.jsonl:1: field 'tests': expected a string, got 12",
        ),
        ('{"solution": "x", "tests": "y", "test": 1}\n', "unknown field 'test'; allowed: id"),
        (
            '{"solution": "x", "tests": "y", "timeout": -1}\n',
            "field 'timeout': expected seconds > 0",
        ),
        ('{"solution": "x", "tests": "y", "timeout": true}\n', "field 'timeout'"),
        (
            '\n{"solution": "x", "tests": "y"}\n{"solution": 3, "tests": "y"}\n',
            "rows.jsonl:3: field 'solution'",
        ),
        ("\n\n", "no rows"),
    ],
)
def test_a_bad_row_is_refused_in_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    batch = tmp_path / "rows.jsonl"
    batch.write_text(content, encoding="utf-8")
    target = tmp_path / "verdicts.jsonl"
    code, _out, err = run_cli(
        ["creativebench", "exec", "--batch", str(batch), "--out", str(target)], capsys
    )
    assert code == 2
    assert needle in " ".join(err.split()), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not target.exists()


def test_bad_combinations_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write(tmp_path / "rows.jsonl", _rows()[:1])
    (tmp_path / "s.py").write_text("x = 1\n")
    cases = {
        "--batch: no file": ["--batch", str(tmp_path / "absent.jsonl")],
        "not both": ["--batch", str(batch), str(tmp_path / "s.py")],
        "--out and --workers go with --batch": [
            str(tmp_path / "s.py"),
            "--tests",
            str(tmp_path / "s.py"),
            "--workers",
            "2",
        ],
        "--workers: expected a whole number >= 1": ["--batch", str(batch), "--workers", "0"],
        "is the batch file itself": ["--batch", str(batch), "--out", str(batch)],
        "give SOLUTION and --tests": [],
    }
    for needle, args in cases.items():
        code, _out, err = run_cli(["creativebench", "exec", *args], capsys)
        assert code == 2, needle
        assert needle in " ".join(err.split()), (needle, err)
        assert "Traceback" not in err
    assert json.loads(batch.read_text().splitlines()[0])["id"] == "ok-0"  # left as it was
