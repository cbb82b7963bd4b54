"""ModelRuntime: how model objects execute (cache, retries, limits, prices, accounting)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import RunOptions
from forkingpaths.models.cache import CACHE_DIR_ENV
from forkingpaths.models.limits import Limits, LimitsFactory, RequestLimits
from forkingpaths.models.pricing import PriceTable
from forkingpaths.models.retry import RetryPolicy
from forkingpaths.models.usage import UsageMeter

CACHE_FILE = "responses.sqlite"


@dataclass
class ModelRuntime:
    """How model objects execute: cache, retries, limits, prices, accounting.

    None of it changes what a model answers, so it is not part of a run's identity (RunOptions
    feeds it; RunSpec does not).
    """

    cache: bool = True
    """Use the response cache (consulted and filled only at temperature 0)."""
    cache_path: Path | None = None
    """Cache file; None: $FORKINGPATHS_CACHE_DIR/responses.sqlite, else
    ~/.cache/forkingpaths/responses.sqlite."""
    max_retries: int = 6
    """Retries per call after the first attempt."""
    retry_base_delay_s: float = 0.5
    """Backoff cap of the first retry (doubles per retry, full jitter)."""
    retry_max_delay_s: float = 30.0
    """Longest single wait between attempts, Retry-After included."""
    request_timeout_s: float = 120.0
    """Timeout of one HTTP attempt."""
    concurrency: int = 32
    """Requests in flight per model object."""
    requests_per_minute: float | None = None
    """Request rate limit per model object (None: unlimited)."""
    prices_path: Path | str | None = None
    """User price YAML overriding the shipped table (None: $FORKINGPATHS_PRICES if set)."""
    jitter_seed: int | None = None
    """Seed of the backoff-jitter RNG each model owns (None: seeded from the OS)."""
    meter: UsageMeter = field(default_factory=UsageMeter)
    """Running totals every model built with this runtime adds to."""
    prices: PriceTable | None = None
    """The price table itself, overriding `prices_path` (a Ray worker gets the driver's, since
    the driver's price file need not exist on its node)."""
    shared_limits: LimitsFactory | None = None
    """Builds each model's limits when they are held for more than this process (a Ray cluster);
    None: each model object holds its own `RequestLimits`."""
    cache_node: str | None = None
    """This node's name when several nodes cache the same run: answers are stored in
    `responses.node-<name>.sqlite` beside the shared file (read too), so no two machines write
    one SQLite file; `forkingpaths cache merge` joins them."""

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(
                f"model concurrency must be an integer >= 1, got {self.concurrency!r}"
            )
        if self.requests_per_minute is not None and not (
            math.isfinite(self.requests_per_minute) and self.requests_per_minute > 0
        ):
            raise ConfigError(
                "requests_per_minute must be a positive number or None (no limit),"
                f" got {self.requests_per_minute!r}"
            )
        if not (math.isfinite(self.request_timeout_s) and self.request_timeout_s > 0):
            raise ConfigError(
                f"request_timeout_s must be a positive number of seconds,"
                f" got {self.request_timeout_s!r}"
            )
        self.retry_policy()  # validates the retry fields

    def retry_policy(self) -> RetryPolicy:
        """The RetryPolicy these settings describe."""
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay_s=self.retry_base_delay_s,
            max_delay_s=self.retry_max_delay_s,
        )

    def shared_cache_path(self) -> Path:
        """The response cache file every process of this machine shares."""
        if self.cache_path is not None:
            return Path(self.cache_path).expanduser()
        folder = os.environ.get(CACHE_DIR_ENV)
        base = Path(folder).expanduser() if folder else Path.home() / ".cache" / "forkingpaths"
        return base / CACHE_FILE

    def resolved_cache_path(self) -> Path:
        """Where this process stores answers: the shared file, or its node's file beside it."""
        shared = self.shared_cache_path()
        if self.cache_node is None:
            return shared
        return shared.with_name(node_cache_name(self.cache_node))

    def request_limits(self, model: str, base_url: str | None) -> Limits:
        """The limits a model object holds around each request."""
        if self.shared_limits is not None:
            return self.shared_limits(model, base_url, self.concurrency, self.requests_per_minute)
        return RequestLimits(self.concurrency, self.requests_per_minute)

    def price_table(self) -> PriceTable:
        """The prices calls are charged at."""
        return self.prices if self.prices is not None else PriceTable.load(self.prices_path)

    @classmethod
    def from_run_options(
        cls, options: RunOptions, meter: UsageMeter | None = None, **overrides: Any
    ) -> ModelRuntime:
        """The runtime a run's options ask for (`overrides`: fields an executor sets for its
        workers, e.g. `shared_limits`, `cache_node`, `prices`)."""
        return cls(
            cache=options.cache,
            max_retries=options.max_retries,
            request_timeout_s=options.request_timeout_s,
            concurrency=options.model_concurrency,
            requests_per_minute=options.requests_per_minute,
            prices_path=options.prices_path,
            meter=meter if meter is not None else UsageMeter(),
            **overrides,
        )


NODE_CACHE_GLOB = "responses.node-*.sqlite"
"""The per-node response cache files beside the shared one (`forkingpaths cache merge`)."""


def node_cache_name(node: str) -> str:
    """File name of one node's response cache."""
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in node)
    return f"responses.node-{safe}.sqlite"
