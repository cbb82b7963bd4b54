"""The procedural generator (paper App. C.1): invariants of every preset, determinism, errors."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from collections import Counter, deque

import pytest

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.generator import (
    DAG_PRESETS,
    EXPLORATION_PRESETS,
    NAME_ALPHABET,
    PRESETS,
    draw_names,
    generate_world,
    grid_side,
)
from forkingpaths.benchmarks.griddag.world import DIRECTIONS, World
from forkingpaths.core.errors import ConfigError

CASES = [
    (exploration, dag, seed)
    for exploration in ("low", "medium", "high")
    for dag in ("easy", "medium", "hard")
    for seed in (0, 1, 2)
]
NODE_COUNTS = {"easy": 4, "medium": 6, "hard": 8}


def _connected(cells: frozenset[tuple[int, int]], start: tuple[int, int]) -> bool:
    seen = {start}
    queue = deque([start])
    while queue:
        x, y = queue.popleft()
        for dx, dy in DIRECTIONS.values():
            nxt = (x + dx, y + dy)
            if nxt in cells and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen == cells


def _ancestors(world: World, name: str) -> set[str]:
    out: set[str] = set()
    stack = [name]
    while stack:
        for parent in world.nodes[stack.pop()].parents:
            if parent not in out:
                out.add(parent)
                stack.append(parent)
    return out


def _depths(world: World) -> dict[str, int]:
    """Longest path from a primitive node."""
    memo: dict[str, int] = {}

    def depth(name: str) -> int:
        if name not in memo:
            parents = world.nodes[name].parents
            memo[name] = 1 + max(depth(p) for p in parents) if parents else 0
        return memo[name]

    return {name: depth(name) for name in world.nodes}


@pytest.mark.parametrize(("exploration", "dag", "seed"), CASES)
def test_generated_world_invariants(exploration: str, dag: str, seed: int) -> None:
    world = generate_world(exploration, dag, seed)
    side = world.meta["grid_side"]
    assert all(0 <= x < side and 0 <= y < side for x, y in world.cells)
    assert _connected(world.cells, world.start)
    assert world.start in world.cells and world.node_at(world.start) is None
    assert all(node.pos in world.cells for node in world.nodes.values())
    assert len({node.pos for node in world.nodes.values()}) == len(world.nodes)
    assert world.budget == 3 * len(world.cells)

    assert len(world.nodes) == NODE_COUNTS[dag]
    assert all(len(n) == 4 and set(n) <= set(NAME_ALPHABET) for n in world.nodes)
    # The goal is the unique sink and every other node leads to it (the repair, App. C.1).
    sinks = [n for n in world.nodes if not world.children(n)]
    assert sinks == [world.goal]
    assert _ancestors(world, world.goal) == set(world.nodes) - {world.goal}
    assert len(world.nodes[world.goal].options) == 1

    depths = _depths(world)
    per_layer = Counter(depths.values())
    assert max(per_layer.values()) <= 3
    assert per_layer[0] >= 1
    assert per_layer[depths[world.goal]] == 1
    assert depths[world.goal] == max(depths.values())
    assert sorted(per_layer) == list(range(max(per_layer) + 1))  # no empty layer
    assert world.meta["depths"] == depths
    for node in world.nodes.values():
        options = [frozenset(o) for o in node.options]
        assert len(set(options)) == len(options)
        assert all(depths[p] < depths[node.name] for p in node.parents)
    assert world.meta["layer_sizes"] == [per_layer[d] for d in range(depths[world.goal])]


def _toward(world: World, here: tuple[int, int], dist: dict[tuple[int, int], int]) -> str:
    for direction in world.available_directions(here):
        dx, dy = DIRECTIONS[direction]
        if dist[(here[0] + dx, here[1] + dy)] < dist[here]:
            return direction
    raise AssertionError(f"no move from {here} gets closer")


@pytest.mark.parametrize(("exploration", "dag", "seed"), CASES)
def test_generated_world_is_solvable(exploration: str, dag: str, seed: int) -> None:
    """Visit nodes in topological order along shortest paths; the goal ends the episode."""
    world = generate_world(exploration, dag, seed)
    depths = _depths(world)
    order = sorted(world.nodes, key=lambda n: (depths[n], n))
    env = GridDagEnv(world)
    env.reset()
    step = None
    for name in order:
        target = world.nodes[name].pos
        dist = world.distances_from(target)
        while env.position != target:
            # Any neighbour one step closer to the target (BFS distances on the true map).
            step = env.step(_toward(world, env.position, dist))
        assert env.status(name) == "achieved"
    assert step is not None and step.terminated and step.reward == 1.0
    assert env.steps <= world.budget


def test_same_seed_same_world_and_json_round_trip() -> None:
    for exploration, dag, seed in CASES[::4]:
        a = generate_world(exploration, dag, seed)
        b = generate_world(exploration, dag, seed)
        assert a == b and a.to_json() == b.to_json() and a.meta == b.meta
        assert World.from_json(a.to_json()) == a
        assert World.from_json(json.loads(json.dumps(a.to_json()))) == a


def test_different_seeds_give_different_worlds() -> None:
    for exploration in EXPLORATION_PRESETS:
        for dag in DAG_PRESETS:
            worlds = [generate_world(exploration, dag, s).to_json() for s in range(5)]
            assert len({json.dumps(w, sort_keys=True) for w in worlds}) == 5


def test_dag_and_names_are_shared_across_exploration_presets() -> None:
    shapes = {
        e: {n: node.options for n, node in generate_world(e, "hard", 4).nodes.items()}
        for e in EXPLORATION_PRESETS
    }
    assert shapes["low"] == shapes["medium"] == shapes["high"]


def test_identical_in_a_fresh_interpreter_with_other_hash_seed() -> None:
    code = (
        "import json;from forkingpaths.benchmarks.griddag.generator import generate_world;"
        "print(json.dumps([generate_world(e, d, 2).to_json() for e in ('low', 'high') "
        "for d in ('easy', 'hard')], sort_keys=True))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    here = [generate_world(e, d, 2).to_json() for e in ("low", "high") for d in ("easy", "hard")]
    assert json.loads(out) == json.loads(json.dumps(here, sort_keys=True))


def test_meta_records_the_preset() -> None:
    world = generate_world("high", "medium", 3)
    assert world.meta["exploration"] == "high" and world.meta["dag"] == "medium"
    assert world.meta["seed"] == 3 and world.meta["density"] == 0.1
    assert world.meta["corridor_width_range"] == [2, 3]
    assert world.meta["corridor_widths"] == [3, 2, 2, 3, 2, 2]  # drawn from the 2-3 range
    # App. C.1: node count over grid cells meets the density (6 nodes / 64 cells <= 0.1).
    assert world.meta["grid_side"] == grid_side(6, 0.1) == 8


@pytest.mark.parametrize(
    ("points", "density", "side"),
    [(5, 0.4, 4), (9, 0.25, 6), (5, 0.1, 8), (9, 0.1, 10), (7, 0.25, 6), (16, 1.0, 4)],
)
def test_grid_side_is_the_smallest_square_within_density(
    points: int, density: float, side: int
) -> None:
    assert grid_side(points, density) == side


def test_low_exploration_has_width_one_corridors() -> None:
    for seed in range(3):
        assert set(generate_world("low", "hard", seed).meta["corridor_widths"]) == {1}


def test_presets_are_immutable_and_match_the_paper() -> None:
    assert set(PRESETS) == {"exploration", "dag"}
    assert {k: p.node_count for k, p in DAG_PRESETS.items()} == NODE_COUNTS
    assert dict(DAG_PRESETS["hard"].option_count_probs) == {1: 0.6, 2: 0.4}
    assert {k: p.density for k, p in EXPLORATION_PRESETS.items()} == {
        "low": 0.4,
        "medium": 0.25,
        "high": 0.1,
    }
    with pytest.raises(TypeError):
        DAG_PRESETS["easy"] = DAG_PRESETS["hard"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        DAG_PRESETS["easy"].node_count = 5  # type: ignore[misc]
    assert DAG_PRESETS["medium"].to_dict()["option_count_probs"] == {1: 0.8, 2: 0.2}


def test_draw_names_are_unique_and_avoid_taken() -> None:
    names = draw_names(random.Random(0), 50, taken=frozenset({"AAAA"}))
    assert len(set(names)) == 50 and "AAAA" not in names
    assert names[:5] == ["41PJ", "SO2K", "RV6S", "K1WJ", "6936"]  # seeded: pinned


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"exploration": "extreme", "dag": "easy", "seed": 0}, "exploration must be one of low"),
        ({"exploration": "low", "dag": "small", "seed": 0}, "dag must be one of easy"),
        ({"exploration": "low", "dag": "easy", "seed": -1}, "seed must be a non-negative"),
        ({"exploration": "low", "dag": "easy", "seed": "3"}, "seed must be a non-negative"),
        ({"exploration": "low", "dag": "easy", "seed": True}, "seed must be a non-negative"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        generate_world(**kwargs)  # type: ignore[arg-type]


def test_generator_output_is_pinned() -> None:
    """Published instances must not drift: a change here needs a new benchmark version."""
    assert generate_world("low", "easy", 0).to_json() == {
        "cells": [[0, 0], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3]],
        "start": [1, 1],
        "nodes": {
            "J2NM": {"pos": [0, 3], "options": [["TIDC"]]},
            "RXZK": {"pos": [0, 2], "options": [["TIDC"]]},
            "TIDC": {"pos": [1, 2], "options": []},
            "YZ39": {"pos": [0, 0], "options": [["J2NM", "RXZK", "TIDC"]]},
        },
        "goal": "YZ39",
        "budget": 21,
    }
    text = json.dumps(generate_world("high", "hard", 2).to_json(), sort_keys=True)
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "f6d9cd8dcd1da0b7f387ff4aef11b6aee40a3bbd42b9508e2db3507743add88a"
    )
