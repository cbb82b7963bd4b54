"""`forkingpaths reproduce mutate:ITEM`: Tables 1-4, 10 and 15 of the MUTATE paper as the runs
behind them and how our numbers are read off those runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from forkingpaths.benchmarks.escape.agreement import agreement as agreement_table
from forkingpaths.benchmarks.escape.agreement import load_human_scores, pair_with_judge
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.reproduce import (
    ComputeFn,
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    ResultTable,
    RunView,
    as_number,
    metric_table,
)
from forkingpaths.runner.rundir import RunDirectory

PAPER = "mutate"
OFFLINE_MODEL = "scripted/escape-explorer"
"""Stands in for the agent's model with `--model scripted` (the quick suite's escape model)."""
OFFLINE_ROLES = {"judge": "scripted/escape-judge"}
"""The Metric 2 judge with `--model scripted`; with a real model, `--role judge=MODEL`."""
AUT_OFFLINE_MODEL = "scripted/aut-scripted"
AUT_OFFLINE_ROLES = {"judge": "scripted/aut-judge"}
GREEDY = 0.0
"""§3.3 / App. D.5: every main result decodes greedily."""
ROBUSTNESS_T = 0.7
"""App. D.5 (Table 15): temperature 0.7, three runs per cell."""
ROBUSTNESS_RUNS = 3
AUT_T = 0.7
"""App. D.6: Base and ReDNA on the AUT at temperature 0.7, three runs per condition."""
PERCENT = {"path_discovery": 100.0, "path_discovery_std": 100.0}

METHODS = (
    ("Base", "base"),
    ("Self-Refine", "self-refine"),
    ("EscapeAgent", "escapeagent"),
    ("ReDNA", "redna"),
)
"""Table 2's methods in the paper's order: (label as printed, agent)."""
ABLATION = (("Base", "base"), ("Re only", "r-only"), ("ReDNA", "redna"))
"""Table 3's conditions: (label as printed, agent)."""


def escape_run(key: str, label: str, *, temperature: float = GREEDY, trials: int = 1) -> ReproRun:
    """One run of an escape agent (key = agent) on the ten scenarios, 4 attempts each."""
    return ReproRun(
        key=key,
        agent=key,
        label=label,
        split="mutate",
        trials=trials,
        temperature=temperature,
        offline_model=OFFLINE_MODEL,
        offline_roles=OFFLINE_ROLES,
    )


def _methods(methods: Sequence[tuple[str, str]], **kwargs: float | int) -> list[ReproRun]:
    return [escape_run(agent, label, **kwargs) for label, agent in methods]  # type: ignore[arg-type]


HUMAN_SCORES_FORMAT = (
    "JSONL of human Metric 2 scores of the base run's steps, one object a line with "
    "instance_id, attempt, step, originality, elaboration, groundedness (optional: trial, "
    "default 0, and annotator); see docs/escape-agreement.md"
)
"""What `--input human_scores=PATH` holds (the loader: `agreement.load_human_scores`)."""


def judge_of(run: RunView) -> str | None:
    """The judge model a run was played with (its spec's `judge` role), None without one."""
    try:
        roles = RunDirectory(run.path).read_header().spec.roles
    except InvalidFile:
        return None
    role = roles.get("judge")
    return role.model if role is not None else None


def judge_note(runs: Mapping[str, RunView], scores: str) -> str:
    """Which judge gave `scores` in these runs; where none played, that one is needed."""
    judges = {key: judge_of(run) for key, run in runs.items()}
    unjudged = [key for key, judge in judges.items() if judge is None]
    played = sorted({judge for judge in judges.values() if judge is not None})
    if not played:
        return (
            f"{scores}: not scored, no judge played; pass --role judge=MODEL "
            "(the paper does not name its judge)"
        )
    if len(played) == 1:
        note = f"{scores}: scored by the judge {played[0]}"
    else:
        by_run = ", ".join(f"{key}: {judge}" for key, judge in judges.items() if judge)
        note = f"{scores}: scored by the judges {by_run}"
    if unjudged:
        note += f"; not scored in {', '.join(unjudged)}, which ran without --role judge=MODEL"
    return note


def with_judge_note(compute: ComputeFn, scores: str) -> ComputeFn:
    """`compute` whose tables also say which judge gave `scores` (or that none played)."""

    def judged(
        runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
    ) -> ReproResult:
        result = compute(runs, published, ctx)
        note = judge_note(runs, scores)
        result.tables = [replace(t, notes=[*t.notes, note]) for t in result.tables]
        return result

    return judged


METRIC2 = "Metric 2 (Orig., Elab., Ground.)"
AUT_RATINGS = "Originality and Elaboration"


def agreement_compute(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """Table 10: the human scores file paired with the judged base run's steps; one row per
    criterion (Overall pooled first), the statistics of `agreement`."""
    human = load_human_scores(ctx.inputs["human_scores"])
    pairs = pair_with_judge(human, runs["base"].records())
    columns = {"n": "n", "pearson": "Pearson", "spearman": "Spearman", "pairwise": "Pairwise"}
    rows = []
    for row in agreement_table(pairs):
        label = str(row["Criterion"])
        ours = {key: as_number(row[name]) for key, name in columns.items()}
        printed = {key: published.value("", label, key) for key in columns} if published else {}
        rows.append(ResultRow(label=label, ours=ours, published=printed))
    notes = list(published.notes) if published else []
    if pairs.unmatched:
        item, reason = pairs.unmatched[0]
        notes.append(
            f"{len(pairs.unmatched)} human item(s) matched no judged step (first: "
            f"{item.instance_id} attempt {item.attempt} step {item.step}: {reason})"
        )
    table = ResultTable(
        title=f"{published.table}: {published.title}" if published else "Table 10",
        columns=list(published.columns) if published else [],
        rows=rows,
        notes=notes,
    )
    return ReproResult(tables=[table])


def aut_compute(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """Table 4: per metric, the Base and ReDNA means over runs and their difference."""
    if published is None:
        raise ValueError("Table 4 needs its published table")
    model = published.match_model(ctx.compare_to)
    rows = []
    for label in ("Originality", "Elaboration"):
        base = as_number(runs["base"].metrics.get(label.lower()))
        redna = as_number(runs["redna"].metrics.get(label.lower()))
        delta = None if base is None or redna is None else redna - base
        ours = {"base": base, "redna": redna, "delta": delta}
        rows.append(ResultRow(label=label, ours=ours, published=published.values_of(model, label)))
    return ReproResult(tables=[published.beside(rows, model)])


def aut_runs(ctx: ReproContext) -> list[ReproRun]:
    return [
        ReproRun(
            key=agent,
            agent=agent,
            label=label,
            benchmark="aut",
            temperature=AUT_T,
            offline_model=AUT_OFFLINE_MODEL,
            offline_roles=AUT_OFFLINE_ROLES,
        )
        for label, agent in (("Base", "base"), ("ReDNA", "redna"))
    ]


def reproductions() -> list[Reproduction]:
    """The MUTATE paper's tables that runs of escape-v1 and aut-v1 reproduce."""
    return [
        Reproduction(
            key=f"{PAPER}:table1",
            title="Table 1: Base-agent results across eight models on MUTATE",
            runs=lambda ctx: [escape_run("base", "Base")],
            compute=with_judge_note(metric_table([("Base", "base")], scale=PERCENT), METRIC2),
            published="table1.yaml",
            description="base agent, ten scenarios x 4 attempts, T=0; judge for Metric 2",
        ),
        Reproduction(
            key=f"{PAPER}:table2",
            title="Table 2: Method comparison across models",
            runs=lambda ctx: _methods(METHODS),
            compute=with_judge_note(metric_table(METHODS, scale=PERCENT), METRIC2),
            published="table2.yaml",
            description="base, self-refine, escapeagent, redna; ten scenarios x 4 attempts, T=0",
        ),
        Reproduction(
            key=f"{PAPER}:table3",
            title="Table 3: Ablation of ReDNA components on GPT-5.4",
            runs=lambda ctx: _methods(ABLATION),
            compute=with_judge_note(metric_table(ABLATION, scale=PERCENT), METRIC2),
            published="table3.yaml",
            description="base, r-only (Reflect alone), redna; ten scenarios x 4 attempts, T=0",
        ),
        Reproduction(
            key=f"{PAPER}:table4",
            title="Table 4: Transfer to the AUT",
            runs=aut_runs,
            compute=with_judge_note(aut_compute, AUT_RATINGS),
            published="table4.yaml",
            description="aut benchmark: base and redna, T=0.7, 3 runs per object; judge rates",
        ),
        Reproduction(
            key=f"{PAPER}:table10",
            title="Table 10: Human–LLM agreement on the three Metric 2 criteria",
            runs=lambda ctx: [escape_run("base", "Base")],
            compute=with_judge_note(agreement_compute, "Judged steps of the base run"),
            published="table10.yaml",
            inputs={"human_scores": HUMAN_SCORES_FORMAT},
            description="judged base run paired with --input human_scores=PATH",
        ),
        Reproduction(
            key=f"{PAPER}:table15",
            title="Table 15: Robustness study at T=0.7, three runs per cell",
            runs=lambda ctx: _methods(METHODS, temperature=ROBUSTNESS_T, trials=ROBUSTNESS_RUNS),
            compute=with_judge_note(metric_table(METHODS, scale=PERCENT), METRIC2),
            published="table15.yaml",
            description="Table 2's methods at T=0.7, 3 runs each: mean and sample sd over runs",
        ),
    ]
