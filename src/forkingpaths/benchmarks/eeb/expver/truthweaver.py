"""TruthWeaver (§4.2, App. B.2): organising the truth repository (merge, remove, insert)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from forkingpaths.benchmarks.eeb.agents.truths import Truth
from forkingpaths.benchmarks.eeb.expver import prompts
from forkingpaths.benchmarks.eeb.expver.answers import BULLET, clean_item, item_text, norm
from forkingpaths.models.text import json_values

log = logging.getLogger(__name__)


def render_truthweaver_prompt(game: str, truths: Sequence[Truth]) -> str:
    """The knowledge organisation prompt of App. B.2 over `truths` (old ones first)."""
    lines = [
        prompts.ENTRY_LINE.substitute(number=number, text=truth.text, source=_source_label(truth))
        for number, truth in enumerate(truths, start=1)
    ]
    return prompts.TRUTHWEAVER_PROMPT.substitute(
        game=prompts.GAME_TITLES.get(game, game), entries="\n".join(lines)
    )


def _source_label(truth: Truth) -> str:
    source = truth.source or "unknown"
    return source if truth.round is None else f"{source}, round {truth.round}"


_SOURCE_SUFFIX = re.compile(r"\s*[(\[]\s*sources?\s*:[^)\]]*[)\]]\s*\.?$", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{4,}")


def parse_organised_truths(text: str, inputs: Sequence[str]) -> list[str] | None:
    """Read TruthWeaver's answer leniently: a JSON list of strings (or an object holding one),
    else one entry per line with bullets, numbers and `(source: ...)` tails stripped; heading
    and comment lines (`#...`, lines ending in `:`, `Note: ...`) are skipped.

    An organised entry restates knowledge it was given, so an entry sharing no word of four or
    more letters with `inputs` is noise and dropped. None when no entry survives."""
    candidates: list[str] = []
    parsed_json = False
    for value in json_values(text):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, list)), None)
        if isinstance(value, list):
            parsed_json = True
            items = [item_text(v) for v in value]
            if None in items:
                log.warning("TruthWeaver listed entries without text; dropped them: %r", value)
            candidates = [i for i in items if i is not None]
            break
    # An answer that was a JSON list is never re-read line by line: its lines are JSON, not prose.
    if not candidates and not parsed_json:
        for raw in text.splitlines():
            line = raw.strip()
            if (
                not line
                or line.startswith(("#", "```"))
                or line.endswith(":")
                or re.match(r"^\W*note\b", line, re.IGNORECASE)
            ):
                continue
            candidates.append(BULLET.sub("", line, count=1))
    vocabulary = {w for entry in inputs for w in _WORD.findall(entry.lower())}
    out: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        # App. B.2 shows entries as `[entry]`; a model copying that format keeps its entry.
        candidate = re.sub(r"^\[(.*)\]$", r"\1", candidate.strip())
        entry = clean_item(_SOURCE_SUFFIX.sub("", candidate))
        if not entry or norm(entry) in seen:
            continue
        if not vocabulary & set(_WORD.findall(entry.lower())):
            continue
        seen.add(norm(entry))
        out.append(entry)
    return out or None


def with_provenance(
    organised: Sequence[str], given: Sequence[Truth], round_index: int | None
) -> list[Truth]:
    """The organised entries as truths: an entry TruthWeaver kept word for word keeps the
    provenance (source, round, gain) of its oldest copy in `given`; a rewritten one is marked
    `source="truthweaver"` with `round_index`."""
    known: dict[str, Truth] = {}
    for truth in given:
        known.setdefault(norm(truth.text), truth)
    return [
        known.get(norm(entry)) or Truth(text=entry, source="truthweaver", round=round_index)
        for entry in organised
    ]


def as_truths(items: Sequence[Truth | str]) -> list[Truth]:
    """Plain strings as truths without provenance."""
    return [item if isinstance(item, Truth) else Truth(text=item) for item in items]


def dedupe(truths: Sequence[Truth]) -> list[Truth]:
    """`truths` without later repeats (compared as `norm` does)."""
    seen: set[str] = set()
    out = []
    for truth in truths:
        if norm(truth.text) not in seen:
            seen.add(norm(truth.text))
            out.append(truth)
    return out
