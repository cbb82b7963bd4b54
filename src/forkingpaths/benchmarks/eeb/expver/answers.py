"""Lenient reading of the modules' answers: bullets, markdown, placeholders and listed items."""

from __future__ import annotations

import re
from typing import Any

from forkingpaths.benchmarks.eeb.expver import prompts

BULLET = re.compile(r"^\s*(?:[-*•+·]|\d{1,2}[.)]|\(\d{1,2}\)|[a-z][.)](?=\s))\s*")
"""A list marker opening a line: dash, star, dot, `1.`, `2)`, `(3)`, `a)`."""
DECORATION = re.compile(r"\*\*|__|`|^\s*(?:#+|>)\s*")
"""Markdown that wraps text (bold, code, heading and quote marks); single `*`/`_` stay, since
they also occur inside words such as max_steps."""
_PLACEHOLDER = re.compile(
    r"^(?:\[.*\]|\.{2,}|…|n/?a|none(?: identified)?|nothing|-+|tbd)\.?$", re.IGNORECASE
)
_MAX_ITEM_CHARS = 300
_TEXT_FIELDS = ("text", "entry", "knowledge", "point", "lesson", "content")


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with a truncation mark."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + prompts.TRUNCATION_MARK


def clean_item(text: str) -> str:
    """An item without markdown and surrounding punctuation, clipped; "" for a placeholder
    (`[Strength 1]`, `...`, `none`)."""
    text = " ".join(DECORATION.sub("", text).split()).strip(" :;")
    if not text or _PLACEHOLDER.match(text):
        return ""
    return text if len(text) <= _MAX_ITEM_CHARS else clip(text, _MAX_ITEM_CHARS)


def item_text(value: Any) -> str | None:
    """The text of one listed item: a string, or an object's text field (or its only string);
    anything else is no item (logged by the caller), never raw JSON passed on as prose."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _TEXT_FIELDS:
            if isinstance(value.get(key), str):
                return value[key]
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
    return None


def norm(text: str) -> str:
    """The form two entries are compared in: lowercase, single spaces, no final period."""
    return " ".join(text.lower().split()).rstrip(".")
