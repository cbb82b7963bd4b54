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
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
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
LANGUAGES = ("python", "python3")
MAX_TIMEOUT_S = 3600.0
"""Longest `request_extensions.timeout` accepted."""

SANDBOX_KEY: web.AppKey[Sandbox] = web.AppKey("sandbox", Sandbox)


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


def _timeout(data: Mapping[str, Any]) -> float | None:
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
    if isinstance(value, bool) or not math.isfinite(seconds) or not 0 < seconds <= MAX_TIMEOUT_S:
        raise _BadRequest(
            f"request_extensions.timeout: expected 0 < seconds <= {MAX_TIMEOUT_S:g}, got {value!r}"
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
        timeout = _timeout(data)
    except _BadRequest as exc:
        return web.json_response(_refusal(src_uid, ARGUMENT_ERROR, str(exc)))
    sandbox = request.app[SANDBOX_KEY]
    try:
        result = await sandbox.run_program(program, timeout=timeout)
    except SandboxUnavailable as exc:
        return web.json_response(
            _refusal(src_uid, INTERNAL_ERROR, f"sandbox unavailable: {exc}"), status=500
        )
    return web.json_response(_answer(src_uid, program if spliced else "", result))


async def _health(request: web.Request) -> web.Response:
    sandbox = request.app[SANDBOX_KEY]
    return web.json_response({"status": "ok", "isolation": sandbox.isolation})


def make_app(sandbox: Sandbox) -> web.Application:
    """The aiohttp application: POST /submit, GET /health."""
    app = web.Application(client_max_size=32 * 1024 * 1024)
    app[SANDBOX_KEY] = sandbox
    app.router.add_post("/submit", _submit)
    app.router.add_get("/health", _health)
    return app


async def serve(port: int, sandbox: Sandbox, *, host: str = "127.0.0.1") -> None:
    """Serve `make_app(sandbox)` on host:port until cancelled (loopback unless told otherwise)."""
    await sandbox.start()
    runner = web.AppRunner(make_app(sandbox))
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
