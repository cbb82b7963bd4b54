"""The thin HTTP client sends what the openai SDK sends for the same calls, and reads errors
the way the SDK's classification did (a capture server on loopback answers both)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import make_model
from forkingpaths.models.http_json import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    InternalServerError,
    JSONEndpoint,
    MalformedResponse,
    RateLimitError,
    status_error,
)
from forkingpaths.models.openai_compat import (
    OpenAICompatModel,
    classify_http_error,
    classify_openai_error,
)
from forkingpaths.models.retry import Verdict
from forkingpaths.models.runtime import ModelRuntime

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}
EMBEDDINGS = {
    "object": "list",
    "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}],
    "model": "e",
    "usage": {"prompt_tokens": 1, "total_tokens": 1},
}


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Capture:
    base_url: str
    seen: list[Seen] = field(default_factory=list)
    answer: tuple[int, bytes, dict[str, str]] | None = None
    """Status, body and headers every request gets; None: a normal answer for its path."""


@pytest.fixture
async def capture() -> AsyncIterator[Capture]:
    state = Capture(base_url="")

    async def handle(request: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        state.seen.append(Seen(request.path, headers, await request.read()))
        if state.answer is not None:
            status, body, headers = state.answer
            return web.Response(status=status, body=body, headers=headers)
        answer = EMBEDDINGS if request.path.endswith("/embeddings") else COMPLETION
        return web.json_response(answer)

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.base_url = f"http://127.0.0.1:{port}/v1"
    yield state
    await runner.cleanup()


def runtime(tmp_path: Path) -> ModelRuntime:
    return ModelRuntime(cache=False, cache_path=tmp_path / "c.sqlite", max_retries=0)


HISTORY = [
    Message(role="system", content="You explore a grid. Answer with one action."),
    Message(role="user", content='Observation: "north" is open; é, 日本, emoji 🙂, tab\t, \\ done'),
    Message(role="assistant", content="Action: move north"),
    Message(role="user", content="Observation: a wall.\nWhat now?"),
]

CASES: list[tuple[str, ModelParams]] = [
    ("defaults", ModelParams()),
    ("sampled", ModelParams(temperature=0.7, top_p=0.9, seed=3, max_tokens=128)),
    ("reasoning", ModelParams(temperature=1.0, reasoning_effort="low")),
    ("extras", ModelParams(extra={"top_k": 20, "chat_template_kwargs": {"thinking": False}})),
]


async def sdk_send(
    base_url: str, key: str, model: str, messages: list[Message], kwargs: dict[str, Any]
) -> None:
    """The call as a user of the openai SDK writes it."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)
    try:
        await client.chat.completions.create(
            model=model, messages=[m.model_dump() for m in messages], **kwargs
        )  # type: ignore[call-overload]
    finally:
        await client.close()


def sdk_kwargs(params: ModelParams, max_tokens_field: str) -> dict[str, Any]:
    kwargs = params.request_fields(max_tokens_field)
    if params.extra:
        kwargs["extra_body"] = dict(params.extra)
    return kwargs


@pytest.mark.parametrize(("case", "params"), CASES, ids=[c for c, _ in CASES])
@pytest.mark.parametrize("provider", ["openai-compat", "openai"])
async def test_request_bodies_equal_the_sdks(
    capture: Capture,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    params: ModelParams,
    provider: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    options = ModelOptions(base_url=capture.base_url)
    model = make_model(f"{provider}/gpt-x", options, runtime(tmp_path))
    assert isinstance(model, OpenAICompatModel)
    try:
        completion = await model.complete(HISTORY, params)
    finally:
        await model.aclose()
    assert completion.text == "ok" and completion.usage.prompt_tokens == 3
    key = "sk-test" if provider == "openai" else "EMPTY"
    # `openai/` models name the token limit as OpenAI's reasoning models require.
    field_name = "max_completion_tokens" if provider == "openai" else "max_tokens"
    await sdk_send(capture.base_url, key, "gpt-x", HISTORY, sdk_kwargs(params, field_name))
    ours, sdks = capture.seen
    assert ours.path == sdks.path == "/v1/chat/completions"
    assert json.loads(ours.body) == json.loads(sdks.body)
    # Same encoding too (compact separators, UTF-8 rather than \\u escapes): the same bytes,
    # in another key order.
    assert sorted(ours.body) == sorted(sdks.body)
    for header in ("authorization", "content-type"):
        assert ours.headers[header] == sdks.headers[header]


async def test_embeddings_body_equals_the_sdks(capture: Capture) -> None:
    endpoint = JSONEndpoint(capture.base_url, api_key="EMPTY", timeout_s=10)
    body = {"model": "e", "input": ["déjà vu"], "encoding_format": "float"}
    try:
        assert (await endpoint.post("/embeddings", body))["data"][0]["embedding"] == [0.5, 0.25]
    finally:
        await endpoint.aclose()
    client = openai.AsyncOpenAI(base_url=capture.base_url, api_key="EMPTY", max_retries=0)
    try:
        await client.embeddings.create(model="e", input=["déjà vu"], encoding_format="float")
    finally:
        await client.close()
    ours, sdks = capture.seen
    assert ours.path == sdks.path and json.loads(ours.body) == json.loads(sdks.body)


async def test_account_headers_go_with_every_request(
    capture: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    model = make_model("openai/gpt-x", ModelOptions(base_url=capture.base_url), runtime(tmp_path))
    try:
        await model.complete(HISTORY)
    finally:
        await model.aclose()  # type: ignore[attr-defined]
    await sdk_send(capture.base_url, "sk-test", "gpt-x", HISTORY, {})
    ours, sdks = capture.seen
    for header in ("openai-organization", "openai-project", "authorization"):
        assert ours.headers[header] == sdks.headers[header]


def test_openai_models_default_to_openais_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = make_model("openai/gpt-x", ModelOptions(), runtime(tmp_path))
    assert isinstance(model, OpenAICompatModel)
    assert model.endpoint_url == "https://api.openai.com/v1"
    # Like the SDK, $OPENAI_BASE_URL moves it; the cache key keeps base_url None either way.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    moved = make_model("openai/gpt-x", ModelOptions(), runtime(tmp_path))
    assert isinstance(moved, OpenAICompatModel)
    assert (moved.endpoint_url, moved.base_url) == ("http://127.0.0.1:9/v1", None)


@pytest.mark.parametrize(
    ("status", "body", "headers", "kind", "verdict"),
    [
        (500, b'{"error": {"message": "boom"}}', {}, InternalServerError, Verdict(retry=True)),
        (503, b"<html>busy</html>", {}, InternalServerError, Verdict(retry=True)),
        (408, b"", {}, APIStatusError, Verdict(retry=True)),
        (
            429,
            b'{"error": {"message": "slow down"}}',
            {"retry-after-ms": "1500"},
            RateLimitError,
            Verdict(retry=True, retry_after_s=1.5, throttled=True),
        ),
        (401, b'{"error": {"message": "bad key"}}', {}, AuthenticationError, Verdict(retry=False)),
        (
            400,
            b'{"error": {"code": "context_length_exceeded", "message": "too long"}}',
            {},
            BadRequestError,
            Verdict(retry=False, context_exceeded=True),
        ),
        (
            400,
            b'{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}',
            {},
            BadRequestError,
            Verdict(retry=False, context_exceeded=True),
        ),
        (
            400,
            b'{"error": {"code": 400, "message": "the request exceeds the available context'
            b' size, try increasing it", "type": "exceed_context_size_error"}}',
            {},
            BadRequestError,
            Verdict(retry=False, context_exceeded=True),
        ),
    ],
)
async def test_error_answers_get_the_sdks_verdicts(
    capture: Capture,
    status: int,
    body: bytes,
    headers: dict[str, str],
    kind: type[APIStatusError],
    verdict: Verdict,
) -> None:
    capture.answer = (status, body, headers)
    endpoint = JSONEndpoint(capture.base_url, api_key="EMPTY", timeout_s=10)
    try:
        with pytest.raises(APIStatusError) as caught:
            await endpoint.post("/chat/completions", {"model": "m", "messages": []})
    finally:
        await endpoint.aclose()
    assert type(caught.value) is kind and caught.value.status_code == status
    assert classify_http_error(caught.value) == verdict
    # The SDK's error for the same answer gets the same verdict.
    client = openai.AsyncOpenAI(base_url=capture.base_url, api_key="EMPTY", max_retries=0)
    try:
        with pytest.raises(openai.APIStatusError) as sdk_caught:
            await client.chat.completions.create(model="m", messages=[])
    finally:
        await client.close()
    assert classify_openai_error(sdk_caught.value) == verdict
    if b'"message"' in body:  # an OpenAI-shaped body: worded as the SDK words it
        assert str(caught.value) == str(sdk_caught.value)


async def test_a_body_that_is_not_json_is_malformed_and_retried(capture: Capture) -> None:
    capture.answer = (200, b"{not json", {"Content-Type": "application/json"})
    endpoint = JSONEndpoint(capture.base_url, api_key=None, timeout_s=10)
    try:
        with pytest.raises(MalformedResponse) as caught:
            await endpoint.post("/chat/completions", {})
    finally:
        await endpoint.aclose()
    assert classify_http_error(caught.value) == Verdict(retry=True)
    assert "authorization" not in capture.seen[0].headers


async def test_an_html_page_is_named_in_the_error(capture: Capture) -> None:
    capture.answer = (200, b"<html><body>Sign in</body></html>", {"Content-Type": "text/html"})
    endpoint = JSONEndpoint(capture.base_url, api_key=None, timeout_s=10)
    try:
        with pytest.raises(MalformedResponse, match=r"HTTP 200, text/html.*Sign in"):
            await endpoint.post("/chat/completions", {})
    finally:
        await endpoint.aclose()


async def test_a_redirect_is_not_followed_and_names_where_it_points(capture: Capture) -> None:
    capture.answer = (301, b"", {"Location": "https://example.invalid/v1/chat/completions"})
    endpoint = JSONEndpoint(capture.base_url, api_key=None, timeout_s=10)
    try:
        with pytest.raises(APIStatusError, match=r"redirect to https://example\.invalid") as caught:
            await endpoint.post("/chat/completions", {})
    finally:
        await endpoint.aclose()
    assert len(capture.seen) == 1  # the POST only: nothing re-sent, nothing sent elsewhere
    assert classify_http_error(caught.value) == Verdict(retry=False)


async def test_a_refused_connection_is_retried() -> None:
    endpoint = JSONEndpoint("http://127.0.0.1:9/v1", api_key=None, timeout_s=10)
    try:
        with pytest.raises(APIConnectionError) as caught:
            await endpoint.post("/chat/completions", {})
    finally:
        await endpoint.aclose()
    assert classify_http_error(caught.value) == Verdict(retry=True)


def test_an_unrelated_exception_is_not_an_api_error() -> None:
    # A bug in our code must propagate, not be retried as an outage.
    assert classify_http_error(KeyError("x")) is None
    assert status_error(418, b"teapot", {}).body == "teapot"
