"""CreativeBench sandbox: executions per second of the warm pool vs a fresh interpreter per test.

All three run the same small program (a solution plus its assert-based tests) with the same
rlimits, `--workers` at a time, side by side in one run:

- warm: `Sandbox.run` (a warm worker forks a child per job).
- fresh: `subprocess.run([prlimit ..., *wrapper, python, "-s", file])` per test; the wrapper is the
  isolation's own (`bwrap` with the sandbox's own root for bwrap, `unshare --user --net --mount
  --pid` for namespaces, none for rlimits). The limits are set by util-linux `prlimit`, the
  cheapest way: a `preexec_fn` would make `subprocess` fork this whole process instead of
  vfork-ing it (about a fifth slower here); without `prlimit` it falls back to `preexec_fn`.
- fresh+launcher: our launcher per test (the worker's isolation set-up, exactly as the pool has it)
  running the program in a newly exec'd interpreter: same isolation and limits as warm, but two
  more interpreter start-ups than `fresh` (the launcher's and the worker's serve stage's).

Target: warm / fresh >= 5. The machine may be busy: each round runs the three modes back to back
and the table reports medians over rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from forkingpaths.benchmarks.creativebench import sandbox_worker
from forkingpaths.benchmarks.creativebench.sandbox import (
    Limits,
    Sandbox,
    Verdict,
    bwrap_options,
    program_text,
)

SOLUTION = '''
from collections import defaultdict, deque
import heapq


def merge_intervals(intervals):
    """Merge overlapping closed intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(pair) for pair in merged]


def shortest_paths(edges, source):
    """Dijkstra over a weighted directed graph given as (u, v, w) triples."""
    graph = defaultdict(list)
    for u, v, w in edges:
        graph[u].append((v, w))
    dist = {source: 0}
    heap = [(0, source)]
    while heap:
        d, node = heapq.heappop(heap)
        if d > dist.get(node, float("inf")):
            continue
        for nxt, w in graph[node]:
            if d + w < dist.get(nxt, float("inf")):
                dist[nxt] = d + w
                heapq.heappush(heap, (d + w, nxt))
    return dist


def sliding_max(values, k):
    window, out = deque(), []
    for i, value in enumerate(values):
        while window and values[window[-1]] <= value:
            window.pop()
        window.append(i)
        if window[0] <= i - k:
            window.popleft()
        if i >= k - 1:
            out.append(values[window[0]])
    return out
'''

TESTS = """
def test():
    assert merge_intervals([(1, 3), (2, 6), (8, 10), (15, 18)]) == [(1, 6), (8, 10), (15, 18)]
    assert merge_intervals([]) == []
    assert merge_intervals([(1, 4), (4, 5)]) == [(1, 5)]
    edges = [("a", "b", 1), ("b", "c", 2), ("a", "c", 5), ("c", "d", 1)]
    assert shortest_paths(edges, "a") == {"a": 0, "b": 1, "c": 3, "d": 4}
    assert sliding_max([1, 3, -1, -3, 5, 3, 6, 7], 3) == [3, 3, 5, 5, 6, 7]
    assert sliding_max([5, 4, 3, 2, 1], 2) == [5, 4, 3, 2]
    assert shortest_paths([], "z") == {"z": 0}


if __name__ == "__main__":
    test()
"""


def _rlimit_values(limits: Limits) -> dict[str, tuple[int, int]]:
    """The sandbox's rlimits, (soft, hard), by their `prlimit` option name."""
    cpu = max(1, int(limits.cpu_s))
    return {
        "cpu": (cpu, cpu + 1),
        "as": (limits.memory_mb << 20, limits.memory_mb << 20),
        "fsize": (limits.file_mb << 20, limits.file_mb << 20),
        "nproc": (limits.nproc, limits.nproc),
        "core": (0, 0),
    }


def _prlimit(limits: Limits) -> list[str] | None:
    """The util-linux `prlimit` prefix that sets the sandbox's rlimits, or None without it."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return None
    values = _rlimit_values(limits).items()
    return [prlimit, *(f"--{name}={soft}:{hard}" for name, (soft, hard) in values), "--"]


def _rlimits(limits: Limits):
    """The same rlimits, set by a `preexec_fn` (where there is no `prlimit`)."""
    values = {
        getattr(resource, f"RLIMIT_{name.upper()}"): v for name, v in _rlimit_values(limits).items()
    }

    def apply() -> None:
        for which, value in values.items():
            resource.setrlimit(which, value)

    return apply


def _interpreter_paths(python: str) -> list[str]:
    """The prefixes `python` needs, as the sandbox's launcher computes them under it."""
    code = (
        "import json, runpy\n"
        f"found = runpy.run_path({sandbox_worker.__file__!r})['_interpreter_paths']()\n"
        "print(json.dumps(found))\n"
    )
    done = subprocess.run([python, "-s", "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _wrapper(isolation: str, python: str, limits: Limits) -> list[str]:
    """The command prefix that isolates one fresh run; `{workdir}` marks where the job directory
    goes (bwrap's root has no host /var/tmp: it is bound in)."""
    if isolation == "bwrap":
        bwrap = shutil.which("bwrap") or "bwrap"
        mounts = sandbox_worker.bwrap_mounts(
            _interpreter_paths(python),
            max(256, 8 * limits.file_mb),
            frozenset(bwrap_options(bwrap)),
        )
        workdir = ["--bind", "{workdir}", "{workdir}", "--chdir", "{workdir}"]
        return [bwrap, "--unshare-all", "--die-with-parent", *mounts, *workdir, "--"]
    if isolation == "namespaces":
        return [
            shutil.which("unshare") or "unshare",
            "--user",
            "--map-root-user",
            "--net",
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "--kill-child",
            "--",
        ]
    return []


def fresh_subprocess(python: str, isolation: str, limits: Limits, jobs: int, workers: int):
    program = program_text(SOLUTION, TESTS)
    wrapper = _wrapper(isolation, python, limits)
    prlimit = _prlimit(limits)
    preexec_fn = None if prlimit else _rlimits(limits)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}

    def one(_: int) -> tuple[bool, float]:
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-", dir="/var/tmp") as tmp:
            path = Path(tmp) / "main.py"
            path.write_text(program)
            prefix = [tmp if part == "{workdir}" else part for part in wrapper]
            started = time.perf_counter()
            done = subprocess.run(
                [*(prlimit or []), *prefix, python, "-s", str(path)],
                cwd=tmp,
                env={**env, "HOME": tmp, "TMPDIR": tmp},
                capture_output=True,
                timeout=limits.wall_s,
                preexec_fn=preexec_fn,
            )
            return done.returncode == 0, time.perf_counter() - started

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(workers)))  # warm the page cache
        started = time.perf_counter()
        results = list(pool.map(one, range(jobs)))
        wall = time.perf_counter() - started
    return wall, results


async def warm_pool(sandbox: Sandbox, jobs: int) -> tuple[float, list[tuple[bool, float]]]:
    async def one() -> tuple[bool, float]:
        started = time.perf_counter()
        result = await sandbox.run(SOLUTION, TESTS)
        return result.verdict == Verdict.PASSED, time.perf_counter() - started

    await asyncio.gather(*(one() for _ in range(2 * sandbox.workers)))
    started = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(jobs)))
    return time.perf_counter() - started, list(results)


async def fresh_launcher(sandbox: Sandbox, jobs: int) -> tuple[float, list[tuple[bool, float]]]:
    job = {**sandbox._job(program_text(SOLUTION, TESTS), sandbox.limits), "cold": True}
    gate = asyncio.Semaphore(sandbox.workers)

    async def one() -> tuple[bool, float]:
        async with gate:
            started = time.perf_counter()
            worker = sandbox._new_worker(sandbox.isolation or "rlimits")
            await worker.start()
            reply = await worker.execute(job)
            await worker.close()
            ok = reply is not None and reply["verdict"] == Verdict.PASSED
            return ok, time.perf_counter() - started

    await asyncio.gather(*(one() for _ in range(sandbox.workers)))
    started = time.perf_counter()
    results = await asyncio.gather(*(one() for _ in range(jobs)))
    return time.perf_counter() - started, list(results)


def _row(name: str, rounds: list[tuple[float, list[tuple[bool, float]]]]) -> float:
    rates = [len(results) / wall for wall, results in rounds]
    jobs = sum(len(results) for _, results in rounds)
    passed = sum(ok for _, results in rounds for ok, _ in results)
    latency = statistics.median(t for _, results in rounds for _, t in results) * 1000
    rate = statistics.median(rates)
    print(f"{name:<16} {jobs:>6} {passed:>7} {rate:>9.1f} {latency:>11.1f}")
    return rate


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=100, help="jobs per mode per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--isolation", default="auto")
    parser.add_argument("--python", default=None, help="default: sandbox_python()")
    args = parser.parse_args()
    limits = Limits(wall_s=30.0, cpu_s=10.0)
    warm, fresh, launcher = [], [], []
    async with Sandbox(
        python=args.python, workers=args.workers, limits=limits, isolation=args.isolation
    ) as sandbox:
        isolation, python = sandbox.isolation or "rlimits", sandbox.python
        for _ in range(args.rounds):  # interleaved, so that other load hits every mode alike
            warm.append(await warm_pool(sandbox, args.jobs))
            fresh.append(
                await asyncio.to_thread(
                    fresh_subprocess, python, isolation, limits, args.jobs, args.workers
                )
            )
            launcher.append(await fresh_launcher(sandbox, max(10, args.jobs // 5)))
    limiter = "prlimit" if _prlimit(limits) else "preexec_fn"
    print(f"isolation {isolation}, {args.workers} workers, python {python}, limits: {limiter}")
    print(f"{'mode':<16} {'jobs':>6} {'passed':>7} {'jobs/s':>9} {'median ms':>11}")
    warm_rate = _row("warm pool", warm)
    fresh_rate = _row("fresh", fresh)
    launcher_rate = _row("fresh+launcher", launcher)
    print(f"ratio warm/fresh: {warm_rate / fresh_rate:.1f}x (target >= 5x)")
    print(f"ratio warm/fresh+launcher: {warm_rate / launcher_rate:.1f}x")
    print("median ms: per job, from submission to verdict (warm jobs queue for a worker)")


if __name__ == "__main__":
    asyncio.run(main())
