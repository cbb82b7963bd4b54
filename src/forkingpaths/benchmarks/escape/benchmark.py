"""The escape-v1 benchmark: MUTATE's ten scenarios, four attempts each, Metrics 1 and 2."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.env import (
    DEFAULT_ATTEMPTS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MEANINGLESS_LIMIT,
    EscapeEnv,
)
from forkingpaths.benchmarks.escape.judge import CRITERIA, judge_item_from_step, judge_step
from forkingpaths.benchmarks.escape.metadata import ScenarioMeta, load_meta
from forkingpaths.benchmarks.escape.metrics import (
    EscapeFacts,
    attempt_steps,
    counted_paths,
    divergence_momentum,
    episode_facts,
    is_judged,
    path_discovery,
    path_table,
)
from forkingpaths.benchmarks.escape.plots import path_table_plot
from forkingpaths.benchmarks.escape.reproduce import reproductions
from forkingpaths.benchmarks.escape.schema import Scenario, load_scenario
from forkingpaths.benchmarks.escape.view import escape_world_view
from forkingpaths.core.benchmark import (
    AgentSpec,
    Benchmark,
    Instance,
    MetricSpec,
    PlotArtifact,
    QuickConfig,
    RecordReader,
    ScoredEpisode,
)
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.protocol import StepHook
from forkingpaths.core.records import EpisodeRecord, StepRecord
from forkingpaths.core.reproduce import Reproduction

_AGENTS = "forkingpaths.benchmarks.escape.agents"
SCENARIO_DIR = Path(__file__).parent / "data" / "scenarios"
MUTATE_SCENARIOS = (
    "house_heist",
    "desert_restart",
    "laundry_machine_7",
    "sinking_ship",
    "beehive_removal",
    "missed_call",
    "pipe_leak",
    "space_station_fire",
    "underground_mine",
    "zombie_lab",
)
"""Tables 16 (two-phase) and 17 (one-phase), in the paper's order."""


class EscapeOptions(BaseModel):
    """Options of escape-v1 (`--option`, `benchmark_options`); the defaults are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempts: int = Field(
        default=DEFAULT_ATTEMPTS,
        strict=True,
        gt=0,
        description="attempts per scenario, §3.3; a positive integer, the paper's is 4",
    )
    """Attempts per scenario (§3.3); each later attempt forbids the finish actions found."""
    max_steps: int = Field(
        default=DEFAULT_MAX_STEPS,
        strict=True,
        gt=0,
        description="step budget of one attempt; a positive integer, 50 when the paper states none",
    )
    """Step budget of one attempt (`env.DEFAULT_MAX_STEPS` says why 50)."""
    meaningless_limit: int = Field(
        default=DEFAULT_MEANINGLESS_LIMIT,
        strict=True,
        gt=0,
        description="consecutive meaningless steps that end an attempt, §3.3; a positive "
        "integer, the paper's is 20",
    )
    """Consecutive meaningless steps that end an attempt (§3.3)."""
    crafting: Literal["ordered", "unordered"] = Field(
        default="ordered",
        description="craft(base, ingredient) order: ordered (MUTATE) or unordered (EscapeBench)",
    )
    """`ordered` (MUTATE: base first) or `unordered` (EscapeBench's games: either order)."""
    extra_paths: bool = Field(
        default=False,
        description="count gold paths the paper's catalog lacks (Desert Restart's tire-side "
        "P1_C1) in Path Discovery: false (the paper's 55 paths) or true (56)",
    )
    """Whether Path Discovery counts the paths marked `extra` in the metadata. Desert Restart's
    P1_C1 (expanding foam through the valve) is ours: Table 16 prints "No tire-side C1 path"
    and Table 18 marks it X for every method. False (default): the paper's 55 paths, the extra
    one reported apart as `extra_paths_found`; true: all 56."""
    scenarios: str | None = Field(
        default=None,
        description="scenario YAMLs of split `custom`: a directory or one file",
    )
    """A directory of scenario YAMLs (or one file) played as split `custom`; kept resolved to an
    absolute path."""

    @field_validator("scenarios", mode="before")
    @classmethod
    def _existing_path(cls, value: Any) -> Any:
        if value is None or not isinstance(value, str | Path):
            return value
        path = Path(value).expanduser()
        if not path.exists():
            raise ValueError("no such file or directory")
        return str(path.resolve())


class EscapeBenchmark(Benchmark):
    """MUTATE (mutate-redna.txt): ten escape-room scenarios, 55 mechanism-distinct gold paths
    (Tables 16-17), plus one of ours the paper lacks (Desert Restart's P1_C1, `extra_paths`).

    Split `mutate`: the ten scenarios of Tables 16-17 (our own writing). Split `custom`: every
    `*.yaml` of the `scenarios` option (a directory or one file), e.g. EscapeBench games with
    `crafting=unordered`; without a `.meta.yaml` beside them only escapes are counted.

    Protocol (§3.3), played by `EscapeEnv`: one episode = one scenario = `attempts` (4)
    attempts; a path found in an attempt has its finish action forbidden in the later ones;
    each attempt ends at the goal, at `max_steps` (50, the paper does not state it) or after
    `meaningless_limit` (20) consecutive meaningless steps. Metric 1, Path Discovery
    (`metrics.path_discovery`): distinct gold paths found per scenario and in all (x / 55; the extra
    path is counted apart as `extra_paths_found`, or in with `extra_paths=true`), Avg
    Step (mean steps per attempt), and the per-path O/X table (Tables 18-19). Metric 2,
    Divergence Momentum (`metrics.divergence_momentum`): with a `judge` role model, every
    apply/craft/input step that completes no path is scored 1-5 on Originality, Elaboration and
    Groundedness (App. C.2) by `step_hook`; means per criterion. Options: `EscapeOptions`.
    """

    id = "escape-v1"
    name = "escape"
    description = "MUTATE escape rooms: multi-path discovery over 4 attempts; divergence judge"
    splits = ("mutate",)
    """`custom` joins them when the `scenarios` option names scenario files."""
    default_split = "mutate"
    agents = MappingProxyType(
        {
            "base": AgentSpec(
                f"{_AGENTS}.react:make_base",
                needs_model=True,
                description="ReAct base agent (App. D.1, Prompts 1-3)",
            ),
            "self-refine": AgentSpec(
                f"{_AGENTS}.react:make_self_refine",
                needs_model=True,
                description="Self-Refine: base + feasibility check (App. D.2, Prompt 9)",
            ),
            "escapeagent": AgentSpec(
                f"{_AGENTS}.escapeagent:make_escapeagent",
                needs_model=True,
                description="EscapeAgent: task-list reflection + forethought (App. D.3)",
            ),
            "redna": AgentSpec(
                f"{_AGENTS}.redna:make_redna",
                needs_model=True,
                description="ReDNA: Reflect memory + Diverge-then-Narrow (§4, Table 11); tau=2",
            ),
            "r-only": AgentSpec(
                f"{_AGENTS}.redna:make_reflect_only",
                needs_model=True,
                description="ReDNA ablation: Reflect without DN (§5.2, Table 3)",
            ),
            "oracle": AgentSpec(
                f"{_AGENTS}.reference:make_oracle",
                needs_model=False,
                description="reference: plays the gold paths under the protocol (55/55 + 1 extra)",
            ),
            "systematic": AgentSpec(
                f"{_AGENTS}.reference:make_systematic",
                needs_model=False,
                description="reference: tries the valid action space breadth-first",
            ),
            "random": AgentSpec(
                f"{_AGENTS}.reference:make_random",
                needs_model=False,
                description="reference: uniform random valid actions",
            ),
            "human": AgentSpec(
                f"{_AGENTS}.human:make_human",
                needs_model=False,
                description="a person plays in the terminal; recorded like any agent",
                interactive=True,
            ),
        }
    )
    estimate_policy = "escape-explorer"
    model_roles = MappingProxyType(
        {"judge": "Metric 2 judge: scores apply/craft/input steps 1-5 (App. C.2)"}
    )
    quick = (
        QuickConfig(split="mutate", agent="oracle"),
        QuickConfig(split="mutate", agent="systematic"),
        QuickConfig(
            split="mutate",
            agent="redna",
            model="scripted/escape-explorer",
            instances=("zombie_lab", "house_heist"),
            roles=MappingProxyType({"judge": "scripted/escape-judge"}),
        ),
    )
    headline_metrics = (
        "paths_found",
        "path_discovery",
        "avg_steps",
        "originality",
        "elaboration",
        "groundedness",
    )
    metric_specs = MappingProxyType(
        {
            "episodes": MetricSpec("episodes", "none"),
            "errored": MetricSpec("errored episodes", "none"),
            "paths_found": MetricSpec("paths found", "higher"),
            "paths_total": MetricSpec("gold paths", "none"),
            "extra_paths_found": MetricSpec("extra paths found (not in the paper)", "none"),
            "path_discovery": MetricSpec("Path Discovery", "higher"),
            "avg_steps": MetricSpec("Avg Step", "lower"),
            "escapes": MetricSpec("escapes", "none"),
            "originality": MetricSpec("Originality", "higher"),
            "elaboration": MetricSpec("Elaboration", "higher"),
            "groundedness": MetricSpec("Groundedness", "higher"),
            "judged_steps": MetricSpec("judged steps", "none"),
            "judge_missing": MetricSpec("judge scores missing", "none"),
        }
    )
    Options = EscapeOptions
    cli_entry_point = "forkingpaths.benchmarks.escape.cli:app"

    config: EscapeOptions
    """The validated options (set by `Benchmark.__init__`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.config.scenarios is not None:
            # Resolved, so a resumed run finds the same files from another directory.
            self.options = {**self.options, "scenarios": self.config.scenarios}
            self.splits = ("mutate", "custom")  # type: ignore[misc]
        self._loaded: dict[str, tuple[Scenario, ScenarioMeta | None]] = {}

    # ---- instances ----

    def instances(self, split: str) -> list[Instance]:
        if split == "mutate":
            return [
                Instance(id=name, split=split, params={"file": str(SCENARIO_DIR / f"{name}.yaml")})
                for name in MUTATE_SCENARIOS
            ]
        if split == "custom" and self.config.scenarios is not None:
            path = Path(self.config.scenarios)
            files = [path] if path.is_file() else sorted(path.glob("*.yaml"))
            return [
                Instance(id=f.stem, split=split, params={"file": str(f)})
                for f in files
                if not f.name.endswith(".meta.yaml")
            ]
        return self.select_instances(split, None)

    def select_instances(self, split: str, ids: list[str] | None) -> list[Instance]:
        if split == "custom" and self.config.scenarios is None:
            raise ConfigError("split 'custom' needs -b scenarios=DIR_OR_FILE (scenario YAMLs)")
        return super().select_instances(split, ids)

    def load(self, instance: Instance) -> tuple[Scenario, ScenarioMeta | None]:
        """The scenario and its path metadata (None when the file has none), loaded once."""
        if instance.id not in self._loaded:
            file = Path(instance.params["file"])
            meta_file = file.with_name(f"{file.stem}.meta.yaml")
            meta = load_meta(meta_file) if meta_file.exists() else None
            self._loaded[instance.id] = (load_scenario(file), meta)
        return self._loaded[instance.id]

    def make_game(self, instance: Instance) -> EscapeGame:
        scenario, _ = self.load(instance)
        return EscapeGame(scenario, crafting=self.config.crafting)

    # ---- protocol ----

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> EscapeEnv:
        """The scenario under the protocol: `attempts` attempts, the finish actions found
        forbidden in the later ones (the judge role is played by `step_hook`)."""
        _, meta = self.load(instance)
        return EscapeEnv(
            self.make_game(instance),
            meta,
            attempts=self.config.attempts,
            max_steps=self.config.max_steps,
            meaningless_limit=self.config.meaningless_limit,
        )

    def max_steps(self, instance: Instance) -> int:
        # Every attempt ends by its own budget at the latest, so the runner's TurnLimit never
        # cuts an episode short.
        return self.config.attempts * self.config.max_steps

    def step_hook(self, env: Env, roles: Mapping[str, ChatModel]) -> StepHook:
        """Completes each step's record: a step that ended an attempt gets that attempt's last
        view as its feedback and its end flags (`EscapeEnv.attempt_end`); with a `judge` role,
        a step Metric 2 scores (`metrics.is_judged`) gets the judge's calls after the agent's
        and its verdict in `info["judge"]` (App. C.2). The judge needs the agent's Thought,
        which only the step's record holds."""
        escape = env.unwrapped
        if not isinstance(escape, EscapeEnv):
            raise TypeError(f"escape step hook: expected an EscapeEnv, got {type(escape).__name__}")
        judge = roles.get("judge")

        async def on_step(step: StepRecord) -> None:
            end = escape.attempt_end
            if end is not None:
                step.feedback = end.observation.text
                step.terminated, step.truncated = end.terminated, end.truncated
            if judge is not None and is_judged(step):
                item = judge_item_from_step(step, escape.game.objective)
                verdict = await judge_step(judge, item)
                step.calls.extend(verdict.calls)
                step.info["judge"] = verdict.as_info()

        return on_step

    # ---- metrics ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        outcome = record.outcome
        attempts = outcome.get("attempts", [])
        facts = [episode_facts(record)]
        steps = attempt_steps(facts)
        metrics: dict[str, Any] = {
            **path_discovery(facts, include_extra=self.config.extra_paths),
            "escapes": outcome.get("escapes", 0),
            "avg_steps": statistics.fmean(steps) if steps else 0.0,
            "invalid_actions": sum(a.get("invalid", 0) for a in attempts),
            "meaningless_stops": sum(a.get("stop") == "meaningless" for a in attempts),
            "paths": path_table(facts),
        }
        metrics.update(divergence_momentum(facts))
        return metrics

    def episode_facts(self, record: EpisodeRecord) -> dict[str, Any]:
        """Paths, attempt lengths, escapes and the judge's verdicts (`metrics.episode_facts`)."""
        return episode_facts(record)

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        ok = [e for e in episodes if e.status == "ok"]
        facts = [e.facts for e in ok]
        extra = self.config.extra_paths
        discovery = path_discovery(facts, include_extra=extra)
        found, total = discovery["paths_found"], discovery["paths_total"]
        steps = attempt_steps(facts)
        out: dict[str, Any] = {
            "episodes": len(episodes),
            "errored": len(episodes) - len(ok),
            **discovery,
            "path_discovery_text": f"{found} / {total} ({100 * found / total:.1f}%)"
            if total
            else "-",
            "avg_steps": statistics.fmean(steps) if steps else None,
            "escapes": sum(f["escapes"] for f in facts),
        }
        out.update(divergence_momentum(facts))
        trials = sorted({e.trial for e in ok})
        if len(trials) > 1:
            # Repeated runs (Table 15: T=0.7, three runs): mean and sample std over runs.
            per_trial = [[e.facts for e in ok if e.trial == t] for t in trials]
            out["path_discovery_std"] = statistics.stdev(
                path_discovery(fs, include_extra=extra)["path_discovery"] or 0.0 for fs in per_trial
            )
            out["avg_steps_std"] = statistics.stdev(
                statistics.fmean(attempt_steps(fs)) for fs in per_trial
            )
            for criterion in CRITERIA:
                values = [divergence_momentum(fs)[criterion] for fs in per_trial]
                values = [v for v in values if v is not None]
                if len(values) > 1:
                    out[f"{criterion}_std"] = statistics.stdev(values)
        groups: dict[str, dict[str, Any]] = {}
        by_scenario: dict[str, list[EscapeFacts]] = defaultdict(list)
        for e in ok:
            by_scenario[e.instance_id].append(e.facts)
        for scenario, fs in by_scenario.items():
            groups[scenario] = {
                "paths_found": statistics.fmean(
                    len(counted_paths(f, include_extra=extra)[0]) for f in fs
                ),
                "paths_total": len(counted_paths(fs[0], include_extra=extra)[1]),
                "extra_paths_found": statistics.fmean(
                    len(set(f["paths_extra"]) & set(f["paths_found"])) for f in fs
                ),
                "avg_steps": statistics.fmean(attempt_steps(fs)),
                # Tables 18-19: O when the path was found; with several trials, in any of them.
                **path_table(fs),
            }
        out["by_group"] = groups
        return out

    def report_plots(
        self, episodes: list[ScoredEpisode], out_dir: Path, records: RecordReader
    ) -> list[PlotArtifact]:
        plot = path_table_plot(episodes, out_dir)
        return [plot] if plot is not None else []

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """Attempt lanes, gold paths, forbidden finish actions, meaningless streaks, judge
        scores, and the scene and bag per position (`view.escape_world_view`)."""
        return escape_world_view(self, record)

    def reproductions(self) -> list[Reproduction]:
        """Tables 1-4, 10 and 15 of the MUTATE paper (Table 4 runs on aut-v1)."""
        return reproductions()
