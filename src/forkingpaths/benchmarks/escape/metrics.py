"""MUTATE's metrics from records (§3.1): Path Discovery (1) and Divergence Momentum (2)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from forkingpaths.benchmarks.escape.judge import CRITERIA
from forkingpaths.core.records import EpisodeRecord, StepRecord

JUDGED_KINDS = frozenset({"apply", "craft", "input"})
"""Action kinds Metric 2 scores when they do not complete a path (§3.1)."""


EscapeFacts = Mapping[str, Any]
"""What the metrics read of an episode (`episode_facts`): its paths, attempt lengths, escapes
and judge verdicts; a run keeps these instead of its records."""


def path_facts(record: EpisodeRecord) -> dict[str, Any]:
    """The paths of an episode's outcome: `paths_found`, `paths_total`, `paths_extra`."""
    outcome = record.outcome
    return {
        "paths_found": list(outcome.get("paths_found", [])),
        "paths_total": list(outcome.get("paths_total", [])),
        "paths_extra": list(outcome.get("paths_extra", [])),
    }


def episode_facts(record: EpisodeRecord) -> dict[str, Any]:
    """An episode's `EscapeFacts`: `paths_found`, `paths_total`, `paths_extra` (from its
    outcome), `attempt_steps` (steps of each attempt), `escapes`, and the judge's verdicts:
    `judge_scores` (one list of CRITERIA scores per scored step, in order) and `judge_missing`
    (steps whose verdict is missing)."""
    outcome = record.outcome
    scores: list[list[float]] = []
    missing = 0
    for step in record.steps:
        verdict = step.info.get("judge")
        if verdict is None:
            continue
        if "missing" in verdict:
            missing += 1
            continue
        scores.append([float(verdict[criterion]) for criterion in CRITERIA])
    return {
        **path_facts(record),
        "attempt_steps": [a["steps"] for a in outcome.get("attempts", [])],
        "escapes": outcome.get("escapes", 0),
        "judge_scores": scores,
        "judge_missing": missing,
    }


def counted_paths(
    facts: EscapeFacts, *, include_extra: bool = False
) -> tuple[list[str], list[str]]:
    """(found, total) path ids of an episode that Path Discovery counts: the paper's catalog,
    and with `include_extra` the paths it lacks (`outcome["paths_extra"]`) too."""
    extra = set() if include_extra else set(facts["paths_extra"])
    found = [p for p in facts["paths_found"] if p not in extra]
    total = [p for p in facts["paths_total"] if p not in extra]
    return found, total


def path_discovery(
    episodes: Sequence[EscapeFacts], *, include_extra: bool = False
) -> dict[str, Any]:
    """Metric 1: distinct gold paths found over the paths there are, summed over the episodes
    (`path_discovery` None when no episode has path metadata). Paths the paper's catalog lacks
    count only with `include_extra`; `extra_paths_found` / `extra_paths_total` count them
    apart either way."""
    found = total = extra_found = extra_total = 0
    for facts in episodes:
        f, t = counted_paths(facts, include_extra=include_extra)
        found, total = found + len(f), total + len(t)
        extra = set(facts["paths_extra"])
        extra_found += len(extra.intersection(facts["paths_found"]))
        extra_total += len(extra)
    return {
        "paths_found": found,
        "paths_total": total,
        "path_discovery": found / total if total else None,
        "extra_paths_found": extra_found,
        "extra_paths_total": extra_total,
    }


def path_table(episodes: Sequence[EscapeFacts]) -> dict[str, str]:
    """Tables 18-19: each gold path of the scenario (of the first episode) marked `O` when found
    in any of the episodes, else `X`."""
    if not episodes:
        return {}
    return {
        path_id: "O" if any(path_id in facts["paths_found"] for facts in episodes) else "X"
        for path_id in episodes[0]["paths_total"]
    }


def attempt_steps(episodes: Sequence[EscapeFacts]) -> list[int]:
    """Steps taken in each attempt of the episodes, in order: Avg Step is their mean."""
    return [steps for facts in episodes for steps in facts["attempt_steps"]]


def is_judged(step: StepRecord) -> bool:
    """Metric 2 scores apply/craft/input steps that complete no path (§3.1), the ones the env
    could not execute included (an attempted mechanism with its Thought); refused forbidden
    finish actions are not attempts of a new mechanism and are left out."""
    info = step.info
    return (
        info.get("kind") in JUDGED_KINDS and info.get("path") is None and not info.get("forbidden")
    )


def divergence_momentum(episodes: Sequence[EscapeFacts]) -> dict[str, Any]:
    """Metric 2: the judge's mean score per criterion over the judged steps (None when none was
    scored), with the number scored (`judged_steps`) and the number whose score is missing
    (`judge_missing`), read from `StepRecord.info["judge"]` (by `episode_facts`)."""
    scores: dict[str, list[float]] = {c: [] for c in CRITERIA}
    judged = missing = 0
    for facts in episodes:
        missing += facts["judge_missing"]
        for verdict in facts["judge_scores"]:
            judged += 1
            for criterion, score in zip(CRITERIA, verdict, strict=True):
                scores[criterion].append(score)
    out: dict[str, Any] = {c: (statistics.fmean(v) if v else None) for c, v in scores.items()}
    out["judged_steps"] = judged
    out["judge_missing"] = missing
    return out
