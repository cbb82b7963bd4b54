"""The baseline questioner, "w/o all agents" of §5.4 Table 3: one model call per turn."""

from __future__ import annotations

from typing import Any

from forkingpaths.benchmarks.turtlesoup.agents import baseline_prompts
from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.mosaic import (
    clean_question,
    fallback_question,
    history_entries,
    key_clue_records,
    parse_belief,
)
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED, benchmark_seed, sampling
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message
from forkingpaths.core.env import Observation
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import strip_reasoning

DEFAULT_MAX_TURNS = 30
"""Shown in the prompt when the observation does not say (§5.1)."""


def first_question(text: str) -> str:
    """The question a free reply asks: its first line ending in a question mark, else its first
    non-empty line, cleaned of list numbers, labels and quotes ("" for an empty reply); inline
    reasoning (`<think>...</think>`) is removed first."""
    lines = [clean_question(line) for line in strip_reasoning(text).splitlines() if line.strip()]
    lines = [line for line in lines if line]
    for line in lines:
        if line.endswith(("?", "？")):
            return line
    return lines[0] if lines else ""


class BaselineQuestioner:
    """Asks the model for the next question from the surface and the whole history.

    Each `ask` turn sends the surface and the full history and asks for the next yes/no question
    (purpose `question`); the reply's first question line is asked (list numbers, labels and quotes
    removed; a reply with no text falls back to a generic probe). In the `summarize` phase one call
    (purpose `summary`) asks for the hidden story as the same JSON summary Mosaic gives,
    `{"logic": [...], "details": [...], "conclusion": "..."}` (Table 3 then compares like with
    like); a readable one is the summary (as Mosaic writes it), and a reply that ignores the
    format is the summary as free text (inline reasoning removed), which the evaluation
    extracts points from. No deliberation, meta-cognition or screening; the key clue flags
    reach it only as they appear in the history.
    """

    def __init__(self, model: ChatModel, *, seed: int | None = MODEL_SEED) -> None:
        self.model = model
        self.params = sampling(seed)  # seed 42 on every call (App. D.1); None: the run's own

    def reset(self, instance: Instance, seed: int) -> None:
        """Nothing to forget: every prompt is built from the observation alone."""

    def state(self) -> dict[str, Any]:
        return {}

    async def act(self, observation: Observation) -> Decision:
        data = observation.data
        lang = prompts.resolve_language(data.get("language"))
        history = history_entries(data)
        if data.get("phase") == "summarize":
            prompt = baseline_prompts.render_final(
                lang,
                surface=str(data.get("surface", "")),
                key_clues=prompts.render_history(key_clue_records(data), lang),
                history=prompts.render_history(history, lang),
            )
            text, call = await self._call(prompt, "summary")
            reply = strip_reasoning(text).strip()
            belief = parse_belief(reply)
            if belief is None:
                thought = "final summary as free text (the reply held no JSON summary)"
                return Decision(action=reply, thought=thought, calls=[call])
            return Decision(action=belief.to_json(), thought="final summary", calls=[call])
        prompt = baseline_prompts.render_question(
            lang,
            surface=str(data.get("surface", "")),
            history=prompts.render_history(history, lang),
            turn=data.get("turn", len(history) + 1),
            max_turns=data.get("max_turns", DEFAULT_MAX_TURNS),
        )
        text, call = await self._call(prompt, "question")
        question = first_question(text)
        thought = "question from the model"
        if not question:
            question = fallback_question(history, lang)
            thought = "fallback: the reply held no question"
        return Decision(action=question, thought=thought, calls=[call])

    async def _call(self, prompt: str, purpose: str) -> tuple[str, ModelCallRecord]:
        completion = await self.model.complete([Message(role="user", content=prompt)], self.params)
        return completion.text, ModelCallRecord.from_completion(completion, purpose=purpose)


def make_baseline(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> BaselineQuestioner:
    """Factory of the `baseline` agent (Table 3, "w/o all agents")."""
    return BaselineQuestioner(require_model(model, "baseline"), seed=benchmark_seed(benchmark))
