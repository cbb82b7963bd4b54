"""The study's login, logout and admin routes: accounts, assignments and each person's queue."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from forkingpaths.core.errors import ConfigError
from forkingpaths.web.accounts import (
    MAX_PASSWORD_LENGTH,
    SESSION_COOKIE,
    STORE,
    NameTaken,
    SetupRefused,
    UnknownUser,
    User,
    check_kind,
    clear_session_cookie,
    current,
    json_error,
    require,
    set_session_cookie,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

WRONG_LOGIN = "name or password wrong"
"""The same answer for an unknown name and a wrong password: no one learns which names exist."""
MAX_BODY_BYTES = 1 << 20


def add_routes(app: web.Application) -> None:
    """Register `/api/study/auth/...`, `/api/study/admin/...` and `/api/study/queue`."""
    app.router.add_post("/api/study/auth/setup", _refusals(_setup))
    app.router.add_post("/api/study/auth/login", _refusals(_login))
    app.router.add_post("/api/study/auth/logout", _refusals(_logout))
    app.router.add_get("/api/study/auth/me", _refusals(_me))
    app.router.add_get("/api/study/admin/users", _refusals(_list_users))
    app.router.add_post("/api/study/admin/users", _refusals(_add_user))
    app.router.add_get("/api/study/admin/assignments", _refusals(_list_assignments))
    app.router.add_post("/api/study/admin/assign", _refusals(_assign))
    app.router.add_post("/api/study/admin/unassign", _refusals(_unassign))
    app.router.add_post("/api/study/admin/password", _refusals(_reset_password))
    app.router.add_get("/api/study/queue", _refusals(_queue))


def _refusals(handler: Handler) -> Handler:
    # The routes answer bad input with one JSON line on any app, with or without the viewer's
    # error middleware.
    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except NameTaken as exc:
            raise json_error(409, str(exc)) from None
        except UnknownUser as exc:
            raise json_error(404, str(exc)) from None
        except SetupRefused as exc:
            raise json_error(403, str(exc)) from None
        except ConfigError as exc:
            raise json_error(400, str(exc)) from None

    return wrapped


def _reply(payload: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(payload, status=status, headers={"Cache-Control": "no-store"})


async def _body(request: web.Request) -> dict[str, Any]:
    # JSON only: a form on another site cannot send application/json without the browser
    # asking this server first, which it never allows.
    if request.content_type != "application/json":
        raise ConfigError("body: send JSON with Content-Type: application/json")
    if (request.content_length or 0) > MAX_BODY_BYTES:
        raise ConfigError(f"body: larger than {MAX_BODY_BYTES} bytes")
    try:
        body = json.loads(await request.text())
    except (ValueError, UnicodeDecodeError):
        raise ConfigError("body: not valid JSON") from None
    if not isinstance(body, dict):
        raise ConfigError("body: give a JSON object")
    return body


def _signed_in(request: web.Request, user: User, token: str, csrf: str) -> web.Response:
    response = _reply({"user": user.public(), "csrf": csrf})
    set_session_cookie(response, request, token)
    return response


async def _setup(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    store = request.app[STORE]
    user = await asyncio.to_thread(
        store.setup_admin, body.get("token"), body.get("name"), body.get("password")
    )
    token, csrf = await asyncio.to_thread(store.open_session, user)
    return _signed_in(request, user, token, csrf)


async def _login(request: web.Request) -> web.StreamResponse:
    body = await _body(request)
    store = request.app[STORE]
    name, password = body.get("name"), body.get("password")
    name_key = name if isinstance(name, str) else ""
    ip = request.remote or "unknown"
    # The try counts as a failure from before its password is checked (argon2 takes a
    # while): tries sent at once meet the limit instead of all slipping under it.
    at = await asyncio.to_thread(store.begin_login, name_key, ip)
    if at is None:
        raise json_error(429, "login: too many failed tries; wait 15 minutes")
    oversize = isinstance(password, str) and len(password) > MAX_PASSWORD_LENGTH
    user = None if oversize else await asyncio.to_thread(store.check_password, name, password)
    if user is None:
        raise json_error(401, WRONG_LOGIN)
    await asyncio.to_thread(store.end_login, name_key, ip, at)
    await asyncio.to_thread(store.clear_failures, user.name)
    # A session cookie the browser still holds is ended, so two logins never share a browser.
    old = request.cookies.get(SESSION_COOKIE)
    if old:
        await asyncio.to_thread(store.close_session, old)
    token, csrf = await asyncio.to_thread(store.open_session, user)
    return _signed_in(request, user, token, csrf)


async def _logout(request: web.Request) -> web.StreamResponse:
    await require(request)
    await asyncio.to_thread(request.app[STORE].close_session, request.cookies[SESSION_COOKIE])
    response = _reply({"ok": True})
    clear_session_cookie(response, request)
    return response


async def _me(request: web.Request) -> web.StreamResponse:
    found = await current(request)
    if found is None:
        raise json_error(401, "session: not logged in; log in first")
    user, csrf = found
    return _reply({"user": user.public(), "csrf": csrf})


async def _list_users(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    users = await asyncio.to_thread(request.app[STORE].users)
    return _reply({"users": [u.public() for u in users]})


async def _add_user(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    body = await _body(request)
    user = await asyncio.to_thread(
        request.app[STORE].add_user, body.get("name"), body.get("password"), body.get("role")
    )
    return _reply({"user": user.public()}, status=201)


def _kind_param(request: web.Request) -> str | None:
    kind = request.query.get("kind")
    return check_kind(kind) if kind else None


async def _list_assignments(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    kind = _kind_param(request)
    rows = await asyncio.to_thread(
        request.app[STORE].assignments, request.query.get("user") or None, kind
    )
    return _reply({"assignments": [a.public() for a in rows]})


KIND_ROLES = {
    "play": "player",
    "summary": "player",
    "metric2": "annotator",
    "validity": "annotator",
}
"""Who does each kind of assignment (an admin may do any)."""
KIND_BENCHMARKS = {"metric2": "escape", "validity": "creativebench"}
"""The benchmark an annotation kind belongs to, when the admin names none."""

AssignCheck = Callable[[str, list[str]], None]
ASSIGN_CHECKS = web.AppKey("assign_checks", dict)
"""kind -> a check of (benchmark, items) that raises ConfigError naming what does not exist;
the play and annotation routes register theirs, so a typo is refused when it is assigned."""


def register_assign_check(app: web.Application, kind: str, check: AssignCheck) -> None:
    app.setdefault(ASSIGN_CHECKS, {})[kind] = check


async def _assign(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    body = await _body(request)
    store = request.app[STORE]
    kind = check_kind(body.get("kind"))
    benchmark = body.get("benchmark") or KIND_BENCHMARKS.get(kind)
    person = await asyncio.to_thread(store.user, body.get("user") or "")
    if person is None:
        raise UnknownUser(f"user: no account named {body.get('user')!r}")
    if person.role not in (KIND_ROLES[kind], "admin"):
        raise ConfigError(
            f"user: {person.name} is a {person.role}; {kind} is done by a {KIND_ROLES[kind]}"
        )
    items = body.get("items")
    check = request.app.get(ASSIGN_CHECKS, {}).get(kind)
    if check is not None and isinstance(items, list) and isinstance(benchmark, str):
        await asyncio.to_thread(check, benchmark, items)
    added = await asyncio.to_thread(store.assign, person.name, kind, benchmark, items)
    return _reply({"added": added})


async def _unassign(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    body = await _body(request)
    if not await asyncio.to_thread(request.app[STORE].unassign, body.get("id")):
        raise json_error(404, f"id: no assignment {body.get('id')!r}")
    return _reply({"removed": body.get("id")})


async def _reset_password(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    body = await _body(request)
    user = await asyncio.to_thread(
        request.app[STORE].reset_password, body.get("name"), body.get("password")
    )
    return _reply({"user": user.public()})


async def _queue(request: web.Request) -> web.StreamResponse:
    # Any role; always the caller's own assignments, whatever the query names.
    user = await require(request)
    kind = _kind_param(request)
    rows = await asyncio.to_thread(request.app[STORE].assignments, user.name, kind)
    return _reply({"assignments": [a.public() for a in rows]})
