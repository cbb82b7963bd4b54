"""The cluster's model limits without Ray: a LimitsBroker behind a fake actor handle, drawn
from by several workers' ClusterLimits at once on one event loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from forkingpaths.runner.ray_limits import (
    DEFAULT_THROTTLE_PAUSE_S,
    BrokerLimitsFactory,
    ClusterLimits,
    LimitsBroker,
    _Pool,
)


class _Method:
    def __init__(self, handle: FakeHandle, name: str) -> None:
        self.handle, self.name = handle, name

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        """As a Ray actor call: runs on its own, the result awaitable or ignored."""
        self.handle.calls.append((self.name, args))
        method = getattr(self.handle.broker, self.name)

        async def call() -> Any:
            await asyncio.sleep(0)  # the call crosses processes: never synchronous
            result = method(*args)
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.ensure_future(call())


class FakeHandle:
    """An actor handle's `.method.remote(...)` on a local LimitsBroker."""

    def __init__(self, broker: LimitsBroker) -> None:
        self.broker = broker
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> _Method:
        return _Method(self, name)


async def _load(limits: list[ClusterLimits], per_worker: int, hold: int = 3) -> tuple[int, int]:
    """Each worker sends `per_worker` requests at once; returns (peak in flight, requests)."""
    state = {"now": 0, "peak": 0, "done": 0}

    async def request(lim: ClusterLimits) -> None:
        async with lim.slot():
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            for _ in range(hold):
                await asyncio.sleep(0)
            state["now"] -= 1
            state["done"] += 1

    await asyncio.gather(*(request(lim) for lim in limits for _ in range(per_worker)))
    return state["peak"], state["done"]


async def test_three_workers_never_exceed_the_model_concurrency_together() -> None:
    handle = FakeHandle(LimitsBroker())
    factory = BrokerLimitsFactory(handle)
    workers = [factory("openai/gpt-x", None, 4, None) for _ in range(3)]
    peak, done = await _load(workers, per_worker=20)
    assert done == 60
    assert peak <= 4
    stats = handle.broker.stats()["openai/gpt-x"]
    assert stats["peak_in_use"] <= 4 and stats["granted"] >= 1
    # Workers borrow in batches: far fewer round trips than requests.
    acquires = sum(1 for name, _ in handle.calls if name == "acquire")
    assert acquires < 60
    # Every slot went back: the next request is granted at once.
    assert handle.broker._pools["openai/gpt-x"].free == 4


async def test_models_and_endpoints_have_separate_pools() -> None:
    handle = FakeHandle(LimitsBroker())
    a = ClusterLimits(handle, "openai-compat/m", "http://a/v1", 1, None)
    b = ClusterLimits(handle, "openai-compat/m", "http://b/v1", 1, None)
    assert a.key != b.key
    async with a.slot(), b.slot():  # one slot each: both held at once
        pass
    assert set(handle.broker.stats()) == {a.key, b.key}


async def test_a_rate_limited_model_lends_one_slot_per_token() -> None:
    pool = _Pool(concurrency=8, requests_per_minute=6000.0)
    assert await pool.acquire(5) == 1  # a token per request: never a batch
    pool.release(1)
    unlimited = _Pool(concurrency=8, requests_per_minute=None)
    assert await unlimited.acquire(5) == 5


async def test_a_429_pauses_the_pool_for_the_delay_asked() -> None:
    pool = _Pool(concurrency=2, requests_per_minute=None)
    pool.throttled(None)
    assert pool.throttles == 1
    assert pool.paused_until - pool.updated >= DEFAULT_THROTTLE_PAUSE_S * 0.99
    pool.paused_until = 0.0
    pool.throttled(0.0)  # "retry at once" pauses nobody
    assert await pool.acquire(1) == 1
    pool.throttled(float("nan"))  # an unreadable delay falls back to the default
    assert pool.throttles == 3


async def test_a_worker_reports_429s_to_the_broker() -> None:
    handle = FakeHandle(LimitsBroker())
    limits = ClusterLimits(handle, "m", None, 2, None)
    async with limits.slot():
        limits.throttled(2.5)
    await asyncio.sleep(0.01)
    assert ("throttled", ("m", 2.5)) in handle.calls
    assert handle.broker.stats()["m"]["throttles"] == 1


async def test_a_cancelled_request_gives_its_slot_back() -> None:
    handle = FakeHandle(LimitsBroker())
    limits = ClusterLimits(handle, "m", None, 1, None)
    async with limits.slot():
        waiting = asyncio.ensure_future(limits.slot().__aenter__())
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    await asyncio.sleep(0.01)
    peak, done = await _load([limits], per_worker=3)
    assert (peak, done) == (1, 3)
    assert handle.broker._pools["m"].free == 1


async def test_a_dead_broker_fails_the_waiting_requests() -> None:
    class Gone:
        def __getattr__(self, name: str) -> Any:
            class M:
                @staticmethod
                def remote(*args: Any) -> asyncio.Future[Any]:
                    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                    future.set_exception(RuntimeError("actor died"))
                    return future

            return M

    limits = ClusterLimits(Gone(), "m", None, 1, None)
    with pytest.raises(RuntimeError, match="actor died"):
        async with limits.slot():
            pass


async def test_a_dead_workers_slots_come_back_to_the_others() -> None:
    handle = FakeHandle(LimitsBroker())
    dead = ClusterLimits(handle, "m", None, 2, None, holder="actor-a")
    alive = ClusterLimits(handle, "m", None, 2, None, holder="actor-b")
    held = [dead.slot(), dead.slot()]
    for block in held:
        await block.__aenter__()  # the worker dies holding both: never leaves its blocks
    waiting = asyncio.ensure_future(alive.slot().__aenter__())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the model's 2 slots are taken
    assert handle.broker.forget("actor-a") == 2
    await asyncio.wait_for(waiting, 5)  # one came back to the live worker
    assert handle.broker.stats()["m"]["free"] == 1
    # An acquire the dead worker had in flight gets nothing, and its late releases do nothing.
    assert await handle.broker.acquire("m", 2, None, 1, "actor-a") == 0
    handle.broker.release("m", 5, "actor-a")
    assert handle.broker.stats()["m"]["free"] == 1


async def test_a_busy_worker_does_not_keep_the_slots_from_another() -> None:
    handle = FakeHandle(LimitsBroker())
    a = ClusterLimits(handle, "m", None, 2, None, holder="a")
    b = ClusterLimits(handle, "m", None, 2, None, holder="b")
    finished: list[str] = []

    async def request(name: str, limits: ClusterLimits) -> None:
        async with limits.slot():
            for _ in range(3):
                await asyncio.sleep(0)
        finished.append(name)

    await asyncio.gather(*(request("a", a) for _ in range(8)), request("b", b))
    # b's one request is served while a still has requests waiting, not after all of them.
    assert finished.index("b") < len(finished) - 1
    assert finished.count("a") == 8


async def test_after_a_429_this_worker_holds_its_requests_for_the_pause() -> None:
    handle = FakeHandle(LimitsBroker())
    limits = ClusterLimits(handle, "m", None, 4, None)
    limits.throttled(30.0)
    waiting = asyncio.ensure_future(limits.slot().__aenter__())
    for _ in range(20):
        await asyncio.sleep(0)
    assert not waiting.done()  # free slots, but the 30 s pause holds
    assert not any(name == "acquire" for name, _ in handle.calls)
    waiting.cancel()
