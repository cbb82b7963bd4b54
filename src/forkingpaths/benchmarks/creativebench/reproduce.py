"""CreativeBench's Table 3 as a reproduction: vanilla prompting beside the published baselines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from forkingpaths.core.reproduce import (
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    ResultTable,
    RunView,
)

OFFLINE_SOLVER = "scripted/creative-solver"
OFFLINE_ROLES: Mapping[str, str] = MappingProxyType({"judge": "scripted/constraint-judge"})
"""`--model scripted`: the quick config's scripted solver and constraint judge."""

TRIALS = 10
"""Table 3: mean ± sd over N = 10 independent runs (our trials, seeds 42 + t)."""
TEMPERATURE = 0.1
"""App. B.2: temperature 0.1, top-p 1.0."""

VANILLA = "Vanilla Prompt"
PERCENT = ("combo_pass_at_1", "combo_pass_at_1_std", "explore_pass_at_1", "explore_pass_at_1_std")
"""Columns the paper prints in percent (our metrics are fractions)."""

NOT_RUN = (
    "Only 'Vanilla Prompt' is an ordinary run here. AlphaEvolve and GEPA are two-stage "
    "(`forkingpaths creativebench evolve --method island|gepa --model M [--role mutator=M2]`, "
    "then `forkingpaths run creativebench --agent prompt -a prompt_file=OUT --instances ...` on "
    "the held-out instances it prints), and every '+ EvoRePE' row needs a local Hugging Face "
    "model steered by a creativity vector (`creativebench evorepe-vector`, then "
    "`--model hf/MODEL --model-extra evorepe_vector=...`): their 'ours' cells are left empty."
)


def table3_runs(ctx: ReproContext) -> Sequence[ReproRun]:
    """The vanilla solver on both subsets, 10 trials at temperature 0.1 (App. B.2)."""
    return [
        ReproRun(
            key="vanilla",
            agent="vanilla",
            label=VANILLA,
            split="all",
            trials=TRIALS,
            temperature=TEMPERATURE,
            offline_model=OFFLINE_SOLVER,
            offline_roles=OFFLINE_ROLES,
        )
    ]


def table3(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """Every published row of the compared model; ours filled for the vanilla run only."""
    if published is None:
        raise ValueError("table3 needs its published table")
    model = published.match_model(ctx.compare_to)
    metrics = runs["vanilla"].metrics
    rows = []
    for printed in (r for r in published.rows if r.model == model):
        ours: dict[str, float | None] = dict.fromkeys(printed.values)
        if printed.method == VANILLA:
            ours = {c.key: _scaled(metrics.get(c.key), c.key) for c in published.columns}
        rows.append(ResultRow(label=printed.method, ours=ours, published=dict(printed.values)))
    embedding = metrics.get("embedding") or "unknown"
    notes = [
        *published.notes,
        NOT_RUN,
        f"Novelty's embedding here: {embedding} (the paper's: CodeXEmbed).",
    ]
    table = ResultTable(
        title=f"{published.table}: {published.title}",
        columns=list(published.columns),
        rows=rows,
        published_model=model,
        notes=notes,
    )
    return ReproResult(tables=[table])


def _scaled(value: object, key: str) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) * (100.0 if key in PERCENT else 1.0)


def reproductions() -> list[Reproduction]:
    return [
        Reproduction(
            key="creativebench:table3",
            title="Table 3: Results are reported as mean ± standard deviation over N = 10 "
            "independent runs",
            runs=table3_runs,
            compute=table3,
            published="table3.yaml",
            description="vanilla solver, Combo + Explore, 10 trials at temperature 0.1; "
            "evolutionary and EvoRePE rows shown as published",
        )
    ]
