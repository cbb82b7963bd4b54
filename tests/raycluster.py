"""A real Ray cluster of several nodes on this machine, inside a network namespace of its own.

Ray binds and probes non-loopback addresses of the host even when told 127.0.0.1, and tests
send nothing off loopback: the cluster lives in namespaces this module creates (`unshare
--net --pid --mount-proc`, only `lo` up), and commands join its network with `nsenter --net`.
Nodes are stopped by the process ids they were started as (`ray start --block` and its
descendants), never by `ray stop` or a process name; the namespace's first process ends
last, and the kernel ends whatever is left in its PID namespace with it.

Used by tests/runner/test_ray_executor.py and benchmarks/bench_ray.py. Run as a script it is
that first process (`host`), reading commands on stdin and answering JSON lines on stdout.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HEAD_PORT = 6379
STARTED = "Ray runtime started"


def namespaces_available() -> str | None:
    """Why a namespaced cluster cannot start here, or None when it can."""
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        return "unshare/nsenter (util-linux) not installed"
    try:
        import ray  # noqa: F401
    except ImportError:
        return "ray not installed (pip install 'forkingpaths[ray]')"
    probe = subprocess.run(
        [*_unshare(), "true"], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        return f"cannot create namespaces: {probe.stderr.strip()[:200]}"
    return None


def _unshare() -> list[str]:
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]


class NamespacedRayCluster:
    """`nodes[i]` CPUs per node (the head first; 0 keeps episodes off the head)."""

    def __init__(self, nodes: Sequence[int] = (1, 1), *, object_store_mb: int = 80) -> None:
        self.node_cpus = list(nodes)
        self.object_store_mb = object_store_mb
        self.address = f"127.0.0.1:{HEAD_PORT}"
        self._proc: subprocess.Popen[str] | None = None
        self._ns_pid: int | None = None
        self._temp = Path(tempfile.mkdtemp(prefix="fpray-", dir="/tmp"))  # short: socket paths

    def start(self) -> NamespacedRayCluster:
        self._proc = subprocess.Popen(
            [
                *_unshare(),
                sys.executable,
                __file__,
                "host",
                str(self._temp),
                str(self.object_store_mb),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )
        self._ns_pid = self._first_child(self._proc.pid)
        for cpus in self.node_cpus:
            self.add_node(cpus)
        return self

    def _first_child(self, pid: int) -> int:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                if children:
                    return int(children[0])
            time.sleep(0.05)
        raise RuntimeError("the namespace's first process did not start")

    def _ask(self, command: str, timeout_s: float = 120) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout_s)
        if not ready:
            raise RuntimeError(f"cluster host did not answer {command!r} in {timeout_s:g} s")
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"cluster host ended while asked {command!r}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"cluster host: {answer['error']}")
        return answer

    def add_node(self, cpus: int) -> int:
        """Start one more node (the first is the head); its index."""
        return int(self._ask(f"add {cpus}")["node"])

    def kill_node(self, index: int) -> list[int]:
        """SIGKILL a node's processes (by the ids the host started them as): a lost machine."""
        return list(self._ask(f"kill {index}")["pids"])

    def command(
        self, argv: Sequence[str], *, cwd: str | Path | None = None, pids: bool = True
    ) -> list[str]:
        """`argv` run inside the cluster's namespaces: its network (nothing it sends leaves
        loopback) and its process ids (a raylet checks that its driver is alive by pid).
        `pids=False` joins the network only, so the process keeps the id Popen gives (a
        server the caller stops by that id). It runs in `cwd` (default: this process's)."""
        assert self._ns_pid is not None
        user = [] if os.geteuid() == 0 else ["--user", "--preserve-credentials"]
        where = ["--net", *(["--pid", "--mount"] if pids else []), f"--wd={cwd or os.getcwd()}"]
        return ["nsenter", f"--target={self._ns_pid}", *user, *where, "--", *argv]

    def stop(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(Exception):
                self._ask("exit", timeout_s=30)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()  # --kill-child: the namespace's first process goes with it
                proc.wait(timeout=30)
        self._proc = None
        shutil.rmtree(self._temp, ignore_errors=True)

    def __enter__(self) -> NamespacedRayCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def ray_cluster(nodes: Sequence[int] = (1, 1)) -> Iterator[NamespacedRayCluster]:
    cluster = NamespacedRayCluster(nodes)
    try:
        yield cluster.start()
    finally:
        cluster.stop()


# -- the host: the namespace's first process --------------------------------------------------


def _descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += parents.get(current, [])
    return out


def _loopback_up() -> None:
    """`ip link set lo up`, without needing iproute2: SIOCGIFFLAGS, then SIOCSIFFLAGS | IFF_UP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, request)[:18])[1]
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH", b"lo", flags | 0x1))


def _host(temp: str, object_store_mb: int) -> None:
    _loopback_up()
    ray_cli = str(Path(sys.executable).with_name("ray"))
    nodes: list[subprocess.Popen[str]] = []

    def answer(data: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()

    def kill(proc: subprocess.Popen[str]) -> list[int]:
        pids = _descendants(proc.pid)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=10)
        return pids

    common = [
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--object-store-memory={object_store_mb * 1_000_000}",
        "--disable-usage-stats",
    ]
    for line in sys.stdin:
        verb, *args = line.split()
        try:
            if verb == "add":
                head = not nodes
                where = (
                    [
                        "--head",
                        f"--port={HEAD_PORT}",
                        "--include-dashboard=false",
                        f"--temp-dir={temp}",
                    ]
                    if head
                    else [f"--address=127.0.0.1:{HEAD_PORT}"]
                )
                log_path = Path(temp) / f"node{len(nodes)}.log"
                with log_path.open("w") as log:
                    proc = subprocess.Popen(
                        [ray_cli, "start", *where, *common, f"--num-cpus={int(args[0])}"],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        text=True,
                    )
                deadline = time.monotonic() + 120
                while STARTED not in log_path.read_text():
                    if proc.poll() is not None or time.monotonic() > deadline:
                        kill(proc)
                        raise RuntimeError("ray start failed: " + log_path.read_text()[-2000:])
                    time.sleep(0.1)
                nodes.append(proc)
                answer({"node": len(nodes) - 1})
            elif verb == "kill":
                answer({"pids": kill(nodes[int(args[0])])})
            elif verb == "exit":
                for proc in reversed(nodes):
                    kill(proc)
                answer({"stopped": len(nodes)})
                return
            else:
                answer({"error": f"unknown command {verb!r}"})
        except Exception as err:  # reported to the test, which stops the cluster
            answer({"error": f"{type(err).__name__}: {err}"})


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "host":
        _host(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: raycluster.py host TEMP_DIR OBJECT_STORE_MB")
