"""All text the EvoEmpirBench agents show a model (App. B.1), and what the scripted models say."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from string import Template
from types import MappingProxyType

from forkingpaths.benchmarks.eeb.match2_levels import MATCH2_DIFFICULTIES, PROP_COSTS

# The paper's prompts (App. B.1) keep their content here in our own words: the project never
# copies a paper's sentences.

# ---- maze navigation (App. B.1, "Example Prompt for Maze Navigation Game") ----

MAZE_SYSTEM = Template(
    """You are an agent finding your way through a maze. Move through it economically, pick up \
rewards on the way and keep away from hazards.

Map symbols:
$legend

What matters, most important first:
1. Survive: do not run into walls or monsters.
2. Get to the goal.
3. Pick up coins when it is safe to.
4. Explore without wasting moves.
5. Use as few steps as you can.

Each turn you are given the current game state and answer with one action number from 0 to 11, \
chosen after looking at the situation carefully. Always give your reasoning before your decision.

$level
$knowledge"""
)

MAZE_LEGEND_BASE: tuple[str, ...] = (
    "- A: where you are",
    "- G: the goal (always shown)",
    "- C: a coin (+500 points)",
    "- #: a wall (running into it costs a life)",
    "- ?: a cell not explored yet",
    "- .: open floor",
)
MAZE_LEGEND_MONSTER = "- M: a monster"
MAZE_LEGEND_ITEMS = "- T, W, N, K: items (shovel, sword, magnet, key)"

MAZE_LEVELS: Mapping[int, Template] = MappingProxyType(
    {
        1: Template(
            """About level 1:
- a ${size}x${size} board
- no monsters
- 5 coins to pick up
- the challenge is plain navigation and coin gathering"""
        ),
        2: Template(
            """About level 2:
- a ${size}x${size} board
- monsters (M) that wander at random
- 5 coins to pick up
- plan your route so that no monster catches you"""
        ),
        3: Template(
            """About level 3:
- a ${size}x${size} board
- monsters, and special items to pick up:
  * T: shovel, breaks through walls (3 uses)
  * W: sword, defeats monsters
  * N: magnet, pulls in the coins close to you
  * K: key, needed before the goal lets you in
- the hardest navigation of the three levels"""
        ),
    }
)
"""Level characteristics (App. B.1), one block per level; only the episode's level is shown."""

MAZE_TURN = Template(
    """Current game state:
$state
$vision
Work through the situation before acting:
1. Look at the area you can see and the risks in it.
2. Weigh what each option is worth in exploration and rewards.
3. Pick an action number between 0 and 11.
$level_rules
Your overall aim: explore the map, pick up the coins and reach the goal, keeping your score high.

How to answer:
1. First describe the situation: the explored area, where coins are, which risks you see.
2. Then compare your possible moves and what each leads to, above all their exploration value.
3. End with your choice on a line of its own, written "Action: X" with X an action number \
from 0 to 11.
For example, "Action: 9" moves one step to the right."""
)
MAZE_FULL_VISION = (
    "\nFull vision is on: the whole map is shown to you, every wall, coin, monster and item "
    "included, so nothing needs exploring.\n"
)
MAZE_MONSTER_RULE = (
    "- Never touch a monster (M): it costs you a life and sends you back to the start."
)
MAZE_LEVEL3_RULES = """Level 3 rules:
- The goal only lets you in once you hold the key (K).
- Holding the shovel (T), you break through a wall instead of losing a life (3 uses).
- Holding the sword (W), you defeat a monster instead of losing a life.
- Holding the magnet (N), you collect every coin in the 5x5 square around you."""

# ---- match-2 elimination (App. B.1, "Example Prompt for Match-2 Game") ----

MATCH2_SYSTEM = Template(
    """You are playing a match game on an 8x8 board (gridSize = 8). Every cell holds one of the \
colours A, B, C and D, or is empty (null).

Rules:
- A move clears a group of two or more tiles of the same colour joined horizontally or \
vertically; it scores tiles * 5 + 3 * max(0, tiles - 2) points.
$props- Every action uses one step. You win the level by clearing the required number of tiles \
of each colour (the colour targets A, B, C, D) before the steps run out, with a high score and \
few steps used.
- First priority: finish the level, meeting every colour target.
- Second priority: raise your score, favouring large groups and spending points on props only \
where they help, and use few steps so that many remain.
- When tiles are cleared, the tiles above fall down and new random tiles (A, B, C, D) drop in \
from the top.
- Each turn you receive the board (8x8, A/B/C/D), your score, the steps you have left, your \
props, the colour targets and how many tiles of each colour you have cleared.

$level
$knowledge"""
)
MATCH2_PROPS_RULE = Template(
    "- Props (as many uses as your inventory shows, normally one each): row (clears one row, "
    "$row points), col (clears one column, $col points), bomb (clears the 3x3 square around a "
    "tile, $bomb points), hammer (clears a single tile, $hammer points).\n"
)
MATCH2_LEVEL = Template(
    """About this level ($difficulty):
- an 8x8 board
- $steps_low to $steps_high steps allowed
- $target_low to $target_high tiles to clear of each colour"""
)
MATCH2_TURN = Template(
    """Current game state:
$state

Think through the board first: the largest groups, which colours you still need, whether a \
prop would help. Then end your reply with your best action as one JSON object:
$action_format
If no action is possible, answer {"action": null}."""
)
MATCH2_ACTION_FORMAT_PROPS = (
    '{"action": {"type": "eliminate" | "row" | "col" | "bomb" | "hammer", "pos": [i, j], '
    '"index": k}}, where "pos" (0 <= i, j < 8) goes with eliminate, bomb and hammer and '
    '"index" (0 <= k < 8) with row and col.'
)
MATCH2_ACTION_FORMAT_NO_PROPS = (
    '{"action": {"type": "eliminate", "pos": [i, j]}} with 0 <= i, j < 8 (props are off in '
    "this game)."
)

# ---- shared: the truths of the repository (§4.3, Eq. 5) ----

KNOWLEDGE = Template(
    """
Training knowledge (lessons verified in earlier games; let them guide your decisions):
$items
"""
)


def render_knowledge(truths: Sequence[str]) -> str:
    """The Training Knowledge block, one numbered truth per line; "" when there are none."""
    if not truths:
        return ""
    items = "\n".join(f"{i}. {text}" for i, text in enumerate(truths, start=1))
    return KNOWLEDGE.substitute(items=items)


def render_maze_system(level: int, size: int, truths: Sequence[str]) -> str:
    """The maze system prompt of one level; `level` must be in MAZE_LEVELS (callers validate).
    Monsters join the legend from level 2 on, items at level 3 (Table 2)."""
    legend = list(MAZE_LEGEND_BASE)
    if level >= 2:
        legend.append(MAZE_LEGEND_MONSTER)
    if level >= 3:
        legend.append(MAZE_LEGEND_ITEMS)
    text = MAZE_SYSTEM.substitute(
        legend="\n".join(legend),
        level=MAZE_LEVELS[level].substitute(size=size),
        knowledge=render_knowledge(truths),
    )
    return text.rstrip() + "\n"


def render_maze_turn(state: str, level: int, *, full_vision: bool) -> str:
    """One maze user turn: the env's state text, then the analysis steps and answer format."""
    rules = []
    if level >= 2:
        rules.append(MAZE_MONSTER_RULE)
    if level >= 3:
        rules.append(MAZE_LEVEL3_RULES)
    return MAZE_TURN.substitute(
        state=state,
        vision=MAZE_FULL_VISION if full_vision else "",
        # The level's rules stand apart from the numbered steps above them.
        level_rules="\n" + "\n".join(rules) + "\n" if rules else "",
    )


def render_match2_system(difficulty: str, truths: Sequence[str], *, props: bool) -> str:
    """The match-2 system prompt; `difficulty` easy/medium/hard shows Table 2's ranges, any
    other value (a custom level) leaves the level block out."""
    ranges = MATCH2_DIFFICULTIES.get(difficulty)
    level = (
        MATCH2_LEVEL.substitute(
            difficulty=difficulty,
            steps_low=ranges.steps[0],
            steps_high=ranges.steps[1],
            target_low=ranges.target[0],
            target_high=ranges.target[1],
        )
        if ranges is not None
        else ""
    )
    text = MATCH2_SYSTEM.substitute(
        props=MATCH2_PROPS_RULE.substitute(PROP_COSTS) if props else "",
        level=level,
        knowledge=render_knowledge(truths),
    )
    return text.rstrip() + "\n"


def render_match2_turn(state: str, *, props: bool) -> str:
    """One match-2 user turn: the env's state text, then the answer format."""
    return MATCH2_TURN.substitute(
        state=state,
        action_format=MATCH2_ACTION_FORMAT_PROPS if props else MATCH2_ACTION_FORMAT_NO_PROPS,
    )


# ---- what the reference agents and scripted models say about their choice ----

MAZE_REASON_ITEM = Template(
    "The $what at $cell is $distance move(s) away on the known map, so I go for it."
)
MAZE_REASON_FRONTIER = Template(
    "No coin or item is in reach, so I explore toward the unexplored area next to $cell, "
    "$distance move(s) away."
)
MAZE_REASON_GOAL = Template(
    "I head for the goal at $cell, about $distance move(s) away if the unexplored cells are open."
)
MAZE_REASON_EVADE = "A monster is close and no planned move is safe, so I step away from it."
MAZE_REASON_NONE = "I see no safe route anywhere, so I make the least risky move."
MATCH2_REASON_GROUP = Template(
    "The $colour group of $size at $cell helps the targets I still need most, so I clear it."
)
MATCH2_REASON_PROP = Template("A $prop clears $useful tiles I still need, so I use it.")
MATCH2_REASON_NONE = "No group of two or more tiles and no affordable prop is left."
SCRIPTED_NO_STATE = "I cannot find an EvoEmpirBench game state in the prompt."
RANDOM_REASON = "I pick an action at random."

# ---- what a person playing in the terminal is told (human.py) ----

HUMAN_HINTS: Mapping[str, str] = MappingProxyType(
    {
        "maze": "Type an action number from 0 to 11 (0-2 up, 3-5 down, 6-8 left, 9-11 right).",
        "match2": (
            "Type an action: eliminate i,j | bomb i,j | hammer i,j | row k | col k "
            '(or the JSON {"action": {...}}).'
        ),
    }
)


def format_cell(cell: tuple[int, int]) -> str:
    return f"({cell[0]},{cell[1]})"
