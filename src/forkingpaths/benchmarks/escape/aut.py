"""The Alternate Uses Test transfer of ReDNA (§5.3, Table 4, App. D.6): benchmark and metrics."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forkingpaths.benchmarks.escape.aut_agents import DEFAULT_TEMPERATURE
from forkingpaths.benchmarks.escape.aut_env import DEFAULT_RUNS, AUTEnv, AUTObject, load_aut_objects
from forkingpaths.benchmarks.escape.aut_judge import AUT_CRITERIA
from forkingpaths.benchmarks.escape.view import aut_world_view
from forkingpaths.core.benchmark import (
    AgentSpec,
    Benchmark,
    Instance,
    MetricSpec,
    QuickConfig,
    ScoredEpisode,
)
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env
from forkingpaths.core.records import EpisodeRecord, StepRecord

_AGENTS = "forkingpaths.benchmarks.escape.aut_agents"


class AUTOptions(BaseModel):
    """Options of aut-v1 (`--option`, `benchmark_options`); the defaults are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runs: int = Field(
        default=DEFAULT_RUNS,
        strict=True,
        ge=1,
        description="runs per object, App. D.6: 3; an integer >= 1",
    )
    """Runs per object, the steps of one episode (App. D.6: three runs per condition)."""

    @field_validator("runs", mode="before")
    @classmethod
    def _whole_number_text(cls, value: Any) -> Any:
        # A Python caller may spell the count as text (the command line gives YAML numbers);
        # anything else goes on to the strict check, which refuses a bool or a float.
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value


class AUTBenchmark(Benchmark):
    """The Alternate Uses Test transfer study of the MUTATE paper (mutate-redna.txt §5.3, Table
    4, App. D.6).

    ## Description
    Twenty common objects (`data/aut_objects.yaml`, our choice; the paper lists none). One
    episode per object holds `runs` runs (default 3), each one step of `AUTEnv` (`aut_env`),
    which has the `judge` role model rate the run's uses (`aut_judge`). Agents (`aut_agents`):
    `base` (one call per run) and `redna` (Diverge on the object alone, then Narrowing with the
    creativity criterion and the uses of earlier runs), both at temperature 0.7 by default
    (App. D.6). Every text a model is shown is in `aut_prompts`; the offline stand-ins are in
    `aut_scripted`.

    ## Scoring
    With a `judge` role model, every use is rated for Originality and Elaboration (1-5), one
    call per run at temperature 0; a reply that is not a rating is retried twice and then
    recorded as missing (`step.info["judge"] = {"missing": reason}`). Scores are stored as
    `step.info["judge"] = {"scores": [{"originality": o, "elaboration": e}, ...]}`, one per use.
    Episode metrics: fluency (uses per run), originality and elaboration means over the rated
    uses (None when nothing was rated; `judged` tells whether a judge ran). The aggregate follows
    Table 4 and App. D.5: per run index, the mean over every object's uses; then the mean and
    sample standard deviation of those run means.

    ## Arguments
    `AUTOptions`: `runs`, runs per object (integer >= 1, default 3).

    ## Version History
    - v1: initial version.
    """

    id = "aut-v1"
    name = "aut"
    description = "Alternate Uses Test transfer of ReDNA (MUTATE §5.3): originality, elaboration"
    splits = ("objects",)
    default_split = "objects"
    agents = MappingProxyType(
        {
            "base": AgentSpec(
                f"{_AGENTS}:make_aut_base",
                needs_model=True,
                description="one call lists all uses (App. D.6)",
                default_options=MappingProxyType({"temperature": DEFAULT_TEMPERATURE}),
            ),
            "redna": AgentSpec(
                f"{_AGENTS}:make_aut_redna",
                needs_model=True,
                description="Diverge on the object, then Narrow with the criterion and earlier "
                "runs' uses (App. D.6)",
                default_options=MappingProxyType({"temperature": DEFAULT_TEMPERATURE}),
            ),
        }
    )
    estimate_policy = "aut-scripted"
    model_roles = MappingProxyType(
        {"judge": "rates every use for originality and elaboration, 1-5 (App. D.6)"}
    )
    quick = (
        QuickConfig(
            split="objects",
            agent="redna",
            model="scripted/aut-scripted",
            instances=("brick", "paperclip"),
            roles=MappingProxyType({"judge": "scripted/aut-judge"}),
        ),
    )
    headline_metrics = ("originality", "elaboration", "fluency")
    metric_specs = MappingProxyType(
        {
            "originality": MetricSpec("Originality (1-5)", "higher"),
            "originality_std": MetricSpec("Originality, std over runs", "none"),
            "elaboration": MetricSpec("Elaboration (1-5)", "higher"),
            "elaboration_std": MetricSpec("Elaboration, std over runs", "none"),
            "fluency": MetricSpec("fluency (uses per run)", "higher"),
            "fluency_std": MetricSpec("fluency, std over runs", "none"),
            "objects": MetricSpec("objects", "none"),
            "errored": MetricSpec("errored episodes", "lower"),
            "runs": MetricSpec("runs per object", "none"),
            "judged": MetricSpec("judged", "none"),
            "rated_uses": MetricSpec("rated uses", "none"),
            "judge_missing": MetricSpec("runs without a rating", "lower"),
        }
    )
    Options = AUTOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config: AUTOptions

    def instances(self, split: str) -> list[Instance]:
        if split != "objects":
            return self.select_instances(split, None)  # raises NameNotFound listing the splits
        return [
            Instance(id=o.id, split=split, params={"object": o.name, "description": o.description})
            for o in load_aut_objects()
        ]

    def aut_object(self, instance: Instance) -> AUTObject:
        return AUTObject(instance.id, instance.params["object"], instance.params["description"])

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        """The object's runs; with a `judge` role, each run is rated as it is answered."""
        return AUTEnv(self.aut_object(instance), self.config.runs, judge=roles.get("judge"))

    def max_steps(self, instance: Instance) -> int:
        # AUTEnv ends the episode after its last run itself; the runner's TurnLimit at the same
        # count never fires (it truncates only an episode still going).
        return self.config.runs

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        runs = [_run_scores(step) for step in record.steps]
        rated = [s for run in runs for s in run["scores"]]
        judged = any(run["judged"] for run in runs)
        return {
            "object": record.instance_id,
            "runs": len(runs),
            "fluency": _mean([run["fluency"] for run in runs]),
            **{c: _mean([s[c] for s in rated]) for c in AUT_CRITERIA},
            "judged": judged,
            "rated_uses": len(rated),
            "judge_missing": sum(run["missing"] for run in runs),
            "by_run": [
                {
                    "run": run["run"],
                    "fluency": run["fluency"],
                    **{c: _mean([s[c] for s in run["scores"]]) for c in AUT_CRITERIA},
                }
                for run in runs
            ],
        }

    def episode_facts(self, record: EpisodeRecord) -> dict[str, Any]:
        """Each run's fluency and the judge's ratings of its uses (`_run_scores`)."""
        return {"runs": [_run_scores(step) for step in record.steps]}

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        """Table 4 with App. D.5's spread: per run index, fluency is the mean number of uses per
        object and each criterion the mean over every rated use of that run; the headline values
        are the means of these run values and `<metric>_std` their sample standard deviations
        (None below two runs). Errored episodes are left out and counted."""
        ok = [e for e in episodes if e.status == "ok"]
        by_run: dict[int, list[dict[str, Any]]] = {}
        for episode in ok:
            for run in episode.facts["runs"]:
                by_run.setdefault(run["run"], []).append(run)
        table = []
        for index in sorted(by_run):
            runs = by_run[index]
            rated = [s for run in runs for s in run["scores"]]
            table.append(
                {
                    "run": index,
                    "objects": len(runs),
                    "fluency": _mean([run["fluency"] for run in runs]),
                    **{c: _mean([s[c] for s in rated]) for c in AUT_CRITERIA},
                    "rated_uses": len(rated),
                }
            )
        out: dict[str, Any] = {}
        for metric in ("originality", "elaboration", "fluency"):
            values = [row[metric] for row in table if row[metric] is not None]
            out[metric] = _mean(values)
            out[f"{metric}_std"] = _sample_std(values)
        runs_all = [run for runs in by_run.values() for run in runs]
        out.update(
            {
                "objects": len(ok),
                "errored": len(episodes) - len(ok),
                "runs": len(table),
                "judged": any(run["judged"] for run in runs_all),
                "rated_uses": sum(len(run["scores"]) for run in runs_all),
                "judge_missing": sum(run["missing"] for run in runs_all),
                "by_run": table,
            }
        )
        return out

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The object's runs with each use's ratings (`view.aut_world_view`)."""
        return aut_world_view(self, record)


def _run_scores(step: StepRecord) -> dict[str, Any]:
    """One run's uses and ratings, read from its step record."""
    uses = step.info.get("uses", [])
    judge = step.info.get("judge")
    scores: list[dict[str, int]] = []
    if isinstance(judge, dict) and isinstance(judge.get("scores"), list):
        scores = [s for s in judge["scores"] if isinstance(s, dict)]
    return {
        "run": int(step.info.get("run", step.index)),
        "fluency": len(uses),
        "scores": scores,
        "judged": judge is not None,
        "missing": isinstance(judge, dict) and "missing" in judge,
    }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _sample_std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
