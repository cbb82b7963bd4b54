"""All text the Divergence Momentum judge shows a model (Metric 2, §3.1, App. C.2).

The wording is ours; the content follows the paper: three criteria (Originality, Elaboration,
Groundedness) on a 1-5 scale, the context the judge sees (objective, scene, bag, recent history,
Thought, Action, environment response), and the instruction to judge the attempt and its stated
mechanism rather than whether it solved the scenario.
"""

from __future__ import annotations

from string import Template

JUDGE_HEADING = "# Divergence Momentum: judge one Thought-Action step"
"""First line of every judge request (the scripted judge recognises its prompt by it)."""

SECTION_OBJECTIVE = "## Scenario objective"
SECTION_SCENE = "## Current scene"
SECTION_BAG = "## Tools in the agent's bag"
SECTION_HISTORY = "## Recent history (oldest first)"
SECTION_THOUGHT = "## The agent's Thought"
SECTION_ACTION = "## The agent's Action"
SECTION_RESPONSE = "## Environment response to the Action"
SECTION_ANSWER = "## Your answer"
"""Section headings of the user turn, in order; each sits on a line of its own."""

JUDGE_SYSTEM = """You are a careful rater of creative problem solving. An agent is trying to reach \
a goal in a text-based escape-room simulation: it moves between scenes, examines items, collects \
tools into a bag, applies tools to items, crafts tools together and types strings into items. You \
are shown one of its steps, with the context the agent had, and you rate that step on three \
criteria, each on a whole-number scale from 1 to 5.

Originality: how far the Action departs from the conventional use of its target (and of the \
tool it uses).
  1 = the conventional use of the target (a key turned in the lock it belongs to).
  2 = a common alternative use with a small twist.
  3 = a plausible but less obvious use that still relies on the usual property of the objects.
  4 = a clearly unconventional use that exploits a property the target or tool is not usually \
used for.
  5 = a surprising reinterpretation of the target: a different physical principle or an indirect \
route (a lure, a disguise, a signal, a chemical change) that few would think of.

Elaboration: how deeply the Thought works out the mechanism behind the Action.
  1 = no reasoning, or a bare restatement of the Action.
  2 = a goal or a hunch without any mechanism.
  3 = names the property of the tool or target it relies on.
  4 = explains the causal chain: which property acts on what, and what should happen.
  5 = a detailed, coherent mechanism that also anticipates conditions, side effects or what to \
do next.

Groundedness: whether the Thought justifies why this Action is needed now, given the scene, the \
tools in the bag and the feedback received so far.
  1 = the Action has no visible reason, or contradicts the scene, the bag or earlier feedback.
  2 = loosely related to the situation but the reason is not stated.
  3 = a reason is stated but ignores relevant feedback or available objects.
  4 = justified by the observed situation and consistent with earlier feedback.
  5 = tightly justified: it uses what the scene, the bag and the latest feedback reveal, and \
explains why this Action rather than another is the next step.

Rate the attempt itself and the mechanism the agent states, not whether it succeeded or whether \
it lies on a known solution: a failed attempt can deserve high scores and a successful one low \
scores. Be consistent across steps.

Answer with one JSON object and nothing else, for example:
{"originality": 3, "elaboration": 2, "groundedness": 4, "rationale": "one short sentence"}"""
"""System turn: the rubric, its anchors and the answer format."""

JUDGE_USER = Template(
    JUDGE_HEADING
    + "\n\n"
    + SECTION_OBJECTIVE
    + "\n$objective\n\n"
    + SECTION_SCENE
    + "\n$scene_context\n\n"
    + SECTION_BAG
    + "\n$bag\n\n"
    + SECTION_HISTORY
    + "\n$history\n\n"
    + SECTION_THOUGHT
    + "\n$thought\n\n"
    + SECTION_ACTION
    + "\n$action\n\n"
    + SECTION_RESPONSE
    + "\n$response\n\n"
    + SECTION_ANSWER
    + """
Rate this step for originality, elaboration and groundedness (whole numbers 1-5) and answer \
with one JSON object."""
)
"""Fields: objective, scene_context, bag (BAG_LINE lines or NOTHING), history (HISTORY_LINE lines
or NOTHING), thought (or NO_THOUGHT), action, response."""

BAG_LINE = Template("- $name")
HISTORY_LINE = Template("[Step $step] $action -> $response")
NOTHING = "(none)"
NO_THOUGHT = "(the agent gave no Thought)"

CORRECTIVE = Template(
    """Your answer could not be read as scores ($reason). Reply with one JSON object only, with \
the keys "originality", "elaboration" and "groundedness", each a whole number from 1 to 5."""
)
"""User turn sent after a reply that is not a score; `reason` says what was wrong."""
