"""Scripted griddag models: the frontier policy, a noisy frontier and a random walk."""

from __future__ import annotations

import functools
import json
import random
import zlib
from collections.abc import Callable

from forkingpaths.benchmarks.griddag.agents import prompts
from forkingpaths.benchmarks.griddag.agents.knowledge import (
    KnownMap,
    ObservationFacts,
    ObservationFormatError,
    parse_observation,
    plan_frontier_move,
)
from forkingpaths.benchmarks.griddag.world import DIRECTION_ORDER
from forkingpaths.core.chat import Message, ModelParams

NOISY_EPSILON = 0.3
"""`scripted/griddag-noisy`'s share of random moves (the offline reproductions' stand-in)."""


def _parse_or_none(text: str) -> ObservationFacts | None:
    try:
        return parse_observation(text)
    except ObservationFormatError:
        return None


def _observations(
    messages: list[Message], parse: Callable[[str], ObservationFacts | None] = _parse_or_none
) -> list[ObservationFacts]:
    """Facts of every user turn that is an observation, oldest first (others are skipped)."""
    facts = []
    for message in messages:
        if message.role == "user" and (parsed := parse(message.content)) is not None:
            facts.append(parsed)
    return facts


def _system_prompt(messages: list[Message]) -> str:
    return "\n".join(m.content for m in messages if m.role == "system")


def conversation_seed(messages: list[Message]) -> int:
    """A stable hash (CRC-32) of every turn, system prompt included: the same conversation
    always draws the same, and another prompt or mode another."""
    crc = 0
    for message in messages:
        crc = zlib.crc32(f"{message.role}\x00{message.content}\x01".encode(), crc)
    return crc


def _answer(direction: str, reasoning: str, messages: list[Message]) -> str:
    action = json.dumps({"action": direction}, separators=(",", ":"))
    if prompts.asks_for_reasoning(_system_prompt(messages)):
        return f"{reasoning}\n{action}"
    return action


class FrontierPolicy:
    """`scripted/griddag-frontier`: rebuilds the known map from every observation in the
    conversation and answers with the frontier move (knowledge.plan_frontier_move).

    Stateless: the same messages always give the same reply, whichever episode sends them. Each
    request re-reads the whole conversation, so parsed observations are memoised per policy
    object (a pure function of the text; it does not change any answer).
    """

    def __init__(self) -> None:
        self._parse = functools.lru_cache(maxsize=1 << 16)(_parse_or_none)

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        return self._frontier_answer(self._known_map(messages), messages)

    def _known_map(self, messages: list[Message]) -> KnownMap:
        known = KnownMap()
        for facts in _observations(messages, self._parse):
            known.update(facts)
        return known

    @staticmethod
    def _frontier_answer(known: KnownMap, messages: list[Message]) -> str:
        plan = plan_frontier_move(known)
        reasoning = prompts.render_frontier_reasoning(
            plan.kind, plan.state, plan.target, plan.distance
        )
        return _answer(plan.direction, reasoning, messages)


class NoisyFrontierPolicy(FrontierPolicy):
    """`scripted/griddag-noisy`: the frontier move, except that with probability `epsilon` it
    takes a uniformly random direction of the last observation (possibly the frontier's own).

    A stand-in for a real model offline: it fails some episodes and makes exploration and
    exploitation errors. The draw is seeded by `conversation_seed`, so it is stateless and
    reproducible like FrontierPolicy, and prompt variants and reasoning modes (different system
    prompts) lead to different trajectories, as a real model's would.
    """

    epsilon: float = NOISY_EPSILON
    """Share of turns answered by a random available direction."""

    def __init__(self, epsilon: float = NOISY_EPSILON) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon: {epsilon!r} is not a probability in [0, 1]")
        self.epsilon = epsilon

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        known = self._known_map(messages)
        rng = random.Random(conversation_seed(messages))
        # The coin is tossed on every turn, so the random share does not depend on the map.
        if rng.random() < self.epsilon and known.available:
            return _answer(rng.choice(known.available), prompts.REASONING_RANDOM, messages)
        return self._frontier_answer(known, messages)


class RandomWalkPolicy:
    """`scripted/griddag-random`: a uniform choice among the last observation's directions,
    seeded by a stable hash of the conversation so that replies are reproducible."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        try:
            available = parse_observation(last).available
        except ObservationFormatError:
            available = ()
        rng = random.Random(zlib.crc32(f"{len(messages)}\n{last}".encode()))
        direction = rng.choice(available or DIRECTION_ORDER)
        return _answer(direction, prompts.REASONING_RANDOM, messages)
