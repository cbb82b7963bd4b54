"""What the sandbox tests share: a started sandbox, time-limit verdicts, processes, private tmp."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from forkingpaths.benchmarks.creativebench import sandbox_worker
from forkingpaths.benchmarks.creativebench.sandbox import (
    ExecResult,
    Limits,
    Sandbox,
    SandboxUnavailable,
    Verdict,
)


async def started(isolation: str, *, limits: Limits, workers: int = 1) -> Sandbox:
    """A started Sandbox at `isolation` running this interpreter; the test is skipped where
    that level cannot start."""
    if isolation == "bwrap" and not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    sandbox = Sandbox(python=sys.executable, workers=workers, limits=limits, isolation=isolation)
    try:
        await sandbox.start()
    except SandboxUnavailable as exc:
        await sandbox.aclose()
        pytest.skip(f"isolation {isolation} unavailable here: {exc}")
    return sandbox


def time_limit_details(limits: Limits) -> set[str]:
    """Every `detail` of a job stopped by its wall-clock or its CPU-time limit (SIGXCPU at the
    soft limit, SIGKILL at the hard one). A job over both limits may be stopped by either: on a
    busy machine it gets less than a core, and its CPU time falls behind the wall clock."""
    return {
        f"wall-clock limit of {limits.wall_s} s exceeded",
        f"CPU-time limit of {limits.cpu_s} s exceeded (SIGXCPU)",
        f"CPU-time limit of {limits.cpu_s} s exceeded (SIGKILL)",
    }


def assert_stopped_by_a_time_limit(result: ExecResult, limits: Limits) -> None:
    """The job was killed by one of its time limits (whichever came first) and never got to
    print anything."""
    assert result.verdict == Verdict.TIME_LIMIT_EXCEEDED, result
    assert result.detail in time_limit_details(limits), result
    assert result.stdout_tail == "", result


def descendants(root: int) -> set[int]:
    """Every live process below `root` (workers, launchers, and anything a job left behind)."""
    table = sandbox_worker._process_table()
    parents = {pid: ppid for pid, (ppid, state) in table.items() if state != "Z"}
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def private_shared_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[str, ...]:
    """Stand-ins for the host's /tmp, /var/tmp and /dev/shm (world-writable, sticky) that a
    `_WorkerState` made in this test watches, scans and makes its base directory in, so that
    what other processes do in the host's /tmp never reaches the test's assertions."""
    dirs = []
    for name in ("tmp", "var-tmp", "dev-shm"):
        directory = tmp_path / name
        directory.mkdir()
        directory.chmod(0o1777)
        dirs.append(str(directory))
    monkeypatch.setattr(sandbox_worker, "PRIVATE_DIRS", tuple(dirs))
    monkeypatch.setenv("TMPDIR", dirs[0])
    return tuple(dirs)
