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
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import plan_jobs
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
    # Rows in plan order (`records` on revisions before streaming scoring, run with PYTHONPATH).
    episodes = result.episodes if hasattr(result, "episodes") else result.records
    n_calls = {(e.instance_id, e.trial): e.n_calls for e in episodes}
    bench = make_benchmark(spec.benchmark)
    plan = [job.key for job in plan_jobs(spec, bench)]
    caps = {job.instance.id: bench.max_steps(job.instance) for job in plan_jobs(spec, bench)}
    longest = sorted(plan, key=lambda key: -caps[key[0]])  # the order this revision starts them

    def schedule_ideal(order: list[tuple[str, int]]) -> float:
        """Calls/s of the greedy schedule with zero overhead: episodes in `order` onto the first
        free slot, each call taking exactly the latency. Its makespan includes the tail, when
        fewer episodes than slots remain."""
        slots = [0.0] * args.concurrency
        for key in order:
            start = heapq.heappop(slots)
            heapq.heappush(slots, start + n_calls[key] * args.latency_ms / 1000)
        return calls / max(slots)

    plan_ideal, longest_ideal = schedule_ideal(plan), schedule_ideal(longest)
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
        f"the same episodes without overhead, tail included: in plan order {plan_ideal:.1f} "
        f"calls/s ({plan_ideal / ideal:.3f} of ideal), longest-capped first {longest_ideal:.1f} "
        f"({longest_ideal / ideal:.3f})"
    )
    print(
        f"achieved / that bound (longest first, as the runner starts them; plan order before "
        f"a605821): {achieved / longest_ideal:.3f} / {achieved / plan_ideal:.3f}"
    )


if __name__ == "__main__":
    main()
