"""The static world of one griddag episode: traversable cells, start, task DAG, goal, budget."""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.core.errors import InvalidFile, shown

Cell = tuple[int, int]

# The paper's coordinate system (App. D): up = y+1, down = y-1, left = x-1, right = x+1.
DIRECTIONS: Mapping[str, Cell] = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}
DIRECTION_ORDER: tuple[str, ...] = ("up", "down", "left", "right")
BUDGET_ALPHA = 3
"""B = alpha * |traversable cells| (App. C.1, Eq. 7)."""


@dataclass(frozen=True)
class TaskNode:
    """A node of the task DAG: where it is and its alternative prerequisite sets.

    `options` is OR over sets, AND within a set; `()` means no prerequisites (a primitive node).
    """

    name: str
    pos: Cell
    options: tuple[tuple[str, ...], ...] = ()

    @property
    def parents(self) -> frozenset[str]:
        return frozenset(p for option in self.options for p in option)


@dataclass(frozen=True)
class World:
    """A grid map M (traversable cells), a start cell and a task DAG with a unique sink (goal)."""

    cells: frozenset[Cell]
    start: Cell
    nodes: Mapping[str, TaskNode]
    goal: str
    budget: int
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # Derived lookups, cached on the frozen instance.
        object.__setattr__(self, "_node_at", {n.pos: n.name for n in self.nodes.values()})
        children: dict[str, set[str]] = {name: set() for name in self.nodes}
        for node in self.nodes.values():
            for parent in node.parents:
                children.setdefault(parent, set()).add(node.name)
        object.__setattr__(self, "_children", {k: tuple(sorted(v)) for k, v in children.items()})

    def node_at(self, cell: Cell) -> str | None:
        return self._node_at.get(cell)  # type: ignore[attr-defined]

    def children(self, name: str) -> tuple[str, ...]:
        return self._children.get(name, ())  # type: ignore[attr-defined]

    def neighbours(self, cell: Cell) -> list[Cell]:
        """adj(c): traversable 4-neighbours, in DIRECTION_ORDER."""
        x, y = cell
        out = []
        for d in DIRECTION_ORDER:
            dx, dy = DIRECTIONS[d]
            nxt = (x + dx, y + dy)
            if nxt in self.cells:
                out.append(nxt)
        return out

    def available_directions(self, cell: Cell) -> list[str]:
        x, y = cell
        return [
            d for d in DIRECTION_ORDER if (x + DIRECTIONS[d][0], y + DIRECTIONS[d][1]) in self.cells
        ]

    def distances_from(self, source: Cell) -> dict[Cell, int]:
        """BFS shortest distances on the true traversable map."""
        dist = {source: 0}
        queue = deque([source])
        while queue:
            cur = queue.popleft()
            for nxt in self.neighbours(cur):
                if nxt not in dist:
                    dist[nxt] = dist[cur] + 1
                    queue.append(nxt)
        return dist

    # ---- the `griddag generate` / `griddag score` JSON contract ----

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": [list(c) for c in sorted(self.cells)],
            "start": list(self.start),
            "nodes": {
                name: {"pos": list(n.pos), "options": [list(o) for o in n.options]}
                for name, n in sorted(self.nodes.items())
            },
            "goal": self.goal,
            "budget": self.budget,
        }

    @classmethod
    def from_json(cls, data: Any, *, source: str = "map") -> World:
        """Parse and validate; errors name the field and what is wrong."""
        if not isinstance(data, dict):
            raise InvalidFile(f"{source}: expected a JSON object, got {type(data).__name__}")
        for key in ("cells", "start", "nodes", "goal"):
            if key not in data:
                raise InvalidFile(f"{source}: missing field {key!r}")
        cells = frozenset(
            _cell(c, f"{source}: cells[{i}]")
            for i, c in enumerate(_list(data["cells"], f"{source}: cells"))
        )
        if not cells:
            raise InvalidFile(f"{source}: cells is empty")
        start = _cell(data["start"], f"{source}: start")
        if start not in cells:
            raise InvalidFile(f"{source}: start {list(start)} is not one of the cells")
        if not isinstance(data["nodes"], dict) or not data["nodes"]:
            raise InvalidFile(
                f"{source}: nodes must be a non-empty object of NAME -> {{pos, options}}"
            )
        nodes: dict[str, TaskNode] = {}
        for name, spec in data["nodes"].items():
            where = f"{source}: nodes.{name}"
            if not isinstance(spec, dict) or "pos" not in spec:
                raise InvalidFile(f"{where}: expected an object with 'pos' and 'options'")
            pos = _cell(spec["pos"], f"{where}.pos")
            if pos not in cells:
                raise InvalidFile(f"{where}.pos {list(pos)} is not one of the cells")
            options = []
            for j, option in enumerate(_list(spec.get("options", []), f"{where}.options")):
                option = _list(option, f"{where}.options[{j}]")
                if not option or not all(isinstance(p, str) for p in option):
                    raise InvalidFile(
                        f"{where}.options[{j}]: expected a non-empty list of node names"
                    )
                options.append(tuple(option))
            nodes[name] = TaskNode(name, pos, tuple(options))
        positions = [n.pos for n in nodes.values()]
        if len(set(positions)) != len(positions):
            raise InvalidFile(f"{source}: two nodes share a cell (l must be injective)")
        for node in nodes.values():
            for parent in node.parents:
                if parent not in nodes:
                    raise InvalidFile(
                        f"{source}: nodes.{node.name}.options names unknown node {parent!r}"
                    )
        goal = data["goal"]
        if goal not in nodes:
            raise InvalidFile(
                f"{source}: goal {goal!r} is not one of the nodes ({', '.join(sorted(nodes))})"
            )
        if _has_cycle(nodes):
            raise InvalidFile(
                f"{source}: nodes' options form a cycle; the task graph must be a DAG"
            )
        budget = data.get("budget", BUDGET_ALPHA * len(cells))
        if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
            raise InvalidFile(f"{source}: budget must be a positive integer, got {budget!r}")
        return cls(cells=cells, start=start, nodes=nodes, goal=goal, budget=budget)


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidFile(f"{where}: expected a list, got {shown(value)}")
    return value


def _cell(value: Any, where: str) -> Cell:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise InvalidFile(f"{where}: expected [x, y] with two integers, got {shown(value)}")
    return (value[0], value[1])


def _has_cycle(nodes: Mapping[str, TaskNode]) -> bool:
    state: dict[str, int] = {}

    def visit(name: str) -> bool:
        if state.get(name) == 1:
            return True
        if state.get(name) == 2:
            return False
        state[name] = 1
        if any(visit(p) for p in nodes[name].parents):
            return True
        state[name] = 2
        return False

    return any(visit(n) for n in nodes)


_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_WORD = re.compile(r"\b(up|down|left|right)\b", re.IGNORECASE)


def parse_direction(text: str) -> str | None:
    """Extract a move from a model's reply: the last JSON object with an "action" key, even with
    prose or code fences around it, else a reply that is just a direction word. None if neither."""
    for match in reversed(_JSON_OBJECT.findall(text)):
        try:
            obj = json.loads(match)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("action"), str):
            word = obj["action"].strip().lower()
            return word if word in DIRECTIONS else None
    stripped = text.strip().strip("`\"'.").lower()
    return stripped if stripped in DIRECTIONS else None


def format_prerequisites(options: Iterable[Iterable[str]]) -> str:
    """[[A, B], [C]] -> 'A and B, or C' (AND within a set, OR across sets)."""
    return ", or ".join(" and ".join(option) for option in options)
