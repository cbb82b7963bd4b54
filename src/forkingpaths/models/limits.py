"""Per-model request limits: a concurrency cap and an optional requests-per-minute token bucket."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from forkingpaths.core.errors import ConfigError


class ConcurrencyLimit:
    """At most `limit` requests in flight, over every coroutine that uses this object.

    The semaphore is created on first use inside a running loop, and again if the object is later
    used from another loop (a sync caller running `asyncio.run` twice), because asyncio primitives
    bind to the loop they first wait on. One object must not be used from two loops at once.
    """

    def __init__(self, limit: int) -> None:
        if not isinstance(limit, int) or limit < 1:
            raise ConfigError(f"concurrency must be an integer >= 1, got {limit!r}")
        self.limit = limit
        self.in_flight = 0
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore, self._loop = asyncio.Semaphore(self.limit), loop
            self.in_flight = 0
        return self._semaphore

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the `limit` slots for the duration of the block."""
        semaphore = self._current()
        async with semaphore:
            self.in_flight += 1
            try:
                yield
            finally:
                self.in_flight -= 1


class RateLimiter:
    """Token bucket: on average `requests_per_minute`, bursts of at most `burst` requests.

    Callers reserve a token without waiting for one to exist: the bucket may go negative, and each
    caller sleeps until its own token has accrued. Between reading and updating the bucket there is
    no await, so coroutines on one loop cannot interleave there and no lock is needed; waiters are
    served in arrival order. Holds no loop-bound state, so it works across event loops.
    """

    def __init__(
        self,
        requests_per_minute: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not math.isfinite(requests_per_minute) or requests_per_minute <= 0:
            raise ConfigError(
                f"requests_per_minute must be a positive number, got {requests_per_minute!r}"
            )
        if burst < 1:
            raise ConfigError(f"rate limit burst must be >= 1, got {burst!r}")
        self.rate_per_s = requests_per_minute / 60.0
        self.burst = burst
        self._clock, self._sleep = clock, sleep
        self._tokens = float(burst)
        self._updated: float | None = None

    async def acquire(self) -> None:
        """Wait until one request may be sent."""
        now = self._clock()
        if self._updated is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate_per_s)
        self._updated = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return
        try:
            await self._sleep(-self._tokens / self.rate_per_s)
        except asyncio.CancelledError:
            # Give the reservation back so a cancelled caller does not slow down the others.
            self._tokens += 1.0
            raise


class Limits(Protocol):
    """What a model holds around each HTTP attempt: this process's `RequestLimits`, or a share of
    limits held for a whole cluster (`forkingpaths.runner.ray_limits.ClusterLimits`)."""

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold the right to send one request for the duration of the block."""
        ...

    def throttled(self, retry_after_s: float | None) -> None:
        """The endpoint answered 429 (with the delay it asked for, if any)."""
        ...


LimitsFactory = Callable[[str, "str | None", int, "float | None"], Limits]
"""Builds a model's limits from (model id, base URL, concurrency, requests per minute)."""


class RequestLimits:
    """The limits one model object applies to each HTTP attempt: concurrency, then rate."""

    def __init__(self, concurrency: int, requests_per_minute: float | None = None) -> None:
        self.concurrency = ConcurrencyLimit(concurrency)
        self.rate = RateLimiter(requests_per_minute) if requests_per_minute is not None else None

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a concurrency slot and spend one rate token (taken once the slot is held, so the
        request leaves right after its token accrues)."""
        async with self.concurrency.slot():
            if self.rate is not None:
                await self.rate.acquire()
            yield

    def throttled(self, retry_after_s: float | None) -> None:
        """Nothing to share in one process: each call's own retry backs off (and honours the
        delay the server asked for)."""
