"""`scripted/eeb-expver`: an offline stand-in model for a whole Agent-ExpVer run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from forkingpaths.benchmarks.eeb.agents.scripted import EEBPolicy
from forkingpaths.benchmarks.eeb.expver import prompts
from forkingpaths.core.chat import Message, ModelParams

# Rules of thumb per kind of key moment: (words that reveal it, weakness, lesson).
_MOMENT_RULES: Mapping[str, tuple[tuple[str, ...], str, str]] = {
    "wall": (
        ("wall",),
        "A multi-cell move ran into a wall and cost a life.",
        "Before a 2- or 3-cell move, check every cell on the way for a wall.",
    ),
    "monster": (
        ("monster",),
        "A monster touched the agent and sent it back to the start.",
        "Keep a free cell between you and a visible monster unless you hold the sword.",
    ),
    "invalid": (
        ("invalid",),
        "Some answers were not valid actions and wasted their step.",
        "Answer with exactly one action in the required format.",
    ),
    "target": (
        ("cleared", "eliminat"),
        "Moves cleared tiles of colours whose target was already met.",
        "Prefer the largest group whose colour still has an unmet target.",
    ),
}
_STRENGTH_RULES: Mapping[str, tuple[tuple[str, ...], str]] = {
    "coin": (("coin",), "Collected coins that lay close to the path."),
    "goal": (("goal",), "Headed for the goal once it was reachable."),
    "clear": (("cleared",), "Cleared several tiles in one move."),
}
_ENTRY = re.compile(r"^\s*\d+\.\s+(.*?)\s+\(source: [^)]*\)\s*$")


def _insightforce(text: str) -> str:
    lowered = text.lower()
    strengths = [s for words, s in _STRENGTH_RULES.values() if any(w in lowered for w in words)]
    weaknesses, lessons = [], []
    for words, weakness, lesson in _MOMENT_RULES.values():
        if any(w in lowered for w in words):
            weaknesses.append(weakness)
            lessons.append(lesson)
    if not lessons:
        lessons.append("Plan a few moves ahead before acting.")
    sections = {"Strengths": strengths, "Weaknesses": weaknesses, "Lessons": lessons}
    return "\n\n".join(
        f"{title}:\n" + "\n".join(f"- {item}" for item in items)
        for title, items in sections.items()
        if items
    )


def _truthweaver(text: str) -> str:
    seen: dict[str, str] = {}
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            entry = match.group(1).strip()
            seen.setdefault(" ".join(entry.lower().split()), entry)
    return json.dumps(list(seen.values()))


class ExpVerScriptedPolicy:
    """Dispatches on the prompt: ExpVer modules get rules of thumb, game prompts the reference
    move (via EEBPolicy).

    It plays the games like the reference agents (through the base agent's prompt) and answers
    the InsightForce and TruthWeaver prompts with rules of thumb read off the session it is
    shown, so `forkingpaths eeb learn` runs end to end without a key. Stateless and
    deterministic.
    """

    def __init__(self) -> None:
        self.player = EEBPolicy()

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        last = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if prompts.INSIGHTFORCE_HEADING in last:
            return _insightforce(last)
        if prompts.TRUTHWEAVER_HEADING in last:
            return _truthweaver(last)
        return self.player.respond(messages, params)
