"""The semantic split (paper App. E): hand-made pasta-cooking maps and their symbolic twins."""

from __future__ import annotations

import random
from importlib.resources import files
from typing import Any, Literal

import yaml

from forkingpaths.benchmarks.griddag.generator import draw_names
from forkingpaths.benchmarks.griddag.world import World
from forkingpaths.core.errors import ConfigError, InvalidFile

SEMANTIC_MAP_IDS: tuple[str, ...] = ("custom-201", "custom-202", "custom-203", "custom-204")
VARIANTS: tuple[str, ...] = ("semantic", "symbolic")
SCHEMA_VERSION = 1
GRID_SIDES = range(6, 10)
"""Hand-made maps are 6 to 9 cells wide and tall."""

_FLOOR, _OBSTACLE, _START = ".", "#", "S"
# Pieces the observation format uses as separators (docs/dev/griddag-observation-format.md),
# so a node name containing one could not be parsed back out of the text.
_FORBIDDEN_IN_NAMES = (" and ", ", or", ",", ".", "[", "]")


def load_semantic_world(map_id: str, variant: Literal["semantic", "symbolic"], seed: int) -> World:
    """The world of one semantic-split instance.

    The semantic variant names nodes as cooking steps and ignores `seed`; the symbolic variant
    has the same grid and DAG with names replaced by random 4-character tokens drawn from
    `random.Random(seed)` (assigned in sorted order of the semantic names), so each seed gives
    a different but stable naming.
    """
    if map_id not in SEMANTIC_MAP_IDS:
        raise ConfigError(f"map_id must be one of {', '.join(SEMANTIC_MAP_IDS)}; got {map_id!r}")
    if variant not in VARIANTS:
        raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer; got {seed!r}")
    source = f"griddag/data/semantic/{map_id}.yaml"
    resource = files("forkingpaths.benchmarks.griddag") / "data" / "semantic" / f"{map_id}.yaml"
    text = resource.read_text(encoding="utf-8")
    spec = parse_semantic_map(text, source=source)
    if spec["id"] != map_id:
        raise InvalidFile(f"{source}: id is {spec['id']!r}, expected {map_id!r}")
    names = sorted(spec["world"]["nodes"])
    if variant == "semantic":
        rename = {name: name for name in names}
    else:
        tokens = draw_names(random.Random(seed), len(names), taken=frozenset(names))
        rename = dict(zip(names, tokens, strict=True))
    data = _renamed(spec["world"], rename)
    world = World.from_json(data, source=source)
    meta = {
        "map_id": map_id,
        "variant": variant,
        "seed": seed if variant == "symbolic" else None,
        "title": spec["title"],
        "grid_size": spec["grid_size"],
        # Lets reports put a symbolic trajectory next to its semantic twin; never shown to agents.
        "semantic_names": {rename[name]: name for name in names},
    }
    return World(
        cells=world.cells,
        start=world.start,
        nodes=world.nodes,
        goal=world.goal,
        budget=world.budget,
        meta=meta,
    )


def _renamed(world: dict[str, Any], rename: dict[str, str]) -> dict[str, Any]:
    nodes = {
        rename[name]: {
            "pos": spec["pos"],
            "options": [[rename[p] for p in option] for option in spec["options"]],
        }
        for name, spec in sorted(world["nodes"].items(), key=lambda kv: rename[kv[0]])
    }
    return {**world, "nodes": nodes, "goal": rename[world["goal"]]}


def parse_semantic_map(text: str, *, source: str = "semantic map") -> dict[str, Any]:
    """Parse a map file into `{"id", "title", "grid_size", "world"}`, where `world` is the
    `World.from_json` form. Errors are InvalidFile naming the field and what is allowed."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidFile(f"{source}: not valid YAML ({exc})") from exc
    if not isinstance(raw, dict):
        raise InvalidFile(f"{source}: expected a mapping at the top level")
    for key in ("schema_version", "id", "title", "grid", "legend", "nodes", "goal"):
        if key not in raw:
            raise InvalidFile(f"{source}: missing field {key!r}")
    if raw["schema_version"] != SCHEMA_VERSION:
        raise InvalidFile(
            f"{source}: schema_version {raw['schema_version']!r} is not supported "
            f"(expected {SCHEMA_VERSION})"
        )
    legend = raw["legend"]
    if not isinstance(legend, dict) or not all(
        isinstance(k, str) and len(k) == 1 and k not in (_FLOOR, _OBSTACLE, _START) for k in legend
    ):
        raise InvalidFile(
            f"{source}: legend must map single characters other than "
            f"'{_FLOOR}', '{_OBSTACLE}', '{_START}' to node names"
        )
    cells, start, positions, size = _parse_grid(raw["grid"], legend, source)
    names = list(legend.values())
    if len(set(names)) != len(names):
        raise InvalidFile(f"{source}: legend names a node twice")
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise InvalidFile(f"{source}: legend: node name {name!r} must be non-empty text")
        bad = [piece for piece in _FORBIDDEN_IN_NAMES if piece in name]
        if bad:
            raise InvalidFile(
                f"{source}: node name {name!r} contains {bad[0]!r}; names may not contain "
                f"{', '.join(repr(p) for p in _FORBIDDEN_IN_NAMES)}"
            )
    nodes = raw["nodes"]
    if not isinstance(nodes, dict) or set(nodes) != set(names):
        got = sorted(nodes) if isinstance(nodes, dict) else nodes
        raise InvalidFile(
            f"{source}: nodes must list exactly the legend's names {sorted(names)}; got {got!r}"
        )
    world = {
        "cells": [list(c) for c in sorted(cells)],
        "start": list(start),
        "nodes": {
            name: {"pos": list(positions[letter]), "options": nodes[name]}
            for letter, name in legend.items()
        },
        "goal": raw["goal"],
    }
    # from_json checks options, cycles and the goal; the relevance check needs a valid World.
    parsed = World.from_json(world, source=source)
    _check_every_node_leads_to_goal(parsed, source)
    return {"id": raw["id"], "title": str(raw["title"]), "grid_size": list(size), "world": world}


def _parse_grid(
    grid: Any, legend: dict[str, str], source: str
) -> tuple[set[tuple[int, int]], tuple[int, int], dict[str, tuple[int, int]], tuple[int, int]]:
    if not isinstance(grid, str):
        raise InvalidFile(f"{source}: grid must be a block of text rows")
    rows = [row for row in grid.splitlines() if row.strip()]
    height, width = len(rows), len(rows[0]) if rows else 0
    if height not in GRID_SIDES or width not in GRID_SIDES:
        raise InvalidFile(
            f"{source}: grid is {width}x{height}; width and height must be "
            f"{GRID_SIDES.start} to {GRID_SIDES.stop - 1}"
        )
    cells: set[tuple[int, int]] = set()
    starts: list[tuple[int, int]] = []
    positions: dict[str, tuple[int, int]] = {}
    for r, row in enumerate(rows):
        if len(row) != width:
            raise InvalidFile(f"{source}: grid row {r + 1} has {len(row)} cells, expected {width}")
        y = height - 1 - r  # the top row is the largest y: up = y+1 (App. D)
        for x, char in enumerate(row):
            if char == _OBSTACLE:
                continue
            if char == _START:
                starts.append((x, y))
            elif char in legend:
                if char in positions:
                    raise InvalidFile(f"{source}: grid: legend letter {char!r} appears twice")
                positions[char] = (x, y)
            elif char != _FLOOR:
                raise InvalidFile(
                    f"{source}: grid row {r + 1} column {x + 1}: {char!r} is not "
                    f"'{_FLOOR}', '{_OBSTACLE}', '{_START}' or a legend letter"
                )
            cells.add((x, y))
    if len(starts) != 1:
        raise InvalidFile(f"{source}: grid must hold exactly one '{_START}', found {len(starts)}")
    missing = sorted(set(legend) - set(positions))
    if missing:
        raise InvalidFile(f"{source}: legend letters {missing} do not appear in the grid")
    return cells, starts[0], positions, (width, height)


def _check_every_node_leads_to_goal(world: World, source: str) -> None:
    """The goal must be the unique sink: every other node is one of its ancestors (§3)."""
    relevant: set[str] = set()
    stack = [world.goal]
    while stack:
        for parent in world.nodes[stack.pop()].parents:
            if parent not in relevant:
                relevant.add(parent)
                stack.append(parent)
    stray = sorted(set(world.nodes) - relevant - {world.goal})
    if stray:
        raise InvalidFile(f"{source}: nodes {stray} do not lead to the goal {world.goal!r}")
    reachable = world.distances_from(world.start)
    unreachable = sorted(world.cells - reachable.keys())
    if unreachable:
        raise InvalidFile(
            f"{source}: cells {[list(c) for c in unreachable]} cannot be reached from the start"
        )
