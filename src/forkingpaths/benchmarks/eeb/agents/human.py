"""Human play of EvoEmpirBench in a terminal, recorded like any agent's episode (§3, "human")."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.rule import Rule

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.reference import game_of
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.env import Observation
from forkingpaths.core.human import InputFn, human_factory, read_line

PROMPT = "action> "


class HumanAgent:
    """Shows each observation text on the console and sends what the person types, unchanged,
    as the action: the env parses and judges it exactly as it does a model's reply."""

    def __init__(self, input_fn: InputFn | None = None, console: Console | None = None) -> None:
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
        # input() blocks; a thread keeps the event loop (and other episodes) running. read_line
        # turns an exhausted iterator's StopIteration, which the awaiting future cannot carry,
        # into HumanInputEnded.
        line = await asyncio.to_thread(read_line, self.input_fn, PROMPT)
        return Decision(action=line.strip(), thought="")

    def state(self) -> dict[str, Any]:
        return {}


make_human = human_factory(HumanAgent)
"""Factory of the `human` agent; `input_fn(prompt) -> line` replaces `input` (tests)."""
