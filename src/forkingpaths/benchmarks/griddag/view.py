"""The griddag world view: fog of war, the path by Table 1 case, the stale score, the DAG."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.metric import (
    EXPLOITATION_CASES,
    EXPLORATION_CASES,
    ErrorMetric,
    StepScore,
)
from forkingpaths.benchmarks.griddag.plots import lane_positions
from forkingpaths.benchmarks.griddag.world import DIRECTIONS, Cell, World, format_prerequisites
from forkingpaths.core.errors import ForkingPathsError
from forkingpaths.core.records import EpisodeRecord

if TYPE_CHECKING:
    # Annotation only: the benchmark imports this module for its `world_view`.
    from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark

KIND = "griddag"
ACTION_CHARS = 200
"""A recorded action is cut to this many characters: the timeline shows it whole, the map only
needs it for a refused move's tooltip, and a long reply would bloat every view."""
NEVER = -1
"""Position index of something that never happened in the episode (a cell never observed)."""


def trajectory(record: EpisodeRecord, world: World) -> list[Cell]:
    """p(0..T): the recorded positions, or, where a record lacks them (older or truncated info),
    the positions of a replay of its actions (the env is deterministic given the world)."""
    recorded = [record.initial_info.get("position")] + [
        s.info.get("position") for s in record.steps
    ]
    if all(_is_cell(c) for c in recorded):
        return [(c[0], c[1]) for c in recorded]
    env = GridDagEnv(world)
    env.reset()
    positions = [env.position]
    for step in record.steps:
        env.step(step.action)
        positions.append(env.position)
    return positions


def world_view(bench: GridDagBenchmark, record: EpisodeRecord) -> dict[str, Any] | None:
    """`GridDagBenchmark.world_view`: None for a record of an instance this version lacks or
    one its world cannot replay (a position off the map)."""
    try:
        world = bench.world(bench.instance(record.instance_id))
        return view_of(record, world)
    except ForkingPathsError:
        return None


def view_of(record: EpisodeRecord, world: World) -> dict[str, Any]:
    """The JSON `web/view.js` draws, built from the record and its instance's world.

    Things that appear during the episode carry the position index at which they appear
    (`observed_at`, `known_at`, `discovered_at`...; -1 for never), so one static map serves
    every position; `frames[p]` holds only what the metric says about the state at p.
    """
    positions = trajectory(record, world)
    metric = ErrorMetric(world)
    metric.start(positions[0])
    frames: list[dict[str, Any]] = []
    moves: list[StepScore | None] = []
    known_at: dict[Cell, int] = {}
    # The metric has accepted every move so far (a corrupt record's jump ends that).
    following = True
    errors = {"exploration_errors": 0, "exploitation_errors": 0}
    for p, cell in enumerate(positions):
        score: StepScore | None = None
        # Moves after the goal are not scored (§5), nor anything after a move the metric refuses.
        if p > 0 and following and not metric.done:
            try:
                score = metric.update(cell)
            except ForkingPathsError:
                following = False
        if p > 0:
            moves.append(score)
        if score is not None and score.err:
            if score.case in EXPLORATION_CASES:
                errors["exploration_errors"] += 1
            if score.case in EXPLOITATION_CASES:
                errors["exploitation_errors"] += 1
        if following:
            for c in metric.unobserved:
                known_at.setdefault(c, p)
        frames.append(_frame(metric, cell, following, score, frames, errors))
    return {
        "kind": KIND,
        "instance_id": record.instance_id,
        "status": record.status,
        "error": record.error,
        "bounds": _bounds(world),
        **_grid(world, positions, known_at),
        "start": list(world.start),
        "goal": world.goal,
        "budget": world.budget,
        "nodes": _nodes(record, world, positions),
        "edges": _edges(world),
        "moves": [_move(record, t, m) for t, m in enumerate(moves)],
        "frames": frames,
        "lanes": [[round(x, 3), round(y, 3)] for x, y in lane_positions(positions)],
        "score": _score(metric),
        "outcome": dict(record.outcome),
    }


def _is_cell(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def _frame(
    metric: ErrorMetric,
    cell: Cell,
    following: bool,
    score: StepScore | None,
    frames: Sequence[dict[str, Any]],
    errors: dict[str, int],
) -> dict[str, Any]:
    """The state at one position: where the agent is, the stale score S_t and the errors so far
    and, while the metric follows the record, Table 1's case with the target set T(t) and the
    pending tasks P(t) (the move from this position is judged against them)."""
    # Unscored (after the goal): S stays where the last scored move left it.
    stale = score.stale if score is not None else frames[-1]["stale"] if frames else 0
    frame: dict[str, Any] = {"pos": list(cell), "stale": stale, **errors}
    if following and not metric.done:
        frame["case"] = metric.case
        frame["targets"] = [list(c) for c in sorted(metric.targets)]
        frame["pending"] = sorted(metric.pending)
    else:
        # After the goal no case applies: the episode is over.
        frame["case"] = None
        frame["targets"] = []
        frame["pending"] = []
    return frame


def _bounds(world: World) -> dict[str, int]:
    """The grid's extent: the generator's square or the hand-made map's size, else the cells'."""
    xs = [c[0] for c in world.cells]
    ys = [c[1] for c in world.cells]
    x1, y1 = max(xs), max(ys)
    side = world.meta.get("grid_side")
    size = world.meta.get("grid_size")
    if isinstance(side, int):
        x1, y1 = max(x1, side - 1), max(y1, side - 1)
    elif isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) for v in size):
        x1, y1 = max(x1, size[0] - 1), max(y1, size[1] - 1)
    return {"x0": min(0, min(xs)), "y0": min(0, min(ys)), "x1": x1, "y1": y1}


def _grid(world: World, positions: Sequence[Cell], known_at: dict[Cell, int]) -> dict[str, Any]:
    """Cells as [x, y, observed_at, known_at] (Eq. 2: observed once visited, unobserved once a
    neighbour is), and obstacles as [x, y, known_at]: the agent learns a wall is there when the
    directions offered on a neighbouring cell leave it out."""
    observed_at: dict[Cell, int] = {}
    for p, cell in enumerate(positions):
        observed_at.setdefault(cell, p)
    bounds = _bounds(world)
    cells = []
    for c in sorted(world.cells):
        seen = observed_at.get(c, NEVER)
        # A cell is unobserved before it is visited, except the start (observed at reset).
        known = known_at.get(c, seen)
        cells.append([c[0], c[1], seen, known])
    walls = []
    for x in range(bounds["x0"], bounds["x1"] + 1):
        for y in range(bounds["y0"], bounds["y1"] + 1):
            if (x, y) in world.cells:
                continue
            around = [
                observed_at[(x + dx, y + dy)]
                for dx, dy in DIRECTIONS.values()
                if (x + dx, y + dy) in observed_at
            ]
            walls.append([x, y, min(around) if around else NEVER])
    return {"cells": cells, "walls": walls}


def _layers(world: World) -> dict[str, int]:
    """Depth of each node: the longest chain of prerequisites below it (primitive nodes at 0)."""
    depth: dict[str, int] = {}

    def visit(name: str) -> int:
        if name not in depth:
            parents = world.nodes[name].parents
            depth[name] = 1 + max(visit(p) for p in parents) if parents else 0
        return depth[name]

    for name in world.nodes:
        visit(name)
    return depth


def _ordered_layers(world: World, layers: dict[str, int]) -> dict[int, list[str]]:
    """Nodes per layer, ordered to keep edges short: each node moves toward the mean place of
    its neighbours in the layer above (sweeping down) or below (sweeping up), the barycentre
    heuristic of layered drawing."""
    by_layer: dict[int, list[str]] = {}
    for name in sorted(world.nodes, key=lambda n: (layers[n], n)):
        by_layer.setdefault(layers[name], []).append(name)
    depth = max(by_layer)
    neighbours = {
        "down": {n: sorted(world.nodes[n].parents) for n in world.nodes},
        "up": {n: list(world.children(n)) for n in world.nodes},
    }

    def places(names: list[str]) -> dict[str, float]:
        # Where the viewer draws a node across its row, as a fraction of the width.
        return {name: (i + 0.5) / len(names) for i, name in enumerate(names)}

    for direction, order in (("down", range(1, depth + 1)), ("up", range(depth - 1, -1, -1))) * 2:
        x = {name: v for names in by_layer.values() for name, v in places(names).items()}
        links = neighbours[direction]
        for layer in order:
            centre = {}
            for name in by_layer[layer]:
                near = [x[n] for n in links[name]]
                centre[name] = sum(near) / len(near) if near else x[name]
            by_layer[layer].sort(key=lambda n: (centre[n], x[n]))
            x.update(places(by_layer[layer]))
    return by_layer


def _nodes(record: EpisodeRecord, world: World, positions: Sequence[Cell]) -> list[dict[str, Any]]:
    """Every node of the DAG with its layered layout and when the episode revealed it.

    `discovered_at` / `achieved_at` come from the env's info (`discovered`, `achieved`) where
    the record has it; `named_at` is when a discovered neighbour's text first named it (its
    prerequisites and its children are told on discovery, App. C.3).
    """
    discovered_at: dict[str, int] = {}
    achieved_at: dict[str, int] = {}
    node = record.initial_info.get("node")
    if isinstance(node, dict) and isinstance(node.get("name"), str):
        # A node on the start cell (hand-made maps) is seen at reset.
        discovered_at[node["name"]] = 0
        if node.get("status") == "achieved":
            achieved_at[node["name"]] = 0
    has_info = all("discovered" in s.info and "achieved" in s.info for s in record.steps)
    for p, step in enumerate(record.steps, start=1):
        if has_info:
            found = [n for n in step.info["discovered"] if isinstance(n, str)]
            done = [n for n in step.info["achieved"] if isinstance(n, str)]
        else:
            # Old records: a node is discovered when its cell is first entered; achievement
            # is the env's rule, replayed below.
            here = world.node_at(positions[p])
            found = [here] if here is not None else []
            done = []
        for name in found:
            discovered_at.setdefault(name, p)
        for name in done:
            achieved_at.setdefault(name, p)
    if not has_info:
        achieved_at.update(_replayed_achievements(world, positions))
    layers = _layers(world)
    by_layer = _ordered_layers(world, layers)
    slot = {name: i for names in by_layer.values() for i, name in enumerate(names)}
    out = []
    for name, task in world.nodes.items():
        neighbours = set(task.parents) | set(world.children(name))
        named = [discovered_at[n] for n in neighbours if n in discovered_at]
        if name in discovered_at:
            named.append(discovered_at[name])
        out.append(
            {
                "name": name,
                "pos": list(task.pos),
                "options": [list(o) for o in task.options],
                "requires": format_prerequisites(task.options),
                "children": list(world.children(name)),
                "is_goal": name == world.goal,
                "layer": layers[name],
                "slot": slot[name],
                "layer_size": len(by_layer[layers[name]]),
                "discovered_at": discovered_at.get(name, NEVER),
                "achieved_at": achieved_at.get(name, NEVER),
                "named_at": min(named) if named else NEVER,
            }
        )
    return out


def _replayed_achievements(world: World, positions: Sequence[Cell]) -> dict[str, int]:
    metric = ErrorMetric(world)
    metric.start(positions[0])
    achieved = dict.fromkeys(metric.achieved, 0)
    for p, cell in enumerate(positions[1:], start=1):
        if metric.done:
            break
        try:
            metric.update(cell)
        except ForkingPathsError:
            break
        for name in metric.achieved:
            achieved.setdefault(name, p)
    return achieved


def _edges(world: World) -> list[list[Any]]:
    """[parent, child, option index]: the option index tells AND (same index) from OR."""
    return [
        [parent, name, i]
        for name, task in world.nodes.items()
        for i, option in enumerate(task.options)
        for parent in option
    ]


def _move(record: EpisodeRecord, t: int, score: StepScore | None) -> dict[str, Any]:
    step = record.steps[t]
    move: dict[str, Any] = {
        "action": step.action[:ACTION_CHARS],
        "valid": step.valid,
        "error_reason": step.info.get("error_reason"),
    }
    if score is None:
        move["case"] = None
        return move
    move.update(
        case=score.case,
        err=score.err,
        gain=score.gain,
        progress=score.progress,
        stale=score.stale,
        targets=score.targets,
    )
    return move


def _score(metric: ErrorMetric) -> dict[str, Any]:
    result = metric.result()
    return {
        "success": result.success,
        "exploration_error": result.exploration_error,
        "exploitation_error": result.exploitation_error,
        "case_counts": {str(k): v for k, v in result.case_counts.items()},
        "case_errors": {str(k): v for k, v in result.case_errors.items()},
    }
