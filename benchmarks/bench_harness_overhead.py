"""Harness overhead: model calls/s and client CPU per call, replaying the griddag ReAct agent's
exact requests against the same mock server (its own process, zero latency, concurrency 32):
a bare aiohttp POST loop (the limit), the forkingpaths model alone, the whole forkingpaths runner
(agents, environments, records), bare openai SDK loops, and Inspect AI's model layer.
Interleaved rounds, medians. Targets: runner >= 0.9 of the bare aiohttp loop, >= 10x Inspect AI,
client CPU <= 0.8 ms per call."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from openai import AsyncOpenAI, DefaultAioHttpClient

sys.path.insert(0, str(Path(__file__).parent))
from _common import mock_server_process

from forkingpaths.core.chat import Message
from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.factory import make_model
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy
from forkingpaths.runner.episode import EpisodeRunner
from forkingpaths.runner.run import execute_run, plan_jobs

POLICY = "griddag-frontier"
Conversations = list[list[list[dict[str, str]]]]


def spec_for(base_url: str, trials: int) -> RunSpec:
    return RunSpec(
        benchmark="griddag",
        split="main",
        trials=trials,
        agent="react",
        model=f"openai-compat/{POLICY}",
        model_options=ModelOptions(base_url=base_url),
    )


async def capture_requests(spec: RunSpec) -> Conversations:
    """The exact message lists the ReAct agent sends, per episode, from an offline dry run."""
    bench = make_benchmark(spec.benchmark)
    conversations: Conversations = []
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


async def replay(
    conversations: Conversations,
    concurrency: int,
    call: Callable[[list[dict[str, str]]], Awaitable[Any]],
) -> int:
    """Each conversation's calls in order, `concurrency` conversations at once; calls made."""
    queue: asyncio.Queue[list[list[dict[str, str]]]] = asyncio.Queue()
    for conv in conversations:
        queue.put_nowait(conv)
    calls = 0

    async def worker() -> None:
        nonlocal calls
        while not queue.empty():
            for messages in queue.get_nowait():
                await call(messages)
                calls += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return calls


async def aiohttp_loop(base_url: str, conversations: Conversations, concurrency: int) -> int:
    """The floor of any client: one POST of the same JSON body, the answer parsed, nothing else."""
    url = base_url + "/chat/completions"
    headers = {"Content-Type": "application/json", "Authorization": "Bearer EMPTY"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def call(messages: list[dict[str, str]]) -> Any:
            body = json.dumps({"model": POLICY, "messages": messages, "temperature": 0.0})
            async with session.post(url, data=body.encode(), headers=headers) as response:
                answer = json.loads(await response.read())
            return answer["choices"][0]["message"]["content"]

        return await replay(conversations, concurrency, call)


async def model_loop(base_url: str, conversations: Conversations, concurrency: int) -> int:
    """forkingpaths' model object alone (limits, retries, usage, pricing; cache off)."""
    runtime = ModelRuntime(cache=False, concurrency=concurrency)
    model = make_model(f"openai-compat/{POLICY}", ModelOptions(base_url=base_url), runtime)

    async def call(messages: list[dict[str, str]]) -> Any:
        return await model.complete([Message(**m) for m in messages])

    try:
        return await replay(conversations, concurrency, call)
    finally:
        await model.aclose()  # type: ignore[attr-defined]


async def sdk_loop(
    base_url: str, conversations: Conversations, concurrency: int, *, aiohttp_transport: bool
) -> int:
    """A bare openai SDK loop: its default transport, or its aiohttp one."""
    http_client = DefaultAioHttpClient() if aiohttp_transport else None
    client = AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, http_client=http_client)

    async def call(messages: list[dict[str, str]]) -> Any:
        return await client.chat.completions.create(
            model=POLICY,
            messages=messages,  # type: ignore[arg-type]
            temperature=0,
        )

    try:
        return await replay(conversations, concurrency, call)
    finally:
        await client.close()


async def inspect_loop(base_url: str, conversations: Conversations, concurrency: int) -> int:
    """Inspect AI's model layer (`get_model(...).generate`) on the same OpenAI-compatible server."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        GenerateConfig,
        get_model,
    )

    os.environ["BENCH_API_KEY"] = "EMPTY"
    model = get_model(
        f"openai-api/bench/{POLICY}",
        base_url=base_url,
        config=GenerateConfig(temperature=0.0, max_connections=concurrency, max_retries=0),
    )
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}

    async def call(messages: list[dict[str, str]]) -> Any:
        chat = [kinds.get(m["role"], ChatMessageAssistant)(content=m["content"]) for m in messages]
        return await model.generate(chat)

    return await replay(conversations, concurrency, call)


async def runner_run(spec: RunSpec, concurrency: int) -> int:
    """The whole forkingpaths runner: agents, environments, records written, metrics."""
    with tempfile.TemporaryDirectory() as tmp:
        options = RunOptions(
            concurrency=concurrency, model_concurrency=concurrency, cache=False, progress=False
        )
        result = await execute_run(spec, options, runs_dir=Path(tmp), write_report=False)
    return int(result.metrics["usage"]["calls"])


def timed(coroutine: Awaitable[int]) -> tuple[int, float, float]:
    """Calls, wall seconds and this process's CPU seconds of one side."""
    start, cpu = time.perf_counter(), time.process_time()
    calls = asyncio.run(coroutine)  # type: ignore[arg-type]
    return calls, time.perf_counter() - start, time.process_time() - cpu


SIDES = (
    ("aiohttp", "bare aiohttp POST loop"),
    ("model", "forkingpaths model alone"),
    ("runner", "forkingpaths runner"),
    ("sdk_aiohttp", "bare openai SDK, aiohttp"),
    ("sdk", "bare openai SDK defaults"),
    ("inspect", "Inspect AI model layer"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=4, help="episodes per main instance")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians kept")
    parser.add_argument("--no-inspect", action="store_true", help="leave Inspect AI out")
    args = parser.parse_args()
    # Inspect logs each HTTP call at INFO; its handlers would otherwise time the terminal.
    logging.getLogger("inspect_ai").setLevel(logging.WARNING)
    sides = [s for s in SIDES if not (args.no_inspect and s[0] == "inspect")]
    rates: dict[str, list[float]] = {key: [] for key, _ in sides}
    cpu_ms: dict[str, list[float]] = {key: [] for key, _ in sides}
    with mock_server_process(latency_ms=0) as base_url:
        spec = spec_for(base_url, args.trials)
        conversations = asyncio.run(capture_requests(spec))
        n_requests = sum(len(c) for c in conversations)
        c = args.concurrency
        runs: dict[str, Callable[[Conversations], Awaitable[int]]] = {
            "aiohttp": lambda convs: aiohttp_loop(base_url, convs, c),
            "model": lambda convs: model_loop(base_url, convs, c),
            "runner": lambda convs: runner_run(spec, c),
            "sdk_aiohttp": lambda convs: sdk_loop(base_url, convs, c, aiohttp_transport=True),
            "sdk": lambda convs: sdk_loop(base_url, convs, c, aiohttp_transport=False),
            "inspect": lambda convs: inspect_loop(base_url, convs, c),
        }
        # Warm the server and each client once so no side pays first-request costs.
        for key, _ in sides:
            if key != "runner":
                asyncio.run(runs[key](conversations[:2]))  # type: ignore[arg-type]
        for _ in range(args.rounds):
            for key, _label in sides:
                calls, seconds, cpu = timed(runs[key](conversations))
                assert calls == n_requests, (key, calls, n_requests)
                rates[key].append(calls / seconds)
                cpu_ms[key].append(1000 * cpu / calls)
    med = {k: statistics.median(v) for k, v in rates.items()}
    cpu = {k: statistics.median(v) for k, v in cpu_ms.items()}
    print(f"episodes: {len(conversations)}   requests per side per round: {n_requests}")
    print(f"concurrency: {args.concurrency}   rounds: {args.rounds} (median shown, all in [])")
    print(f"{'side':28s}  {'calls/s':>8s}  {'client CPU/call':>15s}  rounds")
    for key, label in sides:
        runs_text = ", ".join(f"{r:.0f}" for r in rates[key])
        print(f"{label:28s}  {med[key]:8.1f}  {cpu[key]:12.2f} ms  [{runs_text}]")
    print(f"runner / bare aiohttp loop : {med['runner'] / med['aiohttp']:.3f}   (target >= 0.9)")
    print(f"model  / bare aiohttp loop : {med['model'] / med['aiohttp']:.3f}")
    print(f"runner / bare SDK defaults : {med['runner'] / med['sdk']:.2f}x")
    if "inspect" in med:
        print(
            f"runner / Inspect AI        : {med['runner'] / med['inspect']:.2f}x   (target >= 10x)"
        )
    print(
        f"client CPU per call, forkingpaths model: {cpu['model']:.2f} ms (target <= 0.8 ms;"
        f" bare aiohttp {cpu['aiohttp']:.2f} ms, SDK {cpu['sdk']:.2f} ms)"
    )


if __name__ == "__main__":
    main()
