"""Reproductions: a paper's table or figure as the runs behind it, its published numbers, and
how our numbers are read off those runs."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.records import EpisodeRecord, ModelOptions

EMPTY: Mapping[str, Any] = MappingProxyType({})
OFFLINE = "scripted"
"""The `--model` that plays every run of a reproduction with its scripted stand-ins
(`ReproRun.offline_model`, `offline_roles`): the whole protocol offline."""


@dataclass(frozen=True)
class ReproRun:
    """One ordinary run a reproduction needs (the protocol behind one row or cell)."""

    key: str
    """Name within the reproduction (`react`, `redna`); `compute` finds the run by it."""
    agent: str
    """Agent of the benchmark."""
    label: str = ""
    """The method as the paper prints it (`ReAct`)."""
    benchmark: str | None = None
    """Benchmark name (None: the benchmark whose `reproductions()` lists it)."""
    split: str | None = None
    """Split (None: the benchmark's default)."""
    instances: tuple[str, ...] | None = None
    """Instance ids (None: the whole split)."""
    trials: int = 1
    """Episodes per instance (the paper's repetitions)."""
    seed: int = 0
    """Base seed of the run."""
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    temperature: float | None = None
    """The paper's sampling temperature for the agent's model (None: the model layer's 0)."""
    model_seed: int | None = None
    """Seed sent with every generative call (None: none sent)."""
    roles: Mapping[str, str] = field(default_factory=dict)
    """Role -> model id fixed by the protocol; the user's `--role` overrides it."""
    needs_model: bool = True
    """False for reference agents (random, frontier, systematic) that decide without a model."""
    offline_model: str | None = None
    """Scripted model standing in for the agent's with `--model scripted`."""
    offline_roles: Mapping[str, str] = field(default_factory=dict)
    """Scripted role models with `--model scripted` (the benchmark's defaults otherwise)."""


class RunView(Protocol):
    """A finished run as `compute` reads it."""

    key: str
    path: Path
    metrics: Mapping[str, Any]
    """The benchmark's run-level metrics (`metrics.json`'s `metrics`)."""
    summary: Mapping[str, Any]
    """The whole `metrics.json` (usage, episodes, calls by purpose)."""

    def records(self) -> Iterator[EpisodeRecord]:
        """The run's episode records (transcripts left out)."""
        ...


@dataclass(frozen=True)
class ReproContext:
    """What a reproduction is run with."""

    model: str | None
    """The user's model (None when every run is a reference agent)."""
    compare_to: str | None = None
    """Published model whose rows our numbers are set against (None: the best match)."""
    inputs: Mapping[str, Path] = field(default_factory=dict)
    """Files the user gave for the reproduction's `inputs` and `optional_inputs`."""
    limit: int | None = None
    """At most this many instances per run (a smoke test; the table says so)."""
    out_dir: Path = Path(".")
    """Where figures (and inputs `prepare` makes) go."""
    model_options: ModelOptions = field(default_factory=ModelOptions)
    """Endpoint of the user's model (`--base-url`, `--api-key-env`), for `prepare`."""
    runs_dir: Path = Path("runs")
    """Where the runs go."""
    benchmark_options: Mapping[str, Any] = field(default_factory=dict)
    """`-b` options the user set on every run that has them (a deviation switched on, such as
    EvoEmpirBench's `rules=release`)."""

    def __post_init__(self) -> None:
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise ConfigError(f"--limit: got {self.limit}; allowed: a positive number of instances")


class PublishedColumn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    """Our name for the column (a metric key or a compute-defined name)."""
    label: str
    """The column as the paper prints it."""
    direction: Literal["higher", "lower", "none"] = "higher"
    decimals: int | None = None
    """Decimals to print (None: as many as the published numbers show)."""
    difference: bool = True
    """Show ours minus the paper's (False for a spread, a count of samples...)."""


class PublishedRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = ""
    """The model as the paper names it (empty for tables of one model)."""
    method: str = ""
    """The method / agent / setting as the paper prints it."""
    values: dict[str, float | None]
    """Column key -> the printed number (None where the paper prints a dash)."""


class PublishedTable(BaseModel):
    """A paper's table as printed: data in the package, one YAML file per table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paper: str
    table: str
    """As the paper captions it (`Table 2`)."""
    title: str
    source: str
    """Where the numbers are printed (file of ../shared/seeds and the table)."""
    notes: list[str] = Field(default_factory=list)
    columns: list[PublishedColumn]
    rows: list[PublishedRow]

    def column(self, key: str) -> PublishedColumn:
        for col in self.columns:
            if col.key == key:
                return col
        raise KeyError(key)

    def models(self) -> list[str]:
        return list(dict.fromkeys(r.model for r in self.rows))

    def value(self, model: str, method: str, column: str) -> float | None:
        for row in self.rows:
            if row.model == model and row.method == method:
                return row.values.get(column)
        return None

    def values_of(self, model: str, method: str) -> dict[str, float | None]:
        """A printed row by every column (None where the paper prints no number)."""
        return {c.key: self.value(model, method, c.key) for c in self.columns}

    def beside(
        self,
        rows: list[ResultRow],
        model: str | None,
        notes: Sequence[str] | None = None,
        title: str | None = None,
    ) -> ResultTable:
        """Our rows in this table's layout, set against `model`'s published rows; the notes
        default to the table's own."""
        return ResultTable(
            title=title or f"{self.table}: {self.title}",
            columns=list(self.columns),
            rows=rows,
            published_model=model or None,
            notes=list(self.notes if notes is None else notes),
        )

    def match_model(self, wanted: str | None, model: str | None = None) -> str:
        """The published model to set ours against: `wanted` (`--compare-to`, as printed,
        case-insensitive; a name the table lacks is refused), else the one the user's model id
        names (`openai/gpt-4.1-2025-04-14` -> `gpt-4.1`: the same name, or the longest printed
        name it extends at a `-`), else the first model the paper lists."""
        models = self.models()
        if wanted is not None:
            for name in models:
                if name.lower() == wanted.lower():
                    return name
            raise ConfigError(
                f"--compare-to: {self.paper} {self.table} has no model {wanted!r}; "
                f"it has {', '.join(repr(m) for m in models)}"
            )
        if model:
            own = model.rsplit("/", 1)[-1].lower()
            extended = [
                name
                for name in models
                if name and (own == name.lower() or own.startswith(name.lower() + "-"))
            ]
            if extended:
                return max(extended, key=len)
        return models[0]


def load_published(path: Path) -> PublishedTable:
    """A published table from its YAML file; a malformed file is refused naming the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        table = PublishedTable.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise InvalidFile(f"{path}: not a published table ({str(exc).splitlines()[0]})") from None
    keys = {c.key for c in table.columns}
    seen: set[tuple[str, str]] = set()
    for row in table.rows:
        unknown = sorted(set(row.values) - keys)
        if unknown:
            raise InvalidFile(f"{path}: row {row.model}/{row.method} has unknown columns {unknown}")
        if (row.model, row.method) in seen:
            raise InvalidFile(f"{path}: row {row.model}/{row.method} is printed twice")
        seen.add((row.model, row.method))
    return table


@dataclass
class ResultRow:
    """One row of a reproduced table: our numbers beside the published ones."""

    label: str
    """The method as the paper prints it."""
    ours: dict[str, float | None]
    published: dict[str, float | None] = field(default_factory=dict)

    def difference(self, column: str) -> float | None:
        a, b = self.ours.get(column), self.published.get(column)
        if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
            return None
        return a - b


@dataclass
class ResultTable:
    """A reproduced table in the paper's layout."""

    title: str
    columns: list[PublishedColumn]
    rows: list[ResultRow]
    published_model: str | None = None
    """The published model our rows are set against."""
    notes: list[str] = field(default_factory=list)


@dataclass
class ReproResult:
    """What `compute` returns: tables, figures (paths under the context's out_dir), notes."""

    tables: list[ResultTable] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    """(caption, path) of each figure drawn."""
    notes: list[str] = field(default_factory=list)


PrepareFn = Callable[["ReproContext"], Awaitable[Mapping[str, Path]]]

ComputeFn = Callable[[Mapping[str, RunView], PublishedTable | None, ReproContext], ReproResult]


@dataclass(frozen=True)
class Reproduction:
    """A paper's table or figure: the runs behind it and how to read our numbers off them."""

    key: str
    """`paper:item`, e.g. `mutate:table2`, `explore-exploit:figure4`."""
    title: str
    """The caption as the paper prints it (`Table 2: Path discovery ...`)."""
    runs: Callable[[ReproContext], Sequence[ReproRun]]
    """The runs, given the context (some protocols depend on the model or inputs)."""
    compute: ComputeFn
    published: str | None = None
    """File name of the published table under the benchmark's `data/published/`."""
    kind: Literal["table", "figure"] = "table"
    inputs: Mapping[str, str] = field(default_factory=dict)
    """Files or folders the user must give (`--input NAME=PATH`): name -> what it is."""
    optional_inputs: Mapping[str, str] = field(default_factory=dict)
    """Files or folders the user may give (a release to play instead of the shipped data, an
    evolved prompt that adds a row): name -> what it is."""
    description: str = ""
    """One line for `forkingpaths reproduce list`: the protocol in short."""
    prepare: PrepareFn | None = None
    """Makes the `inputs` the user did not give, before the runs (Agent-ExpVer's learned
    truths): writes them under `ctx.out_dir`, resumably, and returns name -> path."""


def metric_table(
    rows: Sequence[tuple[str, str]],
    *,
    scale: Mapping[str, float] = EMPTY,
    title: str | None = None,
) -> ComputeFn:
    """The common case: one row per run (label, run key), one column per published column
    whose key is a run-level metric; `scale` multiplies a metric into the paper's unit
    (fractions printed as percentages: 100)."""

    def compute(
        runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
    ) -> ReproResult:
        if published is None:
            raise ValueError("metric_table needs a published table for its columns")
        model = (
            published.match_model(ctx.compare_to, ctx.model)
            if any(r.model for r in published.rows)
            else ""
        )
        printed_methods = {r.method for r in published.rows}
        unknown = [label for label, _ in rows if label not in printed_methods]
        if unknown:
            raise ValueError(f"{published.table} prints no row {unknown}: fix the reproduction")
        result_rows = []
        for label, run_key in rows:
            metrics = runs[run_key].metrics
            ours = {
                c.key: _scaled(metrics.get(c.key), scale.get(c.key, 1.0)) for c in published.columns
            }
            result_rows.append(
                ResultRow(label=label, ours=ours, published=published.values_of(model, label))
            )
        return ReproResult(tables=[published.beside(result_rows, model, title=title)])

    return compute


def as_number(value: Any) -> float | None:
    """A metric as a number for a table cell; None for what is not one (a missing metric, a
    flag, a text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _scaled(value: Any, factor: float) -> float | None:
    number = as_number(value)
    return None if number is None else number * factor
