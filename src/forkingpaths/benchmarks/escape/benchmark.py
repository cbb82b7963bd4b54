"""The escape-v1 benchmark: MUTATE's ten scenarios, four attempts each, Metrics 1 and 2."""

from __future__ import annotations

import asyncio
import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.escape.env import (
    DEFAULT_ATTEMPTS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MEANINGLESS_LIMIT,
    JUDGED_KINDS,
    EscapeEnv,
)
from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, PlotArtifact, QuickConfig
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, StepRecord

if TYPE_CHECKING:
    from forkingpaths.benchmarks.escape.engine import EscapeGame
    from forkingpaths.benchmarks.escape.metadata import ScenarioMeta
    from forkingpaths.benchmarks.escape.schema import Scenario
    from forkingpaths.core.agent import Agent
    from forkingpaths.core.chat import ChatModel

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
CRITERIA = ("originality", "elaboration", "groundedness")
JUDGE_CONCURRENCY = 8
"""Judge calls of one episode in flight at once (the model's own limit still applies)."""


def _positive_int(options: Mapping[str, Any], name: str, default: int) -> int:
    value = options.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name}: expected a positive integer (default {default}), got {value!r}")
    return value


class EscapeBenchmark(Benchmark):
    """MUTATE (mutate-redna.txt): ten escape-room scenarios, 56 mechanism-distinct gold paths.

    Split `mutate`: the ten scenarios of Tables 16-17 (our own writing). Split `custom`: every
    `*.yaml` of the `scenarios` option (a directory or one file), e.g. EscapeBench games with
    `crafting=unordered`; without a `.meta.yaml` beside them only escapes are counted.

    Protocol (§3.3): one episode = one scenario = `attempts` (4) attempts; a path found in an
    attempt has its finish action forbidden in the later ones; each attempt ends at the goal,
    at `max_steps` (50, the paper does not state it) or after `meaningless_limit` (20)
    consecutive meaningless steps (defined in `EscapeEnv`). Metric 1, Path Discovery: distinct
    gold paths found per scenario and in all (x / 56), Avg Step (mean steps per attempt), and
    the per-path O/X table (Tables 18-19). Metric 2, Divergence Momentum: with a `judge` role
    model, every apply/craft/input step that completes no path is scored 1-5 on Originality,
    Elaboration and Groundedness (App. C.2); means per criterion. Options: `attempts`,
    `max_steps`, `meaningless_limit`, `crafting` (ordered | unordered), `scenarios`.
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
                description="reference: plays the gold paths under the protocol (56/56)",
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
    cli_entry_point = "forkingpaths.benchmarks.escape.cli:app"

    def __init__(self, **options: Any) -> None:
        allowed = {"attempts", "max_steps", "meaningless_limit", "crafting", "scenarios"}
        unknown = set(options) - allowed
        if unknown:
            raise ConfigError(
                f"unknown escape option(s) {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}"
            )
        self.attempts = _positive_int(options, "attempts", DEFAULT_ATTEMPTS)
        self.attempt_steps = _positive_int(options, "max_steps", DEFAULT_MAX_STEPS)
        self.meaningless_limit = _positive_int(
            options, "meaningless_limit", DEFAULT_MEANINGLESS_LIMIT
        )
        self.crafting = options.get("crafting", "ordered")
        if self.crafting not in ("ordered", "unordered"):
            raise ConfigError(f"crafting: expected ordered or unordered, got {self.crafting!r}")
        scenarios = options.get("scenarios")
        if scenarios is not None:
            path = Path(str(scenarios)).expanduser()
            if not path.exists():
                raise ConfigError(f"scenarios: {str(path)!r} does not exist")
            options = {**options, "scenarios": str(path.resolve())}
        super().__init__(**options)
        if scenarios is not None:
            self.splits = ("mutate", "custom")  # type: ignore[misc]
        self._loaded: dict[str, tuple[Scenario, ScenarioMeta | None]] = {}

    # ---- instances ----

    def instances(self, split: str) -> list[Instance]:
        if split == "mutate":
            return [
                Instance(id=name, split=split, params={"file": str(SCENARIO_DIR / f"{name}.yaml")})
                for name in MUTATE_SCENARIOS
            ]
        if split == "custom" and self.options.get("scenarios") is not None:
            path = Path(self.options["scenarios"])
            files = [path] if path.is_file() else sorted(path.glob("*.yaml"))
            return [
                Instance(id=f.stem, split=split, params={"file": str(f)})
                for f in files
                if not f.name.endswith(".meta.yaml")
            ]
        return self.select_instances(split, None)

    def select_instances(self, split: str, ids: list[str] | None) -> list[Instance]:
        if split == "custom" and self.options.get("scenarios") is None:
            raise ConfigError("split 'custom' needs -b scenarios=DIR_OR_FILE (scenario YAMLs)")
        return super().select_instances(split, ids)

    def load(self, instance: Instance) -> tuple[Scenario, ScenarioMeta | None]:
        """The scenario and its path metadata (None when the file has none), loaded once."""
        if instance.id not in self._loaded:
            from forkingpaths.benchmarks.escape.metadata import load_meta
            from forkingpaths.benchmarks.escape.schema import load_scenario

            file = Path(instance.params["file"])
            meta_file = file.with_name(f"{file.stem}.meta.yaml")
            meta = load_meta(meta_file) if meta_file.exists() else None
            self._loaded[instance.id] = (load_scenario(file), meta)
        return self._loaded[instance.id]

    def make_game(self, instance: Instance) -> EscapeGame:
        from forkingpaths.benchmarks.escape.engine import EscapeGame

        scenario, _ = self.load(instance)
        return EscapeGame(scenario, crafting=self.crafting)

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> EscapeEnv:
        """One attempt with nothing forbidden (the first attempt of the protocol)."""
        game = self.make_game(instance)
        _, meta = self.load(instance)
        return EscapeEnv(
            game,
            meta,
            initial=game.snapshot(),
            max_steps=self.attempt_steps,
            meaningless_limit=self.meaningless_limit,
        )

    def max_steps(self, instance: Instance) -> int:
        return self.attempts * self.attempt_steps

    # ---- protocol ----

    async def run_episode(
        self,
        instance: Instance,
        agent: Agent,
        record: EpisodeRecord,
        roles: Mapping[str, ChatModel] = MappingProxyType({}),
    ) -> EpisodeRecord:
        """Four attempts; finish actions of found paths are forbidden in the later ones."""
        from forkingpaths.core.protocol import play_episode

        game = self.make_game(instance)
        _, meta = self.load(instance)
        initial = game.snapshot()
        found: list[str] = []
        forbidden: list[str] = []
        attempts: list[dict[str, Any]] = []
        for attempt in range(self.attempts):
            env = EscapeEnv(
                game,
                meta,
                initial=initial,
                attempt=attempt,
                forbidden=forbidden,
                max_steps=self.attempt_steps,
                meaningless_limit=self.meaningless_limit,
            )
            seed = record.seed + attempt
            agent.reset(instance, seed)
            await play_episode(env, agent, record, max_steps=self.attempt_steps, seed=seed)
            outcome = env.outcome()
            attempts.append(outcome)
            for path_id in outcome["paths"]:
                if path_id not in found and meta is not None:
                    found.append(path_id)
                    forbidden += [p.finish for p in meta.paths if p.id == path_id]
        record.outcome = {
            "scenario": instance.id,
            "paths_found": found,
            "paths_total": [p.id for p in meta.paths] if meta else [],
            "escapes": sum(a["game_end"] for a in attempts),
            "attempts": attempts,
        }
        judge = roles.get("judge")
        if judge is not None:
            await self._judge(judge, record)
        return record

    async def _judge(self, judge: ChatModel, record: EpisodeRecord) -> None:
        """Metric 2 over the episode's off-path apply/craft/input steps (App. C.2)."""
        from forkingpaths.benchmarks.escape.judge import judge_item_from_step, judge_step

        objective = record.initial_info.get("objective", "")
        gate = asyncio.Semaphore(JUDGE_CONCURRENCY)

        async def one(step: StepRecord) -> None:
            async with gate:
                verdict = await judge_step(judge, judge_item_from_step(step, objective))
            step.calls.extend(verdict.calls)
            step.info["judge"] = (
                dict(verdict.scores)
                if verdict.scores is not None
                else {"missing": verdict.missing_reason or "no score"}
            )

        await asyncio.gather(*(one(s) for s in record.steps if is_judged(s)))

    # ---- metrics ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        outcome = record.outcome
        attempts = outcome.get("attempts", [])
        found = outcome.get("paths_found", [])
        total = outcome.get("paths_total", [])
        metrics: dict[str, Any] = {
            "paths_found": len(found),
            "paths_total": len(total),
            "path_discovery": len(found) / len(total) if total else None,
            "escapes": outcome.get("escapes", 0),
            "avg_steps": statistics.fmean(a["steps"] for a in attempts) if attempts else 0.0,
            "invalid_actions": sum(a.get("invalid", 0) for a in attempts),
            "meaningless_stops": sum(a.get("stop") == "meaningless" for a in attempts),
            "paths": {p: ("O" if p in found else "X") for p in total},
        }
        metrics.update(momentum([record]))
        return metrics

    def aggregate(self, records: list[EpisodeRecord]) -> dict[str, Any]:
        ok = [r for r in records if r.status == "ok"]
        found = sum(len(r.outcome.get("paths_found", [])) for r in ok)
        total = sum(len(r.outcome.get("paths_total", [])) for r in ok)
        attempt_steps = [a["steps"] for r in ok for a in r.outcome.get("attempts", [])]
        out: dict[str, Any] = {
            "episodes": len(records),
            "errored": len(records) - len(ok),
            "paths_found": found,
            "paths_total": total,
            "path_discovery": found / total if total else None,
            "path_discovery_text": f"{found} / {total} ({100 * found / total:.1f}%)"
            if total
            else "-",
            "avg_steps": statistics.fmean(attempt_steps) if attempt_steps else None,
            "escapes": sum(r.outcome.get("escapes", 0) for r in ok),
        }
        out.update(momentum(ok))
        trials = sorted({r.trial for r in ok})
        if len(trials) > 1:
            # Repeated runs (Table 15: T=0.7, three runs): mean and sample std over runs.
            per_trial = [[r for r in ok if r.trial == t] for t in trials]
            rates = [
                sum(len(r.outcome.get("paths_found", [])) for r in rs)
                / max(1, sum(len(r.outcome.get("paths_total", [])) for r in rs))
                for rs in per_trial
            ]
            out["path_discovery_std"] = statistics.stdev(rates)
            out["avg_steps_std"] = statistics.stdev(
                statistics.fmean(a["steps"] for r in rs for a in r.outcome.get("attempts", []))
                for rs in per_trial
            )
            for criterion in CRITERIA:
                values = [momentum(rs)[criterion] for rs in per_trial]
                values = [v for v in values if v is not None]
                if len(values) > 1:
                    out[f"{criterion}_std"] = statistics.stdev(values)
        groups: dict[str, dict[str, Any]] = {}
        by_scenario: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for r in ok:
            by_scenario[r.instance_id].append(r)
        for scenario, rs in by_scenario.items():
            row: dict[str, Any] = {
                "paths_found": statistics.fmean(len(r.outcome.get("paths_found", [])) for r in rs),
                "paths_total": len(rs[0].outcome.get("paths_total", [])),
                "avg_steps": statistics.fmean(
                    a["steps"] for r in rs for a in r.outcome.get("attempts", [])
                ),
            }
            # Tables 18-19: O when the path was found; with several trials, in any of them.
            for path_id in rs[0].outcome.get("paths_total", []):
                row[path_id] = (
                    "O" if any(path_id in r.outcome.get("paths_found", []) for r in rs) else "X"
                )
            groups[scenario] = row
        out["by_group"] = groups
        return out

    def report_plots(self, records: list[EpisodeRecord], out_dir: Path) -> list[PlotArtifact]:
        from forkingpaths.benchmarks.escape.plots import path_table_plot

        plot = path_table_plot(records, out_dir)
        return [plot] if plot is not None else []


def is_judged(step: StepRecord) -> bool:
    """Metric 2 scores apply/craft/input steps that complete no path (§3.1), the ones the env
    could not execute included (an attempted mechanism with its Thought); refused forbidden
    finish actions are not attempts of a new mechanism and are left out."""
    info = step.info
    return (
        info.get("kind") in JUDGED_KINDS and info.get("path") is None and not info.get("forbidden")
    )


def momentum(records: list[EpisodeRecord]) -> dict[str, Any]:
    """Divergence Momentum means per criterion over judged steps (None when nothing judged)."""
    scores: dict[str, list[float]] = {c: [] for c in CRITERIA}
    judged = missing = 0
    for record in records:
        for step in record.steps:
            verdict = step.info.get("judge")
            if verdict is None:
                continue
            if "missing" in verdict:
                missing += 1
                continue
            judged += 1
            for criterion in CRITERIA:
                scores[criterion].append(float(verdict[criterion]))
    out: dict[str, Any] = {c: (statistics.fmean(v) if v else None) for c, v in scores.items()}
    out["judged_steps"] = judged
    out["judge_missing"] = missing
    return out
