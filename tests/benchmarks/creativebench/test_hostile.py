"""Hostile programs get a verdict and change nothing outside, at every isolation level."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from tests.benchmarks.creativebench.sandbox_helpers import (
    assert_stopped_by_a_time_limit,
    descendants,
    started,
)

from forkingpaths.benchmarks.creativebench.sandbox import Limits, Sandbox, Verdict

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

LIMITS = Limits(wall_s=4.0, cpu_s=3.0, memory_mb=512, file_mb=8, nproc=16, output_bytes=4096)
HERE = Path(__file__).resolve().parent
LEVELS = ["bwrap", "namespaces", "rlimits"]
ROOT = os.geteuid() == 0


@dataclass
class Outside:
    """What must not change: a canary, two directories' listings, the processes below us."""

    canary: Path
    listings: dict[Path, list[str]]
    processes: set[int]

    @classmethod
    def take(cls, tmp_path: Path) -> Outside:
        canary = tmp_path / "canary.txt"
        if not canary.exists():
            canary.write_text("do not touch")
        dirs = [tmp_path, HERE]
        return cls(canary, {d: sorted(os.listdir(d)) for d in dirs}, descendants(os.getpid()))

    def assert_unchanged(self, *, replaced_workers: bool = False) -> None:
        assert self.canary.read_text() == "do not touch"
        for directory, listing in self.listings.items():
            assert sorted(os.listdir(directory)) == listing, directory
        now = descendants(os.getpid())
        if replaced_workers:  # a replaced worker has new pids: compare the count
            assert len(now) == len(self.processes), (now, self.processes)
        else:
            assert now == self.processes, (now - self.processes, self.processes - now)


async def _started(level: str) -> Sandbox:
    sandbox = await started(level, limits=LIMITS)
    await sandbox.run("pass", "")  # every worker is up before the outside is recorded
    return sandbox


@pytest_asyncio.fixture(params=LEVELS)
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[Sandbox]:
    started = await _started(request.param)
    try:
        yield started
    finally:
        await started.aclose()


@pytest.mark.slow
async def test_infinite_loop(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    result = await sandbox.run("while True:\n    pass\n", "")
    assert_stopped_by_a_time_limit(result, LIMITS)  # by either limit: which is first is a race
    outside.assert_unchanged()


@pytest.mark.slow
async def test_fork_bomb(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    result = await sandbox.run(bomb, "")
    assert_stopped_by_a_time_limit(result, LIMITS)
    outside.assert_unchanged()  # every process of the bomb is gone
    forks = (
        "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\n"
        "os.waitpid(pid, 0)\nprint('forked')"
    )
    after = await sandbox.run(forks, "")
    assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "forked\n"), after


async def test_memory_bomb(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))\n"
    result = await sandbox.run(bomb, "")
    assert result.verdict == Verdict.MEMORY_LIMIT_EXCEEDED, result
    outside.assert_unchanged()


async def test_files_outside_the_working_directory(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    stray = Path("/tmp") / f"forkingpaths-escape-{uuid.uuid4().hex}"
    attempts = {
        "overwrite canary": f"open({str(outside.canary)!r}, 'w').write('pwned')",
        "delete canary": f"os.remove({str(outside.canary)!r})",
        "new file beside canary": f"open({str(tmp_path / 'new.txt')!r}, 'w').write('x')",
        "write into the test directory": f"open({str(HERE / 'escape.py')!r}, 'w').write('x')",
        "delete a test": f"os.remove({str(Path(__file__).resolve())!r})",
    }
    # Writing to /tmp may succeed (a private tmpfs under namespaces and bwrap; the job uid's
    # files are deleted afterwards at rlimits as root): it must not stay in the host's /tmp.
    program = (
        f"import os\ntry:\n    open({str(stray)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    )
    program += "succeeded = []\n"
    for name, statement in attempts.items():
        program += (
            f"try:\n    {statement}\n    succeeded.append({name!r})\nexcept OSError:\n    pass\n"
        )
    program += "assert not succeeded, succeeded\nprint(open('mine.txt', 'w').write('ok'))\n"
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.PASSED, result.detail
    assert result.stdout_tail == "2\n"  # writing in its own directory works
    if sandbox.isolation != "rlimits" or ROOT:
        assert not stray.exists()
    stray.unlink(missing_ok=True)
    assert Path(__file__).exists()
    outside.assert_unchanged()


async def test_files_left_in_shared_temporary_directories(sandbox: Sandbox, tmp_path: Path) -> None:
    if sandbox.isolation == "rlimits" and not ROOT:
        pytest.skip("rlimits as a non-root user: the job's /tmp files are the user's (documented)")
    outside = Outside.take(tmp_path)
    tag = f"forkingpaths-left-{uuid.uuid4().hex}"
    places = [Path(d) / tag for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d)]
    # A world-writable directory of someone else's, made while the worker runs: what the job puts
    # in it must go too.
    open_to_all = Path("/tmp") / f"forkingpaths-open-{uuid.uuid4().hex}"
    open_to_all.mkdir()
    open_to_all.chmod(0o1777)
    # (Under bwrap and namespaces the job's /tmp is its own: the directory is not there at all.)
    leave = (
        f"try:\n    open({str(open_to_all / tag)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    )
    program = "import os\n" + leave
    for place in places:
        program += (
            f"os.mkdir({str(place)!r})\n"
            f"open(os.path.join({str(place)!r}, 'f'), 'w').write('x')\n"
            f"open({str(place) + '.txt'!r}, 'w').write('x')\n"
        )
    program += "print('left')\n"
    try:
        result = await sandbox.run(program, "")
        assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "left\n"), result
        for place in places:
            assert not place.exists(), place
            assert not Path(str(place) + ".txt").exists(), place
        assert not (open_to_all / tag).exists()
        # Again, now that the directory is known: a job that changes nothing else there.
        again = await sandbox.run(leave, "")
        assert again.verdict == Verdict.PASSED, again.detail
        assert not (open_to_all / tag).exists()
    finally:
        shutil.rmtree(open_to_all, ignore_errors=True)
        for place in places:
            shutil.rmtree(place, ignore_errors=True)
            Path(str(place) + ".txt").unlink(missing_ok=True)
    outside.assert_unchanged()


async def test_root_only_files_and_capabilities(sandbox: Sandbox, tmp_path: Path) -> None:
    if sandbox.isolation == "rlimits" and not ROOT:
        pytest.skip(
            "rlimits as a non-root user: jobs run as this user, read its files (documented)"
        )
    secret = f"secret-{uuid.uuid4().hex}"
    canaries = [tmp_path / "root-only.txt"]
    shared = Path("/tmp") / f"forkingpaths-canary-{uuid.uuid4().hex}"  # searchable by anyone
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    canaries.append(shared / "root-only.txt")
    if os.access("/root", os.W_OK):
        canaries.append(Path("/root") / f"forkingpaths-canary-{uuid.uuid4().hex}.txt")
    try:
        for canary in canaries:
            canary.write_text(secret)
            canary.chmod(0o600)
        outside = Outside.take(tmp_path)
        paths = [*map(str, canaries), "/etc/shadow"]
        program = f"""
import os
read = []
for path in {paths!r}:
    try:
        with open(path) as fh:
            read.append((path, fh.read()[:80]))
    except OSError:
        pass
caps = {{}}
for line in open('/proc/self/status'):
    key, _, value = line.partition(':')
    if key in ('CapInh', 'CapPrm', 'CapEff', 'CapAmb'):
        caps[key] = int(value, 16)
    if key == 'NoNewPrivs':
        no_new_privs = int(value)
assert not read, read
assert not any(caps.values()), caps
assert no_new_privs == 1  # set once by the worker, inherited by every job
print('checkout visible:', os.path.exists({str(HERE / "test_hostile.py")!r}))
"""
        result = await sandbox.run(program, "")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
        for canary in canaries[2:]:
            canary.unlink(missing_ok=True)
    assert result.verdict == Verdict.PASSED, result.detail
    assert secret not in result.stdout_tail + result.stderr_tail + result.detail
    if sandbox.isolation != "rlimits":  # hidden under a tmpfs (namespaces) or absent (bwrap)
        assert result.stdout_tail == "checkout visible: False\n"
    outside.assert_unchanged()


@pytest.mark.parametrize(
    "program",
    [
        "import multiprocessing\n"
        "with multiprocessing.Pool(2) as pool:\n"
        "    assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]\n"
        "print('pool ok')\n",
        "from concurrent.futures import ProcessPoolExecutor\n"
        "with ProcessPoolExecutor(2) as pool:\n"
        "    assert list(pool.map(abs, [-1, -2, -3])) == [1, 2, 3]\n"
        "print('pool ok')\n",
    ],
    ids=["multiprocessing-pool", "process-pool-executor"],
)
async def test_process_pools(sandbox: Sandbox, tmp_path: Path, program: str) -> None:
    outside = Outside.take(tmp_path)
    result = await sandbox.run(program, "")
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "pool ok\n"), result
    outside.assert_unchanged()


async def test_daemons_are_killed(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    program = """
import os, subprocess, sys, time
# A new session (not in the job's process group) ...
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)
# ... and a double fork whose grandchild is orphaned at once.
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
os.waitpid(pid, 0)
print('daemons started')
"""
    result = await sandbox.run(program, "")
    assert (result.verdict, result.stdout_tail) == (Verdict.PASSED, "daemons started\n"), result
    outside.assert_unchanged()  # nothing the job started is still running


async def test_environment_secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = f"sk-fake-{uuid.uuid4().hex}"
    monkeypatch.setenv("FORKINGPATHS_FAKE_SECRET", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    program = f"""
import os
secret = {secret!r}
found = [k for k, v in os.environ.items() if secret in v]
for pid in [d for d in os.listdir('/proc') if d.isdigit()] + [{os.getpid()}, os.getppid()]:
    try:
        with open(f'/proc/{{pid}}/environ', 'rb') as fh:
            if secret.encode() in fh.read():
                found.append(pid)
    except OSError:
        pass
assert not found, found
print(sorted(os.environ))
"""
    for level in LEVELS:
        sandbox = await _started(level)
        try:
            outside = Outside.take(tmp_path)
            result = await sandbox.run(program, "")
            assert result.verdict == Verdict.PASSED, (level, result.detail)
            assert secret not in result.stdout_tail + result.stderr_tail
            assert "FORKINGPATHS_FAKE_SECRET" not in result.stdout_tail
            outside.assert_unchanged()
        finally:
            await sandbox.aclose()


async def test_network_connection(sandbox: Sandbox, tmp_path: Path) -> None:
    if sandbox.isolation == "rlimits":
        pytest.xfail("rlimits isolation has no network namespace: 127.0.0.1 is reachable")
    outside = Outside.take(tmp_path)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        program = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hi')\n"
            "    connected = True\n"
            "except OSError:\n"
            "    connected = False\n"
            "assert not connected, 'reached the host listener'\n"
        )
        result = await sandbox.run(program, "")
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.verdict == Verdict.PASSED, result.detail
    outside.assert_unchanged()


async def test_printing_gigabytes(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    # 2 GiB to stdout and 64 MiB to stderr: far past the 8 MB file-size limit, which is for files
    # the program writes. The output is captured and truncated; the tests decide the verdict.
    source = (
        "import sys\n"
        "def shout():\n"
        "    chunk = 'x' * (1 << 20)\n"
        "    for _ in range(2048):\n"
        "        sys.stdout.write(chunk)\n"
        "    for _ in range(64):\n"
        "        sys.stderr.write(chunk)\n"
        "    return 42\n"
    )
    passing = (
        "assert shout() == 42\nprint('end of stdout')\nprint('end of stderr', file=sys.stderr)\n"
    )
    result = await sandbox.run(source, passing, timeout=60)
    assert result.verdict == Verdict.PASSED, result
    assert result.stdout_tail.endswith("xend of stdout\n")
    assert result.stderr_tail.endswith("xend of stderr\n")
    assert len(result.stdout_tail) == len(result.stderr_tail) == LIMITS.output_bytes
    failing = await sandbox.run(source, "assert shout() == 41, 'wrong'\n", timeout=60)
    assert failing.verdict == Verdict.WRONG_ANSWER, failing
    assert "wrong" in failing.detail
    # Files the program writes still stop at the file-size limit.
    big_file = "open('big.bin', 'wb').write(b'x' * (64 << 20))\n"
    too_big = await sandbox.run(big_file, "")
    assert too_big.verdict == Verdict.RUNTIME_ERROR, too_big
    assert "File too large" in too_big.detail
    outside.assert_unchanged()


async def test_killing_its_parent(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    program = "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(2)\n"
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.RUNTIME_ERROR, result
    after = await sandbox.run("print('pool alive')", "")
    assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "pool alive\n")
    outside.assert_unchanged(replaced_workers=True)


FAILING_TESTS = (
    "def test():\n    assert f() == 2, 'never reached'\n\nif __name__ == '__main__':\n    test()\n"
)
PASSING_TESTS = "def test():\n    assert f() == 1\n    print('tests ran')\n\ntest()\n"


@pytest.mark.parametrize(
    ("source", "tests", "verdict", "detail"),
    [
        # The solution's own main guard is stripped: the tests run and decide.
        (
            "def main():\n    return 0\n\ndef f():\n    return 1\n\n"
            "if __name__ == '__main__':\n    raise SystemExit(main())\n",
            FAILING_TESTS,
            Verdict.WRONG_ANSWER,
            "never reached",
        ),
        (
            "import unittest\n\ndef f():\n    return 1\n\n"
            "if __name__ == '__main__':\n    unittest.main()\n",
            FAILING_TESTS,
            Verdict.WRONG_ANSWER,
            "never reached",
        ),
        (
            "def f():\n    return 1\n\nif __name__ == '__main__':\n    raise SystemExit(0)\n",
            PASSING_TESTS,
            Verdict.PASSED,
            "",
        ),
        # Exits with status 0 before the tests ran are no pass.
        (
            "import sys\n\ndef f():\n    return 1\n\nsys.exit(0)\n",
            FAILING_TESTS,
            Verdict.RUNTIME_ERROR,
            "exited before the tests finished (SystemExit(0))",
        ),
        (
            "import unittest\n\ndef f():\n    return 1\n\nunittest.main()\n",
            FAILING_TESTS,
            Verdict.RUNTIME_ERROR,
            "exited before the tests finished (SystemExit(False))",
        ),
        (
            "import os\n\ndef f():\n    os._exit(0)\n",
            FAILING_TESTS,
            Verdict.RUNTIME_ERROR,
            "exited before the tests finished",
        ),
        # An exit handler that forces status 0 does not hide the failure the harness saw.
        (
            "import atexit, os\natexit.register(lambda: os._exit(0))\n\ndef f():\n    return 1\n",
            FAILING_TESTS,
            Verdict.WRONG_ANSWER,
            "never reached",
        ),
        (
            "import atexit, os\natexit.register(lambda: os._exit(0))\n\ndef f():\n    return 1\n",
            PASSING_TESTS,
            Verdict.PASSED,
            "",
        ),
    ],
    ids=[
        "raise-systemexit-main-in-guard",
        "unittest-main-in-guard",
        "guard-then-passing-tests",
        "sys-exit-0",
        "unittest-main-no-tests",
        "os-exit-0-in-solution",
        "atexit-os-exit-0-failing",
        "atexit-os-exit-0-passing",
    ],
)
async def test_early_exit_with_status_0(
    sandbox: Sandbox, tmp_path: Path, source: str, tests: str, verdict: Verdict, detail: str
) -> None:
    outside = Outside.take(tmp_path)
    result = await sandbox.run(source, tests)
    assert result.verdict == verdict, result
    assert detail in result.detail
    if verdict == Verdict.PASSED and "atexit" not in source:  # os._exit(0) skips the flush
        assert result.stdout_tail == "tests ran\n"
    outside.assert_unchanged()


@pytest.mark.parametrize(
    ("code", "verdict"), [(0, Verdict.RUNTIME_ERROR), (3, Verdict.RUNTIME_ERROR)]
)
async def test_os_exit_inside_tests(
    sandbox: Sandbox, tmp_path: Path, code: int, verdict: Verdict
) -> None:
    outside = Outside.take(tmp_path)
    source = f"import os\nos._exit({code})\n"
    tests = (
        "def test():\n    assert False, 'never reached'\n\nif __name__ == '__main__':\n    test()\n"
    )
    result = await sandbox.run(source, tests)
    assert result.verdict == verdict
    if code == 0:
        assert "exited before the tests finished" in result.detail
    else:
        assert "exit status 3" in result.detail
    outside.assert_unchanged()


async def test_a_forged_done_report(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    fake = [
        {"kind": "done"},
        {"kind": "done", "nonce": ""},
        {"kind": "done", "nonce": "0" * 32},
        {"kind": "done", "nonce": None},
    ]
    program = f"""
import json, os
for report in {fake!r}:
    for fd in range(3, 16):
        try:
            os.write(fd, ('\\n' + json.dumps(report) + '\\n').encode())
        except OSError:
            pass
os._exit(0)
"""
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.RUNTIME_ERROR, result
    assert "exited before the tests finished" in result.detail
    outside.assert_unchanged()


async def test_a_lone_surrogate(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    worker = sandbox._pool[0]
    assert worker.proc is not None
    pid = worker.proc.pid
    result = await sandbox.run("def f():\n    return '\ud800'\n", "assert f()\n")
    assert result.verdict == Verdict.SYNTAX_ERROR, result
    assert "surrogates not allowed" in result.detail
    after = await sandbox.run("print('still here')", "")
    assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "still here\n")
    assert worker.proc is not None and worker.proc.pid == pid  # the same worker, alive
    outside.assert_unchanged()


@pytest.mark.parametrize(
    "program",
    [
        "def down(n):\n    return down(n + 1) + 1\n\ndown(0)\n",
        "import sys\nsys.setrecursionlimit(10 ** 7)\nnested = []\n"
        "for _ in range(10 ** 6):\n    nested = [nested]\nrepr(nested)\n",
    ],
    ids=["python-recursion", "c-stack-overflow"],
)
async def test_recursion_blow_up(sandbox: Sandbox, tmp_path: Path, program: str) -> None:
    outside = Outside.take(tmp_path)
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.RUNTIME_ERROR, result
    outside.assert_unchanged()
