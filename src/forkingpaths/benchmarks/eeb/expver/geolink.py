"""GeoLink (§4.1, App. B.2 "Session Highlights"): the key steps of a played episode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.eeb.expver import prompts
from forkingpaths.core.records import EpisodeRecord, StepRecord

_LIFE_EVENTS = ("wall_hit", "monster_hit")
_GAIN_EVENTS = ("coin", "kill", "barrier", "locked")


@dataclass(frozen=True)
class KeyStep:
    """A step GeoLink kept for InsightForce, with why it was kept."""

    step: StepRecord
    why: tuple[str, ...]


def highlight_candidates(steps: Sequence[StepRecord]) -> list[tuple[int, int, str, str]]:
    """Every highlight the metrics point to, as (priority, step index, kind, reason).

    Priority 0: life lost (Rem.HP) and goal reached (Suc.Rate); 1: invalid action (API Eff.,
    wasted steps); 2: coin (A.Gold), kill (A.kills), wall broken (A.Barr), item picked up,
    goal locked, prop used (match-2 score trade-off); 3: the two largest clears (match-2
    Clear/Step, Score/Step); 4: the single largest loss and largest gain of reward (any game).
    """
    out: list[tuple[int, int, str, str]] = []
    for step in steps:
        seen: set[str] = set()
        if not step.valid:
            error = step.info.get("error")
            reason = (
                prompts.WHY_INVALID_ERROR.substitute(error=error) if error else prompts.WHY_INVALID
            )
            out.append((1, step.index, "invalid", reason))
        for event in step.info.get("events") or ():
            kind = event.get("event") if isinstance(event, Mapping) else None
            if not isinstance(kind, str) or kind in seen:
                continue
            seen.add(kind)
            if kind in _LIFE_EVENTS:
                out.append((0, step.index, "life", prompts.WHY_EVENT[kind]))
            elif kind == "goal":
                out.append((0, step.index, "goal", prompts.WHY_EVENT[kind]))
            elif kind == "item":
                item = str(event.get("item", "item"))
                out.append((2, step.index, "item", prompts.WHY_ITEM.substitute(item=item)))
            elif kind in _GAIN_EVENTS:
                out.append((2, step.index, kind, prompts.WHY_EVENT[kind]))
        action = step.info.get("action")
        if isinstance(action, Mapping) and action.get("type") not in (None, "eliminate"):
            why = prompts.WHY_PROP.substitute(prop=action["type"])
            out.append((2, step.index, "prop", why))
    clears = [s for s in steps if _number(s.info.get("cleared_total")) > 0]
    for step in sorted(clears, key=lambda s: (-_number(s.info["cleared_total"]), s.index))[:2]:
        tiles = int(_number(step.info["cleared_total"]))
        out.append((3, step.index, "clear", prompts.WHY_CLEAR.substitute(tiles=tiles)))
    if steps:
        worst = min(steps, key=lambda s: (s.reward, s.index))
        if worst.reward < 0:
            why = prompts.WHY_LOSS.substitute(reward=f"{worst.reward:+g}")
            out.append((4, worst.index, "loss", why))
        best = min(steps, key=lambda s: (-s.reward, s.index))
        if best.reward > 0:
            why = prompts.WHY_GAIN.substitute(reward=f"{best.reward:+g}")
            out.append((4, best.index, "gain", why))
    return out


def select_key_steps(
    record: EpisodeRecord,
    *,
    head: int = 2,
    tail: int = 2,
    max_highlights: int = 6,
    per_kind: int = 2,
) -> list[KeyStep]:
    """GeoLink's selection (§4.1, App. B.2 "Session Highlights"): the first `head` and last
    `tail` steps of the trace, plus up to `max_highlights` highlights from
    `highlight_candidates`, taken by priority then step order, at most `per_kind` of one kind.
    Returned in step order; a step kept for several reasons is listed once with all of them."""
    steps = record.steps
    why: dict[int, list[str]] = {}
    for position in range(len(steps)):
        if position < head:
            why.setdefault(position, []).append(prompts.WHY_BEGINNING)
        if position >= len(steps) - tail:
            why.setdefault(position, []).append(prompts.WHY_END)
    by_index = {step.index: position for position, step in enumerate(steps)}
    taken: dict[str, int] = {}
    picked = 0
    for _priority, index, kind, reason in sorted(highlight_candidates(steps)):
        if picked >= max_highlights:
            break
        if taken.get(kind, 0) >= per_kind:
            continue
        taken[kind] = taken.get(kind, 0) + 1
        picked += 1
        reasons = why.setdefault(by_index[index], [])
        if reason not in reasons:
            reasons.append(reason)
    return [KeyStep(steps[position], tuple(why[position])) for position in sorted(why)]


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
