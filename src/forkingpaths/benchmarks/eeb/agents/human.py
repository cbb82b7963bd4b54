"""Human play of EvoEmpirBench in a terminal, recorded like any agent's episode (§3, "human")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.rule import Rule

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.reference import game_of
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError, ForkingPathsError

PROMPT = "action> "


class HumanInputEnded(ForkingPathsError):
    """The person closed the input (end of file) before the episode ended."""


class HumanAgent:
    """Shows each observation text on the console and sends what the person types, unchanged,
    as the action: the env parses and judges it exactly as it does a model's reply."""

    def __init__(
        self, input_fn: Callable[[str], str] | None = None, console: Console | None = None
    ) -> None:
        self.input_fn = input_fn or input
        self.console = console or Console()
        self.game: str | None = None
        self.turn = 0

    def reset(self, instance: Instance, seed: int) -> None:
        self.game = game_of(instance)
        self.turn = 0
        self.console.print(Rule(f"{instance.id} ({self.game})"))
        self.console.print(prompts.HUMAN_HINTS[self.game], markup=False, highlight=False)

    async def act(self, observation: Observation) -> Decision:
        self.turn += 1
        self.console.print(Rule(f"turn {self.turn}", style="dim"))
        # The text holds brackets ([i, j]) that rich would read as markup.
        self.console.print(observation.text, markup=False, highlight=False)
        # input() blocks; a thread keeps the event loop (and other episodes) running.
        line = await asyncio.to_thread(self._read)
        return Decision(action=line.strip(), thought="")

    def _read(self) -> str:
        try:
            return self.input_fn(PROMPT)
        except (EOFError, StopIteration):
            # StopIteration (an exhausted iterator as input_fn) must not reach the awaiting
            # future, which cannot carry it and would never complete.
            raise HumanInputEnded("input ended before the episode did") from None

    def state(self) -> dict[str, Any]:
        return {}


def make_human(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    input_fn: Callable[[str], str] | None = None,
) -> HumanAgent:
    """Factory of the `human` agent; `input_fn(prompt) -> line` replaces `input` (tests)."""
    if input_fn is not None and not callable(input_fn):
        raise ConfigError(f"input_fn: got {input_fn!r}; allowed values: a callable or none")
    return HumanAgent(input_fn=input_fn)
