"""Reading escape agents' model replies (the Thought/Action pair) and the env's bag block; actions
themselves are read by the one grammar, `escape.actions`."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A `Thought:` or `Action:` label at the start of a line, tolerating markdown around it
# (`**Action:**`, `- Action:`, `> Thought:`, `### Action:`, `` `Action:` ``).
_LABEL = re.compile(r"^[\s>*_#`-]*(thought|action)[\s*_`]*:[\s*_`]*(.*)$", re.IGNORECASE)
_INLINE = re.compile(r"\baction[\s*_`]*:[\s*_`]*(.*)$", re.IGNORECASE)
_TRIM = " \t`*_\"'"


@dataclass(frozen=True)
class Reply:
    """What a Thought/Action reply says: the reasoning and the action text for the env."""

    thought: str
    action: str


def parse_reply(text: str) -> Reply:
    """The action of the LAST line labelled `Action:` and the `Thought:` text before it.

    Markdown bold, backticks and quotes around the label or the action are dropped; an `Action:`
    label alone on its line takes the next non-empty line. Without any `Action:` line the action
    is the reply's first non-empty line (or ""), which the env records as invalid. The thought is
    the text of the last `Thought:` label before the action (up to it, several lines joined), or
    the unlabelled text before the action, or the whole reply when there is no action line. A
    one-line reply with `Action:` inside the line (`Thought: ... Action: click(box)`) counts as
    an action line. Never raises.
    """
    lines = (text or "").splitlines()
    actions = [i for i, line in enumerate(lines) if _label(line) == "action"]
    if actions:
        index = actions[-1]
        action = _LABEL.match(lines[index]).group(2).strip(_TRIM)  # type: ignore[union-attr]
        if not action:
            following = [line.strip(_TRIM) for line in lines[index + 1 :] if line.strip(_TRIM)]
            action = following[0] if following else ""
        before = lines[:index]
    elif (inline := _inline_action(lines)) is not None:
        index, action, head = inline
        before = [*lines[:index], head]
    else:
        before, action = lines, next((line.strip() for line in lines if line.strip()), "")
        if not any(_label(line) == "thought" for line in lines):
            return Reply(thought=(text or "").strip(), action=action)
    starts = [i for i, line in enumerate(before) if _label(line) == "thought"]
    if starts:
        head_match = _LABEL.match(before[starts[-1]])
        thought = _join(head_match.group(2) if head_match else "", before[starts[-1] + 1 :])
    else:
        thought = "\n".join(line for line in before if _label(line) is None)
    return Reply(thought=thought.strip(), action=action)


def _label(line: str) -> str | None:
    match = _LABEL.match(line)
    return match.group(1).lower() if match else None


def _inline_action(lines: list[str]) -> tuple[int, str, str] | None:
    """(line, action text, text before the label) of the last `Action:` inside a line, as in a
    one-line reply `Thought: ... Action: click(box)`; None when no line holds one."""
    for i in range(len(lines) - 1, -1, -1):
        found = list(_INLINE.finditer(lines[i]))
        if found:
            last = found[-1]
            return i, last.group(1).strip(_TRIM), lines[i][: last.start()]
    return None


def _join(head: str, tail: list[str]) -> str:
    # Stop at the next label: a reply may hold several Thought/Action pairs.
    body = [head.strip(_TRIM)]
    for line in tail:
        if _LABEL.match(line):
            break
        body.append(line.strip())
    return "\n".join(part for part in body if part)


_BAG_HEADING = re.compile(r"^\s*tools in (?:your )?bag\s*:?[ \t]*(.*)$", re.IGNORECASE)


def bag_lines(block: str) -> str:
    """The env's rendered "tools in bag" block without its own heading, for prompts that put
    their own label above it (a heading line that also holds text, `Tools in bag: (none)`,
    keeps that text)."""
    lines = block.strip("\n").splitlines()
    if lines and (match := _BAG_HEADING.match(lines[0])):
        lines = [match.group(1), *lines[1:]] if match.group(1).strip() else lines[1:]
    return "\n".join(lines)
