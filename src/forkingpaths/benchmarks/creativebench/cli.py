"""`forkingpaths creativebench ...`: import tasks, run code in the sandbox, serve it, novelty,
robustness, paired t-test, construction pipelines and prompt evolution."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from forkingpaths.benchmarks.creativebench.agents.solver import read_prompt_file
from forkingpaths.benchmarks.creativebench.averaging import trial_cells
from forkingpaths.benchmarks.creativebench.batch import exec_batch, read_batch
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark, evaluate_prompt
from forkingpaths.benchmarks.creativebench.construction.combo import run_combo_pipeline
from forkingpaths.benchmarks.creativebench.construction.explore import run_explore_pipeline
from forkingpaths.benchmarks.creativebench.env import SUBSETS
from forkingpaths.benchmarks.creativebench.evolve import gepa_search, island_search
from forkingpaths.benchmarks.creativebench.evorepe import (
    HFSteeredModel,
    creativity_vector,
    prompt_pairs,
    save_vector,
)
from forkingpaths.benchmarks.creativebench.metrics import (
    paired_confidence_interval,
    paired_t_test,
    robustness_report,
)
from forkingpaths.benchmarks.creativebench.novelty import make_embedding_backend, novelty
from forkingpaths.benchmarks.creativebench.references import check_references
from forkingpaths.benchmarks.creativebench.sandbox import (
    DEFAULT_MEMORY_MB,
    Limits,
    Sandbox,
    exec_json,
)
from forkingpaths.benchmarks.creativebench.tasks import import_report
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, ModelOptions
from forkingpaths.models.factory import check_model_access, close_models, make_model
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.runner.rundir import load_records

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.callback()
def _creativebench() -> None:
    """CreativeBench: code creativity tools."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None


PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="interpreter programs run under (default: $FORKINGPATHS_SANDBOX_PYTHON, else "
        ".sandbox-venv/bin/python, else this one)",
    ),
]
MemoryOption = Annotated[
    int, typer.Option("--memory-mb", help="address-space limit per execution (MB, >= 64)")
]


def _check_limits(timeout: float | None, memory_mb: int) -> None:
    if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
        raise ConfigError(f"--timeout: expected seconds > 0, got {timeout}")
    if memory_mb < 64:
        raise ConfigError(f"--memory-mb: expected a whole number >= 64, got {memory_mb}")


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="a JSONL file of Explore or Combo rows")],
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON report")] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="also run every valid row's reference solution against its tests in the sandbox",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option(help="--check: seconds per execution")] = 10.0,
    memory_mb: MemoryOption = DEFAULT_MEMORY_MB,
    python: PythonOption = None,
    workers: Annotated[int | None, typer.Option(help="--check: sandbox workers")] = None,
) -> None:
    """Validate a task file (the paper's release format or ours); bad rows by line and field.
    With --check, run each row's reference solution and say how many pass (exit 1 if any
    fails)."""
    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    _check_limits(timeout, memory_mb)
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers: expected a whole number >= 1, got {workers}")
    report = import_report(path)
    if check:

        async def run_checks() -> dict[str, Any]:
            limits = Limits(wall_s=timeout, cpu_s=timeout, memory_mb=memory_mb)
            async with Sandbox(limits=limits, python=python, workers=workers) as sandbox:
                return await check_references(path, sandbox)

        report["check"] = asyncio.run(run_checks())
    if as_json:
        typer.echo(json.dumps(report))
    else:
        typer.echo(f"{report['kind']}: {report['rows']} valid row(s)")
        for error in report["errors"]:
            typer.echo(f"error: {error}")
        if check:
            done = report["check"]
            typer.echo(
                f"{done['passed']} of {done['rows']} reference solutions pass their tests "
                f"({done['python']}, {done['isolation']}, {done['timeout_s']:g} s, "
                f"{done['memory_mb']} MB)"
            )
            for row in done["failed"]:
                typer.echo(f"fails: {row['row']}: {row['verdict']}: {row['detail'].strip()}")
    if report["errors"] or (check and report["check"]["failed"]):
        raise typer.Exit(1)


@app.command("exec")
def exec_cmd(
    solution: Annotated[Path | None, typer.Argument(help="the solution file")] = None,
    tests: Annotated[
        Path | None, typer.Option(help="the test file, appended to the solution (run as __main__)")
    ] = None,
    batch: Annotated[
        Path | None,
        typer.Option(
            help="a JSON-lines file of rows {solution, tests[, id, timeout]}: one verdict per "
            "row, in order, through one warm worker pool"
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="with --batch: write the verdicts here, not to stdout")
    ] = None,
    workers: Annotated[int | None, typer.Option(help="with --batch: sandbox workers")] = None,
    timeout: Annotated[float | None, typer.Option(help="seconds (default 10)")] = None,
    memory_mb: MemoryOption = DEFAULT_MEMORY_MB,
    python: PythonOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Run SOLUTION with TESTS appended to it, as one program, in the sandbox and print the
    verdict (and the interpreter it ran under); exit 1 unless it is PASSED (2 for bad input).
    With --batch, run every row of a file and print one JSON verdict per row; exit 0 once every
    row has run, whatever the verdicts."""
    _check_limits(timeout, memory_mb)
    if batch is not None:
        if solution is not None or tests is not None:
            raise ConfigError("give either SOLUTION --tests TESTS or --batch FILE, not both")
        if workers is not None and workers < 1:
            raise ConfigError(f"--workers: expected a whole number >= 1, got {workers}")
        _exec_batch(batch, out, workers, timeout, memory_mb, python)
        return
    if out is not None or workers is not None:
        raise ConfigError("--out and --workers go with --batch")
    if solution is None or tests is None:
        raise ConfigError("give SOLUTION and --tests TESTS (or --batch FILE)")
    for given in (solution, tests):
        if not given.exists():
            raise ConfigError(f"{given}: no such file")
    result = exec_json(solution, tests, timeout, memory_mb=memory_mb, python=python)
    if as_json:
        typer.echo(json.dumps(result))
    else:
        typer.echo(f"{result['verdict']} ({result['isolation']}, {result['duration_s']:.3f} s)")
        typer.echo(
            f"ran {solution} with {tests} appended to it, as one program (__main__), under "
            f"{result['python']}"
        )
        for key in ("stdout_tail", "stderr_tail"):
            if result[key]:
                typer.echo(f"{key}:\n{result[key]}")
    if result["verdict"] != "PASSED":
        raise typer.Exit(1)


def _exec_batch(
    path: Path,
    out: Path | None,
    workers: int | None,
    timeout: float | None,
    memory_mb: int,
    python: str | None,
) -> None:
    rows = read_batch(path)
    if out is not None and out.resolve() == path.resolve():
        raise ConfigError(f"--out {str(out)!r} is the batch file itself")

    async def go(sink: Any) -> tuple[dict[str, int], Sandbox]:
        limits = Limits(memory_mb=memory_mb)
        async with Sandbox(limits=limits, python=python, workers=workers) as sandbox:

            def emit(verdict: dict[str, Any]) -> None:
                sink.write(json.dumps(verdict, ensure_ascii=False) + "\n")
                sink.flush()  # streamed: a reader sees each verdict as it lands

            return await exec_batch(rows, sandbox, emit, timeout=timeout), sandbox

    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(out.open("w", encoding="utf-8")) if out else sys.stdout
        counts, sandbox = asyncio.run(go(sink))
    summary = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    typer.echo(
        f"{len(rows)} rows: {summary} ({sandbox.isolation}, {sandbox.workers} workers, "
        f"{sandbox.python})" + (f"; verdicts in {out}" if out else ""),
        err=True,
    )


SERVE_TOKEN_ENV = "FORKINGPATHS_SERVE_TOKEN"
"""Where `serve` reads its token when --token is not given."""


def _check_serve_options(
    port: int, workers: int | None, max_timeout: float | None, max_queue: int | None
) -> None:
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port: expected 0 (any free port) to 65535, got {port}")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers: expected a whole number >= 1, got {workers}")
    if max_timeout is not None and (not math.isfinite(max_timeout) or max_timeout <= 0):
        raise ConfigError(f"--max-timeout: expected seconds > 0, got {max_timeout}")
    if max_queue is not None and max_queue < 0:
        raise ConfigError(f"--max-queue: expected a whole number >= 0, got {max_queue}")


@app.command("serve")
def serve_cmd(
    port: Annotated[int, typer.Option(help="TCP port (0: any free one)")] = 8080,
    host: Annotated[
        str, typer.Option(help="address to listen on (127.0.0.1: this machine only)")
    ] = "127.0.0.1",
    workers: Annotated[int | None, typer.Option(help="sandbox workers (default: cores)")] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=SERVE_TOKEN_ENV,
            help="the Bearer token every request must send (default: a new one, printed); "
            f"prefer ${SERVE_TOKEN_ENV}, which other users cannot see in the process list",
        ),
    ] = None,
    max_timeout: Annotated[
        float | None,
        typer.Option(
            help="longest request_extensions.timeout accepted, seconds (default: the sandbox's "
            "wall limit, at least 30); a request asking for more gets 400"
        ),
    ] = None,
    max_queue: Annotated[
        int | None,
        typer.Option(
            help="requests that may wait for a worker (default: 2 x workers); "
            "more get 503 with Retry-After"
        ),
    ] = None,
) -> None:
    """AutoCodeBench-style /submit service backed by the sandbox (Ctrl-C stops it).

    Every request needs the header `Authorization: Bearer TOKEN`.
    """
    _check_serve_options(port, workers, max_timeout, max_queue)
    if token is not None and not token.strip():
        raise ConfigError(f"--token: expected a non-empty token (or unset ${SERVE_TOKEN_ENV})")
    # A given token is not echoed (it may be a long-lived secret); a generated one is printed:
    # that is the only way to learn it.
    key = token.strip() if token else secrets.token_urlsafe(32)
    shown_token = f"from --token or ${SERVE_TOKEN_ENV}" if token else key
    # Deferred: aiohttp's web server takes about 0.2 s to import and only this command needs
    # it, while every `forkingpaths` command line loads this module.
    from forkingpaths.benchmarks.creativebench.serve import serve

    def announce(url: str) -> None:
        typer.echo(f"serving on {url} (token: {shown_token})")
        typer.echo(
            "send `Authorization: Bearer TOKEN` with every request: POST /submit, GET /health"
        )

    async def main() -> None:
        sandbox = Sandbox(workers=workers)
        try:
            await serve(
                port,
                sandbox,
                token=key,
                host=host,
                max_timeout=max_timeout,
                max_queue=max_queue,
                ready=announce,
            )
        finally:
            await sandbox.aclose()

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a service stops
        asyncio.run(main())


@app.command("novelty")
def novelty_cmd(
    a: Annotated[Path, typer.Argument(help="first solution")],
    b: Annotated[Path, typer.Argument(help="second solution")],
    embedding: Annotated[
        str, typer.Option(help="none | ast-tfidf | openai-compat/MODEL | sentence-transformers/M")
    ] = "ast-tfidf",
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """N(A, B) = embedding distance + character 4-gram distance (Eq. 3)."""
    backend = make_embedding_backend(embedding, **({"base_url": base_url} if base_url else {}))
    score = asyncio.run(novelty(_read(a), _read(b), backend))
    payload = {
        "ngram_distance": score.ngram_distance,
        "embedding_distance": score.embedding_distance,
        "novelty": score.novelty,
    }
    if as_json:
        typer.echo(json.dumps(payload))
        return
    for key, value in payload.items():
        typer.echo(f"{key}: {'-' if value is None else f'{value:.4f}'}")


@app.command("robustness")
def robustness_cmd(
    samples: Annotated[list[Path], typer.Argument(help="solution files")],
    embedding: Annotated[str, typer.Option(help="embedding backend (as `novelty`)")] = "ast-tfidf",
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON rows")] = False,
) -> None:
    """App. F: novelty of each sample against itself after renaming, reformatting and comment
    growth; a robust metric stays near 0 for these superficial edits."""
    backend = make_embedding_backend(embedding, **({"base_url": base_url} if base_url else {}))
    rows = asyncio.run(robustness_report([_read(p) for p in samples], backend))
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for row in rows:
        typer.echo(
            "  ".join(
                f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
            )
        )


TTEST_METRICS = ("pass_at_1", "novelty", "creativity", "novelty_passed")
"""Metrics `ttest` compares (`quality` is read as `pass_at_1`)."""


def _run_records(run: Path) -> list[EpisodeRecord]:
    if not (run / "episodes.jsonl").exists():
        raise ConfigError(f"{run}: not a run directory (no episodes.jsonl)")
    records = [r for r in load_records(run) if r.status == "ok"]
    if not records:
        raise ConfigError(f"{run}: no finished episode to compare")
    return records


def _paired_records(
    run_a: Path, run_b: Path
) -> tuple[list[EpisodeRecord], list[EpisodeRecord], dict[str, Any]]:
    """The episodes both runs finished, keyed alike; ConfigError when the runs used different
    trials or different seeds for the same trial (App. E.1 pairs matched seeds)."""
    a = {(r.instance_id, r.trial): r for r in _run_records(run_a)}
    b = {(r.instance_id, r.trial): r for r in _run_records(run_b)}
    trials_a, trials_b = sorted({t for _, t in a}), sorted({t for _, t in b})
    if trials_a != trials_b:
        raise ConfigError(
            f"the runs have different trials: {run_a} {trials_a}, {run_b} {trials_b}; pair runs "
            "made with the same --trials"
        )
    shared = sorted(set(a) & set(b))
    for key in shared:
        if a[key].seed != b[key].seed:
            raise ConfigError(
                f"{key[0]} trial {key[1]}: seed {a[key].seed} in {run_a} but {b[key].seed} in "
                f"{run_b}; a paired test needs the same seeds (same --seed)"
            )
    info = {
        "trials": trials_a,
        "seeds": {str(t): sorted({a[k].seed for k in shared if k[1] == t}) for t in trials_a},
        "episodes": len(shared),
        "unmatched": len(set(a) ^ set(b)),
    }
    return [a[k] for k in shared], [b[k] for k in shared], info


def _per_trial_samples(records: list[EpisodeRecord], subset: str) -> dict[Any, dict[str, Any]]:
    return trial_cells([r for r in records if r.initial_info.get("subset") == subset])


def _per_row_samples(records: list[EpisodeRecord], subset: str) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for record in records:
        if record.initial_info.get("subset") != subset:
            continue
        for step in record.steps:
            info = step.info
            if "quality" not in info:
                continue
            novelty = info.get("novelty")
            quality = float(info["quality"])
            out[(record.instance_id, step.index, record.trial)] = {
                "pass_at_1": quality,
                "novelty": novelty,
                "creativity": None if novelty is None else quality * float(novelty),
                "novelty_passed": novelty if quality == 1.0 else None,
            }
    return out


@app.command("ttest")
def ttest_cmd(
    run_a: Annotated[Path, typer.Argument(help="a creativebench run directory")],
    run_b: Annotated[Path, typer.Argument(help="another, on the same tasks, trials and seeds")],
    metric: Annotated[
        str,
        typer.Option(help="all | pass_at_1 (or quality) | novelty | creativity | novelty_passed"),
    ] = "all",
    per_row: Annotated[
        bool,
        typer.Option(
            "--per-row",
            help="pair the scored rows (instance, level, trial) instead of the per-trial "
            "subset metrics (more pairs, but rows of one trial are not independent seeds)",
        ),
    ] = False,
    level: Annotated[float, typer.Option(help="confidence level of the interval")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Paired t-test of App. E.1 between two runs, one test per subset and metric.

    By default the pairs are the per-trial (per-seed) subset metrics: Pass@1, Novelty and
    Creativity of each trial of RUN_A against the same trial of RUN_B, so N = the number of
    trials and df = N - 1 (run both with --trials 3 or more); the runs must have used the same
    trials and seeds. Reports the mean difference A - B, its confidence interval, t, df and the
    two-sided p.
    """
    chosen = "pass_at_1" if metric == "quality" else metric
    if chosen != "all" and chosen not in TTEST_METRICS:
        raise ConfigError(
            f"--metric: expected all, {', '.join(TTEST_METRICS)} or quality, got {metric!r}"
        )
    if not 0.0 < level < 1.0:
        raise ConfigError(f"--level: expected a number between 0 and 1, got {level}")
    metrics = TTEST_METRICS if chosen == "all" else (chosen,)
    records_a, records_b, info = _paired_records(run_a, run_b)
    samples = _per_row_samples if per_row else _per_trial_samples
    unit = "rows" if per_row else "trials"
    tests: list[dict[str, Any]] = []
    skipped: list[str] = []
    for subset in SUBSETS:
        a, b = samples(records_a, subset), samples(records_b, subset)
        if not a and not b:
            continue
        for name in metrics:
            keys = [k for k in sorted(set(a) & set(b)) if None not in (a[k][name], b[k][name])]
            if len(keys) < 2:
                skipped.append(f"{subset} {name}: {len(keys)} paired {unit} (a t-test needs 2)")
                continue
            xs = [float(a[k][name]) for k in keys]
            ys = [float(b[k][name]) for k in keys]
            result = paired_t_test(xs, ys)
            low, high = paired_confidence_interval(xs, ys, level)
            tests.append(
                {
                    "subset": subset,
                    "metric": name,
                    **result,
                    "ci_low": low,
                    "ci_high": high,
                    "mean_a": sum(xs) / len(xs),
                    "mean_b": sum(ys) / len(ys),
                }
            )
    if not tests:
        hint = "" if per_row else "; run both with --trials 3 (App. B.2) or use --per-row"
        raise ConfigError(f"no test possible: {'; '.join(skipped) or 'nothing scored'}{hint}")
    report = {"pairing": "row" if per_row else "trial", "level": level, **info, "tests": tests}
    report["skipped"] = skipped
    if as_json:
        typer.echo(json.dumps(report))
        return
    typer.echo(
        f"paired by {unit[:-1]}; trials {info['trials']}, {info['episodes']} matched episodes"
    )
    for test in tests:
        typer.echo(
            f"{test['subset']} {test['metric']}: mean diff {test['mean_diff']:+.4f} "
            f"({level:.0%} CI [{test['ci_low']:+.4f}, {test['ci_high']:+.4f}]) over {test['n']} "
            f"paired {unit}, t = {test['t']:.3f}, df = {test['df']}, p = {test['p']:.4g}"
        )
    for line in skipped:
        typer.echo(f"skipped: {line}")


def _model_options(base_url: str | None, api_key_env: str | None) -> ModelOptions:
    return ModelOptions(base_url=base_url, api_key_env=api_key_env)


@app.command("build-combo")
def build_combo_cmd(
    model: Annotated[str, typer.Option(help="model id (scripted/creativebench-pipeline offline)")],
    out: Annotated[Path, typer.Option(help="output directory (resumable)")],
    n: Annotated[int, typer.Option(help="fusion attempts (Algorithm 1's loop)")] = 10,
    k: Annotated[int, typer.Option(help="source components per problem")] = 2,
    components: Annotated[
        Path | None, typer.Option(help="JSONL of {id, domain, code, description}")
    ] = None,
    embedding: Annotated[str, typer.Option(help="backend of the diversity check")] = "none",
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var with the key")] = None,
    seed: Annotated[int, typer.Option(help="component sampling seed")] = 0,
) -> None:
    """Combo construction (§3.2, Algorithm 1): fusion, sandbox verification with repair,
    generated tests, reverse-engineered statement, difficulty/audit/diversity filters."""
    if n < 1 or k < 2:
        raise ConfigError(f"--n must be >= 1 and --k >= 2, got n={n}, k={k}")
    report = asyncio.run(
        run_combo_pipeline(
            model,
            out,
            n=n,
            k=k,
            components=components,
            embedding=embedding,
            seed=seed,
            model_options=_model_options(base_url, api_key_env),
        )
    )
    typer.echo(json.dumps(report.model_dump(mode="json")))


@app.command("build-explore")
def build_explore_cmd(
    generator: Annotated[str, typer.Option(help="constraint generator model id")],
    out: Annotated[Path, typer.Option(help="output directory (resumable)")],
    solver: Annotated[str | None, typer.Option(help="solver model (default: generator)")] = None,
    judge: Annotated[str | None, typer.Option(help="judge model (default: generator)")] = None,
    seeds: Annotated[
        Path | None, typer.Option(help="Explore JSONL whose level-0 rows seed")
    ] = None,
    max_levels: Annotated[int, typer.Option(help="stop after this many constraints")] = 7,
    attempts: Annotated[int, typer.Option(help="refinement attempts per level")] = 3,
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var with the key")] = None,
) -> None:
    """Explore construction (§3.3, Algorithm 2): constraint stacking level by level, the solver
    refining from the base solution with sandbox and judge feedback."""
    if max_levels < 1 or attempts < 1:
        raise ConfigError("--max-levels and --attempts must be >= 1")
    options = _model_options(base_url, api_key_env)
    report = asyncio.run(
        run_explore_pipeline(
            generator,
            out,
            solver=solver,
            judge=judge,
            seeds=seeds,
            max_levels=max_levels,
            attempts=attempts,
            generator_options=options,
            solver_options=options,
            judge_options=options,
        )
    )
    typer.echo(json.dumps(report.model_dump(mode="json")))


EVOLVE_ROLES = ("judge", "mutator")


def _evolve_roles(given: list[str]) -> dict[str, str]:
    """`--role ROLE=MODEL` of `evolve`, checked: known roles, each once, a model named."""
    roles: dict[str, str] = {}
    for item in given:
        name, sep, model = item.partition("=")
        name, model = name.strip(), model.strip()
        if not sep or not model:
            raise ConfigError(f"--role: expected ROLE=MODEL, got {item!r}")
        if name not in EVOLVE_ROLES:
            raise ConfigError(
                f"--role {name}: evolve has no such role; its roles: {', '.join(EVOLVE_ROLES)}"
            )
        if name in roles:
            raise ConfigError(f"--role {name}: given twice")
        roles[name] = model
    return roles


@app.command("evolve")
def evolve_cmd(
    model: Annotated[str, typer.Option(help="solver model id (and, by default, the mutator)")],
    out: Annotated[Path, typer.Option(help="where the evolved prompt JSON goes")],
    method: Annotated[str, typer.Option(help="island (AlphaEvolve-style) | gepa")] = "island",
    split: Annotated[str, typer.Option(help="combo | explore: the training tasks")] = "combo",
    train: Annotated[
        int,
        typer.Option(
            help="training instances: the LAST N of the split; evaluate the evolved prompt on "
            "the others (the command prints their ids for --instances), never on these"
        ),
    ] = 4,
    generations: Annotated[int, typer.Option(help="island: generations")] = 3,
    islands: Annotated[int, typer.Option(help="island: islands")] = 2,
    population: Annotated[int, typer.Option(help="island: members per island")] = 4,
    budget: Annotated[int, typer.Option(help="gepa: metric-call budget")] = 30,
    perfect_score: Annotated[
        float,
        typer.Option(
            help="gepa: a minibatch scoring this on every task is not reflected on (default 3.0,"
            " Creativity's maximum; App. E.3's 1.0 reproduces the paper's setting literally)"
        ),
    ] = 3.0,
    judge: Annotated[
        str | None,
        typer.Option(help="constraint judge model (explore; default: --model); = --role judge="),
    ] = None,
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role",
            help="ROLE=MODEL: mutator (the model that rewrites and reflects on prompts, §4.1; "
            "default: --model) or judge (default: --model)",
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var with the key")] = None,
) -> None:
    """Optimise the solver prompt on training tasks (fitness: creativity), then evaluate it with
    `forkingpaths run creativebench --agent prompt -a prompt_file=OUT --instances ...` on the
    instances it did not train on.

    The mutator role (`--role mutator=MODEL`) rewrites the prompts (island) or reflects on
    them (GEPA); it defaults to `--model`, as in the paper where one model does both.

    The training split is the LAST `--train` instances of `--split`; the evaluation split is the
    rest, disjoint from it: the command prints the evaluation command with those ids, and the
    prompt file records both lists (`settings.train_instances`, `settings.eval_instances`).
    """
    if method not in ("island", "gepa"):
        raise ConfigError(f"--method: expected island or gepa, got {method!r}")
    if train < 1:
        raise ConfigError(f"--train must be >= 1, got {train}")
    if split not in ("combo", "explore"):
        raise ConfigError(f"--split: expected combo or explore, got {split!r}")
    roles = _evolve_roles(role or [])
    if judge:
        roles.setdefault("judge", judge)
    judge, mutator = roles.get("judge"), roles.get("mutator")
    options = _model_options(base_url, api_key_env)
    check_model_access(model, options)
    for other in (judge, mutator):
        if other:
            check_model_access(other, options)

    bench = CreativeBenchmark()
    pool = bench.instances(split)
    if train >= len(pool):
        raise ConfigError(
            f"--train {train}: the {split} split has {len(pool)} instances; keep at least one "
            "out of training to evaluate on"
        )
    instances, held_out = pool[-train:], pool[:-train]

    async def main() -> None:
        runtime = ModelRuntime()
        chat = make_model(model, options, runtime)
        # As in the benchmark: the judge role defaults to the solver's own model.
        judge_model = make_model(judge, options, runtime) if judge else chat
        # The mutation model of §4.1 is its own role; the solver's model when not given.
        mutator_model = make_model(mutator, options, runtime) if mutator else chat
        try:

            async def fitness(prompt: str) -> list[float]:
                return await evaluate_prompt(bench, chat, instances, prompt, judge_model)

            if method == "island":
                result = await island_search(
                    mutator_model,
                    instances,
                    fitness,
                    islands=islands,
                    population=population,
                    generations=generations,
                    out=out,
                )
            else:
                result = await gepa_search(
                    mutator_model,
                    instances,
                    fitness,
                    budget=budget,
                    perfect_score=perfect_score,
                    out=out,
                )
            result.settings.update(
                {
                    "split": split,
                    "train_instances": [i.id for i in instances],
                    "eval_instances": [i.id for i in held_out],
                    "judge": judge_model.name,
                    "solver": chat.name,
                    "mutator": mutator_model.name,
                }
            )
            result.write(out)
            typer.echo(f"{result.method}: score {result.score:.4f} -> {out}")
            typer.echo(
                f"trained on the last {len(instances)} {split} instances; evaluate on the other "
                f"{len(held_out)}:\nforkingpaths run creativebench --split {split} --agent prompt "
                f"-a prompt_file={out} --model {model} --instances "
                + ",".join(i.id for i in held_out)
            )
            row = "alphaevolve_prompt" if method == "island" else "gepa_prompt"
            typer.echo(
                f"or as Table 3's row: forkingpaths reproduce creativebench:table3 --model "
                f"{model} --input {row}={out}"
            )
        finally:
            await close_models((chat, judge_model, mutator_model))
            await bench.aclose()

    asyncio.run(main())


@app.command("evorepe-vector")
def evorepe_vector_cmd(
    prompt_file: Annotated[Path, typer.Option(help="an evolved prompt JSON (from `evolve`)")],
    out: Annotated[Path, typer.Option(help="where the vector (.pt) goes")],
    model: Annotated[str, typer.Option(help="transformers model id or path")] = (
        "Qwen/Qwen2.5-7B-Instruct"
    ),
    layer: Annotated[int, typer.Option(help="decoder layer (1-based)")] = 26,
    split: Annotated[str, typer.Option(help="tasks whose prompts form the pairs")] = "combo",
    pairs: Annotated[int, typer.Option(help="number of (base, evolved) prompt pairs")] = 20,
) -> None:
    """EvoRePE (§4.3): the creativity vector = PCA_1 of last-token activation shifts between
    base and evolved prompts at LAYER; run with `--agent evorepe -a evorepe_vector=OUT --model
    hf/MODEL` (only the solver steered), or steer the whole model with `--model hf/MODEL
    --model-extra evorepe_vector=OUT --model-extra evorepe_alpha=0.1`; Table 3's '+ EvoRePE'
    rows: `forkingpaths reproduce creativebench:table3 --model hf/MODEL --input
    evorepe_vector=OUT`."""
    instruction = read_prompt_file(str(prompt_file))
    bench = CreativeBenchmark()
    tasks = (
        bench.combo_tasks()
        if split == "combo"
        else [levels[-1] for levels in bench.explore_tasks().values()]
    )[:pairs]
    hf = HFSteeredModel(model)
    vector = creativity_vector(hf.model, hf.tokenizer, prompt_pairs(tasks, instruction), layer)
    save_vector(out, vector, layer=layer, model_name=model, pairs=len(tasks))
    typer.echo(
        f"vector of {vector.shape[-1]} dims at layer {layer} from {len(tasks)} pairs -> {out}"
    )
