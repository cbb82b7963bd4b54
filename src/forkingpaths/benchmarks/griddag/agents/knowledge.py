"""What a griddag agent can know: observation facts, the known map, and the frontier move."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from forkingpaths.benchmarks.griddag.world import DIRECTION_ORDER, DIRECTIONS, Cell
from forkingpaths.core.errors import ForkingPathsError

Options = tuple[tuple[str, ...], ...]


class ObservationFormatError(ForkingPathsError, ValueError):
    """A text is not a griddag observation (no `You are at [x, y]` / `You spent N steps`)."""


@dataclass(frozen=True)
class ObservationFacts:
    """Everything one observation text states, in the terms of docs/dev/griddag-observation-format.

    Node fields are empty when the observation mentions no node (empty cell, refused action).
    `options` is None when the sentence shown does not restate the prerequisites (revisits).
    """

    position: Cell
    available: tuple[str, ...]
    steps: int
    node: str | None = None
    first_visit: bool = False
    options: Options | None = None
    children: tuple[str, ...] = ()
    is_goal: bool = False
    activated: bool = False
    """The node is activated, now or already."""
    activated_now: bool = False
    """This observation's visit activated the node."""
    task_complete: bool = False
    nothing_here: bool = False
    """The cell was stated to hold no node."""
    invalid: bool = False
    """The previous action was refused as unparseable."""
    blocked: bool = False
    """The previous action was a move into an obstacle or off the map."""
    blocked_direction: str | None = None


# Names never contain periods, commas or brackets (observation contract), so `[^.,\[\]]` delimits
# them; the sentence that follows a name anchors where it ends.
_NAME = r"[^.,\[\]]+?"
_POSITION = re.compile(r"You are at \[(-?\d+),\s*(-?\d+)\]")
_STEPS = re.compile(r"You spent (\d+) steps?\.")
_AVAILABLE = re.compile(r"(?:Available directions:|Your available action is)([^.]*)\.")
_DIRECTION_WORD = re.compile(r"\b(up|down|left|right)\b")
_INVALID = re.compile(r"Invalid action:")
_BLOCKED = re.compile(r"You cannot move (up|down|left|right) from \[")
_NOTHING = re.compile(r"You found nothing here\.")
_DISCOVERED = re.compile(rf"You discovered state ({_NAME})\. ")
_ALREADY = re.compile(rf"State ({_NAME}) is already activated\.")
_NOW_SATISFIED = re.compile(
    rf"State ({_NAME})'s prerequisites are satisfied, so \1 is now activated!"
)
_STILL_BLOCKED = re.compile(rf"State ({_NAME}) is not activated yet\. \1 requires ([^.]+)\.")
_GOAL_DONE = re.compile(rf"You activated the goal state ({_NAME})\. Task complete!")


def _first_visit_patterns(name: str) -> dict[str, re.Pattern[str]]:
    n = re.escape(name)
    return {
        "primitive": re.compile(rf"{n} has no prerequisites and is immediately activated!"),
        "satisfied": re.compile(
            rf"{n} requires ([^.]+)\. Its prerequisites are satisfied, so {n} is now activated!"
        ),
        "waiting": re.compile(rf"{n} requires ([^.]+)\. {n} is not activated yet\."),
        "goal": re.compile(rf"{n} is the goal state\."),
        "children": re.compile(rf"{n} has ancestors: ([^.]+)\."),
    }


def parse_prerequisites(text: str) -> Options:
    """'A and B, or C' -> (('A', 'B'), ('C',)): the inverse of world.format_prerequisites."""
    return tuple(
        tuple(name.strip() for name in option.split(" and ")) for option in text.split(", or ")
    )


def _observation_span(text: str) -> str:
    """The observation proper: from `OBSERVATION:` (when present) to `You spent N steps.`, so a
    harness summary appended after it cannot be mistaken for observation sentences."""
    start = text.find("OBSERVATION:")
    body = text[start:] if start >= 0 else text
    steps = _STEPS.search(body)
    return body[: steps.end()] if steps else body


def parse_observation(text: str) -> ObservationFacts:
    """Parse one observation text (prefix optional, trailing harness summary ignored)."""
    body = _observation_span(text)
    position = _POSITION.search(body)
    steps = _STEPS.search(body)
    if position is None or steps is None:
        raise ObservationFormatError(
            f"not a griddag observation (expected 'You are at [x, y]' and 'You spent N steps.'): "
            f"{text[:80]!r}"
        )
    available_match = _AVAILABLE.search(body, position.end())
    available = (
        tuple(d for d in DIRECTION_ORDER if d in _DIRECTION_WORD.findall(available_match.group(1)))
        if available_match
        else ()
    )
    blocked = _BLOCKED.search(body)
    facts: dict[str, Any] = {
        "position": (int(position.group(1)), int(position.group(2))),
        "available": available,
        "steps": int(steps.group(1)),
        "invalid": _INVALID.search(body) is not None,
        "blocked": blocked is not None,
        "blocked_direction": blocked.group(1) if blocked else None,
        "nothing_here": _NOTHING.search(body) is not None,
    }
    facts.update(_node_facts(body))
    done = _GOAL_DONE.search(body)
    if done:
        facts.update(task_complete=True, is_goal=True, activated=True)
    return ObservationFacts(**facts)


def _node_facts(body: str) -> dict[str, Any]:
    if match := _DISCOVERED.search(body):
        name = match.group(1)
        patterns = _first_visit_patterns(name)
        rest = body[match.end() :]
        facts: dict[str, Any] = {"node": name, "first_visit": True}
        if patterns["primitive"].search(rest):
            facts.update(options=(), activated=True, activated_now=True)
        elif sat := patterns["satisfied"].search(rest):
            facts.update(
                options=parse_prerequisites(sat.group(1)), activated=True, activated_now=True
            )
        elif wait := patterns["waiting"].search(rest):
            facts.update(options=parse_prerequisites(wait.group(1)))
        facts["is_goal"] = patterns["goal"].search(rest) is not None
        if children := patterns["children"].search(rest):
            facts["children"] = tuple(c.strip() for c in children.group(1).split(","))
        return facts
    if match := _ALREADY.search(body):
        return {"node": match.group(1), "activated": True}
    if match := _NOW_SATISFIED.search(body):
        return {"node": match.group(1), "activated": True, "activated_now": True}
    if match := _STILL_BLOCKED.search(body):
        return {"node": match.group(1), "options": parse_prerequisites(match.group(2))}
    return {}


@dataclass
class KnownState:
    """A discovered task node: where it is and what the observations said about it."""

    name: str
    pos: Cell
    options: Options | None = None
    """None until an observation states the prerequisites."""
    children: tuple[str, ...] = ()


def step_from(cell: Cell, direction: str) -> Cell:
    dx, dy = DIRECTIONS[direction]
    return (cell[0] + dx, cell[1] + dy)


def prerequisites_met(options: Options | None, activated: Iterable[str]) -> bool:
    """OR over options, AND within one; `()` (no prerequisites) is met, unknown (None) is not."""
    if options is None:
        return False
    done = set(activated)
    return not options or any(all(p in done for p in option) for option in options)


@dataclass
class KnownMap:
    """What the observations of one episode have revealed, accumulated step by step.

    Traversable cells are the visited ones plus neighbours an observation listed as available
    (the frontier); obstacles are neighbours of visited cells in directions not available.
    """

    position: Cell | None = None
    steps: int = 0
    visited: set[Cell] = field(default_factory=set)
    traversable: set[Cell] = field(default_factory=set)
    obstacles: set[Cell] = field(default_factory=set)
    states: dict[str, KnownState] = field(default_factory=dict)
    activated: set[str] = field(default_factory=set)
    goal: str | None = None
    available: tuple[str, ...] = ()
    """Available directions at the current position."""

    @property
    def frontier(self) -> set[Cell]:
        """Known-traversable cells not visited yet (the paper's unobserved cells U(t))."""
        return self.traversable - self.visited

    def update(self, facts: ObservationFacts) -> None:
        """Fold one observation's facts in."""
        self._update_cell(facts.position, facts.available, facts.steps)
        if facts.node is not None:
            self._update_node(
                facts.node,
                facts.position,
                options=facts.options,
                children=facts.children,
                is_goal=facts.is_goal,
                activated=facts.activated,
            )

    def update_from_data(self, data: Mapping[str, Any]) -> None:
        """Fold in an Observation.data dict (the same facts, structured)."""
        position = (int(data["position"][0]), int(data["position"][1]))
        self._update_cell(position, tuple(data.get("available", ())), int(data.get("steps", 0)))
        node = data.get("node")
        if node:
            options = node.get("options")
            self._update_node(
                node["name"],
                position,
                options=None if options is None else tuple(tuple(o) for o in options),
                children=tuple(node.get("children", ())),
                is_goal=bool(node.get("is_goal", False)),
                activated=node.get("status") == "achieved" or bool(node.get("activated_now")),
            )

    def _update_cell(self, position: Cell, available: Iterable[str], steps: int) -> None:
        self.position, self.steps = position, steps
        self.available = tuple(d for d in DIRECTION_ORDER if d in set(available))
        self.visited.add(position)
        self.traversable.add(position)
        self.obstacles.discard(position)
        for direction in DIRECTION_ORDER:
            neighbour = step_from(position, direction)
            if direction in self.available:
                self.traversable.add(neighbour)
                self.obstacles.discard(neighbour)
            elif neighbour not in self.traversable:
                self.obstacles.add(neighbour)

    def _update_node(
        self,
        name: str,
        pos: Cell,
        *,
        options: Options | None,
        children: tuple[str, ...],
        is_goal: bool,
        activated: bool,
    ) -> None:
        state = self.states.setdefault(name, KnownState(name, pos))
        state.pos = pos
        if options is not None:
            state.options = options
        if children:
            state.children = children
        if is_goal:
            self.goal = name
        if activated:
            self.activated.add(name)

    def pending(self) -> list[str]:
        """P(t): discovered, not activated, prerequisites met by the activated set (sorted)."""
        return sorted(
            name
            for name, state in self.states.items()
            if name not in self.activated and prerequisites_met(state.options, self.activated)
        )

    def shortest_path(self, start: Cell, end: Cell) -> list[str] | None:
        """Directions of a shortest path over known-traversable cells, or None if none is known."""
        tree = self.search(start)
        if end not in tree:
            return None
        path: list[str] = []
        cell = end
        while cell != start:
            reach = tree[cell]
            path.append(reach.via)
            cell = reach.parent
        return path[::-1]

    def distances_from(self, start: Cell) -> dict[Cell, int]:
        """BFS distances over known-traversable cells."""
        return {cell: reach.distance for cell, reach in self.search(start).items()}

    def search(self, start: Cell) -> dict[Cell, Reach]:
        """BFS tree over known-traversable cells. Neighbours are expanded in DIRECTION_ORDER, so
        ties between equally short paths always resolve the same way."""
        tree = {start: Reach(0, "", start, "")}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            here = tree[cell]
            for direction in DIRECTION_ORDER:
                nxt = step_from(cell, direction)
                if nxt in tree or nxt not in self.traversable:
                    continue
                tree[nxt] = Reach(here.distance + 1, here.first or direction, cell, direction)
                queue.append(nxt)
        return tree


@dataclass(frozen=True)
class Reach:
    """How a BFS reached a cell: distance, first move from the start, parent and last move."""

    distance: int
    first: str
    """First move from the start ("" for the start itself)."""
    parent: Cell
    via: str
    """Move from the parent into this cell."""


@dataclass(frozen=True)
class FrontierPlan:
    """The frontier policy's choice: the first move and the target it heads for."""

    direction: str
    target: Cell | None = None
    kind: Literal["goal", "pending", "frontier", "none"] = "none"
    state: str | None = None
    """The pending state targeted, when kind is goal or pending."""
    distance: int = 0


def plan_frontier_move(known: KnownMap) -> FrontierPlan:
    """Head for the nearest target over known-traversable cells: the goal alone when it is
    pending (Table 1, case 2), else pending states' cells and frontier cells. Ties: distance,
    then pending before frontier, then the first move in up/down/left/right order."""
    if known.position is None:
        return FrontierPlan(direction=DIRECTION_ORDER[0])
    start = known.position
    tree = known.search(start)
    pending = known.pending()
    if known.goal in pending:
        targets = [(known.states[known.goal].pos, 0, known.goal)]
    else:
        targets = [(known.states[name].pos, 0, name) for name in pending]
        targets += [(cell, 1, None) for cell in known.frontier]
    reachable = [
        (tree[cell].distance, rank, DIRECTION_ORDER.index(tree[cell].first), cell, name or "")
        for cell, rank, name in targets
        if cell in tree and cell != start
    ]
    if not reachable:
        # Nothing left to explore or activate that the map shows a way to: keep moving legally.
        fallback = known.available[0] if known.available else DIRECTION_ORDER[0]
        return FrontierPlan(direction=fallback)
    distance, rank, move, cell, name = min(reachable)
    kind: Literal["goal", "pending", "frontier"] = (
        "frontier" if rank else ("goal" if name == known.goal else "pending")
    )
    return FrontierPlan(DIRECTION_ORDER[move], cell, kind, name or None, distance)


def choose_frontier_move(known: KnownMap) -> str:
    """The frontier policy's next direction (see `plan_frontier_move`)."""
    return plan_frontier_move(known).direction
