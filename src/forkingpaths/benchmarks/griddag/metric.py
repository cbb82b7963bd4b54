"""The exploration/exploitation error metric of the grid paper (§4, Table 1, Eq. 1; App. B)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forkingpaths.benchmarks.griddag.world import Cell, World
from forkingpaths.core.errors import ConfigError, ForkingPathsError, InvalidFile, shown

EXPLORATION_CASES: frozenset[int] = frozenset({1, 4})
"""Table 1 cases whose required action includes exploration: their errors count toward it (§4)."""
EXPLOITATION_CASES: frozenset[int] = frozenset({2, 3, 4})
"""Table 1 cases whose required action includes exploitation (case 4 counts toward both)."""

EDGE_BUDGET = 2
"""Traversals of an edge tolerated in a no-progress segment (optimal online exploration, §4)."""
NODE_BUDGET = 2
"""Visits of a cell tolerated in a no-progress segment (one gateway revisit, §4)."""


@dataclass(frozen=True)
class StaleTerms:
    """The stale score's terms after a move: S = c + e + n (§4)."""

    c: int
    """Cyclomatic number |E_np| - |V_np| + 1 of the no-progress segment."""
    e: int
    """Sum over segment edges of max(0, traversals - 2)."""
    n: int
    """Sum over segment cells of max(0, visits - 2)."""

    @property
    def S(self) -> int:  # named as in the paper (S_t)
        return self.c + self.e + self.n


class StaleScore:
    """The no-progress segment tau_np(t) and its stale score S_t = c_t + e_t + n_t (§4, App. B).

    The segment is a walk, so its graph is connected and c = |E| - |V| + 1. Counts are kept
    incrementally: each move costs O(1) whatever the segment's length.
    """

    def __init__(self, cell: Cell) -> None:
        self._visits: dict[Cell, int] = {}
        self._edges: dict[tuple[Cell, Cell], int] = {}
        self._e = 0
        self._n = 0
        self._position = cell
        self.reset(cell)

    def reset(self, cell: Cell) -> None:
        """Start a new segment holding only `cell`, visited once (after a progress event, t=0)."""
        self._visits = {cell: 1}
        self._edges = {}
        self._e = 0
        self._n = 0
        self._position = cell

    def move(self, cell: Cell) -> StaleTerms:
        """Extend the segment by a non-progress move to `cell`; staying put adds nothing."""
        here = self._position
        if cell == here:
            return self.terms
        visits = self._visits.get(cell, 0) + 1
        self._visits[cell] = visits
        if visits > NODE_BUDGET:
            self._n += 1
        edge = (here, cell) if here <= cell else (cell, here)
        uses = self._edges.get(edge, 0) + 1
        self._edges[edge] = uses
        if uses > EDGE_BUDGET:
            self._e += 1
        self._position = cell
        return self.terms

    @property
    def position(self) -> Cell:
        return self._position

    @property
    def c(self) -> int:
        return len(self._edges) - len(self._visits) + 1

    @property
    def e(self) -> int:
        return self._e

    @property
    def n(self) -> int:
        return self._n

    @property
    def S(self) -> int:  # named as in the paper (S_t)
        return self.c + self._e + self._n

    @property
    def terms(self) -> StaleTerms:
        return StaleTerms(self.c, self._e, self._n)


@dataclass(frozen=True)
class StepScore:
    """The metric's verdict on one move p(t) -> p(t+1) (Eq. 1)."""

    t: int
    """Index of the move: it goes from p(t) to p(t+1)."""
    case: int
    """Table 1 case (1-4) of the state at t, before the move."""
    gain: int
    """Eq. 6: 1 if p(t+1) is a target or is closer (true-map distance) to some target."""
    progress: bool
    """The move entered an unobserved cell or achieved a pending task."""
    err: int
    """Eq. 1."""
    stale: int
    """Stale score S after the move (0 after a progress event: the segment restarts)."""
    targets: int
    """|T(t)|."""
    position: Cell
    """p(t+1)."""


@dataclass
class TrajectoryScore:
    """The metric over a whole trajectory, normalised as in §5."""

    steps: list[StepScore]
    exploration_error: float | None
    """Errors in cases 1 and 4 over moves in cases 1 and 4; None without such moves."""
    exploitation_error: float | None
    """Errors in cases 2, 3 and 4 over moves in cases 2, 3 and 4; None without such moves."""
    success: bool
    """The goal was achieved within the world's budget of moves."""
    n_moves: int
    """Moves scored (up to and including the one achieving the goal)."""
    case_counts: dict[int, int] = field(default_factory=dict)
    """Moves per Table 1 case (keys 1-4)."""
    case_errors: dict[int, int] = field(default_factory=dict)
    """Errors per Table 1 case (keys 1-4)."""
    exploration_errors: int = 0
    exploitation_errors: int = 0
    ignored_after_goal: int = 0
    """Moves given after the goal was achieved; not scored."""

    def to_json(self) -> dict[str, Any]:
        """The `forkingpaths griddag score` output: an external contract, keys fixed."""
        return {
            "steps": [
                {"t": s.t, "case": s.case, "gain": s.gain, "progress": s.progress, "err": s.err}
                for s in self.steps
            ],
            "exploration_error": _plain(self.exploration_error),
            "exploitation_error": _plain(self.exploitation_error),
            "success": self.success,
        }


def _plain(value: float | None) -> float | None:
    return None if value is None else float(value)


class ErrorMetric:
    """Eq. 1 computed online, one move at a time.

    The state at t (observed cells, frontier U(t), node statuses, pending tasks P(t)) is updated
    incrementally as each move arrives; shortest distances on the true map come from BFS rows
    cached per source cell, so the gain test is one vectorised comparison over the cell index.
    """

    def __init__(self, world: World) -> None:
        self.world = world
        cells = sorted(world.cells)
        self._cells: list[Cell] = cells
        self._index: dict[Cell, int] = {c: i for i, c in enumerate(cells)}
        self._adjacency: list[list[int]] = [
            [self._index[n] for n in world.neighbours(c)] for c in cells
        ]
        # Larger than any real distance, so "unreachable < unreachable" is False.
        self._unreachable = len(cells) + 1
        self._rows: dict[int, np.ndarray] = {}
        self._goal_index = self._index[world.nodes[world.goal].pos]
        self._achieved: set[str] = set()
        self._started = False

    # ---- state ----

    def start(self, p0: Cell) -> None:
        """Begin a trajectory at p(0); a started metric is reset."""
        if p0 not in self._index:
            raise ConfigError(f"p(0) {list(p0)} is not a traversable cell")
        size = len(self._index)
        self._observed = np.zeros(size, dtype=bool)
        self._frontier = np.zeros(size, dtype=bool)
        self._pending_mask = np.zeros(size, dtype=bool)
        self._frontier_size = 0
        self._achieved = set()
        self._pending: set[str] = set()
        self._prec: dict[str, bool] = {name: self._prec_now(name) for name in self.world.nodes}
        self._position = p0
        self._t = 0
        self._steps: list[StepScore] = []
        self._ignored = 0
        self._stale = StaleScore(p0)
        self._started = True
        self._enter(p0)

    @property
    def done(self) -> bool:
        """The goal has been achieved: later moves are not scored."""
        return self.world.goal in self._achieved

    @property
    def position(self) -> Cell:
        return self._position

    @property
    def unobserved(self) -> frozenset[Cell]:
        """U(t), for inspection."""
        return frozenset(self._cells[i] for i in np.flatnonzero(self._frontier))

    @property
    def pending(self) -> frozenset[str]:
        """P(t), for inspection."""
        return frozenset(self._pending)

    @property
    def achieved(self) -> frozenset[str]:
        return frozenset(self._achieved)

    @property
    def case(self) -> int:
        """Table 1 case of the state at t."""
        return self._table1()[0]

    @property
    def targets(self) -> frozenset[Cell]:
        """T(t) of Table 1, for inspection."""
        _, mask, _ = self._table1()
        if mask is None:
            return frozenset({self._cells[self._goal_index]})
        return frozenset(self._cells[i] for i in np.flatnonzero(mask))

    def _table1(self) -> tuple[int, np.ndarray | None, int]:
        """(case, target mask over the cell index or None for {l(g)}, |T|) of the state at t."""
        if not self._pending:
            return 1, self._frontier, self._frontier_size
        if self.world.goal in self._pending:
            return 2, None, 1
        if self._frontier_size == 0:
            return 3, self._pending_mask, len(self._pending)
        # U(t) holds unobserved cells and pending locations are observed: the union is disjoint.
        return 4, self._frontier | self._pending_mask, self._frontier_size + len(self._pending)

    def _prec_now(self, name: str) -> bool:
        options = self.world.nodes[name].options
        if not options:
            return True
        return any(all(p in self._achieved for p in option) for option in options)

    def _enter(self, cell: Cell) -> None:
        """Apply the agent's arrival at `cell` to the observed set, U and node statuses."""
        i = self._index[cell]
        if not self._observed[i]:
            self._observed[i] = True
            if self._frontier[i]:
                self._frontier[i] = False
                self._frontier_size -= 1
            for j in self._adjacency[i]:
                if not self._observed[j] and not self._frontier[j]:
                    self._frontier[j] = True
                    self._frontier_size += 1
        name = self.world.node_at(cell)
        # Parents sit on other cells (l is injective), so prec at arrival equals prec before it.
        if name is not None and name not in self._achieved and self._prec[name]:
            self._achieve(name)

    def _achieve(self, name: str) -> None:
        self._achieved.add(name)
        if name in self._pending:
            self._pending.discard(name)
            self._pending_mask[self._index[self.world.nodes[name].pos]] = False
        # prec only ever turns true (achievement is permanent), so a seen, unachieved child whose
        # prec turns true becomes pending now and stays so until achieved.
        for child in self.world.children(name):
            if self._prec[child] or not self._prec_now(child):
                continue
            self._prec[child] = True
            pos = self.world.nodes[child].pos
            if child not in self._achieved and self._observed[self._index[pos]]:
                self._pending.add(child)
                self._pending_mask[self._index[pos]] = True

    def _distances(self, i: int) -> np.ndarray:
        """d(cell i, .) on the true map, BFS once per source and cached."""
        row = self._rows.get(i)
        if row is None:
            # BFS over plain lists: indexing a numpy array element-wise is far slower.
            unreachable = self._unreachable
            dist = [unreachable] * len(self._cells)
            dist[i] = 0
            queue = deque([i])
            adjacency = self._adjacency
            while queue:
                cur = queue.popleft()
                step = dist[cur] + 1
                for nxt in adjacency[cur]:
                    if dist[nxt] == unreachable:
                        dist[nxt] = step
                        queue.append(nxt)
            row = np.array(dist, dtype=np.int32)
            self._rows[i] = row
        return row

    # ---- scoring ----

    def update(self, p_next: Cell) -> StepScore:
        """Score the move p(t) -> p_next (Eq. 1), then advance the state to t+1."""
        if not self._started:
            raise ForkingPathsError("ErrorMetric.update called before start(p0)")
        if self.done:
            raise ForkingPathsError(
                f"ErrorMetric.update at t={self._t}: the goal is already achieved; "
                "moves after it are not scored"
            )
        here = self._position
        j = self._index.get(p_next)
        if j is None:
            raise ConfigError(f"p({self._t + 1}) {list(p_next)} is not a traversable cell")
        if abs(p_next[0] - here[0]) + abs(p_next[1] - here[1]) > 1:
            raise ConfigError(
                f"p({self._t}) -> p({self._t + 1}): {list(here)} -> {list(p_next)} "
                "is not a 4-neighbour move"
            )
        i = self._index[here]
        world = self.world

        case, mask, n_targets = self._table1()
        g = self._goal_index

        name_next = world.node_at(p_next)
        progress = bool(self._frontier[j]) or (name_next is not None and name_next in self._pending)

        # Eq. 6.
        if j == i:
            # p(t) is never a target (it is observed, and a pending node there would be achieved).
            gain = 0
        elif mask is None:
            gain = int(j == g or self._distances(j)[g] < self._distances(i)[g])
        else:
            gain = int(
                bool(mask[j]) or bool(np.any(mask & (self._distances(j) < self._distances(i))))
            )

        # Eq. 1.
        if progress:
            self._stale.reset(p_next)
            err = 0
        else:
            before = self._stale.S
            after = self._stale.move(p_next).S
            if gain == 0:
                err = 1
            elif n_targets == 1:
                err = 0
            else:
                err = int(after > before)

        step = StepScore(
            t=self._t,
            case=case,
            gain=gain,
            progress=progress,
            err=err,
            stale=self._stale.S,
            targets=n_targets,
            position=p_next,
        )
        self._steps.append(step)
        self._position = p_next
        self._t += 1
        self._enter(p_next)
        return step

    def ignore(self, count: int = 1) -> None:
        """Record moves that came after the goal and were not scored."""
        self._ignored += count

    def result(self) -> TrajectoryScore:
        """The normalised errors and per-case counts of the moves scored so far (§5)."""
        if not self._started:
            raise ForkingPathsError("ErrorMetric.result called before start(p0)")
        case_counts = dict.fromkeys(range(1, 5), 0)
        case_errors = dict.fromkeys(range(1, 5), 0)
        for step in self._steps:
            case_counts[step.case] += 1
            case_errors[step.case] += step.err
        exploration_moves = sum(case_counts[c] for c in EXPLORATION_CASES)
        exploitation_moves = sum(case_counts[c] for c in EXPLOITATION_CASES)
        exploration_errors = sum(case_errors[c] for c in EXPLORATION_CASES)
        exploitation_errors = sum(case_errors[c] for c in EXPLOITATION_CASES)
        return TrajectoryScore(
            steps=list(self._steps),
            exploration_error=(
                exploration_errors / exploration_moves if exploration_moves else None
            ),
            exploitation_error=(
                exploitation_errors / exploitation_moves if exploitation_moves else None
            ),
            success=self.done and len(self._steps) <= self.world.budget,
            n_moves=len(self._steps),
            case_counts=case_counts,
            case_errors=case_errors,
            exploration_errors=exploration_errors,
            exploitation_errors=exploitation_errors,
            ignored_after_goal=self._ignored,
        )


def score_trajectory(world: World, positions: list[Cell]) -> TrajectoryScore:
    """Score positions p(0..T); moves after the one achieving the goal are counted, not scored."""
    if not positions:
        raise ConfigError("positions is empty; it must start with p(0)")
    metric = ErrorMetric(world)
    metric.start(positions[0])
    for t, cell in enumerate(positions[1:], start=1):
        if metric.done:
            metric.ignore(len(positions) - t)
            break
        metric.update(cell)
    return metric.result()


def load_score_input(data: Any, source: str) -> tuple[World, list[Cell]]:
    """Parse a `griddag score` file: the World JSON plus "positions": [[x, y], ...]."""
    world = World.from_json(data, source=source)
    if "positions" not in data:
        raise InvalidFile(f"{source}: missing field 'positions' (a list of [x, y] cells)")
    raw = data["positions"]
    if not isinstance(raw, list):
        raise InvalidFile(f"{source}: positions: expected a list of [x, y] cells, got {shown(raw)}")
    if not raw:
        raise InvalidFile(
            f"{source}: positions is empty; it must begin with the start cell {list(world.start)}"
        )
    positions: list[Cell] = []
    for i, entry in enumerate(raw):
        where = f"{source}: positions[{i}]"
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
        ):
            raise InvalidFile(f"{where}: expected [x, y] with two integers, got {shown(entry)}")
        cell: Cell = (entry[0], entry[1])
        if cell not in world.cells:
            raise InvalidFile(f"{where}: {list(cell)} is not a traversable cell of the map")
        if i == 0:
            if cell != world.start:
                raise InvalidFile(
                    f"{where}: {list(cell)} must be the start cell {list(world.start)}"
                )
        else:
            prev = positions[-1]
            if abs(cell[0] - prev[0]) + abs(cell[1] - prev[1]) > 1:
                raise InvalidFile(
                    f"{source}: positions[{i - 1}] -> positions[{i}]: {list(prev)} -> "
                    f"{list(cell)} is not a move to a 4-neighbour (or a refused move in place)"
                )
        positions.append(cell)
    return world, positions
