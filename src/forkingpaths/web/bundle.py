"""`forkingpaths view --bundle`: a static copy of runs that opens from disk or any static host."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError
from forkingpaths.web.data import Viewer, run_dirs
from forkingpaths.web.server import STATIC_DIR

log = logging.getLogger(__name__)

MARKER = ".forkingpaths-bundle"
"""Written into a bundle's folder: a folder holding it may be written over, no other."""

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+\.js)";\s*$', re.M)
_EXPORT = re.compile(r"^export\s+(?:async\s+)?(function\*?|const|let|class)\s+([\w$]+)", re.M)
_UNSUPPORTED = re.compile(r"^\s*(export\s+default|export\s*\{|import\s+[^({])", re.M)


class BundleError(ConfigError):
    """A module uses syntax the bundle cannot join, or the output folder is not ours to write."""


def module_source(name: str, text: str, register: str) -> str:
    """One ES module as a function scope in a classic script: its imports read from the modules
    joined before it, its exports returned and stored under `register`."""
    bad = _UNSUPPORTED.search(text)
    if bad:
        raise BundleError(
            f"{name}: {bad.group(0).strip()!r} cannot be bundled; use `import {{ a }} from "
            f'"./x.js"` and `export function` / `export const` only'
        )
    exports = [m.group(2) for m in _EXPORT.finditer(text)]

    def rewrite_import(match: re.Match[str]) -> str:
        names = ", ".join(
            part.strip().replace(" as ", ": ") for part in match.group(1).split(",") if part.strip()
        )
        return f"const {{ {names} }} = __fpModules[{json.dumps(match.group(2))}];"

    body = _IMPORT.sub(rewrite_import, text)
    body = _EXPORT.sub(lambda m: m.group(0).replace("export ", "", 1).lstrip(), body)
    body = re.sub(r"^export\s+async\s+", "async ", body, flags=re.M)
    returned = ", ".join(exports)
    return f"{register} = (function () {{\n{body}\nreturn {{ {returned} }};\n}})();\n"


def app_script(view_scripts: dict[str, Path]) -> str:
    """The app's modules, in import order, then each benchmark's view module."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        text = (STATIC_DIR / name).read_text(encoding="utf-8")
        for match in _IMPORT.finditer(text):
            visit(match.group(2))
        order.append(name)

    visit("main.js")
    parts = ["(function () {\n'use strict';\nconst __fpModules = {};\nwindow.FP_MODULES = {};\n"]
    # The views first: main.js, last, starts the app, which may ask for one at once.
    for url, path in sorted(view_scripts.items()):
        text = path.read_text(encoding="utf-8")
        parts.append(module_source(path.name, text, f"window.FP_MODULES[{json.dumps(url)}]"))
    for name in order:
        text = (STATIC_DIR / name).read_text(encoding="utf-8")
        parts.append(module_source(name, text, f"__fpModules[{json.dumps(name)}]"))
    parts.append("})();\n")
    return "".join(parts)


def request_key(endpoint: str, params: dict[str, str]) -> str:
    """The app's `requestKey`: the endpoint and its parameters sorted by name."""
    return f"{endpoint}?" + "&".join(f"{k}={params[k]}" for k in sorted(params))


def run_paths(paths: Sequence[Path]) -> list[Path]:
    """The run directories named: a run directory itself, or every run under a folder."""
    runs: list[Path] = []
    for path in paths:
        if not path.exists():
            raise ConfigError(
                f"RUN {path}: does not exist; give run directories or folders of runs"
            )
        found = list(run_dirs(path.resolve()))
        if not found:
            raise ConfigError(
                f"RUN {path}: no run directory there (a run holds spec.json and episodes.jsonl)"
            )
        runs += [r for r in found if r not in runs]
    return runs


def write_bundle(
    out: Path, paths: Sequence[Path], progress: Callable[[int, int], None] | None = None
) -> Path:
    """Write the static copy of the runs at `paths` into `out` and return its index.html: the
    app's modules joined into one classic script (a browser refuses ES modules from file://),
    and every answer the app asks the server for written beforehand as a script file."""
    runs = run_paths(paths)
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise BundleError(
            f"--bundle {out}: exists and is not an earlier bundle; give a new or empty folder"
        )
    root = Path(os.path.commonpath([str(r.parent) for r in runs])) if runs else Path(".")
    viewer = Viewer(root, runs)
    if out.exists():
        shutil.rmtree(out)
    (out / "data").mkdir(parents=True)
    (out / "static").mkdir()
    (out / MARKER).write_text("written by forkingpaths view --bundle\n", encoding="utf-8")

    files: dict[str, str] = {}
    plots: dict[str, str] = {}

    def put(endpoint: str, params: dict[str, str], payload: dict[str, Any]) -> None:
        key = request_key(endpoint, params)
        name = f"data/d{len(files)}.js"
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
        text = f"window.FP_DATA({json.dumps(key)},{body});\n"
        (out / name).write_text(text, encoding="utf-8")
        files[key] = name

    listing = viewer.runs()
    put("runs", {}, listing)
    entries = viewer.discover()
    total = sum(e.episodes.count() for e in entries)
    done = 0
    for r, entry in enumerate(entries):
        page = viewer.run_page(entry.key)
        put("run", {"run": entry.key}, page)
        put("episodes", {"run": entry.key}, viewer.episodes(entry.key))
        for p, plot in enumerate(page["plots"]):
            source = viewer.plot_file(entry.key, plot["name"])
            target = out / "plots" / str(r) / f"{p}{source.suffix.lower()}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            plots[f"{entry.key}/{plot['name']}"] = target.relative_to(out).as_posix()
        for summary in entry.episodes.entries():
            n = summary["n"]
            put("episode", {"n": str(n), "run": entry.key}, viewer.episode(entry.key, n))
            if summary["calls"]:
                put("messages", {"n": str(n), "run": entry.key}, viewer.messages(entry.key, n))
            done += 1
            if progress:
                progress(done, total)
    for keys in _compare_groups(listing["runs"]):
        put("compare", {"runs": ",".join(keys)}, viewer.compare(keys))

    views = _view_scripts(viewer, entries)
    (out / "static" / "app.bundle.js").write_text(app_script(views), encoding="utf-8")
    shutil.copyfile(STATIC_DIR / "style.css", out / "static" / "style.css")
    manifest = {"files": files, "plots": plots}
    (out / "data" / "manifest.js").write_text(
        f"window.FP_BUNDLE = {json.dumps(manifest, ensure_ascii=False)};\n", encoding="utf-8"
    )
    index = out / "index.html"
    index.write_text(_bundle_index(STATIC_DIR / "index.html"), encoding="utf-8")
    return index


def _compare_groups(rows: Iterable[dict[str, Any]]) -> list[list[str]]:
    """The comparisons a bundle answers: every pair of its runs of one benchmark, in the runs
    list's order (the app orders a selection the same way), and all runs of a benchmark."""
    by_benchmark: dict[str, list[str]] = {}
    for row in rows:
        if "benchmark" in row:
            by_benchmark.setdefault(row["benchmark"], []).append(row["key"])
    groups: list[list[str]] = []
    for keys in by_benchmark.values():
        for i, a in enumerate(keys):
            groups += [[a, b] for b in keys[i + 1 :]]
        if len(keys) > 2:
            groups.append(keys)
    return groups


def _view_scripts(viewer: Viewer, entries: Iterable[Any]) -> dict[str, Path]:
    scripts: dict[str, Path] = {}
    for entry in entries:
        bench = viewer.benchmark(entry.header())
        url = viewer.view_url(bench)
        script = bench.view_script()
        if url and script:
            scripts[url] = script
    return scripts


BUNDLE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'"
)
"""The server's policy, as a meta tag: the copy runs no script but its own files either."""


def _bundle_index(template: Path) -> str:
    html = template.read_text(encoding="utf-8")
    module = '<script type="module" src="static/main.js"></script>'
    if module not in html:
        raise BundleError(f"{template}: no {module} to replace with the bundle's scripts")
    scripts = (
        f'<meta http-equiv="Content-Security-Policy" content="{BUNDLE_CSP}">\n'
        '<script defer src="data/manifest.js"></script>\n'
        '<script defer src="static/app.bundle.js"></script>'
    )
    html = re.sub(r'<link rel="modulepreload"[^>]*>\n', "", html)
    return html.replace(module, scripts)
