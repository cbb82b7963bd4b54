"""`forkingpaths creativebench ...`: import tasks, run code in the sandbox, serve it, novelty,
robustness, paired t-test, construction pipelines and prompt evolution."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer

from forkingpaths.core.errors import ConfigError

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


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="a JSONL file of Explore or Combo rows")],
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON report")] = False,
) -> None:
    """Validate a task file (the paper's release format or ours); bad rows by line and field."""
    from forkingpaths.benchmarks.creativebench.tasks import import_report

    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    report = import_report(path)
    if as_json:
        typer.echo(json.dumps(report))
        return
    typer.echo(f"{report['kind']}: {report['rows']} valid row(s)")
    for error in report["errors"]:
        typer.echo(f"error: {error}")
    if report["errors"]:
        raise typer.Exit(1)


@app.command("exec")
def exec_cmd(
    solution: Annotated[Path, typer.Argument(help="the solution file")],
    tests: Annotated[Path, typer.Option(help="the test file (runs with the solution as __main__)")],
    timeout: Annotated[float | None, typer.Option(help="seconds (default 10)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Run SOLUTION with TESTS in the sandbox and print the verdict."""
    from forkingpaths.benchmarks.creativebench.sandbox import exec_json

    for given in (solution, tests):
        if not given.exists():
            raise ConfigError(f"{given}: no such file")
    if timeout is not None and timeout <= 0:
        raise ConfigError(f"--timeout: expected seconds > 0, got {timeout}")
    result = exec_json(solution, tests, timeout)
    if as_json:
        typer.echo(json.dumps(result))
        return
    typer.echo(f"{result['verdict']} ({result['isolation']}, {result['duration_s']:.3f} s)")
    for key in ("stdout_tail", "stderr_tail"):
        if result[key]:
            typer.echo(f"{key}:\n{result[key]}")


@app.command("serve")
def serve_cmd(
    port: Annotated[int, typer.Option(help="TCP port")] = 8080,
    workers: Annotated[int | None, typer.Option(help="sandbox workers (default: cores)")] = None,
) -> None:
    """AutoCodeBench-style /submit service backed by the sandbox (Ctrl-C stops it)."""
    from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
    from forkingpaths.benchmarks.creativebench.serve import serve

    async def main() -> None:
        sandbox = Sandbox(workers=workers)
        try:
            await serve(port, sandbox)
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
    from forkingpaths.benchmarks.creativebench.novelty import make_embedding_backend, novelty

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
    from forkingpaths.benchmarks.creativebench.metrics import robustness_report
    from forkingpaths.benchmarks.creativebench.novelty import make_embedding_backend

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


@app.command("ttest")
def ttest_cmd(
    run_a: Annotated[Path, typer.Argument(help="a creativebench run directory")],
    run_b: Annotated[Path, typer.Argument(help="another, on the same tasks")],
    metric: Annotated[str, typer.Option(help="creativity | quality | novelty")] = "creativity",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Paired t-test between two runs over the rows both scored (App. E.1)."""
    from forkingpaths.api import load_records
    from forkingpaths.benchmarks.creativebench.metrics import paired_t_test

    if metric not in ("creativity", "quality", "novelty"):
        raise ConfigError(f"--metric: expected creativity, quality or novelty, got {metric!r}")

    def rows(run: Path) -> dict[tuple[str, int, int], float]:
        if not (run / "episodes.jsonl").exists():
            raise ConfigError(f"{run}: not a run directory (no episodes.jsonl)")
        out: dict[tuple[str, int, int], float] = {}
        for record in load_records(run):
            for step in record.steps:
                info = step.info
                if "quality" not in info:
                    continue
                novelty = info.get("novelty")
                if metric != "quality" and novelty is None:
                    continue
                value = {
                    "quality": info["quality"],
                    "novelty": novelty,
                    "creativity": info["quality"] * (novelty or 0.0),
                }[metric]
                out[(record.instance_id, step.index, record.trial)] = float(value)
        return out

    a, b = rows(run_a), rows(run_b)
    shared = sorted(set(a) & set(b))
    if len(shared) < 2:
        raise ConfigError(f"the runs share {len(shared)} scored row(s); a t-test needs >= 2")
    result = paired_t_test([a[k] for k in shared], [b[k] for k in shared])
    if as_json:
        typer.echo(json.dumps(result))
        return
    typer.echo(
        f"{metric}: mean diff {result['mean_diff']:+.4f} over {result['n']} paired rows, "
        f"t = {result['t']:.3f}, df = {result['df']}, p = {result['p']:.4g}"
    )


def _model_options(base_url: str | None, api_key_env: str | None):  # type: ignore[no-untyped-def]
    from forkingpaths.core.records import ModelOptions

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
    from forkingpaths.benchmarks.creativebench.pipelines import run_combo_pipeline

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
    from forkingpaths.benchmarks.creativebench.pipelines import run_explore_pipeline

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


@app.command("evolve")
def evolve_cmd(
    model: Annotated[str, typer.Option(help="solver and mutation model id")],
    out: Annotated[Path, typer.Option(help="where the evolved prompt JSON goes")],
    method: Annotated[str, typer.Option(help="island (AlphaEvolve-style) | gepa")] = "island",
    split: Annotated[str, typer.Option(help="combo | explore: the training tasks")] = "combo",
    train: Annotated[int, typer.Option(help="training instances (the first N)")] = 4,
    generations: Annotated[int, typer.Option(help="island: generations")] = 3,
    islands: Annotated[int, typer.Option(help="island: islands")] = 2,
    population: Annotated[int, typer.Option(help="island: members per island")] = 4,
    budget: Annotated[int, typer.Option(help="gepa: metric-call budget")] = 30,
    judge: Annotated[str | None, typer.Option(help="constraint judge model (explore)")] = None,
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var with the key")] = None,
) -> None:
    """Optimise the solver prompt on training tasks (fitness: creativity), then evaluate it with
    `forkingpaths run creativebench --agent prompt -a prompt_file=OUT`."""
    from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark, evaluate_prompt
    from forkingpaths.benchmarks.creativebench.evolve import gepa_search, island_search
    from forkingpaths.models.factory import ModelRuntime, check_model_access, make_model

    if method not in ("island", "gepa"):
        raise ConfigError(f"--method: expected island or gepa, got {method!r}")
    if train < 1:
        raise ConfigError(f"--train must be >= 1, got {train}")
    options = _model_options(base_url, api_key_env)
    check_model_access(model, options)
    if judge:
        check_model_access(judge, options)

    async def main() -> None:
        bench = CreativeBenchmark()
        runtime = ModelRuntime()
        chat = make_model(model, options, runtime)
        judge_model = make_model(judge, options, runtime) if judge else None
        instances = bench.instances(split)[:train]
        try:

            async def fitness(prompt: str) -> list[float]:
                return await evaluate_prompt(bench, chat, instances, prompt, judge_model)

            if method == "island":
                result = await island_search(
                    chat,
                    instances,
                    fitness,
                    islands=islands,
                    population=population,
                    generations=generations,
                    out=out,
                )
            else:
                result = await gepa_search(chat, instances, fitness, budget=budget, out=out)
            typer.echo(f"{result.method}: score {result.score:.4f} -> {out}")
        finally:
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
    base and evolved prompts at LAYER; run with `--model hf/MODEL --model-extra
    evorepe_vector=OUT --model-extra evorepe_alpha=0.1`."""
    from forkingpaths.benchmarks.creativebench.agents.solver import read_prompt_file
    from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
    from forkingpaths.benchmarks.creativebench.evorepe import (
        HFSteeredModel,
        creativity_vector,
        prompt_pairs,
        save_vector,
    )

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
