"""GridDagEnv: the partially observed grid + task DAG environment of the griddag benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from forkingpaths.benchmarks.griddag.world import (
    DIRECTION_ORDER,
    DIRECTIONS,
    Cell,
    World,
    format_prerequisites,
    parse_direction,
)
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError, ResetNeeded

NodeStatus = Literal["undiscovered", "discovered", "achieved"]
Event = Literal["reset", "moved", "invalid", "blocked"]

INVALID_ACTION_TEXT = 'Invalid action: reply with exactly one JSON object such as {"action":"up"}.'


@dataclass(frozen=True)
class GridDagState:
    """A snapshot of everything that changes during an episode; the observation is a function
    of it alone (`GridDagEnv.render`)."""

    position: Cell
    steps: int
    observed: frozenset[Cell]
    """Cells visited so far (paper Eq. 2, `observed`)."""
    seen: frozenset[str]
    """Nodes whose cell was visited (`seen`, App. B); discovered or achieved."""
    achieved: frozenset[str]
    """Nodes visited while their precondition held (Eq. 3)."""
    event: Event
    """What the last reset/step did; selects the observation's wording."""
    first_visit: bool = False
    """The node at `position` was seen for the first time by the last event."""
    activated_now: bool = False
    """The node at `position` was achieved by the last event."""
    blocked: str | None = None
    """The refused direction when `event == "blocked"`."""


@dataclass(frozen=True)
class _NodeView:
    """Per-node text and lookups computed once per world, so `step` never rebuilds them."""

    name: str
    options: tuple[frozenset[str], ...]
    options_json: list[list[str]]
    prerequisites: str
    children: tuple[str, ...]
    is_goal: bool


class GridDagEnv(Env):
    """A partially observed 2D grid whose cells hide the nodes of a task DAG.

    ## Description

    The environment of "Exploration and Exploitation Errors Are Measurable for Language Model
    Agents" (explore-exploit-errors.txt, §3 and App. B). The agent walks a grid map M (the
    traversable cells); some cells hold a node of a task DAG whose unique sink is the goal. A
    node's parents are unknown until its cell is visited; then the environment names its
    prerequisites and its children ("ancestors" in the paper's wording, App. C.3). A node is
    *achieved* when the agent stands on it while its precondition holds (Eq. 3); the
    precondition is an OR over alternative prerequisite sets, each an AND over parents (Eq. 4).
    A node visited too early stays *discovered* until the agent satisfies the precondition and
    comes back. The task is complete when the goal is achieved.

    ## Action Space

    Free text. `parse_direction` (world.py) reads the last JSON object with an `"action"` key
    (prose and code fences around it are fine) or a bare direction word: one of `up`
    (y+1), `down` (y-1), `left` (x-1), `right` (x+1) (App. D). Anything else is refused as
    unparseable; a direction into an obstacle or off the grid is refused as blocked. A refused
    action leaves the agent in place, counts as a step and sets `info["valid"] = False`.

    ## Observation Space

    `Observation.text` is one line, `OBSERVATION: You are at [x, y]. <what is here> Available
    directions: ... You spent N steps.`, and `Observation.data` holds the same facts as fields;
    both are specified exactly in docs/dev/griddag-observation-format.md (the paper's example
    turns, App. C.3). Only the admissible directions of the current cell and the node on it
    are revealed (partial observability, §3); the map, the budget and undiscovered nodes are
    hidden from the text. `data["node"]` describes the node on the agent's cell, if any, after
    refused actions too.

    ## Rewards

    1.0 on the step that achieves the goal, 0.0 otherwise. The paper scores episodes by
    success and by its exploration/exploitation error metric (§4), computed from the records.

    ## Starting State

    The agent stands on `world.start` (which the generator keeps free of nodes), every node is
    undiscovered and the step count is 0; the start cell is observed. The world is fixed at
    construction, so `reset`'s seed changes nothing: the episode is deterministic.

    ## Episode End

    Terminated when the goal is achieved. Truncated when N reaches the hidden budget
    `world.budget` (B = alpha x |M|, App. C.1, Eq. 7; alpha = 3 unless the benchmark option
    `budget_alpha` sets it) without success: the budget is a rule of the game (the outcome and
    the observation depend on it), so the env applies it itself. Every step counts, refused
    ones included (one step per model call, App. B). `step` before the first `reset` raises
    `ResetNeeded`; a step after the end is refused by the `OrderEnforcing` wrapper the runner
    and the Gymnasium adapter put around every env (the bare env, as in Gymnasium, does not
    police it).

    ## Arguments

    `GridDagEnv(world)`: a `World` from `generator.generate_world` (procedural split),
    `semantic.load_semantic_world` (the semantic split, App. E) or `World.from_json`.

    ## Version History

    * v1: the rules of §3 and App. B, the observation wording of App. C.3 as pinned by
      docs/dev/griddag-observation-format.md, budget B = 3 x |M| (App. C.1).
    """

    def __init__(self, world: World) -> None:
        if not isinstance(world, World):
            raise ConfigError(f"world must be a griddag World, got {type(world).__name__}")
        self.world = world
        # Everything that depends only on the world is computed here, once, so that a step is
        # a few dict lookups and one string join regardless of the map size.
        self._moves: dict[Cell, dict[str, Cell]] = {}
        self._available: dict[Cell, tuple[str, ...]] = {}
        self._available_text: dict[Cell, str] = {}
        for cell in world.cells:
            moves = {
                d: (cell[0] + DIRECTIONS[d][0], cell[1] + DIRECTIONS[d][1]) for d in DIRECTION_ORDER
            }
            moves = {d: c for d, c in moves.items() if c in world.cells}
            self._moves[cell] = moves
            self._available[cell] = tuple(moves)
            self._available_text[cell] = f"Available directions: {', '.join(moves)}."
        self._node_at: dict[Cell, str] = {n.pos: n.name for n in world.nodes.values()}
        self._views: dict[str, _NodeView] = {
            name: _NodeView(
                name=name,
                options=tuple(frozenset(o) for o in node.options),
                options_json=[list(o) for o in node.options],
                prerequisites=format_prerequisites(node.options),
                children=world.children(name),
                is_goal=name == world.goal,
            )
            for name, node in world.nodes.items()
        }
        # The mutable episode state (see GridDagState for the meaning of each field). Plain
        # sets updated in place keep a step O(1); `snapshot` pays for the copies instead.
        self._started = False
        self._position: Cell = world.start
        self._steps = 0
        self._observed: set[Cell] = set()
        self._seen: set[str] = set()
        self._achieved: set[str] = set()
        self._event: Event = "reset"
        self._first_visit = False
        self._activated_now = False
        self._blocked: str | None = None

    # ---- the Env contract ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        if options:
            raise ConfigError(
                f"GridDagEnv.reset options: got keys {sorted(options)}; none are supported"
            )
        start = self.world.start
        self._started = True
        self._steps = 0
        self._observed = {start}
        self._seen = set()
        self._achieved = set()
        self._event = "reset"
        self._blocked = None
        # The start is visited at t = 0, so a node there (hand-made maps only) is seen now.
        self._enter(start)
        return self.render()

    def step(self, action: str) -> Step:
        # Before the first reset there is no episode (nothing observed) for a step to change;
        # the accessors below need the same flag. Ordering after the end is OrderEnforcing's.
        self._require_started("step")
        self._steps += 1
        self._first_visit = self._activated_now = False
        self._blocked = None
        direction = parse_direction(action) if isinstance(action, str) else None
        if direction is None:
            self._event = "invalid"
        else:
            target = self._moves[self._position].get(direction)
            if target is None:
                self._event = "blocked"
                self._blocked = direction
            else:
                self._event = "moved"
                self._observed.add(target)
                self._enter(target)
        terminated = self.world.goal in self._achieved
        truncated = not terminated and self._steps >= self.world.budget
        # Only the step that achieves the goal can set `terminated`, so reward follows it.
        reward = 1.0 if terminated else 0.0
        return Step(self.render(), reward, terminated, truncated, self._info())

    # ---- state ----

    def _enter(self, cell: Cell) -> None:
        """Apply the visit rules (Eq. 3-4) for the agent arriving on `cell`."""
        self._position = cell
        name = self._node_at.get(cell)
        if name is None:
            self._first_visit = self._activated_now = False
            return
        self._first_visit = name not in self._seen
        self._seen.add(name)
        self._activated_now = name not in self._achieved and self._prec(name)
        if self._activated_now:
            self._achieved.add(name)

    def _prec(self, name: str) -> bool:
        """prec(u, t) of Eq. 4: true without options, else some option fully achieved."""
        options = self._views[name].options
        return not options or any(option <= self._achieved for option in options)

    def _require_started(self, what: str) -> None:
        if not self._started:
            raise ResetNeeded(f"GridDagEnv.{what} called before reset()")

    def snapshot(self) -> GridDagState:
        """The episode state as an immutable value; `restore` returns to it."""
        self._require_started("snapshot")
        return GridDagState(
            position=self._position,
            steps=self._steps,
            observed=frozenset(self._observed),
            seen=frozenset(self._seen),
            achieved=frozenset(self._achieved),
            event=self._event,
            first_visit=self._first_visit,
            activated_now=self._activated_now,
            blocked=self._blocked,
        )

    def restore(self, state: GridDagState) -> Observation:
        """Return to a state taken by `snapshot` of an env on the same world."""
        if not isinstance(state, GridDagState):
            raise ConfigError(
                f"GridDagEnv.restore: expected a GridDagState from snapshot(), "
                f"got {type(state).__name__}"
            )
        unknown = sorted(state.seen - self.world.nodes.keys())
        if state.position not in self.world.cells or unknown:
            raise ConfigError(
                f"GridDagEnv.restore: state at {list(state.position)} with nodes {unknown} "
                "does not belong to this world"
            )
        self._started = True
        self._position = state.position
        self._steps = state.steps
        self._observed = set(state.observed)
        self._seen = set(state.seen)
        self._achieved = set(state.achieved)
        self._event = state.event
        self._first_visit = state.first_visit
        self._activated_now = state.activated_now
        self._blocked = state.blocked
        return self.render()

    @property
    def position(self) -> Cell:
        self._require_started("position")
        return self._position

    @property
    def steps(self) -> int:
        self._require_started("steps")
        return self._steps

    def status(self, name: str) -> NodeStatus:
        """status(u, t) of Eq. 3."""
        if name not in self.world.nodes:
            raise ConfigError(
                f"status: unknown node {name!r}; nodes are {', '.join(sorted(self.world.nodes))}"
            )
        self._require_started("status")
        if name in self._achieved:
            return "achieved"
        return "discovered" if name in self._seen else "undiscovered"

    def prerequisites_met(self, name: str) -> bool:
        """prec(u, t) of Eq. 4 for the current state."""
        if name not in self.world.nodes:
            raise ConfigError(
                f"prerequisites_met: unknown node {name!r}; "
                f"nodes are {', '.join(sorted(self.world.nodes))}"
            )
        self._require_started("prerequisites_met")
        return self._prec(name)

    # ---- rendering: pure functions of the state ----

    def render(self) -> Observation:
        """The observation of the current state, per docs/dev/griddag-observation-format.md."""
        self._require_started("render")
        x, y = self._position
        where = f"You are at [{x}, {y}]."
        tail = f"{self._available_text[self._position]} You spent {self._steps} steps."
        if self._event == "invalid":
            text = f"OBSERVATION: {INVALID_ACTION_TEXT} {where} {tail}"
        elif self._event == "blocked":
            text = f"OBSERVATION: You cannot move {self._blocked} from [{x}, {y}]. {where} {tail}"
        else:
            text = f"OBSERVATION: {where} {self._cell_text()} {tail}"
        return Observation(text=text, data=self._data())

    def _cell_text(self) -> str:
        name = self._node_at.get(self._position)
        if name is None:
            return "You found nothing here."
        view = self._views[name]
        if self._first_visit:
            parts = [f"You discovered state {name}."]
            if not view.options:
                parts.append(f"{name} has no prerequisites and is immediately activated!")
            elif self._activated_now:
                parts.append(
                    f"{name} requires {view.prerequisites}. "
                    f"Its prerequisites are satisfied, so {name} is now activated!"
                )
            else:
                parts.append(f"{name} requires {view.prerequisites}. {name} is not activated yet.")
            if view.is_goal:
                parts.append(f"{name} is the goal state.")
            if view.children:
                parts.append(f"{name} has ancestors: {', '.join(view.children)}.")
        elif self._activated_now:
            parts = [f"State {name}'s prerequisites are satisfied, so {name} is now activated!"]
        elif name in self._achieved:
            return f"State {name} is already activated."
        else:
            return f"State {name} is not activated yet. {name} requires {view.prerequisites}."
        if view.is_goal and self._activated_now:
            parts.append(f"You activated the goal state {name}. Task complete!")
        return " ".join(parts)

    def _data(self) -> dict[str, Any]:
        name = self._node_at.get(self._position)
        node: dict[str, Any] | None = None
        # The agent's cell was entered, so a node on it is always seen: no hidden facts leak.
        if name is not None:
            view = self._views[name]
            node = {
                "name": name,
                "status": "achieved" if name in self._achieved else "discovered",
                "options": [list(o) for o in view.options_json],
                "children": list(view.children),
                "is_goal": view.is_goal,
                "first_visit": self._first_visit,
                "activated_now": self._activated_now,
            }
        return {
            "position": [self._position[0], self._position[1]],
            "available": list(self._available[self._position]),
            "steps": self._steps,
            "node": node,
            "valid": self._event in ("reset", "moved"),
            "event": self._event,
            "outcome": {
                "success": self.world.goal in self._achieved,
                "steps": self._steps,
                "budget": self.world.budget,
            },
        }

    def _info(self) -> dict[str, Any]:
        name = self._node_at.get(self._position)
        moved = self._event == "moved"
        error_reason = {"invalid": "unparseable", "blocked": "blocked"}.get(self._event)
        return {
            "valid": error_reason is None,
            "position": [self._position[0], self._position[1]],
            "moved": moved,
            "achieved": [name] if moved and self._activated_now and name else [],
            "discovered": [name] if moved and self._first_visit and name else [],
            "error_reason": error_reason,
        }
