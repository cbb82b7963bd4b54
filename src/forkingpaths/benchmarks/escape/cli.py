"""`forkingpaths escape ...`: check a scenario, replay actions on it (JSON-lines contract).

SCENARIO arguments take a path to a scenario YAML or the name of a shipped scenario (a stem
under `data/scenarios/`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from forkingpaths.core.errors import ConfigError, InvalidFile

app = typer.Typer(no_args_is_help=True, add_completion=False)

CRAFTING = ("ordered", "unordered")


@app.callback()
def _escape() -> None:
    """MUTATE escape rooms: scenario tools."""


def _read_lines(source: Path) -> list[str]:
    """Non-blank lines of a file, or of stdin for `-`."""
    try:
        text = sys.stdin.read() if str(source) == "-" else source.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{source}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InvalidFile(f"{source}: not UTF-8 text") from None
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
    from forkingpaths.benchmarks.escape.check import check_scenario
    from forkingpaths.benchmarks.escape.metadata import default_meta_path, load_meta
    from forkingpaths.benchmarks.escape.schema import load_scenario, resolve_scenario

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
    from forkingpaths.benchmarks.escape.engine import EscapeGame
    from forkingpaths.benchmarks.escape.schema import load_scenario, resolve_scenario

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
