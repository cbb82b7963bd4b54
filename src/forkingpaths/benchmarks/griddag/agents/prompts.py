"""All text the griddag agents show a model: system prompts (App. C.3, D), memory summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from string import Template
from types import MappingProxyType

from forkingpaths.benchmarks.griddag.world import DIRECTION_ORDER, Cell, format_prerequisites

PROMPT_VARIANTS: tuple[str, ...] = ("base", "exploration", "exploitation", "balance")
"""The four prompt variants of §5 "Prompts"; they differ only in the strategy sentence."""
MODES: tuple[str, ...] = ("default", "reasoning")
"""The two reasoning modes of App. C.2 (default-*, reasoning-* prompt sets)."""

# ---- system prompts (App. C.3): environment description + strategy sentence + action format ----

_TASK = (
    "You control an agent in a symbolic grid environment that you can only partially observe. "
    "Your objective is to activate the goal state."
)
_RULES = (
    "A newly discovered state may come with its prerequisites and with ancestor hints. You "
    "activate a state by standing on its cell once its prerequisites are satisfied. The full map, "
    "the hidden step budget and the states you have not discovered are not shown to you."
)
ENVIRONMENT_DESCRIPTION = (
    f"{_TASK} Each step tells you your current position, the directions in which you may legally "
    f"move, and any symbolic state newly discovered on your current cell. {_RULES}"
)
# App. D: the harness prompt also tells the model that a memory summary follows each observation.
HARNESS_ENVIRONMENT_DESCRIPTION = (
    f"{_TASK} Each step gives you your current observation: your current position, the "
    "directions in which you may legally move, and any symbolic state newly discovered on your "
    "current cell. You are also given a summary of the map you have explored: visited cells, "
    "reachable frontier cells, discovered states, activated states and prerequisite relations. "
    f"{_RULES}"
)

# The strategy sentences are the independent variable of the paper's prompt ablation: each keeps
# the paper's meaning exactly, in our own words (the project does not copy papers' sentences).
_EXPLORATION_DEFINITION = (
    "Exploring means heading on purpose for cells you have never stood on and ranging widely to "
    "reveal cells and symbolic states you have not found yet."
)
_EXPLOITATION_DEFINITION = (
    "Exploiting means going for discovered symbolic states whose prerequisites are already met, "
    "along the shortest path available, to activate them."
)
STRATEGY_SENTENCES: Mapping[str, str] = MappingProxyType(
    {
        "base": "",
        "exploration": "When choosing where to move, give priority to exploration. "
        + _EXPLORATION_DEFINITION,
        "exploitation": (
            "When choosing where to move, give priority to exploitation. Of the symbolic states "
            "you have already discovered, go first for those whose prerequisites are already met, "
            "taking the shortest path available to activate them."
        ),
        "balance": (
            "When choosing where to move, weigh exploration against exploitation. "
            + _EXPLORATION_DEFINITION
            + " "
            + _EXPLOITATION_DEFINITION
            + " Strike whichever balance of the two is likeliest to finish the task in the "
            "fewest steps."
        ),
    }
)

ACTION_EXAMPLES = ", ".join(f'{{"action":"{d}"}}' for d in DIRECTION_ORDER)

ACTION_FORMAT: Mapping[str, str] = MappingProxyType(
    {
        "default": (
            "Answer with a single JSON object holding one legal move from the available "
            f"directions, in this form: {ACTION_EXAMPLES}"
        ),
        "reasoning": (
            "Before you answer, think step by step about the map you have explored so far and the "
            "states you have discovered, their prerequisites and which of them are activated. Then "
            "end your answer with a single JSON object holding one legal move from the available "
            f"directions, in this form: {ACTION_EXAMPLES}"
        ),
    }
)

REASONING_MARKER = "think step by step"
"""Phrase that only the reasoning-mode action format contains (scripted policies look for it)."""

SYSTEM_PROMPT = Template("$environment $strategy $action_format")


def render_system_prompt(
    variant: str = "base", mode: str = "default", harness: bool = False
) -> str:
    """The system prompt of one prompt set; variant and mode must be valid (callers validate)."""
    environment = HARNESS_ENVIRONMENT_DESCRIPTION if harness else ENVIRONMENT_DESCRIPTION
    text = SYSTEM_PROMPT.substitute(
        environment=environment,
        strategy=STRATEGY_SENTENCES[variant],
        action_format=ACTION_FORMAT[mode],
    )
    return " ".join(text.split())  # the base variant leaves a double space where its sentence is


def asks_for_reasoning(system_prompt: str) -> bool:
    """Whether a system prompt is of the reasoning mode."""
    return REASONING_MARKER in system_prompt


# ---- harness memory summary (App. D) ----

HARNESS_TURN = Template("$observation\n\n$summary")
"""One user turn with harness engineering: the observation, a blank line, the summary."""

SUMMARY_COORDINATES = Template("From your movements so far, coordinate system: [x, y] where $axes.")
SUMMARY_GOAL_KNOWN = Template("The goal state is $goal.")
SUMMARY_GOAL_UNKNOWN = "You have not discovered the goal state yet."
SUMMARY_VISITED = Template("You have visited $cells.")
SUMMARY_FRONTIER = Template(
    "You have not visited these cells yet, but you know you can pass through them: $cells."
)
SUMMARY_NO_FRONTIER = "You know of no unvisited cell you can pass through."
SUMMARY_OBSTACLES = Template("You know you cannot pass through these cells: $cells.")
SUMMARY_NO_OBSTACLES = "You know of no cell you cannot pass through."
SUMMARY_STATE = Template("You discovered $name at $pos.")
SUMMARY_STATE_ACTIVATED = "It is already activated."
SUMMARY_STATE_WAITING = "It is not activated yet."
SUMMARY_STATE_PRIMITIVE = "It has no prerequisites."
SUMMARY_STATE_REQUIRES = Template("To activate it, you should find $prerequisites first.")
SUMMARY_STATE_REQUIRED = Template("It required $prerequisites.")
SUMMARY_STATE_UNLOCKS = Template("Once it is activated, you can next pursue $children.")
SUMMARY_NO_STATES = "You have not discovered any state yet."
SUMMARY_ACTIVATED = Template("Activated states: $names.")
SUMMARY_ACTIVATABLE = Template(
    "The discovered states whose prerequisites are already satisfied: $names."
)
NONE = "none"


@dataclass(frozen=True)
class StateSummary:
    """One discovered state as the summary shows it."""

    name: str
    pos: Cell
    activated: bool
    options: tuple[tuple[str, ...], ...] | None
    """None when no observation stated its prerequisites."""
    children: tuple[str, ...]


def format_cell(cell: Cell) -> str:
    return f"[{cell[0]}, {cell[1]}]"


def format_cells(cells: Iterable[Cell]) -> str:
    return ", ".join(format_cell(c) for c in cells)


def format_axes(moves: Mapping[str, tuple[int, int]]) -> str:
    """{"up": (0, 1), ...} -> 'up=y+1, down=y-1, left=x-1, right=x+1'."""
    parts = []
    for direction in DIRECTION_ORDER:
        dx, dy = moves[direction]
        axis, delta = ("x", dx) if dx else ("y", dy)
        parts.append(f"{direction}={axis}{delta:+d}")
    return ", ".join(parts)


def render_memory_summary(
    *,
    moves: Mapping[str, tuple[int, int]] | None,
    goal: str | None,
    visited: Sequence[Cell],
    frontier: Sequence[Cell],
    obstacles: Sequence[Cell],
    states: Sequence[StateSummary],
    activated: Sequence[str],
    activatable: Sequence[str],
) -> str:
    """The harness memory summary of App. D, one fact per line. `moves` is the learned
    direction -> (dx, dy) table, None until the coordinate system has been inferred."""
    lines = []
    if moves is not None:
        lines.append(SUMMARY_COORDINATES.substitute(axes=format_axes(moves)))
    lines.append(SUMMARY_GOAL_KNOWN.substitute(goal=goal) if goal else SUMMARY_GOAL_UNKNOWN)
    lines.append(SUMMARY_VISITED.substitute(cells=format_cells(visited)))
    lines.append(
        SUMMARY_FRONTIER.substitute(cells=format_cells(frontier))
        if frontier
        else SUMMARY_NO_FRONTIER
    )
    lines.append(
        SUMMARY_OBSTACLES.substitute(cells=format_cells(obstacles))
        if obstacles
        else SUMMARY_NO_OBSTACLES
    )
    lines += [_render_state(state) for state in states] or [SUMMARY_NO_STATES]
    lines.append(SUMMARY_ACTIVATED.substitute(names=", ".join(activated) or NONE))
    lines.append(SUMMARY_ACTIVATABLE.substitute(names=", ".join(activatable) or NONE))
    return "\n".join(lines)


def _render_state(state: StateSummary) -> str:
    parts = [SUMMARY_STATE.substitute(name=state.name, pos=format_cell(state.pos))]
    parts.append(SUMMARY_STATE_ACTIVATED if state.activated else SUMMARY_STATE_WAITING)
    if state.options == ():
        parts.append(SUMMARY_STATE_PRIMITIVE)
    elif state.options is not None:
        requires = SUMMARY_STATE_REQUIRED if state.activated else SUMMARY_STATE_REQUIRES
        parts.append(requires.substitute(prerequisites=format_prerequisites(state.options)))
    if state.children:
        parts.append(SUMMARY_STATE_UNLOCKS.substitute(children=", ".join(state.children)))
    return " ".join(parts)


# ---- what the scripted frontier model says before its JSON in reasoning mode ----

REASONING_GOAL = Template(
    "The goal state $state is activatable at $cell, $distance step(s) away on the known map, so "
    "I head straight there."
)
REASONING_PENDING = Template(
    "State $state at $cell has its prerequisites satisfied and is the nearest target, "
    "$distance step(s) away, so I go back to activate it."
)
REASONING_FRONTIER = Template(
    "No activatable state is closer than the unvisited cell $cell, $distance step(s) away, so I "
    "explore toward it."
)
REASONING_NONE = "I know of no unvisited cell or activatable state I can reach, so I keep moving."
REASONING_RANDOM = "I pick one of the available directions at random."


def render_frontier_reasoning(
    kind: str, state: str | None, cell: Cell | None, distance: int
) -> str:
    """The one-sentence rationale of a frontier move (`kind` as in knowledge.FrontierPlan)."""
    if cell is None:
        return REASONING_NONE
    template = {"goal": REASONING_GOAL, "pending": REASONING_PENDING}.get(kind, REASONING_FRONTIER)
    return template.substitute(state=state, cell=format_cell(cell), distance=distance)
