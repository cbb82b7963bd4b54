"""Helpers for reading model replies as text: inline reasoning blocks, embedded JSON values.

Reasoning models served without a reasoning parser (DeepSeek-R1, Qwen3 and their distillations
behind vLLM, Ollama, llama.cpp ...) return their chain of thought inline, wrapped in
`<think>...</think>`, before the answer. A reply parser that reads the whole text would find the
words and JSON of the reasoning ("maybe yes ... no, because ...") instead of the answer, so
parsers strip the reasoning first with `strip_reasoning`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_OPEN = r"<\s*think\b[^<>]*>"
_CLOSE = r"<\s*/\s*think\s*>"
_BLOCK = re.compile(rf"{_OPEN}.*?{_CLOSE}", re.IGNORECASE | re.DOTALL)
_OPENER = re.compile(_OPEN, re.IGNORECASE)
_CLOSER = re.compile(_CLOSE, re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


def strip_reasoning(text: str) -> str:
    """`text` without the model's inline reasoning; unchanged when it holds none.

    Rules, in order (tags are matched case-insensitively, `<think>` may carry attributes):

    1. Every complete `<think>...</think>` block is removed, wherever it stands.
    2. A `</think>` left without its opener ends reasoning whose `<think>` was opened earlier:
       by a nested block (`<think>a <think>b</think> c</think>`) or by the chat template, which
       some servers put in the prompt rather than the reply. Everything up to the last such
       `</think>` is dropped.
    3. A `<think>` left unclosed is reasoning cut short (the token limit, a stop sequence). When
       it opens the text (after white space), the reply is taken to be reasoning up to its last
       blank line and only the text after that line is kept; with no blank line after the
       opener nothing is kept (the whole reply was reasoning, so there is no answer to read).
       An unclosed `<think>` later in the text drops everything from it to the end.

    The result is stripped of surrounding white space whenever something was removed.

    >>> strip_reasoning("<think>Maybe yes, maybe no.</think>\\nNo")
    'No'
    >>> strip_reasoning("<think>It could be yes...\\n\\nNo")
    'No'
    >>> strip_reasoning("He checked it.</think>Yes")
    'Yes'
    >>> strip_reasoning("<think>yes or no")
    ''
    >>> strip_reasoning("Yes")
    'Yes'
    """
    if "think" not in text.lower():
        return text
    out = _BLOCK.sub("", text)
    closers = list(_CLOSER.finditer(out))
    if closers:
        out = out[closers[-1].end() :]
    opener = _OPENER.search(out)
    if opener is not None:
        if out[: opener.start()].strip():
            out = out[: opener.start()]
        else:
            rest = out[opener.end() :]
            breaks = list(_BLANK_LINE.finditer(rest))
            out = rest[breaks[-1].end() :] if breaks else ""
    return out.strip() if out != text else text


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def skip_nested(text: str, start: int) -> int:
    """The index just past the bracket that closes the `{` or `[` at `start` (strings and their
    escapes respected), or len(text) when it never closes. Used to step over a value nested too
    deeply for the JSON parser (RecursionError) in one go instead of retrying at each of its
    brackets."""
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def json_values(text: str) -> list[Any]:
    """JSON objects and arrays a model reply holds, in order: the content of each ``` fence
    first, then every outermost `{...}` or `[...]` that parses anywhere in the text. A value
    nested too deeply to parse (RecursionError) is stepped over like any unreadable text."""
    found: list[Any] = []
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        except (ValueError, RecursionError):
            continue
    decoder = json.JSONDecoder()
    index = 0
    while index < len(text):
        if text[index] in "{[":
            try:
                value, end = decoder.raw_decode(text, index)
            except ValueError:
                index += 1
                continue
            except RecursionError:
                index = skip_nested(text, index)
                continue
            found.append(value)
            index = end
        else:
            index += 1
    return found
