"""What the viewer shows, as JSON, for the server and the static bundle alike."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.errors import ForkingPathsError
from forkingpaths.core.records import RunHeader
from forkingpaths.core.registry import make_benchmark
from forkingpaths.report.html import run_sections
from forkingpaths.report.tables import ARROWS, Table, format_value, headline_keys, is_numeric
from forkingpaths.runner.index import EpisodeIndex, TextIndex
from forkingpaths.runner.rundir import (
    EPISODES_FILE,
    METRICS_FILE,
    SPEC_FILE,
    RunDirectory,
)

log = logging.getLogger(__name__)

_MAX_DEPTH = 3
"""How deep under the runs folder runs are looked for (a reproduction's runs sit one level in)."""
_RUNNING_WINDOW_S = 120.0
"""A run without a final metrics.json whose records changed this recently is shown as running."""
EPISODE_FIELDS = (
    "n",
    "instance_id",
    "trial",
    "status",
    "error",
    "steps",
    "calls",
    "tokens",
    "cost_usd",
)
"""The columns of the episode list before the metrics."""
_PLOT_SUFFIXES = frozenset({".png", ".svg", ".jpg", ".jpeg"})
"""What a run's `plots/` may serve."""


class NotFound(ForkingPathsError):
    """A run, episode or file the viewer was asked for does not exist (HTTP 404)."""


@dataclass
class RunEntry:
    """One run directory the viewer knows, with its indexes (built when first needed)."""

    key: str
    """Its path under the runs folder, `/`-separated: the run's name in every URL."""
    path: Path
    _episodes: EpisodeIndex | None = None
    _texts: TextIndex | None = None
    _header: tuple[float, RunHeader] | None = None
    _metrics: tuple[float, dict[str, Any] | None] | None = None
    episodes_body: tuple[int, bytes] | None = None
    """The episode list's JSON and the index version it was made from."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def episodes(self) -> EpisodeIndex:
        with self._lock:
            if self._episodes is None:
                self._episodes = EpisodeIndex(self.path)
            return self._episodes

    @property
    def texts(self) -> TextIndex:
        with self._lock:
            if self._texts is None:
                self._texts = TextIndex(self.path)
            return self._texts

    def header(self) -> RunHeader:
        mtime = _mtime(self.path / SPEC_FILE)
        if self._header is None or self._header[0] != mtime:
            self._header = (mtime, RunDirectory(self.path).read_header())
        return self._header[1]

    def metrics(self) -> dict[str, Any] | None:
        """metrics.json as the run last wrote it (None before its first)."""
        mtime = _mtime(self.path / METRICS_FILE)
        if self._metrics is None or self._metrics[0] != mtime:
            value = None
            if mtime:
                try:
                    value = RunDirectory(self.path).read_metrics().model_dump()
                except ForkingPathsError as exc:
                    log.warning("%s", exc)
            self._metrics = (mtime, value)
        return self._metrics[1]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class Viewer:
    """The runs under one folder and everything the app asks of them. Read-only: it opens run
    files for reading and never writes inside the folder. A run is named by its key (its path
    under the folder); a key that is not a run found there is NotFound, so no request reaches a
    file outside the folder."""

    def __init__(self, runs_dir: Path, runs: Sequence[Path] | None = None) -> None:
        self.runs_dir = Path(runs_dir).resolve()
        self._only = None if runs is None else [Path(r).resolve() for r in runs]
        self._runs: dict[str, RunEntry] = {}
        self._benchmarks: dict[str, Benchmark] = {}
        self._lock = threading.Lock()

    # -- discovery ---------------------------------------------------------------------------

    def discover(self) -> list[RunEntry]:
        """Every run directory under the folder (a folder holding spec.json and episodes.jsonl),
        newest first."""
        found = self._only if self._only is not None else list(run_dirs(self.runs_dir))
        with self._lock:
            entries = []
            for path in found:
                key = _key(path, self.runs_dir)
                entry = self._runs.get(key)
                if entry is None:
                    entry = self._runs[key] = RunEntry(key, path)
                entries.append(entry)
        entries.sort(key=lambda e: _mtime(e.path / EPISODES_FILE), reverse=True)
        return entries

    def run(self, key: str) -> RunEntry:
        with self._lock:
            entry = self._runs.get(key)
        if entry is None:
            entry = next((e for e in self.discover() if e.key == key), None)
        if entry is None or not (entry.path / SPEC_FILE).is_file():
            raise NotFound(f"no run {key!r} under {self.runs_dir}")
        return entry

    def _inside(self, entry: RunEntry, path: Path) -> bool:
        """Whether `path`, links followed, lies in the run's folder (and that in the runs
        folder, unless the runs were named one by one)."""
        run = entry.path.resolve()
        if self._only is None and not run.is_relative_to(self.runs_dir):
            return False
        return path.resolve().is_relative_to(run)

    def benchmark(self, header: RunHeader) -> Benchmark:
        """The run's benchmark with its options (one object per distinct spec, kept)."""
        spec = header.spec
        key = json.dumps([spec.benchmark, spec.benchmark_options], sort_keys=True, default=str)
        with self._lock:
            bench = self._benchmarks.get(key)
        if bench is None:
            bench = make_benchmark(spec.benchmark, **spec.benchmark_options)
            with self._lock:
                self._benchmarks[key] = bench
        return bench

    # -- payloads ----------------------------------------------------------------------------

    def runs(self) -> dict[str, Any]:
        """The runs list: one row per run."""
        rows = []
        for entry in self.discover():
            try:
                rows.append(self._run_row(entry))
            except ForkingPathsError as exc:
                rows.append({"key": entry.key, "status": "unreadable", "problem": str(exc)})
        return {"runs_dir": str(self.runs_dir), "runs": rows}

    def _run_row(self, entry: RunEntry) -> dict[str, Any]:
        header = entry.header()
        spec = header.spec
        metrics = entry.metrics()
        tally = self._tally(entry, metrics)
        headline: list[dict[str, Any]] = []
        if metrics and metrics.get("metrics"):
            try:
                bench = self.benchmark(header)
            except ForkingPathsError:
                bench = None
            values = metrics["metrics"]
            keys = headline_keys(bench, values) if bench else []
            for key in keys[:4]:
                spec_m = bench.metric_specs.get(key) if bench else None
                headline.append(
                    {
                        "key": key,
                        "label": spec_m.label if spec_m else key,
                        "arrow": ARROWS.get(spec_m.direction, "") if spec_m else "",
                        "value": values[key],
                        "text": format_value(values[key]),
                    }
                )
        return {
            "key": entry.key,
            "run_id": header.run_id,
            "benchmark": spec.benchmark,
            "split": spec.split,
            "agent": spec.agent,
            "model": spec.model,
            "roles": {role: ref.model for role, ref in spec.roles.items()},
            "created_at": header.created_at,
            "updated": _mtime(entry.path / EPISODES_FILE),
            "planned": metrics["episodes"]["planned"] if metrics else self._planned(header),
            "headline": headline,
            **tally,
        }

    def _planned(self, header: RunHeader) -> int | None:
        """Episodes the spec asks for, before the run has scored (None if its benchmark
        cannot list them here)."""
        spec = header.spec
        if spec.agent == "human":
            return None  # people play what they are assigned, not the spec's split
        try:
            bench = self.benchmark(header)
            return len(bench.select_instances(spec.split, spec.instances)) * spec.trials
        except ForkingPathsError:
            return None

    def _tally(self, entry: RunEntry, metrics: dict[str, Any] | None) -> dict[str, Any]:
        """Status, episode counts and usage: from metrics.json when it was written after the
        last record (so listing finished runs never reads their records), else from the
        episode index (a run still writing, or one stopped before it scored)."""
        episodes_mtime = _mtime(entry.path / EPISODES_FILE)
        if metrics is not None and _mtime(entry.path / METRICS_FILE) >= episodes_mtime:
            counts, usage = metrics["episodes"], metrics.get("usage") or {}
            recorded = counts["ok"] + counts["errored"]
            return {
                "status": "finished" if recorded >= counts["planned"] else "incomplete",
                "episodes": {
                    "recorded": recorded,
                    "ok": counts["ok"],
                    "errored": counts["errored"],
                },
                "tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
                "cost_usd": usage.get("cost_usd", 0.0),
                "calls": usage.get("calls", 0),
            }
        summaries = entry.episodes.entries()
        ok = sum(1 for s in summaries if s["status"] == "ok")
        running = time.time() - episodes_mtime < _RUNNING_WINDOW_S
        return {
            "status": "running" if running else "incomplete",
            "episodes": {"recorded": len(summaries), "ok": ok, "errored": len(summaries) - ok},
            "tokens": sum(s["tokens"] for s in summaries),
            "cost_usd": round(sum(s["cost_usd"] for s in summaries), 6),
            "calls": sum(s["calls"] for s in summaries),
        }

    def run_page(self, key: str) -> dict[str, Any]:
        """A run: its row, the report's tables and figures, errors grouped by cause and the
        episode list's columns."""
        entry = self.run(key)
        header = entry.header()
        metrics = entry.metrics()
        bench = self.benchmark(header)
        tables = [table_json(t) for t in run_sections(header, bench, metrics)] if metrics else []
        summaries = entry.episodes.entries()
        return {
            "run": self._run_row(entry),
            "spec": header.model_dump(mode="json"),
            "tables": tables,
            "plots": self._plots(entry),
            "error_groups": error_groups(summaries),
            "columns": metric_columns(bench, summaries),
            "view_script": self.view_url(bench),
        }

    def _plots(self, entry: RunEntry) -> list[dict[str, Any]]:
        plots_dir = entry.path / "plots"
        if not plots_dir.is_dir() or not self._inside(entry, plots_dir):
            return []
        return [
            {"name": p.name, "title": p.stem.replace("_", " ")}
            for p in sorted(plots_dir.iterdir())
            if p.is_file() and p.suffix.lower() in _PLOT_SUFFIXES and self._inside(entry, p)
        ]

    def view_url(self, bench: Benchmark) -> str | None:
        return f"views/{bench.name}.js" if bench.view_script() is not None else None

    def episodes(self, key: str) -> dict[str, Any]:
        """Every episode's summary as columns and rows (a list of 10,000 episodes stays a few
        MB): number, instance, trial, status, error, steps, calls, tokens, cost, then the
        scalar metrics as `metrics.KEY` and the outcome's other scalars as `outcome.KEY`."""
        entry = self.run(key)
        summaries = entry.episodes.entries()
        metric_keys: list[str] = []
        outcome_keys: list[str] = []
        for s in summaries:
            metric_keys += [k for k in s["metrics"] if k not in metric_keys]
        for s in summaries:
            outcome_keys += [
                k for k in s["outcome"] if k not in metric_keys and k not in outcome_keys
            ]
        rows = [
            [
                *(s[c] for c in EPISODE_FIELDS),
                *(s["metrics"].get(k) for k in metric_keys),
                *(s["outcome"].get(k) for k in outcome_keys),
            ]
            for s in summaries
        ]
        columns = [
            *EPISODE_FIELDS,
            *(f"metrics.{k}" for k in metric_keys),
            *(f"outcome.{k}" for k in outcome_keys),
        ]
        return {"run": key, "columns": columns, "rows": rows}

    def episodes_body(self, key: str) -> bytes:
        """`episodes` as JSON, kept until the run's records change."""
        entry = self.run(key)
        entry.episodes.refresh()
        version = entry.episodes.version
        cached = entry.episodes_body
        if cached is None or cached[0] != version:
            body = json.dumps(self.episodes(key), ensure_ascii=False, separators=(",", ":"))
            cached = entry.episodes_body = (version, body.encode())
        return cached[1]

    def episode_number(self, key: str, instance_id: str, trial: int) -> int:
        number = self.run(key).episodes.find(instance_id, trial)
        if number is None:
            raise NotFound(f"run {key!r} has no episode {instance_id!r} trial {trial}")
        return number

    def episode(self, key: str, number: int) -> dict[str, Any]:
        """One episode: its record (each call's messages named by `messages_ref`, fetched with
        `messages`), and the benchmark's world view."""
        entry = self.run(key)
        try:
            record = entry.episodes.read(number)
        except KeyError:
            raise NotFound(f"run {key!r} has no episode {number}") from None
        header = entry.header()
        bench = self.benchmark(header)
        world, world_error = None, None
        try:
            world = bench.world_view(record)
        except Exception as exc:  # a broken view must not hide the transcript
            log.exception("world view of %s episode %d failed", key, number)
            world_error = f"{type(exc).__name__}: {exc}"
        data = record.model_dump(mode="json", exclude={"agent_state"})
        data["agent_state_keys"] = sorted(record.agent_state)
        total = entry.episodes.count()
        return {
            "run": key,
            "n": number,
            "episodes": total,
            "benchmark": bench.name,
            "record": data,
            "world": world,
            "world_error": world_error,
            "view_script": self.view_url(bench),
        }

    def messages(self, key: str, number: int) -> dict[str, Any]:
        """The messages of every model call of an episode: id -> [parent id, role, text], each
        message once; a call's request is the chain from its `messages_ref` back."""
        entry = self.run(key)
        try:
            record = entry.episodes.read(number)
        except KeyError:
            raise NotFound(f"run {key!r} has no episode {number}") from None
        refs = [c.messages_ref for s in record.steps for c in s.calls if c.messages_ref]
        return {"run": key, "n": number, "messages": entry.texts.messages(refs)}

    def compare(self, keys: Sequence[str]) -> dict[str, Any]:
        """Runs side by side: one row per (instance, trial) any of them played, each run's
        status and scalar metrics there."""
        entries = [self.run(k) for k in keys]
        runs, per_run = [], []
        metric_keys: list[str] = []
        for entry in entries:
            header = entry.header()
            bench = self.benchmark(header)
            summaries = entry.episodes.entries()
            runs.append(
                {
                    "key": entry.key,
                    "benchmark": header.spec.benchmark,
                    "agent": header.spec.agent,
                    "model": header.spec.model,
                    "columns": metric_columns(bench, summaries),
                }
            )
            for column in runs[-1]["columns"]:
                if column["key"] not in metric_keys:
                    metric_keys.append(column["key"])
            per_run.append({(s["instance_id"], s["trial"]): s for s in summaries})
        order: list[tuple[str, int]] = []
        seen: set[tuple[str, int]] = set()
        for table in per_run:
            for episode_key in table:
                if episode_key not in seen:
                    seen.add(episode_key)
                    order.append(episode_key)
        rows = []
        for instance_id, trial in order:
            cells = []
            for table in per_run:
                s = table.get((instance_id, trial))
                cells.append(
                    None
                    if s is None
                    else {
                        "n": s["n"],
                        "status": s["status"],
                        "steps": s["steps"],
                        "metrics": s["metrics"],
                    }
                )
            rows.append({"instance_id": instance_id, "trial": trial, "cells": cells})
        columns = {c["key"]: c for run in runs for c in run["columns"]}
        return {"runs": runs, "metrics": [columns[k] for k in metric_keys], "rows": rows}

    def plot_file(self, key: str, name: str) -> Path:
        """A figure of a run's `plots/` folder, by file name only."""
        entry = self.run(key)
        if name not in {p["name"] for p in self._plots(entry)}:
            raise NotFound(f"no figure {name!r} in run {key!r}")
        return entry.path / "plots" / name


def run_dirs(root: Path, depth: int = 0) -> Iterator[Path]:
    if (root / SPEC_FILE).is_file() and (root / EPISODES_FILE).is_file():
        yield root
        return
    if depth >= _MAX_DEPTH:
        return
    try:
        children = sorted(os.scandir(root), key=lambda d: d.name)
    except OSError:
        return
    for child in children:
        if child.name.startswith(".") or not child.is_dir(follow_symlinks=False):
            continue
        yield from run_dirs(Path(child.path), depth + 1)


def _key(path: Path, root: Path) -> str:
    try:
        key = path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.name
    return path.resolve().name if key == "." else key


def table_json(table: Table) -> dict[str, Any]:
    """A report table as the app draws it: each cell its text, and its number for sorting."""
    return {
        "title": table.title,
        "note": table.note,
        "header": table.header,
        "groups": [list(g) for g in table.groups],
        "rows": [[_cell(c) for c in row] for row in table.rows],
    }


def _cell(value: Any) -> list[Any]:
    raw = getattr(value, "value", value)
    return [format_value(value), raw if is_numeric(value) else None]


def metric_columns(bench: Benchmark, summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The numeric per-episode metrics the episode list shows, with their labels: keys in the
    order the episodes have them."""
    keys: list[str] = []
    for s in summaries[:200]:
        for k, v in s["metrics"].items():
            if k not in keys and k != "steps" and (v is None or isinstance(v, int | float)):
                keys.append(k)
    columns = []
    for k in keys:
        spec = bench.metric_specs.get(k)
        columns.append(
            {
                "key": k,
                "label": spec.label if spec else k,
                "direction": spec.direction if spec else "none",
            }
        )
    return columns


def error_groups(summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Errored episodes grouped by the first line of their error (numbers and quoted names
    blanked, so one cause is one group), largest first."""
    groups: dict[str, dict[str, Any]] = {}
    for s in summaries:
        if s["status"] != "error":
            continue
        cause = _cause(s.get("error") or "unknown error")
        group = groups.setdefault(cause, {"cause": cause, "count": 0, "episodes": []})
        group["count"] += 1
        if len(group["episodes"]) < 50:
            group["episodes"].append(
                {"n": s["n"], "instance_id": s["instance_id"], "trial": s["trial"]}
            )
        group.setdefault("example", s.get("error"))
    return sorted(groups.values(), key=lambda g: -g["count"])


def _cause(error: str) -> str:
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", error)
    return re.sub(r"\d+(\.\d+)?", "N", text)[:200]
