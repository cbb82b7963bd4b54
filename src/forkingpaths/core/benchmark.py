"""The benchmark contract: Instance, AgentSpec and the Benchmark base class."""

from __future__ import annotations

import inspect
import sys
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forkingpaths.core.agent import Agent
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, OrderEnforcing, TurnLimit
from forkingpaths.core.errors import ConfigError, NameNotFound, shown
from forkingpaths.core.protocol import StepHook, play_episode
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.registry import load_entry_point
from forkingpaths.core.reproduce import Reproduction

_FACTORY_ARGS = ("benchmark", "model")
"""Arguments every agent factory receives from the runner; the others are the agent's options."""


class Instance(BaseModel):
    """One playable task of a benchmark (a map, a scenario, a puzzle)."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Unique within the benchmark."""
    split: str
    """Split it belongs to."""
    params: dict[str, Any] = Field(default_factory=dict)
    """What the benchmark needs to build the env (generator preset, seed, file...)."""


@dataclass(frozen=True)
class AgentSpec:
    """A named agent of a benchmark: its factory's import path and whether it needs a model."""

    entry_point: str
    """`module:callable`; called as `factory(benchmark=..., model=..., **options)`."""
    needs_model: bool
    """False for reference agents (random, frontier) that decide without a model."""
    description: str = ""
    """One line for `forkingpaths list`."""
    default_options: Mapping[str, Any] = field(default_factory=dict)
    """Options applied under the user's."""
    interactive: bool = False
    """A person answers in the terminal: the runner plays one episode at a time, no live
    progress display."""


@dataclass(frozen=True)
class QuickConfig:
    """What the offline quick suite runs for a benchmark."""

    split: str
    agent: str
    model: str | None = None
    instances: tuple[str, ...] | None = None
    agent_options: Mapping[str, Any] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)
    """Role -> model id (scripted stand-ins offline)."""


@dataclass(frozen=True)
class MetricSpec:
    """How a run-level metric reads: its label in tables and which way is better (so `compare`
    and reports can rank runs)."""

    label: str
    """Column title (the paper's name for it)."""
    direction: Literal["higher", "lower", "none"] = "higher"
    """`higher` or `lower` is better; `none` for counts and descriptive figures."""


class NoOptions(BaseModel):
    """A benchmark without options."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def check_options(model: type[BaseModel], options: Mapping[str, Any], benchmark: str) -> BaseModel:
    """Validate a benchmark's options against its options model; a bad one is refused with one
    line naming the option, the value received and what is allowed."""
    try:
        return model.model_validate(dict(options))
    except ValidationError as exc:
        error = exc.errors()[0]
        name = ".".join(str(part) for part in error["loc"]) or "options"
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(model.model_fields) or "(none)"
            raise ConfigError(
                f"{benchmark} has no option {name!r}; its options: {allowed}"
            ) from None
        field_info = model.model_fields.get(str(error["loc"][0])) if error["loc"] else None
        what = f" ({field_info.description})" if field_info and field_info.description else ""
        raise ConfigError(
            f"{benchmark} option {name}{what}: {error['msg']}, got {shown(error.get('input'))}"
        ) from None


@dataclass(frozen=True)
class PlotArtifact:
    """A figure a benchmark adds to a report."""

    title: str
    path: Path
    caption: str = ""


@dataclass(frozen=True, slots=True)
class ScoredEpisode:
    """One episode as run-level scoring, reports and figures see it: its key, status, size and
    usage, its per-episode metrics and the benchmark's `episode_facts`, without its steps. A
    run keeps one of these per episode instead of its records (a 100,000-episode run's records
    do not fit in memory; these do)."""

    instance_id: str
    trial: int
    split: str
    seed: int
    status: Literal["ok", "error"]
    error: str | None
    """What went wrong, for an errored episode."""
    n_steps: int
    """Steps taken."""
    n_calls: int
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int
    duration_s: float
    metrics: dict[str, Any]
    """`EpisodeRecord.metrics` (recomputed by `episode_metrics` when a run is rescored)."""
    facts: Mapping[str, Any]
    """`Benchmark.episode_facts` of the record."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.instance_id, self.trial)


RecordReader = Callable[[Sequence[ScoredEpisode]], Iterator[EpisodeRecord]]
"""Reads the full records of some episodes of a run, in the order given, one line of the run at
a time (a figure that draws a few episodes' steps asks for those few)."""


class Benchmark(ABC):
    """A named, versioned suite: instances, env construction, protocol and scoring.

    Subclasses set the class variables and implement `instances`, `make_env`, `episode_metrics`
    and `aggregate`. Every episode is one `play_episode` over the env `make_env` builds (with the
    protocol's role models); a protocol with attempts, a dialogue or a generate-and-execute task
    lives in its env, and a per-step judge in `step_hook`. The runner wraps the env in
    `OrderEnforcing` and `TurnLimit(max_steps)`.
    """

    id: ClassVar[str]
    """Versioned id (`griddag-v1`); bump the version whenever rules or scoring change."""
    name: ClassVar[str]
    """Short name used on the command line (`griddag`)."""
    description: ClassVar[str] = ""
    splits: ClassVar[tuple[str, ...]]
    default_split: ClassVar[str]
    agents: ClassVar[Mapping[str, AgentSpec]]
    scripted_policies: ClassVar[Mapping[str, str]] = {}
    """Scripted model policies this benchmark contributes: name -> `module:class`."""
    estimate_policy: ClassVar[str | None] = None
    """Scripted policy that stands in for a competent model in `forkingpaths estimate`."""
    quick: ClassVar[tuple[QuickConfig, ...]]
    """Runs of the offline quick suite for this benchmark (reference agents, scripted models)."""
    gym_ids: ClassVar[Mapping[str, str]] = {}
    """Gymnasium ids a plugin benchmark registers (`acme/Thing-v0`) -> instance-id prefix; the
    built-ins' are listed in `registry.GYM_IDS`, so registering them imports no benchmark."""
    cli_entry_point: ClassVar[str | None] = None
    """`module:typer_app` mounted as `forkingpaths <name> ...` (benchmark-specific commands)."""
    headline_metrics: ClassVar[tuple[str, ...]] = ()
    """Aggregate metrics shown in summary tables, in order."""
    metric_specs: ClassVar[Mapping[str, MetricSpec]] = {}
    """Label and direction of the run-level metrics (`aggregate`'s keys) that can rank runs."""
    Options: ClassVar[type[BaseModel]] = NoOptions
    """The benchmark's options as one pydantic model (extra fields forbidden): `--option` and
    `benchmark_options` are validated against it and `self.config` holds the result."""
    model_roles: ClassVar[Mapping[str, str]] = {}
    """Models the protocol itself calls (role -> what for), e.g. a judge; the user configures
    them with `--role ROLE=MODEL` and `run_episode` receives them in `roles`."""
    role_defaults_by_model: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    """Role models a run gets when the user names none for a role and the agent's model is a
    key here (a scripted questioner only asks: the scripted responder and judge answer); the
    runner writes them into the run's spec."""
    roles_default_to_agent: ClassVar[frozenset[str]] = frozenset()
    """Roles played by the agent's own model when the user configures none (TurtleSoup's
    symmetric design: the questioner's model also answers)."""

    def __init__(self, **options: Any) -> None:
        self.config: Any = check_options(type(self).Options, options, self.name)
        """The validated options (an instance of `Options`)."""
        # What the user gave, as given: it goes into the RunSpec, so defaults stay out of it.
        self.options = dict(options)
        self._instance_index: dict[str, Instance] | None = None

    def instance(self, instance_id: str) -> Instance:
        """An instance by id, whichever split lists it (indexed once per benchmark object)."""
        if self._instance_index is None:
            index: dict[str, Instance] = {}
            for split in self.splits:
                for instance in self.instances(split):
                    index.setdefault(instance.id, instance)
            self._instance_index = index
        try:
            return self._instance_index[instance_id]
        except KeyError:
            raise ConfigError(f"{self.name} has no instance {instance_id!r}") from None

    @abstractmethod
    def instances(self, split: str) -> list[Instance]:
        """All instances of a split, in a stable order."""

    @abstractmethod
    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        """A fresh environment for the instance. `roles` holds the configured models of
        `model_roles` (absent roles are missing); a protocol env keeps what it calls."""

    def max_steps(self, instance: Instance) -> int:
        """Hard cap on steps for one episode (a safety net; envs usually truncate earlier)."""
        return 1000

    def reset_options(self, instance: Instance, agent: Agent) -> dict[str, Any] | None:
        """Options of the episode's `reset` (an ablation that an agent option switches in the
        env, such as TurtleSoup's "w/o Key Clue"); None by default."""
        return None

    def step_hook(self, env: Env, roles: Mapping[str, ChatModel]) -> StepHook | None:
        """A per-step hook of `play_episode` (a judge of each step); None by default."""
        return None

    def wrap_env(self, env: Env, instance: Instance) -> Env:
        """The env as the runner plays it: ordering enforced, turns capped at `max_steps`."""
        return OrderEnforcing(TurnLimit(env, self.max_steps(instance)))

    def episode_seed(self, instance: Instance, trial: int, base_seed: int) -> int:
        """Seed for one episode; stable across runs and processes."""
        return (zlib.crc32(instance.id.encode()) + 1_000_003 * trial + base_seed) % (2**31)

    def make_agent(self, name: str, model: ChatModel | None, options: Mapping[str, Any]) -> Agent:
        spec = self.agent_spec(name)
        factory = load_entry_point(spec.entry_point)
        allowed = [p for p in inspect.signature(factory).parameters if p not in _FACTORY_ARGS]
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ConfigError(
                f"agent {name!r} of {self.name} has no option {', '.join(map(repr, unknown))}; "
                f"its options: {', '.join(allowed) or '(none)'}"
            )
        return factory(benchmark=self, model=model, **{**spec.default_options, **options})

    def agent_spec(self, name: str) -> AgentSpec:
        if name not in self.agents:
            raise NameNotFound(f"agent of {self.name}", name, list(self.agents))
        return self.agents[name]

    def sample_instances(self, split: str, n: int) -> list[Instance]:
        """At most n instances of a split for a smoke test (`reproduce --limit`): the first n;
        a benchmark whose split mixes kinds (Combo and Explore) takes some of each."""
        return self.instances(split)[:n]

    def select_instances(self, split: str, ids: list[str] | None) -> list[Instance]:
        if split not in self.splits:
            raise NameNotFound(f"split of {self.name}", split, list(self.splits))
        pool = self.instances(split)
        if ids is None:
            return pool
        by_id = {i.id: i for i in pool}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ConfigError(
                f"--instances: {', '.join(missing)} not in split {split!r} of {self.name}; "
                f"it has {len(pool)} instances, e.g. {', '.join(list(by_id)[:5])}"
            )
        return [by_id[i] for i in ids]

    async def run_episode(
        self,
        instance: Instance,
        agent: Agent,
        record: EpisodeRecord,
        roles: Mapping[str, ChatModel] = MappingProxyType({}),
    ) -> EpisodeRecord:
        """Play one episode into `record` (steps, outcome); metrics are added by the runner.
        Not overridden: a benchmark's protocol is its env (`make_env`), its reset options and
        its step hook, so the contract tests exercise the code that writes the records."""
        env = self.make_env(instance, roles)
        try:
            await play_episode(
                self.wrap_env(env, instance),
                agent,
                record,
                max_steps=self.max_steps(instance),
                options=self.reset_options(instance, agent),
                on_step=self.step_hook(env, roles),
            )
        finally:
            env.close()
        return record

    @abstractmethod
    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        """Per-episode metrics computed from the record alone (no model calls)."""

    def episode_facts(self, record: EpisodeRecord) -> dict[str, Any]:
        """What `aggregate` and `report_plots` read of an episode besides its metrics: a few
        values from its outcome, initial info or steps (a judge's scores, a path list). Taken
        once per record while the run is read one line at a time, and kept for every episode
        of the run, so keep it small; none by default."""
        return {}

    @abstractmethod
    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        """Run-level metrics over the episodes (errored ones included as the paper counts them,
        or excluded and counted, as the benchmark documents): their `metrics` and `facts`.
        A list of records is scored with `score_records`."""

    def report_plots(
        self, episodes: list[ScoredEpisode], out_dir: Path, records: RecordReader
    ) -> list[PlotArtifact]:
        """Figures for the run report, written under out_dir, from the finished episodes;
        `records` reads the full records of a few of them (a trajectory). Drawn after the
        run's summary is printed (in the background after `forkingpaths run`)."""
        return []

    def score_records(self, records: Sequence[EpisodeRecord]) -> dict[str, Any]:
        """`aggregate` over records held in memory (a reproduction's pooled runs, a test)."""
        return self.aggregate([scored_episode(self, record) for record in records])

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release what the benchmark holds across episodes (a sandbox pool); the runner calls
        it when a run ends."""

    def reproductions(self) -> list[Reproduction]:
        """The paper's tables and figures this benchmark reproduces (`forkingpaths reproduce`);
        their published numbers live in the benchmark's `data/published/`."""
        return []

    def published_dir(self) -> Path:
        """Where the benchmark's published tables (YAML) live."""
        return Path(inspect.getfile(type(self))).parent / "data" / "published"

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The benchmark's world as the viewer draws it beside an episode's step timeline
        (`forkingpaths view`): JSON built from the record alone (no model calls, the calls'
        messages not loaded), read by the benchmark's `web/view.js`. Its `frames`, where it has
        them, are indexed by position: 0 after reset, p after the first p steps. None: the
        benchmark has no world view."""
        return None

    @classmethod
    def view_script(cls) -> Path | None:
        """The ES module that draws `world_view` in the browser: `web/view.js` beside the
        benchmark's class, if it exists. It exports `renderWorld(root, view, position, ui)`.
        A class method: serving it builds no benchmark (loading content takes up to 0.1 s)."""
        path = Path(inspect.getfile(cls)).parent / "web" / "view.js"
        return path if path.is_file() else None

    @classmethod
    def play_script(cls) -> Path | None:
        """The ES module that draws a person's controls when they play this benchmark in the
        browser (`forkingpaths study`): `web/play.js` beside the benchmark's class, if it
        exists. It exports `renderPlay(root, state, ui, send)`."""
        path = Path(inspect.getfile(cls)).parent / "web" / "play.js"
        return path if path.is_file() else None

    def compare_plots(self, summaries: list[dict[str, Any]], out_dir: Path) -> list[PlotArtifact]:
        """Figures comparing several runs (their metrics.json contents); written under out_dir."""
        return []


def scored_episode(
    benchmark: Benchmark, record: EpisodeRecord, *, recompute: bool = False
) -> ScoredEpisode:
    """What a run keeps of a record; with `recompute` an ok episode's metrics are computed
    afresh by `episode_metrics` (a rescore) instead of read from the record."""
    metrics = record.metrics
    if recompute and record.status == "ok":
        metrics = benchmark.episode_metrics(record)
    return ScoredEpisode(
        instance_id=sys.intern(record.instance_id),
        trial=record.trial,
        split=sys.intern(record.split),
        seed=record.seed,
        status=record.status,
        error=record.error,
        n_steps=len(record.steps),
        n_calls=record.n_calls,
        cost_usd=record.cost_usd,
        prompt_tokens=record.usage.prompt_tokens,
        completion_tokens=record.usage.completion_tokens,
        duration_s=record.duration_s,
        metrics=_shared(metrics),
        facts=_shared(benchmark.episode_facts(record)) or _NO_FACTS,
    )


_NO_FACTS: Mapping[str, Any] = MappingProxyType({})
"""The facts of an episode whose benchmark takes none: one read-only empty mapping for all."""


def _shared(value: Any) -> Any:
    """`value` with its dict keys and short strings interned: a run keeps one row per episode,
    and every record's copy of the same key names would otherwise cost more than its values."""
    if isinstance(value, dict):
        return {sys.intern(k) if type(k) is str else k: _shared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v) for v in value]
    if type(value) is str and len(value) <= _SHARED_CHARS:
        return sys.intern(value)
    return value


_SHARED_CHARS = 64
"""Longest string value `_shared` interns (names and labels, not texts)."""
