"""Tests of OpenAICompatModel against the real MockServer: faults, retries, limits, cache."""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.core.chat import ChatRequest, Completion, Message, ModelParams
from forkingpaths.core.errors import ModelError
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import make_model
from forkingpaths.models.mockserver import MockServer, run_mock_server_in_thread
from forkingpaths.models.openai_compat import MalformedResponse, OpenAICompatModel
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import estimate_usage
from forkingpaths.models.usage import UsageMeter

HELLO = [Message(role="system", content="Be brief."), Message(role="user", content="hello there")]

StartServer = Callable[..., Awaitable[MockServer]]


@pytest.fixture
async def serve() -> AsyncIterator[StartServer]:
    """Start MockServers in-process; stop them all after the test."""
    servers: list[MockServer] = []

    async def start(**kwargs: Any) -> MockServer:
        server = MockServer(**kwargs)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


def runtime(tmp_path: Path, **overrides: Any) -> ModelRuntime:
    """Fast settings: tiny backoff, cache off unless asked, cache file inside tmp_path."""
    settings: dict[str, Any] = {
        "cache": False,
        "cache_path": tmp_path / "responses.sqlite",
        "max_retries": 3,
        "retry_base_delay_s": 0.001,
        "retry_max_delay_s": 0.01,
        "request_timeout_s": 10.0,
        "jitter_seed": 0,
        "prices_path": None,
    }
    settings.update(overrides)
    return ModelRuntime(**settings)


# Models built by `compat`, closed after each test so no HTTP session outlives its event loop.
_BUILT: list[OpenAICompatModel] = []


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    for model in list(_BUILT):
        await model.aclose()
    _BUILT.clear()


def compat(server: MockServer, rt: ModelRuntime, policy: str = "echo") -> OpenAICompatModel:
    model = make_model(f"openai-compat/{policy}", ModelOptions(base_url=server.base_url), rt)
    assert isinstance(model, OpenAICompatModel)
    _BUILT.append(model)
    return model


@pytest.fixture(autouse=True)
def _no_user_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORKINGPATHS_PRICES", raising=False)


async def test_normal_call_returns_text_and_usage(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    completion = await compat(server, runtime(tmp_path)).complete(HELLO)
    expected_usage = estimate_usage(HELLO, "hello there")
    assert completion == Completion(
        text="hello there",
        model="openai-compat/echo",
        usage=expected_usage,
        latency_s=completion.latency_s,
        cost_usd=0.0,
        cached=False,
        attempts=1,
        finish_reason="stop",
        request=ChatRequest(model="openai-compat/echo", messages=HELLO, params=ModelParams()),
    )
    assert completion.latency_s > 0
    assert server.stats.requests == 1


async def test_scripted_prefix_reaches_the_same_policy(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    model = make_model(
        "openai-compat/scripted/echo", ModelOptions(base_url=server.base_url), runtime(tmp_path)
    )
    assert (await model.complete(HELLO)).text == "hello there"


def test_request_body_sends_set_params_only(tmp_path: Path) -> None:
    model = OpenAICompatModel(
        "openai-compat/m",
        model_name="m",
        base_url="http://localhost:1/v1",
        api_key="EMPTY",
        runtime=runtime(tmp_path),
    )
    plain = model.request_body(HELLO, ModelParams())
    assert plain == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello there"},
        ],
        "temperature": 0.0,
    }
    full = model.request_body(
        HELLO,
        ModelParams(
            temperature=0.3,
            max_tokens=64,
            top_p=0.9,
            seed=11,
            reasoning_effort="low",
            extra={"top_k": 20},
        ),
    )
    assert full["max_tokens"] == 64 and full["top_p"] == 0.9 and full["seed"] == 11
    # Extras go at the top level of the body, as the SDK merges `extra_body`.
    assert full["reasoning_effort"] == "low" and full["top_k"] == 20


def first_faulted_seed(rate: float) -> int:
    """A seed whose first draw faults, so the first attempt surely fails."""
    return next(s for s in range(1000) if random.Random(s).random() < rate)


async def test_rate_limited_call_recovers(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="429", error_rate=0.5, seed=first_faulted_seed(0.5))
    completion = await compat(server, runtime(tmp_path, max_retries=10)).complete(HELLO)
    assert completion.text == "hello there"
    assert completion.attempts > 1
    assert completion.attempts == server.stats.requests
    assert server.stats.faulted == completion.attempts - 1


async def test_persistent_500_exhausts_retries(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="500")
    meter = UsageMeter()
    model = compat(server, runtime(tmp_path, max_retries=3, meter=meter))
    with pytest.raises(ModelError) as caught:
        await model.complete(HELLO)
    assert server.stats.requests == 4
    message = str(caught.value)
    assert "openai-compat/echo" in message and "4 attempt(s)" in message
    assert "InternalServerError" in message
    assert (meter.calls, meter.failed_calls) == (0, 1)


async def test_error_rate_without_fault_injects_500s(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(error_rate=1.0)
    with pytest.raises(ModelError, match="InternalServerError"):
        await compat(server, runtime(tmp_path, max_retries=1)).complete(HELLO)
    assert server.stats.requests == 2


async def test_timeouts_are_retried_then_fail(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="timeout", timeout_sleep_s=30)
    model = compat(server, runtime(tmp_path, max_retries=1, request_timeout_s=0.2))
    with pytest.raises(ModelError, match="APITimeoutError"):
        await model.complete(HELLO)
    assert server.stats.requests == 2


async def test_malformed_bodies_are_retried_then_fail(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="malformed")
    with pytest.raises(ModelError) as caught:
        await compat(server, runtime(tmp_path, max_retries=2)).complete(HELLO)
    assert isinstance(caught.value.__cause__, MalformedResponse)
    assert server.stats.requests == 3


async def test_malformed_then_good_recovers(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="malformed", error_rate=0.5, seed=first_faulted_seed(0.5))
    completion = await compat(server, runtime(tmp_path, max_retries=10)).complete(HELLO)
    assert completion.text == "hello there" and completion.attempts > 1


async def test_empty_choices_are_retried_then_fail(serve: StartServer, tmp_path: Path) -> None:
    # A server answering no choice at all is broken; scoring it as the agent's move would make
    # an infrastructure failure read as an agent failure.
    server = await serve(fault="empty")
    with pytest.raises(ModelError, match="empty `choices`"):
        await compat(server, runtime(tmp_path, max_retries=2)).complete(HELLO)
    assert server.stats.requests == 3


async def test_unreachable_endpoint_fails_after_retries(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is closed again: nothing listens there.
    model = make_model(
        "openai-compat/echo",
        ModelOptions(base_url=f"http://127.0.0.1:{port}/v1"),
        runtime(tmp_path, max_retries=2),
    )
    # The SDK's aiohttp transport calls a refused connection a timeout; the cause names it.
    refused = r"3 attempt\(s\).*(APIConnectionError|Connect call failed)"
    with pytest.raises(ModelError, match=refused):
        await model.complete(HELLO)


async def test_unknown_model_is_not_retried(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    model = compat(server, runtime(tmp_path), policy="no-such-policy")
    with pytest.raises(ModelError, match="not retryable") as caught:
        await model.complete(HELLO)
    assert "does not exist" in str(caught.value)
    assert server.stats.requests == 1


async def test_concurrency_limit_bounds_requests_in_flight(
    serve: StartServer, tmp_path: Path
) -> None:
    server = await serve(latency_ms=50)
    model = compat(server, runtime(tmp_path, concurrency=4))
    answers = await asyncio.gather(
        *(model.complete([Message(role="user", content=f"q{i}")]) for i in range(20))
    )
    assert [a.text for a in answers] == [f"q{i}" for i in range(20)]
    assert server.stats.requests == 20
    assert 1 < server.stats.max_in_flight <= 4


async def test_without_a_tight_limit_requests_overlap_more(
    serve: StartServer, tmp_path: Path
) -> None:
    # Control for the test above: the server does observe overlap beyond 4 when allowed.
    server = await serve(latency_ms=50)
    model = compat(server, runtime(tmp_path, concurrency=32))
    await asyncio.gather(*(model.complete([Message(role="user", content="q")]) for _ in range(20)))
    assert server.stats.max_in_flight > 4


async def test_cache_replays_temperature_zero_calls(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    meter = UsageMeter()
    model = compat(server, runtime(tmp_path, cache=True, meter=meter))
    first = await model.complete(HELLO, ModelParams(temperature=0))
    second = await model.complete(HELLO, ModelParams(temperature=0))
    assert server.stats.requests == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.usage == first.usage
    assert (second.latency_s, second.cost_usd, second.attempts) == (0.0, 0.0, 0)
    assert (meter.calls, meter.cached_calls) == (2, 1)
    assert meter.prompt_tokens == first.usage.prompt_tokens

    # Another model object on the same file (another process, a later run) hits it too.
    again = compat(server, runtime(tmp_path, cache=True))
    assert (await again.complete(HELLO)).cached
    assert server.stats.requests == 1


async def test_cache_key_covers_params(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    model = compat(server, runtime(tmp_path, cache=True))
    await model.complete(HELLO, ModelParams(seed=1))
    other = await model.complete(HELLO, ModelParams(seed=2))
    assert not other.cached and server.stats.requests == 2


async def test_sampled_calls_bypass_the_cache(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    model = compat(server, runtime(tmp_path, cache=True))
    hot = ModelParams(temperature=0.7)
    results = [await model.complete(HELLO, hot) for _ in range(2)]
    assert not any(r.cached for r in results)
    assert server.stats.requests == 2


async def test_cache_off_bypasses_the_cache(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    model = compat(server, runtime(tmp_path, cache=False))
    results = [await model.complete(HELLO) for _ in range(2)]
    assert not any(r.cached for r in results)
    assert server.stats.requests == 2
    assert not (tmp_path / "responses.sqlite").exists()


async def test_failed_calls_are_not_cached(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="empty")
    model = compat(server, runtime(tmp_path, cache=True, max_retries=0))
    for _ in range(2):
        with pytest.raises(ModelError):
            await model.complete(HELLO)
    assert server.stats.requests == 2


async def test_concurrent_identical_calls_share_the_cache(
    serve: StartServer, tmp_path: Path
) -> None:
    server = await serve(latency_ms=5)
    model = compat(server, runtime(tmp_path, cache=True))
    answers = await asyncio.gather(*(model.complete(HELLO) for _ in range(30)))
    assert {a.text for a in answers} == {"hello there"}
    # Racing misses may each ask the server; whichever stored last, the entry now answers.
    assert (await model.complete(HELLO)).cached
    assert server.stats.requests <= 30


async def test_cost_comes_from_the_price_table(serve: StartServer, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("schema_version: 1\nmodels:\n  echo: {input: 1.0, output: 2.0}\n")
    server = await serve()
    model = compat(server, runtime(tmp_path, prices_path=prices))
    completion = await model.complete(HELLO)
    usage = completion.usage
    expected = (usage.prompt_tokens * 1.0 + usage.completion_tokens * 2.0) / 1_000_000
    assert completion.cost_usd == pytest.approx(expected)


async def test_meter_totals_over_several_calls(serve: StartServer, tmp_path: Path) -> None:
    server = await serve()
    meter = UsageMeter()
    model = compat(server, runtime(tmp_path, cache=True, meter=meter))
    questions = ["one", "two two", "three three three"]
    live = [await model.complete([Message(role="user", content=q)]) for q in questions]
    await model.complete([Message(role="user", content="one")])  # a cache hit
    assert (meter.calls, meter.cached_calls, meter.failed_calls) == (4, 1, 0)
    assert meter.prompt_tokens == sum(c.usage.prompt_tokens for c in live)
    assert meter.completion_tokens == sum(c.usage.completion_tokens for c in live)
    assert meter.cost_usd == 0.0


async def test_retries_leave_the_global_rng_alone(serve: StartServer, tmp_path: Path) -> None:
    server = await serve(fault="500")
    random.seed(1234)
    state = random.getstate()
    with pytest.raises(ModelError):
        await compat(server, runtime(tmp_path, max_retries=3, jitter_seed=None)).complete(HELLO)
    assert random.getstate() == state


def test_one_model_serves_successive_event_loops(tmp_path: Path) -> None:
    with run_mock_server_in_thread(latency_ms=1) as base_url:
        # Built outside any loop, then used from two loops in turn, as sync callers do.
        model = make_model(
            "openai-compat/echo", ModelOptions(base_url=base_url), runtime(tmp_path, concurrency=2)
        )

        async def burst() -> list[str]:
            calls = (model.complete([Message(role="user", content=f"{i}")]) for i in range(5))
            texts = [c.text for c in await asyncio.gather(*calls)]
            await model.aclose()  # each loop releases its session; the next one reopens it
            return texts

        assert asyncio.run(burst()) == ["0", "1", "2", "3", "4"]
        assert asyncio.run(burst()) == ["0", "1", "2", "3", "4"]
