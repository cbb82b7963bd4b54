"""`--executor ray` against the local executor: overhead per episode, and the speedup of CPU-bound
benchmarks (escape's systematic agent, CreativeBench's sandbox) with one and two worker nodes.

The clusters are real (`ray start`), on this machine, inside a network namespace of their own
(tests/raycluster.py); the head gets no CPU, so episodes run only on the worker nodes. Every
command is the CLI a user types; figures are medians over `--rounds`.

- overhead per episode: the slope of wall time over episode count (griddag ReAct with a
  scripted model: 54 and 108 episodes), so start-up costs drop out; start-up is shown apart.
- speedup: the episode phase (first episode start to last episode end, from the records) and
  the whole command's wall time, local vs 1 vs 2 worker nodes.

Usage: python benchmarks/bench_ray.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.raycluster import NamespacedRayCluster, namespaces_available  # noqa: E402

FP = [sys.executable, "-m", "forkingpaths.cli"]

GRIDDAG = ["griddag", "--agent", "react", "--model", "scripted/griddag-frontier"]
WORKLOADS = {
    "escape systematic (10 scenarios x 8 trials)": [
        "escape", "--split", "mutate", "--agent", "systematic", "--trials", "8",
    ],
    "creativebench reference, sandbox (41 problems x 10 trials)": [
        "creativebench", "--split", "all", "--agent", "reference", "--trials", "10",
    ],
}  # fmt: skip


def _run(
    args: list[str], work: Path, cluster: NamespacedRayCluster | None, concurrency: int
) -> dict[str, float]:
    """One fresh run: wall seconds of the command, the episode phase, the episode count."""
    runs = work / f"runs-{time.monotonic_ns()}"
    argv = [*FP, "run", *args, "--runs-dir", str(runs), "--no-progress", "--no-cache"]
    argv += ["--concurrency", str(concurrency)]
    if cluster is not None:
        argv = cluster.command([*argv, "--executor", "ray", "--ray-address", cluster.address])
    env = {**os.environ, "FORKINGPATHS_CACHE_DIR": str(work / "cache")}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    (run_dir,) = [p.parent for p in runs.glob("*/episodes.jsonl")]
    starts, ends = [], []
    for line in (run_dir / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        end = datetime.fromisoformat(record["finished_at"]).timestamp()
        ends.append(end)
        starts.append(end - record["duration_s"])
    return {"wall": wall, "phase": max(ends) - min(starts), "episodes": len(ends)}


def _median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    why = namespaces_available()
    if why:
        raise SystemExit(f"cannot start a namespaced Ray cluster here: {why}")
    print(f"machine: {os.cpu_count()} CPUs; medians of {rounds} rounds; head node has 0 CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        work = Path(tmp)
        results: dict[str, dict[str, list[dict[str, float]]]] = {}
        clusters = {"1 worker node": (0, 1), "2 worker nodes": (0, 1, 1)}
        setups: list[tuple[str, NamespacedRayCluster | None]] = [("local", None)]
        started = []
        try:
            for name, nodes in clusters.items():
                t0 = time.perf_counter()
                cluster = NamespacedRayCluster(nodes).start()
                started.append(cluster)
                print(f"{name}: cluster started in {time.perf_counter() - t0:.1f} s")
                setups.append((name, cluster))
            for _ in range(rounds):  # interleaved: each round runs every setup once
                for name, cluster in setups:
                    table = results.setdefault(name, {})
                    for trials in (2, 4):
                        row = _run([*GRIDDAG, "--trials", str(trials)], work, cluster, 8)
                        table.setdefault(f"griddag x{trials}", []).append(row)
                    for workload, args in WORKLOADS.items():
                        table.setdefault(workload, []).append(_run(args, work, cluster, 4))
        finally:
            for cluster in started:
                cluster.stop()

    print("\nOverhead per episode (griddag ReAct, scripted model; slope over 54 -> 108 episodes)")
    print(f"{'executor':<16}{'ms/episode':>12}{'start-up s':>12}{'wall 108 ep s':>15}")
    slopes = {}
    for name in ("local", "1 worker node"):
        small, big = results[name]["griddag x2"], results[name]["griddag x4"]
        n_small, n_big = small[0]["episodes"], big[0]["episodes"]
        slope = (_median(big, "wall") - _median(small, "wall")) / (n_big - n_small)
        fixed = _median(small, "wall") - slope * n_small
        slopes[name] = slope
        print(f"{name:<16}{slope * 1000:>12.1f}{fixed:>12.2f}{_median(big, 'wall'):>15.2f}")
    print(f"Ray - local: {1000 * (slopes['1 worker node'] - slopes['local']):.1f} ms per episode")

    for workload in WORKLOADS:
        print(f"\n{workload}")
        header = ("episodes", 9), ("phase s", 10), ("speedup", 9), ("wall s", 9), ("speedup", 9)
        print(f"{'executor':<16}" + "".join(f"{h:>{w}}" for h, w in header))
        base = results["local"][workload]
        for name in results:
            rows = results[name][workload]
            phase, wall = _median(rows, "phase"), _median(rows, "wall")
            print(
                f"{name:<16}{int(rows[0]['episodes']):>9}{phase:>10.2f}"
                f"{_median(base, 'phase') / phase:>9.2f}{wall:>9.2f}"
                f"{_median(base, 'wall') / wall:>9.2f}"
            )


if __name__ == "__main__":
    main()
