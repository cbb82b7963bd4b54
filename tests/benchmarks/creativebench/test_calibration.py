"""`ast-tfidf-calibrated`: the stand-in's distances on CodeXEmbed's scale (App. F, Tables 4-6)."""

from __future__ import annotations

import itertools
import math
import re
import statistics

import numpy as np

from forkingpaths.benchmarks.creativebench.env import DEFAULT_EMBEDDING
from forkingpaths.benchmarks.creativebench.novelty import (
    CALIBRATION,
    AstTfidfEmbeddings,
    embedding_distance,
    make_embedding_backend,
)
from forkingpaths.benchmarks.creativebench.tasks import explore_levels, load_explore

TABLE5 = {"mean": 0.0813, "median": 0.0728, "p75": 0.1000}
"""Cross-model d_embed of CodeXEmbed on 120 shared Combo problems (App. F, Table 5)."""


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "median": float(np.median(values)),
        "p75": float(np.percentile(values, 75)),
    }


async def _level_pairs(backend: AstTfidfEmbeddings) -> list[float]:
    """d_embed of each pair of consecutive-level reference solutions of one built-in problem."""
    tasks, errors = load_explore(None)
    assert errors == []
    found = []
    for levels in explore_levels(tasks).values():
        for low, high in itertools.pairwise(levels):
            found.append(
                await embedding_distance(low.reference_solution, high.reference_solution, backend)
            )
    return found


async def test_the_map_puts_the_median_and_p75_on_table_5() -> None:
    raw = _stats(await _level_pairs(AstTfidfEmbeddings()))
    assert {k: round(v, 4) for k, v in raw.items()} == {
        "mean": 0.4416,
        "median": 0.4539,
        "p75": 0.5814,
    }
    _a, p = CALIBRATION
    # The fit: two quantiles, two unknowns.
    assert math.isclose(
        p, math.log(0.1000 / 0.0728) / math.log(raw["p75"] / raw["median"]), abs_tol=5e-5
    )
    mapped = _stats(await _level_pairs(AstTfidfEmbeddings(calibrated=True)))
    assert {k: round(v, 4) for k, v in mapped.items()} == {**TABLE5, "mean": 0.0727}


async def test_non_semantic_edits_stay_small_and_the_default_names_the_map() -> None:
    backend = make_embedding_backend(DEFAULT_EMBEDDING)
    assert backend is not None and backend.name == "ast-tfidf-calibrated"
    code = (
        "def total(values):\n    acc = 0\n    for v in values:\n        acc += v\n    return acc\n"
    )
    renamed = re.sub(r"\bacc\b", "running", code)
    commented = code.replace("    return acc", "    # the sum\n    return acc")
    formatted = code.replace("acc = 0", "acc=0")
    assert await embedding_distance(code, commented, backend) == 0.0
    assert await embedding_distance(code, formatted, backend) == 0.0
    raw = await embedding_distance(code, renamed, AstTfidfEmbeddings())
    mapped = await embedding_distance(code, renamed, backend)
    assert mapped == min(2.0, CALIBRATION[0] * raw ** CALIBRATION[1]) and mapped < raw
