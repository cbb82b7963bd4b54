"""Concurrency: griddag episodes through the runner against the mock server at 100 ms latency,
64 episodes in flight. Achieved model calls/s over the ideal (concurrency / latency); target
>= 0.9."""

from __future__ import annotations

import argparse
import asyncio
import heapq
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import mock_server_process, process_cpu_seconds

from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--policy", default="griddag-frontier")
    parser.add_argument(
        "--jitter-ms", type=float, default=0.0, help="latency varies uniformly by +- this much"
    )
    args = parser.parse_args()
    trials = -(-args.episodes // 27)  # the main split has 27 instances
    with mock_server_process(latency_ms=args.latency_ms, jitter_ms=args.jitter_ms) as base_url:
        spec = RunSpec(
            benchmark="griddag",
            split="main",
            trials=trials,
            agent="react",
            model=f"openai-compat/{args.policy}",
            model_options=ModelOptions(base_url=base_url),
        )
        options = RunOptions(
            concurrency=args.concurrency,
            model_concurrency=args.concurrency,
            cache=False,
            progress=False,
        )
        with tempfile.TemporaryDirectory() as tmp:
            server_cpu = process_cpu_seconds(base_url.pid)
            start, cpu = time.perf_counter(), time.process_time()
            result = asyncio.run(execute_run(spec, options, runs_dir=Path(tmp), write_report=False))
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            server_cpu = process_cpu_seconds(base_url.pid) - server_cpu
    calls = result.metrics["usage"]["calls"]
    # The same greedy schedule with zero overhead: episodes in plan order onto the first free slot,
    # each call taking exactly the latency. Its makespan includes the tail, when fewer episodes
    # than slots remain, which no executor can avoid with episodes this long.
    slots = [0.0] * args.concurrency
    # Rows in plan order (`records` on revisions before streaming scoring, run with PYTHONPATH).
    episodes = result.episodes if hasattr(result, "episodes") else result.records
    for record in episodes:
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + record.n_calls * args.latency_ms / 1000)
    scheduled_ideal = calls / max(slots)
    episodes = result.metrics["episodes"]["ok"]
    ideal = args.concurrency / (args.latency_ms / 1000)
    achieved = calls / seconds
    print(
        f"episodes: {episodes} ({trials} trials x 27 instances)  errored: "
        f"{result.metrics['episodes']['errored']}"
    )
    print(f"model calls: {calls} in {seconds:.1f} s")
    print(
        f"achieved: {achieved:.1f} calls/s   ideal: {ideal:.1f} calls/s "
        f"(concurrency {args.concurrency} / latency {args.latency_ms:g} ms)"
    )
    print(
        f"runner process CPU: {cpu:.1f} s = {1000 * cpu / calls:.2f} ms per call "
        f"({cpu / seconds:.0%} of one core)"
    )
    print(
        f"mock server CPU: {server_cpu:.1f} s = {1000 * server_cpu / calls:.2f} ms per call "
        f"({server_cpu / seconds:.0%} of one core)"
    )
    print(f"achieved / ideal: {achieved / ideal:.3f}   (target >= 0.9)")
    print(
        f"achieved / ideal of the same schedule without overhead "
        f"({scheduled_ideal:.1f} calls/s, tail included): {achieved / scheduled_ideal:.3f}"
    )


if __name__ == "__main__":
    main()
