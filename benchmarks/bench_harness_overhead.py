"""Harness overhead: model calls/s through the runner vs. bare AsyncOpenAI loops replaying the
same requests against the same mock server (zero latency, concurrency 32). Target ratio >= 0.8
against the bare loop that takes the runner's own request path (messages via extra_body, the SDK's
aiohttp transport); the SDK-defaults loop is printed beside it."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI, DefaultAioHttpClient

sys.path.insert(0, str(Path(__file__).parent))
from _common import mock_server_process

from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy
from forkingpaths.runner.episode import EpisodeRunner
from forkingpaths.runner.run import execute_run, plan_jobs

POLICY = "griddag-frontier"


def spec_for(base_url: str, trials: int) -> RunSpec:
    return RunSpec(
        benchmark="griddag",
        split="main",
        trials=trials,
        agent="react",
        model=f"openai-compat/{POLICY}",
        model_options=ModelOptions(base_url=base_url),
    )


async def capture_requests(spec: RunSpec) -> list[list[list[dict[str, str]]]]:
    """The exact message lists the ReAct agent sends, per episode, from an offline dry run."""
    bench = make_benchmark(spec.benchmark)
    conversations: list[list[list[dict[str, str]]]] = []
    policy = load_policy(POLICY)

    class Recorder(ScriptedModel):
        async def complete(self, messages, params=None):  # type: ignore[no-untyped-def]
            current.append([m.model_dump() for m in messages])
            return await super().complete(messages, params)

    for job in plan_jobs(spec, bench):
        current: list[list[dict[str, str]]] = []
        model = Recorder(f"scripted/{POLICY}", policy, ModelRuntime(cache=False))
        runner = EpisodeRunner("capture", spec, bench, model, model._meter)
        await runner(job)
        conversations.append(current)
    return conversations


async def bare_loop(
    base_url: str, conversations, concurrency: int, *, bypass: bool, aiohttp: bool = False
) -> tuple[int, float]:
    http_client = DefaultAioHttpClient() if aiohttp else None
    client = AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, http_client=http_client)
    queue: asyncio.Queue = asyncio.Queue()
    for conv in conversations:
        queue.put_nowait(conv)
    calls = 0

    async def worker() -> None:
        nonlocal calls
        while not queue.empty():
            conv = queue.get_nowait()
            for messages in conv:
                if bypass:  # the extra_body route OpenAICompatModel takes (skip_sdk_transform)
                    await client.chat.completions.create(
                        model=POLICY, messages=[], temperature=0, extra_body={"messages": messages}
                    )
                else:
                    await client.chat.completions.create(
                        model=POLICY, messages=messages, temperature=0
                    )
                calls += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    await client.close()
    return calls, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=4, help="episodes per main instance")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians kept")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"typed": [], "extra_body": [], "aiohttp": [], "runner": []}
    with mock_server_process(latency_ms=0) as base_url:
        spec = spec_for(base_url, args.trials)
        conversations = asyncio.run(capture_requests(spec))
        n_requests = sum(len(c) for c in conversations)
        # Warm the server once so neither side pays its first-request costs.
        asyncio.run(bare_loop(base_url, conversations[:2], 2, bypass=True))
        for _ in range(args.rounds):
            calls, seconds = asyncio.run(
                bare_loop(base_url, conversations, args.concurrency, bypass=False)
            )
            rates["typed"].append(calls / seconds)
            calls, seconds = asyncio.run(
                bare_loop(base_url, conversations, args.concurrency, bypass=True)
            )
            rates["extra_body"].append(calls / seconds)
            calls, seconds = asyncio.run(
                bare_loop(base_url, conversations, args.concurrency, bypass=True, aiohttp=True)
            )
            rates["aiohttp"].append(calls / seconds)
            with tempfile.TemporaryDirectory() as tmp:
                options = RunOptions(
                    concurrency=args.concurrency,
                    model_concurrency=args.concurrency,
                    cache=False,
                    progress=False,
                )
                start = time.perf_counter()
                result = asyncio.run(
                    execute_run(spec, options, runs_dir=Path(tmp), write_report=False)
                )
                seconds = time.perf_counter() - start
            assert result.metrics["usage"]["calls"] == n_requests
            rates["runner"].append(n_requests / seconds)
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"episodes: {len(conversations)}   requests per side per round: {n_requests}")
    print(f"concurrency: {args.concurrency}   rounds: {args.rounds} (median shown, all in [])")
    for label, key in (
        ("bare SDK defaults", "typed"),
        ("bare SDK, extra_body", "extra_body"),
        ("bare SDK, extra_body+aiohttp", "aiohttp"),
        ("forkingpaths runner", "runner"),
    ):
        runs = ", ".join(f"{r:.0f}" for r in rates[key])
        print(f"{label:29s}: {med[key]:7.1f} calls/s  [{runs}]")
    print(f"ratio runner / bare SDK defaults        : {med['runner'] / med['typed']:.3f}")
    print(f"ratio runner / bare extra_body          : {med['runner'] / med['extra_body']:.3f}")
    print(
        f"ratio runner / bare extra_body+aiohttp  : {med['runner'] / med['aiohttp']:.3f}"
        "   (target >= 0.8; the same request path as the runner's client)"
    )


if __name__ == "__main__":
    main()
