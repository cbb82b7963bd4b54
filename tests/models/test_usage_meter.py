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


def test_a_driver_meter_is_the_sum_of_its_workers_latest_totals() -> None:
    a, b = UsageMeter(), UsageMeter()
    a.record(completion(10, 2, 0.5, attempts=3))
    b.record(completion(4, 1, 0.25))
    b.record_failure()
    driver = UsageMeter(calls=99)  # what it held before is replaced, not added to
    driver.set_sum([a.snapshot(), b.snapshot()])
    assert (driver.calls, driver.retries, driver.failed_calls) == (2, 2, 1)
    assert (driver.prompt_tokens, driver.completion_tokens, driver.cost_usd) == (14, 3, 0.75)
    a.record(completion(1, 1, 0.25))
    driver.set_sum([a.snapshot(), b.snapshot()])  # the next totals of the same workers
    assert (driver.calls, driver.cost_usd) == (3, 1.0)
    assert isinstance(driver.calls, int) and isinstance(driver.cost_usd, float)
