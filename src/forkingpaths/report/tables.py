"""Plain tables (header + rows) shared by the HTML report, the terminal summary and compare."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table as RichTable

from forkingpaths.core.benchmark import Benchmark, MetricSpec, ScoredEpisode
from forkingpaths.core.records import RunHeader


@dataclass
class Table:
    """A titled table of already-computed values."""

    title: str
    header: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    note: str = ""
    groups: list[tuple[str, int]] = field(default_factory=list)
    """Optional row above the header: (title, columns spanned), e.g. a metric over its ours /
    paper / Δ columns."""


@dataclass(frozen=True)
class Best:
    """A cell holding the best value of its column among compared runs (by the metric's
    declared direction); shown with a star."""

    value: Any


@dataclass(frozen=True)
class Plain:
    """A descriptive figure (a mean count, a spread): shown with the decimals it needs, at most
    four, not padded to four like a score."""

    value: float


@dataclass(frozen=True)
class Link:
    """A cell linking to another page (a run's report.html): `href` relative to the page."""

    text: str
    href: str


ARROWS = {"higher": "↑", "lower": "↓"}
"""How a column title marks a metric's direction."""


def format_value(value: Any) -> str:
    if isinstance(value, Best):
        return f"{format_value(value.value)} ★"
    if isinstance(value, Link):
        return value.text
    if isinstance(value, Plain):
        text = f"{value.value:,.4f}".rstrip("0").rstrip(".")
        return text if text not in ("0", "-0") or value.value == 0 else f"{value.value:.2g}"
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def is_numeric(value: Any) -> bool:
    """Whether a cell holds a number (right-aligned in HTML)."""
    if isinstance(value, Best | Plain):
        return is_numeric(value.value)
    return isinstance(value, int | float) and not isinstance(value, bool)


def metric_cell(
    key: str, value: Any, specs: Mapping[str, MetricSpec], counts: Collection[str] = ()
) -> Any:
    """A metric's value as a table holds it. Scores (a direction `higher` or `lower`) keep four
    decimals, even when whole (a success rate of 1.0000). A count or descriptive figure (its
    spec's direction is `none`, or its key is in `counts`) shows a whole float as an integer (8
    episodes, not 8.0000) and any other float with the decimals it needs."""
    if not isinstance(value, float):
        return value
    spec = specs.get(key)
    if key in counts or (spec is not None and spec.direction == "none"):
        return int(value) if value.is_integer() else Plain(value)
    return value


def metric_title(key: str, specs: Mapping[str, MetricSpec]) -> str:
    """A metric's column title: its label and direction arrow (`success rate ↑`); the key
    itself for a metric without a spec."""
    spec = specs.get(key)
    if spec is None:
        return key
    arrow = ARROWS.get(spec.direction)
    return f"{spec.label} {arrow}" if arrow else spec.label


def rich_table(table: Table, *, title: str | None = None) -> RichTable:
    """A table for the terminal. No text is ever cut: a long header or cell wraps, and a word
    longer than its column folds onto the next line."""
    out = RichTable(title=table.title if title is None else title, title_justify="left")
    for name in table.header:
        out.add_column(name, overflow="fold", no_wrap=False)
    for row in table.rows:
        out.add_row(*(format_value(c) for c in row))
    return out


def headline_keys(benchmark: Benchmark, metrics: dict[str, Any]) -> list[str]:
    keys = [k for k in benchmark.headline_metrics if k in metrics]
    return keys or [k for k, v in metrics.items() if isinstance(v, int | float)][:6]


def _is_records(value: Any) -> bool:
    """A list of flat records (aut's per-run breakdown): shown as a table of its own."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def summary_table(benchmark: Benchmark, summary: dict[str, Any]) -> Table:
    metrics = summary.get("metrics", {})
    specs = benchmark.metric_specs
    rows = [
        [k, metric_cell(k, v, specs)]
        for k, v in metrics.items()
        if not isinstance(v, dict) and not _is_records(v)
    ]
    return Table("Metrics", ["metric", "value"], rows)


def record_tables(benchmark: Benchmark, summary: dict[str, Any]) -> list[Table]:
    """One table per metric that holds a list of records (one row each)."""
    tables = []
    for key, value in summary.get("metrics", {}).items():
        if not _is_records(value):
            continue
        columns: list[str] = []
        for entry in value:
            columns += [c for c in entry if c not in columns]
        rows = [
            [metric_cell(c, entry.get(c), benchmark.metric_specs) for c in columns]
            for entry in value
        ]
        tables.append(Table(f"Metrics: {key}", columns, rows))
    return tables


def group_table(benchmark: Benchmark, summary: dict[str, Any]) -> Table | None:
    metrics = summary.get("metrics", {})
    groups = metrics.get("by_group")
    if not groups:
        return None
    # Groups of one benchmark may report different metrics (eeb's two games): take them all.
    keys: list[str] = []
    for group in groups.values():
        keys += [k for k, v in group.items() if isinstance(v, int | float) and k not in keys]
    # A group's count is a mean over trials when there are several (escape's paths found): a
    # key counted in whole numbers at run level is a count in the groups too.
    counts = {"episodes"} | {k for k, v in metrics.items() if type(v) is int}
    rows = [
        [name, *(metric_cell(k, g.get(k), benchmark.metric_specs, counts) for k in keys)]
        for name, g in groups.items()
    ]
    return Table("By configuration", ["group", *keys], rows)


def _role_rows(header: RunHeader, benchmark: Benchmark | None) -> list[list[Any]]:
    """One row per protocol role: the model configured for it, the agent's model where the
    benchmark lets the agent's model play it, or none."""
    spec = header.spec
    roles = list(spec.roles)
    if benchmark is not None:
        roles += [r for r in benchmark.model_roles if r not in roles]
    rows: list[list[Any]] = []
    for role in roles:
        ref = spec.roles.get(role)
        if ref is not None:
            where = f" at {ref.options.base_url}" if ref.options.base_url else ""
            value = f"{ref.model}{where}"
        elif benchmark is not None and role in benchmark.roles_default_to_agent and spec.model:
            value = f"{spec.model} (the agent's model)"
        else:
            value = "– (not configured)"
        rows.append([f"{role} model", value])
    return rows


def spec_table(
    header: RunHeader, summary: dict[str, Any], benchmark: Benchmark | None = None
) -> Table:
    spec = header.spec
    eps = summary["episodes"]
    rows: list[list[Any]] = [
        ["benchmark", spec.benchmark],
        ["benchmark options", _options(spec.benchmark_options)],
        ["split", spec.split],
        ["agent", spec.agent],
        ["agent options", _options(spec.agent_options)],
        ["model", spec.model or "–"],
        *_role_rows(header, benchmark),
        ["trials, seed", f"{spec.trials}, {spec.seed}"],
        ["episodes", f"{eps['ok']} ok, {eps['errored']} errored, {eps['planned']} planned"],
        ["created", header.created_at],
        ["git revision", header.environment.get("git_revision") or "–"],
    ]
    return Table("Run", ["field", "value"], rows)


def _options(options: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items()) or "–"


def usage_table(summary: dict[str, Any]) -> Table:
    usage = summary["usage"]
    return Table("Model usage", ["quantity", "value"], [[k, v] for k, v in usage.items()])


def calls_table(summary: dict[str, Any]) -> Table | None:
    """Model calls by purpose (the agent's and each role's): how many per episode, tokens per
    episode, seconds per call, decoding speed and empty replies; None for a run without calls."""
    stats = summary.get("calls_by_purpose") or {}
    if not stats:
        return None
    timing = (summary.get("timing") or {}).get("calls_by_purpose") or {}
    rows = [
        [
            purpose,
            s["calls"],
            round(s["calls_per_episode"], 2),
            round(s["tokens_per_episode"]),
            round(timing.get(purpose, {}).get("seconds_per_call", 0.0), 3),
            timing.get(purpose, {}).get("tokens_per_second"),
            s["empty_replies"],
        ]
        for purpose, s in stats.items()
    ]
    rate = summary.get("invalid_step_rate")
    note = "" if rate is None else f"invalid steps (unparsable or illegal actions): {rate:.2%}"
    header = ["purpose", "calls", "calls/episode", "tokens/episode", "s/call", "tokens/s", "empty"]
    return Table("Model calls by purpose", header, rows, note=note)


EPISODE_COLUMNS = ("instance", "trial", "status", "steps")
"""The columns every episode row starts with; `steps` counts the record's steps."""


def episodes_table(benchmark: Benchmark, episodes: Sequence[ScoredEpisode]) -> Table:
    """One row per episode; the rows are made as the page takes them (a generator), so a run
    of 100,000 episodes is never a table in memory."""
    keys: list[str] = []
    for episode in episodes:
        for key, value in episode.metrics.items():
            # A metric named like a fixed column (griddag's and eeb's `steps`) would repeat it.
            if isinstance(value, bool | int | float) and key not in keys + list(EPISODE_COLUMNS):
                keys.append(key)
    keys = keys[:8]
    specs = benchmark.metric_specs
    rows = (
        [
            e.instance_id,
            e.trial,
            e.status,
            e.n_steps,
            *(metric_cell(k, e.metrics.get(k), specs) for k in keys),
        ]
        for e in episodes
    )
    return Table("Episodes", [*EPISODE_COLUMNS, *keys], rows)  # type: ignore[arg-type]
