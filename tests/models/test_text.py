"""strip_reasoning: inline <think> blocks of reasoning models removed before parsing a reply."""

from __future__ import annotations

import doctest

import pytest

from forkingpaths.models import text
from forkingpaths.models.text import strip_reasoning


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", "Yes"),
        ("  No  ", "  No  "),  # nothing removed: left exactly as it was
        ("I think the answer is yes.", "I think the answer is yes."),
        ("<think>Maybe yes, maybe no.</think>\nNo", "No"),
        ("<THINK>x</Think> Unknown", "Unknown"),
        ('<think type="r">a</think>{"score": 1}', '{"score": 1}'),
        ("<think>a</think>Yes<think>b</think>", "Yes"),
        ("before <think>a</think> after", "before  after"),
        # Nested: the last closer ends the reasoning.
        ("<think>a <think>b</think> c</think> Yes", "Yes"),
        # The chat template opened the block: only the closer is in the reply.
        ("The man was short, so...</think>\n\nYes", "Yes"),
        # Unclosed at the start: the text after the last blank line is the answer.
        ("<think>Yes? No...\n\nHmm, no.\n\nUnknown", "Unknown"),
        ("  <think>\nfirst\n  \nNo", "No"),
        # Unclosed with no blank line: all reasoning, nothing to read.
        ("<think>yes, no, yes", ""),
        ("<think>", ""),
        # Unclosed later on: the answer before it stays.
        ("Yes\n<think>but maybe", "Yes"),
    ],
)
def test_strip_reasoning(reply: str, expected: str) -> None:
    assert strip_reasoning(reply) == expected


def test_strip_reasoning_docstring_examples() -> None:
    assert doctest.testmod(text).failed == 0


def test_json_values_reads_fences_first_then_inline_values_and_skips_deep_nesting() -> None:
    from forkingpaths.models.text import json_values

    deep = "[" * 5000 + "]" * 5000  # parses only past the recursion limit: stepped over
    text = 'see {"a": 1} and\n```json\n[1, 2]\n```\n' + deep + ' then {"b": 2}'
    assert json_values(text) == [[1, 2], {"a": 1}, [1, 2], {"b": 2}]
    assert json_values("no json here") == []
