"""Reading escape agents' model replies: the Thought/Action pair, action calls and name folding."""

from __future__ import annotations

import re
from dataclasses import dataclass

ACTION_KINDS: tuple[str, ...] = ("click", "apply", "input", "craft", "move")
"""The five actions of the escape engine (§3.2)."""

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


def fold_name(name: str) -> str:
    """A name as the engine matches it: case-insensitive, trimmed, inner whitespace folded."""
    return " ".join(name.split()).casefold()


@dataclass(frozen=True)
class ActionCall:
    """One action call read from text: its kind, its arguments, and the text it spans."""

    kind: str
    args: tuple[str, ...]
    text: str
    start: int
    """Offset of the call's first character in the text it was read from."""

    @property
    def key(self) -> str:
        """Canonical comparison key: names folded, an input string kept as written."""
        args = [
            arg.strip() if self.kind == "input" and i == 0 else fold_name(arg)
            for i, arg in enumerate(self.args)
        ]
        return f"{self.kind}({', '.join(args)})"


def _scan_args(text: str, start: int) -> tuple[int, tuple[str, ...]]:
    """(index of the closing parenthesis or -1, arguments) of a call whose `(` ends at `start`.

    Arguments split on commas; a quote opens only at an argument's start (so a name such as
    `driver's licence` needs no quoting) and makes commas and parentheses inside it literal.
    """
    args: list[str] = []
    current: list[str] = []
    quote, depth = "", 0
    for i in range(start, len(text)):
        char = text[i]
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in "'\"" and not "".join(current).strip():
            current, quote = [], char
        elif char == "(":
            depth += 1
            current.append(char)
        elif char == ")" and depth:
            depth -= 1
            current.append(char)
        elif char == ")":
            args.append("".join(current).strip())
            return i, (() if len(args) == 1 and not args[0] else tuple(args))
        elif char == ",":
            args.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    return -1, ()


def find_calls(text: str, kinds: tuple[str, ...] = ACTION_KINDS) -> list[ActionCall]:
    """Every `kind(args)` call of one of `kinds` in `text`, in order (an unclosed call ends the
    search); kinds are matched case-insensitively and reported lower-case.

    `input(s, x)` with more than two comma-separated parts keeps all but the last as the string,
    so an unquoted string with commas still names its item last.
    """
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, kinds))})\s*\(", re.IGNORECASE)
    calls, pos = [], 0
    while (match := pattern.search(text, pos)) is not None:
        close, args = _scan_args(text, match.end())
        if close < 0:
            break
        kind = match.group(1).lower()
        if kind == "input" and len(args) > 2:
            inner = text[match.end() : close]
            args = (inner[: inner.rfind(",")].strip(), args[-1])
        calls.append(ActionCall(kind, args, text[match.start() : close + 1], match.start()))
        pos = close + 1
    return calls


def read_call(action: str) -> ActionCall | None:
    """The action call an action text starts with (None when it holds none)."""
    calls = find_calls(action)
    if not calls or action[: calls[0].start].strip(_TRIM + ":"):
        return None
    return calls[0]
