"""A scripted escape player shared by the protocol and view tests."""

from __future__ import annotations

from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation


class ScriptAgent:
    """Plays fixed action lists, one list per attempt (then `wait()`, an invalid action): it
    switches lists when the env starts the next attempt, as the escape agents do."""

    def __init__(self, attempts: list[list[str]]) -> None:
        self.attempts = attempts
        self.attempt = -1
        self.queue: list[str] = []

    def reset(self, instance: object, seed: int) -> None:
        self.attempt = -1

    async def act(self, observation: Observation) -> Decision:
        if observation.data["attempt"] != self.attempt:
            self.attempt = observation.data["attempt"]
            todo = self.attempts[self.attempt] if self.attempt < len(self.attempts) else []
            self.queue = list(todo)
        return Decision(self.queue.pop(0) if self.queue else "wait()", thought="because")

    def state(self) -> dict[str, object]:
        return {}
