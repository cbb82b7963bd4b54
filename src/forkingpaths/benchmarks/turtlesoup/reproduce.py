"""TurtleSoup-Bench's tables as reproductions: Table 2 (scores and Reduce against a human
baseline) and Table 3 (Mosaic-Agent's ablations), on our corpus or the paper's release."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from forkingpaths.benchmarks.turtlesoup.human_baseline import (
    category_scores,
    load_human_baseline,
)
from forkingpaths.benchmarks.turtlesoup.importers import load_corpus_problems
from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES
from forkingpaths.benchmarks.turtlesoup.sampling import MODEL_SEED
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.reproduce import (
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    RunView,
    metric_table,
)

OFFLINE_QUESTIONER = "scripted/turtlesoup-questioner"
OFFLINE_ROLES: Mapping[str, str] = MappingProxyType(
    {"responder": "scripted/turtlesoup-responder", "judge": "scripted/turtlesoup-judge"}
)
"""`--model scripted`: the scripted questioner, responder and judge (the quick configs')."""

LANGUAGE_ROWS = (("zh", "Ch"), ("en", "En"))
"""Table 2's rows of a model: our language -> the paper's label."""
HUMAN_ROW = "Human Baseline"

PUZZLES_INPUT = "puzzles"
"""Optional input of both tables: the puzzles to play instead of the shipped corpus."""
PUZZLES_HELP = (
    "a puzzle file or folder played instead of the shipped corpus (the `puzzles` option: our "
    "YAML, or the paper's release, e.g. TurtleSoup-Bench/data with its en/ and zh/ folders)"
)

TABLE3_ROWS: tuple[tuple[str, str, str, Mapping[str, object]], ...] = (
    ("Mosaic-Agent", "mosaic", "mosaic", {}),
    ("w/o Deliberation", "no_deliberation", "mosaic", {"deliberation": False}),
    ("w/o Meta-Cog.", "no_metacognition", "mosaic", {"metacognition": False}),
    ("w/o Pruning", "no_pruning", "mosaic", {"pruning": False}),
    ("w/o Key Clue", "no_key_clue", "mosaic", {"key_clues": False}),
    ("w/o All agents", "baseline", "baseline", {}),
)
"""Table 3: (row as printed, run key, agent, agent options)."""

HUMAN_INPUT = "human_baseline"
PAPER_HUMAN_BASELINE = Path(__file__).parent / "data" / "human_baseline_paper.yaml"
"""The paper's human row of Table 2: Reduce is measured against it unless the user gives
their own baseline (`--input human_baseline=PATH`)."""


def _run(key: str, agent: str, label: str, **fields: object) -> ReproRun:
    """A run of the paper's protocol (§5.1, App. D.1): temperature 0, seed 42, one pass."""
    return ReproRun(
        key=key,
        agent=agent,
        label=label,
        temperature=0.0,
        model_seed=MODEL_SEED,
        offline_model=OFFLINE_QUESTIONER,
        offline_roles=OFFLINE_ROLES,
        **fields,  # type: ignore[arg-type]
    )


def puzzles_input(ctx: ReproContext) -> Path | None:
    """The user's `--input puzzles=PATH`, resolved as the `puzzles` option keeps it (a resumed
    run finds the same files); None: the shipped corpus."""
    path = ctx.inputs.get(PUZZLES_INPUT)
    return None if path is None else Path(path).expanduser().resolve()


def corpus_options(ctx: ReproContext) -> dict[str, object]:
    """The runs' benchmark options: `puzzles` when the user gave a corpus, none otherwise."""
    path = puzzles_input(ctx)
    return {} if path is None else {"puzzles": str(path)}


SHIPPED_CORPUS_NOTE = "Puzzles played: the shipped corpus (ours, 60 puzzles x en, zh)"


def corpus_note(ctx: ReproContext) -> str:
    """Which puzzles the runs played, for the table's notes."""
    path = puzzles_input(ctx)
    return f"Puzzles played: {path}" if path else SHIPPED_CORPUS_NOTE


def table2_runs(ctx: ReproContext) -> Sequence[ReproRun]:
    """One Mosaic-Agent run over both languages of every category; the user's model is
    questioner and responder (§5.1), the judge the questioner's model unless `--role judge`."""
    options = corpus_options(ctx)
    return [_run("mosaic", "mosaic", "Mosaic-Agent", split="all", benchmark_options=options)]


def table3_instances(puzzles: Path | None = None) -> tuple[str, ...]:
    """The Chinese Original stories (Table 3's split) of the shipped corpus or of `puzzles`;
    a corpus without any is refused."""
    # Not logged here: each run logs the corpus's warnings when its benchmark loads it.
    loaded, _ = load_corpus_problems(puzzles, language="zh")
    instances = tuple(p.id for p in loaded if p.category == "original")
    if not instances:
        raise ConfigError(
            f"--input {PUZZLES_INPUT}={puzzles}: no Chinese Original story (Table 3 plays "
            "them; the release keeps them in zh/Original_Data.json)"
        )
    return instances


def table3_runs(ctx: ReproContext) -> Sequence[ReproRun]:
    """Mosaic-Agent and its five ablations on the Chinese Original stories."""
    instances = table3_instances(puzzles_input(ctx))
    return [
        _run(
            key,
            agent,
            label,
            split="zh",
            instances=instances,
            agent_options=dict(options),
            benchmark_options=corpus_options(ctx),
        )
        for label, key, agent, options in TABLE3_ROWS
    ]


_TABLE3_METRICS = metric_table([(label, key) for label, key, _, _ in TABLE3_ROWS])


def compute_table3(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """One row per run (`metric_table`), noting which puzzles were played."""
    result = _TABLE3_METRICS(runs, published, ctx)
    for table in result.tables:
        table.notes.append(corpus_note(ctx))
    return result


def compute_table2(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """Our Ch and En rows (Overall by category and Reduce = score - human score of the
    category) and the human baseline row, each beside the published one."""
    if published is None:
        raise ValueError("turtlesoup:table2 needs its published table")
    human = load_human_baseline(ctx.inputs.get(HUMAN_INPUT, PAPER_HUMAN_BASELINE))
    model = published.match_model(ctx.compare_to)
    by_group = runs["mosaic"].metrics.get("by_group") or {}
    rows: list[ResultRow] = []
    for language, label in LANGUAGE_ROWS:
        scores = category_scores(by_group, language)
        ours: dict[str, float | None] = {}
        for category in CATEGORIES:
            ours[category] = scores[category]
            ours[f"{category}_reduce"] = human.reduce(category, scores[category])
        rows.append(ResultRow(label=label, ours=ours, published=published.values_of(model, label)))
    given = HUMAN_INPUT in ctx.inputs
    # Our human row is the user's baseline; the paper's own row set beside itself would read
    # as a measurement that agrees exactly, so it stays blank.
    rows.append(
        ResultRow(
            label=HUMAN_ROW,
            ours={c: human.categories.get(c) if given else None for c in CATEGORIES},
            published={c: published.value(HUMAN_ROW, HUMAN_ROW, c) for c in CATEGORIES},
        )
    )
    whose = "" if given else "the paper's human row, "
    notes = [*published.notes, corpus_note(ctx), f"Human baseline: {whose}{human.source}"]
    if human.puzzles:
        counted = ", ".join(f"{c} {n}" for c, n in human.puzzles.items())
        notes.append(f"Human baseline averaged over puzzles: {counted}")
    return ReproResult(tables=[published.beside(rows, model, notes)])


def reproductions() -> list[Reproduction]:
    """turtlesoup:table2 and turtlesoup:table3."""
    return [
        Reproduction(
            key="turtlesoup:table2",
            title="Table 2: Mosaic-Agent's Overall score by category and language, and its "
            "Reduce against the human baseline",
            runs=table2_runs,
            compute=compute_table2,
            published="table2.yaml",
            optional_inputs={
                HUMAN_INPUT: "human Overall scores, per category or per puzzle (YAML/JSON); "
                "default: the paper's human row (turtlesoup/data/human_baseline_paper.yaml)",
                PUZZLES_INPUT: PUZZLES_HELP,
            },
            description="Mosaic-Agent on both languages, questioner = responder = --model, "
            "seed 42, temperature 0; Reduce = score - human score of the category",
        ),
        Reproduction(
            key="turtlesoup:table3",
            title="Table 3: Ablations of Mosaic-Agent",
            runs=table3_runs,
            compute=compute_table3,
            published="table3.yaml",
            optional_inputs={PUZZLES_INPUT: PUZZLES_HELP},
            description="Mosaic-Agent and 5 ablations on the Chinese Original stories, "
            "seed 42, temperature 0",
        ),
    ]
