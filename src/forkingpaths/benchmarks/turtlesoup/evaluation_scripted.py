"""A scripted stand-in for the TurtleSoup evaluation judge (`scripted/turtlesoup-judge`).

It is not a judge: it reads the requests of `evaluation_prompts` and answers them with surface
heuristics, so that the whole protocol (prompts, parsing, records, metrics) runs offline.
Extraction splits the text into sentences; similarity is the Dice overlap of content words
(English) or character bigrams (Chinese); the conclusion is the share of the bottom's terms the
summary covers. Deterministic and stateless, as `ScriptedPolicy` requires.
"""

from __future__ import annotations

import json
import re

from forkingpaths.benchmarks.turtlesoup.evaluation import (
    VALIDITY_THRESHOLD,
    point_counts,
    split_sentences,
)
from forkingpaths.benchmarks.turtlesoup.evaluation_prompts import EN, ZH, EvaluationPrompts
from forkingpaths.core.chat import Message, ModelParams

STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
        "from", "into", "as", "is", "was", "were", "be", "been", "are", "it", "its", "that",
        "this", "these", "those", "he", "she", "they", "him", "her", "them", "his", "their",
        "had", "has", "have", "did", "do", "does", "not", "so", "who", "which", "what", "when",
        "then", "there", "all", "one", "would", "could", "every", "each", "also",
    }
)  # fmt: skip
"""English words that carry no content for the overlap."""

CAUSAL_CUES = (
    "because", "so ", "therefore", "since", "led to", "caused", "in order to", "so that",
    "when ", "after ", "meant", "realised", "realized", "understood",
    "因为", "所以", "于是", "导致", "因此", "为了", "结果", "意味着", "明白",
)  # fmt: skip
"""Phrases that make the stand-in read a sentence as a logic step rather than a detail."""

UNKNOWN_REQUEST = "I can only answer TurtleSoup evaluation requests."
"""Answer to anything that is not one of the evaluation prompts."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u9fff]+")
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s*(.*)$")


def terms(text: str) -> set[str]:
    """Content terms of `text`: English words (lowercased, stopwords and a plural -s dropped) and
    bigrams of every run of Chinese characters (a lone character stands for itself)."""
    lowered = text.lower()
    out = {w.removesuffix("s") for w in _WORD.findall(lowered) if w not in STOPWORDS}
    for run in _CJK.findall(lowered):
        out.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return out


def similarity(a: str, b: str) -> float:
    """Dice overlap of the terms of `a` and `b` (0 when either has none)."""
    ta, tb = terms(a), terms(b)
    if not ta or not tb:
        return 0.0
    return 2 * len(ta & tb) / (len(ta) + len(tb))


def coverage(reference: str, text: str) -> float:
    """Share of the terms of `reference` that `text` also has (0 when `reference` has none)."""
    ref = terms(reference)
    return len(ref & terms(text)) / len(ref) if ref else 0.0


def _between(text: str, start: str, end: str) -> str | None:
    """What stands between the lines `start` and `end` (tags on lines of their own, since the
    instructions may name a tag inline)."""
    pattern = rf"^[ \t]*{re.escape(start)}[ \t]*\n(.*?)\n[ \t]*{re.escape(end)}[ \t]*$"
    found = re.search(pattern, text, re.MULTILINE | re.DOTALL)
    return found.group(1).strip() if found else None


def _request(messages: list[Message]) -> tuple[str, EvaluationPrompts] | None:
    """The first user turn that is an evaluation request, with its language's prompts (later
    turns are corrective and repeat nothing the stand-in needs)."""
    for message in messages:
        if message.role != "user":
            continue
        for prompts in (EN, ZH):
            heads = (prompts.extract_heading, prompts.match_heading, prompts.conclusion_heading)
            if message.content.lstrip().startswith(heads):
                return message.content, prompts
    return None


class TurtleSoupJudgePolicy:
    """Answers the extraction, similarity and conclusion requests deterministically."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        found = _request(messages)
        if found is None:
            return UNKNOWN_REQUEST
        text, prompts = found
        if text.lstrip().startswith(prompts.extract_heading):
            return self.extract(text, prompts)
        if text.lstrip().startswith(prompts.match_heading):
            return self.match(text, prompts)
        return self.conclude(text, prompts)

    def extract(self, text: str, prompts: EvaluationPrompts) -> str:
        """The two blocks: the sentences richest in causal cues as logic steps (as many as the
        counts of `point_counts`, in text order), the other sentences as details."""
        body = _between(text, prompts.text_open, prompts.text_close) or ""
        language = "zh" if prompts is ZH else "en"
        sentences = split_sentences(body, language)
        n_logic, n_details = point_counts(body, language)
        ranked = sorted(
            range(len(sentences)),
            key=lambda i: (-sum(cue in sentences[i].lower() for cue in CAUSAL_CUES), i),
        )
        chosen = sorted(ranked[:n_logic])
        rest = [s for i, s in enumerate(sentences) if i not in chosen] or sentences
        separator = "：" if language == "zh" else ": "
        lines = [prompts.logic_label]
        lines += [
            f"- {prompts.logic_item} {k}{separator}{sentences[i]}" for k, i in enumerate(chosen, 1)
        ]
        lines.append(prompts.details_label)
        lines += [
            f"- {prompts.details_item} {k}{separator}{s}" for k, s in enumerate(rest[:n_details], 1)
        ]
        return "\n".join(lines)

    def match(self, text: str, prompts: EvaluationPrompts) -> str:
        """The best Dice overlap and its number (null below the validity threshold)."""
        base = _between(text, prompts.base_open, prompts.base_close) or ""
        listed = _between(text, prompts.predicted_open, prompts.predicted_close) or ""
        best_index, best_score = None, 0.0
        for line in listed.splitlines():
            numbered = _NUMBERED.match(line)
            if numbered is None:
                continue
            score = round(similarity(base, numbered.group(2)), 2)
            if score > best_score:
                best_index, best_score = int(numbered.group(1)), score
        if best_score < VALIDITY_THRESHOLD:
            best_index = None
        return json.dumps({"best_match_index": best_index, "best_match_score": best_score})

    def conclude(self, text: str, prompts: EvaluationPrompts) -> str:
        """The share of the bottom's terms that the summary covers."""
        bottom = _between(text, prompts.bottom_open, prompts.bottom_close) or ""
        summary = _between(text, prompts.summary_open, prompts.summary_close) or ""
        return json.dumps({"conclusion_score": round(coverage(bottom, summary), 2)})
