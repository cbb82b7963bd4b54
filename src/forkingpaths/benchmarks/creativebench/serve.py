"""An AutoCodeBench-style HTTP execution service (`POST /submit`) backed by the sandbox.

Requests follow AutoCodeBench's MultiLanguageSandbox: `{"src_uid", "lang", "source_code"}`, or
`{"src_uid", "lang", "func_code", "main_code"}` (the program is `program_text(func_code,
main_code)`: `func_code` without its own top-level `if __name__ == "__main__":` block, a blank
line, `main_code`), with an optional `"request_extensions": {"timeout": seconds}`. Only Python
runs here (`lang` "python" or "python3"). Answers carry its field names: `src_uid`,
`all_code` (the joined program when it was spliced), `exec_cout` (stdout), `exec_outcome`,
`exec_compile_message`, `exec_runtime_message` and `response_extensions` (`outcome`, `stdout`,
`stderr`, `exec_runtime`, plus ours: `verdict`, `isolation`, `detail`).

`exec_outcome` maps our verdicts (`OUTCOMES`): PASSED, WRONG_ANSWER, TIME_LIMIT_EXCEEDED,
MEMORY_LIMIT_EXCEEDED and RUNTIME_ERROR keep their names (the ExecEval vocabulary AutoCodeBench
inherits); SYNTAX_ERROR becomes COMPILATION_ERROR, with the error in `exec_compile_message`.
Requests that cannot run (a missing field, another language, a bad timeout) answer
ARGUMENT_ERROR with the reason in `exec_runtime_message`; a failure of the sandbox itself answers
INTERNAL_ERROR with HTTP 500.

A program PASSES only when it exits with status 0 having run to its last line: one that exits
with status 0 earlier (`sys.exit(0)`, `os._exit(0)`) is a RUNTIME_ERROR, the reason in
`exec_runtime_message`.

The service guards itself (AutoCodeBench's own sandbox has none of this, so its clients need
the header added):

- Every request needs `Authorization: Bearer TOKEN`; without it, or with another token, the answer
  is 401 (the tokens compared in constant time).
- `request_extensions.timeout` is capped (`max_timeout`, by default the sandbox's wall limit but
  at least 30 s, what AutoCodeBench's clients ask for): a request asking for more is refused with
  HTTP 400 and ARGUMENT_ERROR, so that a few slow requests cannot hold every worker for an hour.
- At most `max_queue` requests wait for a worker (by default twice the workers) besides the
  `workers` that run; one more is refused with HTTP 503, BUSY and a `Retry-After` header.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from aiohttp import web

from forkingpaths.benchmarks.creativebench.sandbox import (
    ExecResult,
    Sandbox,
    SandboxUnavailable,
    Verdict,
    program_text,
)
from forkingpaths.core.errors import ConfigError, shown

log = logging.getLogger(__name__)

OUTCOMES: Mapping[Verdict, str] = MappingProxyType(
    {
        Verdict.PASSED: "PASSED",
        Verdict.WRONG_ANSWER: "WRONG_ANSWER",
        Verdict.TIME_LIMIT_EXCEEDED: "TIME_LIMIT_EXCEEDED",
        Verdict.MEMORY_LIMIT_EXCEEDED: "MEMORY_LIMIT_EXCEEDED",
        Verdict.RUNTIME_ERROR: "RUNTIME_ERROR",
        Verdict.SYNTAX_ERROR: "COMPILATION_ERROR",
    }
)
"""Our verdict -> AutoCodeBench's `exec_outcome`."""

ARGUMENT_ERROR = "ARGUMENT_ERROR"
INTERNAL_ERROR = "INTERNAL_ERROR"
BUSY = "BUSY"
LANGUAGES = ("python", "python3")
DEFAULT_MAX_TIMEOUT_S = 30.0
"""The least default cap on `request_extensions.timeout`: AutoCodeBench's clients ask for 30 s."""
RETRY_AFTER_S = 5
"""The `Retry-After` (seconds) of a 503 when every worker is busy and the queue is full."""
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@dataclass
class _Guard:
    """What a request is checked against, and how many requests hold or wait for a worker."""

    token: bytes
    max_timeout_s: float
    capacity: int
    """Requests admitted at once: the workers plus the queue."""
    admitted: int = 0


SANDBOX_KEY: web.AppKey[Sandbox] = web.AppKey("sandbox", Sandbox)
GUARD_KEY: web.AppKey[_Guard] = web.AppKey("guard", _Guard)


class _BadRequest(Exception):
    """The request cannot run; the message names the field and the value."""


def _program(data: Mapping[str, Any]) -> tuple[str, bool]:
    """The program to run and whether it was spliced from func_code and main_code."""
    if "source_code" in data:
        source = data["source_code"]
        if not isinstance(source, str) or not source:
            raise _BadRequest("source_code: expected a non-empty string")
        return source, False
    if "func_code" in data and "main_code" in data:
        parts = data["func_code"], data["main_code"]
        if not all(isinstance(part, str) for part in parts):
            raise _BadRequest("func_code and main_code: expected strings")
        return program_text(*parts), True
    raise _BadRequest("Missing required field: source_code (or func_code and main_code)")


class _OverCap(_BadRequest):
    """The request asks for more time than the server allows (HTTP 400)."""


def _timeout(data: Mapping[str, Any], cap: float) -> float | None:
    extensions = data.get("request_extensions") or {}
    if not isinstance(extensions, Mapping):
        raise _BadRequest("request_extensions: expected an object")
    value = extensions.get("timeout")
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise _BadRequest(f"request_extensions.timeout: expected seconds, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(seconds) or seconds <= 0:
        raise _BadRequest(f"request_extensions.timeout: expected seconds > 0, got {value!r}")
    if seconds > cap:
        raise _OverCap(
            f"request_extensions.timeout: {value!r} s is over this server's cap of {cap:g} s "
            "(serve --max-timeout)"
        )
    return seconds


def _answer(src_uid: Any, all_code: str, result: ExecResult) -> dict[str, Any]:
    outcome = OUTCOMES[result.verdict]
    failed = result.verdict != Verdict.PASSED
    compile_message = result.detail if result.verdict == Verdict.SYNTAX_ERROR else ""
    runtime_message = ""
    if failed and not compile_message:
        runtime_message = result.stderr_tail or result.detail
    return {
        "src_uid": src_uid,
        "all_code": all_code,
        "exec_cout": result.stdout_tail,
        "exec_outcome": outcome,
        "exec_compile_message": compile_message,
        "exec_runtime_message": runtime_message,
        "response_extensions": {
            "outcome": outcome,
            "stdout": result.stdout_tail,
            "stderr": result.stderr_tail,
            "exec_runtime": round(result.duration_s, 3),
            "verdict": str(result.verdict),
            "isolation": result.isolation,
            "detail": result.detail,
        },
    }


def _refusal(src_uid: Any, outcome: str, message: str) -> dict[str, Any]:
    return {
        "src_uid": src_uid,
        "all_code": "",
        "exec_cout": "",
        "exec_outcome": outcome,
        "exec_compile_message": "",
        "exec_runtime_message": message,
        "response_extensions": {"outcome": outcome},
    }


async def _submit(request: web.Request) -> web.Response:
    guard = request.app[GUARD_KEY]
    try:
        data = await request.json()
    except ValueError:
        return web.json_response(_refusal("", ARGUMENT_ERROR, "the body is not JSON"), status=400)
    if not isinstance(data, dict):
        return web.json_response(
            _refusal("", ARGUMENT_ERROR, "the body must be a JSON object"), status=400
        )
    src_uid = data.get("src_uid", "")
    try:
        if not src_uid:
            raise _BadRequest("Missing required field: src_uid")
        lang = data.get("lang")
        if not lang:
            raise _BadRequest("Missing required field: lang")
        if str(lang).lower() not in LANGUAGES:
            raise _BadRequest(f"lang: {lang!r} is not supported; this sandbox runs python only")
        program, spliced = _program(data)
        timeout = _timeout(data, guard.max_timeout_s)
    except _OverCap as exc:
        return web.json_response(_refusal(src_uid, ARGUMENT_ERROR, str(exc)), status=400)
    except _BadRequest as exc:
        return web.json_response(_refusal(src_uid, ARGUMENT_ERROR, str(exc)))
    sandbox = request.app[SANDBOX_KEY]
    if timeout is None and sandbox.limits.wall_s > guard.max_timeout_s:
        timeout = guard.max_timeout_s  # the sandbox's own default must not exceed the cap either
    if guard.admitted >= guard.capacity:
        waiting = guard.capacity - sandbox.workers
        message = (
            f"busy: {sandbox.workers} worker(s) running and {waiting} request(s) waiting "
            f"(serve --max-queue {waiting}); retry after {RETRY_AFTER_S} s"
        )
        return web.json_response(
            _refusal(src_uid, BUSY, message),
            status=503,
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    guard.admitted += 1  # no await since the check: no other request got in between
    try:
        result = await sandbox.run_program(program, timeout=timeout)
    except SandboxUnavailable as exc:
        return web.json_response(
            _refusal(src_uid, INTERNAL_ERROR, f"sandbox unavailable: {exc}"), status=500
        )
    finally:
        guard.admitted -= 1
    return web.json_response(_answer(src_uid, program if spliced else "", result))


async def _health(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX_KEY]
    return web.json_response({"status": "ok", "isolation": sandbox.isolation})


@web.middleware
async def _require_token(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """401 unless the request carries `Authorization: Bearer TOKEN` with this server's token."""
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    given = credentials.strip().encode("utf-8", "surrogatepass")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given, request.app[GUARD_KEY].token):
        return web.json_response(
            {
                "error": "unauthorized: send the header `Authorization: Bearer TOKEN` with the "
                "token that `forkingpaths creativebench serve` printed or was given"
            },
            status=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    return await handler(request)


def make_app(
    sandbox: Sandbox,
    *,
    token: str,
    max_timeout: float | None = None,
    max_queue: int | None = None,
) -> web.Application:
    """The aiohttp application: POST /submit, GET /health, each behind `token` (Bearer).

    `max_timeout` caps `request_extensions.timeout` (default: the sandbox's wall limit, at least
    `DEFAULT_MAX_TIMEOUT_S`); `max_queue` requests may wait for a worker (default: twice the
    workers), one more is answered 503.
    """
    if not isinstance(token, str) or not token.strip():
        raise ConfigError("token: expected a non-empty string")
    if max_timeout is None:
        max_timeout = max(sandbox.limits.wall_s, DEFAULT_MAX_TIMEOUT_S)
    if (
        isinstance(max_timeout, bool)
        or not isinstance(max_timeout, int | float)
        or not math.isfinite(max_timeout)
        or max_timeout <= 0
    ):
        raise ConfigError(f"max_timeout: expected seconds > 0, got {shown(max_timeout)}")
    if max_queue is None:
        max_queue = 2 * sandbox.workers
    if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 0:
        raise ConfigError(f"max_queue: expected a whole number >= 0, got {shown(max_queue)}")
    app = web.Application(client_max_size=32 * 1024 * 1024, middlewares=[_require_token])
    app[SANDBOX_KEY] = sandbox
    app[GUARD_KEY] = _Guard(
        token=token.strip().encode("utf-8", "surrogatepass"),
        max_timeout_s=float(max_timeout),
        capacity=sandbox.workers + max_queue,
    )
    app.router.add_post("/submit", _submit)
    app.router.add_get("/health", _health)
    return app


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(
    port: int,
    sandbox: Sandbox,
    *,
    token: str,
    host: str = "127.0.0.1",
    max_timeout: float | None = None,
    max_queue: int | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve `make_app(sandbox, ...)` on host:port until cancelled (loopback unless told
    otherwise); `ready` gets the URL (`http://HOST:PORT`, the port bound when 0) once it
    listens. ConfigError when it cannot listen there."""
    app = make_app(sandbox, token=token, max_timeout=max_timeout, max_queue=max_queue)
    await sandbox.start()
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            # asyncio words a bind error at length; the errno's own words are enough.
            errno = exc.errno if isinstance(exc.errno, int) and exc.errno > 0 else None
            reason = os.strerror(errno) if errno else exc.strerror or str(exc)
            where = _url(host, port).removeprefix("http://")
            raise ConfigError(f"cannot listen on {where} ({reason})") from None
        bound = runner.addresses[0][1] if runner.addresses else port
        if host not in LOOPBACK:
            log.warning(
                "serving on %s, beyond this machine: whoever reaches it with the token runs code "
                "in the sandbox",
                host,
            )
        if ready is not None:
            ready(_url(host, bound))
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
