"""`forkingpaths turtlesoup ...`: import puzzle files, measure a responder, play a puzzle."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from forkingpaths.benchmarks.turtlesoup.abstraction import check_gold_points, meets_rule
from forkingpaths.benchmarks.turtlesoup.importers import (
    census,
    import_report,
    load_corpus_problems,
    load_turtlebench_cases,
    write_corpus,
)
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.responder import (
    Answerer,
    LexicalResponder,
    Responder,
    judge_accuracy,
)
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.factory import check_model_access, close_models, make_model
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.runner.arguments import parse_roles
from forkingpaths.runner.run import execute_run

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.callback()
def _turtlesoup() -> None:
    """TurtleSoup situation puzzles: corpus tools, responder accuracy, human play."""


@app.command("import")
def import_cmd(
    path: Annotated[Path, typer.Argument(help="a puzzle file or directory (any known format)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the JSON report")] = False,
    out: Annotated[Path | None, typer.Option(help="write the valid puzzles in our format")] = None,
    language: Annotated[str | None, typer.Option(help="en | zh (default: detected)")] = None,
    allow_no_clues: Annotated[
        bool,
        typer.Option(
            help="accept stories without a key clue library (TurtleBench); `turtlesoup play "
            "--allow-no-clues` and `run turtlesoup --allow-no-clues` then play them with the "
            "key-clue mechanism off"
        ),
    ] = False,
) -> None:
    """Validate PATH (ours, the paper's release, TurtleBench) and report: refused entries
    (errors) and defects of entries that loaded (warnings), each named by file and index."""
    if not path.exists():
        raise ConfigError(f"{path}: no such file or directory")
    if language not in (None, "en", "zh"):
        raise ConfigError(f"--language: expected en or zh, got {language!r}")
    report = import_report(path, language=language, allow_no_clues=allow_no_clues)
    if not report.puzzles:
        # Nothing to import: a failure (exit 2), as one line, or as the JSON report.
        if as_json:
            typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
            raise typer.Exit(2)
        first = str(report.errors[0]) if report.errors else f"{path}: holds no puzzle"
        more = f" (and {len(report.errors) - 1} more errors)" if len(report.errors) > 1 else ""
        raise InvalidFile(f"no puzzle imported: {first}{more}")
    if out is not None:
        write_corpus(report.puzzles, out)
    if as_json:
        typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    summary = report.to_json()
    typer.echo(census(report.puzzles))
    for name, count in summary["categories"].items():
        stories = len({p.entry for p in report.puzzles if p.category == name})
        typer.echo(
            f"  {name}: {count} instance{'' if count == 1 else 's'} "
            f"({stories} puzzle{'' if stories == 1 else 's'})"
        )
    for error in summary["errors"]:
        typer.echo(f"error: {error}")
    for warning in summary["warnings"]:
        typer.echo(f"warning: {warning}")
    if summary["warning_kinds"]:
        kinds = ", ".join(f"{kind} {n}" for kind, n in summary["warning_kinds"].items())
        typer.echo(f"warnings by kind: {kinds}")
    if out is not None:
        typer.echo(f"written: {out}")


@app.command("check")
def check_cmd(
    path: Annotated[
        Path | None, typer.Argument(help="a puzzle file or directory (default: ours)")
    ] = None,
    allow_no_clues: Annotated[
        bool, typer.Option(help="accept stories without a key clue library (TurtleBench)")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Check each puzzle's gold points against App. D.3's abstraction rule (logic points name
    no one, 2-5 logic points, 3-8 details): every breach by puzzle and field, then the count;
    exit 1 when a puzzle breaks it."""
    if path is not None and not path.exists():
        raise ConfigError(f"{path}: no such file or directory")
    puzzles, _ = load_corpus_problems(path, allow_no_clues=allow_no_clues)
    verdicts = {p.id: meets_rule(p) for p in puzzles}
    breaches = {p.id: check_gold_points(p) for p in puzzles if verdicts[p.id] is False}
    summary = {
        "instances": len(puzzles),
        "puzzles": len({p.entry for p in puzzles}),
        "with_gold_points": sum(v is not None for v in verdicts.values()),
        "meet_rule": sum(v is True for v in verdicts.values()),
        "breaches": {
            pid: [f"{b.field}: {b.message}" for b in found] for pid, found in breaches.items()
        },
    }
    if as_json:
        typer.echo(json.dumps(summary, ensure_ascii=False))
    else:
        for pid, found in summary["breaches"].items():
            for line in found:
                typer.echo(f"{pid}: {line}")
        typer.echo(
            f"{census(puzzles)}; {summary['meet_rule']} of {summary['with_gold_points']} "
            f"instances with gold points meet App. D.3's rule "
            f"({summary['instances'] - summary['with_gold_points']} of {summary['instances']} "
            "carry none: the judge extracts them)"
        )
    if breaches:
        raise typer.Exit(1)


@app.command("judge-accuracy")
def judge_accuracy_cmd(
    cases: Annotated[Path, typer.Argument(help="TurtleBench cases.list (guess, title, label)")],
    stories: Annotated[
        Path | None, typer.Option(help="stories.json (default: beside CASES)")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="responder model; omit for the lexical stand-in")
    ] = None,
    responder: Annotated[
        str | None,
        typer.Option(help="'lexical': the model-free stand-in (the same as giving no --model)"),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var with the key")] = None,
    limit: Annotated[int | None, typer.Option(help="only the first N cases")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Accuracy and per-label precision/recall of a responder on labelled guesses: a model
    (`--model M`) or the lexical stand-in (`--responder lexical`, or no --model)."""
    if responder not in (None, "lexical"):
        raise ConfigError(
            f"--responder: expected lexical, got {responder!r} (a model responder is --model M)"
        )
    if responder == "lexical" and model is not None:
        raise ConfigError("--responder lexical and --model exclude each other: give one")
    stories = stories or cases.with_name("stories.json")
    for given in (cases, stories):
        if not given.exists():
            raise ConfigError(f"{given}: no such file")
    guesses, errors = load_turtlebench_cases(cases)
    for error in errors:
        typer.echo(f"error: {error}", err=True)
    if limit is not None:
        guesses = guesses[:limit]
    report = import_report(stories, allow_no_clues=True)
    chat = None
    if model is not None:
        options = ModelOptions(base_url=base_url, api_key_env=api_key_env)
        check_model_access(model, options)
        chat = make_model(model, options, ModelRuntime())

    def factory(puzzle: Puzzle) -> Answerer:
        if chat is None:
            return LexicalResponder(puzzle, key_clues=False)
        return Responder(chat, puzzle, key_clues=False)

    async def measure() -> dict[str, Any]:
        try:
            return await judge_accuracy(guesses, report.puzzles, factory)
        finally:
            await close_models([chat])  # inside the loop that opened its HTTP client

    result = asyncio.run(measure())
    if as_json:
        typer.echo(json.dumps(result))
        return

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    typer.echo(f"accuracy: {num(result['accuracy'])} over {result['n']} cases")
    typer.echo(f"macro F1: {num(result['macro_f1'])} (labels with support)")
    for label, row in result["labels"].items():
        typer.echo(
            f"  {label:<8} precision {num(row['precision'])}  recall {num(row['recall'])}  "
            f"f1 {num(row['f1'])}  support {row['support']}"
        )
    if result.get("unknown_titles"):
        typer.echo(f"skipped: {result['unknown_titles']} case(s) whose title has no story")


@app.command("play")
def play_cmd(
    puzzle: Annotated[str, typer.Argument(help="puzzle id, e.g. clever_logic-03-en")],
    role: Annotated[
        list[str] | None,
        typer.Option(help="responder / judge model, ROLE=MODEL (default: lexical, unjudged)"),
    ] = None,
    puzzles: Annotated[
        Path | None, typer.Option(help="a puzzle file or directory instead of ours")
    ] = None,
    max_turns: Annotated[int, typer.Option(help="questions allowed")] = 30,
    allow_no_clues: Annotated[
        bool,
        typer.Option(
            help="accept puzzles without a key clue library (TurtleBench); they play with the "
            "key-clue mechanism off"
        ),
    ] = False,
    runs_dir: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option(help="run directory name")] = None,
) -> None:
    """Ask the responder yourself and write a summary; recorded and scored like an agent."""
    options: dict[str, object] = {"max_turns": max_turns}
    if puzzles is not None:
        options["puzzles"] = str(puzzles)
    if allow_no_clues:
        options["allow_no_clues"] = True
    bench = make_benchmark("turtlesoup", **options)
    bench.instance(puzzle)  # an unknown id is refused here, naming the benchmark
    split = puzzle.rsplit("-", 1)[-1] if puzzle.endswith(("-en", "-zh")) else "all"
    spec = RunSpec(
        benchmark=bench.id,
        split=split,
        instances=[puzzle],
        agent="human",
        benchmark_options=bench.options,
        roles=parse_roles(role, None, None),
    )
    result = asyncio.run(
        execute_run(spec, RunOptions(progress=False), runs_dir=runs_dir, run_id=run_id)
    )
    for record in result.episodes:
        if record.status == "error":
            typer.echo(f"stopped early: {(record.error or '').splitlines()[0]}")
        metrics = record.metrics
        if metrics.get("overall") is not None:
            typer.echo(
                f"logic {metrics['logic_accuracy']:.1f}  detail {metrics['detail_fidelity']:.1f}"
                f"  conclusion {metrics['conclusion_match']:.1f}  overall {metrics['overall']:.1f}"
            )
    typer.echo(f"run directory: {result.run_dir.path}")
