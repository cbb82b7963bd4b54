"""`scripted/turtlesoup-responder`: the lexical Responder behind the model interface.

It reads the Responder's own requests (`responder_prompts`, either language), takes the soup
surface, the bottom, the clue library and the question back out of their sections, and answers
as `LexicalResponder` does: Yes/No/Unknown to the answer request, Yes/No to the key clue
request. So a run can name a responder model and still play offline, with every call recorded.
It is not a judge of meaning; it is deterministic and stateless, as `ScriptedPolicy` requires.
"""

from __future__ import annotations

import re

from forkingpaths.benchmarks.turtlesoup import responder_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.responder import (
    ANSWER_THRESHOLD,
    CLUE_THRESHOLD,
    lexical_answer,
)
from forkingpaths.core.chat import Message, ModelParams

NOT_A_REQUEST = "scripted turtlesoup-responder: this is not a Responder request"
"""The reply to anything else (the Responder reads it as no answer and retries)."""

_CLUE_NUMBER = re.compile(r"^\s*\d+[.)]\s*")


def request_sections(text: str, headings: tuple[str, ...]) -> dict[str, str]:
    """Heading -> content of the sections of a request (each heading on a line of its own)."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() in headings:
            if current is not None:
                out[current] = "\n".join(lines).strip()
            current, lines = line.strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip()
    return out


def _request(messages: list[Message]) -> tuple[str, str, prompts.ResponderPrompts, str] | None:
    """(kind "answer" or "key_clue", language, its prompts, the request text) of the first
    system turn that opens with a Responder heading, the first user turn after it appended;
    None when there is none. Later turns (a corrective retry) are not needed to answer."""
    for index, message in enumerate(messages):
        if message.role != "system":
            continue
        first = message.content.lstrip().split("\n", 1)[0].strip()
        for language, p in prompts.PROMPTS.items():
            kind = {p.answer_heading: "answer", p.clue_heading: "key_clue"}.get(first)
            if kind is None:
                continue
            user = next((m.content for m in messages[index + 1 :] if m.role == "user"), "")
            return kind, language, p, message.content + "\n" + user
    return None


class TurtleSoupResponderPolicy:
    """Answers the Responder's two requests lexically (see the module docstring)."""

    def __init__(
        self, answer_threshold: float = ANSWER_THRESHOLD, clue_threshold: float = CLUE_THRESHOLD
    ) -> None:
        self.answer_threshold = answer_threshold
        self.clue_threshold = clue_threshold

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        found = _request(messages)
        if found is None:
            return NOT_A_REQUEST
        kind, language, p, text = found
        headings = (p.surface_heading, p.bottom_heading, p.clues_heading, p.question_heading)
        sections = request_sections(text, headings)
        question = sections.get(p.question_heading, "")
        clues = [
            _CLUE_NUMBER.sub("", line).strip()
            for line in sections.get(p.clues_heading, "").splitlines()
            if line.strip()
        ]
        answer, key_clue = lexical_answer(
            question,
            (sections.get(p.surface_heading, ""), sections.get(p.bottom_heading, "")),
            clues,
            language,
            answer_threshold=self.answer_threshold,
            clue_threshold=self.clue_threshold,
        )
        if kind == "key_clue":
            return "Yes" if key_clue else "No"
        return answer
