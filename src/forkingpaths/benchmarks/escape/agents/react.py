"""The Base (ReAct, App. D.1) and Self-Refine (App. D.2) escape agents: one model call per step."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from forkingpaths.benchmarks.escape.agents import react_prompts
from forkingpaths.benchmarks.escape.agents.attempts import AttemptAgent
from forkingpaths.benchmarks.escape.agents.parsing import parse_reply
from forkingpaths.benchmarks.escape.observation import (
    HistoryEntry,
    history_from_data,
    render_observation,
)
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.records import ModelCallRecord


class ReActAgent(AttemptAgent):
    """Zero-shot ReAct: system = Prompt 1, user = Prompt 2 re-rendered with the agent's own
    history, one call per step, reply read as `Thought:` / `Action:` (App. D.1).

    The history is the env's working memory (`Observation.data["history"]`, the last 10 steps)
    with the thought the agent gave at each of those steps put back in, so the model sees its
    Thought/Action/response triples; responses carry no Observation label. Thoughts are kept per
    attempt: `start_attempt` (at the start of every MUTATE attempt) forgets them.

    `self_refine` appends Prompt 9, the feasibility self-check, to the user turn (App. D.2); it
    stays one call per step. Other agents reuse this class as their base policy: `decide` takes
    extra text appended to the user turn, and `remember` records the thought of a step another
    module decided so that it shows in later prompts.
    """

    def __init__(self, model: ChatModel, *, self_refine: bool = False) -> None:
        self.model = model
        self.self_refine = self_refine
        # No sampling field set here: the run's parameters (greedy by default) fill them all.
        self.params = ModelParams()
        self.system_prompt = react_prompts.render_system()
        self.thoughts: dict[int, str] = {}
        """Thought given at each step of the current attempt, by step number."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        self.thoughts = {}

    def remember(self, observation: Observation, thought: str) -> None:
        """Keep `thought` as the reasoning of the step `observation` asks for."""
        step = observation.data.get("step")
        if isinstance(step, int):
            self.thoughts[step] = thought

    def history(self, data: dict[str, Any]) -> list[HistoryEntry]:
        """The env's recent history with this agent's thoughts put back in."""
        return [
            replace(entry, thought=self.thoughts.get(entry.step, ""))
            for entry in history_from_data(data)
        ]

    def user_prompt(self, observation: Observation, suffix: str = "") -> str:
        """Prompt 2 (with thoughts), then Prompt 9 for Self-Refine, then `suffix`."""
        data = observation.data
        # An observation without the structured fields (a hand-made one) is shown as it came.
        text = (
            render_observation(data, self.history(data))
            if "objective" in data
            else observation.text
        )
        parts = [react_prompts.render_self_refine()] if self.self_refine else []
        if suffix:
            parts.append(suffix)
        return append_to_turn(text, "\n\n".join(parts))

    async def decide(
        self, observation: Observation, suffix: str = "", purpose: str = "act"
    ) -> Decision:
        """One call with the Base prompts (plus `suffix`); the reply's thought is remembered."""
        messages = [
            Message(role="system", content=self.system_prompt),
            Message(role="user", content=self.user_prompt(observation, suffix)),
        ]
        completion = await self.model.complete(messages, self.params)
        reply = parse_reply(completion.text)
        self.remember(observation, reply.thought)
        return Decision(
            action=reply.action,
            thought=reply.thought,
            calls=[ModelCallRecord.from_completion(completion, purpose=purpose)],
        )

    async def act(self, observation: Observation) -> Decision:
        self.follow_attempt(observation)
        return await self.decide(observation)

    def state(self) -> dict[str, Any]:
        return {}


def append_to_turn(turn: str, suffix: str) -> str:
    """`turn` with `suffix` added before its closing `Your Response:` line, which stays last."""
    if not suffix.strip():
        return turn
    slot = react_prompts.RESPONSE_SLOT
    body = turn.rstrip()
    body = body.removesuffix(slot).rstrip() if body.endswith(slot) else body
    tail = suffix.strip()
    closing = "" if tail.endswith(slot) else f"\n\n{slot}"
    return f"{body}\n\n{tail}{closing}\n"


def make_base(benchmark: Benchmark | None = None, model: ChatModel | None = None) -> ReActAgent:
    """Factory of the `base` agent (ReAct, App. D.1)."""
    return ReActAgent(require_model(model, "base"))


def make_self_refine(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> ReActAgent:
    """Factory of the `self-refine` agent (Base + Prompt 9, App. D.2)."""
    return ReActAgent(require_model(model, "self-refine"), self_refine=True)
