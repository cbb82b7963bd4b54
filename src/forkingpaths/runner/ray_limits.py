"""Model limits held for a whole Ray cluster: a broker actor lends request slots to workers."""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

DEFAULT_THROTTLE_PAUSE_S = 1.0
"""How long the cluster holds new requests to a model after a 429 that named no delay."""

MAX_THROTTLE_PAUSE_S = 300.0
"""The longest pause a 429 can impose (as `RetryPolicy.max_retry_after_s`)."""


@dataclass
class _Pool:
    """One model's limits: `concurrency` slots and, if set, a token bucket of requests/minute."""

    concurrency: int
    requests_per_minute: float | None
    free: int = 0
    tokens: float = 1.0
    updated: float = field(default_factory=time.monotonic)
    paused_until: float = 0.0
    # Statistics the driver logs at the end of a run (and tests read).
    peak_in_use: int = 0
    granted: int = 0
    throttles: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.free = self.concurrency

    def _refill(self, now: float) -> None:
        if self.requests_per_minute is not None:
            rate = self.requests_per_minute / 60.0
            self.tokens = min(1.0, self.tokens + (now - self.updated) * rate)
        self.updated = now

    async def acquire(self, want: int) -> int:
        """Wait until a slot is free (and a request token has accrued, and no 429 pause holds),
        then lend up to `want` slots."""
        while True:
            now = time.monotonic()
            self._refill(now)
            wait = self.paused_until - now
            if self.requests_per_minute is not None and self.tokens < 1.0:
                wait = max(wait, (1.0 - self.tokens) / (self.requests_per_minute / 60.0))
            if self.free > 0 and wait <= 0:
                # A rate-limited model lends one slot per token: a request leaves right away.
                n = min(want, self.free) if self.requests_per_minute is None else 1
                self.free -= n
                if self.requests_per_minute is not None:
                    self.tokens -= 1.0
                self.granted += n
                self.peak_in_use = max(self.peak_in_use, self.concurrency - self.free)
                return n
            self.changed.clear()
            if wait > 0:
                # Slots may free up meanwhile; the pause or the token is still waited out.
                await asyncio.sleep(wait)
            else:
                await self.changed.wait()

    def release(self, n: int) -> None:
        self.free = min(self.concurrency, self.free + n)
        self.changed.set()

    def throttled(self, retry_after_s: float | None) -> None:
        pause = _pause_s(retry_after_s)
        self.paused_until = max(self.paused_until, time.monotonic() + pause)
        self.throttles += 1


class LimitsBroker:
    """A Ray actor (async, one per run, on the driver's node): each model's concurrency and
    request rate for every worker of the cluster. Workers borrow slots in batches (as many as
    they have requests waiting) and return each when its request ends; the broker counts what
    each worker holds, so the slots of a worker that died come back (`forget`). A 429 one
    worker meets pauses every worker's requests to that model."""

    def __init__(self) -> None:
        self._pools: dict[str, _Pool] = {}
        self._held: collections.Counter[tuple[str, str]] = collections.Counter()
        self._forgotten: set[str] = set()

    def _pool(self, key: str, concurrency: int, requests_per_minute: float | None) -> _Pool:
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = _Pool(concurrency, requests_per_minute)
        return pool

    async def acquire(
        self,
        key: str,
        concurrency: int,
        requests_per_minute: float | None,
        want: int,
        holder: str = "",
    ) -> int:
        pool = self._pool(key, concurrency, requests_per_minute)
        granted = await pool.acquire(max(want, 1))
        if holder in self._forgotten:  # it died while it waited: nobody will return these
            pool.release(granted)
            return 0
        self._held[key, holder] += granted
        return granted

    def release(self, key: str, n: int, holder: str = "") -> None:
        n = min(n, self._held[key, holder])
        if n > 0 and key in self._pools:
            self._held[key, holder] -= n
            self._pools[key].release(n)

    def forget(self, holder: str) -> int:
        """A worker is gone: every slot it held goes back. Returns how many."""
        self._forgotten.add(holder)
        back = 0
        for (key, who), n in list(self._held.items()):
            if who == holder and n > 0:
                self.release(key, n, holder)
                back += n
        return back

    def throttled(self, key: str, retry_after_s: float | None) -> None:
        if key in self._pools:
            self._pools[key].throttled(retry_after_s)

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per model: its limits, the most slots lent at once, requests granted, 429s met."""
        return {
            key: {
                "concurrency": pool.concurrency,
                "requests_per_minute": pool.requests_per_minute,
                "peak_in_use": pool.peak_in_use,
                "granted": pool.granted,
                "throttles": pool.throttles,
                "free": pool.free,
            }
            for key, pool in self._pools.items()
        }


class ClusterLimits:
    """A model's limits inside one worker process, drawn from the run's LimitsBroker.

    Requests that wait share one outstanding borrow (a batch of as many slots as requests
    wait); each slot goes back to the broker when its request ends, so a busy worker cannot
    keep slots from the others. After a 429 this worker also holds its own requests for the
    pause, as the broker holds everyone's new ones.
    """

    def __init__(
        self,
        broker: Any,
        model: str,
        base_url: str | None,
        concurrency: int,
        requests_per_minute: float | None,
        holder: str = "",
    ) -> None:
        self._broker = broker
        self.key = f"{model} @ {base_url}" if base_url else model
        self.concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self.holder = holder
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._borrowing: asyncio.Task[None] | None = None
        self._paused_until = 0.0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self._take()
        try:
            yield
        finally:
            self._give_back()

    def throttled(self, retry_after_s: float | None) -> None:
        pause = _pause_s(retry_after_s)
        self._paused_until = max(self._paused_until, time.monotonic() + pause)
        self._broker.throttled.remote(self.key, retry_after_s)

    async def _take(self) -> None:
        while (wait := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        if self._borrowing is None or self._borrowing.done():
            self._borrowing = asyncio.create_task(self._borrow())
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._give_back()  # the slot arrived as the caller was cancelled
            raise

    async def _borrow(self) -> None:
        try:
            while any(not w.done() for w in self._waiters):
                want = sum(not w.done() for w in self._waiters)
                granted = await self._broker.acquire.remote(
                    self.key, self.concurrency, self.requests_per_minute, want, self.holder
                )
                for _ in range(granted):
                    if not self._hand_to_waiter():
                        self._give_back()
        except Exception as err:  # the broker is gone: every waiting request fails with it
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_exception(err)

    def _hand_to_waiter(self) -> bool:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return True
        return False

    def _give_back(self) -> None:
        self._broker.release.remote(self.key, 1, self.holder)


def _pause_s(retry_after_s: float | None) -> float:
    """How long a 429 holds a model's requests: the delay the server asked for, bounded."""
    pause = DEFAULT_THROTTLE_PAUSE_S if retry_after_s is None else retry_after_s
    if not math.isfinite(pause):
        pause = DEFAULT_THROTTLE_PAUSE_S
    return min(max(pause, 0.0), MAX_THROTTLE_PAUSE_S)


@dataclass(frozen=True)
class BrokerLimitsFactory:
    """`ModelRuntime.shared_limits` of a Ray worker: each model's ClusterLimits on one broker,
    borrowed in the name of `holder` (the worker's actor id)."""

    broker: Any
    holder: str = ""

    def __call__(
        self, model: str, base_url: str | None, concurrency: int, rpm: float | None
    ) -> ClusterLimits:
        return ClusterLimits(self.broker, model, base_url, concurrency, rpm, self.holder)
