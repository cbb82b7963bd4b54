"""The Automated Evaluation Protocol (§4.4, App. D.3, E.3): an LLM judge scores a final summary.

The soup bottom is decomposed into Core Logic Points and Key Details (the puzzle's gold points
when it has them, else extracted by the judge, with the counts of `point_counts`). The summary
gives the predicted points: a JSON summary `{"logic", "details", "conclusion"}` directly, free
text through the same extraction prompt (with `point_counts` of the summary). Each gold point is
then matched by one judge call against the numbered list of predicted points of its kind (logic
against logic, details against details); the raw similarity goes through the Two-Threshold
Calibration (`calibrate`). One more call scores the whole summary against the bottom
(Conclusion Match, not calibrated: §4.4 calibrates the logic and detail scores only).
Overall = 0.3 L + 0.3 D + 0.4 C (Eq. 6).

A judge reply that cannot be read is retried with a corrective turn (`retries` times) and then
recorded as unscored with the reason: never a silent zero, and metrics average over scored
points only. Replies are read after removing inline reasoning (`<think>...</think>`,
`forkingpaths.models.text.strip_reasoning`), from the last JSON object holding the expected
keys (a reasoning judge may show drafts before its answer); JSON nested too deeply to parse
reads as no object (unreadable, retried), never as an error of the episode. When the gold
points cannot be extracted, the points that were to be extracted (`point_counts` of the
bottom) count as unscored (`Evaluation.unextracted_points`). An empty summary scores 0 on
every point and on the conclusion without any matching or conclusion call (there is nothing to
compare; the gold points are still extracted if the puzzle lacks them, so the record shows what
was missed); likewise a gold point whose kind has no predicted point scores 0 without a call.
Every judge call runs at temperature 0 with seed 42 (App. D.1, D.3) and is kept as a
`ModelCallRecord` with purpose "extract", "match" or "conclusion". The `Evaluation` is stored
in the episode record (`to_dict`), and `metrics_from_evaluation` recomputes the metrics from it
without a model.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from forkingpaths.benchmarks.turtlesoup.evaluation_prompts import (
    EvaluationPrompts,
    prompts_for,
)
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED, sampling
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile, shown
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import skip_nested, strip_reasoning

LOGIC_WEIGHT, DETAIL_WEIGHT, CONCLUSION_WEIGHT = 0.3, 0.3, 0.4
"""Weights of Logic Accuracy, Detail Fidelity and Conclusion Match in the Overall Score (Eq. 6)."""

VALIDITY_THRESHOLD, HIGH_CONFIDENCE_THRESHOLD = 0.5, 0.8
"""Two-Threshold Calibration (§4.4, App. D.3): below the first a match is void, from the second
on it counts in full."""

JUDGE_PARAMS = sampling(MODEL_SEED, temperature=0.0)
"""Judge sampling (App. D.1, D.3): greedy, seed 42; fixed so a run's --temperature never reaches
the judge."""

LOGIC_RANGE, DETAIL_RANGE = (2, 5), (3, 8)
"""Allowed numbers of Core Logic Points and Key Details (App. D.3)."""

SHORT_TEXT, LONG_TEXT = 180, 500
"""Length (in Chinese characters or their English equivalent) below which a bottom gets the
fewest points and above which it gets the most (App. D.3)."""

EN_CHARS_PER_WORD = 1.75
"""Chinese characters one English word stands for when measuring length. The paper's thresholds
count characters of its Chinese originals; over our 60 bilingual bottoms the Chinese text has
1.76 non-space characters per English word; with this factor both languages of an entry get the
same number of logic points in 59 of the 60 entries, and the same (N, M) in 55."""

SCHEMA_VERSION = 1
"""Version of the stored `Evaluation`."""

T = TypeVar("T")

# ---- calibration and weights ----


def calibrate(score: float) -> float:
    """Two-Threshold Calibration of a raw similarity in [0, 1] (§4.4, App. D.3).

    Our reading of the paper: a score below the Validity Threshold (0.5) is not a match and
    becomes 0; a score at or above the High-Confidence Threshold (0.8) is a strong paraphrase
    and becomes 1.0; a score in between is a valid but partial match and is kept as it is.

    >>> [calibrate(s) for s in (0.49, 0.5, 0.79, 0.8)]
    [0.0, 0.5, 0.79, 1.0]
    """
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise ConfigError(f"similarity score: expected a number in [0, 1], got {shown(score)}")
    if score < VALIDITY_THRESHOLD:
        return 0.0
    if score >= HIGH_CONFIDENCE_THRESHOLD:
        return 1.0
    return float(score)


def overall_score(
    logic: float | None, detail: float | None, conclusion: float | None
) -> float | None:
    """Overall = 0.3 L + 0.3 D + 0.4 C (Eq. 6), in the unit of its inputs; None when any is None.

    >>> overall_score(50, 100, 25)
    55.0
    """
    if logic is None or detail is None or conclusion is None:
        return None
    return LOGIC_WEIGHT * logic + DETAIL_WEIGHT * detail + CONCLUSION_WEIGHT * conclusion


# ---- how many points (App. D.3) ----

# Split after a terminator and any closing quotes or brackets (lookbehinds need a fixed width,
# hence one alternative per width). English needs white space after it; Chinese does not.
_EN_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]])\s+")
_ZH_SENTENCE_END = re.compile(
    r"(?<=[。！？!?])(?![”’」』）)。！？!?])\s*|(?<=[。！？!?][”’」』）)])(?![”’」』）)])\s*"
)


def _check_language(language: str) -> None:
    if language not in ("en", "zh"):
        raise ConfigError(f"language: expected 'en' or 'zh', got {language!r}")


def split_sentences(text: str, language: str) -> list[str]:
    """Sentences of `text`: English ends a sentence at . ! ? followed by white space (closing
    quotes and brackets stay with it); Chinese at 。！？ (and ! ?), white space or not. Empty
    pieces are dropped.

    >>> split_sentences("He ran. She hid! Why?", "en")
    ['He ran.', 'She hid!', 'Why?']
    >>> split_sentences("他跑了。她躲起来！为什么？", "zh")
    ['他跑了。', '她躲起来！', '为什么？']
    """
    _check_language(language)
    pattern = _EN_SENTENCE_END if language == "en" else _ZH_SENTENCE_END
    return [piece.strip() for piece in pattern.split(text.strip()) if piece.strip()]


def text_length(text: str, language: str) -> int:
    """Length of `text` on the scale of App. D.3's thresholds.

    Chinese: the number of non-white-space characters (punctuation included). English: the
    number of white-space separated words times `EN_CHARS_PER_WORD` (1.75), rounded half up, so
    that a translation measures about as long as its Chinese original.
    """
    _check_language(language)
    if language == "zh":
        return sum(not ch.isspace() for ch in text)
    return _round_half_up(len(text.split()) * EN_CHARS_PER_WORD)


def _round_half_up(value: float) -> int:
    # Python's round() rounds halves to even (2.5 -> 2); the counts want 3.5 -> 4 and 2.5 -> 3.
    return math.floor(value + 0.5)


def _clip(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def point_counts(bottom: str, language: str) -> tuple[int, int]:
    """(N, M): how many Core Logic Points and Key Details to extract from `bottom` (App. D.3).

    With L = `text_length(bottom, language)` and f = (L - 180) / (500 - 180) clipped to [0, 1]:
      - N = 2 + 3 f, rounded half up: L <= 180 gives 2, L >= 500 gives 5, linear in between
        (L = 340 gives 3.5 -> 4).
      - M is the mean of a length estimate 3 + 5 f and a sentence estimate (the number of
        sentences, `split_sentences`, clipped to 3-8), rounded half up and clipped to 3-8.

    >>> point_counts("Short.", "en")
    (2, 3)
    """
    _check_language(language)
    length = text_length(bottom, language)
    fraction = min(1.0, max(0.0, (length - SHORT_TEXT) / (LONG_TEXT - SHORT_TEXT)))
    n_logic = _clip(_round_half_up(LOGIC_RANGE[0] + 3 * fraction), LOGIC_RANGE)
    by_length = DETAIL_RANGE[0] + 5 * fraction
    by_sentences = _clip(len(split_sentences(bottom, language)), DETAIL_RANGE)
    n_details = _clip(_round_half_up((by_length + by_sentences) / 2), DETAIL_RANGE)
    return n_logic, n_details


# ---- the stored evaluation ----


class PointScore(BaseModel):
    """How one gold point fared against the predicted points of its kind."""

    point: str
    """The gold point."""
    score: float | None = None
    """Raw similarity of the best match, 0-1, as the judge gave it; None when unscored."""
    best_match: int | None = None
    """0-based index of the best match in the predicted list of this kind (None: no valid match
    named, or unscored)."""
    calibrated: float | None = None
    """`calibrate(score)`; None when unscored."""
    reason: str | None = None
    """Why the point is unscored, or why it scored 0 without a call (empty summary, no
    predicted points of this kind); None for an ordinary judged point."""

    @property
    def scored(self) -> bool:
        return self.score is not None


class Evaluation(BaseModel):
    """Everything the judge decided about one summary; metrics recompute from it alone."""

    schema_version: int = SCHEMA_VERSION
    """Version of this record."""
    puzzle_id: str
    """The puzzle evaluated (`crime_thriller-01-en`)."""
    language: str
    """Language of the puzzle and of the judge prompts."""
    gold_logic: list[str] = Field(default_factory=list)
    """Core Logic Points used (the puzzle's, or extracted)."""
    gold_details: list[str] = Field(default_factory=list)
    """Key Details used (the puzzle's, or extracted)."""
    extracted: bool = False
    """True when the judge extracted gold points because the puzzle lacked them."""
    summary: str = ""
    """The summary as judged: the free text, or the JSON summary rendered as text."""
    summary_format: Literal["json", "text", "empty"] = "empty"
    """How the summary came: a JSON object, free text, or nothing."""
    predicted_logic: list[str] = Field(default_factory=list)
    """Logic points of the summary (from its JSON, or extracted from free text)."""
    predicted_details: list[str] = Field(default_factory=list)
    """Details of the summary (likewise)."""
    logic: list[PointScore] = Field(default_factory=list)
    """One entry per gold logic point."""
    details: list[PointScore] = Field(default_factory=list)
    """One entry per gold detail."""
    conclusion: float | None = None
    """Conclusion Match, 0-1 (not calibrated); None when unscored."""
    conclusion_reason: str | None = None
    """Why the conclusion is unscored or 0 without a call; None when judged."""
    unextracted_points: int = 0
    """Gold points that could not be scored because the judge could not extract them from the
    bottom: for each kind the puzzle does not provide, the number `point_counts` asked for."""
    errors: list[str] = Field(default_factory=list)
    """Judge failures that left something unscored or unextracted, for the reader."""
    calls: list[ModelCallRecord] = Field(default_factory=list)
    """Every judge call, retries included (purposes "extract", "match", "conclusion")."""

    @property
    def unscored_points(self) -> int:
        """Gold points the judge left unscored, those it could not even extract included (the
        conclusion is not counted)."""
        return sum(not p.scored for p in [*self.logic, *self.details]) + self.unextracted_points

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as stored in `EpisodeRecord.outcome`."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evaluation:
        """Read `to_dict`'s form back; a malformed one raises `InvalidFile` naming the field."""
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(root)"
            raise InvalidFile(
                f"evaluation: {where}: {first['msg']} (got {shown(first.get('input'))})"
            ) from exc


# ---- metrics ----


def _mean_calibrated(points: Sequence[PointScore]) -> float | None:
    values = [p.calibrated for p in points if p.calibrated is not None]
    return 100.0 * sum(values) / len(values) if values else None


def metrics_from_evaluation(ev: Evaluation | Mapping[str, Any]) -> dict[str, Any]:
    """The protocol's metrics, in percent, from a stored evaluation (no model needed).

    logic_accuracy and detail_fidelity: mean calibrated similarity over the scored gold points of
    the kind (None when none is scored); conclusion_match: 100 x the conclusion score (None when
    unscored); overall: 0.3 L + 0.3 D + 0.4 C (None when any part is None); unscored_points: gold
    points left unscored, unextracted ones included.
    """
    if not isinstance(ev, Evaluation):
        ev = Evaluation.from_dict(ev)
    logic = _mean_calibrated(ev.logic)
    detail = _mean_calibrated(ev.details)
    conclusion = None if ev.conclusion is None else 100.0 * ev.conclusion
    return {
        "logic_accuracy": logic,
        "detail_fidelity": detail,
        "conclusion_match": conclusion,
        "overall": overall_score(logic, detail, conclusion),
        "unscored_points": ev.unscored_points,
    }


# ---- reading judge replies ----

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in `text` in the order they appear: each outermost `{...}` that parses,
    fenced in ``` or not, and the content of a ``` fence read whole when the scan did not
    already find it. A value nested too deeply to parse (RecursionError) is skipped like any
    other unreadable text."""
    found: list[tuple[int, dict[str, Any]]] = []
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        except RecursionError:
            index = text.find("{", skip_nested(text, index))
            continue
        if isinstance(value, dict):
            found.append((index, value))
        index = text.find("{", end)
    starts = {start for start, _ in found}
    for match in _FENCE.finditer(text):
        block = match.group(1)
        start = match.start(1) + len(block) - len(block.lstrip())
        if start in starts:
            continue
        try:
            value = json.loads(block.strip())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append((start, value))
    return [value for _, value in sorted(found, key=lambda item: item[0])]


def _unit_number(value: Any) -> float | None:
    """`value` as a float when it is a JSON number in [0, 1] (bools and strings are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or not 0 <= value <= 1:
        return None
    return float(value)


def read_match(text: str, n_predicted: int) -> tuple[tuple[float, int | None] | None, str]:
    """((score, 0-based index or None), "") from a similarity reply, or (None, why not).

    The reply (inline reasoning removed) must hold a JSON object (bare, amid prose, or fenced)
    with `best_match_score` a number in [0, 1] and `best_match_index` null or a whole number from
    1 to `n_predicted` (the numbering shown to the judge); the last object holding both keys is
    read (else the last holding the score). A string, a boolean, 1.2 or an index of 0 are
    refused, and so are the two forms the paper's schemas exclude (App. E.3: Schema A names the
    index when the score is 0.5 or more, Schema B gives null below 0.5): a null index with a
    score of 0.5 or more, and an index with a score below 0.5. They contradict themselves, so
    neither the score nor the index can be trusted: unreadable, retried, then unscored.

    >>> read_match('```json\\n{"best_match_index": 2, "best_match_score": 0.9}\\n```', 3)
    ((0.9, 1), '')
    >>> read_match('{"best_match_index": null, "best_match_score": 0.2}', 3)
    ((0.2, None), '')
    """
    candidates = [o for o in json_objects(strip_reasoning(text)) if "best_match_score" in o]
    if not candidates:
        return None, "no JSON object with best_match_score"
    complete = [o for o in candidates if "best_match_index" in o]
    obj = (complete or candidates)[-1]
    score = _unit_number(obj["best_match_score"])
    if score is None:
        got = shown(obj["best_match_score"])
        return None, f"best_match_score must be a number from 0 to 1, got {got}"
    if "best_match_index" not in obj:
        return None, "best_match_index is missing (use null when nothing matches)"
    index = obj["best_match_index"]
    if index is None:
        if score >= VALIDITY_THRESHOLD:
            return None, (
                f"best_match_index is null but best_match_score is {score:g}: a score of "
                f"{VALIDITY_THRESHOLD:g} or more names the number of its statement"
            )
        return (score, None), ""
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= n_predicted:
        return None, (
            f"best_match_index must be null or a whole number from 1 to {n_predicted}, "
            f"got {shown(index)}"
        )
    if score < VALIDITY_THRESHOLD:
        return None, (
            f"best_match_index is {index} but best_match_score is {score:g}: below "
            f"{VALIDITY_THRESHOLD:g} the index must be null"
        )
    return (score, index - 1), ""


def read_conclusion(text: str) -> tuple[float | None, str]:
    """(score, "") from a conclusion reply holding `{"conclusion_score": x}` (x a number in
    [0, 1]; the key `score` is accepted too), or (None, why not). Inline reasoning is removed
    first; the last object holding one of the keys is read."""
    for obj in reversed(json_objects(strip_reasoning(text))):
        key = (
            "conclusion_score" if "conclusion_score" in obj else "score" if "score" in obj else None
        )
        if key is None:
            continue
        score = _unit_number(obj[key])
        if score is None:
            return None, f"{key} must be a number from 0 to 1, got {shown(obj[key])}"
        return score, ""
    return None, "no JSON object with conclusion_score"


_LOGIC_LABELS = ("logical relationships", "逻辑关系")
_DETAIL_LABELS = ("detailed information", "细节信息", "详细信息")
_ITEM_PREFIX = re.compile(
    r"^\s*(?:[-*•·]|\d+[.)、])?\s*"
    r"(?:(?:\*\*)?(?:logic(?:al step)?|detail|逻辑|细节)\s*\d*\s*(?:\*\*)?\s*[:：]\s*)?",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"^[.…。\s]*$")


def _label_of(line: str) -> str | None:
    """ "logic" or "details" when `line` is a block header (brackets, markdown and a trailing
    colon tolerated), else None."""
    bare = re.sub(r"[\[\]【】*#:：\s]+", " ", line).strip().lower()
    if bare in _LOGIC_LABELS:
        return "logic"
    if bare in _DETAIL_LABELS:
        return "details"
    return None


def read_extraction(text: str) -> tuple[tuple[list[str], list[str]] | None, str]:
    """((logic points, details), "") from an extraction reply, or (None, why not).

    The reply (inline reasoning removed) must carry both block headers ([Logical
    Relationships] / [Detailed Information], or [逻辑关系] / [细节信息], in either language) each
    followed by at least one item; item prefixes such as "- Logic 2:", "1.", "- 细节3：" are
    removed and "..." lines dropped. A header met again starts its block afresh, so the last
    version of each block is read (a reasoning judge may draft the blocks before answering).
    """
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in strip_reasoning(text).splitlines():
        label = _label_of(line)
        if label is not None:
            current = label
            blocks[label] = []
            continue
        if current is None or not line.strip():
            continue
        item = _ITEM_PREFIX.sub("", line, count=1).strip()
        if item and not _PLACEHOLDER.match(item):
            blocks[current].append(item)
    for label, header in (
        ("logic", "[Logical Relationships]"),
        ("details", "[Detailed Information]"),
    ):
        if label not in blocks:
            return None, f"no {header} block"
        if not blocks[label]:
            return None, f"the {header} block lists no items"
    return (blocks["logic"], blocks["details"]), ""


# ---- the summary ----

_SUMMARY_KEYS = ("logic", "details", "conclusion")


def _string_list(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise ConfigError(f"summary.{field}: expected a list of strings, got {shown(value)}")


def structured_summary(summary: str | Mapping[str, Any]) -> tuple[list[str], list[str], str] | None:
    """(logic, details, conclusion) of a JSON summary, or None for free text.

    A mapping, or a string holding a JSON object (also fenced), counts as a JSON summary when it
    has at least one of the keys logic, details, conclusion (case-insensitive). A mapping with
    fields of the wrong type raises `ConfigError`; such a string is treated as free text. A
    string's inline reasoning (`<think>...</think>`) is removed first.
    """
    if isinstance(summary, Mapping):
        return _summary_fields(summary)
    for obj in json_objects(strip_reasoning(summary)):
        try:
            fields = _summary_fields(obj)
        except ConfigError:
            continue
        if fields is not None:
            return fields
    return None


def _summary_fields(obj: Mapping[str, Any]) -> tuple[list[str], list[str], str] | None:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    if not any(k in lowered for k in _SUMMARY_KEYS):
        return None
    conclusion = lowered.get("conclusion") or ""
    if not isinstance(conclusion, str):
        raise ConfigError(f"summary.conclusion: expected a string, got {shown(conclusion)}")
    return (
        _string_list(lowered.get("logic"), "logic"),
        _string_list(lowered.get("details"), "details"),
        conclusion.strip(),
    )


def render_summary(
    logic: Sequence[str], details: Sequence[str], conclusion: str, prompts: EvaluationPrompts
) -> str:
    """A JSON summary as the text the conclusion judge reads: conclusion, then logic, details."""
    parts: list[str] = []
    if conclusion:
        parts.append(f"{prompts.summary_conclusion} {conclusion}")
    if logic:
        parts.append("\n".join([prompts.summary_logic, *(f"- {p}" for p in logic)]))
    if details:
        parts.append("\n".join([prompts.summary_details, *(f"- {d}" for d in details)]))
    return "\n\n".join(parts)


# ---- judge requests ----


def _request(prompts: EvaluationPrompts, user: str) -> list[Message]:
    return [Message(role="system", content=prompts.system), Message(role="user", content=user)]


def extraction_messages(text: str, language: str) -> list[Message]:
    """The extraction request for `text` (a bottom or a free-text summary), with the point
    counts `point_counts(text, language)`."""
    prompts = prompts_for(language)
    n_logic, n_details = point_counts(text, language)
    user = prompts.extract.substitute(n_logic=n_logic, n_details=n_details, text=text.strip())
    return _request(prompts, user)


def match_messages(point: str, predicted: Sequence[str], language: str) -> list[Message]:
    """The similarity request of one gold point against the predicted list (numbered from 1)."""
    prompts = prompts_for(language)
    numbered = "\n".join(f"{i}. {p}" for i, p in enumerate(predicted, start=1))
    return _request(prompts, prompts.match.substitute(base=point.strip(), predicted=numbered))


def conclusion_messages(bottom: str, summary: str, language: str) -> list[Message]:
    """The holistic conclusion request: the summary text against the bottom."""
    prompts = prompts_for(language)
    user = prompts.conclusion.substitute(bottom=bottom.strip(), summary=summary.strip())
    return _request(prompts, user)


async def consult(
    judge: ChatModel,
    messages: list[Message],
    read: Callable[[str], tuple[T | None, str]],
    corrective: Callable[[str], str],
    purpose: str,
    retries: int,
    params: ModelParams = JUDGE_PARAMS,
) -> tuple[T | None, str | None, list[ModelCallRecord]]:
    """Ask `judge` until `read` accepts a reply, at most 1 + `retries` calls.

    After a refused reply the conversation goes on with that reply and the user turn
    `corrective(reason)`. Returns (value, None, calls) or (None, last reason, calls).
    """
    conversation = list(messages)
    calls: list[ModelCallRecord] = []
    reason = "no reply"
    for _ in range(retries + 1):
        completion = await judge.complete(conversation, params)
        calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
        value, reason = read(completion.text)
        if value is not None:
            return value, None, calls
        conversation += [
            Message(role="assistant", content=completion.text),
            Message(role="user", content=corrective(reason)),
        ]
    return None, f"{reason} (after {len(calls)} attempts)", calls


async def extract_points(
    judge: ChatModel,
    text: str,
    language: str,
    *,
    retries: int = 2,
    params: ModelParams = JUDGE_PARAMS,
) -> tuple[tuple[list[str], list[str]] | None, str | None, list[ModelCallRecord]]:
    """Logic points and details of `text` by the judge: (points or None, failure, calls)."""
    prompts = prompts_for(language)
    return await consult(
        judge,
        extraction_messages(text, language),
        read_extraction,
        lambda why: prompts.corrective_extract.substitute(reason=why),
        "extract",
        retries,
        params,
    )


async def match_point(
    judge: ChatModel,
    point: str,
    predicted: Sequence[str],
    language: str,
    *,
    retries: int = 2,
    params: ModelParams = JUDGE_PARAMS,
) -> tuple[PointScore, list[ModelCallRecord]]:
    """Score one gold point against the predicted points of its kind (one call plus retries).

    With no predicted points there is nothing to match: score 0 without a call.
    """
    if not predicted:
        return _zero(point, "no predicted points of this kind"), []
    prompts = prompts_for(language)
    value, failure, calls = await consult(
        judge,
        match_messages(point, predicted, language),
        lambda text: read_match(text, len(predicted)),
        lambda why: prompts.corrective_match.substitute(reason=why),
        "match",
        retries,
        params,
    )
    if value is None:
        return PointScore(point=point, reason=f"unscored: {failure}"), calls
    score, index = value
    return PointScore(
        point=point, score=score, best_match=index, calibrated=calibrate(score)
    ), calls


async def match_conclusion(
    judge: ChatModel,
    bottom: str,
    summary: str,
    language: str,
    *,
    retries: int = 2,
    params: ModelParams = JUDGE_PARAMS,
) -> tuple[float | None, str | None, list[ModelCallRecord]]:
    """Conclusion Match of the summary text against the bottom: (score or None, failure, calls)."""
    prompts = prompts_for(language)
    return await consult(
        judge,
        conclusion_messages(bottom, summary, language),
        read_conclusion,
        lambda why: prompts.corrective_conclusion.substitute(reason=why),
        "conclusion",
        retries,
        params,
    )


def _zero(point: str, reason: str) -> PointScore:
    return PointScore(point=point, score=0.0, best_match=None, calibrated=0.0, reason=reason)


# ---- the protocol ----


async def evaluate(
    judge: ChatModel,
    puzzle: Puzzle,
    summary: str | Mapping[str, Any],
    *,
    retries: int = 2,
    seed: int | None = MODEL_SEED,
) -> Evaluation:
    """Run the Automated Evaluation Protocol on one final summary (see the module docstring).

    `summary` is the questioner's final action: a JSON summary (mapping or string) or free text.
    Judge replies that stay unreadable after `retries` corrective turns leave the point (or the
    conclusion) unscored; model outages raise `ModelError` as from any model call. Every call
    runs at temperature 0 with `seed` (App. D.3: 42; None sends none).
    """
    params = sampling(seed, temperature=0.0)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries: expected an integer >= 0, got {retries!r}")
    language = puzzle.language
    prompts = prompts_for(language)
    ev = Evaluation(puzzle_id=puzzle.id, language=language)
    gold_logic, gold_details = list(puzzle.logic_points), list(puzzle.key_details)

    fields = structured_summary(summary)
    if fields is not None:
        predicted_logic, predicted_details, conclusion = fields
        ev.summary = render_summary(predicted_logic, predicted_details, conclusion, prompts)
        ev.summary_format = "json" if ev.summary else "empty"
    elif isinstance(summary, Mapping):
        raise ConfigError(
            f"summary: expected an object with logic, details or conclusion, got {shown(summary)}"
        )
    else:
        text = strip_reasoning(summary).strip()
        predicted_logic, predicted_details = [], []
        ev.summary = text
        ev.summary_format = "text" if text else "empty"

    # The two extractions are independent, so they run together; their calls are appended
    # afterwards in a fixed order (gold first) so that records compare across runs.
    gold_task = (
        extract_points(judge, puzzle.bottom, language, retries=retries, params=params)
        if not (gold_logic and gold_details)
        else _nothing()
    )
    predicted_task = (
        extract_points(judge, ev.summary, language, retries=retries, params=params)
        if ev.summary_format == "text"
        else _nothing()
    )
    (
        (gold_points, gold_failure, gold_calls),
        (points, failure, predicted_calls),
    ) = await asyncio.gather(gold_task, predicted_task)
    ev.calls += gold_calls + predicted_calls
    if gold_points is not None:
        ev.extracted = True
        gold_logic = gold_logic or gold_points[0]
        gold_details = gold_details or gold_points[1]
    elif gold_failure is not None:
        ev.errors.append(f"gold points could not be extracted: {gold_failure}")
        # Never a silent gap: the points the extraction was to give count as unscored.
        n_logic, n_details = point_counts(puzzle.bottom, language)
        ev.unextracted_points = (0 if gold_logic else n_logic) + (0 if gold_details else n_details)
    predicted_failure = None
    if points is not None:
        predicted_logic, predicted_details = points
    elif failure is not None:
        predicted_failure = f"predicted points could not be extracted: {failure}"
    ev.gold_logic, ev.gold_details = gold_logic, gold_details
    ev.predicted_logic, ev.predicted_details = predicted_logic, predicted_details

    if ev.summary_format == "empty":
        ev.logic = [_zero(p, "empty summary") for p in gold_logic]
        ev.details = [_zero(p, "empty summary") for p in gold_details]
        ev.conclusion, ev.conclusion_reason = 0.0, "empty summary"
        return ev

    if predicted_failure is not None:
        ev.errors.append(predicted_failure)
        unscored = f"unscored: {predicted_failure}"
        ev.logic = [PointScore(point=p, reason=unscored) for p in gold_logic]
        ev.details = [PointScore(point=p, reason=unscored) for p in gold_details]
        point_tasks = []
    else:
        point_tasks = [
            *(
                match_point(judge, p, predicted_logic, language, retries=retries, params=params)
                for p in gold_logic
            ),
            *(
                match_point(judge, p, predicted_details, language, retries=retries, params=params)
                for p in gold_details
            ),
        ]
    conclusion_task = match_conclusion(
        judge, puzzle.bottom, ev.summary, language, retries=retries, params=params
    )
    *matches, (conclusion_score, conclusion_failure, conclusion_calls) = await asyncio.gather(
        *point_tasks, conclusion_task
    )
    if predicted_failure is None:
        ev.logic = [score for score, _ in matches[: len(gold_logic)]]
        ev.details = [score for score, _ in matches[len(gold_logic) :]]
        for kind, scores in (("logic", ev.logic), ("detail", ev.details)):
            ev.errors += [
                f"{kind} point {i} {s.reason}" for i, s in enumerate(scores, 1) if not s.scored
            ]
    for _, calls in matches:
        ev.calls += calls
    ev.calls += conclusion_calls
    ev.conclusion = conclusion_score
    if conclusion_failure is not None:
        ev.conclusion_reason = f"unscored: {conclusion_failure}"
        ev.errors.append(f"conclusion {ev.conclusion_reason}")
    return ev


async def _nothing() -> tuple[None, None, list[ModelCallRecord]]:
    """Stands in for an extraction that is not needed."""
    return None, None, []
