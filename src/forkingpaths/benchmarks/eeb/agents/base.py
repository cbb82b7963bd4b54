"""The EvoEmpirBench base LLM agent (App. B.1) for both games, with optional truths (§4.3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.reference import game_of
from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository, resolve_truths
from forkingpaths.benchmarks.eeb.match2 import parse_match2_action
from forkingpaths.benchmarks.eeb.maze import parse_maze_action
from forkingpaths.benchmarks.eeb.maze_levels import DEFAULT_SIZE, LEVELS
from forkingpaths.benchmarks.eeb.pinning import check_digest, check_pinned
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelCallRecord


class BaseAgent:
    """One model call per step: the game's system prompt (role, legend, priorities, level
    characteristics, Training Knowledge) and a user turn holding the env's observation text and
    the answer format (App. B.1).

    `history` earlier (state, reply) pairs precede the current turn; 0, the default, sends each
    step on its own, as the paper's prompt does (it restates the whole known state every step).
    The game is read from `instance.params["game"]` at reset, so one agent plays both games.

    Truths (Eq. 5, pi_t = pi_0 + M_truth) come as a TruthRepository, whose truths are shown only
    in episodes of its own game, or as plain strings, shown in both games. `truths` may be
    replaced between episodes (Agent-ExpVer does so as its repository grows).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        truths: TruthRepository | tuple[str, ...] | None = None,
        history: int = 0,
        max_tokens: int | None = None,
    ) -> None:
        self.model = model
        self.truths = truths
        self.history = history
        # Only what the agent's own options set: the run's sampling flags fill the rest.
        self.params = ModelParams(**({"max_tokens": max_tokens} if max_tokens is not None else {}))
        self.game: str | None = None
        self.instance: Instance | None = None
        self.system_prompt: str | None = None
        self.pairs: list[tuple[Message, Message]] = []
        """(user turn, reply) pairs of this episode, the last `history` of them."""

    def truth_texts(self, game: str) -> list[str]:
        """The truths shown in an episode of `game`."""
        if self.truths is None:
            return []
        if isinstance(self.truths, TruthRepository):
            return self.truths.texts() if self.truths.game == game else []
        return list(self.truths)

    def reset(self, instance: Instance, seed: int) -> None:
        self.game = game_of(instance)
        self.instance = instance
        self.system_prompt = None  # built on the first observation, which knows the board
        self.pairs = []

    def messages(self, turn: str) -> list[Message]:
        """The request of one step: system prompt, the kept history, the current turn."""
        out = [Message(role="system", content=self.system_prompt or "")]
        for user, reply in self.pairs:
            out += (user, reply)
        out.append(Message(role="user", content=turn))
        return out

    async def act(self, observation: Observation) -> Decision:
        instance = self.instance
        if instance is None:
            raise ConfigError("BaseAgent.act called before reset(instance, seed)")
        if self.game == "maze":
            turn = self._maze_turn(instance, observation)
        else:
            turn = self._match2_turn(instance, observation)
        completion = await self.model.complete(self.messages(turn), self.params)
        reply = completion.text
        if self.history:
            self.pairs.append(
                (Message(role="user", content=turn), Message(role="assistant", content=reply))
            )
            self.pairs = self.pairs[-self.history :]
        action, thought = (
            read_maze_reply(reply) if self.game == "maze" else read_match2_reply(reply)
        )
        return Decision(
            action=action, thought=thought, calls=[ModelCallRecord.from_completion(completion)]
        )

    def _maze_turn(self, instance: Instance, observation: Observation) -> str:
        params, data = instance.params, observation.data
        level = params.get("level", data.get("level", 1))
        if level not in LEVELS:
            raise ConfigError(
                f'instance {instance.id!r}: params["level"]: got {level!r}; '
                f"allowed values: {', '.join(map(str, LEVELS))}"
            )
        full_vision = bool(data.get("full_vision", params.get("full_vision", False)))
        if self.system_prompt is None:
            size = int(data.get("size", DEFAULT_SIZE))
            self.system_prompt = prompts.render_maze_system(level, size, self.truth_texts("maze"))
        return prompts.render_maze_turn(observation.text, level, full_vision=full_vision)

    def _match2_turn(self, instance: Instance, observation: Observation) -> str:
        params, data = instance.params, observation.data
        props = bool(data.get("props_enabled", params.get("props", True)))
        if self.system_prompt is None:
            difficulty = str(params.get("difficulty", "custom"))
            self.system_prompt = prompts.render_match2_system(
                difficulty, self.truth_texts("match2"), props=props
            )
        return prompts.render_match2_turn(observation.text, props=props)

    def state(self) -> dict[str, Any]:
        return {}


def read_maze_reply(reply: str) -> tuple[str, str]:
    """(action, thought) of a maze reply: the action number the engine's parser finds (sent as
    the bare number), or the reply verbatim when it finds none, which the env counts invalid.
    The thought is the reply without a closing action line."""
    number = parse_maze_action(reply)
    lines = reply.rstrip().splitlines()
    if lines and parse_maze_action(lines[-1]) is not None:
        lines = lines[:-1]
    thought = "\n".join(lines).strip()
    return (str(number) if number is not None else reply), thought


def read_match2_reply(reply: str) -> tuple[str, str]:
    """(action, thought) of a match-2 reply: the engine parser's action as App. B.1's JSON, or
    the reply verbatim when there is none. The thought is the text before the action JSON."""
    action, _ = parse_match2_action(reply)
    key = reply.rfind('"action"')
    brace = reply.rfind("{", 0, key) if key >= 0 else -1
    head = reply[:brace] if brace >= 0 else reply
    thought = head.rstrip().removesuffix("```json").removesuffix("```").strip()
    return (json.dumps({"action": action}) if action is not None else reply), thought


def _count(option: str, value: Any, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)  # options may arrive as strings from a command line
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{option}: got {value!r}; allowed values: an integer >= {minimum}")
    return value


def make_base(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    truths: Any = None,
    history: int = 0,
    max_tokens: int | None = None,
    truths_sha256: str | None = None,
) -> BaseAgent:
    """Factory of the `base` agent; validates every option (and reads a truths file) before the
    run starts. `truths`: a truth-repository JSON path, a list of strings, or none.

    `truths_sha256` (optional, `pinning.content_digest` of the file) pins the truths file: one
    that now holds other bytes is refused, and, being part of the run's spec, a file learned
    anew under the same path makes a new run rather than resuming the old one's episodes."""
    if model is None:
        raise ConfigError(
            "model: agent base needs one; got none (e.g. --model scripted/eeb-reference)"
        )
    if truths_sha256 is not None:
        if not isinstance(truths, str | Path):
            raise ConfigError(
                f"truths_sha256: pins a truths file; got truths={truths!r} (give truths=FILE)"
            )
        check_pinned(
            truths, "truths", check_digest(truths_sha256, "truths_sha256"), "truths_sha256"
        )
    return BaseAgent(
        model,
        truths=resolve_truths(truths),
        history=_count("history", history, minimum=0) or 0,
        max_tokens=_count("max_tokens", max_tokens, minimum=1),
    )
