"""Tests of the mock OpenAI-compatible server: shapes, errors, fault injection, thread runner."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from forkingpaths.core import registry
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.mockserver import MockServer, run_mock_server_in_thread

CHAT = {"messages": [{"role": "user", "content": "ping"}], "temperature": 0}


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def post(
    http: aiohttp.ClientSession, base_url: str, body: dict[str, Any]
) -> tuple[int, str, dict[str, str]]:
    async with http.post(f"{base_url}/chat/completions", json=body) as response:
        return response.status, await response.text(), dict(response.headers)


async def test_chat_completion_shape(http: aiohttp.ClientSession) -> None:
    async with MockServer() as server:
        assert server.base_url is not None and server.base_url.endswith("/v1")
        assert server.port != 0
        for model in ["echo", "scripted/echo"]:
            status, text, _ = await post(http, server.base_url, {**CHAT, "model": model})
            assert status == 200
            body = json.loads(text)
            assert body["object"] == "chat.completion" and body["model"] == model
            assert body["id"] and isinstance(body["created"], int)
            assert body["choices"][0]["message"] == {"role": "assistant", "content": "ping"}
            assert body["choices"][0]["finish_reason"] == "stop"
            usage = body["usage"]
            assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
            assert (usage["prompt_tokens"], usage["completion_tokens"]) == (2, 2)
        assert server.stats.requests == 2 and server.stats.faulted == 0


async def test_models_lists_every_scripted_policy(http: aiohttp.ClientSession) -> None:
    async with MockServer() as server, http.get(f"{server.base_url}/models") as response:
        body = await response.json()
    ids = {entry["id"] for entry in body["data"]}
    assert ids == {f"scripted/{name}" for name in registry.scripted_policy_table()}


async def test_unknown_model_is_an_openai_style_404(http: aiohttp.ClientSession) -> None:
    async with MockServer() as server:
        status, text, _ = await post(http, server.base_url, {**CHAT, "model": "gpt-9"})
    assert status == 404
    error = json.loads(text)["error"]
    assert error["code"] == "model_not_found" and error["param"] == "model"
    assert "'gpt-9'" in error["message"] and "scripted/echo" in error["message"]


async def test_bad_request_bodies_are_400s(http: aiohttp.ClientSession) -> None:
    async with MockServer() as server:
        async with http.post(f"{server.base_url}/chat/completions", data=b"{nope") as response:
            assert response.status == 400
        bad_role = {"model": "echo", "messages": [{"role": "wizard", "content": "x"}]}
        assert (await post(http, server.base_url, bad_role))[0] == 400


async def fault_pattern(http: aiohttp.ClientSession, **kwargs: Any) -> list[int]:
    async with MockServer(**kwargs) as server:
        return [
            (await post(http, server.base_url, {**CHAT, "model": "echo"}))[0] for _ in range(30)
        ]


async def test_fault_sequence_follows_the_seed(http: aiohttp.ClientSession) -> None:
    first = await fault_pattern(http, error_rate=0.3, seed=5)
    assert first == await fault_pattern(http, error_rate=0.3, seed=5)
    draws = random.Random(5)
    assert first == [500 if draws.random() < 0.3 else 200 for _ in range(30)]


async def test_fault_without_rate_faults_everything(http: aiohttp.ClientSession) -> None:
    assert set(await fault_pattern(http, fault="429")) == {429}


async def test_429_carries_retry_after(http: aiohttp.ClientSession) -> None:
    async with MockServer(fault="429", retry_after_s=3) as server:
        status, _, headers = await post(http, server.base_url, {**CHAT, "model": "echo"})
    assert status == 429 and headers["Retry-After"] == "3"


async def test_malformed_and_empty_faults(http: aiohttp.ClientSession) -> None:
    async with MockServer(fault="malformed") as server:
        status, text, _ = await post(http, server.base_url, {**CHAT, "model": "echo"})
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    async with MockServer(fault="empty") as server:
        status, text, _ = await post(http, server.base_url, {**CHAT, "model": "echo"})
    assert status == 200 and json.loads(text)["choices"] == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"error_rate": 1.5}, "error_rate"),
        ({"fault": "boom"}, "fault"),
        ({"latency_ms": -1}, "latency_ms"),
        ({"port": 70000}, "port"),
        ({"latency_ms": 10, "latency_jitter_ms": 20}, "latency_jitter_ms"),
    ],
)
def test_invalid_options_are_refused(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        MockServer(**kwargs)


def test_thread_runner_serves_sync_code_and_stops() -> None:
    with run_mock_server_in_thread(latency_ms=1) as base_url:
        request = urllib.request.Request(
            f"{base_url}/chat/completions",
            data=json.dumps({**CHAT, "model": "scripted/echo"}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response)["choices"][0]["message"]["content"] == "ping"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{base_url}/models", timeout=2)


async def test_busy_port_is_a_config_error() -> None:
    async with MockServer() as first:
        with pytest.raises(ConfigError, match="--port"):
            await MockServer(port=first.port).start()
