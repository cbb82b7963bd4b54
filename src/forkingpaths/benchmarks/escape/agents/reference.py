"""Reference escape agents without a model: oracle (gold paths), systematic and random floors."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from forkingpaths.benchmarks.escape.actions import action_key
from forkingpaths.benchmarks.escape.agents.attempts import AttemptAgent
from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark
from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.metadata import ScenarioMeta
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError

NO_MOVE = "wait()"
"""What a reference agent sends when it has nothing left to try (the env refuses it)."""


class _ShadowAgent(AttemptAgent):
    """Keeps a private copy of the game in step with the env by replaying its own actions: the
    engine is deterministic, so the copy knows routes and valid actions without peeking into
    the env. The copy restarts with every attempt. Subclasses choose actions from `self.game`."""

    def __init__(self, benchmark: EscapeBenchmark) -> None:
        self.benchmark = benchmark
        self.game: EscapeGame | None = None
        self.meta: ScenarioMeta | None = None
        self.forbidden: frozenset[str] = frozenset()

    def start_attempt(self, instance: Instance, seed: int) -> None:
        self.game = self.benchmark.make_game(instance)
        _, self.meta = self.benchmark.load(instance)
        self.forbidden = frozenset()

    async def act(self, observation: Observation) -> Decision:
        self.follow_attempt(observation)
        if self.game is None:
            raise RuntimeError("reset() must be called before act()")
        self.forbidden = frozenset(
            k for k in map(action_key, observation.data.get("forbidden", [])) if k
        )
        action = self.choose(observation)
        self.game.step(action, forbidden=self.forbidden)
        return Decision(action=action)

    def choose(self, observation: Observation) -> str:
        raise NotImplementedError

    def allowed(self) -> list[str]:
        assert self.game is not None
        return [a for a in self.game.candidate_actions() if action_key(a) not in self.forbidden]

    def state(self) -> dict[str, Any]:
        return {}


class OracleAgent(_ShadowAgent):
    """Plays the gold paths under the protocol: in each phase, the first path (metadata order)
    whose finish action is not forbidden, walking to the phase's start scene first. Over four
    attempts it must find every path (56/56 on MUTATE): a check of content and protocol."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        super().start_attempt(instance, seed)
        if self.meta is None:
            raise ConfigError(f"oracle: scenario {instance.id!r} has no path metadata")
        self.plan: list[str] = []
        self.planned_phase = 0

    def choose(self, observation: Observation) -> str:
        assert self.game is not None and self.meta is not None
        phase = observation.data["phase"]
        if phase != self.planned_phase:
            self.planned_phase = phase
            self.plan = self._plan(phase)
        return self.plan.pop(0) if self.plan else NO_MOVE

    def _plan(self, phase: int) -> list[str]:
        assert self.game is not None and self.meta is not None
        for path in self.meta.paths_of_phase(phase):
            if action_key(path.finish) in self.forbidden:
                continue
            start = next((p.start_scene for p in self.meta.phases if p.phase == phase), None)
            route = (self.game.route_to(start) or []) if start and phase > 1 else []
            return [*route, *path.gold]
        return []


class SystematicAgent(_ShadowAgent):
    """Breadth-first over the valid action space, cheapest level first: collect every visible
    tool and click every item of the current scene, then walk to the nearest scene not yet
    visited; only when every reachable scene has been surveyed, try each apply and craft
    available in the current world state once (a world change makes them worth retrying), then
    move to the least-visited neighbour. Inputs are never guessed. The floor a model must beat:
    coverage without reasoning."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        super().start_attempt(instance, seed)
        self.tried: set[tuple[str, Any]] = set()
        self.visits: Counter[str] = Counter()

    def choose(self, observation: Observation) -> str:
        assert self.game is not None
        game = self.game
        self.visits[game.scene] += 1
        world = game.fingerprint()
        actions = self.allowed()

        def fresh(kinds: tuple[str, ...]) -> list[str]:
            return [
                a
                for a in actions
                if a.split("(", 1)[0] in kinds and (action_key(a), world) not in self.tried
            ]

        survey = fresh(("click",))
        if survey:
            tools = set(game.scene_tools())
            survey.sort(key=lambda a: _arg(a) not in tools)  # collect before examining
            return self._try(survey[0], world)
        routes = [
            route
            for scene in game.scenario.scenes
            if self.visits[scene.name] == 0 and (route := game.route_to(scene.name))
        ]
        if routes:
            return min(routes, key=len)[0]  # the nearest scene not yet surveyed
        combos = fresh(("apply", "craft"))
        if combos:
            return self._try(combos[0], world)
        moves = [a for a in actions if a.startswith("move(")]
        if not moves:
            return NO_MOVE
        return min(moves, key=lambda a: self.visits[_arg(a)])

    def _try(self, action: str, world: Any) -> str:
        self.tried.add((action_key(action), world))
        return action


class RandomAgent(_ShadowAgent):
    """Uniformly random among the valid click/apply/craft/move actions (seeded per attempt)."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        super().start_attempt(instance, seed)
        self.rng = random.Random(seed)

    def choose(self, observation: Observation) -> str:
        actions = self.allowed()
        return self.rng.choice(actions) if actions else NO_MOVE


def _arg(action: str) -> str:
    return action.split("(", 1)[1].rsplit(")", 1)[0].split(",")[0].strip()


def make_oracle(benchmark: EscapeBenchmark, model: ChatModel | None = None) -> OracleAgent:
    return OracleAgent(benchmark)


def make_systematic(benchmark: EscapeBenchmark, model: ChatModel | None = None) -> SystematicAgent:
    return SystematicAgent(benchmark)


def make_random(benchmark: EscapeBenchmark, model: ChatModel | None = None) -> RandomAgent:
    return RandomAgent(benchmark)
