"""Tests of the per-model limits: concurrency cap and requests-per-minute token bucket."""

from __future__ import annotations

import asyncio

import pytest

from forkingpaths.core.errors import ConfigError
from forkingpaths.models.limits import ConcurrencyLimit, RateLimiter, RequestLimits


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


async def test_token_bucket_spaces_requests_at_the_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(60, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        await limiter.acquire()
    # First goes at once; the next two reserve the tokens accruing at 1 per second.
    assert clock.slept == [1.0, 2.0]


async def test_token_bucket_refills_up_to_the_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(120, burst=3, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        await limiter.acquire()
    assert clock.slept == []
    clock.now += 3600  # a long idle time refills only up to the burst
    for _ in range(4):
        await limiter.acquire()
    assert clock.slept == [0.5]


async def test_cancelled_waiter_returns_its_token() -> None:
    clock = FakeClock()

    async def sleep(seconds: float) -> None:
        clock.slept.append(seconds)
        if len(clock.slept) == 1:
            raise asyncio.CancelledError

    limiter = RateLimiter(60, clock=clock, sleep=sleep)
    await limiter.acquire()
    with pytest.raises(asyncio.CancelledError):
        await limiter.acquire()
    await limiter.acquire()
    # Without the refund the third caller would wait for the cancelled one's token too (2 s).
    assert clock.slept == [1.0, 1.0]


@pytest.mark.parametrize("rpm", [0, -5, float("inf"), float("nan")])
def test_invalid_rate_is_refused(rpm: float) -> None:
    with pytest.raises(ConfigError, match="requests_per_minute"):
        RateLimiter(rpm)


@pytest.mark.parametrize("limit", [0, -1])
def test_invalid_concurrency_is_refused(limit: int) -> None:
    with pytest.raises(ConfigError, match="concurrency"):
        ConcurrencyLimit(limit)


async def test_concurrency_limit_bounds_tasks_in_flight() -> None:
    limit = ConcurrencyLimit(3)
    seen: list[int] = []

    async def work() -> None:
        async with limit.slot():
            seen.append(limit.in_flight)
            await asyncio.sleep(0.005)

    await asyncio.gather(*(work() for _ in range(12)))
    assert max(seen) == 3 and len(seen) == 12
    assert limit.in_flight == 0


def test_limits_work_across_event_loops() -> None:
    limits = RequestLimits(2, requests_per_minute=6000)

    async def burst() -> list[int]:
        seen: list[int] = []

        async def one() -> None:
            async with limits.slot():
                seen.append(limits.concurrency.in_flight)
                await asyncio.sleep(0)

        await asyncio.gather(*(one() for _ in range(5)))
        return seen

    # A sync caller may run several loops over one model's lifetime: the second loop gets
    # working limits (no primitive bound to the first loop), still capped at 2 in flight.
    for _ in range(2):
        seen = asyncio.run(burst())
        assert len(seen) == 5 and max(seen) == 2
        assert limits.concurrency.in_flight == 0
