"""Helpers for reading model replies as text: reasoning blocks inline in the answer.

Reasoning models served without a reasoning parser (DeepSeek-R1, Qwen3 and their distillations
behind vLLM, Ollama, llama.cpp ...) return their chain of thought inline, wrapped in
`<think>...</think>`, before the answer. A reply parser that reads the whole text would find the
words and JSON of the reasoning ("maybe yes ... no, because ...") instead of the answer, so
parsers strip the reasoning first with `strip_reasoning`.
"""

from __future__ import annotations

import re

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
