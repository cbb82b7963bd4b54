"""The turtlesoup-v1 benchmark: 30-question dialogues, final summary, logic/detail/conclusion."""

from __future__ import annotations

import logging
import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.turtlesoup.agents.human import SOLVE_COMMAND
from forkingpaths.benchmarks.turtlesoup.dialogue import MAX_TURNS, Dialogue
from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, QuickConfig
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, StepRecord

if TYPE_CHECKING:
    from forkingpaths.benchmarks.turtlesoup.env import TurtleSoupEnv
    from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
    from forkingpaths.core.agent import Agent
    from forkingpaths.core.chat import ChatModel

log = logging.getLogger(__name__)

_PKG = "forkingpaths.benchmarks.turtlesoup"
LANGUAGES = ("en", "zh")
SCORES = ("logic_accuracy", "detail_fidelity", "conclusion_match", "overall")
QUICK_ROLES = MappingProxyType(
    {"responder": "scripted/turtlesoup-responder", "judge": "scripted/turtlesoup-judge"}
)


class TurtleSoupBenchmark(Benchmark):
    """TurtleSoup-Bench (turtlesoup.txt): situation puzzles solved by yes/no questions.

    Instances are puzzles in one language (`<entry>-en`, `<entry>-zh`); splits `all`, `en`,
    `zh`. The shipped corpus is ours (60 entries, six categories, both languages); the `puzzles`
    option (`--puzzles PATH`) loads a file or directory in our format, the paper's release
    format or TurtleBench's instead. TurtleBench stories have no Key Clue Library: the option
    `allow_no_clues` (`--allow-no-clues`, default false) admits such puzzles, which then play
    with the key-clue mechanism off.

    Protocol (§4, §5.1): up to `max_turns` (30) questions, each answered by the `responder` role
    (Yes / No / Unknown, `<Key Clue>` when the question hits the clue library; App. E.1), then
    the questioner's final summary, scored by the `judge` role (§4.4, App. D.3): Logic Accuracy,
    Detail Fidelity, Conclusion Match and Overall = 0.3 L + 0.3 D + 0.4 C, in percent. Both roles
    default to the questioner's model (the paper's symmetric design; its judge was a reasoning
    model, so pass `--role judge=...` to reproduce it; a warning is logged once when the judge
    falls back to the questioner's model). Without any responder model (a person playing
    offline) the lexical stand-in answers. Invalid questions (empty, not a question, too long)
    use up a turn without reaching the responder; repeated questions are counted. A Chinese
    puzzle shows the answers in Chinese (是 / 否 / 不知道, `<关键线索>`) in the observation and the
    step feedback; `info["answer"]` stays Yes / No / Unknown.

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
            "agent's model",
            "judge": "extracts and matches evaluation points (App. E.3); default: the agent's "
            "model",
        }
    )
    roles_default_to_agent = frozenset({"responder", "judge"})
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
    cli_entry_point = f"{_PKG}.cli:app"

    def __init__(self, **options: Any) -> None:
        allowed = {"puzzles", "max_turns", "allow_no_clues"}
        unknown = set(options) - allowed
        if unknown:
            raise ConfigError(
                f"unknown turtlesoup option(s) {sorted(unknown)}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        turns = options.get("max_turns", MAX_TURNS)
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
            raise ConfigError(f"max_turns: expected a positive integer (default 30), got {turns!r}")
        self.max_turns = turns
        allow_no_clues = options.get("allow_no_clues", False)
        if not isinstance(allow_no_clues, bool):
            raise ConfigError(
                f"allow_no_clues: expected true or false (default false), got {allow_no_clues!r}"
            )
        self.allow_no_clues = allow_no_clues
        if options.get("puzzles") is not None:
            path = Path(str(options["puzzles"])).expanduser()
            if not path.exists():
                raise ConfigError(f"puzzles: {str(path)!r} does not exist")
            options = {**options, "puzzles": str(path.resolve())}
        super().__init__(**options)
        self._puzzles: dict[str, Puzzle] | None = None
        self._warned_judge = False

    # ---- instances ----

    def corpus(self) -> dict[str, Puzzle]:
        """Puzzles by id, loaded once; bad entries are logged and left out."""
        if self._puzzles is None:
            from forkingpaths.benchmarks.turtlesoup.puzzles import load_corpus

            source = self.options.get("puzzles")
            puzzles, errors = load_corpus(
                Path(source) if source else None, allow_no_clues=self.allow_no_clues
            )
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

    def puzzle(self, instance: Instance) -> Puzzle:
        return self.corpus()[instance.id]

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> TurtleSoupEnv:
        """The offline dialogue (lexical responder): what `run_episode` plays with models."""
        from forkingpaths.benchmarks.turtlesoup.env import TurtleSoupEnv

        return TurtleSoupEnv(self.puzzle(instance), max_turns=self.max_turns)

    def max_steps(self, instance: Instance) -> int:
        return self.max_turns + 1

    # ---- protocol ----

    async def run_episode(
        self,
        instance: Instance,
        agent: Agent,
        record: EpisodeRecord,
        roles: Mapping[str, ChatModel] = MappingProxyType({}),
    ) -> EpisodeRecord:
        """Questions until the turn limit, then the summary, then the evaluation."""
        from forkingpaths.benchmarks.turtlesoup.responder import LexicalResponder, Responder

        puzzle = self.puzzle(instance)
        # Table 3 "w/o Key Clue" is an agent option, but the responder is what changes.
        key_clues = bool(getattr(agent, "key_clues", True)) and bool(puzzle.key_clues)
        model = roles.get("responder")
        responder = (
            Responder(model, puzzle, key_clues=key_clues)
            if model is not None
            else LexicalResponder(puzzle, key_clues=key_clues)
        )
        judge = roles.get("judge")
        if judge is not None and judge is getattr(agent, "model", None) and not self._warned_judge:
            self._warned_judge = True
            log.warning(
                "turtlesoup: the judge role falls back to the questioner's own model %s; the "
                "paper's judge was a separate reasoning model (pass --role judge=MODEL)",
                judge.name,
            )
        dialogue = Dialogue(puzzle, self.max_turns)
        observation = dialogue.observation()
        record.initial_observation = observation.text
        record.initial_info = {
            "surface": puzzle.surface,
            "category": puzzle.category,
            "language": puzzle.language,
            "responder": getattr(model, "name", "lexical"),
            "judge": getattr(judge, "name", None),
            "key_clues": key_clues,
        }
        while not dialogue.finished:
            decision = await agent.act(observation)
            question = decision.action.strip()
            if question == SOLVE_COMMAND:
                # The player is ready to solve before the last turn (human play).
                record.steps.append(
                    StepRecord(
                        index=len(record.steps),
                        observation=observation.text,
                        thought=decision.thought,
                        action=question,
                        feedback="",
                        info={"phase": "solve"},
                        calls=list(decision.calls),
                    )
                )
                break
            reason = dialogue.check(question)
            info: dict[str, Any] = {"turn": dialogue.turn + 1}
            calls = list(decision.calls)
            if reason is not None:
                feedback = dialogue.refuse(question, reason)
                info.update(valid=False, reason=reason)
            else:
                reply = await responder.answer(question)
                calls += reply.calls
                exchange, repeated = dialogue.record(question, reply)
                feedback = exchange.text
                info.update(
                    answer=reply.answer,
                    key_clue=reply.key_clue,
                    repeated=repeated,
                    responder_failed=reply.failed,
                )
            record.steps.append(
                StepRecord(
                    index=len(record.steps),
                    observation=observation.text,
                    thought=decision.thought,
                    action=decision.action,
                    feedback=feedback,
                    valid=reason is None,
                    truncated=dialogue.finished,
                    info=info,
                    calls=calls,
                )
            )
            observation = dialogue.observation("summarize" if dialogue.finished else "ask")
        observation = dialogue.observation("summarize")
        decision = await agent.act(observation)
        summary_step = StepRecord(
            index=len(record.steps),
            observation=observation.text,
            thought=decision.thought,
            action=decision.action,
            feedback="",
            terminated=True,
            info={"phase": "summary"},
            calls=list(decision.calls),
        )
        record.steps.append(summary_step)
        record.outcome = {
            "turns": dialogue.turn,
            "questions": len(dialogue.history),
            "key_clues_hit": dialogue.key_clues_hit,
            "repeated_questions": dialogue.repeated,
            "invalid_questions": dialogue.invalid,
            "summary": decision.action,
            "evaluation": None,
        }
        if judge is not None:
            from forkingpaths.benchmarks.turtlesoup.evaluation import evaluate

            evaluation = await evaluate(judge, puzzle, decision.action)
            summary_step.calls.extend(evaluation.calls)
            stored = evaluation.to_dict()
            stored.pop("calls", None)  # kept once, on the summary step
            record.outcome["evaluation"] = stored
            record.outcome["judge"] = judge.name
        return record

    # ---- metrics ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        from forkingpaths.benchmarks.turtlesoup.evaluation import (
            Evaluation,
            metrics_from_evaluation,
        )

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

    def aggregate(self, records: list[EpisodeRecord]) -> dict[str, Any]:
        """Means over the finished episodes, overall and by `category / language` (Table 2).

        Each score's mean is over the episodes that have it; `n` counts the episodes of the
        group, `n_scored` those with an Overall score, `n_unscored` those without one (not
        judged, or the judge left a part unscored)."""
        ok = [r for r in records if r.status == "ok"]
        out: dict[str, Any] = {"episodes": len(records), "errored": len(records) - len(ok)}
        out.update(_means(ok))
        for field in ("key_clues_hit", "repeated_questions", "invalid_questions", "turns"):
            values = [r.metrics.get(field, 0) for r in ok]
            out[f"mean_{field}"] = statistics.fmean(values) if values else None
        out["responder_failures"] = sum(r.metrics.get("responder_failures", 0) for r in ok)
        out["unscored_points"] = sum(r.metrics.get("unscored_points", 0) or 0 for r in ok)
        out["judged_episodes"] = sum(bool(r.metrics.get("judged")) for r in ok)
        groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for record in ok:
            category = record.initial_info.get("category", "?")
            language = record.initial_info.get("language", "?")
            groups[f"{category} / {language}"].append(record)
            groups[f"all / {language}"].append(record)
        out["by_group"] = {name: _means(rs) for name, rs in sorted(groups.items())}
        return out


def _means(records: list[EpisodeRecord]) -> dict[str, Any]:
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
