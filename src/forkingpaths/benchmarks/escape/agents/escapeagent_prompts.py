"""Prompts of EscapeAgent (App. D.3): Prompts 4-8 (free exploration, reflection, forethought).

Each carries the information, rules and output format of the paper's figure (App. F, Figures
9-13) in our own words. The base step uses Prompt 1 and 2 (`react_prompts`, `..observation`).
The markers below are first lines the scripted policy recognises a prompt by.
"""

from __future__ import annotations

from string import Template

REFLECTION_MARKER = "Response from the environment:"
"""In the reflection user turn (Prompt 6) only."""
TOOL_FORETHOUGHT_MARKER = "A new tool is in your bag:"
"""In the new-tool forethought user turn (Prompt 7) only: a tool just collected, or a base tool
just changed by a successful craft."""
TASK_FORETHOUGHT_MARKER = "The task you just found:"
"""In the new-task forethought user turn (Prompt 8) only."""
ACTIONS_LABEL = "Actions:"
"""The label before a forethought's candidate list."""

# Prompt 4: appended to the Base user turn when the forethought queue is empty.
FREE_EXPLORATION_TEMPLATE = Template(
    """You are in free-exploration mode. Go to scenes you have not seen yet, work with the items \
(click them, enter strings into them, apply tools to them) and see whether your bag tools combine \
into new ones:
- If an <interactable item> here has not been touched by any of your actions yet, click it \
before anything else.
- If every item here has been tried, head for an <interactable scene> you have not visited, or \
return to the scene you came from.
- Give a valid action with its thought, respecting the system prompt and the Possible Actions \
list.
Leave out actions that already appear in your history or in earlier steps. Your Response:"""
)

# Prompt 5: the reflection system prompt. `update` takes the task's index besides the feedback
# (the paper's figure writes update(updated_feedback)): the list is numbered and several tasks
# may be open, so the index says which one the new feedback belongs to (see EscapeAgent).
REFLECTION_SYSTEM_TEMPLATE = Template(
    """Your role is to look back at the action just taken and at what the environment answered, \
and to keep a task list with advice on how each task might be solved.

The list is for obstacles you cannot get past yet with what you carry but expect to return to: \
record each one with whatever clues will help you when you come back to it.

Once you have analysed the action and the response, reply with exactly one call that maintains \
the list. The calls you may use:
new(task_name, feedback)
    Adds a task: a short name for it, and what solving it requires.
update(index, updated_feedback)
    Rewrites the notes of the task numbered index: they keep everything they said so far, plus \
one further lesson this action taught you.
delete(index)
    Removes the task numbered index, because it is done or no longer useful.
none()
    Changes nothing; takes no parameter.

Examples of valid calls: new(reach the weather vane, it turns on the roof ridge far out of reach; \
something long might get to it), update(2, the sundial plinth will not rotate and pushing did \
nothing; it may need leverage), delete(1), none()."""
)

# Prompt 6: the reflection user turn. The task list is shown so that update and delete can name
# an index (the paper's figure leaves it out of the template but its functions use it).
REFLECTION_USER_TEMPLATE = Template(
    """Your current position:
$scene

$scene_description

$possible_actions

Current task list:
$task_list

Your action: $action

$marker
$response

Reply with a single line holding the one task-list call. As the system prompt explains, take the \
clue from the environment's response and put it into the call's arguments.

Your Response:"""
)

# Prompt 7: forethought for a new tool (system, then user turn).
TOOL_FORETHOUGHT_SYSTEM_TEMPLATE = Template(
    """A tool has just entered your bag (newly picked up, or changed by a craft). Think \
inventively about what it could be good for.

It can be put to use in two ways:
1. As the base of a craft with another bag tool, giving a changed tool: craft(<new tool>, <tool \
from your bag>).
2. On the target item of a listed task: apply(<new tool>, <target item of a task>).

Hints:
1. Compare what the task notes say is needed with what the descriptions say the tools are like.
2. In your Thought, go through the other bag tools as craft partners and the task targets as \
apply targets, by name.
3. Under Actions, write as many craft/apply calls as you find worth trying (none is fine), one \
per line, each followed by ` | ` and its reason. For an apply, give the task's number and the \
property of the tool that should make it work there.

Answer in this form:
Thought: ...
$actions_label
craft(<new tool>, <tool from your bag>) | what the combination would be able to do
apply(<new tool>, <target item>) | task <index>: which property of the tool fits the task
(write `$actions_label none` when you have no candidate)"""
)

TOOL_FORETHOUGHT_USER_TEMPLATE = Template(
    """$marker
<new tool>: $tool
Description: $description

Other tools in your bag:
$bag

Open tasks:
$task_list

Write your Thought and Actions in the format the system prompt gives. Take your time, and do not \
hold back ideas that are plausible even if unusual."""
)

# Prompt 8: forethought for a newly found task (system, then user turn).
TASK_FORETHOUGHT_SYSTEM_TEMPLATE = Template(
    """A task has just been added to your list. Think inventively about whether something you \
already carry could settle it.

A task is typically settled in one of three ways:
1. Clicking its target item.
2. Applying one of your bag tools to its target item.
3. Entering a string into its target item.

Hints:
1. Work out what the task calls for. A target you have not clicked yet deserves a plain click \
before anything else.
2. Look through the tool descriptions and the clues gathered in the memory pad for anything \
that bears on the task.
3. In your Thought, weigh all three routes: a click, a tool applied, a string entered.
4. Under Actions, write as many click/apply/input calls as you find worth trying (none is fine), \
one per line, each followed by ` | ` and its reason.

Answer in this form:
Thought: ...
$actions_label
click(<target item>) | why
apply(<tool from your bag>, <target item>) | why
input(<string>, <target item>) | where the string comes from
(write `$actions_label none` when you have no candidate)"""
)

TASK_FORETHOUGHT_USER_TEMPLATE = Template(
    """$marker
[Task] Name: $name, Target Item: $target
$notes

Tools in your bag:
$bag

Hints from the memory pad:
$memory_pad

Write your Thought and Actions in the format the system prompt gives. Take your time, and do not \
hold back ideas that are plausible even if unusual."""
)

# The thought of a step the agent takes towards a queued candidate's scene (no model call).
ROUTE_THOUGHT_TEMPLATE = Template("I head for $scene to try $action there: $why")

TASK_LINE_TEMPLATE = Template("$index. [Task] Name: $name, Target Item: $target\n   Notes: $notes")
NO_TASKS = "(no tasks yet)"
NO_TOOLS = "(none)"
NO_HINTS = "(no hints yet)"


def render_free_exploration() -> str:
    """Prompt 4."""
    return FREE_EXPLORATION_TEMPLATE.substitute()


def render_reflection_system() -> str:
    """Prompt 5."""
    return REFLECTION_SYSTEM_TEMPLATE.substitute()


def render_reflection_user(
    *,
    scene: str,
    scene_description: str,
    possible_actions: str,
    task_list: str,
    action: str,
    response: str,
) -> str:
    """Prompt 6."""
    return REFLECTION_USER_TEMPLATE.substitute(
        scene=scene,
        scene_description=scene_description,
        possible_actions=possible_actions,
        task_list=task_list,
        action=action,
        marker=REFLECTION_MARKER,
        response=response,
    )


def render_tool_forethought_system() -> str:
    """Prompt 7, system part."""
    return TOOL_FORETHOUGHT_SYSTEM_TEMPLATE.substitute(actions_label=ACTIONS_LABEL)


def render_tool_forethought_user(*, tool: str, description: str, bag: str, task_list: str) -> str:
    """Prompt 7, user part."""
    return TOOL_FORETHOUGHT_USER_TEMPLATE.substitute(
        marker=TOOL_FORETHOUGHT_MARKER,
        tool=tool,
        description=description,
        bag=bag or NO_TOOLS,
        task_list=task_list,
    )


def render_task_forethought_system() -> str:
    """Prompt 8, system part."""
    return TASK_FORETHOUGHT_SYSTEM_TEMPLATE.substitute(actions_label=ACTIONS_LABEL)


def render_task_forethought_user(
    *, name: str, target: str, notes: str, bag: str, memory_pad: str
) -> str:
    """Prompt 8, user part."""
    return TASK_FORETHOUGHT_USER_TEMPLATE.substitute(
        marker=TASK_FORETHOUGHT_MARKER,
        name=name,
        target=target,
        notes=notes,
        bag=bag or NO_TOOLS,
        memory_pad=memory_pad or NO_HINTS,
    )


def render_route_thought(*, scene: str, action: str, why: str) -> str:
    """The thought of a move towards the scene of a queued candidate."""
    return ROUTE_THOUGHT_TEMPLATE.substitute(scene=scene, action=action, why=why or "(no reason)")


def render_task_line(index: int, name: str, target: str, notes: str) -> str:
    """One numbered entry of the task list (1-based index)."""
    return TASK_LINE_TEMPLATE.substitute(index=index, name=name, target=target, notes=notes)
