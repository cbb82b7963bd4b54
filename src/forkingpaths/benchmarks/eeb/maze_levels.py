"""Maze levels of EvoEmpirBench: the MazeLevel record, its JSON formats, generator and dataset."""

from __future__ import annotations

import json
import logging
import random
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from forkingpaths.core.errors import ConfigError, InvalidFile, shown

log = logging.getLogger(__name__)

Cell = tuple[int, int]
"""(row, col): row 0 is the top row, col 0 the left column (paper App. B.1)."""

SCHEMA_VERSION = 1
LEVELS: tuple[int, ...] = (1, 2, 3)
LEVEL_NAMES: Mapping[int, str] = {1: "easy", 2: "medium", 3: "hard"}
"""Table 2's difficulty names; our files write them as `mode`."""
DEFAULT_SIZE = 9
"""Table 2: every level is 9x9."""
MIN_SIZE, MAX_SIZE = 3, 30
MIN_GENERATED_SIZE = 5
"""Smallest board on which 5 coins, 4 items and 2 far-away monsters always fit."""
ITEM_NAMES: tuple[str, ...] = ("shovel", "sword", "magnet", "key")
"""The four level-3 items (§3.1); the paper also calls the shovel a pickaxe."""
ITEM_ALIASES: Mapping[str, str] = {"pickaxe": "shovel"}
COINS_PER_MAP = 5
MONSTERS_PER_LEVEL: Mapping[int, int] = {1: 0, 2: 2, 3: 2}
WALL_DENSITY: Mapping[int, float] = {1: 0.15, 2: 0.20, 3: 0.25}
"""Fraction of the board generated as walls (12, 16 and 20 walls on 9x9). The paper gives no
density; harder levels get more walls ("more complex maps", §3.2), and level 3 the most since
its shovel can break them."""
RELEASE_SIZES: Mapping[int, int] = {1: 7, 2: 9, 3: 11}
"""Board sizes of the release (src/config/game_config.py GRID_SIZES; its README's table), not
Table 2's 9x9 for every level."""
RELEASE_WALL_DENSITY: Mapping[int, float] = {1: 0.14, 2: 0.13, 3: 0.13}
"""Mean wall fraction of the release's 120 maze files per level, measured (13.8, 13.4 and 12.9
percent; the release draws 2-3, 3-4 and 4-6 random wall shapes, src/game/obstacles.py):
7, 11 and 16 walls on 7x7, 9x9 and 11x11."""
MONSTER_MIN_START_DISTANCE = 4
"""Generated monsters start at least this Manhattan distance from the start cell, so that no
episode is lost before the agent has seen a monster."""

TEST_LEVEL_COUNT = 30
TRAIN_LEVEL_COUNT = 30
TRAIN_SEED_BASE = 9000


def maze_test_seed(level: int, index: int) -> int:
    """Seed of test instance `index` (0-29) of `level`: 1000 * level + index."""
    return 1000 * level + index


def maze_train_spec(index: int) -> tuple[int, int]:
    """(level, seed) of training map `index` (0-29): levels cycle 1, 2, 3; seed 9000 + index."""
    return index % 3 + 1, TRAIN_SEED_BASE + index


# Map characters, shared by the `grid` field of level files and by the env's rendering.
WALL, EMPTY, COIN, MONSTER, GOAL, AGENT, UNEXPLORED = "#", ".", "C", "M", "G", "A", "?"
START = "S"
ITEM_GLYPHS: Mapping[str, str] = {"shovel": "T", "sword": "W", "magnet": "N", "key": "K"}
_GLYPH_ITEMS = {glyph: name for name, glyph in ITEM_GLYPHS.items()}
_GRID_CHARS = (EMPTY, " ", WALL, COIN, MONSTER, GOAL, AGENT, START, *ITEM_GLYPHS.values())
RELEASE_CODES: Mapping[int, str] = {
    0: EMPTY,
    1: WALL,
    2: START,
    3: GOAL,
    4: AGENT,
    5: COIN,
    6: MONSTER,
    7: ITEM_GLYPHS["shovel"],
    8: ITEM_GLYPHS["sword"],
    9: ITEM_GLYPHS["magnet"],
    10: ITEM_GLYPHS["key"],
}
"""Integer grid codes of the released maze files, as the release's src/config/game_config.py
defines them (EMPTY 0, OBSTACLE 1, START 2, GOAL 3, AGENT 4, COIN 5, MONSTER 6, SHOVEL 7,
SWORD 8, MAGNET 9, KEY 10), mapped to our map characters."""


@dataclass(frozen=True)
class MazeLevel:
    """One maze board: walls, coins, monsters' and items' starting cells, start and goal.

    Coordinates are (row, col) with row 0 at the top. `monsters` keeps its order, which is the
    order monsters move in. `level` (1-3, Table 2) names the difficulty; the rules follow the
    content, not the number (a key anywhere gates the goal). `meta` (seed, source) is not
    compared.
    """

    size: int
    start: Cell
    goal: Cell
    walls: frozenset[Cell]
    coins: tuple[Cell, ...]
    monsters: tuple[Cell, ...] = ()
    items: Mapping[str, Cell] = field(default_factory=dict, hash=False)
    level: int = 1
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        _check_level(self, "MazeLevel", ConfigError)

    @property
    def cells(self) -> int:
        return self.size * self.size

    def in_grid(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.size and 0 <= cell[1] < self.size

    def reachable(self, source: Cell, *, avoid: Iterable[Cell] = ()) -> frozenset[Cell]:
        """Cells reachable from `source` by 4-neighbour steps over non-wall cells, never entering
        a cell of `avoid`."""
        blocked = self.walls | frozenset(avoid)
        seen = {source}
        queue = deque([source])
        while queue:
            r, c = queue.popleft()
            for nxt in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if nxt not in seen and nxt not in blocked and self.in_grid(nxt):
                    seen.add(nxt)
                    queue.append(nxt)
        return frozenset(seen)

    def grid_rows(self) -> list[str]:
        """The whole board as text rows (the `grid` field our files write)."""
        rows = [[EMPTY] * self.size for _ in range(self.size)]
        for r, c in self.walls:
            rows[r][c] = WALL
        for r, c in self.coins:
            rows[r][c] = COIN
        for name, (r, c) in self.items.items():
            rows[r][c] = ITEM_GLYPHS[name]
        for r, c in self.monsters:
            rows[r][c] = MONSTER
        rows[self.start[0]][self.start[1]] = START
        rows[self.goal[0]][self.goal[1]] = GOAL
        return ["".join(row) for row in rows]

    # ---- the level-file JSON contract ----

    def to_json(self) -> dict[str, Any]:
        """Our level file: the artifact's keys (`grid`, `obstacles`, `coins`, `monsters`,
        `items`, `mode`, `grid_size`) plus `schema_version`, `level`, `start`, `goal`, `seed`."""
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "level": self.level,
            "mode": LEVEL_NAMES[self.level],
            "grid_size": self.size,
            "start": list(self.start),
            "goal": list(self.goal),
            "grid": self.grid_rows(),
            "obstacles": [list(c) for c in sorted(self.walls)],
            "coins": [list(c) for c in self.coins],
            "monsters": [list(c) for c in self.monsters],
            "items": {name: list(self.items[name]) for name in ITEM_NAMES if name in self.items},
        }
        if "seed" in self.meta:
            data["seed"] = self.meta["seed"]
        return data

    @classmethod
    def from_json(
        cls, data: Any, source: str = "maze level", warnings: list[str] | None = None
    ) -> MazeLevel:
        """Parse and validate our files and the released ones (uuu-quant/EvoEmpirBench,
        data/levels/maze_*); errors name the field.

        * `grid_size`: an integer N or `[N, N]` (boards are square). Optional when `grid` is
          given.
        * `grid`: N rows, each a string or a list of N cells. Cells are the release's integer
          codes (`RELEASE_CODES`: 0 free, 1 wall, 2 start, 3 goal, 4 agent = start, 5 coin,
          6 monster, 7 shovel, 8 sword, 9 magnet, 10 key) or our map characters: `.` or space
          free, `#` wall, `C` coin, `M` monster, `T`/`W`/`N`/`K` shovel/sword/magnet/key, `G`
          goal, `A` or `S` start. Whatever the grid shows is merged with the explicit lists (a
          coin in both is one coin).
        * `obstacles`, `coins`, `monsters`: lists of `[row, col]`.
        * `items`: an object item -> `[row, col]` (or `[[row, col]]`, or null for absent);
          items are `shovel` (alias `pickaxe`), `sword`, `magnet`, `key`.
        * `level` or `mode`: 1-3, "1"-"3", "level1"/"level_1"/"Level 1" (the release's
          spelling), or easy/medium/hard. Without either, the content decides: items -> 3,
          monsters -> 2, else 1.
        * `start`, `goal`: `[row, col]`; default bottom-left and top-right (§3.1, and the
          release's START_POS/GOAL_POS).
        * Other top-level keys are ignored.

        Where a grid that draws a kind of thing (walls, coins, monsters, an item) disagrees
        with its list, the entry still loads: each disagreement is a warning naming the file
        and the cell (appended to `warnings` when given, else logged). Walls, coins and monsters
        are the union of both; an item drawn elsewhere than listed is where the grid draws it
        (the release's env picks items up from its grid).
        """
        if not isinstance(data, dict):
            raise InvalidFile(f"{source}: expected a JSON object, got {type(data).__name__}")
        version = data.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise InvalidFile(
                f"{source}: schema_version {version!r} is not supported (expected {SCHEMA_VERSION})"
            )
        size = _parse_size(data, source)
        walls: set[Cell] = set()
        coins: list[Cell] = []
        monsters: list[Cell] = []
        items: dict[str, Cell] = {}
        grid_start: Cell | None = None
        grid_goal: Cell | None = None
        notes: list[str] = []
        if data.get("grid") is not None:
            marks = _parse_grid(data["grid"], size, source)
            grid_walls = sorted(marks["walls"])
            grid_coins, grid_monsters = marks["coins"], marks["monsters"]
            grid_items, grid_start, grid_goal = marks["items"], marks["start"], marks["goal"]
        else:
            grid_walls, grid_coins, grid_monsters, grid_items = [], [], [], {}
        listed_walls = _cells(data.get("obstacles", []), size, f"{source}: obstacles")
        listed_coins = _cells(data.get("coins", []), size, f"{source}: coins")
        listed_monsters = _cells(data.get("monsters", []), size, f"{source}: monsters")
        for key, listed, drawn in (
            ("obstacles", listed_walls, grid_walls),
            ("coins", listed_coins, grid_coins),
            ("monsters", listed_monsters, grid_monsters),
        ):
            if drawn and key in data:
                notes += _disagreements(source, key, listed, drawn)
        walls |= set(listed_walls) | set(grid_walls)
        coins = _merge(listed_coins, grid_coins)
        monsters = _merge(listed_monsters, grid_monsters)
        items = _parse_items(data.get("items"), size, source)
        for name, cell in grid_items.items():
            if name in items and items[name] != cell:
                notes.append(
                    f"{source}: grid[{cell[0]}][{cell[1]}] draws the {name} but items.{name} "
                    f"is {list(items[name])}; the grid's cell is used"
                )
            items[name] = cell
        if grid_items:
            for name, cell in items.items():
                if name not in grid_items:
                    notes.append(
                        f"{source}: items.{name} is {list(cell)} but the grid draws no {name}; "
                        "the listed cell is used"
                    )
        if warnings is not None:
            warnings.extend(notes)  # the caller reports them, with its other findings
        else:
            for note in notes:
                log.warning("%s", note)
        start = _endpoint(data, "start", grid_start, (size - 1, 0), size, source)
        goal = _endpoint(data, "goal", grid_goal, (0, size - 1), size, source)
        level = _parse_level(data, bool(items), bool(monsters), source)
        meta: dict[str, Any] = {"source": source}
        if isinstance(data.get("seed"), int):
            meta["seed"] = data["seed"]
        return _build(
            InvalidFile,
            source,
            size=size,
            start=start,
            goal=goal,
            walls=frozenset(walls),
            coins=tuple(coins),
            monsters=tuple(monsters),
            items={name: items[name] for name in ITEM_NAMES if name in items},
            level=level,
            meta=meta,
        )

    from_artifact = from_json


def _build(error: type[ConfigError], source: str, **fields: Any) -> MazeLevel:
    """Construct a MazeLevel, reporting a rule violation as `error` under `source`."""
    try:
        return MazeLevel(**fields)
    except ConfigError as exc:
        message = str(exc).removeprefix("MazeLevel: ")
        raise error(f"{source}: {message}") from None


def _check_level(level: MazeLevel, source: str, error: type[ConfigError]) -> None:
    """Every rule a board must satisfy; raises `error` naming the field."""
    size = level.size
    if not isinstance(size, int) or isinstance(size, bool) or not MIN_SIZE <= size <= MAX_SIZE:
        raise error(f"{source}: size must be an integer {MIN_SIZE}-{MAX_SIZE}, got {size!r}")
    if level.level not in LEVELS:
        raise error(f"{source}: level must be 1, 2 or 3, got {level.level!r}")

    def check(cell: Any, where: str) -> Cell:
        if (
            not isinstance(cell, tuple)
            or len(cell) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in cell)
        ):
            raise error(f"{source}: {where}: expected a (row, col) tuple, got {cell!r}")
        if not level.in_grid(cell):
            raise error(
                f"{source}: {where}: {list(cell)} is off the {size}x{size} grid "
                f"(rows and cols 0-{size - 1})"
            )
        return cell

    start, goal = check(level.start, "start"), check(level.goal, "goal")
    if start == goal:
        raise error(f"{source}: start and goal are the same cell {list(start)}")
    if not isinstance(level.walls, frozenset):
        raise error(f"{source}: walls must be a frozenset of (row, col)")
    for cell in sorted(level.walls, key=repr):
        check(cell, f"obstacles {cell!r}")
        if cell in (start, goal):
            raise error(f"{source}: obstacles: {list(cell)} is the start or the goal cell")
    reserved = {start: "the start", goal: "the goal"}
    taken: dict[Cell, str] = {}
    for where, cells in (("coins", level.coins), ("monsters", level.monsters)):
        if not isinstance(cells, tuple):
            raise error(f"{source}: {where} must be a tuple of (row, col)")
        for i, cell in enumerate(cells):
            check(cell, f"{where}[{i}]")
            clash = reserved.get(cell) or ("a wall" if cell in level.walls else None)
            if clash is None and where == "coins" and cell in taken:
                clash = "another coin"
            if clash is None and where == "monsters" and cell in cells[:i]:
                clash = "another monster"
            if clash:
                raise error(f"{source}: {where}[{i}]: {list(cell)} is on {clash}")
            if where == "coins":
                taken[cell] = "a coin"
    if not isinstance(level.items, Mapping):
        raise error(f"{source}: items must map item names to (row, col)")
    for name, cell in level.items.items():
        if name not in ITEM_NAMES:
            raise error(f"{source}: items: unknown item {name!r}; allowed: {', '.join(ITEM_NAMES)}")
        check(cell, f"items.{name}")
        clash = reserved.get(cell) or ("a wall" if cell in level.walls else taken.get(cell))
        if clash:
            raise error(f"{source}: items.{name}: {list(cell)} is on {clash}")
        taken[cell] = f"the {name}"


# ---- parsing helpers (errors are InvalidFile naming the field) ----


def _parse_size(data: dict[str, Any], source: str) -> int:
    raw = data.get("grid_size")
    if raw is None:
        grid = data.get("grid")
        if not isinstance(grid, list) or not grid:
            raise InvalidFile(f"{source}: missing field 'grid_size' (and no 'grid' to infer it)")
        raw = len(grid)
    if isinstance(raw, list) and len(raw) == 2 and raw[0] == raw[1]:
        raw = raw[0]
    if not isinstance(raw, int) or isinstance(raw, bool) or not MIN_SIZE <= raw <= MAX_SIZE:
        raise InvalidFile(
            f"{source}: grid_size must be an integer {MIN_SIZE}-{MAX_SIZE} (or [N, N]), "
            f"got {json.dumps(raw)[:60]}"
        )
    return raw


def _parse_grid(grid: Any, size: int, source: str) -> dict[str, Any]:
    if not isinstance(grid, list) or len(grid) != size:
        got = f"{len(grid)} rows" if isinstance(grid, list) else type(grid).__name__
        raise InvalidFile(f"{source}: grid must have {size} rows (grid_size), got {got}")
    marks: dict[str, Any] = {
        "walls": set(),
        "coins": [],
        "monsters": [],
        "items": {},
        "start": None,
        "goal": None,
    }
    for r, row in enumerate(grid):
        if not isinstance(row, str | list) or len(row) != size:
            got = f"{len(row)} cells" if isinstance(row, str | list) else type(row).__name__
            raise InvalidFile(f"{source}: grid[{r}] must have {size} cells (grid_size), got {got}")
        for c, value in enumerate(row):
            where = f"{source}: grid[{r}][{c}]"
            if isinstance(value, int) and not isinstance(value, bool):
                if value not in RELEASE_CODES:
                    raise InvalidFile(
                        f"{where}: unknown integer cell {value}; the release's codes are 0-10 "
                        "(0 free, 1 wall, 2 start, 3 goal, 4 agent, 5 coin, 6 monster, "
                        "7 shovel, 8 sword, 9 magnet, 10 key)"
                    )
                value = RELEASE_CODES[value]
            if not isinstance(value, str) or value not in _GRID_CHARS:
                raise InvalidFile(
                    f"{where}: unknown cell {json.dumps(value)}; allowed: 0, 1 or one of "
                    f"{' '.join(repr(ch) for ch in _GRID_CHARS)}"
                )
            cell = (r, c)
            if value == WALL:
                marks["walls"].add(cell)
            elif value == COIN:
                marks["coins"].append(cell)
            elif value == MONSTER:
                marks["monsters"].append(cell)
            elif value in _GLYPH_ITEMS:
                name = _GLYPH_ITEMS[value]
                if name in marks["items"]:
                    raise InvalidFile(f"{where}: a second {name} ({value!r}); one per map")
                marks["items"][name] = cell
            elif value in (AGENT, START, GOAL):
                key = "goal" if value == GOAL else "start"
                if marks[key] is not None:
                    raise InvalidFile(f"{where}: a second {key} ({value!r})")
                marks[key] = cell
    return marks


def _cell(value: Any, size: int, where: str) -> Cell:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise InvalidFile(f"{where}: expected [row, col] with two integers, got {shown(value)}")
    if not (0 <= value[0] < size and 0 <= value[1] < size):
        raise InvalidFile(
            f"{where}: {list(value)} is off the {size}x{size} grid (rows and cols 0-{size - 1})"
        )
    return (value[0], value[1])


def _cells(value: Any, size: int, where: str) -> list[Cell]:
    if not isinstance(value, list):
        raise InvalidFile(f"{where}: expected a list of [row, col], got {shown(value)}")
    return [_cell(v, size, f"{where}[{i}]") for i, v in enumerate(value)]


_KIND_WORDS: Mapping[str, str] = {"obstacles": "a wall", "coins": "a coin", "monsters": "a monster"}


def _disagreements(source: str, key: str, listed: list[Cell], drawn: list[Cell]) -> list[str]:
    """A warning per cell that only one of `key`'s list and the grid marks (both are kept)."""
    what = _KIND_WORDS[key]
    out = [
        f"{source}: grid[{r}][{c}] draws {what} that {key} does not list; kept"
        for r, c in drawn
        if (r, c) not in listed
    ]
    out += [
        f"{source}: {key}[{i}] {[r, c]} is not drawn on the grid (grid[{r}][{c}]); kept"
        for i, (r, c) in enumerate(listed)
        if (r, c) not in drawn
    ]
    return out


def _merge(listed: list[Cell], drawn: list[Cell]) -> list[Cell]:
    """The listed cells in their order (a cell listed twice is left for validation to refuse),
    then the ones only the grid shows, in row-major order."""
    return listed + [cell for cell in drawn if cell not in listed]


def _parse_items(raw: Any, size: int, source: str) -> dict[str, Cell]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidFile(f"{source}: items must be an object item -> [row, col], got {shown(raw)}")
    items: dict[str, Cell] = {}
    for key, value in raw.items():
        name = ITEM_ALIASES.get(key, key)
        where = f"{source}: items.{key}"
        if name not in ITEM_NAMES:
            raise InvalidFile(
                f"{where}: unknown item {key!r}; allowed: {', '.join(ITEM_NAMES)} "
                f"(or {', '.join(ITEM_ALIASES)})"
            )
        if value is None or value == []:
            continue
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
            value = value[0]
        if name in items:
            raise InvalidFile(f"{where}: {name} is given twice; one per map")
        items[name] = _cell(value, size, where)
    return items


def _endpoint(
    data: dict[str, Any], key: str, drawn: Cell | None, default: Cell, size: int, source: str
) -> Cell:
    listed = _cell(data[key], size, f"{source}: {key}") if data.get(key) is not None else None
    if listed is not None and drawn is not None and listed != drawn:
        raise InvalidFile(f"{source}: {key} is {list(listed)} but grid marks it at {list(drawn)}")
    return listed or drawn or default


_MODE_WORDS: Mapping[str, int] = {
    **{name: level for level, name in LEVEL_NAMES.items()},
    **{f"level{level}": level for level in LEVELS},
    **{f"level_{level}": level for level in LEVELS},
    **{f"level {level}": level for level in LEVELS},
    **{str(level): level for level in LEVELS},
}


def _parse_level(data: dict[str, Any], has_items: bool, has_monsters: bool, source: str) -> int:
    found: dict[str, int] = {}
    for key in ("level", "mode"):
        raw = data.get(key)
        if raw is None:
            continue
        if isinstance(raw, int) and not isinstance(raw, bool) and raw in LEVELS:
            found[key] = raw
        elif isinstance(raw, str) and raw.strip().lower() in _MODE_WORDS:
            found[key] = _MODE_WORDS[raw.strip().lower()]
        else:
            raise InvalidFile(
                f"{source}: {key} {shown(raw)} is not a level; allowed: 1-3, "
                "'level1'-'level3', 'Level 1'-'Level 3' or easy/medium/hard"
            )
    if len(set(found.values())) > 1:
        raise InvalidFile(f"{source}: level {found['level']} and mode {found['mode']} disagree")
    if found:
        return next(iter(found.values()))
    return 3 if has_items else 2 if has_monsters else 1


# ---- the generator ----


def generate_maze_level(
    level: int, seed: int, size: int = DEFAULT_SIZE, wall_density: float | None = None
) -> MazeLevel:
    """A deterministic board for `level` (1-3) and `seed` on a `size` x `size` grid.

    Start bottom-left, goal top-right. Walls fill `wall_density` (default WALL_DENSITY[level];
    RELEASE_WALL_DENSITY for the release's geometry) of the board, each kept
    only if every free cell stays reachable from the start without entering the goal, so the
    goal, every coin and every item (the key too, without passing the goal) are reachable.
    Then 5 coins, at level 3 the four items (in ITEM_NAMES order), and at levels 2-3 two
    monsters at least MONSTER_MIN_START_DISTANCE from the start, all on distinct free cells.
    Every draw is `rng.random()` of a string-seeded `random.Random`, stable across Python
    versions.
    """
    if level not in LEVELS:
        raise ConfigError(f"level must be 1, 2 or 3, got {level!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(f"seed must be an integer, got {seed!r}")
    if (
        not isinstance(size, int)
        or isinstance(size, bool)
        or not (MIN_GENERATED_SIZE <= size <= MAX_SIZE)
    ):
        raise ConfigError(
            f"size must be an integer {MIN_GENERATED_SIZE}-{MAX_SIZE} for generated levels, "
            f"got {size!r}"
        )
    if wall_density is None:
        wall_density = WALL_DENSITY[level]
    if not isinstance(wall_density, float) or not 0.0 <= wall_density <= 0.5:
        raise ConfigError(f"wall_density must be a fraction 0.0-0.5, got {wall_density!r}")
    rng = random.Random(f"forkingpaths/eeb/maze/v1/level{level}/size{size}/seed{seed}")
    start, goal = (size - 1, 0), (0, size - 1)
    board = [(r, c) for r in range(size) for c in range(size)]
    candidates = [cell for cell in board if cell not in (start, goal)]
    order = sorted(candidates, key=lambda _: rng.random())
    target = round(wall_density * size * size)
    walls: set[Cell] = set()
    for cell in order:
        if len(walls) == target:
            break
        walls.add(cell)
        if not _connected(size, walls, start, goal):
            walls.discard(cell)
    pool = [cell for cell in candidates if cell not in walls]
    coins = tuple(_draw(rng, pool) for _ in range(COINS_PER_MAP))
    items = {name: _draw(rng, pool) for name in ITEM_NAMES} if level == 3 else {}
    far = [
        cell
        for cell in pool
        if abs(cell[0] - start[0]) + abs(cell[1] - start[1]) >= MONSTER_MIN_START_DISTANCE
    ]
    monsters = tuple(_draw(rng, far) for _ in range(MONSTERS_PER_LEVEL[level]))
    return MazeLevel(
        size=size,
        start=start,
        goal=goal,
        walls=frozenset(walls),
        coins=coins,
        monsters=monsters,
        items=items,
        level=level,
        meta={"seed": seed},
    )


def generate_release_geometry_level(level: int, seed: int) -> MazeLevel:
    """`generate_maze_level` with the release's geometry: RELEASE_SIZES[level] and
    RELEASE_WALL_DENSITY[level] (the `geometry=release` level set)."""
    if level not in LEVELS:
        raise ConfigError(f"level must be 1, 2 or 3, got {level!r}")
    return generate_maze_level(level, seed, RELEASE_SIZES[level], RELEASE_WALL_DENSITY[level])


def _draw(rng: random.Random, pool: list[Cell]) -> Cell:
    """Remove and return a uniformly drawn cell of `pool` (sorted, so the draw is stable)."""
    return pool.pop(int(rng.random() * len(pool)))


def _connected(size: int, walls: set[Cell], start: Cell, goal: Cell) -> bool:
    """All free cells but the goal reachable from the start avoiding the goal, and the goal
    next to one of them."""
    seen = {start}
    queue = deque([start])
    while queue:
        r, c = queue.popleft()
        for nxt in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if (
                0 <= nxt[0] < size
                and 0 <= nxt[1] < size
                and nxt not in seen
                and nxt not in walls
                and nxt != goal
            ):
                seen.add(nxt)
                queue.append(nxt)
    gr, gc = goal
    goal_open = any(n in seen for n in ((gr + 1, gc), (gr - 1, gc), (gr, gc - 1), (gr, gc + 1)))
    return goal_open and len(seen) == size * size - len(walls) - 1


# ---- the shipped dataset ----

Split = Literal["test", "train"]
DATA_PACKAGE = "forkingpaths.benchmarks.eeb"


def maze_dataset_specs() -> list[tuple[str, int, int]]:
    """(relative path, level, seed) of every shipped level file: test/level{L}/NNN.json with
    seed 1000 * L + NNN (30 per level), and train/NNN.json with level NNN % 3 + 1 and seed
    9000 + NNN (30 maps)."""
    specs = [
        (f"test/level{level}/{i:03d}.json", level, maze_test_seed(level, i))
        for level in LEVELS
        for i in range(TEST_LEVEL_COUNT)
    ]
    for i in range(TRAIN_LEVEL_COUNT):
        level, seed = maze_train_spec(i)
        specs.append((f"train/{i:03d}.json", level, seed))
    return specs


def dump_level(level: MazeLevel) -> str:
    """The file text of a level: one top-level key per line, values compact, and the grid one
    row per line, so a diff of two boards reads row by row."""
    lines = []
    for key, value in level.to_json().items():
        if key == "grid":
            rows = ",\n".join(f"    {json.dumps(row)}" for row in value)
            lines.append(f"  {json.dumps(key)}: [\n{rows}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def build_maze_dataset(out_dir: str | Path) -> list[Path]:
    """Write every level of `maze_dataset_specs()` under `out_dir` and return the paths.

    The shipped files (`eeb/data/maze/`) are this function's output for `DEFAULT_SIZE`; a test
    keeps the two equal.
    """
    root = Path(out_dir)
    written = []
    for rel, level, seed in maze_dataset_specs():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_level(generate_maze_level(level, seed)), encoding="utf-8")
        written.append(path)
    return written


def load_maze_level(path: str | Path) -> MazeLevel:
    """Read one level file (ours or the paper artifact's)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidFile(f"{path}: cannot read the level file ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise InvalidFile(f"{path}: not valid JSON ({exc})") from None
    return MazeLevel.from_json(data, source=str(path))


def load_maze_split(split: Split, level: int | None = None) -> list[tuple[str, MazeLevel]]:
    """The shipped levels of `split` ("test": 30 per level; "train": 30 mixed), optionally of
    one `level`, as (instance id, level) pairs; ids read like "test/level2/007"."""
    if split not in ("test", "train"):
        raise ConfigError(f"split must be 'test' or 'train', got {split!r}")
    if level is not None and level not in LEVELS:
        raise ConfigError(f"level must be 1, 2, 3 or None, got {level!r}")
    root = files(DATA_PACKAGE) / "data" / "maze"
    out = []
    for rel, spec_level, _seed in maze_dataset_specs():
        if not rel.startswith(f"{split}/") or (level is not None and spec_level != level):
            continue
        resource = root.joinpath(*rel.split("/"))
        source = f"eeb/data/maze/{rel}"
        try:
            data = json.loads(resource.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidFile(f"{source}: not valid JSON ({exc})") from None
        out.append((rel.removesuffix(".json"), MazeLevel.from_json(data, source=source)))
    return out
