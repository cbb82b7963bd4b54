"""`forkingpaths eeb ...`: replay actions on a level file (JSON-lines contract)."""

from __future__ import annotations

import asyncio
import logging
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from forkingpaths.benchmarks.eeb.agents.truths import GAMES
from forkingpaths.benchmarks.eeb.expver import (
    DEFAULT_EVAL_LEVELS,
    DEFAULT_LEVELS_PER_ROUND,
    DEFAULT_ROUNDS,
    ExpVerConfig,
    learn_truths,
)
from forkingpaths.benchmarks.eeb.match2 import Match2Env
from forkingpaths.benchmarks.eeb.match2_levels import load_match2_level
from forkingpaths.benchmarks.eeb.maze import (
    ACTION_LABELS,
    DEFAULT_MAX_STEPS,
    STEP_COST,
    MazeEnv,
    parse_maze_action,
)
from forkingpaths.benchmarks.eeb.maze_levels import load_maze_level
from forkingpaths.benchmarks.eeb.replay import replay_lines
from forkingpaths.core.chat import ModelParams
from forkingpaths.core.env import Env
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.records import ModelOptions

log = logging.getLogger(__name__)

app = typer.Typer(no_args_is_help=True, add_completion=False)


def _action_key(text: str) -> str:
    """An action name compared without case, spacing or the plural: `move  right 2 step`."""
    return re.sub(r"\bsteps\b", "step", " ".join(text.lower().split()))


MAZE_ACTION_NAMES = {_action_key(label): i for i, label in enumerate(ACTION_LABELS)}
"""The twelve maze actions by the name the env lists them with (`Move RIGHT 1 step` -> 9)."""


def maze_action_line(line: str) -> str:
    """A replayed maze line as the env reads it: an action name becomes its number; a number,
    `Action: N` or anything else stays as it is (the env refuses what it cannot read)."""
    number = MAZE_ACTION_NAMES.get(_action_key(line))
    return line if number is None else str(number)


@app.callback()
def _eeb() -> None:
    """EvoEmpirBench tools."""


@app.command("replay")
def replay_cmd(
    game: Annotated[str, typer.Argument(help="maze | match2")],
    level_file: Annotated[Path, typer.Argument(help="a level JSON (ours or the artifact's)")],
    actions: Annotated[
        Path,
        typer.Option(
            help="one action per line; - = stdin. maze: a number 0-11 or its name as the game "
            "lists it ('Move UP 1 step' ... 'Move RIGHT 3 steps', any case); match2: a JSON "
            'action such as {"action": {"type": "row", "index": 3}}. A line the game cannot '
            "read is played as an invalid action: a spent step (-50 points in the maze)"
        ),
    ],
    seed: Annotated[int, typer.Option(help="seed of monsters (maze) / refills (match-2)")] = 0,
    full_vision: Annotated[bool, typer.Option(help="maze: Table 7 full-vision ablation")] = False,
    no_props: Annotated[bool, typer.Option(help="match-2: NoProps ablation")] = False,
    max_steps: Annotated[int, typer.Option(help="maze step cap")] = DEFAULT_MAX_STEPS,
) -> None:
    """Play ACTIONS on LEVEL_FILE and print one JSON object per step.

    Maze actions: the numbers 0-11 or the names the game lists them with,
    0-2 `Move UP 1 step` / `2 steps` / `3 steps`, 3-5 DOWN, 6-8 LEFT, 9-11 RIGHT.
    A line the game cannot read is played as an invalid action (a spent step).
    """
    if game not in GAMES:
        raise ConfigError(f"GAME must be one of {', '.join(GAMES)}, got {game!r}")
    try:
        text = sys.stdin.read() if str(actions) == "-" else actions.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{actions}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InvalidFile(f"{actions}: not UTF-8 text") from None
    lines = [line for line in text.splitlines() if line.strip()]
    env: Env
    if game == "maze":
        lines = [maze_action_line(line) for line in lines]
        env = MazeEnv(load_maze_level(level_file), max_steps=max_steps, full_vision=full_vision)
    else:
        env = Match2Env(load_match2_level(level_file), props=not no_props)
    played = replay_lines(env, lines, seed=seed)
    for line in played:
        sys.stdout.write(line + "\n")
    if game == "maze":
        for number, line in enumerate(lines[: len(played)], 1):
            if parse_maze_action(line) is None:
                log.warning(
                    "action %d %r is no maze action (0-11 or a name such as 'Move UP 1 step'): "
                    "played as an invalid action (-%d points)",
                    number,
                    line,
                    STEP_COST,
                )


@app.command("learn")
def learn_cmd(
    game: Annotated[str, typer.Argument(help="maze | match2")],
    model: Annotated[str, typer.Option(help="provider/model for the agent and ExpVer modules")],
    rounds: Annotated[
        int, typer.Option(help="learning rounds (Delta checked after each)")
    ] = DEFAULT_ROUNDS,
    levels_per_round: Annotated[
        int, typer.Option(help="training levels per round")
    ] = DEFAULT_LEVELS_PER_ROUND,
    eval_levels: Annotated[
        int, typer.Option(help="held-out test levels for Delta (Eq. 6)")
    ] = DEFAULT_EVAL_LEVELS,
    no_verify: Annotated[bool, typer.Option(help="skip verification (Eq. 4)")] = False,
    no_truthweaver: Annotated[bool, typer.Option(help="ablation without TruthWeaver")] = False,
    truths: Annotated[Path | None, typer.Option(help="start from this truth file")] = None,
    levels: Annotated[
        Path | None,
        typer.Option(
            help="learn on these level files instead of the shipped ones (the eeb `levels` "
            "option: the release's data/levels); levels in a folder named *train* train, the "
            "others measure Delta"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of level choice and episodes")] = 0,
    max_steps: Annotated[
        int | None,
        typer.Option(help="cap every episode at this many steps (the maze's own cap too)"),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="endpoint for openai-compat/")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="env var holding the key")] = None,
    temperature: Annotated[float, typer.Option(help="sampling temperature")] = 0.0,
    no_cache: Annotated[bool, typer.Option("--no-cache")] = False,
    run_id: Annotated[str | None, typer.Option(help="output directory name")] = None,
    runs_dir: Annotated[Path, typer.Option(help="where run directories go")] = Path("runs"),
) -> None:
    """Agent-ExpVer online learning (§4): learn truths on training levels, keep what helps."""
    if game not in GAMES:
        raise ConfigError(f"GAME must be one of {', '.join(GAMES)}, got {game!r}")
    options = ModelOptions(
        base_url=base_url, api_key_env=api_key_env, params=ModelParams(temperature=temperature)
    )
    config = ExpVerConfig(
        game=game,  # type: ignore[arg-type]
        rounds=rounds,
        levels_per_round=levels_per_round,
        eval_levels=eval_levels,
        verification=not no_verify,
        truthweaver=not no_truthweaver,
        seed=seed,
    )
    out_dir = runs_dir / (run_id or f"eeb-expver-{game}-{model.replace('/', '-')}-s{seed}")
    result = asyncio.run(
        learn_truths(
            config,
            model,
            out_dir,
            model_options=options,
            cache=not no_cache,
            max_steps=max_steps,
            initial_truths=truths,
            levels=levels,
        )
    )
    table = Table(title=f"Agent-ExpVer on {game}", title_justify="left")
    for column in ("round", "truths", "verified", "eval score", "delta", "kept"):
        table.add_column(column)
    for r in result.rounds:
        delta = "–" if r.delta is None else f"{r.delta:+.1f}"
        table.add_row(
            str(r.round),
            f"{r.truths_before} -> {r.truths_after}",
            f"{r.experiences_verified}/{r.experiences_proposed}",
            f"{r.eval_score:.1f}",
            delta,
            "yes" if r.kept else "reverted",
        )
    console = Console()
    console.print(table)
    console.print(f"model calls {result.n_calls:,}, cost ${result.cost_usd:.4f}")
    console.print(f"truths: {out_dir / 'truths.json'}")
    console.print(f"learning curve: {out_dir / 'learning_curve.png'}")
