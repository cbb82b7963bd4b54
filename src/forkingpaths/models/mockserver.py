"""Mock OpenAI-compatible server for every scripted policy, with injectable latency and faults."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from aiohttp import web
from pydantic import ValidationError
from rich.console import Console

from forkingpaths.core import registry
from forkingpaths.core.chat import Message, ModelParams, ScriptedPolicy
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.scripted import estimate_usage, load_policy

logger = logging.getLogger(__name__)

Fault = Literal["429", "500", "timeout", "malformed", "empty"]
FAULTS: tuple[str, ...] = get_args(Fault)
"""Faults the server can inject."""

_SCRIPTED_PREFIX = "scripted/"

STATS_PATH = "/v1/mock/stats"
"""`GET` answers MockStats as JSON: what a client in another process sent (its peak in-flight
requests shows whether its concurrency limit held)."""


@dataclass
class MockStats:
    """What the server has seen since it started."""

    requests: int = 0
    """Chat-completion requests received."""
    faulted: int = 0
    """Requests answered with an injected fault."""
    in_flight: int = 0
    """Chat-completion requests being handled now."""
    max_in_flight: int = 0
    """Most chat-completion requests handled at once (to check clients' concurrency limits)."""


class MockServer:
    """OpenAI-compatible server (`POST /v1/chat/completions`, `GET /v1/models`) answering with the
    scripted policies; the request's `model` may be `scripted/<policy>` or `<policy>`.

    Faults: each request is faulted with probability `error_rate`, drawn from a `random.Random`
    seeded with `seed`, so a sequential client sees the same sequence on every run. `fault` picks
    the kind: "429" (with `Retry-After: retry_after_s`), "500", "timeout" (holds the request for
    `timeout_sleep_s`, longer than any sane client timeout), "malformed" (200 with a broken JSON
    body) or "empty" (200 with `choices: []`). A fault without error_rate faults every request; an
    error_rate without fault injects 500s.
    """

    def __init__(
        self,
        latency_ms: float = 0,
        error_rate: float = 0.0,
        fault: str | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        retry_after_s: float = 0,
        timeout_sleep_s: float = 3600.0,
        latency_jitter_ms: float = 0,
    ) -> None:
        if not latency_ms >= 0:
            raise ConfigError(f"latency_ms must be >= 0, got {latency_ms!r}")
        if not 0.0 <= error_rate <= 1.0:
            raise ConfigError(f"error_rate must be between 0 and 1, got {error_rate!r}")
        if fault is not None and fault not in FAULTS:
            raise ConfigError(f"fault must be one of {', '.join(FAULTS)}, got {fault!r}")
        if not 0 <= port <= 65535:
            raise ConfigError(f"port must be in 0..65535 (0: any free port), got {port!r}")
        if not retry_after_s >= 0:
            raise ConfigError(f"retry_after_s must be >= 0, got {retry_after_s!r}")
        if not timeout_sleep_s > 0:
            raise ConfigError(f"timeout_sleep_s must be > 0, got {timeout_sleep_s!r}")
        if not 0 <= latency_jitter_ms <= latency_ms:
            raise ConfigError(
                f"latency_jitter_ms must be within [0, latency_ms={latency_ms}], "
                f"got {latency_jitter_ms!r}"
            )
        self.latency_s = latency_ms / 1000.0
        self.jitter_s = latency_jitter_ms / 1000.0
        # Its own stream, so jitter never shifts the seeded fault sequence.
        self._latency_rng = random.Random(seed + 1)
        self.fault: str | None = fault if fault is not None else ("500" if error_rate > 0 else None)
        self.error_rate = error_rate if error_rate > 0 or fault is None else 1.0
        self.host, self.port = host, port
        self.retry_after_s = retry_after_s
        self.timeout_sleep_s = timeout_sleep_s
        self.stats = MockStats()
        self._rng = random.Random(seed)
        self._policy_names: list[str] = []
        self._policies: dict[str, ScriptedPolicy] = {}
        self._runner: web.AppRunner | None = None
        self.base_url: str | None = None

    async def start(self) -> str:
        """Start listening; return the base URL (`http://host:port/v1`)."""
        if self._runner is not None:
            raise ConfigError("this MockServer is already running; stop() it first")
        # Resolve the policy names now, so a broken registry fails here and not per request.
        self._policy_names = sorted(registry.scripted_policy_table())
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get(STATS_PATH, self._stats)
        # No access log (it costs more than the request at benchmark rates); handlers are
        # cancelled when the client goes away, so a "timeout" fault does not outlive its client.
        runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError as err:
            await runner.cleanup()
            raise ConfigError(
                f"mock server cannot listen on {self.host}:{self.port} ({err.strerror or err});"
                " choose another --port, or 0 for any free one"
            ) from err
        self._runner = runner
        # With port 0 the OS picked one; read it back from the bound socket.
        self.port = int(runner.addresses[0][1])
        self.base_url = f"http://{self.host}:{self.port}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Stop listening and cancel requests in progress."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> MockServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _policy(self, model: str) -> ScriptedPolicy | None:
        name = model.removeprefix(_SCRIPTED_PREFIX)
        if name not in self._policy_names:
            return None
        if name not in self._policies:
            self._policies[name] = load_policy(name)
        return self._policies[name]

    async def _models(self, request: web.Request) -> web.Response:
        created = int(time.time())
        data = [
            {"id": f"{_SCRIPTED_PREFIX}{name}", "object": "model", "created": created,
             "owned_by": "forkingpaths"}
            for name in self._policy_names
        ]  # fmt: skip
        return web.json_response({"object": "list", "data": data})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(asdict(self.stats))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        stats = self.stats
        stats.requests += 1
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            if self.latency_s > 0:
                jitter = self._latency_rng.uniform(-self.jitter_s, self.jitter_s)
                await asyncio.sleep(self.latency_s + jitter)
            if self.fault is not None and self._rng.random() < self.error_rate:
                stats.faulted += 1
                return await self._faulted(self.fault)
            return await self._answer(request)
        finally:
            stats.in_flight -= 1

    async def _faulted(self, fault: str) -> web.StreamResponse:
        if fault == "429":
            return _error(
                429, "Rate limit reached (injected by the mock server).", "rate_limit_exceeded",
                headers={"Retry-After": _seconds(self.retry_after_s)},
            )  # fmt: skip
        if fault == "500":
            return _error(500, "Internal error (injected by the mock server).", "server_error")
        if fault == "timeout":
            await asyncio.sleep(self.timeout_sleep_s)
            return _error(504, "Gateway timeout (injected by the mock server).", "timeout")
        if fault == "malformed":
            broken = '{"id": "chatcmpl-broken", "choices": ['
            return web.Response(status=200, text=broken, content_type="application/json")
        return web.json_response(_completion_body("mock", "", 0, 0, choices=False))

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "Request body is not valid JSON.", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "Request body must be a JSON object.", "invalid_request_error")
        model = body.get("model")
        if not isinstance(model, str):
            return _error(400, "`model` is required.", "invalid_request_error", param="model")
        policy = self._policy(model)
        if policy is None:
            return _error(
                404,
                f"The model {model!r} does not exist. Available: "
                + ", ".join(f"{_SCRIPTED_PREFIX}{n}" for n in self._policy_names),
                "model_not_found",
                param="model",
            )
        try:
            messages = [Message.model_validate(m) for m in body.get("messages") or []]
            params = ModelParams(**_sampling_fields(body))
        except (ValidationError, TypeError) as err:
            return _error(400, f"Invalid request: {err}", "invalid_request_error")
        text = policy.respond(messages, params)
        usage = estimate_usage(messages, text)
        return web.json_response(
            _completion_body(model, text, usage.prompt_tokens, usage.completion_tokens)
        )


def _sampling_fields(body: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in ("temperature", "top_p", "seed", "reasoning_effort"):
        if body.get(name) is not None:
            fields[name] = body[name]
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None:
        fields["max_tokens"] = max_tokens
    return fields


def _completion_body(
    model: str,
    text: str,
    prompt_tokens: int,
    completion_tokens: int,
    *,
    choices: bool = True,
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ]
        if choices
        else [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error(
    status: int,
    message: str,
    code: str,
    *,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    kind = "invalid_request_error" if status < 500 and status != 429 else "server_error"
    if status == 429:
        kind = "requests"
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@contextmanager
def run_mock_server_in_thread(**kwargs: Any) -> Iterator[str]:
    """Run a MockServer (kwargs as its constructor's) on its own thread and event loop; yield its
    base URL. For sync code and benchmark scripts; stops the server on exit."""
    server = MockServer(**kwargs)
    loop = asyncio.new_event_loop()
    started: Future[str] = Future()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            started.set_result(loop.run_until_complete(server.start()))
        except BaseException as err:
            started.set_exception(err)
            loop.close()
            return
        loop.run_forever()
        loop.run_until_complete(server.stop())
        # Cancel what is left (a request held by a "timeout" fault) so the loop closes clean.
        leftovers = asyncio.all_tasks(loop)
        for task in leftovers:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=serve, name="forkingpaths-mockserver", daemon=True)
    thread.start()
    try:
        base_url = started.result()
        yield base_url
    finally:
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        thread.join()


def serve_forever(
    port: int = 8000,
    latency_ms: float = 0,
    latency_jitter_ms: float = 0,
    error_rate: float = 0.0,
    fault: str | None = None,
    seed: int = 0,
    host: str = "127.0.0.1",
) -> None:
    """Serve until Ctrl-C (for `forkingpaths mockserver`); prints the URL once started."""
    server = MockServer(
        latency_ms=latency_ms,
        latency_jitter_ms=latency_jitter_ms,
        error_rate=error_rate,
        fault=fault,
        seed=seed,
        host=host,
        port=port,
    )

    async def main() -> None:
        base_url = await server.start()
        Console().print(f"Mock OpenAI-compatible server at [bold]{base_url}[/] (Ctrl-C to stop)")
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    # Ctrl-C cancels main(), which stops the server; the interrupt itself is the normal way out.
    with suppress(KeyboardInterrupt):
        asyncio.run(main())
