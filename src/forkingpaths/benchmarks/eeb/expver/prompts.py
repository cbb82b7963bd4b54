"""All text Agent-ExpVer's modules show a model: InsightForce and TruthWeaver prompts (App. B.2)."""

from __future__ import annotations

from collections.abc import Mapping
from string import Template
from types import MappingProxyType

# The wording is ours; the content follows App. B.2: the session analysis asks for strengths and
# weaknesses from the metrics and the highlighted steps, the organisation task asks for
# duplicates removed and near-duplicates merged without forcing the list shorter.

GAME_TITLES: Mapping[str, str] = MappingProxyType(
    {"maze": "maze navigation", "match2": "match-2 elimination"}
)
"""How the prompts name each EvoEmpirBench game."""

# ---- InsightForce: trajectory + metrics -> subjective experience (Eq. 3) ----

INSIGHTFORCE_HEADING = "# Review of a played game session"
"""First line of every InsightForce prompt (tests and scripted models recognise it by this)."""

INSIGHTFORCE_PROMPT = Template(
    INSIGHTFORCE_HEADING
    + """

Below is one session of the $game game played by an agent. Judge its play: what it did well and
what it should do differently.

## Final metrics of the session
$metrics

## Key moments of the session
$highlights

## What to write
1. Every strength the agent showed: decisions that paid off and are worth repeating. Name as
   many as you can find.
2. Every weakness or missed opportunity: decisions that cost points, lives, moves or the level,
   and what would have worked better. Name as many as you can find.
3. A few lessons: short, general rules of play that would help on a new level of this game.

Put each point on its own line starting with "- ", under these three headings and nothing else:

Strengths:
- ...

Weaknesses:
- ...

Lessons:
- ...
"""
)
"""Fields: game (a GAME_TITLES value), metrics (METRIC_LINE lines), highlights (KEY_STEP blocks)."""

METRIC_LINE = Template("- $name: $value")

KEY_STEP = Template(
    """Step $number ($why):
Agent's reasoning: $thought
Action: $action
Outcome: $outcome"""
)
"""One key step GeoLink selected; `number` is 1-based, `why` says why the step was kept."""

NO_THOUGHT = "(no reasoning given)"
NO_METRICS = "- (none)"
NO_STEPS = "(the episode has no steps)"
TRUNCATION_MARK = "..."
OUTCOME_REWARD = Template("reward $reward")
OUTCOME_END = "the episode ended here"

# Why GeoLink kept a step (the `why` of KEY_STEP), by highlight kind.
WHY_BEGINNING = "beginning"
WHY_END = "end"
WHY_EVENT: Mapping[str, str] = MappingProxyType(
    {
        "wall_hit": "life lost: walked into a wall",
        "monster_hit": "life lost: touched a monster",
        "goal": "goal reached",
        "coin": "coin collected",
        "kill": "monster defeated",
        "barrier": "wall broken",
        "locked": "goal locked: key missing",
    }
)
"""Maze events (`Step.info["events"]`) and how a key step names them."""
WHY_ITEM = Template("picked up the $item")
WHY_INVALID = "invalid action"
WHY_INVALID_ERROR = Template("invalid action: $error")
WHY_PROP = Template("used the $prop prop")
WHY_CLEAR = Template("one of the largest clears ($tiles tiles)")
WHY_LOSS = Template("largest loss ($reward)")
WHY_GAIN = Template("largest gain ($reward)")

# Headings the InsightForce parser accepts (lowercase prefixes); models rename sections freely.
STRENGTH_WORDS: tuple[str, ...] = ("strength", "what went well", "positive")
WEAKNESS_WORDS: tuple[str, ...] = (
    "weakness",
    "area for improvement",
    "areas for improvement",
    "improvement",
    "mistake",
    "what went wrong",
    "negative",
)
LESSON_WORDS: tuple[str, ...] = (
    "lesson",
    "insight",
    "rule",
    "takeaway",
    "advice",
    "recommendation",
    "guideline",
)

# How an experience becomes knowledge lines for the agent's prompt (Eq. 5 lists one per line).
STRENGTH_ENTRY = Template("Keep doing: $text")
WEAKNESS_ENTRY = Template("Avoid: $text")

# ---- TruthWeaver: organise the truth repository (§4.2: merge, remove, insert) ----

TRUTHWEAVER_HEADING = "# Organising a knowledge base of game truths"
"""First line of every TruthWeaver prompt."""

TRUTHWEAVER_PROMPT = Template(
    TRUTHWEAVER_HEADING
    + """

These are the pieces of knowledge about the $game game learned so far, oldest first; the last
ones have just been verified. Tidy the list; this is one step of an ongoing tidying, not a final
cleanup.

## Entries
$entries

## How to tidy
1. Delete any entry that is an exact repeat of another.
2. Where entries say nearly the same thing in different words, fuse them into one fuller entry.
3. A fused entry keeps the concrete details and the core meaning of every entry it replaces.
4. Keep fused entries short, but never at the cost of an important detail.
5. Entries that overlap only a little stay separate.
6. Entries unlike all others stay exactly as written.

Do not shorten the list for its own sake: fuse or delete only real repeats and near-repeats.

## Answer
Write only the tidied entries, one per line, without numbers, sources or comments.
"""
)
"""Fields: game (a GAME_TITLES value), entries (ENTRY_LINE lines)."""

ENTRY_LINE = Template("$number. $text (source: $source)")
