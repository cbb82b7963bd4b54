"""Hostile programs get a verdict and change nothing outside (at the isolation "auto" picks)."""

from __future__ import annotations

import os
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from forkingpaths.benchmarks.creativebench.sandbox import Limits, Sandbox, Verdict

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")

LIMITS = Limits(wall_s=4.0, cpu_s=3.0, memory_mb=512, file_mb=8, nproc=16, output_bytes=4096)
HERE = Path(__file__).resolve().parent


def _descendants(root: int) -> set[int]:
    """Every live process below `root` (workers, launchers, and anything a job left behind)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(name)] = int(fields[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


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
        return cls(canary, {d: sorted(os.listdir(d)) for d in dirs}, _descendants(os.getpid()))

    def assert_unchanged(self, *, replaced_workers: bool = False) -> None:
        assert self.canary.read_text() == "do not touch"
        for directory, listing in self.listings.items():
            assert sorted(os.listdir(directory)) == listing, directory
        now = _descendants(os.getpid())
        if replaced_workers:  # a replaced worker has new pids: compare the count
            assert len(now) == len(self.processes), (now, self.processes)
        else:
            assert now == self.processes, (now - self.processes, self.processes - now)


@pytest_asyncio.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox(python=sys.executable, workers=1, limits=LIMITS) as started:
        await started.run("pass", "")  # every worker is up before the outside is recorded
        yield started


async def test_infinite_loop(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    result = await sandbox.run("while True:\n    pass\n", "")
    assert result.verdict == Verdict.TIME_LIMIT_EXCEEDED, result
    outside.assert_unchanged()


async def test_fork_bomb(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    result = await sandbox.run(bomb, "")
    assert result.verdict == Verdict.TIME_LIMIT_EXCEEDED, result
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
    # Writing to /tmp may succeed (a private tmpfs under namespaces and bwrap): it must not land
    # in the host's /tmp.
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
    assert not stray.exists()
    assert Path(__file__).exists()
    outside.assert_unchanged()


async def test_environment_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"sk-fake-{uuid.uuid4().hex}"
    monkeypatch.setenv("FORKINGPATHS_FAKE_SECRET", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    outside = Outside.take(tmp_path)
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
    async with Sandbox(python=sys.executable, workers=1, limits=LIMITS) as sandbox:
        result = await sandbox.run(program, "")
    assert result.verdict == Verdict.PASSED, result.detail
    assert secret not in result.stdout_tail + result.stderr_tail
    assert "FORKINGPATHS_FAKE_SECRET" not in result.stdout_tail
    outside.assert_unchanged()


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
    program = (
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(4096):\n    sys.stdout.write(chunk)\n"
    )
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.RUNTIME_ERROR  # stopped at the file-size limit
    assert "File too large" in result.detail
    assert 0 < len(result.stdout_tail) <= LIMITS.output_bytes
    outside.assert_unchanged()


async def test_killing_its_parent(sandbox: Sandbox, tmp_path: Path) -> None:
    outside = Outside.take(tmp_path)
    program = "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(2)\n"
    result = await sandbox.run(program, "")
    assert result.verdict == Verdict.RUNTIME_ERROR, result
    after = await sandbox.run("print('pool alive')", "")
    assert (after.verdict, after.stdout_tail) == (Verdict.PASSED, "pool alive\n")
    outside.assert_unchanged(replaced_workers=True)


@pytest.mark.parametrize(("code", "verdict"), [(0, Verdict.PASSED), (3, Verdict.RUNTIME_ERROR)])
async def test_os_exit_inside_tests(
    sandbox: Sandbox, tmp_path: Path, code: int, verdict: Verdict
) -> None:
    outside = Outside.take(tmp_path)
    source = f"import os\nos._exit({code})\n"
    tests = (
        "def test():\n    assert False, 'never reached'\n\nif __name__ == '__main__':\n    test()\n"
    )
    result = await sandbox.run(source, tests)
    # Exit status 0 is a pass, even before the asserts ran: documented in sandbox.py.
    assert result.verdict == verdict
    if code == 0:
        assert "os._exit(0)" in result.detail
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
