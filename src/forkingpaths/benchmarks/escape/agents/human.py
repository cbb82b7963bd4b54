"""Human play of a MUTATE scenario in the terminal, under the agents' protocol (App. C.1)."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.rule import Rule

from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.env import Observation
from forkingpaths.core.human import InputFn, human_factory, read_line

PROMPT = "action> "
HINTS = (
    "Type one action per turn: click(x), apply(tool, item), input(text, item), "
    "craft(base, ingredient) or move(scene). Optionally add your reason after ' -- ' "
    "(it is recorded as the Thought)."
)


class HumanAgent:
    """Shows each observation (the same text a model reads, Prompt 2) and sends what the person
    types as the action; `action -- reason` records the reason as the step's Thought."""

    def __init__(self, input_fn: InputFn | None = None, console: Console | None = None) -> None:
        self.input_fn = input_fn or input
        self.console = console or Console()
        self.instance_id = ""

    def reset(self, instance: Instance, seed: int) -> None:
        self.instance_id = instance.id

    async def act(self, observation: Observation) -> Decision:
        if observation.data.get("step") == 1:
            attempt = observation.data.get("attempt", 0) + 1
            self.console.print(Rule(f"{self.instance_id}: attempt {attempt}"))
            self.console.print(HINTS, markup=False, highlight=False)
        self.console.print(Rule(f"step {observation.data.get('step')}", style="dim"))
        self.console.print(observation.text, markup=False, highlight=False)
        # input() blocks; a thread keeps the event loop running.
        line = await asyncio.to_thread(read_line, self.input_fn, PROMPT, "the scenario")
        action, _, thought = line.partition(" -- ")
        return Decision(action=action.strip(), thought=thought.strip())

    def state(self) -> dict[str, Any]:
        return {}


make_human = human_factory(HumanAgent)
