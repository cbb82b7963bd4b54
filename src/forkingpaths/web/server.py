"""The viewer's read-only HTTP server (aiohttp): the app, each benchmark's view, `Viewer`'s JSON."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from forkingpaths.core.errors import ForkingPathsError
from forkingpaths.core.registry import benchmark_class, benchmark_names
from forkingpaths.web.data import NotFound, Viewer

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
"""The app: index.html, its ES modules and its stylesheet."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'none'"
)
"""No inline script and nothing from elsewhere: a model's text that slipped past escaping still
could not run."""

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}

VIEWER = web.AppKey("viewer", Viewer)
"""The application's Viewer."""
STATIC_FILES = web.AppKey("static_files", dict)
"""The app's files by name: only these are served (never a path built from the URL)."""
HOSTS = web.AppKey("hosts", frozenset)
"""Host names a request may address (empty: any); see `make_app`."""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def make_app(viewer: Viewer, host: str = "127.0.0.1") -> web.Application:
    """The web application over a Viewer (tests drive it with aiohttp's test client). Served
    on a loopback address, it answers only requests addressed to a loopback name, so a web page
    whose own name was pointed at 127.0.0.1 (DNS rebinding) cannot read the runs."""
    app = web.Application(middlewares=[_errors, _hosts])
    app[VIEWER] = viewer
    app[STATIC_FILES] = {
        p.name: p for p in STATIC_DIR.iterdir() if p.is_file() and p.suffix in _TYPES
    }
    app[HOSTS] = LOOPBACK_NAMES | {host} if host in LOOPBACK_NAMES else frozenset()
    app.on_response_prepare.append(_headers)
    app.router.add_get("/", _index)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/favicon.ico", _no_content)
    app.router.add_get("/views/{benchmark}.js", _view_module)
    app.router.add_get("/api/runs", _json_of(lambda v, q: v.runs()))
    app.router.add_get("/api/run", _json_of(lambda v, q: v.run_page(_param(q, "run"))))
    app.router.add_get("/api/episodes", _episodes)
    app.router.add_get("/api/episode", _json_of(_episode))
    app.router.add_get("/api/messages", _json_of(_messages))
    app.router.add_get("/api/compare", _json_of(_compare))
    app.router.add_get("/files/plot", _plot)
    return app


async def _headers(request: web.Request, response: web.StreamResponse) -> None:
    # On every answer, errors included.
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"


@web.middleware
async def _hosts(request: web.Request, handler: Handler) -> web.StreamResponse:
    allowed = request.app[HOSTS]
    name = re.sub(r":\d+$", "", request.host or "")
    if allowed and name not in allowed:
        return web.json_response(
            {"error": f"Host {name!r}: this viewer answers {sorted(allowed)}"}, status=421
        )
    return await handler(request)


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except NotFound as exc:
        return web.json_response({"error": str(exc)}, status=404)
    except ForkingPathsError as exc:
        return web.json_response({"error": str(exc)}, status=400)
    except Exception as exc:  # one broken run must not take the server down
        log.exception("%s %s failed", request.method, request.path_qs)
        return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=500)


class BadRequest(ForkingPathsError):
    """A request missing a parameter or giving one of the wrong kind (HTTP 400)."""


def _param(query: Any, name: str) -> str:
    value = query.get(name)
    if not value:
        raise BadRequest(f"{name}: missing; give ?{name}=...")
    return str(value)


def _int_param(query: Any, name: str) -> int:
    value = _param(query, name)
    if not re.fullmatch(r"[0-9]+", value):
        raise BadRequest(f"{name}: got {value!r}; allowed: a whole number >= 0")
    return int(value)


def _episode_number(viewer: Viewer, query: Any) -> int:
    if "n" in query:
        return _int_param(query, "n")
    trial = _int_param(query, "trial") if "trial" in query else 0
    return viewer.episode_number(_param(query, "run"), _param(query, "instance"), trial)


def _episode(viewer: Viewer, query: Any) -> dict[str, Any]:
    return viewer.episode(_param(query, "run"), _episode_number(viewer, query))


def _messages(viewer: Viewer, query: Any) -> dict[str, Any]:
    return viewer.messages(_param(query, "run"), _int_param(query, "n"))


def _compare(viewer: Viewer, query: Any) -> dict[str, Any]:
    keys = [k for k in _param(query, "runs").split(",") if k]
    return viewer.compare(keys)


def _json_of(build: Callable[[Viewer, Any], dict[str, Any]]) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        viewer = request.app[VIEWER]
        # Files are read off the event loop, so a slow disk never stalls other requests.
        payload = await asyncio.to_thread(build, viewer, request.query)
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
        return web.Response(
            text=body, content_type="application/json", headers={"Cache-Control": "no-store"}
        )

    return handler


async def _episodes(request: web.Request) -> web.StreamResponse:
    viewer = request.app[VIEWER]
    body = await asyncio.to_thread(viewer.episodes_body, _param(request.query, "run"))
    return web.Response(
        body=body, content_type="application/json", headers={"Cache-Control": "no-store"}
    )


async def _no_content(request: web.Request) -> web.StreamResponse:
    return web.Response(status=204)


async def _index(request: web.Request) -> web.StreamResponse:
    return _file_response(STATIC_DIR / "index.html")


async def _static(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    files = request.app[STATIC_FILES]
    if name not in files:
        raise web.HTTPNotFound()
    return _file_response(files[name])


async def _view_module(request: web.Request) -> web.StreamResponse:
    # `views/griddag.js` draws griddag's world; `views/griddag-play.js` a player's controls.
    name = request.match_info["benchmark"]
    base, play = (name[: -len("-play")], True) if name.endswith("-play") else (name, False)
    if base not in benchmark_names():
        raise web.HTTPNotFound()
    cls = benchmark_class(base)
    script = cls.play_script() if play else cls.view_script()
    if script is None:
        raise web.HTTPNotFound()
    return _file_response(script)


def _file_response(path: Path) -> web.StreamResponse:
    content_type = _TYPES.get(path.suffix, "application/octet-stream")
    return web.Response(
        body=path.read_bytes(),
        content_type=content_type,
        charset="utf-8" if content_type.startswith("text") else None,
        headers={"Cache-Control": "no-cache"},
    )


async def _plot(request: web.Request) -> web.StreamResponse:
    viewer = request.app[VIEWER]
    path = viewer.plot_file(_param(request.query, "run"), _param(request.query, "name"))
    return web.FileResponse(path)


async def serve(
    viewer: Viewer,
    host: str,
    port: int,
    ready: Callable[[str], None],
    stop: asyncio.Event | None = None,
) -> None:
    """Serve until cancelled (or `stop` is set); `ready` gets the address once it listens."""
    runner = web.AppRunner(make_app(viewer, host), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port
        shown_host = f"[{host}]" if ":" in host else host
        ready(f"http://{shown_host}:{bound}/")
        await (stop.wait() if stop is not None else asyncio.Event().wait())
    finally:
        await runner.cleanup()
