"""`forkingpaths escape ...`: check a scenario, replay actions on it (JSON-lines contract).

SCENARIO arguments take a path to a scenario YAML or the name of a shipped scenario (a stem
under `data/scenarios/`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from forkingpaths.benchmarks.escape.agreement import agreement_rows, render_agreement_table
from forkingpaths.benchmarks.escape.benchmark import MUTATE_SCENARIOS
from forkingpaths.benchmarks.escape.check import check_scenario
from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.env import (
    DEFAULT_ATTEMPTS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MEANINGLESS_LIMIT,
)
from forkingpaths.benchmarks.escape.metadata import default_meta_path, load_meta
from forkingpaths.benchmarks.escape.reference_log import (
    find_reference_log,
    load_reference_log,
    replay_reference_log,
)
from forkingpaths.benchmarks.escape.schema import (
    LOAD_WARNING_KINDS,
    ScenarioError,
    load_scenario,
    read_text,
    resolve_scenario,
)
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.human import HumanInputEnded
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.run import error_cause, execute_run

app = typer.Typer(no_args_is_help=True, add_completion=False)

CRAFTING = ("ordered", "unordered")


@app.callback()
def _escape() -> None:
    """MUTATE escape rooms: scenario tools."""


def _read_lines(source: Path) -> list[str]:
    """Non-blank lines of a file, or of stdin for `-`."""
    text = sys.stdin.read() if str(source) == "-" else read_text(source)
    return [line.strip() for line in text.splitlines() if line.strip()]


@app.command("check")
def check_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario YAML path or shipped name")],
    meta: Annotated[
        Path | None, typer.Option(help="path metadata (default: sibling <stem>.meta.yaml)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print issues as JSON")] = False,
) -> None:
    """Lint SCENARIO and replay its gold paths; exit 1 when there is any error."""
    path = resolve_scenario(scenario)
    if meta is not None and not meta.is_file():
        raise ConfigError(f"--meta: file {str(meta)!r} does not exist")
    issues = check_scenario(path, meta)
    errors = [i for i in issues if i.severity == "error"]
    summary = ""
    if not errors:
        loaded = load_scenario(path)
        meta_path = meta or default_meta_path(path)
        n_paths = len(load_meta(meta_path).paths) if meta_path.is_file() else 0
        summary = (
            f"ok: {len(loaded.scenes)} scenes, {len(loaded.items)} items, "
            f"{len(loaded.tools)} tools, {n_paths} paths"
        )
    if as_json:
        report = {
            "scenario": str(path),
            "ok": not errors,
            "summary": summary or None,
            "issues": [i.to_dict() for i in issues],
        }
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        for issue in issues:
            sys.stdout.write(f"{issue.severity}: {issue}\n")
        if summary:
            sys.stdout.write(summary + "\n")
    if errors:
        raise typer.Exit(1)


@app.command("replay")
def replay_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario YAML path or shipped name")],
    actions: Annotated[Path, typer.Option(help="one action per line; - = stdin")],
    forbid: Annotated[
        list[str] | None, typer.Option(help="a forbidden finish action (repeatable)")
    ] = None,
    crafting: Annotated[str, typer.Option(help="ordered (MUTATE) | unordered")] = "ordered",
) -> None:
    """Play ACTIONS on SCENARIO and print one JSON object per step (stops at GAME END!)."""
    if crafting not in CRAFTING:
        raise ConfigError(f"--crafting must be one of {', '.join(CRAFTING)}, got {crafting!r}")
    game = EscapeGame(load_scenario(resolve_scenario(scenario)), crafting=crafting)  # type: ignore[arg-type]
    lines = _read_lines(actions)
    forbidden = tuple(forbid or ())
    for t, line in enumerate(lines, start=1):
        result = game.step(line, forbidden=forbidden)
        record = {
            "t": t,
            "action": line,
            "valid": result.valid,
            "response": result.response,
            "scene": game.scene,
            "bag": game.bag,
            "checkpoint": result.checkpoint,
            "game_end": result.game_end,
        }
        sys.stdout.write(json.dumps(record) + "\n")
        if result.game_end:
            break


def _game_files(games: list[Path]) -> list[Path]:
    """Game YAMLs: each file as given, each directory's `game*.yaml` (EscapeBench's data/)."""
    out: list[Path] = []
    for path in games:
        if path.is_dir():
            found = sorted(path.glob("game*.yaml"))
            if not found:
                raise ConfigError(f"GAMES: directory {str(path)!r} holds no game*.yaml")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise ConfigError(f"GAMES: {str(path)!r} is neither a game YAML nor a directory")
    return out


@app.command("replay-log")
def replay_log_cmd(
    games: Annotated[
        list[Path], typer.Argument(help="EscapeBench game YAMLs, or directories of game*.yaml")
    ],
    log: Annotated[
        Path | None,
        typer.Option(help="the reference log (default: reference/key_log_N-M.txt beside the game)"),
    ] = None,
    crafting: Annotated[str, typer.Option(help="ordered (MUTATE) | unordered")] = "unordered",
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object per game")] = False,
) -> None:
    """Load each game (its defects repaired as warnings) and replay its reference action log,
    walking to each logged position first; exit 1 unless every game reaches GAME END."""
    if crafting not in CRAFTING:
        raise ConfigError(f"--crafting must be one of {', '.join(CRAFTING)}, got {crafting!r}")
    files = _game_files(games)
    if log is not None and len(files) != 1:
        raise ConfigError(f"--log names one log, but {len(files)} games were given")
    loaded = ended = 0
    kinds: dict[str, int] = dict.fromkeys(LOAD_WARNING_KINDS, 0)
    for file in files:
        row: dict[str, object] = {"game": str(file), "loaded": False, "game_end": False}
        try:
            scenario = load_scenario(file)
        except (ScenarioError, InvalidFile) as exc:
            row["refused"] = str(exc)
            _emit(row, as_json, f"{file.name}: refused: {exc}")
            continue
        loaded += 1
        row["loaded"] = True
        row["warnings"] = [str(w) for w in scenario.warnings]
        for w in scenario.warnings:
            kinds[w.kind] += 1
        log_path = log or find_reference_log(file)
        if log_path is None:
            row["failure"] = "no reference log (reference/key_log_N-M.txt beside the game)"
            _emit(row, as_json, f"{file.name}: {row['failure']}")
            continue
        try:
            entries = load_reference_log(log_path)
        except InvalidFile as exc:
            row["failure"] = str(exc)
            _emit(row, as_json, f"{file.name}: {exc}")
            continue
        game = EscapeGame(scenario, crafting=crafting)  # type: ignore[arg-type]
        replay = replay_reference_log(game, entries, str(log_path))
        ended += replay.game_end
        # The log names each action's scene, not how to get there: the moves that walk to it
        # are steps the log does not list.
        walks = sum(1 for step in replay.steps if step.entry is None)
        row.update(
            log=str(log_path),
            game_end=replay.game_end,
            entries=replay.entries,
            played=replay.played,
            steps=len(replay.steps),
            walks=walks,
            failure=replay.failure,
        )
        n_warned = len(scenario.warnings)
        warned = f" ({n_warned} load warning{'' if n_warned == 1 else 's'})" if n_warned else ""
        text = (
            f"{file.name}: GAME END after {replay.played}/{replay.entries} logged actions "
            f"+ {walks} moves walking between their scenes = {len(replay.steps)} steps{warned}"
            if replay.game_end
            else f"{file.name}: stopped after {replay.played}/{replay.entries}: {replay.failure}"
        )
        _emit(row, as_json, text)
    n = len(files)
    by_kind = ", ".join(f"{count} {kind}" for kind, count in kinds.items() if count)
    summary = {"games": n, "loaded": loaded, "game_end": ended, "warnings": kinds}
    if as_json:
        sys.stdout.write(json.dumps({"summary": summary}) + "\n")
    else:
        sys.stdout.write(
            f"{loaded} of {n} games load (warnings: {by_kind or 'none'}); "
            f"{ended} of {n} reference logs replay to GAME END (crafting={crafting})\n"
        )
    if ended < n:
        raise typer.Exit(1)


def _emit(row: dict[str, object], as_json: bool, text: str) -> None:
    sys.stdout.write((json.dumps(row) if as_json else text) + "\n")


@app.command("play")
def play_cmd(
    scenario: Annotated[str, typer.Argument(help="a shipped scenario name or a scenario YAML")],
    attempts: Annotated[
        int, typer.Option(help="attempts (the paper's protocol: 4)")
    ] = DEFAULT_ATTEMPTS,
    max_steps: Annotated[int, typer.Option(help="step budget per attempt")] = DEFAULT_MAX_STEPS,
    meaningless_limit: Annotated[
        int, typer.Option(help="consecutive meaningless steps that end an attempt")
    ] = DEFAULT_MEANINGLESS_LIMIT,
    crafting: Annotated[str, typer.Option(help="ordered (MUTATE) | unordered")] = "ordered",
    runs_dir: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option(help="run directory name")] = None,
) -> None:
    """Play SCENARIO yourself under the agents' protocol; recorded as a run (agent `human`)."""
    options: dict[str, object] = {
        "attempts": attempts,
        "max_steps": max_steps,
        "meaningless_limit": meaningless_limit,
        "crafting": crafting,
    }
    if scenario in MUTATE_SCENARIOS:
        split, instance = "mutate", scenario
    else:
        path = resolve_scenario(scenario)
        split, instance = "custom", path.stem
        options["scenarios"] = str(path)
    bench = make_benchmark("escape", **options)
    spec = RunSpec(
        benchmark=bench.id,
        split=split,
        instances=[instance],
        agent="human",
        benchmark_options=bench.options,
    )
    # retry_errors: a play the person stopped (Ctrl-D) is played again by the same command.
    run_options = RunOptions(progress=False, retry_errors=True)
    result = asyncio.run(execute_run(spec, run_options, runs_dir=runs_dir, run_id=run_id))
    metrics = result.metrics["metrics"]
    errored = result.errored
    crashed = False
    if errored:
        record = errored[0]
        cause = error_cause(record.error)
        ended = f"{HumanInputEnded.__name__}: "
        crashed = not cause.startswith(ended)
        steps = record.n_steps
        if not crashed:
            typer.echo()  # Ctrl-D leaves the cursor after the prompt
        typer.echo(
            f"stopped early: {cause.removeprefix(ended)}; {steps} step{'' if steps == 1 else 's'}"
            " played, recorded; re-run the same command to play again"
        )
    typer.echo(f"paths found: {metrics.get('path_discovery_text', '-')}")
    typer.echo(f"run directory: {result.run_dir.path}")
    if crashed:
        raise typer.Exit(1)  # a failure, not the person ending the input (Ctrl-D)


@app.command("agreement")
def agreement_cmd(
    human_scores: Annotated[Path, typer.Argument(help="JSONL of human scores (docs)")],
    run_dir: Annotated[Path, typer.Argument(help="a judged escape run directory")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON rows")] = False,
) -> None:
    """Human-judge agreement per criterion and overall (Table 10): Pearson, Spearman, pairwise."""
    if not (run_dir / "episodes.jsonl").exists():
        raise ConfigError(f"{run_dir}: not a run directory (no episodes.jsonl)")
    rows, unmatched = agreement_rows(human_scores, run_dir)
    if as_json:
        typer.echo(json.dumps({"rows": rows, "unmatched": len(unmatched)}))
        return
    typer.echo(render_agreement_table(rows))
    if unmatched:
        typer.echo(f"{len(unmatched)} human item(s) matched no judged step (first: ", nl=False)
        item, reason = unmatched[0]
        typer.echo(f"{item.instance_id} attempt {item.attempt} step {item.step}: {reason})")
