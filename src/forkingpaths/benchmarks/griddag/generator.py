"""The procedural task generator (paper App. C.1): a seeded task DAG carved into a grid map."""

from __future__ import annotations

import math
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.griddag.world import BUDGET_ALPHA, Cell, TaskNode, World
from forkingpaths.core.errors import ConfigError

NAME_ALPHABET = string.ascii_uppercase + string.digits
NAME_LENGTH = 4
"""Symbolic node names are random 4-character tokens such as D7UX (App. C.1)."""
ASPECT_RATIO = 1
"""Width / height of the grid; the paper fixes it to 1 (App. C.1)."""
PARENT_DEPTH_BIAS = 1.0
"""beta of the parent-depth weight exp(-beta((D-1)-d)); 1 in every setting (App. C.1)."""
MAX_NODES_PER_LAYER = 3
"""At most 3 nodes share a depth (App. C.1)."""
_OPTION_TRIES = 8
"""Redraws of an alternative prerequisite set that duplicates another before it is dropped."""


@dataclass(frozen=True)
class DagPreset:
    """Task-DAG difficulty: size and the three categorical distributions of App. C.1.

    Distributions are `((value, probability), ...)` tuples so that they are immutable and their
    order, which the sampler walks, is fixed.
    """

    node_count: int
    """Nodes including the goal (small/medium/large = 4/6/8)."""
    option_count_probs: tuple[tuple[int, float], ...]
    """Number of alternative prerequisite sets (OR branching) of a non-primitive node."""
    dependency_count_probs: tuple[tuple[int, float], ...]
    """Parents per prerequisite set (AND arity) of a non-primitive, non-goal node."""
    goal_dependency_count_probs: tuple[tuple[int, float], ...]
    """Parents of the goal's single prerequisite set, before repair."""
    parent_depth_bias: float = PARENT_DEPTH_BIAS
    max_nodes_per_layer: int = MAX_NODES_PER_LAYER

    def to_dict(self) -> dict[str, Any]:
        return {
            "node_count": self.node_count,
            "option_count_probs": dict(self.option_count_probs),
            "dependency_count_probs": dict(self.dependency_count_probs),
            "goal_dependency_count_probs": dict(self.goal_dependency_count_probs),
            "parent_depth_bias": self.parent_depth_bias,
            "max_nodes_per_layer": self.max_nodes_per_layer,
        }


@dataclass(frozen=True)
class ExplorationPreset:
    """Exploration demand: how sparse the nodes lie and how wide the corridors are (App. C.1)."""

    density: float
    """(nodes + start) / grid cells; lower = larger map = more exploration."""
    corridor_widths: tuple[int, int]
    """Inclusive range each corridor's width is drawn from; wider = more cells and moves."""

    def to_dict(self) -> dict[str, Any]:
        return {"density": self.density, "corridor_widths": list(self.corridor_widths)}


_UNIFORM_12 = ((1, 0.5), (2, 0.5))
_UNIFORM_123 = ((1, 1 / 3), (2, 1 / 3), (3, 1 / 3))

DAG_PRESETS: Mapping[str, DagPreset] = MappingProxyType(
    {
        "easy": DagPreset(4, ((1, 1.0),), _UNIFORM_12, _UNIFORM_12),
        "medium": DagPreset(6, ((1, 0.8), (2, 0.2)), _UNIFORM_12, _UNIFORM_12),
        "hard": DagPreset(8, ((1, 0.6), (2, 0.4)), _UNIFORM_123, _UNIFORM_123),
    }
)
"""The paper's small/medium/large DAG sizes (4/6/8 nodes) are the easy/medium/hard presets."""

EXPLORATION_PRESETS: Mapping[str, ExplorationPreset] = MappingProxyType(
    {
        "low": ExplorationPreset(0.4, (1, 1)),
        "medium": ExplorationPreset(0.25, (1, 3)),
        "high": ExplorationPreset(0.1, (2, 3)),
    }
)
"""Low exploration demand is the paper's high exploitation demand, and vice versa."""

PRESETS: Mapping[str, Mapping[str, DagPreset | ExplorationPreset]] = MappingProxyType(
    {"exploration": EXPLORATION_PRESETS, "dag": DAG_PRESETS}
)


# ---- randomness that is stable across Python versions ----
# Only Random.random() is guaranteed to reproduce across Python releases; choice, shuffle,
# randrange and choices may change their algorithm, so every draw below goes through random().


def _below(rng: random.Random, n: int) -> int:
    """A uniform integer in [0, n)."""
    return min(int(rng.random() * n), n - 1)


def _weighted_index(rng: random.Random, weights: Sequence[float]) -> int:
    point = rng.random() * math.fsum(weights)
    acc = 0.0
    for i, weight in enumerate(weights):
        acc += weight
        if point < acc:
            return i
    return len(weights) - 1


def _categorical(rng: random.Random, probs: tuple[tuple[int, float], ...]) -> int:
    return probs[_weighted_index(rng, [p for _, p in probs])][0]


def _shuffle(rng: random.Random, items: list[Any]) -> None:
    """Fisher-Yates in place."""
    for i in range(len(items) - 1, 0, -1):
        j = _below(rng, i + 1)
        items[i], items[j] = items[j], items[i]


def draw_names(rng: random.Random, count: int, taken: frozenset[str] = frozenset()) -> list[str]:
    """`count` distinct random tokens of NAME_LENGTH uppercase letters and digits."""
    names: list[str] = []
    used = set(taken)
    while len(names) < count:
        name = "".join(NAME_ALPHABET[_below(rng, len(NAME_ALPHABET))] for _ in range(NAME_LENGTH))
        if name not in used:
            used.add(name)
            names.append(name)
    return names


# ---- the task DAG ----


@dataclass(frozen=True)
class SampledDag:
    """A sampled DAG over node indices (names come later); the goal is the last index."""

    depths: tuple[int, ...]
    options: tuple[tuple[tuple[int, ...], ...], ...]
    layer_sizes: tuple[int, ...]


def _layer_sizes(rng: random.Random, count: int, per_layer: int) -> list[int]:
    """Split the non-goal nodes into consecutive non-empty layers of at most `per_layer`."""
    sizes = []
    while count:
        size = 1 + _below(rng, min(per_layer, count))
        sizes.append(size)
        count -= size
    return sizes


def _sample_parents(
    rng: random.Random,
    depths: Sequence[int],
    child_depth: int,
    count: int,
    beta: float,
    *,
    anchor: bool,
) -> tuple[int, ...]:
    """Draw `count` distinct parents from strictly shallower layers with weight
    exp(-beta((D-1)-d)); with `anchor`, the first is drawn from layer D-1 so that the child's
    depth (longest path from a primitive) is exactly D."""
    pool = [i for i, d in enumerate(depths) if d < child_depth]
    count = min(count, len(pool))
    chosen: list[int] = []
    if anchor:
        previous = [i for i in pool if depths[i] == child_depth - 1]
        pick = previous[_below(rng, len(previous))]
        chosen.append(pick)
        pool.remove(pick)
    while len(chosen) < count:
        weights = [math.exp(-beta * ((child_depth - 1) - depths[i])) for i in pool]
        chosen.append(pool.pop(_weighted_index(rng, weights)))
    return tuple(sorted(chosen))


def _comparable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return set(a) <= set(b) or set(b) <= set(a)


def _ancestors(options: Sequence[Sequence[tuple[int, ...]]], node: int) -> set[int]:
    seen: set[int] = set()
    stack = [node]
    while stack:
        for option in options[stack.pop()]:
            for parent in option:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
    return seen


def sample_dag(preset: DagPreset, rng: random.Random) -> SampledDag:
    """Layers, prerequisite options with depth-biased parents, then the goal repair (App. C.1).

    Option 0 of every non-primitive node is anchored to the previous layer; further options are
    redrawn while they are a subset or superset of an earlier one (an option containing another
    would never matter) and dropped after a few tries, e.g. when only one parent exists.
    """
    sizes = _layer_sizes(rng, preset.node_count - 1, preset.max_nodes_per_layer)
    depths = [d for d, size in enumerate(sizes) for _ in range(size)]
    goal_depth = len(sizes)
    depths.append(goal_depth)
    goal = len(depths) - 1
    beta = preset.parent_depth_bias
    options: list[list[tuple[int, ...]]] = [[] for _ in depths]
    for node in range(goal):
        depth = depths[node]
        if depth == 0:
            continue
        for k in range(_categorical(rng, preset.option_count_probs)):
            m = _categorical(rng, preset.dependency_count_probs)
            for _ in range(_OPTION_TRIES):
                option = _sample_parents(rng, depths, depth, m, beta, anchor=k == 0)
                if not any(_comparable(option, other) for other in options[node]):
                    options[node].append(option)
                    break
    m = _categorical(rng, preset.goal_dependency_count_probs)
    goal_parents = set(_sample_parents(rng, depths, goal_depth, m, beta, anchor=True))
    options[goal] = [tuple(sorted(goal_parents))]
    # Repair: a node the goal does not depend on joins the goal's prerequisites. Deepest first,
    # so adding a node also makes its own ancestors relevant and they need no edge of their own.
    relevant = _ancestors(options, goal)
    for node in sorted(range(goal), key=lambda i: (-depths[i], i)):
        if node not in relevant:
            goal_parents.add(node)
            relevant |= {node} | _ancestors(options, node)
    options[goal] = [tuple(sorted(goal_parents))]
    return SampledDag(tuple(depths), tuple(tuple(o) for o in options), tuple(sizes))


# ---- the grid map ----


def grid_side(points: int, density: float) -> int:
    """Smallest s with points / s^2 <= density (square grid, aspect ratio 1).

    Exact rational arithmetic, so 0.1 or 0.4 never round a boundary case differently.
    """
    if not isinstance(points, int) or points < 1:
        raise ConfigError(f"points must be a positive integer; got {points!r}")
    if not isinstance(density, int | float) or not 0 < density <= 1:
        raise ConfigError(f"density must be a number in (0, 1]; got {density!r}")
    target = Fraction(str(density))
    side = 1
    while Fraction(points, side * side) > target:
        side += 1
    return side


def _manhattan_path(rng: random.Random, start: Cell, end: Cell) -> list[Cell]:
    """A random monotone staircase: the x and y unit steps in shuffled order."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    moves = [(1 if dx > 0 else -1, 0)] * abs(dx) + [(0, 1 if dy > 0 else -1)] * abs(dy)
    _shuffle(rng, moves)
    path = [start]
    x, y = start
    for mx, my in moves:
        x, y = x + mx, y + my
        path.append((x, y))
    return path


def _carve(path: Sequence[Cell], width: int, side: int, into: set[Cell]) -> None:
    """Open a width x width block around each path cell, clipped to the grid: a corridor that
    is `width` cells wide whichever way it runs."""
    low, high = -((width - 1) // 2), width // 2
    for x, y in path:
        for ox in range(low, high + 1):
            for oy in range(low, high + 1):
                cx, cy = x + ox, y + oy
                if 0 <= cx < side and 0 <= cy < side:
                    into.add((cx, cy))


@dataclass(frozen=True)
class Layout:
    """A carved grid: its side, traversable cells, start and node cells (by node index)."""

    side: int
    cells: frozenset[Cell]
    start: Cell
    positions: tuple[Cell, ...]
    corridor_widths: tuple[int, ...]


def carve_layout(rng: random.Random, node_count: int, preset: ExplorationPreset) -> Layout:
    """Place the start and the nodes on distinct cells, then carve corridors from obstacles.

    Nodes join in random order, each by a corridor to a random point already joined (the start
    or an earlier node), so the region is one connected tree of corridors (App. C.1).
    """
    # App. C.1: the ratio of task nodes to grid cells meets the density (the start is not a node).
    side = grid_side(node_count, preset.density)
    grid = [(x, y) for y in range(side) for x in range(side)]
    _shuffle(rng, grid)
    start, positions = grid[0], tuple(grid[1 : node_count + 1])
    cells: set[Cell] = {start}
    joined = [start]
    order = list(range(node_count))
    _shuffle(rng, order)
    low, high = preset.corridor_widths
    widths = []
    for node in order:
        origin = joined[_below(rng, len(joined))]
        width = low + _below(rng, high - low + 1)
        widths.append(width)
        _carve(_manhattan_path(rng, origin, positions[node]), width, side, cells)
        joined.append(positions[node])
    return Layout(side, frozenset(cells), start, positions, tuple(widths))


# ---- the whole world ----


def _resolve(table: Mapping[str, Any], field: str, value: Any) -> Any:
    if not isinstance(value, str) or value not in table:
        raise ConfigError(f"{field} must be one of {', '.join(table)}; got {value!r}")
    return table[value]


def _check_seed(seed: Any) -> int:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer; got {seed!r}")
    return seed


def generate_world(exploration: str, dag: str, seed: int) -> World:
    """The world of one procedural griddag instance, identical for the same arguments anywhere.

    One `random.Random` stream draws, in order, the DAG, the node names and the map. It is
    seeded with the string "griddag-v1/<dag>/<seed>" (str seeds hash with SHA-512, stable on
    every machine, unlike hash()): the same (dag, seed) yields the same task DAG and names
    under every exploration preset, while the DAG presets of one seed do not share draws.
    """
    explore_preset: ExplorationPreset = _resolve(EXPLORATION_PRESETS, "exploration", exploration)
    dag_preset: DagPreset = _resolve(DAG_PRESETS, "dag", dag)
    _check_seed(seed)
    rng = random.Random(f"griddag-v1/{dag}/{seed}")
    sampled = sample_dag(dag_preset, rng)
    names = draw_names(rng, len(sampled.depths))
    layout = carve_layout(rng, len(sampled.depths), explore_preset)
    nodes = {}
    for index, name in enumerate(names):
        # Names sort at random, so sorting within and across options reveals no structure.
        options = sorted(
            tuple(sorted(names[p] for p in option)) for option in sampled.options[index]
        )
        nodes[name] = TaskNode(name, layout.positions[index], tuple(options))
    meta = {
        "generator": "griddag-v1",
        "exploration": exploration,
        "dag": dag,
        "seed": seed,
        "density": explore_preset.density,
        "corridor_width_range": list(explore_preset.corridor_widths),
        "corridor_widths": list(layout.corridor_widths),
        "grid_side": layout.side,
        "aspect_ratio": ASPECT_RATIO,
        "budget_alpha": BUDGET_ALPHA,
        "parent_depth_bias": dag_preset.parent_depth_bias,
        "layer_sizes": list(sampled.layer_sizes),
        "depths": {name: sampled.depths[i] for i, name in enumerate(names)},
    }
    return World(
        cells=layout.cells,
        start=layout.start,
        nodes=dict(sorted(nodes.items())),
        goal=names[-1],
        budget=BUDGET_ALPHA * len(layout.cells),
        meta=meta,
    )
