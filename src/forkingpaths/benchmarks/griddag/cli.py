"""`forkingpaths griddag ...`: generate a map and score a trajectory, as JSON contracts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from forkingpaths.benchmarks.griddag.generator import generate_world
from forkingpaths.benchmarks.griddag.metric import load_score_input, score_trajectory
from forkingpaths.core.errors import InvalidFile

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("generate")
def generate_cmd(
    exploration: Annotated[str, typer.Option(help="low | medium | high")] = "medium",
    dag: Annotated[str, typer.Option(help="easy | medium | hard")] = "medium",
    seed: Annotated[int, typer.Option(help="generator seed")] = 0,
) -> None:
    """Print one generated map as JSON: cells, start, nodes (pos, options), goal, budget."""
    world = generate_world(exploration, dag, seed)
    sys.stdout.write(json.dumps(world.to_json()) + "\n")


@app.command("score")
def score_cmd(
    file: Annotated[
        Path, typer.Argument(help="map JSON with an added 'positions' list; - = stdin")
    ],
) -> None:
    """Score a trajectory: per-step case, gain, progress, err, and the normalised errors."""
    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{file}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InvalidFile(f"{file}: not UTF-8 text; expected a JSON file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFile(f"{file}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    world, positions = load_score_input(data, source=str(file))
    sys.stdout.write(json.dumps(score_trajectory(world, positions).to_json()) + "\n")
