"""Tests of the retry policy: backoff bounds, Retry-After parsing and honouring, the retry loop."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from forkingpaths.core.chat import Message
from forkingpaths.core.errors import ConfigError, ModelError
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import make_model
from forkingpaths.models.mockserver import MockServer
from forkingpaths.models.openai_compat import classify_http_error
from forkingpaths.models.retry import (
    RetryPolicy,
    Verdict,
    call_with_retries,
    retry_after_from_headers,
)
from forkingpaths.models.runtime import ModelRuntime


class Transient(Exception):
    pass


class Fatal(Exception):
    pass


def classify(err: Exception) -> Verdict | None:
    if isinstance(err, Transient):
        return Verdict(retry=True, retry_after_s=getattr(err, "after", None))
    if isinstance(err, Fatal):
        return Verdict(retry=False)
    return None


def test_full_jitter_stays_within_the_doubling_cap() -> None:
    policy = RetryPolicy(max_retries=10, base_delay_s=0.5, max_delay_s=30.0)
    rng = random.Random(3)
    for index in range(10):
        cap = min(30.0, 0.5 * 2**index)
        delays = [policy.delay(index, rng) for _ in range(200)]
        assert all(0.0 <= d <= cap for d in delays)
        # Full jitter spreads waits over the whole interval rather than clustering at the cap.
        assert min(delays) < cap / 4 and max(delays) > cap * 3 / 4


def test_jitter_is_reproducible_with_a_seeded_instance() -> None:
    policy = RetryPolicy()
    first = [policy.delay(i, random.Random(7)) for i in range(5)]
    second = [policy.delay(i, random.Random(7)) for i in range(5)]
    assert first == second


def test_retry_after_wins_and_is_capped() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=30.0)
    rng = random.Random(0)
    assert policy.delay(0, rng, retry_after_s=2.5) == 2.5
    assert policy.delay(5, rng, retry_after_s=0.0) == 0.0
    # A server's Retry-After is honoured beyond our own backoff cap, up to five minutes.
    assert policy.delay(0, rng, retry_after_s=120.0) == 120.0
    assert policy.delay(0, rng, retry_after_s=3600.0) == 300.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("Retry-After", "3")], 3.0),
        ([("retry-after", "1.5")], 1.5),
        ([("retry-after-ms", "250")], 0.25),
        ([("retry-after-ms", "250"), ("retry-after", "9")], 0.25),
        ([("Retry-After", "soon")], None),
        ([("x-other", "1")], None),
    ],
)
def test_retry_after_headers(headers: list[tuple[str, str]], expected: float | None) -> None:
    assert retry_after_from_headers(headers) == expected


def test_retry_after_http_date() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2025, 1, 1, 12, 0, 42, tzinfo=UTC), usegmt=True)
    assert retry_after_from_headers([("Retry-After", later)], now=now.timestamp()) == 42.0
    earlier = format_datetime(datetime(2025, 1, 1, 11, 0, 0, tzinfo=UTC), usegmt=True)
    assert retry_after_from_headers([("Retry-After", earlier)], now=now.timestamp()) == 0.0


async def test_server_retry_after_becomes_the_retry_delay() -> None:
    server = MockServer(fault="429", retry_after_s=7)
    base_url = await server.start()
    try:
        runtime = ModelRuntime(cache=False, max_retries=0)
        model = make_model("openai-compat/echo", ModelOptions(base_url=base_url), runtime)
        with pytest.raises(ModelError) as caught:
            await model.complete([Message(role="user", content="hi")])
        await model.aclose()  # type: ignore[attr-defined]
    finally:
        await server.stop()
    verdict = classify_http_error(caught.value.__cause__)  # the client's RateLimitError
    assert verdict == Verdict(retry=True, retry_after_s=7.0, throttled=True)  # a 429
    policy = RetryPolicy(base_delay_s=0.01, max_delay_s=30.0)
    assert policy.delay(0, random.Random(0), verdict.retry_after_s) == 7.0


async def test_retries_until_success_and_counts_attempts() -> None:
    failures = [Transient(), Transient()]
    slept: list[float] = []

    async def attempt() -> str:
        if failures:
            raise failures.pop()
        return "ok"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    result, attempts = await call_with_retries(
        attempt,
        policy=RetryPolicy(max_retries=5, base_delay_s=1.0, max_delay_s=8.0),
        classify=classify,
        rng=random.Random(0),
        model="test/m",
        sleep=sleep,
    )
    assert (result, attempts) == ("ok", 3)
    assert len(slept) == 2 and 0 <= slept[0] <= 1.0 and 0 <= slept[1] <= 2.0


async def test_retry_after_from_the_error_is_slept() -> None:
    err = Transient()
    err.after = 4.0  # type: ignore[attr-defined]
    failures = [err]
    slept: list[float] = []

    async def attempt() -> str:
        if failures:
            raise failures.pop()
        return "ok"

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    await call_with_retries(
        attempt,
        policy=RetryPolicy(),
        classify=classify,
        rng=random.Random(0),
        model="test/m",
        sleep=sleep,
    )
    assert slept == [4.0]


async def test_gives_up_after_max_retries_with_a_clear_error() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise Transient("server sad")

    async def sleep(seconds: float) -> None:
        pass

    with pytest.raises(ModelError) as caught:
        await call_with_retries(
            attempt,
            policy=RetryPolicy(max_retries=3),
            classify=classify,
            rng=random.Random(0),
            model="test/m",
            sleep=sleep,
        )
    assert calls == 4
    message = str(caught.value)
    assert "'test/m'" in message and "4 attempt(s)" in message and "server sad" in message


async def test_non_retryable_errors_fail_at_once() -> None:
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        raise Fatal("bad request")

    with pytest.raises(ModelError, match="not retryable"):
        await call_with_retries(
            attempt, policy=RetryPolicy(), classify=classify, rng=random.Random(0), model="t/m"
        )
    assert calls == 1


async def test_unclassified_errors_propagate_unchanged() -> None:
    async def attempt() -> str:
        raise KeyError("a bug, not an outage")

    with pytest.raises(KeyError):
        await call_with_retries(
            attempt, policy=RetryPolicy(), classify=classify, rng=random.Random(0), model="t/m"
        )


@pytest.mark.parametrize(
    "kwargs",
    [{"max_retries": -1}, {"base_delay_s": -0.1}, {"base_delay_s": 2.0, "max_delay_s": 1.0}],
)
def test_invalid_policy_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]
