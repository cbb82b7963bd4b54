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
    """You are a one-off reasoning module inside a text environment: you turn the feedback of \
failed attempts into a creative next step.

For this step the usual action policy is paused, because the agent has failed several times \
on one and the same target item.
Pick the NEXT action by first widening the range of ideas and then narrowing it down \
(a divergent, then a convergent phase).

Actions you may use here:
- apply(<tool in your bag>, <interactable item in the current scene>)
- input(string, <interactable item in the current scene>)
- craft(<base tool in your bag>, <ingredient tool in your bag>)

Rules:
- Every name you write must appear under Possible Actions or Tools in Bag.
- apply(): a tool from the bag first, an item of the current scene second.
- craft(): two tools from the bag; swapping them gives a different craft.
- input(): its target is an item of the current scene.
- This step ends in an apply(), input() or craft(); click() and move() are not allowed here.

Proceed in two phases:
1. Divergent phase: sketch varied mechanisms and the actions that would carry them out, without \
committing to any of them.
2. Convergent phase: weigh the sketches against the objective, the valid actions and the \
failures recorded so far, and commit to a single action the game will accept.

Stay within these three kinds of mechanism:
1. apply(): a tool from your bag used on that same target in a way not tried yet.
2. input(): a string for that same target, taken from something you have observed.
3. craft(): two tools combined into something that can do what neither could alone, for the \
target or for the objective.

Thought: ...
Action: ..."""
)

# Prompt 11: the DN module's user turn.
DN_USER_TEMPLATE = Template(
    """REFLECT / DIVERGE-NARROW STEP

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
Sketch two to four candidate mechanisms that differ in kind, each carried out by an apply(), \
input() or craft().
Options to consider:
- apply(tool, target item): a bag tool used on the target item for something other than its \
obvious purpose.
- input(string, target item): a number, word, name or ordering that something you observed \
points to.
- craft(tool A, tool B): two bag tools combined first, the result then taken back to the target.
Leave click() and move() out of the sketches.

$convergent_heading
Objective:
$objective

Failed attempts so far, with the environment's responses:
$failures

$possible_actions
$diversity
CONVERGENT PHASE
Settle on a single next action that the game will accept.
Rules:
- Do not resend any failed action unchanged.
- Discard any sketch that a recorded response already rules out.
- Use what the failures revealed to move away from the mechanism that failed.
- The choice must be an apply(), input() or craft() that is valid here and has not been tried.
- An input() string needs a source in what you have observed.
- If you pick a craft(), explain what the combined tool will be able to do.
- Only an apply(), input() or craft() is accepted on your Action line.

In your Thought, first state what the most recent failure reveals, then weigh two to four of your \
concrete sketches against each other, and justify the chosen action by what it adds that the \
failed attempt lacked.

Thought: ...
Action: ..."""
)

# The one corrective turn sent when the DN reply's action is no apply/input/craft (Table 14 "DN
# final actions"); it follows the reply as the next user turn.
DN_RETRY_TEMPLATE = Template(
    """$marker Your Action was `$action`, which this step cannot take: here the action has to \
be an apply(), an input() or a craft() written only with names listed under Possible Actions or \
Tools in Bag. Answer again in the same two lines:
Thought: ...
Action: ..."""
)
DN_RETRY_MARKER = "ACTION NOT ALLOWED IN THIS STEP."
"""First words of the corrective turn; also how the scripted policy spots it."""

FAILURE_ENTRY_TEMPLATE = Template(
    "$index. $action (failed $count time$plural)\n   Response: $response"
)
NO_FAILURES = "(no failure recorded on this target yet)"

# R-only (§5.2): the Reflect memory shown to the Base policy, appended to its user turn.
FAILURES_BY_TARGET_HEADING = "FAILURES BY TARGET"
"""First words of R-only's block; also how the scripted policy finds it."""
FAILURES_BY_TARGET_TEMPLATE = Template(
    """$heading (what has failed on each item in this trial):
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


def render_dn_retry(action: str) -> str:
    """The corrective user turn after a DN reply whose action is no apply/input/craft."""
    return DN_RETRY_TEMPLATE.substitute(marker=DN_RETRY_MARKER, action=action.strip() or "(none)")


def render_failure_entry(index: int, action: str, response: str, count: int) -> str:
    """One failed (action, response) pair of a target's memory, for Prompt 11."""
    return FAILURE_ENTRY_TEMPLATE.substitute(
        index=index, action=action, count=count, plural="" if count == 1 else "s", response=response
    )


def render_failures_by_target(targets: str) -> str:
    """R-only's block; `targets` holds the rendered headers and entries."""
    return FAILURES_BY_TARGET_TEMPLATE.substitute(
        heading=FAILURES_BY_TARGET_HEADING, targets=targets
    )


def render_target_header(target: str, failure_count: int, substantive_count: int) -> str:
    return TARGET_HEADER_TEMPLATE.substitute(
        target=target,
        failure_count=failure_count,
        plural="" if failure_count == 1 else "s",
        substantive_count=substantive_count,
    )


def render_target_entry(action: str, response: str, count: int) -> str:
    return TARGET_ENTRY_TEMPLATE.substitute(action=action, count=count, response=response)
