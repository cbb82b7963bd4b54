"""Level files given by the user (`levels=PATH`): the release's mazes and match-2 boards, ours."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from forkingpaths.benchmarks.eeb.match2_levels import MATCH2_DIFFICULTIES, Match2Level
from forkingpaths.benchmarks.eeb.maze_levels import MazeLevel
from forkingpaths.core.errors import ConfigError, InvalidFile

log = logging.getLogger(__name__)

LevelGame = Literal["maze", "match2"]
MAZE_KEYS = ("grid", "obstacles", "grid_size")
"""A JSON object with one of these is a maze (the release's maze_eval / maze_train files)."""
MATCH2_KEY = "board"
"""A JSON object with `board` is a match-2 level (the release's match_game files)."""
TRAINING_FOLDER = "train"
"""A level file in a folder whose name holds this (any case) is a training level."""


@dataclass(frozen=True)
class LevelEntry:
    """One playable level read from a file: its instance id, game, level and where it came
    from (the file, plus `[i]` inside a collection)."""

    id: str
    game: LevelGame
    level: MazeLevel | Match2Level
    source: str

    @property
    def training(self) -> bool:
        """A training level: its file lies in a folder whose name holds "train" (the
        release's `maze_train`); every other level is held out (`maze_eval`, `match_game`).
        `eeb learn --levels` learns on the training ones and the `levels` option's splits
        follow the same line."""
        # A collection's source is `FILE[i]`: the folder is that of FILE.
        folder = Path(self.source.rsplit("[", 1)[0]).parent.name
        return TRAINING_FOLDER in folder.lower()


@dataclass(frozen=True)
class LevelSet:
    """What a `levels=PATH` holds: the playable entries in file order, and one line per
    defect (a refused entry or a repaired one), each naming the file and the position."""

    entries: tuple[LevelEntry, ...]
    warnings: tuple[str, ...]

    def of(self, game: LevelGame, *, training: bool | None = None) -> list[LevelEntry]:
        """The entries of `game`; only the training (True) or held-out (False) ones if
        `training` is given."""
        return [
            e
            for e in self.entries
            if e.game == game and (training is None or e.training is training)
        ]


def _natural(path: Path) -> list[Any]:
    """Sort key reading digit runs as numbers (Level_1_2 before Level_1_10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


def _slug(rel: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "-", rel).strip("-")


def load_level_path(path: str | Path) -> LevelSet:
    """Every level under `path`: a JSON file (one level, or a list of levels as the release's
    `Level_N_collection.json`) or a directory searched recursively for `*.json`.

    The kind of each entry follows its keys (`board`: match-2; `grid`, `obstacles` or
    `grid_size`: maze). An entry identical to one already read is skipped (the release ships
    each maze twice: `Level_N_i.json` and inside `Level_N_collection.json`). An entry that
    cannot be played is refused with its reason and the rest loads; refusals and repairs are
    warnings (logged, and in `LevelSet.warnings`). A match-2 level without `difficulty` takes
    it from its folder when the folder is named easy, medium or hard (the release's layout).
    Ids: `maze-<path>` / `match2-<path>`, the path relative to `path` without `.json`,
    `-NNN` appended for the i-th (1-based) entry of a collection.
    """
    root = Path(path)
    if not root.exists():
        raise ConfigError(f"levels: {str(path)!r} does not exist; give a level file or folder")
    if root.is_dir():
        files = sorted(root.rglob("*.json"), key=_natural)
        base = root
    else:
        files, base = [root], root.parent
    entries: list[LevelEntry] = []
    warnings: list[str] = []
    seen: dict[str, str] = {}
    for file in files:
        rel = file.relative_to(base).with_suffix("").as_posix()
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            warnings.append(f"{file}: cannot read the file ({exc}); refused")
            continue
        except json.JSONDecodeError as exc:
            warnings.append(f"{file}: not valid JSON ({exc.msg}, line {exc.lineno}); refused")
            continue
        if isinstance(data, list):
            items = [(f"{file}[{i}]", f"{rel}-{i + 1:03d}", item) for i, item in enumerate(data)]
        else:
            items = [(str(file), rel, data)]
        for source, name, item in items:
            canonical = json.dumps(item, sort_keys=True)
            if canonical in seen:
                log.debug("%s: the same level as %s; skipped", source, seen[canonical])
                continue
            seen[canonical] = source
            entry = _entry(item, source, name, file.parent.name, warnings)
            if entry is not None:
                entries.append(entry)
    for line in warnings:
        log.warning("%s", line)
    if not entries:
        shown = "; ".join(warnings[:3]) or "no *.json files"
        raise ConfigError(f"levels: no playable level under {str(path)!r} ({shown})")
    return LevelSet(tuple(entries), tuple(warnings))


def _entry(
    data: Any, source: str, name: str, folder: str, warnings: list[str]
) -> LevelEntry | None:
    """The entry of one JSON value, or None (with the reason in `warnings`)."""
    if not isinstance(data, dict):
        warnings.append(f"{source}: expected a level object, got {type(data).__name__}; refused")
        return None
    try:
        if MATCH2_KEY in data:
            if "difficulty" not in data and folder in MATCH2_DIFFICULTIES:
                data = {**data, "difficulty": folder}
            level: MazeLevel | Match2Level = Match2Level.from_json(data, source=source)
            return LevelEntry(f"match2-{_slug(name)}", "match2", level, source)
        if any(key in data for key in MAZE_KEYS):
            maze = MazeLevel.from_json(data, source=source, warnings=warnings)
            warnings.extend(_maze_defects(maze, source))
            return LevelEntry(f"maze-{_slug(name)}", "maze", maze, source)
    except InvalidFile as exc:
        warnings.append(f"{exc}; refused")
        return None
    warnings.append(
        f"{source}: neither a maze (no {', '.join(MAZE_KEYS)}) nor a match-2 level (no "
        f"{MATCH2_KEY!r}); refused"
    )
    return None


def _maze_defects(maze: MazeLevel, source: str) -> list[str]:
    """Playable but flawed: a goal or coin that no walk from the start reaches. A shovel on
    the board may still open it, and the release's own env lets a 2-3 cell move jump over
    walls (it checks only the landing cell), so it is a warning, not a refusal."""
    reach = maze.reachable(maze.start)
    why = "cannot be reached from the start without crossing a wall"
    out = []
    if maze.goal not in reach:
        out.append(f"{source}: the goal {list(maze.goal)} {why}")
    for i, cell in enumerate(maze.coins):
        if cell not in reach:
            out.append(f"{source}: coins[{i}] {list(cell)} {why}")
    return out
