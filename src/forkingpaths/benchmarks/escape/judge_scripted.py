"""A scripted stand-in for the Divergence Momentum judge, for offline runs and tests.

It is not a judge: it scores with surface heuristics read off the request, so that the whole
Metric 2 pipeline (prompt, parsing, records, summaries) runs without a model. Deterministic and
stateless, as `ScriptedPolicy` requires.
"""

from __future__ import annotations

import json
import re

from forkingpaths.benchmarks.escape import judge_prompts as prompts
from forkingpaths.core.chat import Message, ModelParams

CAUSAL_WORDS = frozenset(
    {
        "because", "so", "since", "therefore", "thus", "hence", "could", "would", "might",
        "should", "which", "if", "then", "cause", "causes", "make", "makes", "create", "creates",
        "lets", "allow", "allows", "enough", "via", "by", "instead", "mechanism",
    }
)  # fmt: skip
"""Words whose presence the stand-in reads as a stated mechanism (elaboration)."""

FEEDBACK_WORDS = frozenset({"failed", "fail", "didn't", "nothing", "still", "again", "previous"})
"""Words the stand-in reads as the Thought using earlier feedback (groundedness)."""

_ACTION = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$", re.DOTALL)
_WORD = re.compile(r"[a-z0-9']+")

_SECTIONS = (
    prompts.SECTION_OBJECTIVE,
    prompts.SECTION_SCENE,
    prompts.SECTION_BAG,
    prompts.SECTION_HISTORY,
    prompts.SECTION_THOUGHT,
    prompts.SECTION_ACTION,
    prompts.SECTION_RESPONSE,
    prompts.SECTION_ANSWER,
)


def judge_sections(text: str) -> dict[str, str]:
    """Heading -> content of a judge user turn (headings as in `judge_prompts`)."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() in _SECTIONS:
            if current is not None:
                out[current] = "\n".join(lines).strip()
            current, lines = line.strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip()
    return out


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _clamp(value: int) -> int:
    return max(1, min(5, value))


def heuristic_scores(thought: str, action: str, history: str = "") -> dict[str, int]:
    """The stand-in's three scores for one step.

    Elaboration: 1, +1 from 8 words of Thought, +1 from 20, +1 with a causal word, +1 with three.
    Originality: 1 for click/move/unreadable, 2 for apply, 3 for craft and input; +1 when the
    two objects of an apply or craft share no word; +1 when the Thought says "instead" or "as a".
    Groundedness: 1 without a Thought; else 2, +1 when it names some of the Action's objects,
    +1 more when it names all, +1 when it refers to earlier feedback.
    """
    thought_words = _words(thought)
    causal = sum(w in CAUSAL_WORDS for w in thought_words)
    elaboration = _clamp(
        1 + (len(thought_words) >= 8) + (len(thought_words) >= 20) + (causal >= 1) + (causal >= 3)
    )
    match = _ACTION.match(action)
    kind = match.group(1).lower() if match else ""
    args = [a.strip().strip("'\"") for a in match.group(2).split(",")] if match else []
    originality = {"apply": 2, "craft": 3, "input": 3}.get(kind, 1)
    if kind in ("apply", "craft") and len(args) == 2:
        originality += not (set(_words(args[0])) & set(_words(args[1])))
    lowered = thought.lower()
    if originality > 1 and ("instead" in thought_words or "as a " in lowered):
        originality += 1
    if not thought_words:
        groundedness = 1
    else:
        objects = args[1:] if kind == "input" else args
        named = [a for a in objects if a and a.lower() in lowered]
        groundedness = 2 + bool(named) + (bool(objects) and len(named) == len(objects))
        refers = any(w in FEEDBACK_WORDS for w in thought_words)
        groundedness += refers and history.strip() not in ("", prompts.NOTHING)
    return {
        "originality": _clamp(originality),
        "elaboration": elaboration,
        "groundedness": _clamp(int(groundedness)),
    }


class DivergenceJudgePolicy:
    """`scripted/escape-judge`: answers judge requests with `heuristic_scores` as one JSON object
    (a clearly labelled stand-in rationale); any other request gets a JSON object without scores,
    which the judge records as missing."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        request = next(
            (
                m.content
                for m in messages
                if m.role == "user" and m.content.startswith(prompts.JUDGE_HEADING)
            ),
            None,
        )
        if request is None:
            return json.dumps({"error": "scripted judge: not a judge request"})
        sections = judge_sections(request)
        thought = sections.get(prompts.SECTION_THOUGHT, "")
        scores = heuristic_scores(
            "" if thought == prompts.NO_THOUGHT else thought,
            sections.get(prompts.SECTION_ACTION, ""),
            sections.get(prompts.SECTION_HISTORY, ""),
        )
        return json.dumps({**scores, "rationale": "scripted heuristic stand-in, not a judgement"})
