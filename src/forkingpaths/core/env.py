"""The environment contract every benchmark speaks: Observation, Step, Env and Wrapper."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


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
    could not be parsed or executed; such an action still counts as a step.
    """

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class Env(ABC):
    """A stateful, deterministic-given-seed text environment.

    Invariants: `reset` must be called before `step`; `step` never raises on a bad action (it
    returns feedback with `info["valid"] = False`); one `step` call is one timestep.
    """

    @abstractmethod
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        """Start a new episode and return the first observation."""

    @abstractmethod
    def step(self, action: str) -> Step:
        """Apply one action (free text, as an agent produced it)."""

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

    def step(self, action: str) -> Step:
        return self.env.step(action)

    def close(self) -> None:
        self.env.close()

    @property
    def unwrapped(self) -> Env:
        return self.env.unwrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


class TurnLimit(Wrapper):
    """Truncates an episode after `max_turns` steps (a limit outside the game's own rules)."""

    def __init__(self, env: Env, max_turns: int) -> None:
        if max_turns <= 0:
            raise ValueError(f"max_turns must be positive, got {max_turns}")
        super().__init__(env)
        self.max_turns = max_turns
        self._turns = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self._turns = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: str) -> Step:
        result = self.env.step(action)
        self._turns += 1
        if self._turns >= self.max_turns and not result.terminated and not result.truncated:
            info = {**result.info, "turn_limit": self.max_turns}
            return Step(result.observation, result.reward, False, True, info)
        return result
