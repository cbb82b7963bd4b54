"""The griddag-v1 benchmark: instances of the paper's splits, env, agents, metrics, plots."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.generator import generate_world
from forkingpaths.benchmarks.griddag.metric import score_trajectory
from forkingpaths.benchmarks.griddag.plots import write_compare_plots, write_report_plots
from forkingpaths.benchmarks.griddag.reproduce import reproductions
from forkingpaths.benchmarks.griddag.semantic import SEMANTIC_MAP_IDS, load_semantic_world
from forkingpaths.benchmarks.griddag.view import world_view
from forkingpaths.benchmarks.griddag.world import BUDGET_ALPHA, World
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
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.reproduce import Reproduction

EXPLORATION_LEVELS = ("low", "medium", "high")
DAG_LEVELS = ("easy", "medium", "hard")
MAIN_SEEDS = (0, 1, 2)
SEMANTIC_SEEDS = (0, 1, 2, 3, 4)
SEMANTIC_VARIANTS = ("semantic", "symbolic")

_AGENTS = "forkingpaths.benchmarks.griddag.agents"


class GridDagOptions(BaseModel):
    """Options of griddag-v1 (`--option`, `benchmark_options`); the defaults are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    budget_alpha: int = Field(
        default=BUDGET_ALPHA,
        strict=True,
        gt=0,
        description="alpha of the hidden step budget B = alpha x |cells|, App. C.1 Eq. 7; "
        "a positive integer, the paper's is 3",
    )
    """alpha of the hidden step budget B = alpha x |M| (App. C.1, Eq. 7); it changes neither the
    DAG nor the grid, only how many steps an episode may take before it is truncated."""


class GridDagBenchmark(Benchmark):
    """Partially observable grid + hidden task DAG (explore-exploit-errors.txt).

    Splits: `main` = 3 exploration presets x 3 DAG difficulties x seeds 0-2 (27 episodes, §5,
    App. C.2); `semantic` = 4 hand-authored pasta maps x {semantic, symbolic} x seeds 0-4 (App. E).
    Metrics (§5): success rate, exploration and exploitation error (per-episode normalised
    errors averaged over episodes), steps of successful trajectories (Table 2). Options
    (`GridDagOptions`): `budget_alpha`, the alpha of the hidden budget (App. C.1).
    """

    id = "griddag-v1"
    name = "griddag"
    description = "grid + hidden task DAG; exploration/exploitation error metric"
    splits = ("main", "semantic")
    default_split = "main"
    agents = MappingProxyType(
        {
            "react": AgentSpec(
                f"{_AGENTS}.react:make_react",
                needs_model=True,
                description="ReAct LLM agent; options prompt=base|exploration|exploitation|"
                "balance, mode=default|reasoning, harness=true|false (App. C.3, D)",
            ),
            "frontier": AgentSpec(
                f"{_AGENTS}.reference:make_frontier",
                needs_model=False,
                description="reference: nearest unobserved cell or pending task on the known map",
            ),
            "random": AgentSpec(
                f"{_AGENTS}.reference:make_random",
                needs_model=False,
                description="reference: uniform over admissible directions",
            ),
        }
    )
    estimate_policy = "griddag-frontier"
    quick = (
        QuickConfig(split="main", agent="frontier"),
        QuickConfig(split="main", agent="react", model="scripted/griddag-frontier"),
    )
    headline_metrics = ("success_rate", "exploration_error", "exploitation_error", "steps_success")
    metric_specs = MappingProxyType(
        {
            "episodes": MetricSpec("episodes", "none"),
            "success_rate": MetricSpec("success rate", "higher"),
            "exploration_error": MetricSpec("exploration error", "lower"),
            "exploitation_error": MetricSpec("exploitation error", "lower"),
            "exploration_error_pooled": MetricSpec("exploration error (pooled)", "lower"),
            "exploitation_error_pooled": MetricSpec("exploitation error (pooled)", "lower"),
            "steps_success": MetricSpec("steps (successful episodes)", "lower"),
            # Failed episodes run to the hidden budget, so the mean over all episodes mixes two
            # populations: descriptive only.
            "steps_mean": MetricSpec("steps (all episodes)", "none"),
            "invalid_action_rate": MetricSpec("invalid action rate", "lower"),
        }
    )
    Options = GridDagOptions
    cli_entry_point = "forkingpaths.benchmarks.griddag.cli:app"

    config: GridDagOptions
    """The validated options (set by `Benchmark.__init__`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._worlds: dict[str, World] = {}

    # ---- instances ----

    def instances(self, split: str) -> list[Instance]:
        if split == "main":
            return [
                Instance(
                    id=f"{exploration}-{dag}-s{seed}",
                    split="main",
                    params={
                        "kind": "generated",
                        "exploration": exploration,
                        "dag": dag,
                        "seed": seed,
                    },
                )
                for exploration in EXPLORATION_LEVELS
                for dag in DAG_LEVELS
                for seed in MAIN_SEEDS
            ]
        if split == "semantic":
            return [
                Instance(
                    id=f"{map_id}-{variant}-s{seed}",
                    split="semantic",
                    params={"kind": "semantic", "map": map_id, "variant": variant, "seed": seed},
                )
                for map_id in SEMANTIC_MAP_IDS
                for variant in SEMANTIC_VARIANTS
                for seed in SEMANTIC_SEEDS
            ]
        return self.select_instances(split, None)  # raises NameNotFound listing the splits

    def world(self, instance: Instance) -> World:
        """The instance's World, built once per benchmark object (generation is deterministic)."""
        if instance.id not in self._worlds:
            p = instance.params
            if p["kind"] == "generated":
                world = generate_world(p["exploration"], p["dag"], p["seed"])
            else:
                world = load_semantic_world(p["map"], p["variant"], p["seed"])
            alpha = self.config.budget_alpha
            # B = alpha x |M| (App. C.1, Eq. 7): alpha touches neither the DAG nor the grid.
            world = replace(
                world, budget=alpha * len(world.cells), meta={**world.meta, "budget_alpha": alpha}
            )
            self._worlds[instance.id] = world
        return self._worlds[instance.id]

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        return GridDagEnv(self.world(instance))

    def max_steps(self, instance: Instance) -> int:
        # The hidden budget is a rule of the game: GridDagEnv truncates there itself (the outcome
        # and the observation depend on it). The runner's TurnLimit sits one step above it, a
        # safety net that never fires, so no record gains its `turn_limit` mark.
        return self.world(instance).budget + 1

    # ---- scoring ----

    def trajectory(self, record: EpisodeRecord) -> list[tuple[int, int]]:
        """p(0..T) from a record: the start, then the position after every step."""
        start = record.initial_info["position"]
        return [(start[0], start[1])] + [
            (s.info["position"][0], s.info["position"][1]) for s in record.steps
        ]

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        world = self.world(self.instance(record.instance_id))
        score = score_trajectory(world, self.trajectory(record))
        return {
            "success": score.success,
            "steps": len(record.steps),
            "exploration_error": score.exploration_error,
            "exploitation_error": score.exploitation_error,
            "exploration_errors": score.exploration_errors,
            "exploitation_errors": score.exploitation_errors,
            "exploration_required": score.case_counts[1] + score.case_counts[4],
            "exploitation_required": score.case_counts[2]
            + score.case_counts[3]
            + score.case_counts[4],
            "case_counts": {str(k): v for k, v in sorted(score.case_counts.items())},
            "invalid_actions": sum(not s.valid for s in record.steps),
            "budget": world.budget,
        }

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        overall = _aggregate(episodes)
        groups: dict[str, list[ScoredEpisode]] = defaultdict(list)
        for episode in episodes:
            groups[self.group_of(episode.instance_id)].append(episode)
        overall["by_group"] = {name: _aggregate(rs) for name, rs in sorted(groups.items())}
        return overall

    def group_of(self, instance_id: str) -> str:
        """Configuration an instance belongs to (exploration-dag, or map-variant)."""
        p = self.instance(instance_id).params
        if p["kind"] == "generated":
            return f"{p['exploration']}-{p['dag']}"
        return f"{p['variant']}"

    def report_plots(
        self, episodes: list[ScoredEpisode], out_dir: Path, records: RecordReader
    ) -> list[PlotArtifact]:
        return write_report_plots(self, episodes, out_dir, records)

    def compare_plots(self, summaries: list[dict[str, Any]], out_dir: Path) -> list[PlotArtifact]:
        return write_compare_plots(summaries, out_dir)

    def reproductions(self) -> list[Reproduction]:
        return reproductions(self)

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The grid under the agent's fog of war, its path by Table 1 case with the stale score,
        and the task DAG as revealed, per position (`view.py`, drawn by `web/view.js`)."""
        return world_view(self, record)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 6) if present else None


def _aggregate(episodes: Sequence[ScoredEpisode]) -> dict[str, Any]:
    ms = [e.metrics for e in episodes]
    n = len(ms)
    success = [m for m in ms if m.get("success")]
    explore_req = sum(m["exploration_required"] for m in ms)
    exploit_req = sum(m["exploitation_required"] for m in ms)
    explore_err = [m["exploration_error"] for m in ms]
    return {
        "episodes": n,
        "success_rate": round(len(success) / n, 6) if n else None,
        "exploration_error": _mean(explore_err),
        "exploitation_error": _mean([m["exploitation_error"] for m in ms]),
        # Pooled variants weight every required step equally instead of every episode.
        "exploration_error_pooled": round(sum(m["exploration_errors"] for m in ms) / explore_req, 6)
        if explore_req
        else None,
        "exploitation_error_pooled": round(
            sum(m["exploitation_errors"] for m in ms) / exploit_req, 6
        )
        if exploit_req
        else None,
        "steps_success": _mean([m["steps"] for m in success]),
        "steps_mean": _mean([m["steps"] for m in ms]),
        "invalid_action_rate": round(
            sum(m["invalid_actions"] for m in ms) / max(1, sum(m["steps"] for m in ms)), 6
        ),
    }
