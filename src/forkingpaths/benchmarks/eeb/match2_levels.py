"""Match-2 levels of EvoEmpirBench: the level record, its JSON format, generator, shipped data."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError, InvalidFile, shown

BOARD_SIZE = 8
"""The board is 8x8 (§3.1, Table 2)."""
COLOURS: tuple[str, ...] = ("A", "B", "C", "D")
"""Tile colours (§3.1, App. B.1)."""
PROPS: tuple[str, ...] = ("row", "col", "bomb", "hammer")
"""Prop names as the action `type` and the level's `inventory` keys spell them (App. B.1)."""
PROP_COSTS: Mapping[str, int] = {"row": 32, "col": 32, "bomb": 12, "hammer": 4}
"""Points a prop costs (App. B.1 prompt; §3.1 "at point costs")."""
DIFFICULTY_LABELS: tuple[str, ...] = ("easy", "medium", "hard", "custom")
"""`custom` marks a level that names no difficulty (a hand-made or artifact level)."""


@dataclass(frozen=True)
class Match2Difficulty:
    """The ranges Table 2 gives for one difficulty; both bounds are inclusive."""

    steps: tuple[int, int]
    """Step budget (max_steps) range."""
    target: tuple[int, int]
    """Tiles to clear per colour."""


MATCH2_DIFFICULTIES: Mapping[str, Match2Difficulty] = {
    "easy": Match2Difficulty(steps=(15, 18), target=(8, 12)),
    "medium": Match2Difficulty(steps=(12, 15), target=(12, 16)),
    "hard": Match2Difficulty(steps=(10, 13), target=(16, 20)),
}
"""Table 2, match-2 columns."""

GENERATOR_ID = "eeb-match2-v1"
"""Names the generator's algorithm; part of every level seed string, bumped if draws change."""
MATCH2_TEST_SEEDS: tuple[int, ...] = tuple(range(30))
"""Seeds of the shipped test split: 30 levels per difficulty, 90 in all (§5)."""
MATCH2_DATA = Path(__file__).parent / "data" / "match2"
"""Where the shipped level files live: <split>/<difficulty>/<seed:03d>.json."""


@dataclass(frozen=True)
class Match2Level:
    """One match-2 level: the starting board, step budget, props and per-colour targets.

    `board[i][j]` is the tile in row i (0 = top) and column j (0 = left), as App. B.1 and
    the trace of App. D index it. The JSON form (`to_json`/`from_json`) is the level format of
    the paper's released artifact (`board`, `max_steps`, `inventory`, `color_targets`) plus our
    `difficulty` and `meta`.
    """

    board: tuple[str, ...]
    """8 strings of 8 colours each, top row first."""
    max_steps: int
    """Actions allowed in the level (each action, valid or not, uses one)."""
    inventory: dict[str, int]
    """Uses available per prop (`row`, `col`, `bomb`, `hammer`); absent props have 0."""
    color_targets: dict[str, int]
    """Tiles of each colour to clear (A-D); absent colours have 0."""
    difficulty: str = "custom"
    """easy, medium, hard (Table 2) or custom."""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    """Provenance (generator id, seed); not part of the rules."""

    def __post_init__(self) -> None:
        board, _, inventory, targets, _ = _validate(
            list(self.board) if isinstance(self.board, tuple | list) else self.board,
            self.max_steps,
            self.inventory,
            self.color_targets,
            self.difficulty,
            where="Match2Level",
            error=ConfigError,
        )
        object.__setattr__(self, "board", board)
        object.__setattr__(self, "inventory", inventory)
        object.__setattr__(self, "color_targets", targets)

    def to_json(self) -> dict[str, Any]:
        """The artifact format: board as 8 strings, counts as objects; difficulty and meta."""
        data: dict[str, Any] = {
            "board": list(self.board),
            "max_steps": self.max_steps,
            "inventory": dict(self.inventory),
            "color_targets": dict(self.color_targets),
            "difficulty": self.difficulty,
        }
        if self.meta:
            data["meta"] = dict(self.meta)
        return data

    @classmethod
    def from_json(cls, data: Any, source: str = "level") -> Match2Level:
        """Parse and validate a level object; errors name `source`, the field and the fix.

        `board` may be 8 strings or 8 lists of 8 one-letter strings (both appear in
        match-2 level files); spaces inside a row string are ignored. Keys other than the
        ones below are ignored, so artifact files with extra bookkeeping load.
        """
        if not isinstance(data, dict):
            raise InvalidFile(f"{source}: expected a JSON object, got {type(data).__name__}")
        for key in ("board", "max_steps", "inventory", "color_targets"):
            if key not in data:
                raise InvalidFile(
                    f"{source}: missing field {key!r}; a match-2 level needs board, max_steps, "
                    "inventory and color_targets"
                )
        meta = data.get("meta", {})
        if not isinstance(meta, dict):
            raise InvalidFile(f"{source}: meta must be an object, got {shown(meta)}")
        board, max_steps, inventory, targets, difficulty = _validate(
            data["board"],
            data["max_steps"],
            data["inventory"],
            data["color_targets"],
            data.get("difficulty", "custom"),
            where=source,
            error=InvalidFile,
        )
        return cls(board, max_steps, inventory, targets, difficulty, dict(meta))


def _count(value: Any, where: str, error: type[ConfigError], *, positive: bool = False) -> int:
    low = 1 if positive else 0
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        kind = "a positive integer" if positive else "a non-negative integer"
        raise error(f"{where} must be {kind}, got {shown(value)}")
    return value


def _row(value: Any, i: int, where: str, error: type[ConfigError]) -> str:
    if isinstance(value, str):
        cells: list[Any] = list(value.replace(" ", ""))
    elif isinstance(value, list | tuple):
        cells = list(value)
    else:
        raise error(
            f"{where}.board[{i}] must be a string of {BOARD_SIZE} colours or a list of "
            f"{BOARD_SIZE} colours, got {shown(value)}"
        )
    if len(cells) != BOARD_SIZE:
        raise error(
            f"{where}.board[{i}] has {len(cells)} tiles; the board is "
            f"{BOARD_SIZE}x{BOARD_SIZE}, so every row needs {BOARD_SIZE}"
        )
    for j, cell in enumerate(cells):
        if cell not in COLOURS:
            raise error(
                f"{where}.board[{i}][{j}] is {shown(cell)}; colours are {', '.join(COLOURS)}"
            )
    return "".join(cells)


def _counts(
    value: Any, allowed: tuple[str, ...], name: str, where: str, error: type[ConfigError]
) -> dict[str, int]:
    if not isinstance(value, dict):
        raise error(
            f"{where}.{name} must be an object of {' / '.join(allowed)} -> count, got "
            f"{shown(value)}"
        )
    for key in value:
        if key not in allowed:
            raise error(f"{where}.{name} has unknown key {key!r}; allowed: {', '.join(allowed)}")
    return {key: _count(value.get(key, 0), f"{where}.{name}.{key}", error) for key in allowed}


def _validate(
    board: Any,
    max_steps: Any,
    inventory: Any,
    targets: Any,
    difficulty: Any,
    *,
    where: str,
    error: type[ConfigError],
) -> tuple[tuple[str, ...], int, dict[str, int], dict[str, int], str]:
    """Check every field of a level; returns the normalised values."""
    if not isinstance(board, list | tuple):
        raise error(
            f"{where}.board must be a list of {BOARD_SIZE} rows (strings or lists), got "
            f"{shown(board)}"
        )
    if len(board) != BOARD_SIZE:
        raise error(f"{where}.board has {len(board)} rows; the board is {BOARD_SIZE}x{BOARD_SIZE}")
    rows = tuple(_row(row, i, where, error) for i, row in enumerate(board))
    steps = _count(max_steps, f"{where}.max_steps", error, positive=True)
    props = _counts(inventory, PROPS, "inventory", where, error)
    goals = _counts(targets, COLOURS, "color_targets", where, error)
    if not any(goals.values()):
        raise error(f"{where}.color_targets are all 0; at least one colour needs a target")
    if difficulty not in DIFFICULTY_LABELS:
        raise error(
            f"{where}.difficulty is {shown(difficulty)}; allowed: {', '.join(DIFFICULTY_LABELS)}"
        )
    return rows, steps, props, goals, difficulty


def has_legal_elimination(board: tuple[str, ...] | list[str]) -> bool:
    """True if some 4-connected group has >= 2 tiles, i.e. two neighbours share a colour."""
    for i in range(BOARD_SIZE):
        row = board[i]
        below = board[i + 1] if i + 1 < BOARD_SIZE else None
        for j in range(BOARD_SIZE):
            if j + 1 < BOARD_SIZE and row[j] == row[j + 1]:
                return True
            if below is not None and row[j] == below[j]:
                return True
    return False


# ---- generation ----
# Only Random.random() is guaranteed to reproduce across Python releases (randrange, choice
# and friends have changed algorithms before), so every draw goes through it.


def draw_below(rng: random.Random, n: int) -> int:
    """A uniform integer in [0, n) from one `rng.random()` draw."""
    return min(int(rng.random() * n), n - 1)


def _draw_between(rng: random.Random, bounds: tuple[int, int]) -> int:
    low, high = bounds
    return low + draw_below(rng, high - low + 1)


def generate_match2_level(difficulty: str, seed: int) -> Match2Level:
    """The level of (difficulty, seed), identical on every machine and Python version.

    One `random.Random` stream, seeded with the string "eeb-match2-v1/<difficulty>/<seed>"
    (string seeds hash with SHA-512, so they are stable), draws in order: max_steps from the
    difficulty's step range, the target of A, B, C, D from its target range, then the board
    row by row, left to right, each tile uniform over A-D. A board without any legal
    elimination is redrawn from the same stream. The inventory is one of each prop (the
    App. B.1 prompt: "each usable once").
    """
    if not isinstance(difficulty, str) or difficulty not in MATCH2_DIFFICULTIES:
        raise ConfigError(
            f"difficulty must be one of {', '.join(MATCH2_DIFFICULTIES)}; got {difficulty!r}"
        )
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer; got {seed!r}")
    ranges = MATCH2_DIFFICULTIES[difficulty]
    rng = random.Random(f"{GENERATOR_ID}/{difficulty}/{seed}")
    max_steps = _draw_between(rng, ranges.steps)
    targets = {colour: _draw_between(rng, ranges.target) for colour in COLOURS}
    while True:
        board = tuple(
            "".join(COLOURS[draw_below(rng, len(COLOURS))] for _ in range(BOARD_SIZE))
            for _ in range(BOARD_SIZE)
        )
        if has_legal_elimination(board):
            break
    return Match2Level(
        board=board,
        max_steps=max_steps,
        inventory=dict.fromkeys(PROPS, 1),
        color_targets=targets,
        difficulty=difficulty,
        meta={"generator": GENERATOR_ID, "seed": seed},
    )


# ---- files ----


def level_json_text(level: Match2Level) -> str:
    """The exact text of a shipped level file (stable key order, one board row per line)."""
    return json.dumps(level.to_json(), indent=2) + "\n"


def build_match2_dataset(out_dir: Path | str) -> list[Path]:
    """Write the test split: <out_dir>/test/<difficulty>/<seed:03d>.json for MATCH2_TEST_SEEDS.

    The shipped files under MATCH2_DATA were written by `build_match2_dataset(MATCH2_DATA)`;
    a test checks they still equal what the generator produces.
    """
    root = Path(out_dir)
    written: list[Path] = []
    for difficulty in MATCH2_DIFFICULTIES:
        folder = root / "test" / difficulty
        folder.mkdir(parents=True, exist_ok=True)
        for seed in MATCH2_TEST_SEEDS:
            path = folder / f"{seed:03d}.json"
            path.write_text(level_json_text(generate_match2_level(difficulty, seed)))
            written.append(path)
    return written


def load_match2_level(path: Path | str) -> Match2Level:
    """Read one level file (ours or the paper artifact's); InvalidFile names what is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{path}: cannot read match-2 level file ({exc.strerror})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidFile(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    return Match2Level.from_json(data, source=str(path))


def load_match2_split(
    split: str = "test", data_dir: Path | str | None = None
) -> dict[str, Match2Level]:
    """The shipped levels of `split`, keyed "<difficulty>/<NNN>", easy to hard then by number."""
    root = Path(data_dir) if data_dir is not None else MATCH2_DATA
    base = root / split
    if not isinstance(split, str) or not base.is_dir():
        available = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        raise ConfigError(
            f"match-2 split {split!r} not found under {root}; available: "
            f"{', '.join(available) or '(none)'}"
        )
    levels: dict[str, Match2Level] = {}
    for difficulty in MATCH2_DIFFICULTIES:
        for path in sorted((base / difficulty).glob("*.json")):
            levels[f"{difficulty}/{path.stem}"] = load_match2_level(path)
    return levels
