"""The EvoEmpirBench match-2 game: rules engine, action parser, Match2Env and its metrics."""

from __future__ import annotations

import json
import random
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from forkingpaths.benchmarks.eeb.match2_levels import (
    BOARD_SIZE,
    COLOURS,
    PROP_COSTS,
    PROPS,
    Match2Level,
    draw_below,
)
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError, InvalidFile, ResetNeeded

ACTION_TYPES: tuple[str, ...] = ("eliminate", *PROPS)
"""The `type` values of App. B.1's action JSON."""
MIN_GROUP = 2
"""An elimination needs a group of at least this many tiles (§3.1, App. B.1)."""

_CELLS = BOARD_SIZE * BOARD_SIZE
# The board is a flat list indexed i * 8 + j; neighbour lists are computed once so that the
# flood fill of a step is a few list lookups per tile.
_NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        (i + di) * BOARD_SIZE + (j + dj)
        for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1))
        if 0 <= i + di < BOARD_SIZE and 0 <= j + dj < BOARD_SIZE
    )
    for i in range(BOARD_SIZE)
    for j in range(BOARD_SIZE)
)
_COLUMN_CELLS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i * BOARD_SIZE + j for i in range(BOARD_SIZE)) for j in range(BOARD_SIZE)
)
_ROW_CELLS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i * BOARD_SIZE + j for j in range(BOARD_SIZE)) for i in range(BOARD_SIZE)
)


def match2_score(tiles: int) -> int:
    """Points for eliminating a group of `tiles`: tiles*5 + 3*max(0, tiles-2) (App. B.1)."""
    return tiles * 5 + 3 * max(0, tiles - 2)


# ---- board mechanics (flat list of 64 colours; None marks a cleared cell mid-step) ----


def connected_group(board: Sequence[str | None], cell: int) -> list[int]:
    """The 4-connected same-colour group containing `cell` (flat index), itself included."""
    colour = board[cell]
    seen = {cell}
    stack = [cell]
    while stack:
        for other in _NEIGHBOURS[stack.pop()]:
            if other not in seen and board[other] == colour:
                seen.add(other)
                stack.append(other)
    return sorted(seen)


def find_groups(board: Sequence[str]) -> list[tuple[str, int, int]]:
    """Every group of >= 2 tiles as (colour, size, first cell in reading order), largest first."""
    label = [False] * _CELLS
    groups: list[tuple[str, int, int]] = []
    for start in range(_CELLS):
        if label[start]:
            continue
        colour = board[start]
        label[start] = True
        stack = [start]
        size = 0
        while stack:
            size += 1
            for other in _NEIGHBOURS[stack.pop()]:
                if not label[other] and board[other] == colour:
                    label[other] = True
                    stack.append(other)
        if size >= MIN_GROUP:
            groups.append((colour, size, start))
    groups.sort(key=lambda g: (-g[1], g[2]))
    return groups


def collapse(board: list[str | None], rng: random.Random) -> None:
    """Let tiles fall into cleared cells (None), then fill each column's gap from the top.

    Columns are processed left to right; within a column the new tiles are drawn top row
    first, each uniform over A-D from one `rng.random()` draw (stable across Python versions).
    """
    for column in _COLUMN_CELLS:
        kept = [board[cell] for cell in column if board[cell] is not None]
        gap = BOARD_SIZE - len(kept)
        if gap == 0:
            continue
        for cell in column[:gap]:
            board[cell] = COLOURS[draw_below(rng, len(COLOURS))]
        for cell, tile in zip(column[gap:], kept, strict=True):
            board[cell] = tile


def bomb_cells(i: int, j: int) -> list[int]:
    """The 3x3 square centred on (i, j), clipped to the board."""
    return [
        r * BOARD_SIZE + c
        for r in range(max(0, i - 1), min(BOARD_SIZE, i + 2))
        for c in range(max(0, j - 1), min(BOARD_SIZE, j + 2))
    ]


def board_rows(board: Sequence[str]) -> list[str]:
    """The flat board as 8 strings, top row first."""
    return ["".join(board[start : start + BOARD_SIZE]) for start in range(0, _CELLS, BOARD_SIZE)]


# ---- action parsing ----

_DECODER = json.JSONDecoder()
_TYPE_ALIASES: Mapping[str, str] = {"column": "col"}
_PAIR = re.compile(r"^\s*[\[(]?\s*(-?\d+)\s*,\s*(-?\d+)\s*[\])]?\s*$")
_TEXT_POS = re.compile(
    r"^(?:action\s*:\s*)?(eliminate|bomb|hammer)\s*(?:at\s*)?[\[(]?\s*(-?\d+)\s*,\s*(-?\d+)\s*[\])]?$",
    re.IGNORECASE,
)
_TEXT_INDEX = re.compile(
    r"^(?:action\s*:\s*)?(row|col|column)\s*(?:index\s*)?(-?\d+)$", re.IGNORECASE
)
ACTION_FORMAT = (
    '{"action": {"type": "eliminate", "pos": [i, j]}}, '
    '{"action": {"type": "row" or "col", "index": k}} or '
    '{"action": {"type": "bomb" or "hammer", "pos": [i, j]}}'
)
UNPARSEABLE = f"no action found: reply with one JSON object such as {ACTION_FORMAT}"


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in `text` (prose and code fences around are fine)."""
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        start = text.find("{", end)
    return found


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _normalise(obj: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    act: Any = obj.get("action", obj)
    if act is None:
        return None, 'null action ({"action": null}): no move was made'
    if isinstance(act, str):
        # {"action": "eliminate", "pos": [i, j]}: the arguments sit beside the type.
        act = {**obj, "type": act}
    if not isinstance(act, dict):
        return None, f'"action" must be an object with "type"; got {json.dumps(act)[:60]}'
    kind = act.get("type")
    if not isinstance(kind, str):
        return None, f'"type" must be one of {", ".join(ACTION_TYPES)}; got {kind!r}'
    kind = _TYPE_ALIASES.get(kind.strip().lower(), kind.strip().lower())
    if kind not in ACTION_TYPES:
        return None, f'"type" must be one of {", ".join(ACTION_TYPES)}; got {act["type"]!r}'
    if kind in ("row", "col"):
        index = _int(act.get("index"))
        if index is None:
            return None, f'{kind} needs "index": k, an integer 0 <= k < {BOARD_SIZE}'
        return {"type": kind, "index": index}, None
    pos = act.get("pos")
    if isinstance(pos, str):
        match = _PAIR.match(pos)
        pos = [int(match[1]), int(match[2])] if match else pos
    if (
        not isinstance(pos, list | tuple)
        or len(pos) != 2
        or _int(pos[0]) is None
        or _int(pos[1]) is None
    ):
        return None, f'{kind} needs "pos": [i, j] with two integers; got {json.dumps(pos)[:60]}'
    return {"type": kind, "pos": [pos[0], pos[1]]}, None


def parse_match2_action(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Read one action from a model's reply: (normalised action, None) or (None, why not).

    The last JSON object with an "action" key wins (else the last one with a "type" key, a
    bare action); prose and code fences around it are ignored. Without JSON, a reply that is
    only `eliminate (i,j)`, `bomb [i, j]`, `hammer i,j`, `row k` or `col k` (the way App. D
    writes actions) is read too. Normalised actions are {"type", "pos": [i, j]} or
    {"type", "index": k}; ranges are checked by the env, not here.
    """
    if not isinstance(text, str):
        return None, f"the action must be a string, got {type(text).__name__}"
    objects = _json_objects(text)
    chosen = next((o for o in reversed(objects) if "action" in o), None)
    if chosen is None:
        chosen = next((o for o in reversed(objects) if "type" in o), None)
    if chosen is not None:
        return _normalise(chosen)
    bare = text.strip().strip("`\"'").rstrip(".").strip()
    match = _TEXT_POS.match(bare)
    if match:
        return {"type": match[1].lower(), "pos": [int(match[2]), int(match[3])]}, None
    match = _TEXT_INDEX.match(bare)
    if match:
        kind = _TYPE_ALIASES.get(match[1].lower(), match[1].lower())
        return {"type": kind, "index": int(match[2])}, None
    return None, UNPARSEABLE


def format_action(action: Mapping[str, Any] | None) -> str:
    """`eliminate [4, 3]`, `row 2`: how the observation names an action."""
    if action is None:
        return "(none)"
    if "index" in action:
        return f"{action['type']} {action['index']}"
    return f"{action['type']} [{action['pos'][0]}, {action['pos'][1]}]"


# ---- the environment ----

Event = Literal["reset", "valid", "invalid"]


@dataclass(frozen=True)
class Match2State:
    """Everything that changes during an episode; `Match2Env.render` is a function of it."""

    board: tuple[str, ...]
    """64 colours, row-major from the top-left."""
    score: int
    steps_used: int
    cleared: tuple[int, ...]
    """Tiles cleared so far per colour, in COLOURS order."""
    inventory: tuple[int, ...]
    """Uses left per prop, in PROPS order."""
    rng_state: tuple[Any, ...]
    """State of the refill RNG (`random.Random.getstate()`)."""
    event: Event
    action: dict[str, Any] | None
    """The last step's normalised action (None if unparseable or at reset)."""
    error: str | None
    """Why the last action was refused."""
    last_cleared: tuple[int, ...]
    """Tiles the last step cleared per colour."""
    reward: int
    """Score change of the last step."""


class Match2Env(Env):
    """The match-2 elimination game of EvoEmpirBench on one level.

    ## Description

    The second game of "EvoEmpirBench" (evoempirbench.txt, §3.1, Table 2, App. B.1, App. D).
    An 8x8 board of colours A-D; the agent removes 4-connected groups of one colour and may
    pay points for props, aiming to clear a number of tiles of every colour (the colour
    targets) within the level's step budget while scoring as many points as it can.

    * Coordinates: `[i, j]` is row i counted from the top and column j from the left, both
      0-based, as App. B.1 ("0 <= i,j < 8") and the App. D trace write them.
    * `eliminate [i, j]` clears the group containing (i, j) if it has >= 2 tiles and scores
      tiles*5 + 3*max(0, tiles-2) (App. B.1): 2 -> 10, 3 -> 18, 5 -> 34, 10 -> 74. A lone
      tile is refused (invalid action, the step is spent).
    * Props (App. B.1): `row k` clears row k, `col k` clears column k (32 points each),
      `bomb [i, j]` clears the 3x3 square centred on (i, j), clipped at the edges (12),
      `hammer [i, j]` clears one tile (4). The level's `inventory` says how many uses each
      prop has; generated levels hold one of each ("each usable once", App. B.1). A prop is
      paid for with points (§3.1 "at point costs"): it is refused when the score is below its
      cost or when none is left, and otherwise its cost is deducted, so the score never goes
      negative. Our decision where the paper is silent: tiles a prop clears score nothing.
      §3.1 calls props a point *cost*, §5 describes props as trading score for clearing
      efficiency, and Table 7 shows NoProps runs scoring higher; with the elimination
      formula on top, a row clear (8 tiles, 58 points) would pay for itself and no trade-off
      would remain.
    * Every cleared tile counts toward its colour's target, however it was cleared.
    * Gravity and refill (§3.1): after a clear, tiles above fall down and the gaps at the
      top are filled with random colours from the episode's refill RNG,
      `random.Random(seed)` created at `reset(seed=...)`: columns left to right, each gap
      top row first, one `random()` draw per tile (`collapse`). The level's starting board
      is fixed; the seed only drives refills, so the same level and seed replay identically.
    * A board without any group of >= 2 tiles is not reshuffled (the paper says nothing of
      it): props may still help; otherwise the remaining steps run out.

    ## Action Space

    Free text holding App. B.1's JSON, `{"action": {"type": "eliminate"|"row"|"col"|"bomb"|
    "hammer", "pos": [i, j], "index": k}}`: `pos` for eliminate, bomb (the centre) and
    hammer (the tile), `index` (the row or column number) for row and col. Read leniently
    by `parse_match2_action`: prose and code fences may surround the JSON, and a bare
    `eliminate (4,3)` or `row 2` is accepted. An unparseable reply, `{"action": null}`
    (App. B.1's "no valid action"), an off-board position or index, a lone tile, a prop
    that is disabled, used up or unaffordable are all invalid actions: the board does not
    change, the step is spent (§3.1 "each action costs 1 step"), `info["valid"]` is False
    and `info["error"]` says why. They lower API Eff.

    ## Observation Space

    `Observation.text` (our wording of App. B.1's inputs): the board with row and column
    indices, score, steps remaining, colour targets as cleared/target, props left with
    their costs, the outcome of the last action, the rules and the reply format.
    `Observation.data`: `board` (8 strings), `score`, `steps_used`, `steps_remaining`,
    `max_steps`, `targets`, `cleared`, `targets_remaining` (colour -> count), `inventory`
    and `prop_costs` (both empty under NoProps), `props_enabled`, `groups` (every legal
    elimination as {colour, size, pos}: pos is the group's first tile in reading order;
    largest first, for reference agents), `last_action`, `valid`, `error`, `success`.

    ## Rewards

    The score change of the step: +tiles*5 + 3*max(0, tiles-2) for an elimination, minus
    the prop's cost for a prop, 0 for an invalid action. The episode's score is their sum.

    ## Starting State

    The level's board, score 0, nothing cleared, the level's inventory (none under NoProps),
    `max_steps` steps remaining, the refill RNG `random.Random(seed)`; `reset(seed=None)`
    means seed 0, never the clock.

    ## Episode End

    Terminated (success) on the step after which every colour target is met. Truncated when
    the steps run out first (no success): the level's step budget is a rule of the game (Table
    2), kept here. A step before `reset` or after the end is refused (`ResetNeeded`) by the
    `OrderEnforcing` wrapper that the runner, Agent-ExpVer and `forkingpaths.gym` put around
    the env.
    `Step.info` carries `t` (steps used), `action` (normalised, None if unparseable),
    `valid`, `error`, `cleared` (this step's tiles per colour), `cleared_total`, `reward`,
    `score`, `board` (8 strings), `steps_remaining`, `max_steps`, `done`, `success`: what a
    replay checker prints per step and what `match2_episode_metrics` reads.

    ## Arguments

    `Match2Env(level, *, props=True)`: a `Match2Level` (generated, shipped or loaded from the
    artifact's format). `props=False` is the NoProps ablation (Table 7): prop actions are
    refused as invalid and the observation offers none.

    ## Version History

    * v1: rules of §3.1 and App. B.1; difficulty ranges of Table 2; prop clears score no
      points; refills from `random.Random(seed)` in column-major, top-first order.
    """

    def __init__(self, level: Match2Level, *, props: bool = True) -> None:
        if not isinstance(level, Match2Level):
            raise ConfigError(f"level must be a Match2Level, got {type(level).__name__}")
        if not isinstance(props, bool):
            raise ConfigError(f"props must be True or False, got {props!r}")
        self.level = level
        self.props = props
        self._start_board = [tile for row in level.board for tile in row]
        self._targets = [level.color_targets[c] for c in COLOURS]
        self._start_inventory = [level.inventory[p] if props else 0 for p in PROPS]
        self._started = False
        self._board: list[str | None] = []
        self._score = 0
        self._steps = 0
        self._cleared = [0] * len(COLOURS)
        self._inventory = list(self._start_inventory)
        self._rng = random.Random(0)
        self._event: Event = "reset"
        self._action: dict[str, Any] | None = None
        self._error: str | None = None
        self._last_cleared = [0] * len(COLOURS)
        self._reward = 0

    # ---- the Env contract ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        if options:
            raise ConfigError(
                f"Match2Env.reset options: got keys {sorted(options)}; none are supported"
            )
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ConfigError(f"Match2Env.reset seed must be an integer or None, got {seed!r}")
        # An unseeded reset is seed 0, never the clock: every episode replays.
        self._rng = random.Random(0 if seed is None else seed)
        self._started = True
        self._board = list(self._start_board)
        self._score = 0
        self._steps = 0
        self._cleared = [0] * len(COLOURS)
        self._inventory = list(self._start_inventory)
        self._event = "reset"
        self._action = None
        self._error = None
        self._last_cleared = [0] * len(COLOURS)
        self._reward = 0
        return self.render()

    def step(self, action: str) -> Step:
        self._steps += 1
        self._last_cleared = [0] * len(COLOURS)
        self._reward = 0
        parsed, error = parse_match2_action(action)
        cells: list[int] = []
        cost = 0
        if parsed is not None:
            cells, cost, error = self._resolve(parsed)
        self._action = parsed
        self._error = error
        if error is None:
            self._event = "valid"
            self._apply(parsed, cells, cost)  # type: ignore[arg-type]
        else:
            self._event = "invalid"
        success = self._success()
        truncated = not success and self._steps >= self.level.max_steps
        return Step(self.render(), float(self._reward), success, truncated, self._info())

    # ---- rules ----

    def _resolve(self, action: dict[str, Any]) -> tuple[list[int], int, str | None]:
        """The cells an action clears and its cost, or the reason it is refused."""
        kind = action["type"]
        if kind != "eliminate" and not self.props:
            return [], 0, "props are disabled in this game (NoProps); only eliminate is allowed"
        if kind in ("row", "col"):
            index = action["index"]
            if not 0 <= index < BOARD_SIZE:
                what = "row" if kind == "row" else "column"
                return [], 0, f"{what} index {index} is off the board (0 <= index < {BOARD_SIZE})"
        else:
            i, j = action["pos"]
            if not (0 <= i < BOARD_SIZE and 0 <= j < BOARD_SIZE):
                return (
                    [],
                    0,
                    (
                        f"pos [{i}, {j}] is off the board (0 <= i, j < {BOARD_SIZE}, "
                        "row i from the top, column j from the left)"
                    ),
                )
        if kind == "eliminate":
            i, j = action["pos"]
            group = connected_group(self._board, i * BOARD_SIZE + j)
            if len(group) < MIN_GROUP:
                return (
                    [],
                    0,
                    (
                        f"the {self._board[i * BOARD_SIZE + j]} tile at [{i}, {j}] has no "
                        f"same-colour neighbour; eliminate needs {MIN_GROUP} or more "
                        "connected tiles"
                    ),
                )
            return group, 0, None
        slot = PROPS.index(kind)
        if self._inventory[slot] <= 0:
            return [], 0, f"no {kind} prop left (inventory {kind}=0)"
        cost = PROP_COSTS[kind]
        if self._score < cost:
            return [], 0, f"score {self._score} cannot cover the {kind} cost of {cost} points"
        if kind == "row":
            cells = list(_ROW_CELLS[action["index"]])
        elif kind == "col":
            cells = list(_COLUMN_CELLS[action["index"]])
        elif kind == "bomb":
            cells = bomb_cells(*action["pos"])
        else:
            i, j = action["pos"]
            cells = [i * BOARD_SIZE + j]
        return cells, cost, None

    def _apply(self, action: dict[str, Any], cells: list[int], cost: int) -> None:
        board = self._board
        for cell in cells:
            self._last_cleared[COLOURS.index(board[cell])] += 1  # type: ignore[arg-type]
            board[cell] = None
        for k, count in enumerate(self._last_cleared):
            self._cleared[k] += count
        if action["type"] == "eliminate":
            self._reward = match2_score(len(cells))
        else:
            self._inventory[PROPS.index(action["type"])] -= 1
            self._reward = -cost
        self._score += self._reward
        collapse(board, self._rng)

    def _success(self) -> bool:
        return all(c >= t for c, t in zip(self._cleared, self._targets, strict=True))

    # ---- state ----

    def _require_started(self, what: str) -> None:
        if not self._started:
            raise ResetNeeded(f"Match2Env.{what} called before reset()")

    def snapshot(self) -> Match2State:
        """The episode state as an immutable value; `restore` returns to it."""
        self._require_started("snapshot")
        return Match2State(
            board=tuple(self._board),  # type: ignore[arg-type]
            score=self._score,
            steps_used=self._steps,
            cleared=tuple(self._cleared),
            inventory=tuple(self._inventory),
            rng_state=self._rng.getstate(),
            event=self._event,
            action=None if self._action is None else json.loads(json.dumps(self._action)),
            error=self._error,
            last_cleared=tuple(self._last_cleared),
            reward=self._reward,
        )

    def restore(self, state: Match2State) -> Observation:
        """Return to a state taken by `snapshot` of an env on a level of the same shape."""
        if not isinstance(state, Match2State):
            raise ConfigError(
                f"Match2Env.restore: expected a Match2State from snapshot(), "
                f"got {type(state).__name__}"
            )
        if len(state.board) != _CELLS or any(tile not in COLOURS for tile in state.board):
            raise ConfigError("Match2Env.restore: state.board is not a full 8x8 board of A-D")
        self._started = True
        self._board = list(state.board)
        self._score = state.score
        self._steps = state.steps_used
        self._cleared = list(state.cleared)
        self._inventory = list(state.inventory)
        self._rng = random.Random()
        self._rng.setstate(state.rng_state)
        self._event = state.event
        self._action = None if state.action is None else json.loads(json.dumps(state.action))
        self._error = state.error
        self._last_cleared = list(state.last_cleared)
        self._reward = state.reward
        return self.render()

    @property
    def score(self) -> int:
        self._require_started("score")
        return self._score

    @property
    def steps_remaining(self) -> int:
        self._require_started("steps_remaining")
        return self.level.max_steps - self._steps

    @property
    def board(self) -> list[str]:
        """The current board as 8 strings, top row first."""
        self._require_started("board")
        return board_rows(self._board)  # type: ignore[arg-type]

    # ---- rendering: pure functions of the state ----

    def render(self) -> Observation:
        """The observation of the current state (see the class docstring)."""
        self._require_started("render")
        rows = board_rows(self._board)  # type: ignore[arg-type]
        return Observation(text=self._text(rows), data=self._data(rows))

    def _text(self, rows: list[str]) -> str:
        max_steps = self.level.max_steps
        lines = [
            f"Match-2 on an {BOARD_SIZE}x{BOARD_SIZE} board. Tile [i, j] is row i from the top "
            f"and column j from the left, both counted from 0.",
            "",
            "    " + " ".join(str(j) for j in range(BOARD_SIZE)),
        ]
        lines += [f"{i:>2}  " + " ".join(row) for i, row in enumerate(rows)]
        lines += [
            "",
            f"Score: {self._score}. Steps remaining: {max_steps - self._steps} of {max_steps}.",
            "Colour targets (cleared/target): "
            + ", ".join(
                f"{c} {n}/{t}"
                for c, n, t in zip(COLOURS, self._cleared, self._targets, strict=True)
            )
            + ".",
        ]
        if self.props:
            lines.append(
                "Props left (cost in points): "
                + ", ".join(
                    f"{p} x{n} ({PROP_COSTS[p]})"
                    for p, n in zip(PROPS, self._inventory, strict=True)
                )
                + "."
            )
        lines.append(f"Last action: {self._last_text()}")
        lines += ["", "Rules:", *self._rules()]
        return "\n".join(lines)

    def _last_text(self) -> str:
        if self._event == "reset":
            return "none yet (new game)."
        if self._event == "invalid":
            shown = "" if self._action is None else f"{format_action(self._action)} "
            return f"{shown}was invalid and used a step: {self._error}."
        cleared = ", ".join(
            f"{n} {c}" for c, n in zip(COLOURS, self._last_cleared, strict=True) if n
        )
        sign = "+" if self._reward >= 0 else ""
        return f"{format_action(self._action)} cleared {cleared} ({sign}{self._reward} points)."

    def _rules(self) -> list[str]:
        rules = [
            "- eliminate [i, j] removes the group of same-colour tiles connected to [i, j] "
            "horizontally or vertically; the group needs at least 2 tiles. It scores "
            "tiles*5 + 3*max(0, tiles-2) points (2 tiles 10, 3 tiles 18, 5 tiles 34).",
            "- Tiles above a cleared cell fall down; new random tiles (A-D) fill the board "
            "from the top.",
        ]
        if self.props:
            rules.append(
                "- Props cost points and score none; your score must cover the cost: "
                f"row k clears row k ({PROP_COSTS['row']}), col k clears column k "
                f"({PROP_COSTS['col']}), bomb [i, j] clears the 3x3 square centred on [i, j] "
                f"({PROP_COSTS['bomb']}), hammer [i, j] clears one tile ({PROP_COSTS['hammer']})."
                " Each prop can be used as many times as you have it."
            )
        rules += [
            "- Every cleared tile counts toward its colour's target, however it was cleared.",
            "- Every action uses one step, an invalid one too. Goal: meet every colour target "
            "before the steps run out; then score as much as you can with few steps.",
        ]
        if self.props:
            rules.append(f"Reply with one JSON object: {ACTION_FORMAT}.")
        else:
            rules.append(
                'Reply with one JSON object: {"action": {"type": "eliminate", "pos": [i, j]}}.'
            )
        return rules

    def _data(self, rows: list[str]) -> dict[str, Any]:
        cleared = dict(zip(COLOURS, self._cleared, strict=True))
        targets = dict(zip(COLOURS, self._targets, strict=True))
        return {
            "board": rows,
            "score": self._score,
            "steps_used": self._steps,
            "steps_remaining": self.level.max_steps - self._steps,
            "max_steps": self.level.max_steps,
            "targets": targets,
            "cleared": cleared,
            "targets_remaining": {c: max(0, targets[c] - cleared[c]) for c in COLOURS},
            "props_enabled": self.props,
            "inventory": dict(zip(PROPS, self._inventory, strict=True)) if self.props else {},
            "prop_costs": dict(PROP_COSTS) if self.props else {},
            "groups": [
                {"colour": colour, "size": size, "pos": [cell // BOARD_SIZE, cell % BOARD_SIZE]}
                for colour, size, cell in find_groups(self._board)  # type: ignore[arg-type]
            ],
            "last_action": self._action,
            "valid": self._event != "invalid",
            "error": self._error,
            "success": self._success(),
        }

    def _info(self) -> dict[str, Any]:
        success = self._success()
        return {
            "t": self._steps,
            "action": self._action,
            "valid": self._event == "valid",
            "error": self._error,
            "cleared": dict(zip(COLOURS, self._last_cleared, strict=True)),
            "cleared_total": sum(self._last_cleared),
            "reward": self._reward,
            "score": self._score,
            "board": board_rows(self._board),  # type: ignore[arg-type]
            "steps_remaining": self.level.max_steps - self._steps,
            "max_steps": self.level.max_steps,
            "done": success or self._steps >= self.level.max_steps,
            "success": success,
        }


# ---- metrics (§3.3, Table 3, Table 5) ----

MATCH2_METRIC_LABELS: Mapping[str, str] = {
    "success_rate": "Suc.Rate",
    "avg_score": "A.Score",
    "remaining_step_ratio": "R/M.S",
    "score_per_step": "Score/Step",
    "clear_per_step": "Clear/Step",
    "api_efficiency": "API Eff.",
}
"""Our metric keys -> the column names of Tables 3 and 5."""


@dataclass(frozen=True)
class Match2EpisodeMetrics:
    """What one match-2 episode contributes to the Table 5 metrics."""

    success: bool
    """Every colour target met within the steps."""
    score: int
    """Final score (eliminations minus prop costs)."""
    steps: int
    """Actions taken, invalid ones included."""
    max_steps: int
    """The level's step budget."""
    valid_actions: int
    """Actions the env executed."""
    cleared: int
    """Tiles cleared, by eliminations and props."""

    @property
    def steps_remaining(self) -> int:
        return max(0, self.max_steps - self.steps)

    @property
    def remaining_step_ratio(self) -> float:
        """R/M.S of one episode: steps remaining / max steps."""
        return self.steps_remaining / self.max_steps

    @property
    def score_per_step(self) -> float | None:
        """Score/Step: final score / steps taken (None without steps)."""
        return self.score / self.steps if self.steps else None

    @property
    def clear_per_step(self) -> float | None:
        """Clear/Step: tiles cleared / steps taken (None without steps)."""
        return self.cleared / self.steps if self.steps else None

    @property
    def api_efficiency(self) -> float | None:
        """API Eff. of one episode: valid actions / actions (None without steps)."""
        return self.valid_actions / self.steps if self.steps else None

    def to_dict(self) -> dict[str, Any]:
        """The fields plus the derived per-episode ratios (what an EpisodeRecord stores)."""
        return {
            **asdict(self),
            "steps_remaining": self.steps_remaining,
            "remaining_step_ratio": self.remaining_step_ratio,
            "score_per_step": self.score_per_step,
            "clear_per_step": self.clear_per_step,
            "api_efficiency": self.api_efficiency,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match2EpisodeMetrics:
        """Read back `to_dict` output (derived keys are recomputed, not trusted)."""
        try:
            return cls(
                success=bool(data["success"]),
                score=int(data["score"]),
                steps=int(data["steps"]),
                max_steps=int(data["max_steps"]),
                valid_actions=int(data["valid_actions"]),
                cleared=int(data["cleared"]),
            )
        except KeyError as exc:
            raise InvalidFile(f"match-2 episode metrics: missing field {exc.args[0]!r}") from exc


_INFO_KEYS = ("valid", "score", "cleared_total", "success")


def match2_episode_metrics(
    infos: Sequence[Mapping[str, Any]], *, max_steps: int
) -> Match2EpisodeMetrics:
    """The per-episode metrics from the `Step.info` of every step, in order.

    Everything comes from the infos (as an EpisodeRecord stores them), so a run directory is
    enough to recompute them. Success and score are those after the last step; an episode
    without steps scores 0 and fails.
    """
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps <= 0:
        raise ConfigError(f"max_steps must be a positive integer, got {max_steps!r}")
    for t, info in enumerate(infos):
        missing = [key for key in _INFO_KEYS if key not in info]
        if missing:
            raise InvalidFile(
                f"match-2 step {t}: info lacks {', '.join(missing)}; expected Match2Env.step info"
            )
    last = infos[-1] if infos else None
    return Match2EpisodeMetrics(
        success=bool(last["success"]) if last else False,
        score=int(last["score"]) if last else 0,
        steps=len(infos),
        max_steps=max_steps,
        valid_actions=sum(1 for info in infos if info["valid"]),
        cleared=sum(int(info["cleared_total"]) for info in infos),
    )


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def aggregate_match2(
    episodes: Sequence[Match2EpisodeMetrics | Mapping[str, Any]],
) -> dict[str, Any]:
    """Table 5's six metrics over episodes (keys in MATCH2_METRIC_LABELS, plus `episodes`).

    * success_rate (Suc.Rate): episodes that met every target / episodes.
    * avg_score (A.Score): mean final score.
    * remaining_step_ratio (R/M.S): mean over episodes of steps remaining / max steps
      (failed episodes have used every step, so they add 0).
    * score_per_step (Score/Step): mean over episodes of final score / steps taken.
    * clear_per_step (Clear/Step): mean over episodes of tiles cleared / steps taken.
    * api_efficiency (API Eff.): valid actions / all actions, pooled over the episodes.

    Ratios are fractions; Table 5 prints Suc.Rate, R/M.S and API Eff. as percentages.
    Per-step means skip episodes without steps; every value is None without episodes.
    """
    items = [
        e if isinstance(e, Match2EpisodeMetrics) else Match2EpisodeMetrics.from_dict(e)
        for e in episodes
    ]
    total_steps = sum(e.steps for e in items)
    return {
        "episodes": len(items),
        "success_rate": _mean([float(e.success) for e in items]),
        "avg_score": _mean([float(e.score) for e in items]),
        "remaining_step_ratio": _mean([e.remaining_step_ratio for e in items]),
        "score_per_step": _mean([e.score_per_step for e in items]),
        "clear_per_step": _mean([e.clear_per_step for e in items]),
        "api_efficiency": sum(e.valid_actions for e in items) / total_steps
        if total_steps
        else None,
    }
