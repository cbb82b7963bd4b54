"""Shared helpers of the performance scripts: a mock server in its own process, timing."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), for the server's share of a run."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class MockServerProcess(str):
    """The base URL, carrying the server's pid."""

    pid: int


@contextlib.contextmanager
def mock_server_process(
    latency_ms: float = 0.0, jitter_ms: float = 0.0
) -> Iterator[MockServerProcess]:
    """`forkingpaths mockserver` in a separate process, so client and server do not share a GIL."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forkingpaths.cli",
            "mockserver",
            "--port",
            str(port),
            "--latency-ms",
            str(latency_ms),
            "--latency-jitter-ms",
            str(jitter_ms),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base_url}/models", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("mock server did not start") from None
                time.sleep(0.1)
        url = MockServerProcess(base_url)
        url.pid = proc.pid
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
