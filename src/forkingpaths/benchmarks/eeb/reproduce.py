"""`forkingpaths reproduce eeb:ITEM`: Tables 4-7 of EvoEmpirBench as the runs behind them and
how our numbers are read off those runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.eeb.expver import (
    DEFAULT_EVAL_LEVELS,
    DEFAULT_LEVELS_PER_ROUND,
    DEFAULT_ROUNDS,
    SMOKE_BUDGET,
    ExpVerConfig,
    learned_truths_file,
)
from forkingpaths.benchmarks.eeb.pinning import content_digest
from forkingpaths.core.records import ModelOptions
from forkingpaths.core.reproduce import (
    OFFLINE,
    ComputeFn,
    PublishedColumn,
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    RunView,
    as_number,
)

PAPER = "eeb"
OFFLINE_MODEL = "scripted/eeb-reference"
"""Stands in for the user's model with `--model scripted` (the quick suite's eeb model)."""
OFFLINE_LEARNER = "scripted/eeb-expver"
"""Stands in for the user's model in Table 6's learning with `--model scripted`."""
TEMPERATURE = 0.0
"""The paper states no sampling temperature; ours is 0 (said in every table's notes)."""
MAZE_PERCENT = ("Suc.Rate", "A.Explor", "A.Gold")
MATCH2_PERCENT = ("Suc.Rate", "R/M.S", "API Eff.")
"""Our rates are fractions; the paper prints these in percent."""
NO_TABLE = "eeb's tables are computed against their published table (data/published/*.yaml)"
"""Why `compute` refuses to run without the published table: its columns and rows."""
LEVELS_INPUT: Mapping[str, str] = {
    "levels": "a level file or folder as the `levels` option reads it (EvoEmpirBench's "
    "data/levels): its held-out levels are played instead of the shipped ones"
}
"""The optional input of every table: the paper's own levels (`EEBOptions.levels`)."""
TABLE4_SCORE = PublishedColumn(
    key="A.Score.table4",
    label="A.Score (inferred Table 4 rule)",
    direction="higher",
    decimals=2,
)
"""Extra column of Table 4: our episodes scored by the rule inferred from the table, set
against the same printed A.Score as the B.1 column (the paper prints one score)."""
TRUTH_INPUTS: Mapping[str, str] = {
    "maze_truths": "truths.json of `forkingpaths eeb learn maze --model M` (the ours rows)",
    "maze_truths_no_tw": "truths.json of `forkingpaths eeb learn maze --model M "
    "--no-truthweaver` (W/o.TW rows)",
    "match2_truths": "truths.json of `forkingpaths eeb learn match2 --model M`",
    "match2_truths_no_tw": "truths.json of `forkingpaths eeb learn match2 --model M "
    "--no-truthweaver`",
}
"""Table 6's learned memories, played as ordinary runs of the base agent (`truths=FILE`). A
file the user does not give is learned before the runs (`_prepare_truths`)."""
TRUTH_LEARNING: Mapping[str, tuple[str, bool]] = {
    "maze_truths": ("maze", True),
    "maze_truths_no_tw": ("maze", False),
    "match2_truths": ("match2", True),
    "match2_truths_no_tw": ("match2", False),
}
"""Input -> (game, TruthWeaver on) of the Agent-ExpVer learning that makes it."""
LEARNING_DIR = "learning"
"""Under the reproduction's folder: one Agent-ExpVer learning run per missing input."""


def _learning_budget(ctx: ReproContext) -> dict[str, int]:
    """`eeb learn`'s defaults, or the smallest learning under `--limit` (a smoke test)."""
    if ctx.limit is not None:
        return dict(SMOKE_BUDGET)
    return {
        "rounds": DEFAULT_ROUNDS,
        "levels_per_round": DEFAULT_LEVELS_PER_ROUND,
        "eval_levels": DEFAULT_EVAL_LEVELS,
    }


async def _prepare_truths(ctx: ReproContext) -> dict[str, Path]:
    """Learn every truths file of Table 6 the user did not give, with the user's model (the
    offline learner under `--model scripted`), as `eeb learn` would with its defaults: each
    game with and without TruthWeaver. Each file lands at `<out_dir>/<input>.json` once its
    learning has finished; a file already there is reused."""
    offline = ctx.model == OFFLINE
    model = OFFLINE_LEARNER if offline else str(ctx.model)
    base = ModelOptions() if offline else ctx.model_options
    # The paper states no temperature: the learning samples at Table 6's runs' temperature.
    options = base.model_copy(
        update={"params": base.params.model_copy(update={"temperature": TEMPERATURE})}
    )
    made: dict[str, Path] = {}
    for name, (game, truthweaver) in TRUTH_LEARNING.items():
        if name in ctx.inputs:
            continue
        config = ExpVerConfig(
            game=game,  # type: ignore[arg-type]
            truthweaver=truthweaver,
            **_learning_budget(ctx),
        )
        made[name] = await learned_truths_file(
            ctx.out_dir / f"{name}.json",
            ctx.out_dir / LEARNING_DIR / name,
            config,
            model,
            model_options=options,
            levels=_levels_path(ctx),
        )
    return made


def _learning_notes(ctx: ReproContext) -> list[str]:
    """Which truths files were learned here and with what budget."""
    out_dir = ctx.out_dir.resolve()
    learned = [
        name
        for name in TRUTH_LEARNING
        if name in ctx.inputs and Path(ctx.inputs[name]).resolve().parent == out_dir
    ]
    if not learned:
        return []
    full = (
        f"{DEFAULT_ROUNDS} rounds, {DEFAULT_LEVELS_PER_ROUND} training levels per round, Delta "
        f"on {DEFAULT_EVAL_LEVELS} held-out levels"
    )
    if ctx.limit is None:
        how = f"{full} (`eeb learn`'s defaults)"
    else:
        how = (
            "the smallest budget under --limit: 1 round, 1 training level, Delta on 1 held-out "
            f"level (without --limit: {full})"
        )
    notes = [
        f"Truths learned here by Agent-ExpVer, seed 0 ({', '.join(learned)}; the learning "
        f"runs are in {LEARNING_DIR}/): {how}."
    ]
    if _levels_path(ctx) is not None:
        notes.append(
            f"Agent-ExpVer learned on the training levels of {_levels_path(ctx)} (those in a "
            "folder named *train*) and measured Delta on its held-out levels; a game the path "
            "has no training level of (the release has no match-2 training boards) learned on "
            "the package's own training levels."
        )
    return notes


def _levels_path(ctx: ReproContext) -> str | None:
    """The `levels` input as an absolute path (a run resumed from elsewhere finds it)."""
    given = ctx.inputs.get("levels")
    return str(Path(given).resolve()) if given is not None else None


def _levels_note(ctx: ReproContext, counts: Mapping[str, Any]) -> list[str]:
    """Which levels were played when `--input levels` replaced the shipped ones: `counts`
    maps a kind (`maze`, `match-2 board`) to the number of levels played per run."""
    path = _levels_path(ctx)
    if path is None:
        return []
    played = ", ".join(
        f"each {kind.split()[0]} run played {n} {kind}{'' if n == 1 else 's'}"
        for kind, n in counts.items()
        if n is not None
    )
    return [
        f"Levels: the held-out levels of {path} (--input levels) instead of the shipped ones, "
        f"those in a folder named *train* left out: {played or 'none played'}."
    ]


def _episodes(run: RunView, group: str) -> int | None:
    value = run.metrics.get("by_group", {}).get(group, {}).get("episodes")
    return int(value) if isinstance(value, int | float) else None


def _ours_note(model: str) -> list[str]:
    """Tables 4-5 print `<model>-ours` rows (the model with Agent-ExpVer truths); our row
    plays the base agent without truths, so say so when one is the comparison."""
    if not model.endswith("-ours"):
        return []
    base = model.removesuffix("-ours")
    return [
        f"{model} is the paper's {base} with Agent-ExpVer truths; our row is the base agent "
        f"without truths, so compare it with {base}, or reproduce eeb:table6, which plays both."
    ]


def _run(
    ctx: ReproContext,
    key: str,
    label: str,
    split: str,
    *,
    benchmark_options: Mapping[str, Any] | None = None,
    truths: str | None = None,
) -> ReproRun:
    """The base agent (App. B.1) on the user's model over a whole test split, one episode
    per level, optionally with a truths file (Agent-ExpVer's policy, Eq. 5); the levels of
    the `levels` input when the user gives one. Both files are pinned by their content's
    digest (`levels_sha256`, `truths_sha256`)."""
    options = dict(benchmark_options or {})
    levels = _levels_path(ctx)
    if levels is not None:
        # The spec holds the path; the digest pins its content, so levels edited in place
        # make a new run (and a resumed old one refuses them) instead of a mix of both.
        options["levels"] = levels
        options["levels_sha256"] = content_digest(levels, "levels")
    agent_options: dict[str, str] = {}
    if truths:
        agent_options = {"truths": truths, "truths_sha256": content_digest(truths, "truths")}
    return ReproRun(
        key=key,
        agent="base",
        label=label,
        split=split,
        agent_options=agent_options,
        benchmark_options=options,
        temperature=TEMPERATURE,
        offline_model=OFFLINE_MODEL,
    )


def _group(run: RunView, group: str, percent: Sequence[str]) -> dict[str, float | None]:
    """A run's Table 3 metrics of one `by_group` entry, in the paper's units (the metrics
    that are numbers: `as_number`)."""
    values = run.metrics.get("by_group", {}).get(group, {})
    numbers = {key: as_number(value) for key, value in values.items()}
    return {
        key: number * (100.0 if key in percent else 1.0)
        for key, number in numbers.items()
        if number is not None
    }


def _table4_score(run: RunView) -> float | None:
    """Mean maze score of the run's episodes under the inferred Table 4 rule."""
    scores = [
        float(r.metrics["score_table4"])
        for r in run.records()
        if r.metrics.get("game") == "maze" and "score_table4" in r.metrics
    ]
    return sum(scores) / len(scores) if scores else None


def _models_table(group: str, percent: Sequence[str], *, table4: bool = False) -> ComputeFn:
    """Tables 4 and 5: one row, the user's model's run, beside the published model's row.
    Table 4 adds a column: A.Score by the inferred rule, beside the same printed A.Score."""

    def compute(
        runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
    ) -> ReproResult:
        if published is None:
            raise ValueError(f"{NO_TABLE} ({'Table 4' if table4 else 'Table 5'})")
        model = published.match_model(ctx.compare_to, ctx.model)
        ours = _group(runs["base"], group, percent)
        columns = list(published.columns)
        printed = published.values_of(model, "")
        if table4:
            columns.append(TABLE4_SCORE)
            ours[TABLE4_SCORE.key] = _table4_score(runs["base"])
            printed[TABLE4_SCORE.key] = printed["A.Score"]
        kind = "maze" if group.startswith("maze") else "match-2 board"
        notes = [
            *published.notes,
            *_ours_note(model),
            *_levels_note(ctx, {kind: _episodes(runs["base"], group)}),
        ]
        row = ResultRow(label=ctx.model or "ours", ours=ours, published=printed)
        table = published.beside([row], model, notes)
        table.columns = columns
        return ReproResult(tables=[table])

    return compute


def _table6_runs(ctx: ReproContext) -> list[ReproRun]:
    runs = []
    for game, split in (("maze", "maze"), ("match2", "match2")):
        for suffix, label, name in (
            ("base", "base", None),
            ("notw", "W/o.TW", f"{game}_truths_no_tw"),
            ("ours", "ours", f"{game}_truths"),
        ):
            path = ctx.inputs.get(name) if name else None
            truths = str(path) if path is not None else None
            runs.append(_run(ctx, f"{game}-{suffix}", label, split, truths=truths))
    return runs


def _table6(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    if published is None:
        raise ValueError(f"{NO_TABLE} (Table 6)")
    model = published.match_model(ctx.compare_to, ctx.model)
    rows = []
    for suffix, method in (("base", "base"), ("notw", "W/o.TW"), ("ours", "ours")):
        maze = _group(runs[f"maze-{suffix}"], "maze-all", MAZE_PERCENT)
        match2 = _group(runs[f"match2-{suffix}"], "match2-all", MATCH2_PERCENT)
        ours = {
            "maze_success": maze.get("Suc.Rate"),
            "maze_score": maze.get("A.Score"),
            "maze_steps": maze.get("A.Steps"),
            "match2_success": match2.get("Suc.Rate"),
            "match2_score": match2.get("A.Score"),
            "match2_rms": match2.get("R/M.S"),
        }
        rows.append(
            ResultRow(label=method, ours=ours, published=published.values_of(model, method))
        )
    played = {
        "maze": _episodes(runs["maze-base"], "maze-all"),
        "match-2 board": _episodes(runs["match2-base"], "match2-all"),
    }
    table = published.beside(rows, model, [*published.notes, *_levels_note(ctx, played)])
    return ReproResult(tables=[table], notes=_learning_notes(ctx))


TABLE7_RUNS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("maze-eeb", "EEB (Maze)", "maze", {}),
    ("maze-full-vision", "Full-Vision (Maze)", "maze", {"full_vision": True}),
    ("match2-eeb", "EEB (Match-2)", "match2", {}),
    ("match2-noprops", "NoProps (Match-2)", "match2", {"props": False}),
)
"""(run key, the setting as Table 7 prints it, split, benchmark options)."""


def _table7(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    if published is None:
        raise ValueError(f"{NO_TABLE} (Table 7)")
    model = published.match_model(ctx.compare_to, ctx.model)
    rows = []
    for key, method, split, _options in TABLE7_RUNS:
        if split == "maze":
            got = _group(runs[key], "maze-all", MAZE_PERCENT)
            steps = got.get("A.Steps")
        else:
            got = _group(runs[key], "match2-all", MATCH2_PERCENT)
            steps = got.get("R/M.S")  # Table 7's match-2 Ave.Steps are Table 5's R/M.S
        ours = {
            "episodes": got.get("episodes"),
            "success": got.get("Suc.Rate"),
            "score": got.get("A.Score"),
            "steps": steps,
        }
        rows.append(
            ResultRow(label=method, ours=ours, published=published.values_of(model, method))
        )
    played = {
        "maze": _episodes(runs["maze-eeb"], "maze-all"),
        "match-2 board": _episodes(runs["match2-eeb"], "match2-all"),
    }
    table = published.beside(rows, model, [*published.notes, *_levels_note(ctx, played)])
    return ReproResult(tables=[table])


def reproductions() -> list[Reproduction]:
    """Tables 4-7 of the paper."""
    return [
        Reproduction(
            key=f"{PAPER}:table4",
            title='Table 4: "All Levels" Metrics Across Models — Maze Navigation Game Performance',
            runs=lambda ctx: [_run(ctx, "base", "base", "maze")],
            compute=_models_table("maze-all", MAZE_PERCENT, table4=True),
            published="table4.yaml",
            optional_inputs=LEVELS_INPUT,
            description="base agent, 90 test mazes; A.Score also by the inferred Table 4 rule",
        ),
        Reproduction(
            key=f"{PAPER}:table5",
            title='Table 5: "All Levels" Metrics Across Models — Match-2 Elimination Game '
            "Performance",
            runs=lambda ctx: [_run(ctx, "base", "base", "match2")],
            compute=_models_table("match2-all", MATCH2_PERCENT),
            published="table5.yaml",
            optional_inputs=LEVELS_INPUT,
            description="base agent, 90 test match-2 boards",
        ),
        Reproduction(
            key=f"{PAPER}:table6",
            title="Table 6: Cross-Game Ablation Study of the TruthWeaver Framework",
            runs=_table6_runs,
            compute=_table6,
            published="table6.yaml",
            inputs=TRUTH_INPUTS,
            optional_inputs=LEVELS_INPUT,
            prepare=_prepare_truths,
            description="base agent on both games without truths, with truths learned without "
            "TruthWeaver and with the full Agent-ExpVer (learned first with the model, as "
            "`eeb learn` does by default)",
        ),
        Reproduction(
            key=f"{PAPER}:table7",
            title="Table 7: Model Performance Comparison on Maze and Match-2 Games",
            runs=lambda ctx: [
                _run(ctx, key, method, split, benchmark_options=options)
                for key, method, split, options in TABLE7_RUNS
            ],
            compute=_table7,
            published="table7.yaml",
            optional_inputs=LEVELS_INPUT,
            description="base agent: mazes as EEB and Full-Vision, match-2 as EEB and NoProps",
        ),
    ]
