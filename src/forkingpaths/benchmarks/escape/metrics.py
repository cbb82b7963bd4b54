"""MUTATE's metrics from records (§3.1): Path Discovery (1) and Divergence Momentum (2)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from forkingpaths.benchmarks.escape.judge import CRITERIA
from forkingpaths.core.records import EpisodeRecord, StepRecord

JUDGED_KINDS = frozenset({"apply", "craft", "input"})
"""Action kinds Metric 2 scores when they do not complete a path (§3.1)."""


def counted_paths(
    record: EpisodeRecord, *, include_extra: bool = False
) -> tuple[list[str], list[str]]:
    """(found, total) path ids of an episode that Path Discovery counts: the paper's catalog,
    and with `include_extra` the paths it lacks (`outcome["paths_extra"]`) too."""
    extra = set() if include_extra else set(record.outcome.get("paths_extra", []))
    found = [p for p in record.outcome.get("paths_found", []) if p not in extra]
    total = [p for p in record.outcome.get("paths_total", []) if p not in extra]
    return found, total


def path_discovery(
    records: Sequence[EpisodeRecord], *, include_extra: bool = False
) -> dict[str, Any]:
    """Metric 1: distinct gold paths found over the paths there are, summed over the episodes
    (`path_discovery` None when no episode has path metadata). Paths the paper's catalog lacks
    count only with `include_extra`; `extra_paths_found` / `extra_paths_total` count them
    apart either way."""
    found = total = extra_found = extra_total = 0
    for r in records:
        f, t = counted_paths(r, include_extra=include_extra)
        found, total = found + len(f), total + len(t)
        extra = set(r.outcome.get("paths_extra", []))
        extra_found += len(extra.intersection(r.outcome.get("paths_found", [])))
        extra_total += len(extra)
    return {
        "paths_found": found,
        "paths_total": total,
        "path_discovery": found / total if total else None,
        "extra_paths_found": extra_found,
        "extra_paths_total": extra_total,
    }


def path_table(records: Sequence[EpisodeRecord]) -> dict[str, str]:
    """Tables 18-19: each gold path of the scenario (of the first record) marked `O` when found
    in any of the records, else `X`."""
    if not records:
        return {}
    return {
        path_id: "O" if any(path_id in r.outcome.get("paths_found", []) for r in records) else "X"
        for path_id in records[0].outcome.get("paths_total", [])
    }


def attempt_steps(records: Sequence[EpisodeRecord]) -> list[int]:
    """Steps taken in each attempt of the episodes, in order: Avg Step is their mean."""
    return [a["steps"] for r in records for a in r.outcome.get("attempts", [])]


def is_judged(step: StepRecord) -> bool:
    """Metric 2 scores apply/craft/input steps that complete no path (§3.1), the ones the env
    could not execute included (an attempted mechanism with its Thought); refused forbidden
    finish actions are not attempts of a new mechanism and are left out."""
    info = step.info
    return (
        info.get("kind") in JUDGED_KINDS and info.get("path") is None and not info.get("forbidden")
    )


def divergence_momentum(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Metric 2: the judge's mean score per criterion over the judged steps (None when none was
    scored), with the number scored (`judged_steps`) and the number whose score is missing
    (`judge_missing`), read from `StepRecord.info["judge"]`."""
    scores: dict[str, list[float]] = {c: [] for c in CRITERIA}
    judged = missing = 0
    for record in records:
        for step in record.steps:
            verdict = step.info.get("judge")
            if verdict is None:
                continue
            if "missing" in verdict:
                missing += 1
                continue
            judged += 1
            for criterion in CRITERIA:
                scores[criterion].append(float(verdict[criterion]))
    out: dict[str, Any] = {c: (statistics.fmean(v) if v else None) for c, v in scores.items()}
    out["judged_steps"] = judged
    out["judge_missing"] = missing
    return out
