"""InsightForce (§4.2, Eq. 3, App. B.2): the session analysis prompt and its lenient reading."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from forkingpaths.benchmarks.eeb.expver import prompts
from forkingpaths.benchmarks.eeb.expver.answers import (
    BULLET,
    DECORATION,
    clean_item,
    clip,
    item_text,
)
from forkingpaths.benchmarks.eeb.expver.geolink import KeyStep
from forkingpaths.models.text import json_values

log = logging.getLogger(__name__)

Section = Literal["strengths", "weaknesses", "lessons"]
"""The three parts of an experience (Eq. 3) InsightForce is asked for."""


def render_insightforce_prompt(
    game: str,
    key_steps: Sequence[KeyStep],
    metrics: Mapping[str, Any],
    *,
    thought_chars: int = 600,
) -> str:
    """The session analysis prompt of App. B.2 for one episode."""
    metric_lines = [
        prompts.METRIC_LINE.substitute(name=name, value=_show_metric(value))
        for name, value in metrics.items()
        if isinstance(value, bool | int | float | str)
    ]
    blocks = []
    for key in key_steps:
        step = key.step
        thought = step.thought.strip() or (step.calls[-1].response.strip() if step.calls else "")
        outcome = [prompts.OUTCOME_REWARD.substitute(reward=f"{step.reward:+g}")]
        if step.terminated or step.truncated:
            outcome.append(prompts.OUTCOME_END)
        blocks.append(
            prompts.KEY_STEP.substitute(
                number=step.index + 1,
                why=", ".join(key.why),
                thought=clip(thought, thought_chars) or prompts.NO_THOUGHT,
                action=clip(step.action.strip(), 200),
                outcome="; ".join(outcome),
            )
        )
    return prompts.INSIGHTFORCE_PROMPT.substitute(
        game=prompts.GAME_TITLES.get(game, game),
        metrics="\n".join(metric_lines) or prompts.NO_METRICS,
        highlights="\n\n".join(blocks) or prompts.NO_STEPS,
    )


def _show_metric(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "n/a"
    return str(value)


def _section_of(words: str) -> Section | None:
    key = " ".join(re.sub(r"[^a-z ]+", " ", words.lower()).split())
    for section, prefixes in (
        ("weaknesses", prompts.WEAKNESS_WORDS),
        ("strengths", prompts.STRENGTH_WORDS),
        ("lessons", prompts.LESSON_WORDS),
    ):
        if any(key.startswith(prefix) for prefix in prefixes):
            return section  # type: ignore[return-value]
    return None


def _as_items(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        items = [item_text(v) for v in value if v is not None]
        if None in items:
            log.warning("InsightForce listed items without text; dropped them: %r", value)
        return [i for i in items if i is not None]
    if isinstance(value, dict):
        return [f"{k}: {v}" if isinstance(v, str) else str(k) for k, v in value.items()]
    return []


_HEADING = re.compile(
    r"^(?:\d{1,2}[.)]\s*)?(?P<name>[A-Za-z][A-Za-z /&'-]{0,60}?)\s*"
    r"(?:\([^)]*\))?\s*(?::\s*(?P<rest>.*))?$"
)
_DASH = re.compile(r"^[-*•+·]\s+")


def _heading(line: str) -> tuple[Section, str] | None:
    """(section, items written after its colon) when `line` opens a section, else None.

    A heading starts with a section's name (`Strengths`, `## 2. Areas for improvement`,
    `**Lessons learned:**`, `Weaknesses (other):`) and either has a colon after the name or at
    most three words. A dash or star bullet is a heading only as a bare `- Strengths:`, so
    `- Strength in planning` and `1. Positive use of the sword` stay items."""
    dash = _DASH.match(line)
    bare = DECORATION.sub("", line[dash.end() :] if dash else line).strip(" *_")
    match = _HEADING.match(bare)
    section = _section_of(match["name"]) if match else None
    if match is None or section is None:
        return None
    rest = match["rest"]
    if dash is not None:
        return (section, "") if rest == "" else None
    if rest is None and len(match["name"].split()) > 3:
        return None
    return section, rest or ""


def _json_sections(value: Any, sections: dict[Section, list[str]], depth: int = 0) -> None:
    if not isinstance(value, dict) or depth > 2:
        return
    for key, items in value.items():
        section = _section_of(str(key).replace("_", " "))
        if section is not None:
            sections[section] += _as_items(items)
        else:
            # Models like to wrap the answer: {"analysis": {"strengths": [...]}}.
            _json_sections(items, sections, depth + 1)


def parse_experience(text: str) -> dict[Section, list[str]] | None:
    """Read InsightForce's answer leniently into strengths, weaknesses and lessons.

    Accepted: a JSON object (keys such as strengths / weaknesses / areas_for_improvement /
    lessons / insights, each a list or a string, possibly one level inside a wrapper object),
    or text with section headings (see `_heading`) followed by bulleted or numbered lines (a
    heading may also carry items after its colon, separated by `;`). Unbulleted lines under a
    heading count as items. Placeholders (`[Strength 1]`, `...`, `none`) are dropped, repeats
    removed. None when no section holds an item.
    """
    sections: dict[Section, list[str]] = {"strengths": [], "weaknesses": [], "lessons": []}
    for value in json_values(text):
        _json_sections(value, sections)
    if not any(sections.values()):
        current: Section | None = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("```"):
                continue
            heading = _heading(line)
            if heading is not None:
                current, rest = heading
                sections[current] += [part for part in rest.split(";") if part.strip()]
            elif current is not None:
                sections[current].append(BULLET.sub("", line, count=1))
    out: dict[Section, list[str]] = {}
    for section, items in sections.items():
        cleaned: list[str] = []
        seen: set[str] = set()
        for item in items:
            item = clean_item(item)
            if item and item.lower() not in seen:
                seen.add(item.lower())
                cleaned.append(item)
        out[section] = cleaned
    return out if any(out.values()) else None
