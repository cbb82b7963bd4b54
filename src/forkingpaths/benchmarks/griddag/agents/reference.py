"""Reference griddag agents that use no model: uniform random walk and the frontier policy."""

from __future__ import annotations

import random
from typing import Any

from forkingpaths.benchmarks.griddag.agents import prompts
from forkingpaths.benchmarks.griddag.agents.knowledge import (
    KnownMap,
    parse_observation,
    plan_frontier_move,
)
from forkingpaths.benchmarks.griddag.world import DIRECTION_ORDER
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError


def _available(observation: Observation) -> tuple[str, ...]:
    """Admissible directions, from the structured fields when the env gives them."""
    if "available" in observation.data:
        return tuple(observation.data["available"])
    return parse_observation(observation.text).available


class RandomAgent:
    """Moves uniformly at random among the admissible directions (a lower bound)."""

    def __init__(self, seed_offset: int = 0) -> None:
        self.seed_offset = seed_offset
        self._rng = random.Random(seed_offset)

    def reset(self, instance: Instance, seed: int) -> None:
        self._rng = random.Random(seed + self.seed_offset)

    async def act(self, observation: Observation) -> Decision:
        available = _available(observation)
        # A cell with no exit cannot be left; any word is as good (and as invalid) as another.
        action = self._rng.choice(available) if available else DIRECTION_ORDER[0]
        return Decision(action=action)

    def state(self) -> dict[str, Any]:
        return {}


class FrontierAgent:
    """Walks to the nearest pending state or unvisited known cell on the map it has seen."""

    def __init__(self) -> None:
        self.known = KnownMap()

    def reset(self, instance: Instance, seed: int) -> None:
        self.known = KnownMap()

    async def act(self, observation: Observation) -> Decision:
        if "position" in observation.data:
            self.known.update_from_data(observation.data)
        else:
            self.known.update(parse_observation(observation.text))
        plan = plan_frontier_move(self.known)
        thought = prompts.render_frontier_reasoning(
            plan.kind, plan.state, plan.target, plan.distance
        )
        return Decision(action=plan.direction, thought=thought)

    def state(self) -> dict[str, Any]:
        return {}


def make_random(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    seed_offset: int = 0,
) -> RandomAgent:
    """Factory of the `random` agent; `seed_offset` shifts its RNG away from the env seed."""
    if isinstance(seed_offset, bool) or not isinstance(seed_offset, int):
        raise ConfigError(f"seed_offset: expected an integer, got {seed_offset!r}")
    return RandomAgent(seed_offset=seed_offset)


def make_frontier(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> FrontierAgent:
    """Factory of the `frontier` agent."""
    return FrontierAgent()
