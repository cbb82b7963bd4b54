"""The harness against llama.cpp's server alone: tokens per second of a griddag ReAct run on
SmolLM2 through the runner, beside a bare AsyncOpenAI loop sending the very requests the run
recorded to the same server, in interleaved rounds (medians).

    python benchmarks/bench_local_harness.py [--rounds 3] [--instances 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import openai

from forkingpaths.core.chat import ModelParams
from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.models.local import LlamaServer, resolve_local
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import load_records

INSTANCES = ["low-easy-s0", "low-easy-s1", "low-medium-s0", "low-medium-s1"]


async def through_harness(base_url: str, runs_dir: Path, instances: list[str]) -> tuple:
    spec = RunSpec(
        benchmark="griddag",
        split="main",
        instances=instances,
        agent="react",
        model="openai-compat/smollm2-135m",
        model_options=ModelOptions(base_url=base_url, params=ModelParams(max_tokens=64)),
        benchmark_options={"budget_alpha": 1},
    )
    started = time.perf_counter()
    result = await execute_run(
        spec,
        RunOptions(progress=False, cache=False, concurrency=1),
        runs_dir=runs_dir,
        force_new=True,
        write_report=False,
    )
    wall = time.perf_counter() - started
    records = load_records(result.run_dir.path)
    calls = [c for r in records for s in r.steps for c in s.calls]
    return wall, sum(c.completion_tokens for c in calls), calls


async def bare_loop(base_url: str, calls: list) -> tuple[float, int]:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    tokens = 0
    started = time.perf_counter()
    for call in calls:
        request = call.request()
        response = await client.chat.completions.create(
            model="smollm2-135m",
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            **request.params.request_fields(),
        )
        tokens += response.usage.completion_tokens if response.usage else 0
    wall = time.perf_counter() - started
    await client.close()
    return wall, tokens


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instances", type=int, default=2)
    args = parser.parse_args()
    server = LlamaServer(resolve_local("smollm2-135m", ModelOptions()), "smollm2-135m")
    base_url = await asyncio.to_thread(server.start)
    ratios, harness_tps, bare_tps = [], [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.rounds):
                wall, tokens, calls = await through_harness(
                    base_url, Path(tmp), INSTANCES[: args.instances]
                )
                bare_wall, bare_tokens = await bare_loop(base_url, calls)
                harness_tps.append(tokens / wall)
                bare_tps.append(bare_tokens / bare_wall)
                # Requests per second is the fair ratio: both sides send the same requests.
                ratios.append(bare_wall / wall)
                print(
                    f"round: {len(calls)} calls; harness {wall:.1f} s ({tokens / wall:.1f} tok/s),"
                    f" bare {bare_wall:.1f} s ({bare_tokens / bare_wall:.1f} tok/s)",
                    flush=True,
                )
    finally:
        server.stop()
    print(
        f"median tokens/s: harness {statistics.median(harness_tps):.1f}, bare"
        f" {statistics.median(bare_tps):.1f}; harness/bare throughput (same requests):"
        f" {statistics.median(ratios):.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
