"""The environment contract every benchmark speaks: Observation, Step, Env and its wrappers."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.core.errors import ResetNeeded
from forkingpaths.core.records import ModelCallRecord


@dataclass(frozen=True)
class Observation:
    """What an agent is shown after reset or a step.

    `text` is exactly what an LLM agent reads; `data` holds the same state as structured fields
    for non-LLM agents, metrics and the web viewer. Rendering is a pure function of env state.
    """

    text: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """The result of `Env.step`.

    `terminated` means the game itself ended (goal reached, lives lost); `truncated` means a
    limit outside the game stopped it (step budget). `info["valid"]` is False when the action
    could not be parsed or executed; such an action still counts as a step. `calls` are the
    model calls the env's protocol made to play the step (a responder's answer, a judge's
    verdict); they are recorded with the agent's.
    """

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    calls: list[ModelCallRecord] = field(default_factory=list)
    feedback: str | None = None
    """What the step answered, when the protocol then moves on and the next observation shows
    something else (a verdict before the next level; an answer before the next question);
    the record's `feedback`. None: the next observation's text is the feedback."""

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class Env(ABC):
    """A stateful, deterministic-given-seed text environment.

    Invariants: `reset` must be called before a step; a step never raises on a bad action (it
    returns feedback with `info["valid"] = False`); one step call is one timestep.

    A step is either synchronous (`step`, for envs that compute everything themselves) or
    asynchronous (`astep`, for protocols that call models or services: TurtleSoup's responder,
    MUTATE's and AUT's judge, CreativeBench's sandbox and constraint judge). Such an env receives
    its role models and services when it is built. An env implements one of the two; the episode
    loop and every wrapper call `astep`, which runs `step` by default.
    """

    @abstractmethod
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        """Start a new episode and return the first observation."""

    def step(self, action: str) -> Step:
        """Apply one action (free text, as an agent produced it)."""
        raise TypeError(
            f"{type(self).__name__} plays its steps asynchronously (its protocol calls models or "
            "services): await env.astep(action), or use forkingpaths.gym.to_gymnasium"
        )

    async def astep(self, action: str) -> Step:
        """Apply one action; an env whose protocol awaits models or services overrides this."""
        return self.step(action)

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release resources held by the environment."""

    @property
    def unwrapped(self) -> Env:
        return self


class Wrapper(Env):
    """Adds one behaviour around an env without touching it (as Gymnasium's wrappers do)."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        return self.env.reset(seed=seed, options=options)

    async def astep(self, action: str) -> Step:
        return await self.env.astep(action)

    def close(self) -> None:
        self.env.close()

    @property
    def unwrapped(self) -> Env:
        return self.env.unwrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


class OrderEnforcing(Wrapper):
    """Refuses a step before `reset` or after the episode ended (Gymnasium's OrderEnforcing):
    the env itself need not check."""

    def __init__(self, env: Env) -> None:
        super().__init__(env)
        self._ready = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        observation = self.env.reset(seed=seed, options=options)
        self._ready = True
        return observation

    async def astep(self, action: str) -> Step:
        if not self._ready:
            raise ResetNeeded(
                f"{type(self.unwrapped).__name__}: step called before reset() or after the "
                "episode ended; call reset() first"
            )
        result = await self.env.astep(action)
        if result.done:
            self._ready = False
        return result


class TurnLimit(Wrapper):
    """Truncates an episode after `max_turns` steps (a limit outside the game's own rules): the
    step that reaches it comes back `truncated` with `info["turn_limit"]`."""

    def __init__(self, env: Env, max_turns: int) -> None:
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns <= 0:
            raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
        super().__init__(env)
        self.max_turns = max_turns
        self._turns = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self._turns = 0
        return self.env.reset(seed=seed, options=options)

    async def astep(self, action: str) -> Step:
        result = await self.env.astep(action)
        self._turns += 1
        if self._turns >= self.max_turns and not result.done:
            info = {**result.info, "turn_limit": self.max_turns}
            return dataclasses.replace(result, truncated=True, info=info)
        return result


class FormatObservation(Wrapper):
    """Rewrites the text an agent is shown (a prompt variant, a language) without touching the
    env's state or structured fields: `format(observation) -> str`."""

    def __init__(self, env: Env, format: Any) -> None:
        super().__init__(env)
        self.format = format

    def _shown(self, observation: Observation) -> Observation:
        return Observation(self.format(observation), observation.data)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        return self._shown(self.env.reset(seed=seed, options=options))

    async def astep(self, action: str) -> Step:
        result = await self.env.astep(action)
        return dataclasses.replace(result, observation=self._shown(result.observation))
