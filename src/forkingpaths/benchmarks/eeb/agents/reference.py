"""Reference EvoEmpirBench agents without a model: the maze explorer, match-2 greedy, random."""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.eeb.agents import prompts
from forkingpaths.benchmarks.eeb.agents.truths import GAMES
from forkingpaths.benchmarks.eeb.match2 import (
    bomb_cells,
    collapse,
    connected_group,
    find_groups,
    match2_score,
)
from forkingpaths.benchmarks.eeb.match2_levels import BOARD_SIZE, PROP_COSTS, PROPS
from forkingpaths.benchmarks.eeb.maze import ACTION_COUNT, DIRECTIONS
from forkingpaths.benchmarks.eeb.maze_levels import (
    COIN,
    GOAL,
    ITEM_GLYPHS,
    MONSTER,
    UNEXPLORED,
    WALL,
    Cell,
)
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError


def game_of(instance: Instance) -> str:
    """The game an instance is about; ConfigError when its params do not say."""
    game = instance.params.get("game")
    if game not in GAMES:
        raise ConfigError(
            f'instance {instance.id!r}: params["game"]: got {game!r}; allowed values: '
            f"{', '.join(GAMES)}"
        )
    return str(game)


# ---- maze: the explorer ----

_PICKUPS = frozenset({COIN, *ITEM_GLYPHS.values()})


@dataclass(frozen=True)
class MazeView:
    """What the explorer decides from: the known map and the agent's status.

    Built from `Observation.data` (`from_data`) by the reference agent, and from the
    observation text by the scripted model (scripted.parse_maze_text), so both decide alike.
    """

    rows: tuple[str, ...]
    """The known map, row 0 first, with A (the agent) and the monsters in sight."""
    position: Cell
    level: int = 1
    steps: int = 0
    max_steps: int = 100
    shovel_uses: int = 0
    sword: bool = False
    key_required: bool = False
    """The board holds a key the agent must collect before the goal opens."""
    key: bool = False
    coins_collected: int = 0
    coins_total: int = 0

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> MazeView:
        items = data.get("items", {})
        return cls(
            rows=tuple(data["map"]),
            position=(int(data["position"][0]), int(data["position"][1])),
            level=int(data.get("level", 1)),
            steps=int(data.get("steps", 0)),
            max_steps=int(data.get("max_steps", 100)),
            shovel_uses=int(items.get("shovel", 0)),
            sword=bool(items.get("sword", False)),
            key_required=bool(data.get("key_required", False)),
            key=bool(items.get("key", False)),
            coins_collected=int(data.get("coins_collected", 0)),
            coins_total=int(data.get("coins_total", 0)),
        )

    @property
    def size(self) -> int:
        return len(self.rows)

    def glyph(self, cell: Cell) -> str:
        return self.rows[cell[0]][cell[1]]

    def in_grid(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.size and 0 <= cell[1] < self.size

    def find(self, glyphs: frozenset[str] | str) -> list[Cell]:
        return [
            (r, c) for r, row in enumerate(self.rows) for c, ch in enumerate(row) if ch in glyphs
        ]


@dataclass(frozen=True)
class MazePlan:
    """The explorer's decision: the action and what it heads for."""

    action: int
    kind: str
    """"pickup", "frontier", "goal", "evade" or "none"."""
    target: Cell | None = None
    distance: int = 0
    """Moves to the target on the map searched."""
    what: str = ""
    """The pickup's name (coin, key...)."""


@dataclass(order=True)
class _Reach:
    cost: tuple[int, int]
    """(moves, walls broken on the way)."""
    first: int = field(compare=False)
    """The first action of the cheapest route."""


_ITEM_NAMES: Mapping[str, str] = MappingProxyType(
    {glyph: name for name, glyph in ITEM_GLYPHS.items()}
)


class _MazeSearch:
    """Cheapest routes, counted in actions, where one action moves 1-3 cells in a straight line.

    Rules of the engine the routes respect (maze.py, MazeEnv): a move stops at the goal, at a
    locked goal, at a wall (broken with a shovel use, else a lost life), at a monster (a lost
    life without the sword). Unknown cells (`?`) are entered one cell per move and only in an
    optimistic search; the 3x3 view reveals a cell's neighbours before the agent stands next to
    them, so a known route never walks into an unseen wall.
    """

    def __init__(self, view: MazeView) -> None:
        self.view = view
        goals = view.find(GOAL)
        self.goal: Cell | None = goals[0] if goals else None
        self.locked = view.key_required and not view.key
        self.monsters = frozenset(view.find(MONSTER))
        danger: set[Cell] = set()
        if not view.sword:
            # Monsters step after the agent moves, so ending a move next to one risks a life.
            for r, c in self.monsters:
                danger.update(((r, c), (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)))
        if self.goal is not None:
            danger.discard(self.goal)  # monsters never step onto the goal
        self.danger = frozenset(danger)
        # Monsters out of sight may stand on a cell a long move passes over or next to the cell
        # it ends on; single steps keep every entered cell inside the 3x3 view first.
        self.cautious = view.level >= 2 and not view.sword

    def moves(
        self, cell: Cell, *, optimistic: bool, to_goal: bool, first: bool
    ) -> list[tuple[int, Cell, int]]:
        """(action, end cell, walls broken) of every move worth searching from `cell`."""
        view = self.view
        out = []
        longest = 1 if view.glyph(cell) == UNEXPLORED or self.cautious else 3
        for d, (_, dr, dc) in enumerate(DIRECTIONS):
            for k in range(1, longest + 1):
                nxt = (cell[0] + dr * k, cell[1] + dc * k)
                if not view.in_grid(nxt):
                    break
                action = 3 * d + k - 1
                glyph = view.glyph(nxt)
                if glyph == WALL:
                    if view.shovel_uses > 0:
                        out.append((action, nxt, 1))
                    break
                if glyph == UNEXPLORED:
                    if optimistic and k == 1:
                        out.append((action, nxt, 0))
                    break
                if nxt == self.goal:
                    if to_goal and not self.locked:
                        out.append((action, nxt, 0))
                    break
                if nxt in self.monsters and not view.sword:
                    break
                if not (first and nxt in self.danger):
                    out.append((action, nxt, 0))
        return out

    def search(self, *, optimistic: bool, to_goal: bool) -> dict[Cell, _Reach]:
        start = self.view.position
        best: dict[Cell, _Reach] = {start: _Reach((0, 0), -1)}
        heap: list[tuple[tuple[int, int], int, Cell]] = [((0, 0), -1, start)]
        while heap:
            cost, first, cell = heapq.heappop(heap)
            if best[cell].cost < cost:
                continue
            if cell == self.goal:
                continue  # entering the goal ends the episode
            for action, nxt, walls in self.moves(
                cell, optimistic=optimistic, to_goal=to_goal, first=cell == start
            ):
                new = (cost[0] + 1, cost[1] + walls)
                route_first = action if cell == start else first
                if nxt not in best or new < best[nxt].cost:
                    best[nxt] = _Reach(new, route_first)
                    heapq.heappush(heap, (new, route_first, nxt))
        return best


def _nearest(reach: Mapping[Cell, _Reach], cells: Sequence[Cell]) -> tuple[Cell, _Reach] | None:
    options = [(reach[c].cost, c) for c in cells if c in reach and reach[c].first >= 0]
    if not options:
        return None
    _, cell = min(options)
    return cell, reach[cell]


def _frontier(view: MazeView, reach: Mapping[Cell, _Reach]) -> list[Cell]:
    """Reachable known cells whose 3x3 view still holds unexplored cells."""
    out = []
    for r, c in reach:
        if view.glyph((r, c)) == UNEXPLORED:
            continue
        around = (
            (rr, cc)
            for rr in range(r - 1, r + 2)
            for cc in range(c - 1, c + 2)
            if view.in_grid((rr, cc))
        )
        if any(view.glyph(cell) == UNEXPLORED for cell in around):
            out.append((r, c))
    return out


GOAL_MARGIN = 3
"""Moves kept in hand over the optimistic route to the goal before exploring stops."""


def plan_maze_move(view: MazeView) -> MazePlan:
    """The explorer's next action on the known map.

    In order: the nearest coin or item it can reach on known cells; else, while coins (or the
    key) are missing, the nearest known cell next to unexplored ones; else the goal, along a
    route that assumes unexplored cells are open. It heads for the goal early when the steps
    left barely cover that route. Moves never end next to a visible monster (without the
    sword). Multi-cell moves are used wherever the straight line is known to be clear, except
    where monsters roam and the sword is not held: there single steps won 26 and 28 of the 30
    level-2 and level-3 test mazes, long moves 23 and 27 (they ran into unseen monsters).
    """
    search = _MazeSearch(view)
    known = search.search(optimistic=False, to_goal=False)
    to_goal = search.search(optimistic=True, to_goal=True)
    goal_route = to_goal.get(search.goal) if search.goal is not None else None
    steps_left = view.max_steps - view.steps
    hurry = goal_route is not None and steps_left <= goal_route.cost[0] + GOAL_MARGIN
    if not hurry:
        pickup = _nearest(known, [c for c in known if view.glyph(c) in _PICKUPS])
        if pickup is not None:
            cell, reach = pickup
            glyph = view.glyph(cell)
            what = "coin" if glyph == COIN else _ITEM_NAMES[glyph]
            return MazePlan(reach.first, "pickup", cell, reach.cost[0], what)
        missing = view.coins_collected < view.coins_total or search.locked
        if missing or goal_route is None:
            frontier = _nearest(known, _frontier(view, known))
            if frontier is not None:
                cell, reach = frontier
                return MazePlan(reach.first, "frontier", cell, reach.cost[0])
    if goal_route is not None and goal_route.first >= 0:
        return MazePlan(goal_route.first, "goal", search.goal, goal_route.cost[0])
    return _least_risky(view, search)


def _least_risky(view: MazeView, search: _MazeSearch) -> MazePlan:
    """No planned route is safe: the single-cell move (or a bump at the map edge, which keeps
    the agent in place at no risk but the step) that ends farthest from the monsters."""
    monsters = search.monsters

    def distance(cell: Cell) -> int:
        return min((abs(cell[0] - m[0]) + abs(cell[1] - m[1]) for m in monsters), default=99)

    options = []
    for d, (_, dr, dc) in enumerate(DIRECTIONS):
        nxt = (view.position[0] + dr, view.position[1] + dc)
        if not view.in_grid(nxt):
            end = view.position
        elif view.glyph(nxt) in (WALL, UNEXPLORED) or nxt in monsters or nxt == search.goal:
            continue
        else:
            end = nxt
        options.append((end in search.danger, -distance(end), 3 * d))
    if not options:
        return MazePlan(0, "none")
    risky, _, action = min(options)
    return MazePlan(action, "none" if risky else "evade")


def maze_reasoning(plan: MazePlan) -> str:
    """One sentence on why the explorer chose its move."""
    cell = prompts.format_cell(plan.target) if plan.target is not None else ""
    if plan.kind == "pickup":
        return prompts.MAZE_REASON_ITEM.substitute(
            what=plan.what, cell=cell, distance=plan.distance
        )
    if plan.kind == "frontier":
        return prompts.MAZE_REASON_FRONTIER.substitute(cell=cell, distance=plan.distance)
    if plan.kind == "goal":
        return prompts.MAZE_REASON_GOAL.substitute(cell=cell, distance=plan.distance)
    return prompts.MAZE_REASON_EVADE if plan.kind == "evade" else prompts.MAZE_REASON_NONE


# ---- match-2: greedy ----


@dataclass(frozen=True)
class Match2View:
    """What the greedy player decides from (built from Observation.data or the text)."""

    board: tuple[str, ...]
    """8 rows of 8 colours, top row first."""
    score: int
    steps_remaining: int
    remaining: Mapping[str, int]
    """Tiles still to clear per colour (0 once a target is met)."""
    inventory: Mapping[str, int] = field(default_factory=dict)
    """Prop uses left; empty when props are off."""

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Match2View:
        return cls(
            board=tuple(data["board"]),
            score=int(data["score"]),
            steps_remaining=int(data["steps_remaining"]),
            remaining=dict(data["targets_remaining"]),
            inventory=dict(data.get("inventory") or {}),
        )

    @property
    def flat(self) -> list[str]:
        return [tile for row in self.board for tile in row]


@dataclass(frozen=True)
class Match2Plan:
    """The greedy decision: a normalised action (None when nothing is possible) and why."""

    action: dict[str, Any] | None
    reason: str


@dataclass(frozen=True)
class _Option:
    """One action the greedy player considers, with what it clears and earns."""

    action: dict[str, Any]
    cells: tuple[int, ...]
    points: int
    """Score change: the elimination's points, or minus the prop's cost."""


_ROWS = tuple(tuple(i * BOARD_SIZE + j for j in range(BOARD_SIZE)) for i in range(BOARD_SIZE))
_COLUMNS = tuple(tuple(i * BOARD_SIZE + j for i in range(BOARD_SIZE)) for j in range(BOARD_SIZE))
_BOMBS = tuple(tuple(bomb_cells(i, j)) for i in range(BOARD_SIZE) for j in range(BOARD_SIZE))
"""The cells a bomb centred on each tile (row-major) clears."""
_AREAS: Mapping[str, tuple[tuple[int, ...], ...]] = MappingProxyType(
    {"row": _ROWS, "col": _COLUMNS, "bomb": _BOMBS}
)
GROUP_PACE = 3.5
"""Tiles per move that groups alone are trusted to clear: while the targets still due fit
within this pace over the steps left, props are kept back (they cost points). 3.5 kept every
win of the test levels and raised the average score on medium levels by a sixth over 3.0."""
LOOKAHEAD_SAMPLES = 2
"""Imagined refills averaged over when judging the board a move leaves behind."""
LOOKAHEAD_WEIGHT = 1.0
"""Weight of the next move's progress against this move's (1.0: a prop now and a group next
tie with the group now and the prop next, and points then keep the score up; 0.9 won fewer
levels and scored a quarter as much on easy ones)."""


def _useful(board: Sequence[str | None], cells: Sequence[int], remaining: Mapping[str, int]) -> int:
    """Target progress of clearing `cells`: tiles of each colour, capped at what is still due."""
    tiles = [board[cell] for cell in cells]
    return sum(min(tiles.count(colour), due) for colour, due in remaining.items() if due > 0)


def _options(
    board: Sequence[str], score: int, inventory: Mapping[str, int], remaining: Mapping[str, int]
) -> list[_Option]:
    """Every elimination, plus the most useful use of each prop the score can pay for."""
    options = []
    for _, size, cell in find_groups(board):
        pos = [cell // BOARD_SIZE, cell % BOARD_SIZE]
        cells = tuple(connected_group(board, cell))
        options.append(_Option({"type": "eliminate", "pos": pos}, cells, match2_score(size)))
    for prop in PROPS:
        if inventory.get(prop, 0) <= 0 or score < PROP_COSTS[prop]:
            continue
        if prop == "hammer":
            # One tile: any tile of a colour still due is as good as another.
            cell = next((c for c, tile in enumerate(board) if remaining.get(tile, 0) > 0), 0)
            options.append(
                _Option(
                    {"type": prop, "pos": [cell // BOARD_SIZE, cell % BOARD_SIZE]},
                    (cell,),
                    -PROP_COSTS[prop],
                )
            )
            continue
        index, cells = max(enumerate(_AREAS[prop]), key=lambda a: _useful(board, a[1], remaining))
        action: dict[str, Any] = (
            {"type": prop, "index": index}
            if prop != "bomb"
            else {"type": prop, "pos": [index // BOARD_SIZE, index % BOARD_SIZE]}
        )
        options.append(_Option(action, cells, -PROP_COSTS[prop]))
    return options


def _best_progress(
    board: Sequence[str], score: int, inventory: Mapping[str, int], remaining: Mapping[str, int]
) -> int:
    """The most target progress one move could make on `board`: what the lookahead credits."""
    best = max(
        (min(size, remaining.get(colour, 0)) for colour, size, _ in find_groups(board)), default=0
    )
    for prop in PROPS:
        if inventory.get(prop, 0) <= 0 or score < PROP_COSTS[prop]:
            continue
        if prop == "hammer":
            value = int(any(remaining.get(tile, 0) > 0 for tile in board))
        else:
            value = max(_useful(board, area, remaining) for area in _AREAS[prop])
        best = max(best, value)
    return best


def _after(
    board: Sequence[str], option: _Option, remaining: Mapping[str, int], sample: int
) -> tuple[list[str], dict[str, int]]:
    """The board after `option` with one imagined refill, and the targets still due."""
    left = dict(remaining)
    for cell in option.cells:
        left[board[cell]] = max(0, left.get(board[cell], 0) - 1)
    nxt: list[str | None] = list(board)
    for cell in option.cells:
        nxt[cell] = None
    # The engine's own gravity and refill rule; the refill colours are imagined (the real
    # ones come from the env's RNG), so a fixed seed per sample keeps the choice reproducible.
    collapse(nxt, random.Random(sample))
    return [tile or "" for tile in nxt], left


def plan_match2_move(view: Match2View) -> Match2Plan:
    """The move that makes the most target progress now and sets up the most for the next one.

    The simple greedy (the largest group of a colour still needed; props only when no group is
    left) wins 30/21/1 of the 30 easy/medium/hard test levels; this one-move lookahead wins
    30/30/7. Candidates are every group of two or more and, when the score can pay and groups
    alone fall behind GROUP_PACE, the best row, column, bomb and hammer. A move that meets every
    target wins outright; otherwise its value is the tiles it clears that a target still needs
    plus the best such count one move later, averaged over imagined refills. Points break ties,
    so props (which cost points) are chosen only when they clear more of what is needed.
    """
    board = view.flat
    due = sum(view.remaining.values())
    options = _options(board, view.score, view.inventory, view.remaining)
    if due <= GROUP_PACE * view.steps_remaining:
        # Groups alone are on pace to finish: keep the props (and the points they cost) unless
        # one finishes the level or no group is left.
        groups = [
            o
            for o in options
            if o.action["type"] == "eliminate" or _useful(board, o.cells, view.remaining) >= due
        ]
        options = groups if any(o.action["type"] == "eliminate" for o in groups) else options
    if not options:
        return Match2Plan(None, prompts.MATCH2_REASON_NONE)
    best: tuple[bool, float, int, int] | None = None
    chosen = options[0]
    for index, option in enumerate(options):
        now = _useful(board, option.cells, view.remaining)
        later = 0.0
        if view.steps_remaining > 1 and now < due:
            inventory = dict(view.inventory)
            if option.action["type"] in inventory:
                inventory[option.action["type"]] -= 1
            for sample in range(LOOKAHEAD_SAMPLES):
                nxt, left = _after(board, option, view.remaining, sample)
                later += _best_progress(nxt, view.score + option.points, inventory, left)
            later /= LOOKAHEAD_SAMPLES
        key = (now >= due, now + LOOKAHEAD_WEIGHT * later, option.points, -index)
        if best is None or key > best:
            best, chosen = key, option
    action = chosen.action
    if action["type"] == "eliminate":
        cell = chosen.cells[0]
        reason = prompts.MATCH2_REASON_GROUP.substitute(
            colour=board[cell],
            size=len(chosen.cells),
            cell=prompts.format_cell((action["pos"][0], action["pos"][1])),
        )
    else:
        useful = _useful(board, chosen.cells, view.remaining)
        reason = prompts.MATCH2_REASON_PROP.substitute(prop=action["type"], useful=useful)
    return Match2Plan(action, reason)


def match2_action_text(action: Mapping[str, Any] | None) -> str:
    """App. B.1's JSON for an action."""
    return json.dumps({"action": None if action is None else dict(action)})


# ---- the agents ----


class ExplorerGreedyAgent:
    """The reference player of both games: the maze explorer or the match-2 greedy, picked
    from the instance at reset. Decides from Observation.data alone and keeps no memory."""

    def __init__(self) -> None:
        self.game: str | None = None

    def reset(self, instance: Instance, seed: int) -> None:
        self.game = game_of(instance)

    async def act(self, observation: Observation) -> Decision:
        if self.game == "maze":
            plan = plan_maze_move(MazeView.from_data(observation.data))
            return Decision(action=str(plan.action), thought=maze_reasoning(plan))
        move = plan_match2_move(Match2View.from_data(observation.data))
        return Decision(action=match2_action_text(move.action), thought=move.reason)

    def state(self) -> dict[str, Any]:
        return {}


class RandomAgent:
    """Uniform over actions that look valid: maze 0-11; match-2 a random tile of a group of two
    or more (any tile when none). Seeded at reset from the episode seed."""

    def __init__(self, seed_offset: int = 0) -> None:
        self.seed_offset = seed_offset
        self.game: str | None = None
        self._rng = random.Random(seed_offset)

    def reset(self, instance: Instance, seed: int) -> None:
        self.game = game_of(instance)
        self._rng = random.Random(seed + self.seed_offset)

    async def act(self, observation: Observation) -> Decision:
        if self.game == "maze":
            action_number = self._rng.randrange(ACTION_COUNT)
            return Decision(action=str(action_number), thought=prompts.RANDOM_REASON)
        board = [tile for row in observation.data["board"] for tile in row]
        cells = [i for i in range(len(board)) if len(connected_group(board, i)) >= 2]
        cell = self._rng.choice(cells or range(len(board)))
        action = {"type": "eliminate", "pos": [cell // BOARD_SIZE, cell % BOARD_SIZE]}
        return Decision(action=match2_action_text(action), thought=prompts.RANDOM_REASON)

    def state(self) -> dict[str, Any]:
        return {}


def make_reference(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> ExplorerGreedyAgent:
    """Factory of the `reference` agent (maze explorer / match-2 greedy; no model)."""
    return ExplorerGreedyAgent()


def make_random(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    seed_offset: int = 0,
) -> RandomAgent:
    """Factory of the `random` agent; `seed_offset` shifts its RNG away from the env seed."""
    if isinstance(seed_offset, str) and seed_offset.strip().lstrip("-").isdigit():
        seed_offset = int(seed_offset)  # options may arrive as strings from a command line
    if isinstance(seed_offset, bool) or not isinstance(seed_offset, int):
        raise ConfigError(f"seed_offset: got {seed_offset!r}; allowed values: an integer")
    return RandomAgent(seed_offset=seed_offset)
