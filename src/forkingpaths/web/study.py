"""`forkingpaths study`: the viewer for several people, with accounts, human play and annotation."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

from aiohttp import web

from forkingpaths.core.records import RoleModel
from forkingpaths.web import admin_routes, annotate, play
from forkingpaths.web.accounts import STORE, StudyStore, require
from forkingpaths.web.data import Viewer
from forkingpaths.web.server import Handler, make_app

STUDY_FILE = "study.sqlite"
"""The study's accounts, assignments, play journals and annotations, beside the runs."""

VIEWER_PATHS = ("/api/runs", "/api/run", "/api/episode", "/api/messages", "/api/compare")
"""What only a viewer (or an admin) may read in a study: the runs hold gold paths, key points,
references and the judge's scores, which players and blind annotators must not see."""
FILE_PATHS = ("/files/",)


def make_study_app(
    runs_dir: Path, host: str = "127.0.0.1", roles: Mapping[str, RoleModel] | None = None
) -> web.Application:
    """The viewer app with the study's routes; every run page needs a viewer's login."""
    runs_dir = Path(runs_dir)
    store = StudyStore(runs_dir / STUDY_FILE)
    app = make_app(Viewer(runs_dir), host)
    app.middlewares.append(_viewers_only)
    app[STORE] = store
    admin_routes.add_routes(app)
    play.add_routes(app, runs_dir=runs_dir, roles=dict(roles or {}))
    annotate.add_routes(app)
    return app


@web.middleware
async def _viewers_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    path = request.path
    if path.startswith(VIEWER_PATHS) or path.startswith(FILE_PATHS):
        await require(request, "viewer")
    return await handler(request)


async def serve_study(
    runs_dir: Path,
    host: str,
    port: int,
    roles: Mapping[str, RoleModel],
    ready: Callable[[str, str | None], None],
) -> None:
    """Serve until cancelled; `ready(url, first_admin_token)` once it listens (the token only
    while the study has no accounts)."""
    app = make_study_app(runs_dir, host, roles)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port
        shown_host = f"[{host}]" if ":" in host else host
        ready(f"http://{shown_host}:{bound}/", app[STORE].first_admin_token())
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
