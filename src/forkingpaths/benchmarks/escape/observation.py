"""The observation an escape agent reads: Prompt 2 (base user prompt) and Prompt 3 (diversity)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

WORKING_MEMORY = 10
"""Steps of recent history shown to the agent (§3.3: working memory restricted to 10 steps)."""

# Prompt 2 of the paper in our own words: same sections, order, rules and output slot.
OBSERVATION_TEMPLATE = Template(
    """$history
YOUR OBJECTIVE: $objective

Next move: [Step $step]
You are now in: $scene.

$scene_description

$possible_actions

$tools_in_bag

NOTE:
- A move must name exactly one of the scenes listed below.
- Write the scene name alone, without the ": It leads to ..." part.
- Valid scene names: $valid_scene_names
- Example: move($example_scene)

EXPLORATION RULES:
- A failed action that left everything as it was is not worth a second try.
- When the environment answers with something meaningful, stay on that target and try
  another tool or approach.
- When the environment answers that nothing happens, drop that exact action.
- Avoid repeating the same tool on the same target.
- Vary your strategy: other tools, crafting, other objects or another scene.

Aim for creative exploration, not identical retries.
$diversity
Your Response:
"""
)

# Prompt 3 of the paper in our own words.
DIVERSITY_TEMPLATE = Template(
    """
DIVERSITY CONSTRAINT (VERY IMPORTANT):
- This is one of several trials; each trial must reach the goal by a DIFFERENT solution.
- These finish actions are off limits in this trial; ending the game with one of them is NOT
  allowed:
$actions
- If one of them looks like the solution, deliberately look for another way.
"""
)


def _as_format(template: Template) -> str:
    """`template` as a `str.format` string: one pass that, like `Template.substitute`, never
    reads the values it puts in (about three times faster, and the prompt is rendered at every
    step). Only `$name` placeholders are supported; `$$` and `${name}` are refused."""
    text = template.template.replace("{", "{{").replace("}", "}}")

    def field(match: re.Match[str]) -> str:
        name = match.group("named")
        if name is None:
            raise ValueError(
                f"unsupported placeholder {match.group(0)!r} in an observation template"
            )
        return "{" + name + "}"

    return template.pattern.sub(field, text)


_OBSERVATION_FORMAT = _as_format(OBSERVATION_TEMPLATE)


@dataclass(frozen=True)
class HistoryEntry:
    """One remembered step: what was done, what came back, and (for agents) why."""

    step: int
    action: str
    response: str
    thought: str = ""


def render_history(entries: Sequence[HistoryEntry]) -> str:
    """Recent history block; responses appear without an Observation label (App. D.1)."""
    if not entries:
        return "Recent history: (none yet)\n"
    lines = ["Recent history:"]
    for entry in entries[-WORKING_MEMORY:]:
        lines.append(f"[Step {entry.step}]")
        if entry.thought:
            lines.append(f"Thought: {entry.thought}")
        lines.append(f"Action: {entry.action}")
        lines.append(entry.response)
    return "\n".join(lines) + "\n"


def render_diversity_constraint(forbidden: Sequence[str]) -> str:
    """Prompt 3 for the given forbidden finish actions; empty when there are none."""
    if not forbidden:
        return ""
    return DIVERSITY_TEMPLATE.substitute(actions="\n".join(f"  * {a}" for a in forbidden))


def _render_env_history(entries: Sequence[Mapping[str, Any]]) -> str:
    """`render_history` of the env's own entries (dicts without thoughts), without building
    `HistoryEntry` objects first."""
    if not entries:
        return "Recent history: (none yet)\n"
    lines = ["Recent history:"]
    for h in entries[-WORKING_MEMORY:]:
        lines += (f"[Step {h['step']}]", f"Action: {h['action']}", h["response"])
    return "\n".join(lines) + "\n"


def history_from_data(data: Mapping[str, Any]) -> list[HistoryEntry]:
    """The env's own history (actions and responses, no thoughts) from `Observation.data`."""
    return [
        HistoryEntry(step=h["step"], action=h["action"], response=h["response"])
        for h in data.get("history", [])
    ]


def render_observation(
    data: Mapping[str, Any], history: Sequence[HistoryEntry] | None = None
) -> str:
    """Prompt 2 rendered from `Observation.data`; agents that remember their thoughts pass their
    own `history` so the prompt shows Thought/Action/response triples."""
    names = data.get("valid_scene_names", ())
    return _OBSERVATION_FORMAT.format(
        history=render_history(history)
        if history is not None
        else _render_env_history(data.get("history", ())),
        objective=data["objective"],
        step=data["step"],
        scene=data["scene"],
        scene_description=data["scene_description"],
        possible_actions=data["possible_actions"],
        tools_in_bag=data["tools_in_bag"],
        valid_scene_names=", ".join(names) if names else "(none)",
        example_scene=names[0] if names else "scene name",
        diversity=render_diversity_constraint(data.get("forbidden", [])),
    )
