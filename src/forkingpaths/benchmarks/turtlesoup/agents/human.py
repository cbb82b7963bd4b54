"""Human play of a TurtleSoup puzzle in the terminal, under the questioners' protocol (§4.5)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from rich.console import Console
from rich.rule import Rule

from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.mosaic import history_entries
from forkingpaths.benchmarks.turtlesoup.dialogue import SOLVE_COMMAND
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.env import Observation
from forkingpaths.core.human import HumanInputEnded, InputFn, human_factory, read_line

QUESTION_PROMPT = "question> "
SUMMARY_PROMPT = "summary> "
CONTINUE_PROMPT = "... "

HINTS = MappingProxyType(
    {
        "en": (
            "Ask one yes/no question per turn; the host answers Yes, No or Unknown, and marks "
            "answers that touch a key point with <Key Clue>. An empty line or /solve stops the "
            "questions; you then write your account of the story."
        ),
        "zh": (
            "每轮提一个是非问题；主持人只回答 是 / 否 / 不知道，触及关键点的回答会标上<关键线索>。"
            "输入空行或 /solve 结束提问，然后写出你还原的故事。"
        ),
    }
)
SUMMARY_HINTS = MappingProxyType(
    {
        "en": "Write your account of the hidden story; an empty line ends it.",
        "zh": "请写出你还原的汤底；输入空行结束。",
    }
)


class HumanQuestioner:
    """Shows the surface and the history (the observation text), sends what the person types as
    the question, and in the summarize phase reads a multi-line summary ended by an empty line
    (end of input ends it too). After an empty line or `/solve` the agent answers every further
    ask turn with `SOLVE_COMMAND` without prompting again."""

    def __init__(self, input_fn: InputFn | None = None, console: Console | None = None) -> None:
        self.input_fn = input_fn or input
        self.console = console or Console()
        self.instance_id = ""
        self.solved = False

    def reset(self, instance: Instance, seed: int) -> None:
        self.instance_id = instance.id
        self.solved = False

    def state(self) -> dict[str, Any]:
        return {}

    async def act(self, observation: Observation) -> Decision:
        data = observation.data
        lang = prompts.resolve_language(data.get("language"))
        if data.get("phase") == "summarize":
            self._show(observation, lang, header="summary")
            self.console.print(SUMMARY_HINTS[lang], markup=False, highlight=False)
            # input() blocks; a thread keeps the event loop running.
            summary = await asyncio.to_thread(self._read_summary)
            return Decision(action=summary, thought="summary typed by a person")
        if self.solved:
            return Decision(action=SOLVE_COMMAND, thought="the person already stopped asking")
        if data.get("turn", 1) == 1:
            self.console.print(Rule(str(data.get("title") or self.instance_id)))
            self.console.print(HINTS[lang], markup=False, highlight=False)
        self._show(observation, lang, header=f"turn {data.get('turn', '?')}")
        line = await asyncio.to_thread(self._read, QUESTION_PROMPT)
        question = (line or "").strip()
        if question in ("", SOLVE_COMMAND):
            self.solved = True
            return Decision(action=SOLVE_COMMAND, thought="the person stopped asking")
        return Decision(action=question, thought="question typed by a person")

    def _show(self, observation: Observation, lang: str, header: str) -> None:
        self.console.print(Rule(header, style="dim"))
        text = observation.text.strip() or render_view(observation.data, lang)
        self.console.print(text, markup=False, highlight=False)

    def _read(self, prompt: str) -> str | None:
        """One line, or None at end of input: here it ends the questions or the summary, as an
        empty line does, rather than the episode."""
        try:
            return read_line(self.input_fn, prompt, "the puzzle")
        except HumanInputEnded:
            return None

    def _read_summary(self) -> str:
        lines: list[str] = []
        while True:
            line = self._read(CONTINUE_PROMPT if lines else SUMMARY_PROMPT)
            if line is None or not line.strip():
                return "\n".join(lines).strip()
            lines.append(line.rstrip())


def render_view(data: Mapping[str, Any], language: str) -> str:
    """Surface and history from the observation data, for an observation without text."""
    surface = str(data.get("surface", ""))
    history = prompts.render_history(history_entries(data), language)
    return f"{surface}\n\n{history}"


make_human = human_factory(HumanQuestioner)
"""Factory of the `human` agent; `input_fn(prompt) -> line` replaces `input` (tests)."""
