"""The escape action grammar (§3.2), one for the engine and the agents: read, key, write."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

ActionKind = Literal["click", "apply", "input", "craft", "move"]

ACTION_KINDS: tuple[str, ...] = ("click", "apply", "input", "craft", "move")
"""The five actions of the escape engine (§3.2)."""

ARITY: Mapping[str, int] = MappingProxyType(
    {"click": 1, "apply": 2, "input": 2, "craft": 2, "move": 1}
)
USAGE: Mapping[str, str] = MappingProxyType(
    {
        "click": "click(x)",
        "apply": "apply(tool, item)",
        "input": "input(text, item); quote a text that holds a comma",
        "craft": "craft(base, ingredient)",
        "move": "move(scene)",
    }
)

# The engine executes what `parse_action` reads, and the agents read model replies, prompts and
# forbidden finish actions with the same functions: an agent then drops a candidate as forbidden
# exactly when the engine would refuse it.
_HEAD = re.compile(r"\s*(?:action\s*:\s*)?[`'\"]*\s*([A-Za-z_]+)\s*\(", re.IGNORECASE)
_QUOTES = "'\"`"
_QUOTED_CHARS = re.compile("[,()'\"`]")
"""A character that makes an input string be quoted in canonical text (`_quote`)."""
_PLAIN = re.compile(r"(click|apply|input|craft|move)\(([^(),'\"`]*)(?:,([^(),'\"`]*))?\)")
"""A call as agents and canonical texts mostly write it: a lower-case kind, `(` right after it,
then the call alone, with no quote, parenthesis or second comma in its arguments. `_HEAD` and
`split_args` read such a text as this pattern's groups (trimmed); `action_parts` reads it in one
match."""


def fold_name(name: str) -> str:
    """The key names are compared by: trimmed, inner whitespace runs folded, case-folded
    (Unicode case folding, so `Straße` and `STRASSE` name one thing)."""
    return " ".join(name.split()).casefold()


def tidy(name: str) -> str:
    """A name as shown: trimmed, inner whitespace runs folded, case kept."""
    return " ".join(name.split())


@dataclass(frozen=True)
class ActionCall:
    """One call read from text: its kind (lower-case), its arguments, and where it stood."""

    kind: str
    args: tuple[str, ...]
    text: str = field(default="", compare=False)
    """The call as written, from its kind to its closing parenthesis ("" when not read from
    a longer text)."""
    start: int = field(default=0, compare=False)
    """Offset of the call's first character in the text it was read from."""

    @property
    def key(self) -> str:
        """The comparison key: `action_key` of the call."""
        return call_key(self.kind, self.args)


def call_key(kind: str, args: Sequence[str]) -> str:
    """Canonical comparison key: names folded, an input string kept as typed (trimmed)."""
    if kind == "input" and len(args) == 2:
        return format_action(kind, (args[0].strip(), fold_name(args[1])))
    return f"{kind}({', '.join(fold_name(a) for a in args)})"


def split_args(text: str, i: int) -> tuple[list[str], int] | None:
    """(arguments, index of the closing parenthesis) of a call whose `(` ends at `i`; None when
    the call is not closed.

    Arguments split on commas outside parentheses; a quote opens only at an argument's start (so
    `driver's licence` needs no quoting) and closes at the same quote followed by `,` or `)`,
    which makes commas and parentheses inside it literal. Arguments are trimmed.
    """
    n = len(text)
    args: list[str] = []
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return None
        quote = text[i]
        end = -1
        if quote in _QUOTES:
            j = i + 1
            while True:
                j = text.find(quote, j)
                if j < 0:
                    break
                k = j + 1
                while k < n and text[k].isspace():
                    k += 1
                if k < n and text[k] in ",)":
                    end = k
                    args.append(text[i + 1 : j].strip())
                    break
                j += 1
        if end < 0:
            depth = 0
            j = i
            while j < n:
                ch = text[j]
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch == "," and depth == 0:
                    break
                j += 1
            if j >= n:
                return None
            args.append(text[i:j].strip())
            end = j
        if text[end] == ")":
            return args, end
        i = end + 1


def _action_args(kind: str, args: list[str]) -> tuple[str, ...] | None:
    """The arguments of an action of the grammar, names tidied; None for the wrong number of
    arguments or an empty name (an input string may be empty: the engine answers it)."""
    if len(args) != ARITY[kind]:
        return None
    out = []
    for i, arg in enumerate(args):
        if kind == "input" and i == 0:
            out.append(arg)  # a typed string is matched exactly: inner spaces are kept
            continue
        if not (name := tidy(arg)):
            return None
        out.append(name)
    return tuple(out)


def parse_action(text: str) -> ActionCall | None:
    """The action `text` holds, as the engine executes it: `kind(a, b)` with an optional
    `Action:` label, surrounding backticks or quotes, any spacing and quoted arguments, text
    after the closing parenthesis ignored; None when the text is no action of the grammar or
    has the wrong number of arguments."""
    if not isinstance(text, str):
        return None
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        args = _plain_args(plain)
        return None if args is None else ActionCall(plain.group(1), args, text, 0)
    return _parse_any(text)


def _parse_any(text: str) -> ActionCall | None:
    """`parse_action` for any text (the `_PLAIN` ones are read faster there, alike)."""
    match = _HEAD.match(text)
    if match is None:
        return None
    kind = match.group(1).lower()
    if kind not in ARITY:
        return None
    split = split_args(text, match.end())
    if split is None:
        return None
    args = _action_args(kind, split[0])
    if args is None:
        return None
    return ActionCall(kind, args, text[match.start(1) : split[1] + 1], match.start(1))


def action_parts(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(kind, arguments) of `parse_action(text)`, None where it is None (the engine reads each
    new text of a game with it: no `ActionCall` to build)."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        args = _plain_args(plain)
        return None if args is None else (plain.group(1), args)
    parsed = _parse_any(text)
    return None if parsed is None else (parsed.kind, parsed.args)


def _plain_args(plain: re.Match[str]) -> tuple[str, ...] | None:
    """`_action_args` of a `_PLAIN` match, inlined (every new action text of a game comes
    here)."""
    kind, first, second = plain.groups()
    if second is None:
        if ARITY[kind] != 1:
            return None
        name = " ".join(first.split())
        return (name,) if name else None
    if ARITY[kind] != 2:
        return None
    name = " ".join(second.split())
    if not name:
        return None
    if kind == "input":
        return first.strip(), name
    base = " ".join(first.split())
    return (base, name) if base else None


def action_key(text: str) -> str | None:
    """A comparison key for an action: canonical form with names folded (input strings kept as
    typed, trimmed); None when `text` is no action."""
    parsed = parse_action(text)
    return None if parsed is None else parsed.key


def head_kind(text: str) -> str:
    """The lower-cased word before the first `(` of `text` ("" when it starts with none): the
    action a piece of text that `parse_action` refused was meant to be."""
    match = _HEAD.match(text)
    return match.group(1).lower() if match else ""


def find_calls(text: str, kinds: tuple[str, ...] = ACTION_KINDS) -> list[ActionCall]:
    """Every `kind(args)` call of one of `kinds` in free text (a model's reply, a prompt), in
    order; kinds match case-insensitively and are reported lower-case; an unclosed call ends
    the search. An action call is read as `parse_action` reads it (one the engine would refuse
    is skipped); other kinds (a task-list function) keep their arguments as written."""
    pattern = re.compile(rf"\b({'|'.join(map(re.escape, kinds))})\s*\(", re.IGNORECASE)
    calls, pos = [], 0
    while (match := pattern.search(text, pos)) is not None:
        split = split_args(text, match.end())
        if split is None:
            break
        found, close = split
        pos = close + 1
        kind = match.group(1).lower()
        if kind in ARITY:
            args = _action_args(kind, found)
            if args is None:
                continue
        else:
            args = () if found == [""] else tuple(found)
        calls.append(ActionCall(kind, args, text[match.start() : close + 1], match.start()))
    return calls


def _quote(value: str) -> str:
    """An input string as canonical text writes it: quoted when it would not re-parse bare."""
    if value and _QUOTED_CHARS.search(value) is None and value == value.strip():
        return value
    return '"' + value + '"' if '"' not in value else "'" + value + "'"


def format_action(kind: str, args: Sequence[str]) -> str:
    """`kind(a, b)`, the input string quoted where needed."""
    if kind == "input":
        return f"input({_quote(args[0])}, {args[1]})"
    return f"{kind}({', '.join(args)})"
