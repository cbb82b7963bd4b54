"""The TurtleSoup protocol as an Env: yes/no questions to the responder, then the judged summary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forkingpaths.benchmarks.turtlesoup.dialogue import MAX_TURNS, SOLVE_COMMAND, Dialogue
from forkingpaths.benchmarks.turtlesoup.evaluation import evaluate
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.responder import Answerer, LexicalResponder, Responder
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ResetNeeded
from forkingpaths.core.records import ModelCallRecord

ASK, SUMMARIZE = "ask", "summarize"
"""The two phases of a dialogue (`Observation.data["phase"]`)."""


class TurtleSoupEnv(Env):
    """One TurtleSoup puzzle played under the paper's protocol (turtlesoup.txt §4, §5.1).

    ## Description
    The questioner sees a puzzle's surface and recovers the hidden story (the bottom) by asking
    yes/no questions of the Responder ("God", §4.2), then writes its summary, which the judge
    scores (§4.4, App. D.3). The env holds the whole protocol: the responder and the judge are
    the role models it is built with (`make_env(instance, roles)`).

    ## Action Space
    Free text. In the `ask` phase an action is one question, or `SOLVE_COMMAND` ("/solve") to
    stop asking before the last turn; in the `summarize` phase it is the final summary (the JSON
    `{"logic": [...], "details": [...], "conclusion": "..."}` of contract §3, or free text).

    ## Observation Space
    `Dialogue.observation`: the surface, every question and answer so far and what to do next,
    rendered in the puzzle's language (是 / 否 / 不知道 and `<关键线索>` for Chinese), with the
    same as structured fields (`puzzle_id`, `language`, `title`, `surface`, `turn`,
    `max_turns`, `history`, `key_clues`, `phase`). The reset observation's `initial_info` holds
    what the episode record keeps of its start (surface, category, language, responder and judge
    model names, whether key clues are flagged).

    ## Steps
    - A question is checked first (§4.3): empty, not a question or longer than
      `MAX_QUESTION_CHARS` is refused (`info["valid"] = False`, `info["reason"]`), using up a
      turn without reaching the responder. Otherwise the responder answers Yes / No / Unknown,
      `<Key Clue>` appended when it hits the Key Clue Library (App. E.1); `info` has `turn`,
      `answer` (Yes / No / Unknown whatever the language), `key_clue`, `repeated` and
      `responder_failed`, and `calls` the responder's model calls. Without a responder model the
      lexical stand-in answers (no calls).
    - `info["feedback"]` is the reply as the questioner reads it ("Yes<Key Clue>", "否",
      "Invalid question (...)"); the observation is the whole dialogue again.
    - The question that uses the last of `max_turns` turns carries `info["question_limit"]`
      and moves the dialogue to the `summarize` phase, as "/solve" does (`info["phase"] =
      "solve"`).
    - The summary step runs the judge's evaluation (its calls in `calls`) and terminates; its
      observation's `data["outcome"]` is the episode outcome: `turns`, `questions`,
      `key_clues_hit`, `repeated_questions`, `invalid_questions`, `summary`, `evaluation` (None
      without a judge: not evaluated, never a silent zero) and `judge`.

    ## Rewards
    0 on every step: the scores are the judge's evaluation in the outcome.

    ## Starting State
    No question asked. Reset options: `key_clues` (default true; false is Table 3's "w/o Key
    Clue": the responder flags no key clue; a puzzle without a Key Clue Library plays with the
    flags off anyway) and `questioner`, the questioner's model: when the judge is that same
    model, `on_judge_fallback(judge)` is called (the benchmark warns once per run).

    ## Episode End
    Terminated by the summary step. No truncation of its own: the turn limit moves to the
    summary, and the runner's `TurnLimit(max_turns + 1)` is only a safety net.

    ## Arguments
    `puzzle`, `responder` and `judge` (role models or None), `max_turns` (30, §5.1),
    `on_judge_fallback`, `seed`: the seed of every responder and judge call (App. D.1: 42;
    None sends none).

    ## Version History
    - v1: the paper's protocol; Chinese puzzles show the answers in Chinese. Deterministic
      given the role models' replies (the lexical responder has no randomness).
    """

    def __init__(
        self,
        puzzle: Puzzle,
        *,
        responder: ChatModel | None = None,
        judge: ChatModel | None = None,
        max_turns: int = MAX_TURNS,
        on_judge_fallback: Callable[[ChatModel], None] | None = None,
        seed: int | None = MODEL_SEED,
    ) -> None:
        self.puzzle = puzzle
        self.model_seed = seed
        self.responder_model = responder
        self.judge = judge
        self.max_turns = max_turns
        self.on_judge_fallback = on_judge_fallback
        self.key_clues = bool(puzzle.key_clues)
        self.responder: Answerer = LexicalResponder(puzzle, key_clues=self.key_clues)
        self.phase = ASK
        self._dialogue: Dialogue | None = None

    @property
    def dialogue(self) -> Dialogue:
        if self._dialogue is None:
            raise ResetNeeded("TurtleSoupEnv: call reset() before a step")
        return self._dialogue

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        options = options or {}
        self.key_clues = bool(options.get("key_clues", True)) and bool(self.puzzle.key_clues)
        model = self.responder_model
        self.responder = (
            Responder(model, self.puzzle, key_clues=self.key_clues, seed=self.model_seed)
            if model is not None
            else LexicalResponder(self.puzzle, key_clues=self.key_clues)
        )
        questioner = options.get("questioner")
        if self.judge is not None and self.judge is questioner and self.on_judge_fallback:
            self.on_judge_fallback(self.judge)
        self._dialogue = Dialogue(self.puzzle, self.max_turns)
        self.phase = ASK
        observation = self._dialogue.observation(ASK)
        initial_info = {
            "surface": self.puzzle.surface,
            "category": self.puzzle.category,
            "language": self.puzzle.language,
            "responder": getattr(model, "name", "lexical"),
            "judge": getattr(self.judge, "name", None),
            "key_clues": self.key_clues,
        }
        return Observation(observation.text, {**observation.data, "initial_info": initial_info})

    async def astep(self, action: str) -> Step:
        if self.phase == SUMMARIZE:
            return await self._summary(action)
        dialogue = self.dialogue
        question = action.strip()
        if question == SOLVE_COMMAND:
            # The questioner is ready to solve before the last turn (human play).
            self.phase = SUMMARIZE
            info: dict[str, Any] = {"phase": "solve", "feedback": ""}
            return Step(dialogue.observation(SUMMARIZE), 0.0, False, False, info)
        info = {"turn": dialogue.turn + 1}
        calls: list[ModelCallRecord] = []
        reason = dialogue.check(question)
        if reason is not None:
            feedback = dialogue.refuse(question, reason)
            info.update(valid=False, reason=reason)
        else:
            reply = await self.responder.answer(question)
            calls = list(reply.calls)
            exchange, repeated = dialogue.record(question, reply)
            feedback = exchange.text
            info.update(
                answer=reply.answer,
                key_clue=reply.key_clue,
                repeated=repeated,
                responder_failed=reply.failed,
            )
        info["feedback"] = feedback
        if dialogue.finished:
            self.phase = SUMMARIZE
            info["question_limit"] = self.max_turns
        return Step(dialogue.observation(self.phase), 0.0, False, False, info, calls)

    async def _summary(self, summary: str) -> Step:
        """The final summary: the outcome, judged when there is a judge (§4.4)."""
        dialogue = self.dialogue
        outcome: dict[str, Any] = {
            "turns": dialogue.turn,
            "questions": len(dialogue.history),
            "key_clues_hit": dialogue.key_clues_hit,
            "repeated_questions": dialogue.repeated,
            "invalid_questions": dialogue.invalid,
            "summary": summary,
            "evaluation": None,
        }
        calls: list[ModelCallRecord] = []
        if self.judge is not None:
            evaluation = await evaluate(self.judge, self.puzzle, summary, seed=self.model_seed)
            calls = list(evaluation.calls)
            stored = evaluation.to_dict()
            stored.pop("calls", None)  # kept once, on the summary step
            outcome["evaluation"] = stored
            outcome["judge"] = self.judge.name
        self._dialogue = None
        info = {"phase": "summary", "feedback": ""}
        return Step(Observation("", {"outcome": outcome}), 0.0, True, False, info, calls)
