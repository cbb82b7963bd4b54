"""The griddag ReAct LLM agent (§5 "Prompts", App. C.3), optionally with the harness (App. D)."""

from __future__ import annotations

import json
import re
from typing import Any

from forkingpaths.benchmarks.griddag.agents import prompts
from forkingpaths.benchmarks.griddag.agents.memory import HarnessMemory
from forkingpaths.benchmarks.griddag.world import parse_direction
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelCallRecord

REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh")

_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_EMPTY_FENCE = re.compile(r"```[a-zA-Z]*\s*```")


class ReActAgent:
    """Multi-turn chat: the system prompt, then one user turn per observation and the model's
    raw replies, from which the last JSON action is taken (App. C.3).

    With `harness`, the current user turn also carries the memory summary of App. D (earlier
    turns keep only their observation). `history_window`
    keeps only the last N earlier observation/reply pairs before the current observation.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        prompt: str = "base",
        mode: str = "default",
        harness: bool = False,
        history_window: int | None = None,
        max_tokens: int | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        self.model = model
        self.prompt, self.mode, self.harness = prompt, mode, harness
        self.history_window = history_window
        # Only what the agent's own options set: the run's --temperature and friends fill the
        # rest (ModelParams' defaults, temperature 0, when the model is used directly).
        explicit = {"max_tokens": max_tokens, "reasoning_effort": reasoning_effort}
        self.params = ModelParams(**{k: v for k, v in explicit.items() if v is not None})
        self.system_prompt = prompts.render_system_prompt(prompt, mode, harness)
        self.history: list[tuple[Message, Message]] = []
        """(user turn, assistant reply) message pairs of this episode, oldest first; kept as
        messages so a long episode does not rebuild its whole history on every call."""
        self.memory = HarnessMemory()
        self._last_action: str | None = None

    def reset(self, instance: Instance, seed: int) -> None:
        self.history = []
        self.memory = HarnessMemory()
        self._last_action = None

    def messages(self, user_turn: str) -> list[Message]:
        """The request for the current turn: system prompt, windowed history, `user_turn`."""
        pairs = self.history
        if self.history_window is not None:
            pairs = pairs[-self.history_window :] if self.history_window else []
        out = [Message(role="system", content=self.system_prompt)]
        for user, reply in pairs:
            out += (user, reply)
        out.append(Message(role="user", content=user_turn))
        return out

    async def act(self, observation: Observation) -> Decision:
        user_turn = observation.text
        if self.harness:
            self.memory.observe(observation.text, self._last_action)
            user_turn = prompts.HARNESS_TURN.substitute(
                observation=observation.text, summary=self.memory.summary()
            )
        request = self.messages(user_turn)
        completion = await self.model.complete(request, self.params)
        reply = completion.text
        # Past turns keep the bare observation: the summary of App. D describes the current state,
        # so older summaries would only repeat it (and multiply the prompt ~8x on long episodes).
        past = request[-1] if not self.harness else Message(role="user", content=observation.text)
        self.history.append((past, Message(role="assistant", content=reply)))
        direction = parse_direction(reply)
        self._last_action = direction
        # An unparseable reply goes to the env verbatim, which records it as an invalid step.
        return Decision(
            action=direction if direction is not None else reply,
            thought=strip_action_json(reply),
            calls=[ModelCallRecord.from_completion(completion)],
        )

    def state(self) -> dict[str, Any]:
        return {}


def strip_action_json(reply: str) -> str:
    """The reply without its last `{"action": ...}` object (and a code fence left empty)."""
    for match in reversed(list(_JSON_OBJECT.finditer(reply))):
        try:
            obj = json.loads(match.group())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "action" in obj:
            reply = reply[: match.start()] + reply[match.end() :]
            break
    return _EMPTY_FENCE.sub("", reply).strip()


def _choice(option: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"{option}: got {value!r}; allowed values: {', '.join(allowed)}")
    return str(value)


def _flag(option: str, value: Any) -> bool:
    # Options may arrive as strings from a command line (`-o harness=true`).
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.lower() in ("true", "yes", "1")
    raise ConfigError(f"{option}: got {value!r}; allowed values: true, false")


def _count(option: str, value: Any, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(
            f"{option}: got {value!r}; allowed values: an integer >= {minimum}, or none"
        )
    return value


def make_react(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    prompt: str = "base",
    mode: str = "default",
    harness: bool = False,
    history_window: int | None = None,
    max_tokens: int | None = None,
    reasoning_effort: str | None = None,
) -> ReActAgent:
    """Factory of the `react` agent; validates every option before the run starts."""
    if model is None:
        raise ConfigError(
            "model: agent react needs one; got none (e.g. --model scripted/griddag-frontier)"
        )
    return ReActAgent(
        model,
        prompt=_choice("prompt", prompt, prompts.PROMPT_VARIANTS),
        mode=_choice("mode", mode, prompts.MODES),
        harness=_flag("harness", harness),
        history_window=_count("history_window", history_window, minimum=0),
        max_tokens=_count("max_tokens", max_tokens, minimum=1),
        reasoning_effort=(
            None
            if reasoning_effort is None
            else _choice("reasoning_effort", reasoning_effort, REASONING_EFFORTS)
        ),
    )
