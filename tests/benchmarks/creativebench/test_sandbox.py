"""The sandbox: verdicts, limits, environment, working directory, output, the warm pool, helpers."""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import json
import logging
import marshal
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from tests.benchmarks.creativebench.sandbox_helpers import (
    assert_stopped_by_a_time_limit,
    descendants,
    private_shared_tmp,
    started,
)

from forkingpaths.benchmarks.creativebench import sandbox_worker
from forkingpaths.benchmarks.creativebench.sandbox import (
    RESPONSE_GRACE_S,
    ExecResult,
    Limits,
    Sandbox,
    SandboxUnavailable,
    Verdict,
    exec_json,
    program_text,
    run_once,
    sandbox_python,
    strip_main_guard,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

UNUSED_UID = 1_999_999_999
"""A uid no file here belongs to."""

FAST = Limits(wall_s=3.0, cpu_s=2.0, memory_mb=512)
CPU_BOUND = Limits(wall_s=60.0, cpu_s=1.0, memory_mb=512)
"""A CPU-time limit far below the wall-clock limit: a busy loop meets the CPU limit (1 s, the hard
one at 2 s) first unless the machine gives it less than a thirtieth of a core: no race."""
ROOT = os.geteuid() == 0
ALLOWED_ENV = {
    "PATH",
    "HOME",
    "LANG",
    "TMPDIR",
    "PYTHONHASHSEED",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
}


def make(isolation: str = "auto", **kwargs) -> Sandbox:
    kwargs.setdefault("limits", FAST)
    kwargs.setdefault("workers", 1)
    return Sandbox(python=sys.executable, isolation=isolation, **kwargs)


VERDICT_CASES = [
    ("print('hello')", Verdict.PASSED, ""),
    (
        "def f(x):\n    return x + 1\n\nassert f(1) == 3, 'f(1) should be 3'",
        Verdict.WRONG_ANSWER,
        "line 4: assert f(1) == 3, 'f(1) should be 3' -- f(1) should be 3",
    ),
    ("assert False", Verdict.WRONG_ANSWER, "line 1: assert False"),
    ("def f(:\n    pass", Verdict.SYNTAX_ERROR, "SyntaxError"),
    ("if True:\nprint(1)", Verdict.SYNTAX_ERROR, "IndentationError"),
    ("x = 1\0", Verdict.SYNTAX_ERROR, "null bytes"),
    ("1 / 0", Verdict.RUNTIME_ERROR, "ZeroDivisionError"),
    ("raise KeyError('k')", Verdict.RUNTIME_ERROR, "KeyError"),
    ("import sys\nsys.exit(2)", Verdict.RUNTIME_ERROR, "SystemExit(2)"),
    ("import sys\nsys.exit('bye')", Verdict.RUNTIME_ERROR, "SystemExit('bye')"),
    ("import sys\nsys.exit(0)", Verdict.RUNTIME_ERROR, "exited before the tests finished"),
    ("raise SystemExit", Verdict.RUNTIME_ERROR, "exited before the tests finished (SystemExit"),
    ("import os\nos._exit(0)", Verdict.RUNTIME_ERROR, "exited before the tests finished"),
    ("import os\nos._exit(5)", Verdict.RUNTIME_ERROR, "exit status 5"),
    ("x = bytearray(8 * 1024 ** 3)", Verdict.MEMORY_LIMIT_EXCEEDED, "MemoryError"),
    ("x = []\nwhile True:\n    x.append(bytearray(10 ** 7))", Verdict.MEMORY_LIMIT_EXCEEDED, ""),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", Verdict.RUNTIME_ERROR, "SIGSEGV"),
]


@pytest.mark.parametrize("isolation", ["auto", "bwrap", "namespaces", "rlimits"])
async def test_verdicts(isolation: str) -> None:
    async with await started(isolation, limits=FAST) as sandbox:
        workers = descendants(os.getpid())
        for program, verdict, detail in VERDICT_CASES:
            result = await sandbox.run(program, "")
            assert result.verdict == verdict, (program, result)
            assert detail in result.detail, (program, result.detail)
            assert result.isolation == sandbox.isolation
            if isolation != "auto":
                assert result.isolation == isolation
        # The time limits, at 1 s each (`timeout`): asleep it uses no CPU time, so only the wall
        # clock can stop it; a busy loop may meet either limit first (a race on a busy machine).
        slept = await sandbox.run("import time\ntime.sleep(60)", "", timeout=1.0)
        spun = await sandbox.run("while True:\n    pass\nprint('finished')", "", timeout=1.0)
        assert descendants(os.getpid()) == workers  # nothing a job started is left
    assert (slept.verdict, slept.detail) == (
        Verdict.TIME_LIMIT_EXCEEDED,
        "wall-clock limit of 1.0 s exceeded",
    )
    assert_stopped_by_a_time_limit(spun, Limits(wall_s=1.0, cpu_s=1.0))


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["bwrap", "namespaces", "rlimits"])
async def test_the_cpu_time_limit_stops_a_busy_loop(isolation: str) -> None:
    async with await started(isolation, limits=CPU_BOUND) as sandbox:
        spun = await sandbox.run("while True:\n    pass\n", "")
        # A program that ignores SIGXCPU meets the hard limit, a second later: SIGKILL.
        deaf = await sandbox.run(
            "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n",
            "",
        )
    assert (spun.verdict, spun.detail) == (
        Verdict.TIME_LIMIT_EXCEEDED,
        "CPU-time limit of 1.0 s exceeded (SIGXCPU)",
    )
    assert (deaf.verdict, deaf.detail) == (
        Verdict.TIME_LIMIT_EXCEEDED,
        "CPU-time limit of 1.0 s exceeded (SIGKILL)",
    )


RLIMITS_PROBE = (
    "import resource\n"
    "for name in ('CPU', 'AS', 'FSIZE', 'NPROC', 'CORE'):\n"
    "    print(name, *resource.getrlimit(getattr(resource, 'RLIMIT_' + name)))\n"
)


@pytest.mark.parametrize("isolation", ["bwrap", "namespaces", "rlimits"])
async def test_a_job_runs_under_its_limits(isolation: str) -> None:
    async with await started(isolation, limits=FAST) as sandbox:
        result = await sandbox.run(RLIMITS_PROBE, "")
    assert result.verdict == Verdict.PASSED, result.detail
    limits = dict(line.split(" ", 1) for line in result.stdout_tail.splitlines())
    nproc = limits.pop("NPROC")
    assert limits == {
        "CPU": "2 3",  # SIGXCPU at the soft limit (cpu_s rounded up), SIGKILL a second later
        "AS": f"{512 << 20} {512 << 20}",
        "FSIZE": f"{16 << 20} {16 << 20}",
        "CORE": "0 0",
    }
    if ROOT:  # the job has a uid of its own: the limit counts only its processes
        assert nproc == "32 32"
    else:  # the job shares the count with this user's other threads
        soft, hard = map(int, nproc.split())
        assert soft == hard >= 32


async def test_source_and_tests_run_as_main() -> None:
    source = "def add(a, b):\n    return a + b\n"
    tests = (
        "def test():\n    assert add(2, 3) == 5\n    print('tests ran', __name__)\n\n"
        "if __name__ == '__main__':\n    test()\n"
    )
    async with make() as sandbox:
        result = await sandbox.run(source, tests)
        failing = await sandbox.run(source, tests.replace("== 5", "== 6"))
    assert result.verdict == Verdict.PASSED
    assert result.stdout_tail == "tests ran __main__\n"
    assert program_text(source, tests) == source + "\n\n" + tests
    assert failing.verdict == Verdict.WRONG_ANSWER
    assert failing.detail.startswith("line 6: assert add(2, 3) == 6")


def test_the_solution_main_guard_is_stripped() -> None:
    source = (
        "import sys\n\ndef add(a, b):\n    return a + b\n\n"
        "if __name__ == '__main__':\n    print(add(1, 2))\n    sys.exit(0)\n"
        "elif True:\n    pass\n\n"
        "if '__main__' == __name__: raise SystemExit(add(0, 0))\n"
        "def after():\n    return 1\n"
    )
    tests = "if __name__ == '__main__':\n    assert add(2, 3) == 5\n"
    stripped = strip_main_guard(source)
    assert stripped == (
        "import sys\n\ndef add(a, b):\n    return a + b\n\n\n\n\n\n\n\n\n"
        "def after():\n    return 1\n"
    )
    assert len(stripped.splitlines()) == len(source.splitlines())  # line numbers hold
    assert program_text(source, tests) == stripped + "\n\n" + tests  # the tests keep theirs
    for unchanged in ("def f(:\n", "x = 1\n", "if __name__ != '__main__':\n    pass\n"):
        assert strip_main_guard(unchanged) == unchanged


async def test_a_stripped_guard_leaves_the_tests_to_decide() -> None:
    source = "def f():\n    return 1\n\nif __name__ == '__main__':\n    raise SystemExit(0)\n"
    async with make() as sandbox:
        failing = await sandbox.run(source, "assert f() == 2, 'tests ran'\n")
        passing = await sandbox.run(source, "assert f() == 1\nprint('tests ran')\n")
    assert (failing.verdict, failing.detail) == (
        Verdict.WRONG_ANSWER,
        "line 8: assert f() == 2, 'tests ran' -- tests ran",
    )
    assert (passing.verdict, passing.stdout_tail) == (Verdict.PASSED, "tests ran\n")


async def test_dataclasses_and_pickle_see_a_real_main_module() -> None:
    program = (
        "import dataclasses, pickle, sys\n"
        "@dataclasses.dataclass\nclass P:\n    x: int\n"
        "assert pickle.loads(pickle.dumps(P(3))) == P(3)\n"
        "assert sys.modules['__main__'].P is P\n"
        "print(sys.argv[0].endswith('main.py'))\n"
    )
    async with make() as sandbox:
        result = await sandbox.run(program, "")
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "True\n")


async def test_environment_is_stripped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-secret-for-tests")
    program = "import json, os\nprint(json.dumps(dict(os.environ)))"
    async with make() as sandbox:
        result = await sandbox.run(program, "")
    env = json.loads(result.stdout_tail)
    assert set(env) <= ALLOWED_ENV
    assert env["PYTHONHASHSEED"] == "0"
    assert env["HOME"] == env["TMPDIR"]
    assert "sk-fake-secret-for-tests" not in result.stdout_tail


@pytest.mark.parametrize("isolation", ["auto", "rlimits"])
async def test_private_working_directory_is_fresh_and_removed(isolation: str) -> None:
    first = "import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())\nprint(os.listdir())"
    second = "import os\nprint(sorted(os.listdir()))"
    async with make(isolation) as sandbox:
        one = await sandbox.run(first, "")
        two = await sandbox.run(second, "")
    cwd = one.stdout_tail.splitlines()[0]
    assert one.verdict == Verdict.PASSED
    assert two.stdout_tail == "['main.py']\n"
    if isolation == "rlimits":  # the directory is on the real filesystem: it must be gone
        assert not Path(cwd).exists()


async def test_output_is_captured_and_truncated_to_its_tail() -> None:
    limits = Limits(wall_s=3.0, cpu_s=2.0, output_bytes=1000)
    program = (
        "import sys\nfor i in range(5000):\n    print(i)\n"
        "print('to stderr', file=sys.stderr)\nprint('ünïcode ✓')"
    )
    async with make(limits=limits) as sandbox:
        result = await sandbox.run(program, "")
    assert result.verdict == Verdict.PASSED
    assert len(result.stdout_tail.encode()) <= 1000
    assert result.stdout_tail.endswith("4999\nünïcode ✓\n")
    assert result.stderr_tail == "to stderr\n"


async def test_timeout_replaces_the_wall_and_cpu_limits() -> None:
    async with make(limits=Limits(wall_s=30.0, cpu_s=30.0)) as sandbox:
        slept = await sandbox.run("import time\ntime.sleep(30)", "", timeout=0.5)
        spun = await sandbox.run("while True:\n    pass", "", timeout=1)
        with pytest.raises(ConfigError, match="timeout"):
            await sandbox.run("pass", "", timeout=0)
    assert (slept.verdict, slept.detail) == (
        Verdict.TIME_LIMIT_EXCEEDED,
        "wall-clock limit of 0.5 s exceeded",  # asleep: only the wall clock can stop it
    )
    assert_stopped_by_a_time_limit(spun, Limits(wall_s=1.0, cpu_s=1.0))


async def test_weaker_isolation_is_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="forkingpaths.benchmarks.creativebench.sandbox"):
        async with make("rlimits", workers=2) as sandbox:
            results = [await sandbox.run("pass", "") for _ in range(3)]
    warnings = [r for r in caplog.records if "weaker than bwrap" in r.getMessage()]
    assert len(warnings) == 1
    assert "'rlimits'" in warnings[0].getMessage()
    assert {r.isolation for r in results} == {"rlimits"}


async def test_jobs_run_in_parallel_across_workers() -> None:
    async with make(workers=3) as sandbox:
        results = await asyncio.gather(*(sandbox.run(f"print({i} * {i})", "") for i in range(12)))
        assert len({w.proc.pid for w in sandbox._pool if w.proc is not None}) == 3
    assert [r.stdout_tail for r in results] == [f"{i * i}\n" for i in range(12)]


async def test_a_killed_worker_is_replaced() -> None:
    async with make(workers=1) as sandbox:
        await sandbox.run("pass", "")
        worker = sandbox._pool[0]
        assert worker.proc is not None
        os.killpg(worker.proc.pid, signal.SIGKILL)
        await worker.proc.wait()
        result = await sandbox.run("print('still here')", "")
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "still here\n")


async def test_a_cancelled_run_does_not_leak_into_the_next() -> None:
    async with make(workers=1) as sandbox:
        task = asyncio.create_task(sandbox.run("import time\ntime.sleep(20)\nprint('old')", ""))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        result = await sandbox.run("print('new')", "")
    assert result.stdout_tail == "new\n"


async def test_aclose_stops_every_worker() -> None:
    sandbox = make(workers=2)
    await sandbox.run("pass", "")
    pids = [w.proc.pid for w in sandbox._pool if w.proc is not None]
    await sandbox.aclose()
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)
    with pytest.raises(SandboxUnavailable):
        await sandbox.run("pass", "")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_run_once_is_synchronous() -> None:
    result = run_once("x = 2", "assert x * 3 == 6\nprint('ok')", python=sys.executable)
    assert isinstance(result, ExecResult)
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "ok\n")


def test_exec_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_SANDBOX_PYTHON", sys.executable)
    solution, tests = tmp_path / "solution.py", tmp_path / "tests.py"
    solution.write_text("def sq(x):\n    return x * x\n")
    tests.write_text("assert sq(3) == 9\nprint('fine')\n")
    result = exec_json(solution, tests, 5.0)
    assert set(result) == {
        "verdict",
        "isolation",
        "duration_s",
        "stdout_tail",
        "stderr_tail",
        "python",
    }
    assert (result["verdict"], result["stdout_tail"]) == ("PASSED", "fine\n")
    assert result["python"] == sys.executable
    json.dumps(result)
    with pytest.raises(InvalidFile, match=r"missing\.py"):
        exec_json(tmp_path / "missing.py", tests, None)


def test_sandbox_python_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_SANDBOX_PYTHON", "/opt/some/python")
    assert sandbox_python() == "/opt/some/python"
    monkeypatch.delenv("FORKINGPATHS_SANDBOX_PYTHON")
    monkeypatch.chdir(tmp_path)
    venv_python = tmp_path / ".sandbox-venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    assert sandbox_python() == str(venv_python)


def test_arguments_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="isolation"):
        Sandbox(python=sys.executable, isolation="docker")
    with pytest.raises(ConfigError, match="workers"):
        Sandbox(python=sys.executable, workers=0)
    with pytest.raises(ConfigError, match="does not exist"):
        Sandbox(python=str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match=r"Limits\.wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ConfigError, match=r"Limits\.memory_mb"):
        Limits(memory_mb=10)
    with pytest.raises(ConfigError, match=r"Limits\.nproc"):
        Limits(nproc=1.5)


async def test_a_broken_interpreter_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="rlimits"):
        async with Sandbox(python=str(fake), isolation="rlimits", workers=1):
            pass


@pytest.mark.skipif(importlib.util.find_spec("numpy") is None, reason="numpy not installed")
async def test_numpy_imports_under_the_memory_limit() -> None:
    async with make() as sandbox:
        result = await sandbox.run("import numpy as np\nprint(int(np.arange(10).sum()))", "")
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "45\n")


def test_to_json_has_the_contract_fields() -> None:
    result = ExecResult(Verdict.WRONG_ANSWER, "rlimits", 0.5, "out", "err", "line 3: assert x")
    assert result.to_json() == {
        "verdict": "WRONG_ANSWER",
        "isolation": "rlimits",
        "duration_s": 0.5,
        "stdout_tail": "out",
        "stderr_tail": "err",
        "python": "",
    }


JOB = {"wall_s": 2, "cpu_s": 1, "memory_mb": 256, "file_mb": 4}


def _signalled(sig: int) -> int:
    return sig  # a wait status for "killed by sig" (no core dump)


def _exited(code: int) -> int:
    return code << 8


@pytest.mark.parametrize(
    ("status", "timed_out", "report", "stderr", "verdict"),
    [
        (_exited(0), False, {"kind": "done"}, "", "PASSED"),
        (_exited(0), False, {}, "", "RUNTIME_ERROR"),
        (_exited(0), False, {"kind": "exit", "detail": "SystemExit(0)"}, "", "RUNTIME_ERROR"),
        (_exited(0), False, {"kind": "assertion", "detail": "line 2"}, "", "WRONG_ANSWER"),
        (_exited(3), False, {"kind": "done"}, "", "RUNTIME_ERROR"),
        (
            _exited(1),
            False,
            {"kind": "assertion", "detail": "line 2: assert x"},
            "",
            "WRONG_ANSWER",
        ),
        (_exited(1), False, {"kind": "syntax", "detail": "SyntaxError"}, "", "SYNTAX_ERROR"),
        (_exited(1), False, {"kind": "memory"}, "", "MEMORY_LIMIT_EXCEEDED"),
        (_exited(1), False, {"kind": "exception", "detail": "ValueError"}, "", "RUNTIME_ERROR"),
        (_exited(3), False, {}, "", "RUNTIME_ERROR"),
        (_signalled(signal.SIGKILL), True, {}, "", "TIME_LIMIT_EXCEEDED"),
        (_signalled(signal.SIGXCPU), False, {}, "", "TIME_LIMIT_EXCEEDED"),
        (_signalled(signal.SIGXFSZ), False, {}, "", "RUNTIME_ERROR"),
        (_signalled(signal.SIGSEGV), False, {}, "MemoryError\n", "MEMORY_LIMIT_EXCEEDED"),
        (_signalled(signal.SIGABRT), False, {}, "std::bad_alloc", "MEMORY_LIMIT_EXCEEDED"),
        (_signalled(signal.SIGSEGV), False, {}, "Fatal Python error", "RUNTIME_ERROR"),
    ],
)
def test_classify(status: int, timed_out: bool, report: dict, stderr: str, verdict: str) -> None:
    got, detail = sandbox_worker.classify(status, None, timed_out, report, stderr, JOB)
    assert got == verdict
    assert Verdict(got)
    if status == 0 and report.get("kind") in (None, "exit"):
        assert "exited before the tests finished" in detail
    cold, _ = sandbox_worker.classify(_exited(0), None, False, {}, "", {**JOB, "cold": True})
    assert cold == "PASSED"  # a fresh interpreter (the benchmark's baseline) has no harness


def test_only_a_report_with_the_nonce_is_trusted() -> None:
    nonce = "ab" * 16
    data = (
        b'\n{"kind": "done"}\n{"kind": "exception", "detail": "real", "nonce": "'
        + nonce.encode()
        + b'"}\n{"kind": "done", "nonce": "00"}\nnot json\n'
    )
    assert sandbox_worker._trusted_report(data, nonce) == {
        "kind": "exception",
        "detail": "real",
        "nonce": nonce,
    }
    assert sandbox_worker._trusted_report(data, "cd" * 16) == {}


async def test_a_job_that_fails_in_the_worker_is_a_runtime_error() -> None:
    async with make() as sandbox:
        await sandbox.run("pass", "")
        worker = sandbox._pool[0]
        assert worker.proc is not None
        pid = worker.proc.pid
        reply = await worker.execute({"wall_s": 2.0})  # no program: the worker's job code fails
        after = await sandbox.run("print('alive')", "")
        assert worker.proc is not None and worker.proc.pid == pid  # the same worker answered
    assert reply is not None
    assert reply["verdict"] == "RUNTIME_ERROR"
    assert "the sandbox worker failed on this job: KeyError" in reply["detail"]
    assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "alive\n")


def test_leftover_killing_is_bounded_below_the_response_grace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert sandbox_worker.LEFTOVER_KILL_S + sandbox_worker.OUTPUT_DRAIN_S < RESPONSE_GRACE_S / 2
    private_shared_tmp(monkeypatch, tmp_path)
    state = sandbox_worker._WorkerState({"isolation": "rlimits"})
    if state.tmp_watch is not None:
        state.tmp_watch.close()
    state.pidns, state.job_uid = False, None
    # A leftover that never dies, on a clock that ticks a second per look: the loop gives up at
    # the deadline (3 s), having tried twice, and retires the worker.
    ticks = iter(range(100))
    clock = types.SimpleNamespace(monotonic=lambda: float(next(ticks)), sleep=lambda s: None)
    killed: list[int] = []
    monkeypatch.setattr(state, "_leftovers", lambda me: [12345])
    monkeypatch.setattr(sandbox_worker, "_kill", killed.append)
    monkeypatch.setattr(sandbox_worker, "_reap", lambda: None)
    monkeypatch.setattr(sandbox_worker, "time", clock)
    monkeypatch.setattr(sandbox_worker, "LEFTOVER_KILL_S", 3.0)
    state.kill_leftovers()
    assert killed == [12345, 12345]
    assert state.retire


async def test_a_worker_that_cannot_clean_up_is_replaced() -> None:
    sandbox = await started("auto", limits=FAST)
    try:
        if sandbox.isolation == "rlimits":
            pytest.skip("a retired rlimits worker leaves its leftover behind (no PID namespace)")
        # A worker that gives up on leftovers at once: it answers, then retires.
        giving_up = sandbox._pool[0]
        giving_up.source = giving_up.source.replace(
            "LEFTOVER_KILL_S = 10.0", "LEFTOVER_KILL_S = 0.0"
        )
        giving_up.kill()  # restarted with that source on the next job
        daemon = (
            "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n"
            "print('left one')\n"
        )
        result = await sandbox.run(daemon, "")
        worker = sandbox._pool[0]
        assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "left one\n")
        assert not worker.alive  # marked for replacement
        after = await sandbox.run("print('fresh')", "")
        assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "fresh\n")
    finally:
        await sandbox.aclose()


def test_the_process_budget_counts_threads() -> None:
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(5)]
    for thread in threads:
        thread.start()
    try:
        processes = sum(
            1 for pid in sandbox_worker._proc_pids() if sandbox_worker._real_uid(pid) == os.getuid()
        )
        mine = int(sandbox_worker._status_fields(os.getpid())["Threads"])
        assert mine >= 6
        assert sandbox_worker._user_threads(os.getuid()) >= processes + mine - 1
    finally:
        stop.set()
        for thread in threads:
            thread.join()


NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="needs root, setpriv and a system python3 to run a worker as an unprivileged user",
)
@pytest.mark.parametrize("isolation", ["bwrap", "namespaces", "rlimits"])
def test_an_unprivileged_worker(isolation: str) -> None:
    """A worker run by a non-root user (no job uid of its own): orphans of a job, in a new
    session or double-forked, are found as the worker's descendants (it is a subreaper), not by
    uid or session; process pools work; the checkout is out of sight where there is a mount
    namespace."""
    if isolation == "bwrap" and not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    source = Path(sandbox_worker.__file__).read_text(encoding="utf-8")
    checkout = Path(__file__).resolve().parents[3]
    config = {
        "isolation": isolation,
        "stage": "launch",
        "hash_seed": "0",
        "bwrap": shutil.which("bwrap") or "bwrap",
        "bwrap_options": ["--perms"],
        "hide": [str(checkout)],
    }
    worker = subprocess.Popen(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            SYSTEM_PYTHON,
            "-s",
            "-c",
            source,
            json.dumps(config),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8", "TMPDIR": "/tmp"},
        cwd="/",
    )
    assert worker.stdin is not None and worker.stdout is not None

    def run(program: str) -> dict:
        job = {
            "id": 1,
            "program": program,
            "wall_s": 10.0,
            "cpu_s": 10.0,
            "memory_mb": 512,
            "file_mb": 8,
            "nproc": 16,
            "output_bytes": 4096,
        }
        worker.stdin.write((json.dumps(job) + "\n").encode())
        worker.stdin.flush()
        return json.loads(worker.stdout.readline())

    try:
        ready = json.loads(worker.stdout.readline())
        if not ready.get("ready"):
            pytest.skip(f"{isolation} unavailable to an unprivileged user here: {ready}")
        before = descendants(worker.pid)
        daemons = run(
            "import os, subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
            " start_new_session=True)\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(60)\n"
            "    os._exit(0)\n"
            f"print(os.path.exists({str(checkout / 'pyproject.toml')!r}))\n"
        )
        assert daemons["verdict"] == "PASSED", daemons
        assert daemons["stdout_tail"] == f"{isolation == 'rlimits'}\n"
        assert descendants(worker.pid) == before  # nothing the job started is left
        pool = run(
            "from concurrent.futures import ProcessPoolExecutor\n"
            "with ProcessPoolExecutor(2) as pool:\n"
            "    print(list(pool.map(abs, [-1, -2])))\n"
        )
        assert (pool["verdict"], pool["stdout_tail"]) == ("PASSED", "[1, 2]\n"), pool
    finally:
        worker.stdin.close()
        try:
            worker.wait(timeout=10)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_worker_verdict_names_match_the_enum() -> None:
    names = {
        sandbox_worker.PASSED,
        sandbox_worker.WRONG_ANSWER,
        sandbox_worker.TIME_LIMIT_EXCEEDED,
        sandbox_worker.MEMORY_LIMIT_EXCEEDED,
        sandbox_worker.RUNTIME_ERROR,
        sandbox_worker.SYNTAX_ERROR,
    }
    assert names == {str(v) for v in Verdict}


def _serve_stage_ready(command: list[str], pass_fds: tuple[int, ...] = ()) -> dict:
    """Start the serve stage from `command` for real (rlimits), read its ready line, stop it."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=pass_fds,
        env={"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"},
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready = json.loads(proc.stdout.readline() or b"{}")
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return ready


def test_the_serve_stage_starts_from_marshalled_code(monkeypatch: pytest.MonkeyPatch) -> None:
    source = Path(sandbox_worker.__file__).read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-s", "-c", source, "{}"])
    command = sandbox_worker._serve_command({"isolation": "rlimits"})
    assert command[:4] == [sys.executable, "-s", "-c", sandbox_worker.SERVE_BOOTSTRAP]
    assert json.loads(command[4]) == {"isolation": "rlimits", "stage": "serve"}
    fd = int(command[5])
    try:
        assert os.get_inheritable(fd)  # it must reach the exec'd interpreter
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"x", 0)  # sealed
        namespace: dict = {"__name__": "not_main"}
        with os.fdopen(os.dup(fd), "rb") as fh:
            exec(marshal.load(fh), namespace)  # the bootstrap's load, without running main()
        assert namespace["SERVE_BOOTSTRAP"] == sandbox_worker.SERVE_BOOTSTRAP
        assert callable(namespace["_serve"])
        os.lseek(fd, 0, os.SEEK_SET)
        ready = _serve_stage_ready(command, pass_fds=(fd,))  # the bootstrap text itself
    finally:
        os.close(fd)
    assert ready.get("ready") is True, ready
    assert ready["isolation"] == "rlimits"


def test_the_serve_stage_falls_back_to_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    source = Path(sandbox_worker.__file__).read_text(encoding="utf-8")
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-s", "-c", source, "{}"])

    def no_memfd(name: str, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", no_memfd)
    command = sandbox_worker._serve_command({"isolation": "rlimits"})
    assert command == [
        sys.executable,
        "-s",
        "-c",
        source,
        '{"isolation": "rlimits", "stage": "serve"}',
    ]
    assert _serve_stage_ready(command).get("ready") is True


def _passes_in_a_fresh_child(checks, *args) -> None:
    """Run `checks(*args)` in a forked child (which starts with no children and may change its
    own descriptors and namespaces) and fail unless it returns."""
    pid = os.fork()
    if pid == 0:
        try:
            checks(*args)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _children_left_checks() -> None:
    """Runs in a fresh child of the test process, which starts with no children of its own."""
    assert not sandbox_worker._children_left()
    pid = os.fork()
    if pid == 0:
        time.sleep(0.2)
        os._exit(0)
    assert sandbox_worker._children_left()  # running
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.02)
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    assert sandbox_worker._children_left()  # a zombie, which the check does not reap
    os.waitpid(pid, 0)
    assert not sandbox_worker._children_left()
    if platform.machine() == "x86_64":
        # A child cloned with exit signal 0 (raw clone(2), number 56): plain waitid misses it.
        pid = ctypes.CDLL(None, use_errno=True).syscall(56, 0, 0, 0, 0, 0)
        if pid == 0:
            time.sleep(0.3)
            os._exit(0)
        assert pid > 0
        assert sandbox_worker._children_left()
        os.waitpid(pid, sandbox_worker.WALL)
        assert not sandbox_worker._children_left()


def test_children_left_sees_running_and_zombie_children() -> None:
    _passes_in_a_fresh_child(_children_left_checks)


STREAM_PROBE = """
import json, sys
streams = (sys.stdin, sys.stdout, sys.stderr)
assert streams == (sys.__stdin__, sys.__stdout__, sys.__stderr__)
facts = [
    [s.fileno(), s.encoding, s.errors, s.line_buffering, s.write_through, s.seekable(), s.mode]
    for s in streams
]
facts.append(sys.stdin.read())
sys.stderr.write(json.dumps(facts))
"""


@pytest.mark.parametrize("isolation", ["auto", "rlimits"])
async def test_standard_streams_are_those_of_a_fresh_interpreter(isolation: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    fresh = subprocess.run(
        [sys.executable, "-s", "-c", STREAM_PROBE],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    sandbox = await started(isolation, limits=FAST)
    try:
        result = await sandbox.run(STREAM_PROBE, "")
    finally:
        await sandbox.aclose()
    assert result.verdict == Verdict.PASSED, result.detail
    assert json.loads(result.stderr_tail) == json.loads(fresh.stderr)


async def test_what_a_job_left_unflushed_never_reaches_the_next() -> None:
    sandbox = await started("auto", limits=FAST)
    try:
        first = await sandbox.run(
            "import os, sys\nsys.stdout.write('left in the buffer')\n"
            "sys.stderr.write('half a line')\nos._exit(0)",
            "",
        )
        second = await sandbox.run("print('second')", "")
    finally:
        await sandbox.aclose()
    assert first.stdout_tail == "" and first.stderr_tail == ""
    assert (second.verdict, second.stdout_tail, second.stderr_tail) == (
        Verdict.PASSED,
        "second\n",
        "",
    )


def _setup_fds_checks() -> None:
    """Runs in a fresh child: the job's pipes on the lowest descriptors, where a plain dup2 onto
    0-4 would clobber one before it is moved."""
    for fd in range(5):
        os.close(fd)
    pipes = [os.pipe() for _ in range(4)]  # (0, 1), (2, 3), (4, 5), (6, 7)
    (_, out_w), (_, err_w), (_, rep_w), (nonce_r, nonce_w) = pipes
    os.write(nonce_w, b"nonce")
    wanted = [os.fstat(fd).st_ino for fd in (out_w, err_w, rep_w, nonce_r)]
    sandbox_worker._setup_fds(-1, (out_w, err_w, rep_w, nonce_r))
    assert [os.fstat(fd).st_ino for fd in (1, 2, 3, 4)] == wanted
    # Only 0-4 are left: the read ends are gone with the rest.
    assert sorted(int(name) for name in os.listdir("/proc/self/fd")) == [0, 1, 2, 3, 4, 5]
    assert os.read(0, 10) == b""  # /dev/null
    assert os.read(sandbox_worker.NONCE_FD, 10) == b"nonce"
    assert not os.get_inheritable(sandbox_worker.REPORT_FD)


def test_job_descriptors_are_placed_without_clobbering() -> None:
    _passes_in_a_fresh_child(_setup_fds_checks)


async def test_what_a_job_changes_in_its_process_never_reaches_the_next() -> None:
    changes = (
        "import os, sys, tempfile\n"
        "os.environ['LEAK'] = '1'\n"
        "tempfile.tempdir = '/'\n"
        "os.chdir('/')\n"
        "sys.stdout.reconfigure(encoding='latin-1')\n"
        "sys.stdin.close()\n"
        "sys.stderr.close()\n"
        "sys.stdout = None\n"
    )
    probe = (
        "import os, sys, tempfile\n"
        "assert 'LEAK' not in os.environ\n"
        "assert tempfile.gettempdir() == os.getcwd() == os.environ['TMPDIR']\n"
        "assert sys.stdout.encoding == 'utf-8' and not sys.stdin.closed\n"
        "print('clean', sys.stdin.read() == '')\n"
    )
    sandbox = await started("auto", limits=FAST)
    try:
        changed = await sandbox.run(changes, "")
        clean = await sandbox.run(probe, "")
    finally:
        await sandbox.aclose()
    # A program that closes or drops its streams ends as it would in a fresh interpreter.
    assert changed.verdict == Verdict.PASSED, changed.detail
    assert (clean.verdict, clean.stdout_tail) == (Verdict.PASSED, "clean True\n"), clean.detail


@pytest.mark.parametrize("ending", ["sys.stdout.close()", "sys.stdout = None"])
async def test_a_program_may_close_or_drop_stdout_at_its_end(ending: str) -> None:
    sandbox = await started("auto", limits=FAST)
    try:
        result = await sandbox.run(f"import sys\nprint('x')\n{ending}\n", "")
    finally:
        await sandbox.aclose()
    assert result.verdict == Verdict.PASSED, result.detail


def test_tmp_watch_reports_where_something_was_made(tmp_path: Path) -> None:
    top = tmp_path / "tmp"
    open_to_all = top / "shared"
    open_to_all.mkdir(parents=True)
    open_to_all.chmod(0o1777)
    (top / "private").mkdir()
    watch = sandbox_worker._TmpWatch.start((str(top),), uid=UNUSED_UID)
    if watch is None:
        pytest.skip("inotify is unavailable here")
    try:
        assert set(watch.watched.values()) == {str(top), str(open_to_all)}
        assert watch.changed() == set()
        (open_to_all / "made").write_text("x")
        assert watch.changed() == {str(open_to_all)}
        (top / "private" / "deeper").write_text("x")  # below depth 2, as the scan is: unseen
        (top / "made").write_text("x")
        os.rename(top / "made", top / "moved")
        assert watch.changed() == {str(top)}
        os.chmod(top / "moved", 0o600)
        assert watch.changed() == {str(top)}
        assert watch.changed() == set()
        shutil.rmtree(open_to_all)
        watch.changed()
        assert str(open_to_all) not in watch.watched.values()  # its watch is gone
    finally:
        watch.close()


def test_tmp_watch_overflow_means_scan_everything(tmp_path: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 20000:
        pytest.skip(f"the event queue holds {limit} events: too many to fill in a test")
    watch = sandbox_worker._TmpWatch.start((str(tmp_path),), uid=UNUSED_UID)
    if watch is None:
        pytest.skip("inotify is unavailable here")
    try:
        for i in range(limit + 10):
            os.close(os.open(tmp_path / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        assert watch.changed() is None
        assert watch.changed() == set()
    finally:
        watch.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="the shared-/tmp clean-up is rlimits as root")
def test_rlimits_as_root_scans_only_where_something_was_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Its own stand-ins for /tmp, /var/tmp and /dev/shm: what other processes make in the host's
    # (a world-writable directory of theirs, files they write) is no event here.
    tmp, _, _ = private_shared_tmp(monkeypatch, tmp_path)
    state = sandbox_worker._WorkerState({"isolation": "rlimits"})
    if state.tmp_watch is None:
        pytest.skip("inotify is unavailable here")
    # A mount anywhere in the host's mount table means "scan everything" (tested on its own).
    monkeypatch.setattr(state.tmp_watch.mounts, "changed", lambda: False)
    scanned: list[str] = []
    real = sandbox_worker._remove_owned

    def counting(directory: str, uid: int, depth: int) -> list[str]:
        scanned.append(directory)
        return real(directory, uid, depth)

    monkeypatch.setattr(sandbox_worker, "_remove_owned", counting)
    try:
        state.clean()  # the worker's own base directory was made in tmp after the watch began
        assert scanned == [tmp]
        scanned.clear()
        state.clean()
        assert scanned == []
        (Path(tmp) / "stray").write_text("x")
        state.clean()
        assert scanned == [tmp]
    finally:
        state.tmp_watch.close()


def test_tmp_watch_follows_a_directory_renamed_and_made_afresh(tmp_path: Path) -> None:
    top, shared = tmp_path / "tmp", tmp_path / "tmp" / "shared"
    shared.mkdir(parents=True)
    shared.chmod(0o1777)
    watch = sandbox_worker._TmpWatch.start((str(top),), uid=UNUSED_UID)
    if watch is None:
        pytest.skip("inotify is unavailable here")
    try:
        os.rename(shared, top / "shared-old")
        shared.mkdir()
        shared.chmod(0o1777)
        assert watch.changed() == {str(top)}
        assert watch.scan(str(top), UNUSED_UID)  # what clean() does: watches what is there now
        (shared / "made").write_text("x")
        (top / "shared-old" / "made").write_text("x")
        assert watch.changed() == {str(shared), str(top / "shared-old")}
    finally:
        watch.close()


def test_tmp_watch_scans_what_it_cannot_watch_every_time(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link, absent = tmp_path / "link", tmp_path / "absent"
    link.symlink_to(real)  # as /dev/shm -> /run/shm: followed, as the scan follows it
    watch = sandbox_worker._TmpWatch.start((str(link), str(absent)), uid=UNUSED_UID)
    if watch is None:
        pytest.skip("inotify is unavailable here")
    try:
        assert watch.changed() == {str(absent)}
        (real / "made").write_text("x")
        assert watch.changed() == {str(link), str(absent)}
    finally:
        watch.close()


def _mount_table_checks(tmp: str) -> None:
    """Runs in a fresh child with a mount namespace of its own."""
    sandbox_worker._unshare(sandbox_worker.CLONE_NEWNS)
    sandbox_worker._mount(None, "/", None, sandbox_worker.MS_REC | sandbox_worker.MS_PRIVATE, None)
    mounts = sandbox_worker._MountTableWatch()
    assert not mounts.changed()
    sandbox_worker._mount("tmpfs", tmp, "tmpfs", 0, "mode=1777")
    assert mounts.changed()
    assert not mounts.changed()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_mount_makes_the_tmp_watch_scan_everything(tmp_path: Path) -> None:
    _passes_in_a_fresh_child(_mount_table_checks, str(tmp_path))


def test_removal_never_opens_up_the_directory_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "tmp"
    victim = shared / "left-by-a-job"
    (victim / "inner").mkdir(parents=True)
    shared.chmod(0o1777)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    outside.chmod(0o644)
    (victim / "inner" / "link").symlink_to(outside)
    real_rmdir, real_unlink = os.rmdir, os.unlink

    def failing_rmdir(path, *args, **kwargs):
        if str(path) in (str(victim), "inner"):  # as if a concurrent job kept it non-empty
            raise OSError(39, "Directory not empty")
        return real_rmdir(path, *args, **kwargs)

    def failing_unlink(path, *args, **kwargs):
        if str(path) == "link":
            raise PermissionError(13, "Permission denied")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", failing_rmdir)
    monkeypatch.setattr(os, "unlink", failing_unlink)
    sandbox_worker._remove(str(victim))
    assert shared.stat().st_mode & 0o7777 == 0o1777  # was chmod'ed 0700
    assert outside.stat().st_mode & 0o777 == 0o644  # never through the symlink
