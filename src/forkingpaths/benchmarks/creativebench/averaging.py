"""Table 3's cells from episode records, under the paper's averaging or the release's.

- `paper` (default, Eq. 4 of the paper): Explore novelty is defined for constrained levels only,
  so level-0 rows (the baseline) count for Pass@1 but not for Novelty or Creativity.
- `release` (the release's `evaluation/exploration/eval_explore.py`): every row counts, a
  level-0 row with novelty 0 (line 119) and so creativity 0 (line 123), and Novelty and
  Creativity are sums over all rows divided by the row count (lines 98-128, 147-148).

Pass@1 is the same under both: every row, level 0 included (release line 168). Both pool the
rows (no per-problem mean first); ours per trial, then the mean and sample std over trials.
Combo has one row per problem and no level 0: both averagings give it the same cells.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Literal, get_args

from forkingpaths.benchmarks.creativebench import metrics
from forkingpaths.core.records import EpisodeRecord

Averaging = Literal["paper", "release"]
AVERAGINGS: tuple[str, ...] = get_args(Averaging)

RELEASE_SCRIPT = "evaluation/exploration/eval_explore.py"
"""The release file whose averaging `release` follows."""

DESCRIPTIONS = {
    "paper": "over constrained levels only (Eq. 4; level 0 is the baseline)",
    "release": f"over every row, level 0 counted with novelty 0 ({RELEASE_SCRIPT}:119,147-148)",
}
"""How each averaging takes Explore Novelty and Creativity, in words (notes, docs)."""

TRIAL_METRICS = ("pass_at_1", "novelty", "creativity", "novelty_passed")
"""Per-trial cells averaged over trials (with a sample std when there are several)."""


def rows(record: EpisodeRecord, averaging: Averaging = "paper") -> list[dict[str, Any]]:
    """Per-row quality/novelty: Combo one row; Explore one per level. A level-0 row has no
    novelty (None) under `paper`, novelty 0.0 under `release`."""
    out = []
    for step in record.steps:
        info = step.info
        if "verdict" not in info:
            continue
        value = info.get("novelty")
        if value is None and averaging == "release" and info.get("level") == 0:
            value = 0.0  # eval_explore.py:119: `novelty = 0.0 if level == 0`
        out.append(
            {
                "quality": float(info.get("quality", 0.0)),
                "novelty": value,
                "verdict": info.get("verdict"),
                "no_code": bool(info.get("no_code", False)),
                "reference_baseline": str(info.get("baseline", "")).startswith("reference"),
            }
        )
    return out


def count(values: Iterable[object]) -> dict[str, int]:
    """How often each value occurs, keyed by its text."""
    out: dict[str, int] = defaultdict(int)
    for value in values:
        out[str(value)] += 1
    return out


def cells(all_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass@1, Novelty, Creativity (Eq. 2) and Novelty of the passed rows over some rows, with
    `metrics.quality`'s values and `metrics.creativity`; None where no row counts; and the
    `no_code` and `reference_baselines` counts. Novelty and Creativity take the rows that have a
    novelty (which rows those are is the averaging's choice, made in `rows`)."""
    scored = [r for r in all_rows if r["novelty"] is not None]
    passed = [r for r in scored if r["quality"] == 1.0]
    return {
        "pass_at_1": metrics.mean_std([r["quality"] for r in all_rows])[0] if all_rows else None,
        "novelty": metrics.mean_std([r["novelty"] for r in scored])[0] if scored else None,
        "creativity": metrics.creativity(
            [r["quality"] for r in scored], [r["novelty"] for r in scored]
        )
        if scored
        else None,
        "novelty_passed": metrics.mean_std([r["novelty"] for r in passed])[0] if passed else None,
        "no_code": sum(r["no_code"] for r in all_rows),
        "reference_baselines": sum(r["reference_baseline"] for r in all_rows),
    }


def trial_cells(
    records: list[EpisodeRecord], averaging: Averaging = "paper"
) -> dict[int, dict[str, Any]]:
    """`cells` of one subset's records per trial (the per-seed scores App. E.1 pairs)."""
    return trial_cells_of([(record.trial, rows(record, averaging)) for record in records])


def trial_cells_of(
    episodes: Iterable[tuple[int, list[dict[str, Any]]]],
) -> dict[int, dict[str, Any]]:
    """`trial_cells` over episodes given as (trial, their `rows`)."""
    by_trial: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for trial, episode_rows in episodes:
        by_trial[trial] += episode_rows
    return {trial: cells(trial_rows) for trial, trial_rows in sorted(by_trial.items())}


def subset_summary(records: list[EpisodeRecord], averaging: Averaging = "paper") -> dict[str, Any]:
    """Table 3 cells for one subset: row means per trial; the mean over trials, and with
    several trials their sample standard deviation (`metrics.mean_std`)."""
    return subset_summary_of([(record.trial, rows(record, averaging)) for record in records])


def subset_summary_of(episodes: list[tuple[int, list[dict[str, Any]]]]) -> dict[str, Any]:
    """`subset_summary` over episodes given as (trial, their `rows`)."""
    per_trial = list(trial_cells_of(episodes).values())
    out: dict[str, Any] = {}
    for key in TRIAL_METRICS:
        values = [c[key] for c in per_trial if c[key] is not None]
        mean, std = metrics.mean_std(values)
        out[key] = mean if values else None
        if len(values) > 1:
            out[f"{key}_std"] = std
    out["no_code"] = sum(c["no_code"] for c in per_trial)
    out["reference_baselines"] = sum(c["reference_baselines"] for c in per_trial)
    # Which rows count is the same under either averaging (it changes their novelty only).
    out["rows"] = sum(len(episode_rows) for _, episode_rows in episodes)
    out["trials"] = len(per_trial)
    return out
