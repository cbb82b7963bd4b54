"""Human-judge agreement on the Metric 2 criteria (App. C.2, Table 10).

Human scores come as JSONL, one rating per line::

    {"instance_id": "house_heist", "trial": 0, "attempt": 1, "step": 7,
     "originality": 3, "elaboration": 4, "groundedness": 4, "annotator": "a1"}

`trial` (default 0) and `annotator` are optional; `attempt` and `step` number the rated step as
the escape records do (`StepRecord.info["attempt"]`, 0-based, and `info["t"]`, the 1-based step
within that attempt). Several annotators on one item are averaged per criterion. Items are paired
with the judge's scores stored in `StepRecord.info["judge"]` of the run's records; human items
with no judged step, or whose step's judge score is missing, are reported, not fatal.

Table 10 has one row for all criteria pooled ("Overall": every (human, judge) pair of every
criterion treated as one sample) and one row per criterion, each with n, Pearson's r, Spearman's
rho and pairwise agreement:

- Pearson: the product-moment correlation of the paired scores.
- Spearman: Pearson's r of the ranks, tied values taking the average of the ranks they span.
- Pairwise agreement: over every unordered pair of items whose human scores differ, the share
  the judge orders the same way, a judge tie counting one half:
  `(C + T/2) / (C + D + T)`, with C the concordant pairs, D the discordant pairs and T the pairs
  the judge ties. Pairs the humans tie are left out. It is a concordance rate: 1 when the judge
  always agrees on which item is better, 0.5 at chance, and equals (1 + Somers' d) / 2.

Statistics of fewer than two pairs, of constant scores (a correlation is undefined) and pairwise
agreement without any human-differing pair are None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from forkingpaths.benchmarks.escape.judge import CRITERIA, SCORE_RANGE, scores_from_object
from forkingpaths.core.errors import InvalidFile, shown
from forkingpaths.core.jsonl import read_json_objects
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.runner.rundir import load_records

TABLE_COLUMNS = ("Criterion", "n", "Pearson", "Spearman", "Pairwise", "Within1")
"""Keys of an `agreement` row, in Table 10's column order."""

OVERALL = "Overall"
"""Criterion label of the pooled row."""

ItemKey = tuple[str, int, int, int]
"""(instance_id, trial, attempt, step) of one rated step."""


@dataclass(frozen=True)
class HumanScore:
    """The human rating of one step, averaged over its annotators."""

    instance_id: str
    """Escape scenario (instance id of the records)."""
    trial: int
    """Episode trial within the run."""
    attempt: int
    """Attempt within the episode, 0-based (`info["attempt"]`)."""
    step: int
    """Step within the attempt, 1-based (`info["t"]`)."""
    scores: dict[str, float]
    """Criterion -> mean over annotators."""
    annotators: tuple[str, ...] = ()
    """Annotators named on the item's lines (unnamed ones are not listed)."""
    n_ratings: int = 1
    """Lines averaged into `scores`."""
    line: int = 0
    """First line of the item in its file."""

    @property
    def key(self) -> ItemKey:
        return (self.instance_id, self.trial, self.attempt, self.step)


# ---- loading ----


def _field_error(path: Path, lineno: int, name: str, value: Any, allowed: str) -> InvalidFile:
    return InvalidFile(f"{path}:{lineno}: field {name!r}: got {shown(value)}; expected {allowed}")


def _whole(path: Path, lineno: int, row: Mapping[str, Any], name: str, minimum: int) -> int:
    value = row[name]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _field_error(path, lineno, name, value, f"a whole number >= {minimum}")
    return value


def load_human_scores(path: str | Path) -> list[HumanScore]:
    """Human ratings of a JSONL file, one `HumanScore` per rated step, in first-seen order.

    Blank lines are skipped; any other line that is not a rating is refused with `InvalidFile`
    naming `file:line`, the field, the value received and what is allowed. Extra fields
    (comments, timestamps) are ignored. One annotator rating one item twice is refused.
    """
    path = Path(path)
    ratings: dict[ItemKey, list[tuple[int, str | None, dict[str, int]]]] = {}
    for lineno, row in read_json_objects(path, "human scores"):
        for name in ("instance_id", "attempt", "step", *CRITERIA):
            if name not in row:
                raise InvalidFile(f"{path}:{lineno}: field {name!r} is missing")
        instance_id = row["instance_id"]
        if not isinstance(instance_id, str) or not instance_id.strip():
            raise _field_error(path, lineno, "instance_id", instance_id, "a non-empty string")
        trial = _whole(path, lineno, row, "trial", 0) if "trial" in row else 0
        attempt = _whole(path, lineno, row, "attempt", 0)
        step = _whole(path, lineno, row, "step", 1)
        annotator = row.get("annotator")
        if annotator is not None and (isinstance(annotator, bool) or not annotator):
            raise _field_error(path, lineno, "annotator", annotator, "a name or an id")
        scores: dict[str, int] = {}
        for criterion in CRITERIA:
            value = row[criterion]
            if isinstance(value, bool) or not isinstance(value, int) or value not in SCORE_RANGE:
                raise _field_error(path, lineno, criterion, value, "a whole number 1-5")
            scores[criterion] = value
        key = (instance_id, trial, attempt, step)
        who = None if annotator is None else str(annotator)
        earlier = ratings.setdefault(key, [])
        for first_line, other, _ in earlier:
            if who is not None and other == who:
                raise InvalidFile(
                    f"{path}:{lineno}: annotator {who!r} already rated this item on line "
                    f"{first_line} (instance_id {instance_id!r}, trial {trial}, attempt "
                    f"{attempt}, step {step})"
                )
        earlier.append((lineno, who, scores))
    if not ratings:
        raise InvalidFile(f"{path}: holds no ratings (one JSON object per line expected)")
    out = []
    for key, lines in ratings.items():
        means = {c: sum(s[c] for _, _, s in lines) / len(lines) for c in CRITERIA}
        named = tuple(dict.fromkeys(who for _, who, _ in lines if who is not None))
        out.append(
            HumanScore(*key, scores=means, annotators=named, n_ratings=len(lines), line=lines[0][0])
        )
    return out


# ---- pairing ----


class JudgePairs(dict[str, list[tuple[float, int]]]):
    """Criterion -> (human score, judge score) pairs, plus the human items left unpaired."""

    def __init__(self) -> None:
        super().__init__({c: [] for c in CRITERIA})
        self.unmatched: list[tuple[HumanScore, str]] = []
        """Human items without a judge score, each with the reason."""
        self.matched: int = 0
        """Human items paired."""


def judged_steps(records: Iterable[EpisodeRecord]) -> dict[ItemKey, Mapping[str, Any]]:
    """(instance_id, trial, attempt, t) -> `info["judge"]` of every judged step of the records
    (a later record of the same episode wins)."""
    index: dict[ItemKey, Mapping[str, Any]] = {}
    for record in records:
        for step in record.steps:
            info = step.info
            if "judge" in info and "attempt" in info and "t" in info:
                key = (record.instance_id, record.trial, int(info["attempt"]), int(info["t"]))
                index[key] = info["judge"]
    return index


def pair_with_judge(human: Sequence[HumanScore], records: Iterable[EpisodeRecord]) -> JudgePairs:
    """Pair every human item with the judge's scores of the same step.

    Matching is on (instance_id, trial, attempt, step) against judged steps of the records. An
    item whose step was not judged, or was judged without a score (`{"missing": reason}`), is
    put in `unmatched` with the reason.
    """
    index = judged_steps(records)
    pairs = JudgePairs()
    for item in human:
        entry = index.get(item.key)
        if entry is None:
            pairs.unmatched.append((item, "no judged step with this key in the records"))
            continue
        if "missing" in entry:
            pairs.unmatched.append((item, f"judge score missing: {entry['missing']}"))
            continue
        judge, reason = scores_from_object(entry)
        if judge is None:
            pairs.unmatched.append((item, f"judge entry unreadable: {reason}"))
            continue
        pairs.matched += 1
        for criterion in CRITERIA:
            pairs[criterion].append((item.scores[criterion], judge[criterion]))
    return pairs


# ---- statistics ----


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r, or None with fewer than two pairs or a constant side."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b):
        raise ValueError(f"pearson: {len(a)} x values but {len(b)} y values")
    if len(a) < 2:
        return None
    da, db = a - a.mean(), b - b.mean()
    denominator = float(np.sqrt((da * da).sum() * (db * db).sum()))
    if denominator == 0.0:
        return None
    return float((da * db).sum() / denominator)


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span.

    >>> average_ranks([3, 1, 3, 2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    data = np.asarray(values, dtype=float)
    _, inverse, counts = np.unique(data, return_inverse=True, return_counts=True)
    starts = np.cumsum(counts) - counts
    mean_rank = starts + (counts + 1) / 2.0
    return mean_rank[inverse.reshape(-1)]


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the average ranks."""
    if len(x) < 2:
        return pearson(x, y)
    return pearson(average_ranks(x), average_ranks(y))


def pairwise_agreement(human: Sequence[float], judge: Sequence[float]) -> float | None:
    """Over item pairs whose human scores differ, the share the judge orders alike (judge ties
    count one half); None without such a pair. See the module docstring."""
    h, j = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if len(h) != len(j):
        raise ValueError(f"pairwise_agreement: {len(h)} human but {len(j)} judge scores")
    credit, total = 0.0, 0
    for i in range(len(h) - 1):
        dh = np.sign(h[i] - h[i + 1 :])
        dj = np.sign(j[i] - j[i + 1 :])
        considered = dh != 0
        agreement = dh[considered] * dj[considered]
        credit += float((agreement > 0).sum()) + 0.5 * float((agreement == 0).sum())
        total += int(considered.sum())
    return credit / total if total else None


def within_one(human: Sequence[float], judge: Sequence[float]) -> float | None:
    """Share of items whose judge score is within one point of the human score (None when
    empty). Reported beside the pairwise concordance: "pairwise agreement" is not defined in
    the paper, and its Table 10 values (0.77-0.90 at Pearson 0.41-0.64) sit closer to this
    reading than to concordance, so both are shown."""
    if len(human) != len(judge):
        raise ValueError(f"within_one: {len(human)} human but {len(judge)} judge scores")
    if not len(human):
        return None
    return sum(abs(h - j) <= 1 for h, j in zip(human, judge, strict=True)) / len(human)


def _row(label: str, pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    human = [p[0] for p in pairs]
    judge = [p[1] for p in pairs]
    return {
        "Criterion": label,
        "n": len(pairs),
        "Pearson": pearson(human, judge),
        "Spearman": spearman(human, judge),
        "Pairwise": pairwise_agreement(human, judge),
        "Within1": within_one(human, judge),
    }


def agreement(pairs: Mapping[str, Sequence[tuple[float, float]]]) -> list[dict[str, Any]]:
    """Table 10's rows: Overall (every criterion's pairs pooled), then one row per criterion
    (the Metric 2 criteria in the paper's order, any other in name order). Keys: TABLE_COLUMNS."""
    order = [c for c in CRITERIA if c in pairs] + sorted(c for c in pairs if c not in CRITERIA)
    pooled = [p for c in order for p in pairs[c]]
    rows = [_row(OVERALL, pooled)]
    rows += [_row(c.capitalize(), pairs[c]) for c in order]
    return rows


def render_agreement_table(rows: Sequence[Mapping[str, Any]], digits: int = 4) -> str:
    """Rows as a Markdown table in Table 10's shape (`-` for an undefined statistic)."""

    def cell(value: Any) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            return f"{value:.{digits}f}"
        return str(value)

    lines = [
        "| " + " | ".join(TABLE_COLUMNS) + " |",
        "|" + "|".join("---" for _ in TABLE_COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(cell(row[c]) for c in TABLE_COLUMNS) + " |" for row in rows]
    return "\n".join(lines)


def agreement_rows(
    human_path: str | Path, run_dir: str | Path
) -> tuple[list[dict[str, Any]], list[tuple[HumanScore, str]]]:
    """Table 10 for a human-scores file against a run directory's judged records:
    (rows, unmatched human items with the reason each was left out)."""
    human = load_human_scores(human_path)
    # The judge's scores are in the steps' info: the calls' transcripts are not needed.
    pairs = pair_with_judge(human, load_records(run_dir, transcripts=False))
    return agreement(pairs), pairs.unmatched
