"""MazeEnv: EvoEmpirBench's locally observable maze game, its action parser and its metrics."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from forkingpaths.benchmarks.eeb.maze_levels import (
    AGENT,
    COIN,
    EMPTY,
    GOAL,
    ITEM_GLYPHS,
    ITEM_NAMES,
    MONSTER,
    UNEXPLORED,
    WALL,
    Cell,
    MazeLevel,
)
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError, ResetNeeded

# Scoring of §3.1 / App. B.1.
EXPLORE_REWARD = 10
COIN_REWARD = 500
STEP_COST = 50
LIFE_COST = 1000
GOAL_REWARD = 2000
START_LIVES = 3
SHOVEL_USES = 3
DEFAULT_MAX_STEPS = 100
VIEW_RADIUS = 1
"""The agent sees the 3x3 square around itself (local observability, §3.1)."""
MAGNET_RADIUS = 2
"""The magnet reaches the 5x5 square around the agent (App. B.1)."""

MazeRules = Literal["paper", "release"]
"""`paper`: §3.1/App. B.1 with our decisions where they are silent; `release`: the rules of
the authors' game code (src/game/environment.py), see `MazeEnv`."""
MAZE_RULES: tuple[str, ...] = get_args(MazeRules)
RELEASE_ITEM_POINTS: Mapping[str, int] = {"shovel": 100, "sword": 200, "magnet": 150, "key": 300}
"""Points the release's game pays per item picked up (environment.py:365-386)."""
RELEASE_BARRIER_POINTS = 500
"""Points the release's game pays per wall broken with the shovel (environment.py:347)."""
RELEASE_ITEM_LEVEL = 3
"""The release picks items up and locks the goal only in "Level 3" mode (environment.py:363,
455)."""

DIRECTIONS: tuple[tuple[str, int, int], ...] = (
    ("up", -1, 0),
    ("down", 1, 0),
    ("left", 0, -1),
    ("right", 0, 1),
)
"""Actions 3d, 3d+1, 3d+2 move 1, 2, 3 cells in DIRECTIONS[d] (App. B.1)."""
ACTION_COUNT = 12
ACTION_LABELS: tuple[str, ...] = tuple(
    f"Move {name.upper()} {n} step{'s' if n > 1 else ''}"
    for name, _, _ in DIRECTIONS
    for n in (1, 2, 3)
)

_ACTION_LINE = re.compile(r"\baction[\"'*\s]*[:=][\s*\"']*(-?\d+)", re.IGNORECASE)
_BARE_INT = re.compile(r"[\s*`\"']*(-?\d+)[\s*`\"'.]*")


def parse_maze_action(text: Any) -> int | None:
    """The action number (0-11) in a reply, or None.

    Accepts `Action: 9` anywhere in the reply (the last one wins; markdown bold is fine), a
    JSON object `{"action": 9}` (also `"9"`), or a reply that is just the number. An int
    passed directly is taken as is. Numbers outside 0-11 give None.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        value: int | None = text
    elif not isinstance(text, str):
        return None
    else:
        matches = _ACTION_LINE.findall(text)
        if matches:
            value = int(matches[-1])
        else:
            bare = _BARE_INT.fullmatch(text)
            value = int(bare.group(1)) if bare else None
    return value if value is not None and 0 <= value < ACTION_COUNT else None


@dataclass(frozen=True)
class MazeState:
    """A snapshot of everything that changes during an episode; `MazeEnv.restore` returns to it
    and the observation is a function of it alone."""

    position: Cell
    lives: int
    score: int
    steps: int
    explored: frozenset[Cell]
    walls: frozenset[Cell]
    coins: frozenset[Cell]
    items: tuple[tuple[Cell, str], ...]
    """Items still on the board."""
    monsters: tuple[Cell, ...]
    shovel_uses: int
    sword: bool
    magnet: bool
    key: bool
    kills: int
    barriers: int
    coins_collected: int
    success: bool
    rng_state: tuple[Any, ...]
    seed: int
    last_action: int | None
    last_valid: bool
    last_from: Cell
    last_reward: int
    last_explored: int
    events: tuple[tuple[tuple[str, Any], ...], ...]
    """The last step's events, each as sorted (key, value) pairs."""
    bonus: int = 0
    """Points beyond App. B.1's five rules so far (`rules="release"`: items, broken walls)."""


class MazeEnv(Env):
    """The maze navigation game of EvoEmpirBench under local observability.

    ## Description

    "EvoEmpirBench" (evoempirbench.txt), §3.1 Maze Navigation, Table 2 and App. B.1. The agent
    starts bottom-left on a square board (9x9 in Table 2; any size 3-30 is accepted, the
    paper's own level-1 trace in App. C is 7x7) and must reach the goal top-right, collecting
    five coins and exploring on the way. Coordinates are (row, col), row 0 at the top.
    Level 1 (Easy) has walls and coins; level 2 (Medium) adds two randomly moving monsters;
    level 3 (Hard) adds four items: shovel/pickaxe (breaks a wall, 3 uses), sword (unlimited
    monster combat), magnet (collects coins in the 5x5 around the agent) and key (needed to
    enter the goal). The rules follow the board's content, whatever its level number.

    ## Action Space

    Twelve actions (App. B.1): 0-2 move up (row-1) by 1/2/3 cells, 3-5 down (row+1), 6-8 left
    (col-1), 9-11 right (col+1). Read from free text by `parse_maze_action`: the last
    `Action: X`, a JSON `{"action": X}`, or a bare number. Anything else is an invalid action:
    the step is spent (-50, the step counter advances), nothing else happens (monsters do not
    move either) and `info["valid"]` is False.

    A multi-cell move is walked cell by cell; the first rule that stops it wins. Decisions
    where the paper is silent, chosen so that a long move is never safer than single steps:

    * Cells passed over count as entered: their 3x3 surroundings are revealed and scored,
      their coins and items are picked up.
    * Wall, no shovel uses left: a life is lost (-1000) and the agent stops on the last cell
      it reached this step, in front of the wall (so "stays in place" for a one-cell move).
    * Wall, shovel with uses left: the wall is broken (+1 barrier, -1 use, no life lost), the
      agent steps onto the freed cell and the move ends there.
    * Monster, no sword: a life is lost and the agent goes back to the start; the move ends.
    * Monster, sword: the monster dies (+1 kill) and the move goes on through its cell.
    * Goal: entering it scores +2000 and ends the episode; the rest of the move is dropped.
    * Goal while the board has a key the agent does not hold: the goal is locked; the agent
      stops in front of it and loses nothing (event `locked`).
    * Map edge: the move stops at the edge; no life is lost (the edge is not a wall), event
      `edge`; the action stays valid.

    After the agent's move: with the magnet, every coin in the 5x5 square around the agent's
    final cell is collected (so also on the step that picks the magnet up). Then, unless the
    episode ended, each monster in turn takes one step to a uniformly drawn 4-neighbour that
    is on the board, not a wall, not the start or the goal (so a respawned agent is safe and
    the exit is never blocked) and not another monster; with no such cell it stays. A monster
    stepping onto the agent counts as touching it: with the sword the monster dies, else a
    life is lost and the agent returns to the start. Monsters ignore coins and items. The draws
    come from `random.Random(seed)` of `reset`, through `rng.random()` only.

    ## Observation Space

    `Observation.text` is the state block of App. B.1 in our words: legend, the known map with
    row/column indices (A agent, G goal, C coin, # wall, M monster, T/W/N/K items, ? unexplored,
    . empty), position, lives, score, explored cells, coins, held items (boards with items),
    what the last step did, the twelve actions and the scoring rules. Local observability: the
    agent sees the 3x3 square around it; every cell it has seen stays on the map with its
    current content (coins, items and walls change only through the agent, so memory is never
    stale), unseen cells show `?`. The goal is always shown. Monsters move, so they are shown
    only inside the current 3x3 view. `full_vision=True` (Table 7's ablation) shows the whole
    board and every monster; it changes only what is shown, not scoring or `explored`.
    `Observation.data` holds the same state as fields (see `_data`).

    ## Rewards

    §3.1/App. B.1: +10 per newly explored cell, +500 per coin, -50 per step (invalid ones
    included), -1000 per life lost, +2000 at the goal. A cell is explored when it first enters
    the agent's 3x3 view; the view at reset is explored but not scored (the score starts at
    0, so the rewards of an episode sum to its score). The reward of a step is the change of
    score.

    ## Starting State

    The agent on the start cell with 3 lives, score 0, no items, the start's 3x3 explored,
    monsters on their starting cells. A seed of None means 0, so every episode is replayable.

    ## Episode End

    Terminated when the agent enters the goal (success) or loses its last life. Truncated when
    `max_steps` steps (default 100; the paper does not state its cap) have been taken without
    termination. The step cap is a rule of the game, kept here: the observation counts the
    steps against it and a truncated episode fails. A step before `reset` or after the end is
    refused (`ResetNeeded`) by the `OrderEnforcing` wrapper that the runner, Agent-ExpVer and
    `forkingpaths.gym` put around the env.

    ## Arguments

    `MazeEnv(level, *, max_steps=100, full_vision=False, lives=3, rules="paper")`: a
    `MazeLevel` from `generate_maze_level`, `load_maze_split`, `load_maze_level` or
    `MazeLevel.from_json`. `rules` picks the rules below.

    ## Rules: `paper` (default) or `release`

    `rules="paper"` is everything above. `rules="release"` plays five rules the way the
    authors' released game code (uuu-quant/EvoEmpirBench, src/game/environment.py) plays
    them where App. B.1 is silent or says something else:

    * Wall hit (B.1 says only "#: Wall (costs life if hit)"; "return to start" is said of
      monsters only): without a shovel the agent loses a life AND goes back to the start
      (environment.py:348-354). The step still costs 50 (the release's reported score charges
      every step, scripts/evaluate_agent.py:600).
    * Moves of 2-3 cells (B.1: "Move UP (row-1) [1/2/3 steps]", nothing on the cells between):
      only the landing cell is looked at (environment.py:328-359): cells on the way are not
      entered (no coins, items, view or monsters there) and walls on the way are jumped. A
      landing cell off the board spends the step and the agent stays (environment.py:334-336,
      event `edge`). A locked goal (Level 3, no key) puts the agent on the cell before it
      along the move (environment.py:455-458; if that cell is a wall it stays where it was,
      where the release would put it inside the wall).
    * A.Explor (Table 3: "Explored map percentage") divides the explored cells by the cells
      that are not walls at the episode's end, at most 100% (environment.py:295-314, the same
      in scripts/evaluate_agent.py:294-307); `paper` divides by all cells. Walls seen count
      as explored under both.
    * Items (Table 2: items only on Hard boards) are picked up, and the key locks the goal,
      only on level-3 boards (environment.py:363, 455); monsters stay still on level-1 boards
      (environment.py:168). `paper` follows the board's content whatever its level. The
      release's own levels put items only on level 3 and monsters only on levels 2-3, so on
      them this rule changes nothing.
    * Points beyond B.1's five rules: +100 shovel, +200 sword, +150 magnet, +300 key when
      picked up (environment.py:365-386), +500 per wall broken (environment.py:347). They are
      in the step's reward and the score the agent sees (`bonus` in `outcome()` keeps their
      sum, so `score - bonus` is B.1's). The release's +500 per kill (environment.py:419-424)
      is not paid: its `_check_monster_collision` (environment.py:187-213) returns False
      whenever the sword kills, so its game never pays it either.

    Monster movement, the magnet, the sword and the observation stay as above under both
    (the release's two-phase monster moves are not copied).

    ## Version History

    * v1: the rules of §3.1 and App. B.1 with the decisions above; `rules="release"`.
    """

    def __init__(
        self,
        level: MazeLevel,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        full_vision: bool = False,
        lives: int = START_LIVES,
        rules: MazeRules = "paper",
    ) -> None:
        if rules not in MAZE_RULES:
            raise ConfigError(f"rules must be one of {', '.join(MAZE_RULES)}, got {rules!r}")
        if not isinstance(level, MazeLevel):
            raise ConfigError(f"level must be a MazeLevel, got {type(level).__name__}")
        for name, value in (("max_steps", max_steps), ("lives", lives)):
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(full_vision, bool):
            raise ConfigError(f"full_vision must be True or False, got {full_vision!r}")
        self.level = level
        self.max_steps = max_steps
        self.full_vision = full_vision
        self.start_lives = lives
        self.rules = rules
        self._release = rules == "release"
        size = level.size
        # The release's game knows items and the key only in its "Level 3" mode.
        self._items_active = not self._release or level.level == RELEASE_ITEM_LEVEL
        self._key_required = "key" in level.items and self._items_active
        self._monsters_move = not (self._release and level.level == 1)
        # Everything that depends only on the board is computed once so a step is a handful of
        # set and dict lookups, independent of the board size.
        board = [(r, c) for r in range(size) for c in range(size)]
        self._rays: dict[Cell, tuple[tuple[Cell, ...], ...]] = {}
        self._view: dict[Cell, tuple[Cell, ...]] = {}
        self._magnet_area: dict[Cell, tuple[Cell, ...]] = {}
        self._neighbours: dict[Cell, tuple[Cell, ...]] = {}
        for r, c in board:
            self._rays[(r, c)] = tuple(
                tuple(
                    (r + dr * k, c + dc * k)
                    for k in (1, 2, 3)
                    if 0 <= r + dr * k < size and 0 <= c + dc * k < size
                )
                for _, dr, dc in DIRECTIONS
            )
            self._view[(r, c)] = _square((r, c), VIEW_RADIUS, size)
            self._magnet_area[(r, c)] = _square((r, c), MAGNET_RADIUS, size)
            self._neighbours[(r, c)] = tuple(
                (r + dr, c + dc)
                for _, dr, dc in DIRECTIONS
                if 0 <= r + dr < size and 0 <= c + dc < size
            )
        self._static_text = _static_text(level, full_vision, lives, rules)
        width = len(str(size - 1))
        self._cell_width = width
        self._map_header = (
            " " * (width + 4)
            + " ".join(str(c).rjust(width) for c in range(size))
            + "\n"
            + " " * (width + 2)
            + "-" * (1 + size * (width + 1))
        )
        self._started = False
        self._reset_state(0)
        self._started = False

    # ---- the Env contract ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        if options:
            raise ConfigError(
                f"MazeEnv.reset options: got keys {sorted(options)}; none are supported"
            )
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ConfigError(f"MazeEnv.reset seed must be an integer or None, got {seed!r}")
        self._reset_state(0 if seed is None else seed)
        return self.render()

    def step(self, action: str) -> Step:
        before = self._score
        self._steps += 1
        self._score -= STEP_COST
        self._events = []
        self._last_explored = 0
        self._last_from = self._pos
        number = parse_maze_action(action)
        self._last_action = number
        self._last_valid = number is not None
        if number is not None:
            if self._release:
                self._move_release(number)
            else:
                self._move(number)
            if self._magnet and self._lives > 0 and not self._success:
                self._pull_coins()
            if self._lives > 0 and not self._success and self._monsters_move:
                self._move_monsters()
        self._last_reward = self._score - before
        terminated = self._success or self._lives <= 0
        truncated = not terminated and self._steps >= self.max_steps
        return Step(self.render(), float(self._last_reward), terminated, truncated, self._info())

    # ---- rules ----

    def _reset_state(self, seed: int) -> None:
        level = self.level
        self._started = True
        self._seed = seed
        self._rng = random.Random(seed)
        self._pos = level.start
        self._lives = self.start_lives
        self._score = 0
        self._steps = 0
        self._walls = set(level.walls)
        self._coins = set(level.coins)
        self._items = {cell: name for name, cell in level.items.items()}
        self._monsters = list(level.monsters)
        self._shovel_uses = 0
        self._sword = self._magnet = self._key = False
        self._kills = self._barriers = self._coins_collected = 0
        self._bonus = 0
        self._success = False
        self._last_action: int | None = None
        self._last_valid = True
        self._last_from = level.start
        self._last_reward = 0
        self._last_explored = 0
        self._events: list[dict[str, Any]] = []
        self._explored: set[Cell] = set(self._view[level.start])
        self._rebuild_known()

    def _move(self, number: int) -> None:
        direction, distance = divmod(number, 3)
        ray = self._rays[self._pos][direction][: distance + 1]
        for cell in ray:
            if cell in self._walls:
                if self._shovel_uses > 0:
                    self._break_wall(cell)
                    self._enter(cell)
                else:
                    self._events.append({"event": "wall_hit", "position": list(cell)})
                    self._lose_life()
                return
            if cell == self.level.goal and self._key_required and not self._key:
                self._events.append({"event": "locked", "position": list(cell)})
                return
            if self._step_onto(cell):
                return
        if len(ray) <= distance:
            self._events.append({"event": "edge", "position": list(self._pos)})

    def _move_release(self, number: int) -> None:
        """The release's move: only the landing cell counts (environment.py:328-359)."""
        direction, distance = divmod(number, 3)
        ray = self._rays[self._pos][direction]
        if len(ray) <= distance:
            self._events.append({"event": "edge", "position": list(self._pos)})
            return
        cell = ray[distance]
        if cell in self._walls:
            if self._shovel_uses > 0:
                self._break_wall(cell)
                self._enter(cell)
            else:
                self._events.append({"event": "wall_hit", "position": list(cell), "to_start": True})
                self._lose_life()
                self._pos = self.level.start
                self._reveal(self._pos)
            return
        if cell == self.level.goal and self._key_required and not self._key:
            self._events.append({"event": "locked", "position": list(cell)})
            before = ray[distance - 1] if distance else self._pos
            if before not in self._walls:
                self._enter(before)
            return
        self._step_onto(cell)

    def _step_onto(self, cell: Cell) -> bool:
        """Enter a cell that is no wall, under both rules: a monster sends the agent back to
        the start unless it has the sword (which kills it), the goal ends the episode. True
        when the move ends here."""
        if cell in self._monsters:
            if not self._sword:
                self._events.append({"event": "monster_hit", "position": list(cell)})
                self._lose_life()
                self._pos = self.level.start
                self._reveal(self._pos)
                return True
            self._kill(cell)
        self._enter(cell)
        if cell == self.level.goal:
            self._success = True
            self._score += GOAL_REWARD
            self._events.append({"event": "goal", "position": list(cell)})
            return True
        return False

    def _break_wall(self, cell: Cell) -> None:
        self._walls.discard(cell)
        self._shovel_uses -= 1
        self._barriers += 1
        event: dict[str, Any] = {"event": "barrier", "position": list(cell)}
        if self._release:
            event["points"] = RELEASE_BARRIER_POINTS
            self._add_bonus(RELEASE_BARRIER_POINTS)
        self._events.append(event)

    def _add_bonus(self, points: int) -> None:
        self._bonus += points
        self._score += points

    def _enter(self, cell: Cell) -> None:
        self._pos = cell
        self._reveal(cell)
        if cell in self._coins:
            self._collect(cell, magnet=False)
        name = self._items.pop(cell, None) if self._items_active else None
        if name is not None:
            if self._release:
                self._add_bonus(RELEASE_ITEM_POINTS[name])
            if name == "shovel":
                self._shovel_uses += SHOVEL_USES
            elif name == "sword":
                self._sword = True
            elif name == "magnet":
                self._magnet = True
            else:
                self._key = True
            event: dict[str, Any] = {"event": "item", "item": name, "position": list(cell)}
            if self._release:
                event["points"] = RELEASE_ITEM_POINTS[name]
            self._events.append(event)
            self._refresh(cell)

    def _reveal(self, cell: Cell) -> None:
        explored = self._explored
        new = 0
        for seen in self._view[cell]:
            if seen not in explored:
                explored.add(seen)
                new += 1
                self._refresh(seen)
        if new:
            self._last_explored += new
            self._score += EXPLORE_REWARD * new

    def _collect(self, cell: Cell, *, magnet: bool) -> None:
        self._coins.discard(cell)
        self._coins_collected += 1
        self._score += COIN_REWARD
        event: dict[str, Any] = {"event": "coin", "position": list(cell)}
        if magnet:
            event["magnet"] = True
        self._events.append(event)
        self._refresh(cell)

    def _pull_coins(self) -> None:
        for cell in self._magnet_area[self._pos]:
            if cell in self._coins:
                self._collect(cell, magnet=True)

    def _kill(self, cell: Cell) -> None:
        self._monsters.remove(cell)
        self._kills += 1
        self._events.append({"event": "kill", "position": list(cell)})

    def _lose_life(self) -> None:
        self._lives -= 1
        self._score -= LIFE_COST

    def _move_monsters(self) -> None:
        start, goal, walls = self.level.start, self.level.goal, self._walls
        monsters = self._monsters
        i = 0
        while i < len(monsters):
            here = monsters[i]
            options = [
                cell
                for cell in self._neighbours[here]
                if cell not in walls and cell != start and cell != goal and cell not in monsters
            ]
            if options:
                cell = options[int(self._rng.random() * len(options))]
                monsters[i] = cell
                if cell == self._pos:
                    if self._sword:
                        self._kill(cell)
                        continue  # the list shifted left: index i is the next monster
                    self._events.append(
                        {"event": "monster_hit", "position": list(cell), "monster_moved": True}
                    )
                    self._lose_life()
                    self._pos = start
                    self._reveal(start)
                    if self._lives <= 0:
                        return
            i += 1

    def _done(self) -> bool:
        return self._success or self._lives <= 0 or self._steps >= self.max_steps

    # ---- the known map ----

    def _glyph(self, cell: Cell) -> str:
        """What a seen cell shows, monsters and agent aside."""
        if cell == self.level.goal:
            return GOAL
        if cell in self._walls:
            return WALL
        if cell in self._coins:
            return COIN
        name = self._items.get(cell)
        return ITEM_GLYPHS[name] if name is not None else EMPTY

    def _refresh(self, cell: Cell) -> None:
        if self.full_vision or cell in self._explored:
            self._known[cell[0]][cell[1]] = self._glyph(cell)

    def _rebuild_known(self) -> None:
        size = self.level.size
        self._known = [[UNEXPLORED] * size for _ in range(size)]
        goal = self.level.goal
        self._known[goal[0]][goal[1]] = GOAL  # always visible (App. B.1)
        for r in range(size):
            for c in range(size):
                self._refresh((r, c))

    def visible_monsters(self) -> list[Cell]:
        """Monsters the agent sees now: inside its 3x3 view, or all with full vision."""
        self._require_started("visible_monsters")
        if self.full_vision:
            return list(self._monsters)
        view = self._view[self._pos]
        return [m for m in self._monsters if m in view]

    def map_rows(self) -> list[str]:
        """The map as the agent knows it, one string per row (row 0 first)."""
        self._require_started("map_rows")
        rows = self._known
        marks: dict[int, list[str]] = {}
        for r, c in self.visible_monsters():
            row = marks.setdefault(r, rows[r][:])
            row[c] = MONSTER
        r, c = self._pos
        row = marks.setdefault(r, rows[r][:])
        row[c] = AGENT
        return ["".join(marks.get(i, rows[i])) for i in range(len(rows))]

    # ---- snapshot / restore ----

    def _require_started(self, what: str) -> None:
        if not self._started:
            raise ResetNeeded(f"MazeEnv.{what} called before reset()")

    def snapshot(self) -> MazeState:
        """The episode state as an immutable value; `restore` returns to it."""
        self._require_started("snapshot")
        return MazeState(
            position=self._pos,
            lives=self._lives,
            score=self._score,
            steps=self._steps,
            explored=frozenset(self._explored),
            walls=frozenset(self._walls),
            coins=frozenset(self._coins),
            items=tuple(sorted(self._items.items())),
            monsters=tuple(self._monsters),
            shovel_uses=self._shovel_uses,
            sword=self._sword,
            magnet=self._magnet,
            key=self._key,
            kills=self._kills,
            barriers=self._barriers,
            coins_collected=self._coins_collected,
            success=self._success,
            rng_state=self._rng.getstate(),
            seed=self._seed,
            last_action=self._last_action,
            last_valid=self._last_valid,
            last_from=self._last_from,
            last_reward=self._last_reward,
            last_explored=self._last_explored,
            events=tuple(tuple(sorted(e.items())) for e in self._events),
            bonus=self._bonus,
        )

    def restore(self, state: MazeState) -> Observation:
        """Return to a state taken by `snapshot` of an env on the same level."""
        if not isinstance(state, MazeState):
            raise ConfigError(
                f"MazeEnv.restore: expected a MazeState from snapshot(), got {type(state).__name__}"
            )
        cells = {state.position, *state.walls, *state.coins, *state.monsters, *state.explored}
        cells.update(cell for cell, _ in state.items)
        if (
            not all(self.level.in_grid(cell) for cell in cells)
            or not state.walls <= self.level.walls
        ):
            raise ConfigError("MazeEnv.restore: the state does not belong to this level")
        self._started = True
        self._pos = state.position
        self._lives = state.lives
        self._score = state.score
        self._steps = state.steps
        self._explored = set(state.explored)
        self._walls = set(state.walls)
        self._coins = set(state.coins)
        self._items = dict(state.items)
        self._monsters = list(state.monsters)
        self._shovel_uses = state.shovel_uses
        self._sword, self._magnet, self._key = state.sword, state.magnet, state.key
        self._kills, self._barriers = state.kills, state.barriers
        self._coins_collected = state.coins_collected
        self._bonus = state.bonus
        self._success = state.success
        self._rng = random.Random()
        self._rng.setstate(state.rng_state)
        self._seed = state.seed
        self._last_action = state.last_action
        self._last_valid = state.last_valid
        self._last_from = state.last_from
        self._last_reward = state.last_reward
        self._last_explored = state.last_explored
        self._events = [dict(e) for e in state.events]
        self._rebuild_known()
        return self.render()

    # ---- read-only views ----

    @property
    def position(self) -> Cell:
        self._require_started("position")
        return self._pos

    @property
    def lives(self) -> int:
        self._require_started("lives")
        return self._lives

    @property
    def score(self) -> int:
        self._require_started("score")
        return self._score

    @property
    def monsters(self) -> tuple[Cell, ...]:
        """Where the living monsters are (all of them, seen or not)."""
        self._require_started("monsters")
        return tuple(self._monsters)

    @property
    def explored(self) -> frozenset[Cell]:
        self._require_started("explored")
        return frozenset(self._explored)

    def items_held(self) -> dict[str, Any]:
        """{"shovel": uses left, "sword": bool, "magnet": bool, "key": bool}."""
        self._require_started("items_held")
        return {
            "shovel": self._shovel_uses,
            "sword": self._sword,
            "magnet": self._magnet,
            "key": self._key,
        }

    def outcome(self) -> dict[str, Any]:
        """The episode's totals so far: the keys `maze_episode_metrics` reads (also in every
        `Step.info`)."""
        self._require_started("outcome")
        return {
            "t": self._steps,
            "success": self._success,
            "score": self._score,
            "lives": self._lives,
            "explored": len(self._explored),
            "cells": self.level.cells,
            "explorable": self._explorable(),
            "coins_collected": self._coins_collected,
            "coins_total": len(self.level.coins),
            "kills": self._kills,
            "barriers": self._barriers,
            "bonus": self._bonus,
            "rules": self.rules,
        }

    def _explorable(self) -> int:
        """A.Explor's denominator: every cell, or under the release's rules the cells that are
        not walls now (environment.py:295-314)."""
        return self.level.cells - len(self._walls) if self._release else self.level.cells

    # ---- rendering: pure functions of the state ----

    def render(self) -> Observation:
        """The observation of the current state."""
        self._require_started("render")
        rows = self.map_rows()
        return Observation(text=self._text(rows), data=self._data(rows))

    def _text(self, rows: list[str]) -> str:
        level, (r, c) = self.level, self._pos
        w = self._cell_width
        if w == 1:
            map_lines = "\n".join(f" {i} | " + " ".join(row) for i, row in enumerate(rows))
        else:
            map_lines = "\n".join(
                f" {i:>{w}} | " + " ".join(ch.rjust(w) for ch in row) for i, row in enumerate(rows)
            )
        parts = [
            f"Maze level {level.level} ({level.size}x{level.size}), step {self._steps} of "
            f"{self.max_steps}.",
            self._static_text.legend,
            "Map (row, col), row 0 at the top:",
            self._map_header,
            map_lines,
            f"Current position (row,col): ({r},{c})",
            f"Lives: {self._lives}",
            f"Score: {self._score}",
            f"Explored: {len(self._explored)} of {level.cells} cells",
            f"Coins: {self._coins_collected} of {len(level.coins)} collected",
        ]
        if level.items:
            parts.append(self._items_text())
        if self._steps:
            parts.append("Last step: " + self._feedback())
        parts.append(self._static_text.tail)
        return "\n".join(parts)

    def _items_text(self) -> str:
        shovel = f"held ({self._shovel_uses} uses left)" if self._shovel_uses else "not held"
        key = "collected" if self._key else "not collected (required to enter the goal)"
        return (
            "Items:\n"
            f"- Shovel: {shovel}\n"
            f"- Sword: {'held' if self._sword else 'not held'}\n"
            f"- Magnet: {'held' if self._magnet else 'not held'}\n"
            f"- Key: {key}"
        )

    def _feedback(self) -> str:
        """What the last step did, in words."""
        if not self._last_valid:
            return (
                'no action could be read from the reply (answer with "Action: N", N from 0 to '
                f"11); the step was spent. Score change: {self._last_reward:+d}."
            )
        label = ACTION_LABELS[self._last_action or 0]  # valid steps always parsed a number
        fr, fc = self._last_from
        pr, pc = self._pos
        words = [f"{label} from ({fr},{fc}) ended at ({pr},{pc})."]
        for event in self._events:
            words.append(_event_text(event, self._shovel_uses, self.level.start))
        if self._last_explored:
            words.append(f"{self._last_explored} new cells explored.")
        words.append(f"Score change: {self._last_reward:+d}.")
        return " ".join(words)

    def _data(self, rows: list[str]) -> dict[str, Any]:
        return {
            "level": self.level.level,
            "size": self.level.size,
            "map": rows,
            "position": list(self._pos),
            "start": list(self.level.start),
            "goal": list(self.level.goal),
            "lives": self._lives,
            "score": self._score,
            "steps": self._steps,
            "max_steps": self.max_steps,
            "items": self.items_held(),
            "key_required": self._key_required,
            "coins_left": len(self._coins),
            "coins_collected": self._coins_collected,
            "coins_total": len(self.level.coins),
            "monsters_visible": [list(m) for m in self.visible_monsters()],
            "explored": len(self._explored),
            "cells": self.level.cells,
            "kills": self._kills,
            "barriers": self._barriers,
            "full_vision": self.full_vision,
            "success": self._success,
            "done": self._done(),
            "last_action": self._last_action,
            "valid": self._last_valid,
            "events": [dict(e) for e in self._events],
        }

    def _info(self) -> dict[str, Any]:
        terminated = self._success or self._lives <= 0
        truncated = not terminated and self._steps >= self.max_steps
        info = self.outcome()
        info.update(
            action=self._last_action,
            valid=self._last_valid,
            reward=self._last_reward,
            done=terminated or truncated,
            terminated=terminated,
            truncated=truncated,
            position=list(self._pos),
            events=[dict(e) for e in self._events],
        )
        return info


def _square(center: Cell, radius: int, size: int) -> tuple[Cell, ...]:
    r, c = center
    return tuple(
        (rr, cc)
        for rr in range(max(0, r - radius), min(size, r + radius + 1))
        for cc in range(max(0, c - radius), min(size, c + radius + 1))
    )


def _event_text(event: Mapping[str, Any], shovel_uses: int, start: Cell) -> str:
    kind = event["event"]
    r, c = event["position"]
    if kind == "coin":
        by = "Your magnet pulled in" if event.get("magnet") else "Collected"
        return f"{by} a coin at ({r},{c}) (+{COIN_REWARD})."
    if kind == "wall_hit":
        if event.get("to_start"):
            return (
                f"Hit the wall at ({r},{c}): lost a life (-{LIFE_COST}) and went back to the "
                f"start ({start[0]},{start[1]})."
            )
        return f"Hit the wall at ({r},{c}): lost a life (-{LIFE_COST})."
    if kind == "barrier":
        points = f"+{event['points']}, " if event.get("points") else ""
        return f"Your shovel broke the wall at ({r},{c}) ({points}{shovel_uses} uses left)."
    if kind == "monster_hit":
        how = "A monster moved onto you" if event.get("monster_moved") else "Touched a monster"
        return (
            f"{how} at ({r},{c}): lost a life (-{LIFE_COST}) and went back to the start "
            f"({start[0]},{start[1]})."
        )
    if kind == "kill":
        return f"Your sword defeated the monster at ({r},{c})."
    if kind == "item":
        points = f" (+{event['points']})" if event.get("points") else ""
        return f"Picked up the {event['item']} at ({r},{c}){points}."
    if kind == "locked":
        return f"The goal at ({r},{c}) is locked: collect the key first."
    if kind == "goal":
        return f"Reached the goal (+{GOAL_REWARD})!"
    return f"Stopped at the edge of the map at ({r},{c})."


@dataclass(frozen=True)
class _StaticText:
    legend: str
    tail: str


def _static_text(level: MazeLevel, full_vision: bool, lives: int, rules: str) -> _StaticText:
    """The parts of the observation that depend only on the board, computed once per env."""
    legend = [
        f"{AGENT} = you",
        f"{GOAL} = goal (always visible)",
        f"{COIN} = coin",
        f"{WALL} = wall",
    ]
    if level.monsters:
        legend.append(f"{MONSTER} = monster")
    legend += [f"{ITEM_GLYPHS[name]} = {name}" for name in ITEM_NAMES if name in level.items]
    legend += [f"{UNEXPLORED} = unexplored", f"{EMPTY} = empty"]
    if full_vision:
        view = "Full vision: the whole map is shown, without the need to explore."
    else:
        view = (
            "You see the 3x3 area around you; cells you have seen stay on the map and ? marks "
            "cells not yet explored."
        )
        if level.monsters:
            view += " Monsters are shown only while they are next to you."
    release = rules == "release"
    stoppers = "a wall, a monster or the map edge" if level.monsters else "a wall or the map edge"
    if release:
        moves = [
            "Moving into a wall (#) costs a life and sends you back to the start.",
            "A move of 2 or 3 steps jumps straight to its last cell: only that cell counts "
            "(cells on the way, walls included, are skipped); a move off the map leaves you "
            "where you are.",
        ]
    else:
        moves = [
            "Moving into a wall (#) costs a life; you stop in front of it.",
            f"A move of 2 or 3 steps passes over every cell on the way and ends early at "
            f"{stoppers}.",
        ]
    with_items = bool(level.items) and (not release or level.level == RELEASE_ITEM_LEVEL)
    rules_text = [view, *moves]
    if level.monsters:
        rules_text.append(
            "Monsters (M) move one cell at random after each of your moves. Touching one costs a "
            "life and sends you back to the start."
        )
    if with_items and "key" in level.items:
        rules_text.append("You must collect the key (K) before you can enter the goal.")
    if with_items and "shovel" in level.items:
        rules_text.append(
            f"With the shovel (T) moving into a wall breaks it instead of costing a life "
            f"({SHOVEL_USES} uses)."
        )
    if with_items and "sword" in level.items:
        rules_text.append(
            "With the sword (W) touching a monster defeats it instead of costing a life."
        )
    if with_items and "magnet" in level.items:
        rules_text.append("With the magnet (N) you collect every coin in the 5x5 area around you.")
    rules_text.append(
        f"You have {lives} lives at the start; the game ends at the goal, when no lives "
        "are left, or when the step limit is reached."
    )
    actions = "\n".join(f"- {i}: {label}" for i, label in enumerate(ACTION_LABELS))
    extra = ""
    if release and with_items:
        picked = ", ".join(f"{name} +{RELEASE_ITEM_POINTS[name]}" for name in level.items)
        extra = f"- Item picked up: {picked} points\n"
        if "shovel" in level.items:
            extra += f"- Wall broken with the shovel: +{RELEASE_BARRIER_POINTS} points\n"
    tail = (
        "Available actions:\n"
        f"{actions}\n"
        "Scoring:\n"
        f"- New cell explored: +{EXPLORE_REWARD} points\n"
        f"- Coin collected: +{COIN_REWARD} points\n"
        f"- Step taken: -{STEP_COST} points\n"
        f"- Life lost: -{LIFE_COST} points\n"
        f"- Goal reached: +{GOAL_REWARD} points\n"
        + extra
        + "Rules:\n"
        + "\n".join(f"- {rule}" for rule in rules_text)
        + "\n"
        'Answer with "Action: N" where N is an action number from 0 to 11.'
    )
    return _StaticText(legend="Legend: " + ", ".join(legend), tail=tail)


# ---- metrics (Table 3) ----

METRIC_KEYS: tuple[str, ...] = (
    "Suc.Rate",
    "A.Score",
    "A.Steps",
    "A.Explor",
    "A.Gold",
    "Rem.HP",
    "A.Kills",
    "A.Barr",
)


def maze_episode_metrics(outcome: Mapping[str, Any]) -> dict[str, Any]:
    """One episode's Table 3 quantities from its final `Step.info` (or `MazeEnv.outcome()`).

    Returns success (bool), score, steps, explored_pct (explored cells / `explorable`, at
    most 100: all cells, or the non-wall cells under `rules="release"`; all cells for an
    outcome without the key), gold_ratio (coins collected / coins on the board, 0-1; 0 for a
    board without coins), remaining_hp (lives left), kills, barriers and bonus (points beyond
    B.1's rules; 0 when absent).
    """
    needed = ("t", "success", "score", "lives", "explored", "cells", "coins_collected")
    missing = [k for k in (*needed, "coins_total", "kills", "barriers") if k not in outcome]
    if missing:
        raise ConfigError(
            f"maze_episode_metrics: outcome lacks {', '.join(missing)}; pass the last Step.info "
            "or MazeEnv.outcome()"
        )
    total = outcome["coins_total"]
    explorable = outcome.get("explorable", outcome["cells"])
    explored = min(outcome["explored"], explorable)
    return {
        "success": bool(outcome["success"]),
        "score": outcome["score"],
        "steps": outcome["t"],
        "explored_pct": 100.0 * explored / explorable if explorable else 0.0,
        "gold_ratio": outcome["coins_collected"] / total if total else 0.0,
        "remaining_hp": outcome["lives"],
        "kills": outcome["kills"],
        "barriers": outcome["barriers"],
        "bonus": outcome.get("bonus", 0),
    }


def aggregate_maze(episodes: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Table 3/4's eight maze metrics over `maze_episode_metrics` dicts.

    Every metric is a mean over all episodes, failed ones included (Table 3 says "mean").
    Suc.Rate, A.Explor and A.Gold are percentages as in Table 4; the rest are plain means.
    """
    if not episodes:
        raise ConfigError("aggregate_maze: episodes is empty; pass at least one episode's metrics")
    n = len(episodes)

    def mean(key: str) -> float:
        return sum(float(e[key]) for e in episodes) / n

    return {
        "Suc.Rate": 100.0 * mean("success"),
        "A.Score": mean("score"),
        "A.Steps": mean("steps"),
        "A.Explor": mean("explored_pct"),
        "A.Gold": 100.0 * mean("gold_ratio"),
        "Rem.HP": mean("remaining_hp"),
        "A.Kills": mean("kills"),
        "A.Barr": mean("barriers"),
    }
