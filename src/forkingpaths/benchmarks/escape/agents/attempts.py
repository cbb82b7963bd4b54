"""MUTATE's attempts from an agent's side: per-attempt memory starts afresh with each (§3.3)."""

from __future__ import annotations

from forkingpaths.core.benchmark import Instance
from forkingpaths.core.env import Observation


class AttemptAgent:
    """Base of the escape agents whose state belongs to one attempt (a ReAct history, a task
    list, a failure memory, a shadow copy of the game).

    The env plays a scenario's attempts in one episode and starts each next attempt itself: the
    observation after the step that ended an attempt is the start of the next one, its
    `data["attempt"]` one higher. `act` calls `follow_attempt` first, which then calls
    `start_attempt(instance, seed + attempt)`, as if the agent were reset at the start of every
    attempt with the episode's seed plus the attempt's number. `reset` (a new episode) starts
    attempt 0 with the episode's seed.
    """

    _instance: Instance | None = None
    _seed: int = 0
    _attempt: int = 0

    def reset(self, instance: Instance, seed: int) -> None:
        self._instance, self._seed, self._attempt = instance, seed, 0
        self.start_attempt(instance, seed)

    def start_attempt(self, instance: Instance, seed: int) -> None:
        """Forget the previous attempt (subclasses clear their per-attempt state)."""

    def follow_attempt(self, observation: Observation) -> None:
        """Start afresh when `observation` belongs to another attempt than the last one."""
        attempt = observation.data.get("attempt", 0)
        if attempt == self._attempt or self._instance is None:
            return
        self._attempt = attempt
        self.start_attempt(self._instance, self._seed + attempt)
