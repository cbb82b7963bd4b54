"""CreativeBench's Table 3 as a reproduction: vanilla prompting, and the evolutionary baselines
when the user gives their evolved prompts, beside the published rows."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.creativebench.agents.solver import prompt_digest, read_prompt_file
from forkingpaths.benchmarks.creativebench.agents.steered import file_digest
from forkingpaths.benchmarks.creativebench.averaging import (
    DESCRIPTIONS,
    Averaging,
    subset_summary,
)
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.reproduce import (
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    ResultRow,
    ResultTable,
    RunView,
    as_number,
)

log = logging.getLogger(__name__)

InstanceIds = Callable[[str], Sequence[str]]
"""The instance ids of a split of the benchmark, in its order."""

OFFLINE = "scripted"
"""`--model scripted` (the runner's offline switch)."""
OFFLINE_SOLVER = "scripted/creative-solver"
OFFLINE_ROLES: Mapping[str, str] = MappingProxyType({"judge": "scripted/constraint-judge"})
"""`--model scripted`: the quick config's scripted solver and constraint judge."""

SPLIT = "all"
"""Table 3 reports Combo and Explore side by side: every run plays both subsets."""
TRIALS = 10
"""Table 3: mean ± sd over N = 10 independent runs (our trials, seeds 42 + t)."""
TEMPERATURE = 0.1
"""App. B.2: temperature 0.1, top-p 1.0."""

VANILLA = "Vanilla Prompt"
AVERAGED = (
    "explore_novelty",
    "explore_novelty_std",
    "explore_creativity",
    "explore_creativity_std",
)
"""The columns the Explore averaging changes (Pass@1 and Combo are the same under both)."""
PERCENT = ("combo_pass_at_1", "combo_pass_at_1_std", "explore_pass_at_1", "explore_pass_at_1_std")
"""Columns the paper prints in percent (our metrics are fractions)."""


@dataclass(frozen=True)
class Evolved:
    """An evolutionary baseline row: its run key, the input holding its prompt, and the
    `creativebench evolve --method` that writes that file."""

    key: str
    label: str
    input: str
    method: str


EVOLVED = (
    Evolved("alphaevolve", "AlphaEvolve", "alphaevolve_prompt", "island"),
    Evolved("gepa", "GEPA", "gepa_prompt", "gepa"),
)

VECTOR_INPUT = "evorepe_vector"
"""The optional input that adds the '+ EvoRePE' rows."""

EVOREPE_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "vanilla": "Vanilla Prompt + EvoRePE (Ours)",
        "alphaevolve": "AlphaEvolve + EvoRePE",
        "gepa": "GEPA + EvoRePE",
    }
)
"""Run key of a method -> its '+ EvoRePE' row as table3.yaml names it."""

HF_EXTRA = "pip install -e '.[hf]'"

VECTOR_HELP = (
    "a creativity vector of `forkingpaths creativebench evorepe-vector --prompt-file "
    "EVOLVED.json --out v.pt` (needs --model hf/MODEL and the hf extra: "
    f"{HF_EXTRA}): fills the '+ EvoRePE' rows of the methods run (the evorepe solver, steered "
    "at the file's layer with alpha 0.1)"
)

EVOREPE_MISSING = (
    "'+ EvoRePE' rows: 'ours' is empty; give --input evorepe_vector=v.pt (from `forkingpaths "
    "creativebench evorepe-vector --prompt-file EVOLVED.json --out v.pt`) with --model "
    f"hf/MODEL, a local transformers model (the hf extra: {HF_EXTRA}), to run them; "
    "'AlphaEvolve/GEPA + EvoRePE' also need that method's prompt input."
)

EVOREPE_OFFLINE = (
    "'+ EvoRePE' rows: not run under --model scripted (a scripted stand-in cannot be steered); "
    f"give --model hf/MODEL (the hf extra: {HF_EXTRA})."
)


def evolved_input_help(row: Evolved) -> str:
    """What `forkingpaths reproduce list` says of the row's optional input."""
    return (
        f"the prompt file of `forkingpaths creativebench evolve --method {row.method} --model M "
        f"--out FILE`: fills the {row.label} row (the prompt solver on split all without the "
        "file's training instances, 10 trials at temperature 0.1)"
    )


def missing_note(row: Evolved) -> str:
    """The note of an evolutionary row left to the paper's numbers."""
    return (
        f"{row.label}: 'ours' is empty; give --input {row.input}=FILE, the file of "
        f"`forkingpaths creativebench evolve --method {row.method} --model M --out FILE`, to run "
        "it."
    )


@dataclass(frozen=True)
class EvolvedPrompt:
    """An evolved prompt file as the reproduction reads it."""

    path: Path
    prompt: str
    method: str | None
    """`island` or `gepa` (None in a file that does not say)."""
    split: str | None
    """The split it was trained on (`settings.split`)."""
    train: tuple[str, ...]
    """The instances it was trained on (`settings.train_instances`)."""


def read_evolved(name: str, path: Path, expected: str) -> EvolvedPrompt:
    """The prompt file given as `--input NAME=PATH`, checked: a prompt, the method that row
    takes, and a list of training instance ids (when it names one)."""
    where = f"--input {name}={path}"
    try:
        prompt = read_prompt_file(path)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    method = data.get("method")
    if method is not None and method != expected:
        other = next((r for r in EVOLVED if r.method == method), None)
        hint = f"; give it as --input {other.input}" if other else ""
        raise ConfigError(
            f"{where}: field 'method': got {shown(method)}; this row takes a file of "
            f"`creativebench evolve --method {expected}`{hint}"
        )
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{where}: field 'settings': expected an object, got {shown(settings)}")
    train = settings.get("train_instances") or []
    if not isinstance(train, list) or not all(isinstance(i, str) for i in train):
        raise ConfigError(
            f"{where}: field 'settings.train_instances': expected a list of instance ids, "
            f"got {shown(train)}"
        )
    split = settings.get("split")
    return EvolvedPrompt(
        path=path.resolve(),
        prompt=prompt,
        method=method,
        split=split if isinstance(split, str) else None,
        train=tuple(train),
    )


def held_out(evolved: EvolvedPrompt, name: str, instance_ids: InstanceIds) -> tuple[str, ...]:
    """The split's instances the prompt was not trained on (evaluating on its training tasks
    would score what it was fitted to)."""
    pool = list(instance_ids(SPLIT))
    unknown = sorted(set(evolved.train) - set(pool))
    if unknown:
        log.warning(
            "--input %s=%s: training instances not in split %s (nothing to leave out for them): %s",
            name,
            evolved.path,
            SPLIT,
            ", ".join(unknown),
        )
    trained = set(evolved.train)
    kept = tuple(i for i in pool if i not in trained)
    if not kept:
        raise ConfigError(
            f"--input {name}={evolved.path}: the prompt was trained on every instance of split "
            f"{SPLIT}; evolve it with a smaller --train to leave some out for evaluation"
        )
    return kept


def table3_runs(ctx: ReproContext, instance_ids: InstanceIds) -> Sequence[ReproRun]:
    """The vanilla solver, the prompt solver for each evolved prompt given, and with a vector on
    an `hf/` model the evorepe solver for each of these: both subsets, 10 trials at temperature
    0.1 (App. B.2)."""
    methods: list[tuple[str, str, dict[str, str], tuple[str, ...] | None]] = [
        ("vanilla", VANILLA, {}, None)
    ]
    for row in EVOLVED:
        if row.input in ctx.inputs:
            evolved = read_evolved(row.input, Path(ctx.inputs[row.input]), row.method)
            pinned = {
                "prompt_file": str(evolved.path),
                "prompt_sha256": prompt_digest(evolved.prompt),
            }
            kept = held_out(evolved, row.input, instance_ids) if evolved.train else None
            methods.append((row.key, row.label, pinned, kept))
    runs = [
        _run(key, "prompt" if prompt else "vanilla", label, prompt, kept)
        for key, label, prompt, kept in methods
    ]
    vector = steering_vector(ctx)
    if vector is not None:
        steering = {"evorepe_vector": str(vector), "evorepe_sha256": file_digest(vector)}
        runs += [
            _run(f"{key}_evorepe", "evorepe", EVOREPE_LABELS[key], {**steering, **prompt}, kept)
            for key, _label, prompt, kept in methods
        ]
    return runs


def _run(
    key: str, agent: str, label: str, options: Mapping[str, str], kept: tuple[str, ...] | None
) -> ReproRun:
    return ReproRun(
        key=key,
        agent=agent,
        label=label,
        split=SPLIT,
        instances=kept,
        trials=TRIALS,
        temperature=TEMPERATURE,
        agent_options=dict(options),
        offline_model=OFFLINE_SOLVER,
        offline_roles=OFFLINE_ROLES,
    )


def steering_vector(ctx: ReproContext) -> Path | None:
    """The vector file when the '+ EvoRePE' rows run: given, and the model a local `hf/` one
    (None under `--model scripted`, which cannot be steered; refused for any other model)."""
    if VECTOR_INPUT not in ctx.inputs or ctx.model == OFFLINE:
        return None
    if not (ctx.model or "").startswith("hf/"):
        raise ConfigError(
            f"--input {VECTOR_INPUT}: the '+ EvoRePE' rows steer a local transformers model; "
            f"pass --model hf/MODEL (the hf extra: {HF_EXTRA}), got --model {ctx.model}"
        )
    return Path(ctx.inputs[VECTOR_INPUT]).resolve()


def table3(
    runs: Mapping[str, RunView], published: PublishedTable | None, ctx: ReproContext
) -> ReproResult:
    """Every published row of the compared model; ours filled for each row that was run. A
    second table gives Explore Novelty and Creativity of the same records under the other
    averaging (`averaging`: the paper's Eq. 4 or the release's evaluation script)."""
    if published is None:
        raise ValueError("table3 needs its published table")
    model = published.match_model(ctx.compare_to)
    by_label = {
        VANILLA: "vanilla",
        **{r.label: r.key for r in EVOLVED},
        **{label: f"{key}_evorepe" for key, label in EVOREPE_LABELS.items()},
    }
    used = _averaging(runs["vanilla"])
    other: Averaging = "release" if used == "paper" else "paper"
    rows, rescored = [], []
    for printed in (r for r in published.rows if r.model == model):
        run = runs.get(by_label.get(printed.method, ""))
        ours: dict[str, float | None] = dict.fromkeys(printed.values)
        if run is not None:
            ours = {c.key: _scaled(run.metrics.get(c.key), c.key) for c in published.columns}
            rescored.append(
                ResultRow(
                    label=printed.method,
                    ours=explore_cells(run, other),
                    published={k: printed.values.get(k) for k in AVERAGED},
                )
            )
        rows.append(ResultRow(label=printed.method, ours=ours, published=dict(printed.values)))
    notes = list(published.notes)
    for row in EVOLVED:
        if row.key in runs:
            notes.append(_evolved_note(row, runs[row.key], ctx))
        else:
            notes.append(missing_note(row))
    notes.append(_evorepe_note(runs, ctx))
    embedding = runs["vanilla"].metrics.get("embedding") or "unknown"
    notes.append(f"Novelty's embedding here: {embedding} (the paper's: CodeXEmbed).")
    notes.append(averaging_note(used, other))
    second = ResultTable(
        title=f"{published.table}, Explore under the {other} averaging: Novelty and Creativity "
        f"{DESCRIPTIONS[other]}, from the same records",
        columns=[published.column(k) for k in AVERAGED],
        rows=rescored,
        published_model=model,
        notes=[
            f"The same episodes as the table above, scored as `forkingpaths run ... -b "
            f"explore_averaging={other}` would; Pass@1 and Combo do not depend on the averaging."
        ],
    )
    return ReproResult(tables=[published.beside(rows, model, notes), second])


def averaging_note(used: str, other: str) -> str:
    """Which averaging the main table's Explore Novelty and Creativity follow."""
    return (
        f"Explore Novelty and Creativity here: explore_averaging={used}, {DESCRIPTIONS[used]}; "
        f"the next table: explore_averaging={other}, {DESCRIPTIONS[other]}."
    )


def _averaging(run: RunView) -> Averaging:
    """The averaging a run was scored under (its metrics say; runs from before the option
    followed the paper)."""
    value = run.metrics.get("explore_averaging", "paper")
    return "release" if value == "release" else "paper"


def explore_cells(run: RunView, averaging: Averaging) -> dict[str, float | None]:
    """The `AVERAGED` cells of a run's Explore episodes re-scored under `averaging`."""
    records = [
        r for r in run.records() if r.status == "ok" and r.initial_info.get("subset") == "explore"
    ]
    summary = subset_summary(records, averaging) if records else {}
    return {k: as_number(summary.get(k.removeprefix("explore_"))) for k in AVERAGED}


def _evolved_note(row: Evolved, run: RunView, ctx: ReproContext) -> str:
    evolved = read_evolved(row.input, Path(ctx.inputs[row.input]), row.method)
    trained = (
        f"trained on {len(evolved.train)} {evolved.split or 'split'} instance(s), left out here"
        if evolved.train
        else "its file names no training instances, so none is left out"
    )
    return (
        f"{row.label}: the prompt solver with the instruction in {evolved.path} "
        f"(sha256 {prompt_digest(evolved.prompt)[:12]}, {trained}) on both subsets, "
        f"{run.metrics.get('episodes', 0)} episode(s); the search that wrote it is not part of "
        "this reproduction (its calls and cost are in the file)."
    )


def _evorepe_note(runs: Mapping[str, RunView], ctx: ReproContext) -> str:
    if VECTOR_INPUT not in ctx.inputs:
        return EVOREPE_MISSING
    if "vanilla_evorepe" not in runs:
        return EVOREPE_OFFLINE
    steered = [EVOREPE_LABELS[k.removesuffix("_evorepe")] for k in runs if k.endswith("_evorepe")]
    return (
        f"'+ EvoRePE' rows: the evorepe solver on {ctx.model} steered by "
        f"{Path(ctx.inputs[VECTOR_INPUT]).resolve()} (the file's layer, alpha 0.1; a judge "
        f"played by the same model stays unsteered), run for {', '.join(steered)}."
    )


def _scaled(value: object, key: str) -> float | None:
    number = as_number(value)
    return None if number is None else number * (100.0 if key in PERCENT else 1.0)


def reproductions(instance_ids: InstanceIds) -> list[Reproduction]:
    """Table 3; `instance_ids` lists a split's instances (an evolved prompt's row leaves out
    the instances it was trained on)."""
    return [
        Reproduction(
            key="creativebench:table3",
            title="Table 3: Results are reported as mean ± standard deviation over N = 10 "
            "independent runs",
            runs=lambda ctx: table3_runs(ctx, instance_ids),
            compute=table3,
            published="table3.yaml",
            optional_inputs={
                **{r.input: evolved_input_help(r) for r in EVOLVED},
                VECTOR_INPUT: VECTOR_HELP,
            },
            description="vanilla solver, Combo + Explore, 10 trials at temperature 0.1; "
            "AlphaEvolve and GEPA rows run from --input alphaevolve_prompt= / gepa_prompt= "
            "(evolved prompt files); '+ EvoRePE' rows from --input evorepe_vector= with "
            "--model hf/MODEL",
        )
    ]
