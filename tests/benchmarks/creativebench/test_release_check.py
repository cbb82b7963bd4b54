"""Release rows against their own tests (`import --check`): the sandbox interpreter and limits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.benchmarks.creativebench.sandbox import sandbox_python

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "release_check.jsonl"
"""Three rows in the release's format: two of problem_901 (stdlib), one of problem_902 whose
reference takes 1400 MiB of address space (as the release's problem_152 L4-L6 take ~1.3 GB)."""
NUMPY_SAMPLE = FIXTURES / "release_check_numpy.jsonl"
"""One row importing pytest and calling numpy's `reshape(newshape=...)` (gone in numpy 2.4)."""


def test_the_sample_passes_under_the_default_limits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(
        ["creativebench", "import", "--check", "--python", sys.executable, str(SAMPLE), "--json"],
        capsys,
    )
    assert code == 0, err
    check = json.loads(out)["check"]
    assert {k: check[k] for k in ("kind", "rows", "passed", "failed", "refused")} == {
        "kind": "explore",
        "rows": 3,
        "passed": 3,
        "failed": [],
        "refused": [],
    }
    assert (check["python"], check["memory_mb"], check["timeout_s"]) == (sys.executable, 2048, 10)


def test_the_big_row_fails_under_1024_mb_and_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["creativebench", "import", "--check", "--memory-mb", "1024", "--python"]
    code, out, _err = run_cli([*args, sys.executable, str(SAMPLE)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "explore: 3 valid row(s)"
    assert lines[1].startswith("2 of 3 reference solutions pass their tests (")
    assert lines[1].endswith(", 10 s, 1024 MB)")
    assert lines[2] == "fails: problem_902_L0: MEMORY_LIMIT_EXCEEDED: MemoryError"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--memory-mb", "10"], "--memory-mb: expected a whole number >= 64, got 10"),
        (["--timeout", "0"], "--timeout: expected seconds > 0, got 0.0"),
        (["--python", "/no/such/python"], "does not exist"),
    ],
)
def test_bad_limits_and_interpreters_get_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _out, err = run_cli(["creativebench", "import", "--check", *args, str(SAMPLE)], capsys)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_the_benchmark_options_name_the_interpreter_and_memory(tmp_path: Path) -> None:
    bench = CreativeBenchmark(sandbox_python=sys.executable, memory_mb=1536)
    assert (bench.services.python, bench.services.memory_mb) == (sys.executable, 1536)
    assert CreativeBenchmark().services.memory_mb == 2048
    assert CreativeBenchmark().services.python == sandbox_python()
    folder = tmp_path / "python"
    folder.mkdir()
    with pytest.raises(Exception, match="is not an executable file"):
        CreativeBenchmark(sandbox_python=str(folder))


def _has_paper_packages(python: str) -> bool:
    probe = (
        "import numpy, pytest, inspect; assert 'newshape' in str(inspect.signature(numpy.reshape))"
    )
    return subprocess.run([python, "-c", probe], capture_output=True, check=False).returncode == 0


def test_a_numpy_and_pytest_row_passes_under_the_sandbox_interpreter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    python = sandbox_python()
    if not _has_paper_packages(python):
        pytest.skip(f"{python} lacks pytest or a numpy < 2.4 (make sandbox builds one)")
    code, out, err = run_cli(["creativebench", "import", "--check", str(NUMPY_SAMPLE)], capsys)
    assert code == 0, err
    assert out.splitlines()[1].startswith("1 of 1 reference solutions pass their tests (")
