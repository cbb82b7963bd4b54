"""The semantic split (paper App. E): the four pasta maps and their symbolic twins."""

from __future__ import annotations

import pytest

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.semantic import (
    SEMANTIC_MAP_IDS,
    load_semantic_world,
    parse_semantic_map,
)
from forkingpaths.benchmarks.griddag.world import DIRECTIONS, World
from forkingpaths.core.errors import ConfigError, InvalidFile

VALID_MAP = """
schema_version: 1
id: custom-test
title: Buttered noodles
grid: |
  S.....
  .####.
  .#..#.
  ....#.
  .####.
  N....B
legend:
  N: Noodles
  B: Buttered Noodles
nodes:
  Noodles: []
  Buttered Noodles: [[Noodles]]
goal: Buttered Noodles
"""


def _solve(world: World) -> int:
    """Walk to every node in depth order along shortest paths; return the steps to success."""
    depth: dict[str, int] = {}

    def node_depth(name: str) -> int:
        if name not in depth:
            parents = world.nodes[name].parents
            depth[name] = 1 + max(map(node_depth, parents)) if parents else 0
        return depth[name]

    env = GridDagEnv(world)
    env.reset()
    for name in sorted(world.nodes, key=lambda n: (node_depth(n), n)):
        target = world.nodes[name].pos
        dist = world.distances_from(target)
        while env.position != target:
            here = env.position
            # Any neighbour one step closer to the target (BFS distances on the true map).
            move = next(
                d
                for d in world.available_directions(here)
                if dist[(here[0] + DIRECTIONS[d][0], here[1] + DIRECTIONS[d][1])] < dist[here]
            )
            step = env.step(move)
        assert env.status(name) == "achieved"
    assert step.terminated and step.reward == 1.0
    return env.steps


def test_there_are_four_pasta_maps() -> None:
    assert SEMANTIC_MAP_IDS == ("custom-201", "custom-202", "custom-203", "custom-204")


@pytest.mark.parametrize(
    ("map_id", "side", "nodes", "cells", "solved_in"),
    [
        ("custom-201", 8, 7, 43, 53),
        ("custom-202", 9, 8, 57, 75),
        ("custom-203", 6, 6, 27, 37),
        ("custom-204", 9, 8, 57, 64),
    ],
)
def test_semantic_map_is_well_formed_and_solvable(
    map_id: str, side: int, nodes: int, cells: int, solved_in: int
) -> None:
    world = load_semantic_world(map_id, "semantic", 0)
    assert world.meta["grid_size"] == [side, side]
    assert all(0 <= x < side and 0 <= y < side for x, y in world.cells)
    assert (len(world.nodes), len(world.cells)) == (nodes, cells)
    assert world.node_at(world.start) is None
    assert [n for n in world.nodes if not world.children(n)] == [world.goal]
    assert set(world.distances_from(world.start)) == world.cells
    assert world.budget == 3 * cells
    # Nodes in depth order along shortest paths: well within the hidden budget.
    assert _solve(world) == solved_in


@pytest.mark.parametrize("map_id", SEMANTIC_MAP_IDS)
def test_symbolic_twin_has_same_grid_and_dag(map_id: str) -> None:
    semantic = load_semantic_world(map_id, "semantic", 0)
    for seed in range(5):
        symbolic = load_semantic_world(map_id, "symbolic", seed)
        assert symbolic.cells == semantic.cells and symbolic.start == semantic.start
        assert symbolic.budget == semantic.budget
        to_semantic = symbolic.meta["semantic_names"]
        assert sorted(to_semantic.values()) == sorted(semantic.nodes)
        assert to_semantic[symbolic.goal] == semantic.goal
        for name, node in symbolic.nodes.items():
            assert len(name) == 4 and name.isalnum() and name.upper() == name
            twin = semantic.nodes[to_semantic[name]]
            assert node.pos == twin.pos
            assert [sorted(to_semantic[p] for p in o) for o in node.options] == [
                sorted(o) for o in twin.options
            ]


@pytest.mark.parametrize("map_id", SEMANTIC_MAP_IDS)
def test_symbolic_names_depend_on_seed_only(map_id: str) -> None:
    names = [frozenset(load_semantic_world(map_id, "symbolic", s).nodes) for s in range(5)]
    assert len(set(names)) == 5
    assert names[3] == frozenset(load_semantic_world(map_id, "symbolic", 3).nodes)
    assert load_semantic_world(map_id, "semantic", 0) == load_semantic_world(map_id, "semantic", 4)


def test_an_or_option_exists_and_the_names_read_as_cooking() -> None:
    world = load_semantic_world("custom-202", "semantic", 0)
    assert world.nodes["Cheese Cream"].options == (
        ("Egg Yolks", "Pecorino"),
        ("Egg Yolks", "Parmesan"),
    )
    assert world.goal == "Rigatoni Carbonara"


def test_semantic_observation_uses_dish_names() -> None:
    world = load_semantic_world("custom-203", "semantic", 0)
    env = GridDagEnv(world)
    assert env.reset().text == (
        "OBSERVATION: You are at [1, 3]. You found nothing here. "
        "Available directions: up, left, right. You spent 0 steps."
    )
    step = env.step("up")
    step = env.step("left")
    assert step.observation.text == (
        "OBSERVATION: You are at [0, 4]. You found nothing here. "
        "Available directions: up, down, right. You spent 2 steps."
    )
    step = env.step("up")
    assert step.observation.text == (
        "OBSERVATION: You are at [0, 5]. You discovered state Pine Nuts. Pine Nuts has no "
        "prerequisites and is immediately activated! Pine Nuts has ancestors: Pesto. "
        "Available directions: down, right. You spent 3 steps."
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"map_id": "custom-200", "variant": "semantic", "seed": 0}, "map_id must be one of"),
        ({"map_id": "custom-201", "variant": "mixed", "seed": 0}, "variant must be one of"),
        ({"map_id": "custom-201", "variant": "symbolic", "seed": -2}, "seed must be"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_semantic_world(**kwargs)  # type: ignore[arg-type]


def test_parse_valid_map() -> None:
    spec = parse_semantic_map(VALID_MAP, source="test.yaml")
    world = World.from_json(spec["world"])
    assert world.start == (0, 5)
    assert world.nodes["Noodles"].pos == (0, 0)
    assert world.nodes["Buttered Noodles"].pos == (5, 0)
    assert (1, 4) not in world.cells and (2, 3) in world.cells and (1, 2) in world.cells


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (VALID_MAP.replace("schema_version: 1", "schema_version: 9"), "schema_version 9"),
        (VALID_MAP.replace("goal: Buttered Noodles", ""), "missing field 'goal'"),
        (VALID_MAP.replace("  .#..#.\n", "  .#..#\n"), "grid row 3 has 5 cells"),
        (VALID_MAP.replace("  S.....", "  S...?."), "'\\?' is not"),
        (VALID_MAP.replace("  S.....", "  ......"), "exactly one 'S'"),
        (VALID_MAP.replace("  N....B", "  N....."), "legend letters \\['B'\\]"),
        (VALID_MAP.replace("[[Noodles]]", "[[Butter]]"), "unknown node 'Butter'"),
        (VALID_MAP.replace("Buttered Noodles", "Noodles, buttered"), "contains ','"),
        (VALID_MAP.replace("  Noodles: []", "  Noodles: [[Buttered Noodles]]"), "cycle"),
        (VALID_MAP.replace("  .####.\n  N", "  ######\n  N"), "cannot be reached"),
        (VALID_MAP.replace("id: custom-test", "id: [unclosed"), "not valid YAML"),
        ("just text", "expected a mapping"),
    ],
)
def test_malformed_map_is_invalid_file(broken: str, message: str) -> None:
    with pytest.raises(InvalidFile, match=message):
        parse_semantic_map(broken, source="test.yaml")


def test_stray_node_not_leading_to_goal_is_refused() -> None:
    broken = VALID_MAP.replace("  N: Noodles\n", "  N: Noodles\n  X: Extra Salt\n")
    broken = broken.replace("  .#..#.\n", "  .#X.#.\n", 1)
    broken = broken.replace("  Noodles: []\n", "  Noodles: []\n  Extra Salt: []\n")
    with pytest.raises(InvalidFile, match="do not lead to the goal"):
        parse_semantic_map(broken, source="test.yaml")
