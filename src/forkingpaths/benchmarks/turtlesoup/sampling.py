"""The sampling of every generative call: temperature 0 and seed 42 (App. D.1), switchable."""

from __future__ import annotations

from typing import Any

from forkingpaths.core.chat import ModelParams

MODEL_SEED = 42
"""The seed of every generative call in the paper (App. D.1: questioner, responder and
Mosaic-Agent's internal calls; App. D.3: the judge's). The benchmark option `model_seed`
(`-b model_seed=null` for an endpoint that refuses `seed`) changes it for all of them."""


def sampling(seed: int | None, **fields: Any) -> ModelParams:
    """Request parameters carrying `seed` (None: no seed field is set, so a run's own
    `ModelParams` seed, if any, applies) and the other `fields` given."""
    if seed is None:
        return ModelParams(**fields)
    return ModelParams(seed=seed, **fields)


def benchmark_seed(benchmark: object | None) -> int | None:
    """The `model_seed` option of a turtlesoup benchmark; MODEL_SEED for an agent built
    without one (direct use, tests)."""
    config = getattr(benchmark, "config", None)
    return getattr(config, "model_seed", MODEL_SEED)
