"""`forkingpaths reproduce PAPER:ITEM`: run the protocol behind a paper's table as ordinary runs,
then lay our numbers beside the published ones."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.errors import ConfigError, NameNotFound
from forkingpaths.core.records import EpisodeRecord, ModelOptions, RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import PAPERS, make_benchmark
from forkingpaths.core.reproduce import (
    OFFLINE,
    PublishedTable,
    ReproContext,
    Reproduction,
    ReproResult,
    ReproRun,
    load_published,
)
from forkingpaths.models.factory import check_model_access
from forkingpaths.report.reproduce import (
    as_sentence,
    rich_result_table,
    write_reproduction_page,
)
from forkingpaths.report.tables import Link, Table
from forkingpaths.runner.estimate import estimate_run
from forkingpaths.runner.run import (
    RunResult,
    default_run_id,
    execute_run,
    validate_spec,
    with_default_roles,
)
from forkingpaths.runner.rundir import load_records

log = logging.getLogger(__name__)

RESULT_FILE = "reproduction.json"
"""In a reproduction's directory: what was run and what it measured."""


@dataclass
class FinishedRun:
    """A run of a reproduction as `compute` reads it (`core.reproduce.RunView`)."""

    key: str
    path: Path
    metrics: Mapping[str, Any]
    summary: Mapping[str, Any]

    def records(self) -> Iterator[EpisodeRecord]:
        return iter(load_records(self.path, transcripts=False))


@dataclass
class ReproOutcome:
    """What a reproduction produced."""

    reproduction: Reproduction
    result: ReproResult
    out_dir: Path
    """The reproduction's directory (report.html, reproduction.json, figures)."""
    runs: dict[str, Path] = field(default_factory=dict)
    """Run key -> run directory."""
    budget_exhausted: bool = False
    """`--budget-usd` stopped a run before its end: the tables are partial."""
    errored: list[RunResult] = field(default_factory=list)
    """Runs with errored episodes (their tables count only the finished ones)."""


@dataclass(frozen=True)
class Listed:
    """A reproduction and the benchmark that lists it."""

    reproduction: Reproduction
    benchmark: str
    published: PublishedTable | None


def list_reproductions(paper: str | None = None) -> list[Listed]:
    """Every reproduction (of one paper), in the papers' order."""
    papers = [paper] if paper else list(PAPERS)
    out: list[Listed] = []
    for name in papers:
        if name not in PAPERS:
            raise NameNotFound("paper", name, list(PAPERS))
        for bench_name in PAPERS[name]:
            bench = make_benchmark(bench_name)
            for repro in bench.reproductions():
                if repro.key.split(":", 1)[0] != name:
                    continue
                published = (
                    load_published(bench.published_dir() / repro.published)
                    if repro.published
                    else None
                )
                out.append(Listed(repro, bench_name, published))
    return out


def find_reproduction(key: str) -> Listed:
    """A reproduction by `paper:item`; an unknown one is refused with what exists."""
    paper, _, item = key.lower().partition(":")
    if paper not in PAPERS:
        raise NameNotFound("paper (PAPER:ITEM)", paper, list(PAPERS))
    listed = list_reproductions(paper)
    if not item:
        raise ConfigError(
            f"name a table or figure of {paper} as {paper}:ITEM: "
            f"{', '.join(e.reproduction.key for e in listed)}"
        )
    for entry in listed:
        if entry.reproduction.key == f"{paper}:{item}":
            return entry
    raise NameNotFound(f"table or figure of {paper}", item, [e.reproduction.key for e in listed])


def _instances(bench: Benchmark, run: ReproRun, split: str, limit: int | None) -> list[str] | None:
    if limit is None:
        return list(run.instances) if run.instances else None
    if run.instances:
        return list(run.instances)[:limit]
    return [i.id for i in bench.sample_instances(split, limit)]


def plan_specs(
    listed: Listed,
    ctx: ReproContext,
    *,
    model_options: ModelOptions | None = None,
    roles: Mapping[str, RoleModel] | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
) -> dict[str, RunSpec]:
    """The RunSpec of every run of a reproduction: the paper's protocol with the user's model
    (or each run's scripted stand-in under `--model scripted`) and role models."""
    offline = ctx.model == OFFLINE
    base = model_options or ModelOptions()
    specs: dict[str, RunSpec] = {}
    for run in listed.reproduction.runs(ctx):
        name = run.benchmark or listed.benchmark
        accepted = make_benchmark(name).Options.model_fields
        options = {
            **run.benchmark_options,
            **{k: v for k, v in (benchmark_options or {}).items() if k in accepted},
        }
        bench = make_benchmark(name, **options)
        split = run.split or bench.default_split
        if not run.needs_model:
            model = None
        elif offline:
            if run.offline_model is None:
                raise ConfigError(
                    f"{listed.reproduction.key} run {run.key!r} has no scripted stand-in; "
                    "pass a real --model"
                )
            model = run.offline_model
        elif ctx.model is None:
            raise ConfigError(
                f"{listed.reproduction.key} needs --model (a provider/model id, or "
                f"{OFFLINE!r} for the offline stand-ins)"
            )
        else:
            model = ctx.model
        params = base.params.model_copy(
            update={
                "temperature": run.temperature if run.temperature is not None else 0.0,
                "seed": run.model_seed,
            }
        )
        fixed = run.offline_roles if offline else run.roles
        run_roles = {role: RoleModel(model=m) for role, m in fixed.items()}
        run_roles.update({r: m for r, m in (roles or {}).items() if r in bench.model_roles})
        specs[run.key] = RunSpec(
            benchmark=bench.id,
            split=split,
            instances=_instances(bench, run, split, ctx.limit),
            trials=run.trials,
            seed=run.seed,
            agent=run.agent,
            agent_options=dict(run.agent_options),
            model=model,
            model_options=base.model_copy(update={"params": params})
            if model and not offline
            else ModelOptions(params=params),
            benchmark_options=options,
            roles=run_roles,
        )
    return specs


def setup_digest(
    model_options: ModelOptions | None,
    roles: Mapping[str, RoleModel],
    benchmark_options: Mapping[str, Any] | None = None,
) -> str:
    """A short digest of what else the user set (endpoint, role models, `-b` options), '' when
    nothing: two setups of one table keep apart pages."""
    options = model_options or ModelOptions()
    if options == ModelOptions() and not roles and not benchmark_options:
        return ""
    setup = {
        "model_options": options.model_dump(mode="json"),
        "roles": {r: m.model_dump(mode="json") for r, m in sorted(roles.items())},
        "benchmark_options": dict(sorted((benchmark_options or {}).items())),
    }
    return hashlib.sha256(json.dumps(setup, sort_keys=True, default=str).encode()).hexdigest()[:6]


def reproduction_dir(runs_dir: Path, key: str, ctx: ReproContext, setup: str = "") -> Path:
    """`runs/reproduce-mutate-table2-<model>[-limitN][-vs-<published model>][-<digest>]`: one
    directory per table, model, limit, comparison, and set of inputs and role models."""
    model = re.sub(r"[^A-Za-z0-9.]+", "-", ctx.model or "reference").strip("-")
    name = f"reproduce-{key.replace(':', '-')}-{model}"
    if ctx.limit is not None:
        name += f"-limit{ctx.limit}"
    if ctx.compare_to is not None:
        name += "-vs-" + re.sub(r"[^A-Za-z0-9.]+", "-", ctx.compare_to).strip("-").lower()
    if ctx.inputs or setup:
        given = sorted((n, str(Path(p).resolve())) for n, p in ctx.inputs.items())
        name += "-" + hashlib.sha256(repr((given, setup)).encode()).hexdigest()[:6]
    return Path(runs_dir) / name


def _paper_benchmarks(listed: Listed) -> list[Benchmark]:
    """The benchmarks of the reproduction's paper (MUTATE's escape and aut)."""
    return [make_benchmark(name) for name in PAPERS[listed.reproduction.key.split(":", 1)[0]]]


def check_benchmark_options(listed: Listed, options: Mapping[str, Any]) -> None:
    """A `-b` option that no benchmark of the paper has is refused, naming theirs."""
    if not options:
        return
    accepted = {name for bench in _paper_benchmarks(listed) for name in bench.Options.model_fields}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(
            f"-b {', '.join(unknown)}: no benchmark of {listed.reproduction.key} has such an "
            f"option; theirs: {', '.join(sorted(accepted))}"
        )


def check_roles(listed: Listed, roles: Mapping[str, RoleModel]) -> None:
    """A `--role` that no benchmark of the paper has is refused (a typo would leave the judge
    out after the money is spent)."""
    if not roles:
        return
    known = {role for bench in _paper_benchmarks(listed) for role in bench.model_roles}
    unknown = sorted(set(roles) - known)
    if unknown:
        raise ConfigError(
            f"--role {', '.join(unknown)}: {listed.reproduction.key} has no such role; "
            f"its runs' roles: {', '.join(sorted(known)) or '(none)'}"
        )


def check_inputs(listed: Listed, inputs: Mapping[str, Path]) -> None:
    """Every input the reproduction needs is given and exists; nothing unknown is given."""
    repro = listed.reproduction
    known = {**repro.inputs, **repro.optional_inputs}
    for name, path in inputs.items():
        if name not in known:
            allowed = ", ".join(known) or "(none)"
            raise ConfigError(
                f"--input {name}: {repro.key} takes no such input; it takes: {allowed}"
            )
        if not str(path).strip() or str(path) == ".":
            raise ConfigError(f"--input {name}=: give a path ({known[name]})")
        if not Path(path).exists():
            raise ConfigError(f"--input {name}={path}: no such file or folder")
    missing = [n for n in repro.inputs if n not in inputs]
    if missing and repro.prepare is None:
        described = "; ".join(f"{n}=PATH ({repro.inputs[n]})" for n in missing)
        raise ConfigError(f"{repro.key} needs --input {described}")


async def reproduce(
    key: str,
    *,
    model: str | None,
    model_options: ModelOptions | None = None,
    roles: Mapping[str, RoleModel] | None = None,
    compare_to: str | None = None,
    inputs: Mapping[str, Path] | None = None,
    limit: int | None = None,
    runs_dir: Path = Path("runs"),
    options: RunOptions | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
) -> ReproOutcome:
    """Run (or resume) every run of a reproduction, then compute and write its tables.

    Everything the user gave is checked before anything runs: the table, the inputs, the
    published model, the role names and every model's access (a missing key fails now, not
    after the first run has spent money)."""
    listed = find_reproduction(key)
    repro = listed.reproduction
    given = {k: Path(v) for k, v in (inputs or {}).items()}
    check_inputs(listed, given)
    if compare_to is not None and listed.published is not None:
        listed.published.match_model(compare_to)  # refuse an unknown model before running
    ctx = ReproContext(
        model=model,
        compare_to=compare_to,
        inputs=given,
        limit=limit,
        benchmark_options=dict(benchmark_options or {}),
    )
    roles = dict(roles or {})
    check_roles(listed, roles)
    variant = ctx.benchmark_options
    check_benchmark_options(listed, variant)
    if model is not None and model != OFFLINE:
        check_model_access(model, model_options or ModelOptions())
    for role in roles.values():
        check_model_access(role.model, role.options)
    out_dir = reproduction_dir(
        runs_dir, repro.key, ctx, setup_digest(model_options, roles, variant)
    )
    ctx = replace(
        ctx, out_dir=out_dir, model_options=model_options or ModelOptions(), runs_dir=runs_dir
    )
    if repro.prepare is not None and any(n not in given for n in repro.inputs):
        if model is None:
            raise ConfigError(f"{repro.key} needs --model to make its inputs")
        out_dir.mkdir(parents=True, exist_ok=True)
        made = await repro.prepare(ctx)
        ctx = replace(ctx, inputs={**made, **given})
    specs = plan_specs(
        listed, ctx, model_options=model_options, roles=roles, benchmark_options=variant
    )
    for spec in specs.values():
        bench = make_benchmark(spec.benchmark, **spec.benchmark_options)
        validate_spec(with_default_roles(spec, bench), bench)
    options = options or RunOptions()
    budget = options.budget_usd
    spent = 0.0
    exhausted = False
    views: dict[str, FinishedRun] = {}
    # The specs as the runs recorded them (the benchmark's default roles filled in).
    ran: dict[str, RunSpec] = {}
    errored: list[RunResult] = []
    for run_key, spec in specs.items():
        run_options = options
        if budget is not None:
            if spent >= budget:
                exhausted = True
                break
            run_options = options.model_copy(update={"budget_usd": budget - spent})
        log.info("%s: run %s (%s)", repro.key, run_key, default_run_id(spec))
        result = await execute_run(spec, run_options, runs_dir=runs_dir)
        spent += float(result.metrics.get("usage", {}).get("cost_usd", 0.0))
        if result.errored:
            errored.append(result)
        summary = result.run_dir.read_metrics().model_dump(mode="json")
        ran[run_key] = result.run_dir.read_header().spec
        views[run_key] = FinishedRun(
            key=run_key,
            path=result.run_dir.path,
            metrics=summary.get("metrics", {}),
            summary=summary,
        )
        if result.budget_exhausted:
            exhausted = True
            break
    out_dir.mkdir(parents=True, exist_ok=True)
    if exhausted:
        computed = ReproResult(notes=["The --budget-usd was spent before every run finished."])
    else:
        computed = repro.compute(views, listed.published, ctx)
    stand_ins = sorted(
        {m for spec in ran.values() for m in _models_of(spec) if m.startswith("scripted/")}
    )
    if variant:
        shown = ", ".join(f"{k}={v}" for k, v in variant.items())
        computed.notes.append(
            f"Benchmark options on every run that has them: {shown} (-b); the rest of the "
            "protocol is the paper's."
        )
    if stand_ins:
        computed.notes.append(
            f"Offline: scripted stand-ins played these runs ({', '.join(stand_ins)}); their "
            "numbers test the pipeline, not a language model."
        )
    if limit is not None:
        computed.notes.append(
            f"Partial protocol: at most {limit} instance(s) per run (--limit); the paper's "
            "numbers are over the whole split."
        )
    outcome = ReproOutcome(
        reproduction=repro,
        result=computed,
        out_dir=out_dir,
        runs={k: v.path for k, v in views.items()},
        budget_exhausted=exhausted,
        errored=errored,
    )
    _write_outcome(outcome, replace(ctx, inputs=given), ran)
    return outcome


def run_reproduction(key: str, **kwargs: Any) -> ReproOutcome:
    """`reproduce` for synchronous callers (scripts, notebooks without a running loop)."""
    kwargs.setdefault("options", RunOptions(progress=False))
    return asyncio.run(reproduce(key, **kwargs))


def rebuild_command(key: str, ctx: ReproContext) -> str:
    """The command that rebuilds a reproduction's page: the user's own flags, shell-quoted."""
    parts = ["forkingpaths", "reproduce", key]
    if ctx.model:
        parts += ["--model", ctx.model]
    if ctx.compare_to:
        parts += ["--compare-to", ctx.compare_to]
    for name, path in ctx.inputs.items():
        parts += ["--input", f"{name}={path}"]
    if ctx.limit is not None:
        parts += ["--limit", str(ctx.limit)]
    for key, value in ctx.benchmark_options.items():
        parts += ["-b", f"{key}={value}"]
    return shlex.join(parts)


def _models_of(spec: RunSpec) -> list[str]:
    """The agent's model and every role's."""
    return [m for m in [spec.model, *(r.model for r in spec.roles.values())] if m]


def _write_outcome(outcome: ReproOutcome, ctx: ReproContext, specs: Mapping[str, RunSpec]) -> None:
    out_dir = outcome.out_dir
    runs_table = Table(
        title="Runs behind the table",
        header=["run", "agent", "model", "roles", "instances", "trials", "report"],
        rows=[
            [
                key,
                specs[key].agent,
                specs[key].model or "(none)",
                ", ".join(f"{r}: {m.model}" for r, m in specs[key].roles.items()) or "–",
                "all" if specs[key].instances is None else len(specs[key].instances or []),
                specs[key].trials,
                Link("report", _relative(path / "report.html", out_dir)),
            ]
            for key, path in outcome.runs.items()
        ],
    )
    write_reproduction_page(
        outcome.reproduction.title,
        out_dir,
        outcome.result,
        rebuild_command(outcome.reproduction.key, ctx),
        [runs_table],
    )
    record = {
        "key": outcome.reproduction.key,
        "title": outcome.reproduction.title,
        "model": ctx.model,
        "compare_to": ctx.compare_to,
        "limit": ctx.limit,
        "inputs": {n: str(p) for n, p in ctx.inputs.items()},
        "budget_exhausted": outcome.budget_exhausted,
        "runs": {k: _relative(p, out_dir) for k, p in outcome.runs.items()},
        "tables": [
            {
                "title": t.title,
                "published_model": t.published_model,
                "columns": [c.model_dump() for c in t.columns],
                "rows": [
                    {"label": r.label, "ours": r.ours, "published": r.published} for r in t.rows
                ],
                "notes": t.notes,
            }
            for t in outcome.result.tables
        ],
        "figures": [
            {"caption": c, "path": _relative(p, out_dir)} for c, p in outcome.result.figures
        ],
        "notes": outcome.result.notes,
    }
    (out_dir / RESULT_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def _relative(path: Path, base: Path) -> str:
    """A link from the reproduction's folder: runs are its siblings (`../escape-...`)."""
    return Path(os.path.relpath(Path(path).resolve(), Path(base).resolve())).as_posix()


def print_outcome(console: Console, outcome: ReproOutcome) -> None:
    """The tables in the terminal, then where the report is."""
    for table in outcome.result.tables:
        console.print(rich_result_table(table))
    for caption, path in outcome.result.figures:
        console.print(f"figure: {escape(caption)} -> {path}", highlight=False)
    for note in outcome.result.notes:
        console.print(f"note: {escape(as_sentence(note))}", highlight=False)
    console.print(f"report: {outcome.out_dir / 'report.html'}")


@dataclass
class ReproEstimate:
    """Calls, tokens and cost of a reproduction before it runs."""

    rows: list[list[Any]]
    expected_cost_usd: float
    upper_cost_usd: float
    expected_calls: int
    upper_calls: int
    notes: list[str] = field(default_factory=list)
    """How the figures were made (the stand-ins, the assumed reply length), once each."""


def _priced_roles(
    run: ReproRun, bench: Benchmark, model: str, roles: Mapping[str, RoleModel]
) -> dict[str, tuple[str, str]]:
    """Role -> (the model its calls are priced as, its scripted stand-in): the user's `--role`,
    else the agent's model where the benchmark lets it play the role, else the protocol's."""
    priced: dict[str, tuple[str, str]] = {}
    for role, stand_in in run.offline_roles.items():
        if role in roles:
            priced[role] = (roles[role].model, stand_in)
        elif role in bench.roles_default_to_agent:
            priced[role] = (model, stand_in)
        elif role in run.roles:
            priced[role] = (run.roles[role], stand_in)
    return priced


def estimate_reproduction(
    key: str,
    *,
    model: str,
    roles: Mapping[str, RoleModel] | None = None,
    limit: int | None = None,
    inputs: Mapping[str, Path] | None = None,
    prices_path: Path | None = None,
    benchmark_options: Mapping[str, Any] | None = None,
) -> ReproEstimate:
    """Dry-run every run of a reproduction with the benchmark's scripted stand-ins and price it
    as `model` (and each role as its model), summed over the runs (`forkingpaths estimate`);
    the inputs add the runs they add (an evolved prompt's row)."""
    listed = find_reproduction(key)
    given = {k: Path(v) for k, v in (inputs or {}).items()}
    check_inputs(listed, given)
    ctx = ReproContext(
        model=model, limit=limit, inputs=given, benchmark_options=dict(benchmark_options or {})
    )
    check_benchmark_options(listed, ctx.benchmark_options)
    specs = plan_specs(listed, ctx, roles=roles, benchmark_options=ctx.benchmark_options)
    runs = {run.key: run for run in listed.reproduction.runs(ctx)}
    rows: list[list[Any]] = []
    notes: list[str] = []
    assumed: dict[str, int] = {}
    totals = [0.0, 0.0, 0, 0]
    for run_key, spec in specs.items():
        if spec.model is None:
            rows.append([run_key, spec.agent, 0, 0, 0, 0.0, 0.0])
            continue
        bench = make_benchmark(spec.benchmark, **spec.benchmark_options)
        est = estimate_run(
            spec.benchmark,
            agent=spec.agent,
            model=spec.model,
            split=spec.split,
            instances=spec.instances,
            trials=spec.trials,
            agent_options=dict(spec.agent_options),
            prices_path=prices_path,
            benchmark_options=dict(spec.benchmark_options),
            roles=_priced_roles(runs[run_key], bench, model, roles or {}),
        )
        tokens = {row[0]: row[1] for row in est.rows}
        rows.append(
            [
                run_key,
                spec.agent,
                est.expected_calls,
                est.upper_calls,
                tokens.get("prompt tokens", 0) + tokens.get("completion tokens", 0),
                est.expected_cost_usd,
                est.upper_cost_usd,
            ]
        )
        notes += [n for n in est.notes if n not in notes and "assumed" not in n]
        if est.assumed_completion_tokens is not None:
            assumed[run_key] = est.assumed_completion_tokens
        totals[0] += est.expected_cost_usd
        totals[1] += est.upper_cost_usd
        totals[2] += est.expected_calls
        totals[3] += est.upper_calls
    if assumed:
        each = ", ".join(f"{k} {v}" for k, v in assumed.items())
        notes.append(
            f"completion tokens per agent call assumed as the stand-ins wrote them ({each}); "
            "reasoning models write far more"
        )
    return ReproEstimate(
        rows=rows,
        expected_cost_usd=totals[0],
        upper_cost_usd=totals[1],
        expected_calls=int(totals[2]),
        upper_calls=int(totals[3]),
        notes=notes,
    )
