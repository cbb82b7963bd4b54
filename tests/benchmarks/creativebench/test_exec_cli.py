"""`forkingpaths creativebench exec`: the verdict, the exit status and bad input."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.creativebench.sandbox import sandbox_python

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

SOLUTION = "def add(x, y):\n    return x + y\n"
TESTS = "def test():\n    assert add(2, 3) == 5, 'sum'\n\nif __name__ == '__main__':\n    test()\n"


def _files(tmp_path: Path, solution: str = SOLUTION, tests: str = TESTS) -> tuple[Path, Path]:
    solution_file, tests_file = tmp_path / "solution.py", tmp_path / "tests.py"
    solution_file.write_text(solution, encoding="utf-8")
    tests_file.write_text(tests, encoding="utf-8")
    return solution_file, tests_file


def test_a_pass_exits_0_and_says_the_tests_were_appended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solution, tests = _files(tmp_path)
    code, out, err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(tests)], capsys
    )
    assert code == 0, err
    verdict, appended = out.splitlines()
    assert re.fullmatch(r"PASSED \((bwrap|namespaces|rlimits), \d+\.\d{3} s\)", verdict)
    assert appended == (
        f"ran {solution} with {tests} appended to it, as one program (__main__), under "
        f"{sandbox_python()}"
    )


@pytest.mark.parametrize(
    ("solution", "tests", "verdict"),
    [
        ("def add(x, y):\n    return x - y\n", TESTS, "WRONG_ANSWER"),
        ("def add(x, y):\n    return 1 / 0\n", TESTS, "RUNTIME_ERROR"),
        ("def add(x, y:\n", TESTS, "SYNTAX_ERROR"),
        (SOLUTION, "import sys\nsys.exit(0)\n" + TESTS, "RUNTIME_ERROR"),
    ],
)
def test_any_other_verdict_exits_1(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    solution: str,
    tests: str,
    verdict: str,
) -> None:
    solution_file, tests_file = _files(tmp_path, solution, tests)
    args = ["creativebench", "exec", str(solution_file), "--tests", str(tests_file)]
    code, out, _err = run_cli(args, capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{verdict} (")
    assert lines[1] == (
        f"ran {solution_file} with {tests_file} appended to it, as one program (__main__), "
        f"under {sandbox_python()}"
    )
    code, out, _err = run_cli([*args, "--json"], capsys)
    assert code == 1
    assert json.loads(out)["verdict"] == verdict


def test_a_time_limit_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    solution, tests = _files(tmp_path, "import time\ntime.sleep(30)\n", "")
    code, out, _err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(tests), "--timeout", "1"], capsys
    )
    assert code == 1
    assert out.startswith("TIME_LIMIT_EXCEEDED (")


def test_the_json_of_a_pass_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    solution, tests = _files(tmp_path)
    code, out, err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(tests), "--json"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["verdict"] == "PASSED"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--timeout", "0"], "--timeout: expected seconds > 0, got 0.0"),
        (["--timeout", "-1"], "--timeout: expected seconds > 0, got -1.0"),
        (["--timeout", "nan"], "--timeout: expected seconds > 0, got nan"),
        (["--timeout", "inf"], "--timeout: expected seconds > 0, got inf"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    solution, tests = _files(tmp_path)
    code, out, err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(tests), *extra], capsys
    )
    assert (code, out, err) == (2, "", f"error: {message}\n")


def test_bad_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    solution, tests = _files(tmp_path)
    missing = tmp_path / "missing.py"
    code, out, err = run_cli(["creativebench", "exec", str(missing), "--tests", str(tests)], capsys)
    assert (code, out, err) == (2, "", f"error: {missing}: no such file\n")
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00")
    code, out, err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(binary)], capsys
    )
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {binary}: tests file unreadable: ")
    assert len(err.splitlines()) == 1
