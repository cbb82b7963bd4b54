"""The turtlesoup-v1 benchmark: 30-question dialogues, final summary, logic/detail/conclusion."""

from __future__ import annotations

import logging
import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from forkingpaths.benchmarks.turtlesoup.dialogue import MAX_TURNS
from forkingpaths.benchmarks.turtlesoup.env import TurtleSoupEnv
from forkingpaths.benchmarks.turtlesoup.evaluation import Evaluation, metrics_from_evaluation
from forkingpaths.benchmarks.turtlesoup.importers import load_corpus
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.reproduce import reproductions
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED
from forkingpaths.benchmarks.turtlesoup.view import world_view
from forkingpaths.core.agent import Agent
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
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.protocol import StepHook
from forkingpaths.core.records import EpisodeRecord, StepRecord
from forkingpaths.core.reproduce import Reproduction

log = logging.getLogger(__name__)

_PKG = "forkingpaths.benchmarks.turtlesoup"
SCORES = ("logic_accuracy", "detail_fidelity", "conclusion_match", "overall")
QUICK_ROLES = MappingProxyType(
    {"responder": "scripted/turtlesoup-responder", "judge": "scripted/turtlesoup-judge"}
)
SCRIPTED_QUESTIONER = "scripted/turtlesoup-questioner"


class TurtleSoupOptions(BaseModel):
    """Options of turtlesoup-v1 (`--option`, `benchmark_options`, or `--max-turns 10` on
    `run turtlesoup`); the defaults are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    puzzles: Path | None = Field(
        default=None,
        description="a puzzle file or directory played instead of the shipped corpus: ours, "
        "the paper's release or TurtleBench",
    )
    """A puzzle file or directory in any supported format (`importers.load_corpus`), kept as its
    resolved path so that a resumed run finds the same files; None: the shipped corpus."""
    max_turns: int = Field(
        default=MAX_TURNS,
        strict=True,
        ge=1,
        description="questions per puzzle, a positive integer; the paper's 30 by default",
    )
    """Questions per puzzle before the summary (§5.1, Table 5)."""
    allow_no_clues: bool = Field(
        default=False,
        strict=True,
        description="admit puzzles without a Key Clue Library, which play with the key-clue "
        "mechanism off; true or false",
    )
    """Admit puzzles without a Key Clue Library; they play with the key-clue mechanism off."""
    model_seed: int | None = Field(
        default=MODEL_SEED,
        strict=True,
        ge=0,
        description="seed sent with every generative call: questioner, Mosaic-Agent's "
        "internal calls, responder and judge (App. D.1: 42); null sends none (an endpoint "
        "that refuses `seed`)",
    )
    """The seed of every generative call (App. D.1, D.3), None for none. The three genre votes
    of Mosaic-Agent keep their own seeds (1, 2, 3 at temperature 0.7, `agents.mosaic`)."""

    @field_validator("puzzles")
    @classmethod
    def _existing(cls, path: Path | None) -> Path | None:
        if path is None:
            return None
        path = path.expanduser()
        if not path.exists():
            raise PydanticCustomError("path_missing", "no such file or directory")
        return path.resolve()


class TurtleSoupBenchmark(Benchmark):
    """TurtleSoup-Bench (turtlesoup.txt): situation puzzles solved by yes/no questions.

    Instances are puzzles in one language (`<entry>-en`, `<entry>-zh`); splits `all`, `en`,
    `zh`. The shipped corpus is ours (60 entries, six categories, both languages); the `puzzles`
    option (`--puzzles PATH`) loads a file or directory in our format, the paper's release
    format or TurtleBench's instead. TurtleBench stories have no Key Clue Library: the option
    `allow_no_clues` (`--allow-no-clues`, default false) admits such puzzles, which then play
    with the key-clue mechanism off.

    Protocol (§4, §5.1), played by `TurtleSoupEnv` (`env.py`, its spec) with the role models:
    up to `max_turns` (30) questions, each answered by the `responder` role
    (Yes / No / Unknown, `<Key Clue>` when the question hits the clue library; App. E.1), then
    the questioner's final summary, scored by the `judge` role (§4.4, App. D.3): Logic Accuracy,
    Detail Fidelity, Conclusion Match and Overall = 0.3 L + 0.3 D + 0.4 C, in percent. Both roles
    default to the questioner's model (the paper's symmetric design; its judge was a reasoning
    model, so pass `--role judge=...` to reproduce it; a warning is logged once when the judge
    falls back to the questioner's model), except for a scripted questioner, which only asks:
    a role it would play is played by the model `role_defaults_by_model` names for it
    (`scripted/turtlesoup-questioner` -> `scripted/turtlesoup-responder` and
    `scripted/turtlesoup-judge`), so the obvious offline command is judged. Without any
    responder model (a person playing offline) the lexical stand-in answers. Invalid questions
    (empty, not a question, too long) use up a turn without reaching the responder; repeated
    questions are counted. A Chinese puzzle shows the answers in Chinese (是 / 否 / 不知道,
    `<关键线索>`) in the observation and the step feedback; `info["answer"]` stays Yes / No /
    Unknown.

    Aggregates: each score's mean is over the episodes that have that score (a judge that left
    a whole kind of points, or the conclusion, unscored leaves it out); `n` counts the episodes,
    `n_scored` those with an Overall score and `n_unscored` the rest, overall and per group.
    `unscored_points` counts the gold points the judge could not score, including those that
    could not even be extracted (counted at `point_counts` of the bottom).
    """

    id = "turtlesoup-v1"
    name = "turtlesoup"
    description = "TurtleSoup situation puzzles: key-clue responder, Mosaic-Agent, L/D/C scoring"
    splits = ("all", "en", "zh")
    default_split = "all"
    agents = MappingProxyType(
        {
            "mosaic": AgentSpec(
                f"{_PKG}.agents.mosaic:make_mosaic",
                needs_model=True,
                description="Mosaic-Agent (§4.1): deliberation, meta-cognition, action "
                "formulation; ablations deliberation/metacognition/pruning/key_clues=false",
            ),
            "baseline": AgentSpec(
                f"{_PKG}.agents.baseline:make_baseline",
                needs_model=True,
                description="w/o all agents (Table 3): next question from surface + history",
            ),
            "human": AgentSpec(
                f"{_PKG}.agents.human:make_human",
                needs_model=False,
                description="a person asks in the terminal and writes the summary (§4.5)",
                interactive=True,
            ),
        }
    )
    estimate_policy = "turtlesoup-questioner"
    model_roles = MappingProxyType(
        {
            "responder": "answers Yes/No/Unknown and flags key clues (App. E.1); default: the "
            "agent's model (scripted/turtlesoup-responder for scripted/turtlesoup-questioner)",
            "judge": "extracts and matches evaluation points (App. E.3); default: the agent's "
            "model (scripted/turtlesoup-judge for scripted/turtlesoup-questioner)",
        }
    )
    roles_default_to_agent = frozenset({"responder", "judge"})
    role_defaults_by_model: ClassVar[Mapping[str, Mapping[str, str]]] = MappingProxyType(
        {SCRIPTED_QUESTIONER: QUICK_ROLES}
    )
    """Role models by the model that would play the role: a scripted questioner only asks, so
    the responder and judge it would play by default (`roles_default_to_agent`) are the
    scripted responder and judge instead."""
    quick = (
        QuickConfig(
            split="all",
            agent="mosaic",
            model="scripted/turtlesoup-questioner",
            instances=("crime_thriller-01-en", "clever_logic-01-zh", "original-01-en"),
            roles=QUICK_ROLES,
        ),
        QuickConfig(
            split="all",
            agent="baseline",
            model="scripted/turtlesoup-questioner",
            instances=("crime_thriller-01-en", "clever_logic-01-zh", "original-01-en"),
            roles=QUICK_ROLES,
        ),
    )
    headline_metrics = SCORES
    metric_specs = MappingProxyType(
        {
            "overall": MetricSpec("Overall (0.3 L + 0.3 D + 0.4 C, %)", "higher"),
            "logic_accuracy": MetricSpec("Logic Accuracy (%)", "higher"),
            "detail_fidelity": MetricSpec("Detail Fidelity (%)", "higher"),
            "conclusion_match": MetricSpec("Conclusion Match (%)", "higher"),
            "mean_key_clues_hit": MetricSpec("key clues hit per episode", "higher"),
            "mean_repeated_questions": MetricSpec("repeated questions per episode", "lower"),
            "mean_invalid_questions": MetricSpec("invalid questions per episode", "lower"),
            "mean_turns": MetricSpec("questions asked per episode", "none"),
            "responder_failures": MetricSpec("unreadable responder answers", "lower"),
            "unscored_points": MetricSpec("points the judge left unscored", "lower"),
            "judged_episodes": MetricSpec("judged episodes", "none"),
            "episodes": MetricSpec("episodes", "none"),
            "errored": MetricSpec("errored episodes", "lower"),
            "n": MetricSpec("finished episodes", "none"),
            "n_scored": MetricSpec("episodes with an Overall score", "none"),
            "n_unscored": MetricSpec("episodes without an Overall score", "lower"),
        }
    )
    Options = TurtleSoupOptions
    cli_entry_point = f"{_PKG}.cli:app"

    config: TurtleSoupOptions
    """The validated options (set by `Benchmark.__init__`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.config.puzzles is not None:
            # The RunSpec records the resolved path: a resumed run finds the same files.
            self.options["puzzles"] = str(self.config.puzzles)
        self._puzzles: dict[str, Puzzle] | None = None
        self._warned_judge = False

    def reproductions(self) -> list[Reproduction]:
        """Table 2 (with Reduce against `--input human_baseline=PATH`) and Table 3."""
        return reproductions()

    # ---- instances ----

    def corpus(self) -> dict[str, Puzzle]:
        """Puzzles by id, loaded once; bad entries are logged and left out."""
        if self._puzzles is None:
            source = self.config.puzzles
            puzzles, errors = load_corpus(source, allow_no_clues=self.config.allow_no_clues)
            for error in errors:
                log.warning("puzzle refused: %s", error)
            if not puzzles:
                raise ConfigError(f"puzzles: no valid puzzle in {source or 'the corpus'}")
            self._puzzles = {p.id: p for p in puzzles}
        return self._puzzles

    def instances(self, split: str) -> list[Instance]:
        if split not in self.splits:
            return self.select_instances(split, None)
        return [
            Instance(
                id=p.id,
                split=split,
                params={"category": p.category, "language": p.language},
            )
            for p in self.corpus().values()
            if split == "all" or p.language == split
        ]

    def sample_instances(self, split: str, n: int) -> list[Instance]:
        """At most n instances for a smoke test, taken in turn from each category x language
        (Table 2's cells), so a small sample touches every cell it can."""
        cells: dict[tuple[str, str], list[Instance]] = {}
        for instance in self.instances(split):
            key = (instance.params["category"], instance.params["language"])
            cells.setdefault(key, []).append(instance)
        sample: list[Instance] = []
        queues = list(cells.values())
        while len(sample) < n and any(queues):
            for queue in queues:
                if queue and len(sample) < n:
                    sample.append(queue.pop(0))
        return sample

    def puzzle(self, instance: Instance) -> Puzzle:
        return self.corpus()[instance.id]

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> TurtleSoupEnv:
        """The dialogue of one puzzle: its `responder` role answers (the lexical stand-in when
        none is configured) and its `judge` role scores the summary (not judged without one)."""
        return TurtleSoupEnv(
            self.puzzle(instance),
            responder=roles.get("responder"),
            judge=roles.get("judge"),
            max_turns=self.config.max_turns,
            on_judge_fallback=self._warn_judge_fallback,
            seed=self.config.model_seed,
        )

    def max_steps(self, instance: Instance) -> int:
        return self.config.max_turns + 1

    # ---- protocol ----

    def reset_options(self, instance: Instance, agent: Agent) -> dict[str, Any]:
        """Table 3's "w/o Key Clue" is an agent option (`key_clues=false`), but the responder in
        the env is what changes; the agent's model lets the env tell when the judge is it."""
        return {
            "key_clues": bool(getattr(agent, "key_clues", True)),
            "questioner": getattr(agent, "model", None),
        }

    def step_hook(self, env: Env, roles: Mapping[str, ChatModel]) -> StepHook:
        """The env's steps laid out as turtlesoup-v1 records have them (`_v1_step_record`)."""
        return _v1_step_record

    def _warn_judge_fallback(self, judge: ChatModel) -> None:
        """Once per benchmark object (one run): the judge is the questioner's own model."""
        if not self._warned_judge:
            self._warned_judge = True
            log.warning(
                "turtlesoup: the judge role falls back to the questioner's own model %s; the "
                "paper's judge was a separate reasoning model (pass --role judge=MODEL)",
                judge.name,
            )

    # ---- metrics ----

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The dialogue, Mosaic-Agent's belief and genre per position and the summary against
        the gold points (`view.world_view`); the puzzle adds its title, bottom and Key Clue
        Library when this benchmark's corpus still has it."""
        try:
            puzzle = self.corpus().get(record.instance_id)
        except ConfigError:
            puzzle = None
        return world_view(record, puzzle)

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        outcome = record.outcome
        metrics: dict[str, Any] = dict.fromkeys(SCORES)
        evaluation = outcome.get("evaluation")
        if evaluation is not None:
            metrics.update(metrics_from_evaluation(Evaluation.from_dict(evaluation)))
        asked = [s for s in record.steps if "answer" in s.info]
        metrics.update(
            {
                "turns": outcome.get("turns", 0),
                "key_clues_hit": outcome.get("key_clues_hit", 0),
                "repeated_questions": outcome.get("repeated_questions", 0),
                "invalid_questions": outcome.get("invalid_questions", 0),
                "responder_failures": sum(bool(s.info.get("responder_failed")) for s in asked),
                "judged": evaluation is not None,
            }
        )
        return metrics

    def episode_facts(self, record: EpisodeRecord) -> dict[str, Any]:
        """The puzzle's category and language, which group Table 2."""
        return {
            "category": record.initial_info.get("category", "?"),
            "language": record.initial_info.get("language", "?"),
        }

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        """Means over the finished episodes, overall and by `category / language` (Table 2).

        Each score's mean is over the episodes that have it; `n` counts the episodes of the
        group, `n_scored` those with an Overall score, `n_unscored` those without one (not
        judged, or the judge left a part unscored)."""
        ok = [e for e in episodes if e.status == "ok"]
        out: dict[str, Any] = {"episodes": len(episodes), "errored": len(episodes) - len(ok)}
        out.update(_means(ok))
        for field in ("key_clues_hit", "repeated_questions", "invalid_questions", "turns"):
            values = [r.metrics.get(field, 0) for r in ok]
            out[f"mean_{field}"] = statistics.fmean(values) if values else None
        out["responder_failures"] = sum(r.metrics.get("responder_failures", 0) for r in ok)
        out["unscored_points"] = sum(r.metrics.get("unscored_points", 0) or 0 for r in ok)
        out["judged_episodes"] = sum(bool(r.metrics.get("judged")) for r in ok)
        groups: dict[str, list[ScoredEpisode]] = defaultdict(list)
        for episode in ok:
            category, language = episode.facts["category"], episode.facts["language"]
            groups[f"{category} / {language}"].append(episode)
            groups[f"all / {language}"].append(episode)
        out["by_group"] = {name: _means(rs) for name, rs in sorted(groups.items())}
        return out


def _means(records: list[ScoredEpisode]) -> dict[str, Any]:
    """Mean of each score over the records that have it (Table 2 cells), with the counts: `n`
    episodes, `n_scored` with an Overall score, `n_unscored` without."""
    out: dict[str, Any] = {}
    for score in SCORES:
        values = [r.metrics[score] for r in records if r.metrics.get(score) is not None]
        out[score] = statistics.fmean(values) if values else None
    out["n"] = len(records)
    out["n_scored"] = sum(r.metrics.get("overall") is not None for r in records)
    out["n_unscored"] = out["n"] - out["n_scored"]
    return out


async def _v1_step_record(step: StepRecord) -> None:
    """Lays a step's record out as turtlesoup-v1 records have it: the feedback is the reply the
    questioner read (`info["feedback"]`; the next observation is the whole dialogue), the
    question that uses the last turn is marked truncated (the summary still follows), and a
    refused question keeps `valid: false` in its info too."""
    step.feedback = step.info.pop("feedback", step.feedback)
    if step.info.pop("question_limit", None) is not None:
        step.truncated = True
    if not step.valid:
        step.info = {"turn": step.info.get("turn"), "valid": False, **step.info}
