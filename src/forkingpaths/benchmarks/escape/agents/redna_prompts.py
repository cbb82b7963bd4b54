"""Prompts of ReDNA (§4, App. D.4): Prompt 10 and 11 (the DN module) and R-only's failure block.

Prompts 10 and 11 carry the information, rules and output format of the paper's Figures 15-16 in
our own words; the two input sections keep the paper's headings, because the input separation
between them is the method (§4.2): the divergent inputs hold only the target, the scene and the
bag, and the goal and failure memory come back only in the convergent inputs.
"""

from __future__ import annotations

from string import Template

DIVERGENT_INPUTS = "DIVERGENT PHASE INPUTS"
"""Heading of the goal-free, failure-free inputs; also how the scripted policy spots Prompt 11."""
CONVERGENT_INPUTS = "CONVERGENT PHASE INPUTS"
"""Heading of the inputs reintroduced for the selection."""

# Prompt 10: the DN module's system prompt.
DN_SYSTEM_TEMPLATE = Template(
    """You are a single-shot creative reasoning module, guided by feedback, inside a text \
environment.

The usual action policy is switched off for this step because the agent has piled up failed \
interactions with one and the same target item.
Your task is to pick the NEXT action through a Divergent-then-Convergent process.

Action grammar of the game:
- apply(<tool in your bag>, <interactable item in the current scene>)
- input(string, <interactable item in the current scene>)
- craft(<base tool in your bag>, <ingredient tool in your bag>)

Rules:
- Use only names that appear under Possible Actions or Tools in Bag.
- apply() takes a bag tool first and an item of the current scene second.
- craft() combines two bag tools; the order of the two matters.
- input() can only target an item of the current scene.
- Your final action must be an apply(), input() or craft(). Never choose click() or move().

Work in two phases:
1. Divergent phase: come up with varied candidate mechanisms and rough actions. Do not settle on \
the final action yet.
2. Convergent phase: bring in the objective, the valid actions and the accumulated evidence of \
failure, and choose exactly one valid next action.

Use only creative interaction mechanisms:
1. A new tool-based mechanism on the same target, through apply().
2. An input grounded in evidence on the same target, through input().
3. A craft of two tools that creates a new capability for the target or the objective.

Thought: ...
Action: ..."""
)

# Prompt 11: the DN module's user turn.
DN_USER_TEMPLATE = Template(
    """FEEDBACK-GUIDED REFLECT / DIVERGE-NARROW MODULE

Current step: $step
Current position: $scene
Feedback target item: $target
Failures on this target: $failure_count
Failures on this target other than click: $substantive_count

$divergent_heading
Target item:
$target

Current scene context:
$scene_description

Tools in Bag:
$tools_in_bag

DIVERGENT PHASE
Come up with 2-4 clearly different candidate mechanisms that use apply(), input() or craft().
Think about:
- apply(tool, target item): use a bag tool on the target item in an unusual way.
- input(string, target item): try a code, word, label or sequence backed by evidence.
- craft(tool A, tool B): join two bag tools first, then come back to the target.
Do not propose click() or move().

$convergent_heading
Objective:
$objective

Failed attempts so far, with the environment's responses:
$failures

$possible_actions
$diversity
CONVERGENT PHASE
Choose exactly one valid next action.
Rules:
- Never repeat a failed action exactly.
- Drop candidates that the failure responses contradict.
- Let the accumulated feedback change the mechanism that failed.
- Choose an apply(), input() or craft() that is valid and not a repeat.
- An input() string must rest on evidence.
- For a craft(), say why the two tools together give a useful capability.
- The final Action must begin with apply(), input() or craft().

Before your final answer, say what the latest failure tells you, compare 2-4 concrete candidates, \
and pick the final action because it supplies what the failed action was missing.

Thought: ...
Action: ..."""
)

FAILURE_ENTRY_TEMPLATE = Template(
    "$index. $action (failed $count time$plural)\n   Response: $response"
)
NO_FAILURES = "(no click, apply or input failure recorded on this target)"

# R-only (§5.2): the Reflect memory shown to the Base policy, appended to its user turn.
FAILURES_BY_TARGET_TEMPLATE = Template(
    """FAILURES BY TARGET (what has failed on each item in this trial):
$targets
Use this record to avoid repeating a failed interaction and to change mechanism on a target that \
keeps failing."""
)
TARGET_HEADER_TEMPLATE = Template(
    "- $target: $failure_count failed attempt$plural ($substantive_count with apply/craft/input)"
)
TARGET_ENTRY_TEMPLATE = Template("  * $action (x$count) -> $response")


def render_dn_system() -> str:
    """Prompt 10."""
    return DN_SYSTEM_TEMPLATE.substitute()


def render_dn_user(
    *,
    step: object,
    scene: str,
    target: str,
    failure_count: int,
    substantive_count: int,
    scene_description: str,
    tools_in_bag: str,
    objective: str,
    failures: str,
    possible_actions: str,
    diversity: str,
) -> str:
    """Prompt 11; `diversity` is Prompt 3 (or "" when nothing is forbidden)."""
    return DN_USER_TEMPLATE.substitute(
        step=step,
        scene=scene,
        target=target,
        failure_count=failure_count,
        substantive_count=substantive_count,
        divergent_heading=DIVERGENT_INPUTS,
        scene_description=scene_description,
        tools_in_bag=tools_in_bag,
        convergent_heading=CONVERGENT_INPUTS,
        objective=objective,
        failures=failures or NO_FAILURES,
        possible_actions=possible_actions,
        diversity=diversity,
    )


def render_failure_entry(index: int, action: str, response: str, count: int) -> str:
    """One failed (action, response) pair of a target's memory, for Prompt 11."""
    return FAILURE_ENTRY_TEMPLATE.substitute(
        index=index, action=action, count=count, plural="" if count == 1 else "s", response=response
    )


def render_failures_by_target(targets: str) -> str:
    """R-only's block; `targets` holds the rendered headers and entries."""
    return FAILURES_BY_TARGET_TEMPLATE.substitute(targets=targets)


def render_target_header(target: str, failure_count: int, substantive_count: int) -> str:
    return TARGET_HEADER_TEMPLATE.substitute(
        target=target,
        failure_count=failure_count,
        plural="" if failure_count == 1 else "s",
        substantive_count=substantive_count,
    )


def render_target_entry(action: str, response: str, count: int) -> str:
    return TARGET_ENTRY_TEMPLATE.substitute(action=action, count=count, response=response)
