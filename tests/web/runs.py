"""Runs the viewer tests look at: every benchmark played offline on a few instances."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.doubles import free_port

from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.suite import quick_specs

INSTANCES_PER_RUN = 2


def small_quick_specs() -> list[RunSpec]:
    """The quick suite, each run cut to its first instances (every benchmark, every reference
    agent and scripted model of the suite)."""
    specs = []
    for spec in quick_specs():
        bench = make_benchmark(spec.benchmark)
        ids = spec.instances or [i.id for i in bench.instances(spec.split)]
        specs.append(spec.model_copy(update={"instances": ids[:INSTANCES_PER_RUN]}))
    return specs


def play(specs: list[RunSpec], runs_dir: Path) -> None:
    for spec in specs:
        asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=runs_dir))


def run_key(runs_dir: Path, benchmark: str, agent: str | None = None) -> str:
    """The folder name of the run of `benchmark` (and `agent`) under `runs_dir`."""
    for path in sorted(runs_dir.iterdir()):
        if path.name.startswith(f"{benchmark}-") and (agent is None or f"-{agent}-" in path.name):
            return path.name
    raise LookupError(f"no {benchmark} run with agent {agent} under {runs_dir}")


@contextlib.contextmanager
def viewer_process(runs_dir: Path) -> Iterator[tuple[str, str]]:
    """`forkingpaths view RUNS_DIR` in its own process, answering: (its address, the line it
    printed). Stopped by its pid."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "forkingpaths.cli", "view", str(runs_dir), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        printed = proc.stdout.readline() if proc.stdout else ""
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"forkingpaths view did not start: {printed}") from None
                time.sleep(0.2)
        yield url, printed
    finally:
        proc.terminate()
        proc.wait(timeout=30)
