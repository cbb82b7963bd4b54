"""Retry policy for model calls: exponential backoff with full jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from forkingpaths.core.errors import ConfigError, ContextLengthExceeded, ModelError

T = TypeVar("T")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Verdict:
    """How a failed attempt is handled: retried (after the server's delay if it gave one) or not."""

    retry: bool
    """True for transient failures (429, 5xx, timeouts, dropped connections, malformed bodies)."""
    retry_after_s: float | None = None
    """Delay the server asked for (Retry-After), None to use the backoff schedule."""
    context_exceeded: bool = False
    """The request's prompt is longer than the model's context window (never retried)."""
    throttled: bool = False
    """The endpoint refused the request for its rate (HTTP 429): limits shared by several
    processes slow every one of them down, not only the caller."""


Classifier = Callable[[Exception], Verdict | None]
"""Maps an exception raised by one attempt to a Verdict; None means "not a model API error":
the exception propagates unchanged (a bug in our code must not be reported as an outage)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How many times and how long to wait between attempts of one model call."""

    max_retries: int = 6
    """Retries after the first attempt (so at most max_retries + 1 attempts)."""
    base_delay_s: float = 0.5
    """Backoff cap of the first retry; doubles with every further retry."""
    max_delay_s: float = 30.0
    """Upper bound of a backoff wait chosen by us."""
    max_retry_after_s: float = 300.0
    """Upper bound of a wait a server asks for with Retry-After: honoured up to five minutes,
    since retrying earlier than a rate limiter asks mostly burns attempts."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, got {self.max_retries!r}")
        if self.base_delay_s < 0 or not math.isfinite(self.base_delay_s):
            raise ConfigError(f"retry base delay must be >= 0 seconds, got {self.base_delay_s!r}")
        if self.max_delay_s < self.base_delay_s or not math.isfinite(self.max_delay_s):
            raise ConfigError(
                f"retry max delay must be >= the base delay ({self.base_delay_s} s),"
                f" got {self.max_delay_s!r}"
            )

    def delay(
        self, retry_index: int, rng: random.Random, retry_after_s: float | None = None
    ) -> float:
        """Seconds to wait before retry number `retry_index` (0 for the first retry).

        A server-given Retry-After wins (capped at max_retry_after_s); otherwise full jitter:
        uniform in [0, min(max_delay_s, base_delay_s * 2**retry_index)], which spreads the
        retries of many concurrent callers instead of having them hit the server in lockstep.
        """
        if retry_after_s is not None and math.isfinite(retry_after_s):
            return min(max(retry_after_s, 0.0), self.max_retry_after_s)
        # min() before the power would overflow for large indices; 2**60 already dwarfs any cap.
        cap = min(self.max_delay_s, self.base_delay_s * 2.0 ** min(retry_index, 60))
        return rng.uniform(0.0, cap)


def retry_after_from_headers(
    headers: Iterable[tuple[str, str]], now: float | None = None
) -> float | None:
    """Seconds the server asked to wait, from `retry-after-ms`, or `retry-after` as seconds or as
    an HTTP date; None when absent or unreadable. `headers` are (name, value) pairs, any case."""
    values = {name.lower(): value for name, value in headers}
    millis = values.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = values.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Classifier,
    rng: random.Random,
    model: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> tuple[T, int]:
    """Run `attempt` until it succeeds; return its result and the number of attempts made.

    Raises ModelError naming the model, the attempts and the last error when the error is not
    retryable or `policy.max_retries` retries are used up.
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt(), attempts
        except Exception as err:
            verdict = classify(err)
            if verdict is None:
                raise
            if verdict.context_exceeded:
                raise ContextLengthExceeded(
                    f"model {model!r}: the prompt does not fit its context window: {_describe(err)}"
                ) from err
            if not verdict.retry:
                raise ModelError(
                    f"model {model!r} call failed (not retryable) after {attempts} attempt(s):"
                    f" {_describe(err)}"
                ) from err
            if attempts > policy.max_retries:
                raise ModelError(
                    f"model {model!r} call failed after {attempts} attempt(s)"
                    f" ({policy.max_retries} retries); last error: {_describe(err)}"
                ) from err
            wait = policy.delay(attempts - 1, rng, verdict.retry_after_s)
            logger.debug(
                "model %s attempt %d failed (%s); retrying in %.3f s",
                model,
                attempts,
                _describe(err),
                wait,
            )
            await sleep(wait)


def _describe(err: BaseException) -> str:
    """`Type: message`, plus the root cause when the SDK wrapped one (its aiohttp transport
    reports a refused connection as a timeout; the root cause says what really happened)."""
    text = _one(err)
    root, seen = err, {id(err)}
    while (nxt := root.__cause__ or root.__context__) is not None and id(nxt) not in seen:
        seen.add(id(nxt))
        root = nxt
    return text if root is err else f"{text} (cause: {_one(root)})"


def _one(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
