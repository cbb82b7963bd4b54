"""The levels Agent-ExpVer learns on (training) and measures Delta on (held-out, Eq. 6)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from forkingpaths.benchmarks.eeb.games import Game, match2_instance_id, maze_instance_id
from forkingpaths.benchmarks.eeb.level_files import load_level_path
from forkingpaths.benchmarks.eeb.match2_levels import (
    MATCH2_DIFFICULTIES,
    generate_match2_level,
    load_match2_split,
)
from forkingpaths.benchmarks.eeb.maze_levels import load_maze_split
from forkingpaths.core.errors import ConfigError

log = logging.getLogger(__name__)

MATCH2_TRAIN_SEED_BASE = 9000
"""Seeds of generated match-2 training levels start here, far from the test seeds 0-29."""
MATCH2_TRAIN_LEVELS = 30


def game_levels(game: Game, role: Literal["train", "eval"]) -> list[tuple[str, Any]]:
    """(id, level) pairs for a learning run, ids spelled as the eeb-v1 benchmark spells them.

    * eval: the test split (30 levels per difficulty), interleaved across difficulties (L1, L2,
      L3, L1, ... / easy, medium, hard, easy, ...) so that the first N held-out levels
      (`ExpVerConfig.eval_levels`) cover every difficulty. Eq. 6 measures Delta on test cases.
    * train, maze: the 30 shipped training maps (`maze-train-NNN`, levels cycling 1-3).
    * train, match2: the game ships no training split, so 30 levels are generated with
      difficulties cycling easy, medium, hard and seeds 9000 + i (`match2-train-<d>-<seed>`).
    """
    if game == "maze":
        if role == "train":
            return [(maze_instance_id(rel), lv) for rel, lv in load_maze_split("train")]
        groups: dict[Any, list[tuple[str, Any]]] = {}
        for rel, lv in load_maze_split("test"):
            groups.setdefault(lv.level, []).append((maze_instance_id(rel), lv))
        return _interleave(list(groups.values()))
    difficulties = list(MATCH2_DIFFICULTIES)
    if role == "train":
        out = []
        for i in range(MATCH2_TRAIN_LEVELS):
            difficulty, seed = difficulties[i % len(difficulties)], MATCH2_TRAIN_SEED_BASE + i
            out.append(
                (f"match2-train-{difficulty}-{seed}", generate_match2_level(difficulty, seed))
            )
        return out
    by_difficulty: dict[str, list[tuple[str, Any]]] = {d: [] for d in difficulties}
    for key, lv in load_match2_split("test").items():
        by_difficulty[key.split("/")[0]].append((match2_instance_id(key), lv))
    return _interleave(list(by_difficulty.values()))


def learning_levels(
    game: Game, levels: str | Path | None = None
) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(training, held-out) levels of a learning run: the shipped ones (`game_levels`), or
    those of `levels`, a file or folder as the eeb benchmark's `levels` option reads it (the
    release's `data/levels`, `level_files.load_level_path`; defects are warnings).

    From a path, the game's levels whose file lies in a folder whose name holds "train" (the
    release's `maze_train`) are the training levels, the others the held-out ones, interleaved
    across difficulties as in `game_levels`. A side the path has no level for stays the shipped
    one (logged: the release ships no match-2 training boards); a path without a single level
    of the game is refused.
    """
    if levels is None:
        return game_levels(game, "train"), game_levels(game, "eval")
    entries = load_level_path(levels).of(game)
    if not entries:
        raise ConfigError(
            f"levels: {str(levels)!r} holds no {game} level; give the release's data/levels "
            f"or a folder with {game} level files"
        )
    train = [(e.id, e.level) for e in entries if e.training]
    held_out = [e for e in entries if not e.training]
    groups: dict[Any, list[tuple[str, Any]]] = {}
    for entry in held_out:
        groups.setdefault(_difficulty(game, entry.level), []).append((entry.id, entry.level))
    evaluation = _interleave([groups[key] for key in sorted(groups)])
    for role, got in (("train", train), ("eval", evaluation)):
        if not got:
            log.info(
                "levels: %s holds no %s %s level; the shipped ones are used",
                levels,
                game,
                "training" if role == "train" else "held-out",
            )
    return (
        train or game_levels(game, "train"),
        evaluation or game_levels(game, "eval"),
    )


def _difficulty(game: Game, level: Any) -> int:
    """Sort key of a level's difficulty: the maze level number, the match-2 difficulty's rank."""
    if game == "maze":
        return int(level.level)
    return list(MATCH2_DIFFICULTIES).index(level.difficulty)


def _interleave(groups: list[list[tuple[str, Any]]]) -> list[tuple[str, Any]]:
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out += [group[i] for group in groups if i < len(group)]
    return out


def game_instance_params(level_id: str, level: Any) -> dict[str, Any]:
    """The `Instance.params` the eeb-v1 benchmark gives a level (`game` and `level` or
    `difficulty`), for agents that read them in `reset`."""
    difficulty = getattr(level, "difficulty", None)
    if difficulty is not None:
        return {"game": "match2", "difficulty": difficulty}
    return {"game": "maze", "level": level.level}
