"""Tests of the UsageMeter totals."""

from __future__ import annotations

from forkingpaths.core.chat import Completion, Usage
from forkingpaths.models.usage import UsageMeter


def completion(prompt: int, completion: int, cost: float, **kwargs: object) -> Completion:
    return Completion(
        text="x",
        model="t/m",
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion, reasoning_tokens=1),
        cost_usd=cost,
        **kwargs,  # type: ignore[arg-type]
    )


def test_meter_sums_live_calls_and_counts_cache_hits_without_cost() -> None:
    meter = UsageMeter()
    meter.record(completion(10, 5, 0.25))
    meter.record(completion(20, 7, 0.5, attempts=3))
    meter.record(completion(10, 5, 0.0, cached=True, attempts=0))
    meter.record_failure()
    assert (meter.calls, meter.cached_calls, meter.failed_calls, meter.retries) == (3, 1, 1, 2)
    assert (meter.prompt_tokens, meter.completion_tokens, meter.reasoning_tokens) == (30, 12, 2)
    assert meter.cost_usd == 0.75
    assert meter.usage == Usage(prompt_tokens=30, completion_tokens=12, reasoning_tokens=2)
