"""Plain tables (header + rows) shared by the HTML report, the terminal summary and compare."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.records import EpisodeRecord, RunHeader


@dataclass
class Table:
    """A titled table of already-computed values."""

    title: str
    header: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Best:
    """A cell holding the best value of its column among compared runs (by the metric's
    declared direction); shown with a star."""

    value: Any


def format_value(value: Any) -> str:
    if isinstance(value, Best):
        return f"{format_value(value.value)} ★"
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def headline_keys(benchmark: Benchmark, metrics: dict[str, Any]) -> list[str]:
    keys = [k for k in benchmark.headline_metrics if k in metrics]
    return keys or [k for k, v in metrics.items() if isinstance(v, int | float)][:6]


def summary_table(benchmark: Benchmark, summary: dict[str, Any]) -> Table:
    metrics = summary.get("metrics", {})
    keys = [k for k, v in metrics.items() if not isinstance(v, dict)]
    return Table("Metrics", ["metric", "value"], [[k, metrics[k]] for k in keys])


def group_table(benchmark: Benchmark, summary: dict[str, Any]) -> Table | None:
    groups = summary.get("metrics", {}).get("by_group")
    if not groups:
        return None
    # Groups of one benchmark may report different metrics (eeb's two games): take them all.
    keys = ["episodes"]
    for group in groups.values():
        keys += [k for k, v in group.items() if isinstance(v, int | float) and k not in keys]
    rows = [[name, *(g.get(k) for k in keys)] for name, g in groups.items()]
    return Table("By configuration", ["group", *keys], rows)


def spec_table(header: RunHeader, summary: dict[str, Any]) -> Table:
    spec = header.spec
    eps = summary["episodes"]
    rows: list[list[Any]] = [
        ["benchmark", spec.benchmark],
        ["split", spec.split],
        ["agent", spec.agent],
        ["agent options", ", ".join(f"{k}={v}" for k, v in spec.agent_options.items()) or "–"],
        ["model", spec.model or "–"],
        ["episodes", f"{eps['ok']} ok, {eps['errored']} errored, {eps['planned']} planned"],
        ["created", header.created_at],
        ["git revision", header.environment.get("git_revision") or "–"],
    ]
    return Table("Run", ["field", "value"], rows)


def usage_table(summary: dict[str, Any]) -> Table:
    usage = summary["usage"]
    return Table("Model usage", ["quantity", "value"], [[k, v] for k, v in usage.items()])


def episodes_table(benchmark: Benchmark, records: Sequence[EpisodeRecord]) -> Table:
    keys: list[str] = []
    for record in records:
        for key, value in record.metrics.items():
            if isinstance(value, bool | int | float) and key not in keys:
                keys.append(key)
    keys = keys[:8]
    rows = [
        [r.instance_id, r.trial, r.status, len(r.steps), *(r.metrics.get(k) for k in keys)]
        for r in records
    ]
    return Table("Episodes", ["instance", "trial", "status", "steps", *keys], rows)
