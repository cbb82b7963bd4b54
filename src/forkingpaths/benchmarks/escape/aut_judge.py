"""The AUT judge: every use of a run rated for Originality and Elaboration, 1-5 (App. D.6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.judge import consult_judge, scores_from_object
from forkingpaths.core.chat import ChatModel, Message
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.text import json_values

AUT_CRITERIA = ("originality", "elaboration")
"""What the AUT judge rates (Table 4, App. D.6)."""

JUDGE_RETRIES = 2
"""Corrective turns after a reply that is not a rating, before the run is recorded missing."""


def read_use_scores(text: str, count: int) -> tuple[list[dict[str, int]] | None, str]:
    """(one score object per use, "") or (None, why not), from a JSON list of `count` objects
    each holding originality and elaboration as whole numbers 1-5 (also under a `scores` key).
    Objects carrying `use` numbers 1..count are put in that order; otherwise the list's order is
    the uses' order."""
    for value in json_values(text):
        if isinstance(value, dict):
            nested = [v for v in value.values() if isinstance(v, list)]
            value = nested[0] if len(nested) == 1 else value
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            continue
        if len(value) != count:
            return None, f"expected {count} ratings, got {len(value)}"
        numbers = [v.get("use") for v in value]
        if sorted(n for n in numbers if isinstance(n, int)) == list(range(1, count + 1)):
            value = sorted(value, key=lambda v: v["use"])
        out = []
        for index, item in enumerate(value, start=1):
            scores, reason = scores_from_object(item, AUT_CRITERIA)
            if scores is None:
                return None, f"use {index}: {reason}"
            out.append(scores)
        return out, ""
    return None, "no JSON list of rating objects"


@dataclass(frozen=True)
class UseVerdict:
    """The judge's ratings of one run's uses, or why there are none."""

    scores: list[dict[str, int]] | None
    """One `{originality, elaboration}` per use, in the uses' order; None when unreadable."""
    missing_reason: str | None
    """Why `scores` is None (None when rated)."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every judge call made (`purpose="judge"`), retries included."""
    attempts: int = 0
    """Number of judge calls made."""

    def as_info(self) -> dict[str, Any]:
        """The form stored in `StepRecord.info["judge"]`."""
        if self.scores is not None:
            return {"scores": [dict(s) for s in self.scores]}
        return {"missing": self.missing_reason or "no rating"}


def judge_messages(object_line: str, uses: Sequence[str]) -> list[Message]:
    """The rating request for one run's uses: the rubric as system turn, the numbered uses as
    user turn."""
    user = prompts.JUDGE_USER.substitute(
        object_line=object_line,
        uses="\n".join(
            prompts.USE_LINE.substitute(number=i, text=u) for i, u in enumerate(uses, start=1)
        ),
        count=len(uses),
    )
    return [
        Message(role="system", content=prompts.JUDGE_SYSTEM),
        Message(role="user", content=user),
    ]


async def judge_uses(
    model: ChatModel, object_line: str, uses: Sequence[str], *, retries: int = JUDGE_RETRIES
) -> UseVerdict:
    """Rate one run's uses of the object `object_line` names in one call at temperature 0; a
    reply that is not a rating is retried with a corrective turn, then recorded as missing. No
    uses: no call, an empty rating."""
    if not uses:
        return UseVerdict(scores=[], missing_reason=None)
    scores, reason, calls, attempts = await consult_judge(
        model,
        judge_messages(object_line, uses),
        lambda text: read_use_scores(text, len(uses)),
        lambda why: prompts.JUDGE_CORRECTIVE.substitute(reason=why, count=len(uses)),
        retries=retries,
    )
    return UseVerdict(scores=scores, missing_reason=reason, calls=calls, attempts=attempts)
