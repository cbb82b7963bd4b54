"""Prompts of EscapeAgent (App. D.3): Prompts 4-8 (free exploration, reflection, forethought).

Each carries the information, rules and output format of the paper's figure (App. F, Figures
9-13) in our own words. The base step uses Prompt 1 and 2 (`react_prompts`, `..observation`).
The markers below are first lines the scripted policy recognises a prompt by.
"""

from __future__ import annotations

from string import Template

REFLECTION_MARKER = "Response from the environment:"
"""In the reflection user turn (Prompt 6) only."""
TOOL_FORETHOUGHT_MARKER = "You just collected a new tool:"
"""In the new-tool forethought user turn (Prompt 7) only."""
TASK_FORETHOUGHT_MARKER = "The task you just found:"
"""In the new-task forethought user turn (Prompt 8) only."""
ACTIONS_LABEL = "Actions:"
"""The label before a forethought's candidate list."""

# Prompt 4: appended to the Base user turn when the forethought queue is empty.
FREE_EXPLORATION_TEMPLATE = Template(
    """You are now exploring the scenes on your own. Visit scenes you have not seen, interact \
with the items through click, input or apply, and try crafting new tools:
- If some <interactable item> here has not received any action from you yet, click it first.
- Otherwise, go to an <interactable scene> you have not visited yet, or back to the scene you \
came from.
- Keep to the rules of Possible Actions and of the system prompt, and give a valid action with \
its thought.
Do not repeat actions from the history or from earlier steps. Your Response:"""
)

# Prompt 5: the reflection system prompt.
REFLECTION_SYSTEM_TEMPLATE = Template(
    """You reflect on the action you just took and on the environment's answer, and you keep a \
task list with hints for solving each task.

The task list holds things you cannot solve yet with the tools you carry but expect to come back \
to later: write each one down with suggestions and hints for your future self.

After you have analysed your action and the environment's answer, give exactly one call that \
maintains the task list. The calls you may use:
new(task_name, feedback)
    Adds a task. task_name is a short name for it; feedback says what you need in order to solve it.
update(index, updated_feedback)
    Revises the task numbered index. updated_feedback keeps the task's earlier feedback and adds \
one new lesson learnt from the current action.
delete(index)
    Removes the task numbered index because it is solved or no longer useful.
none()
    Leaves the list unchanged; takes no parameter.

Examples of valid calls: new(open the steel cabinet, the cabinet has a four-digit lock; look for \
a code), update(2, the lid is rusted shut and the pliers slipped; something to loosen the rust \
may help), delete(1), none()."""
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

Now give, in one line, the one call that maintains the task list. Follow the system instructions: \
pull the hint out of the response and fill in the call's parameters.

Your Response:"""
)

# Prompt 7: forethought for a newly collected tool (system, then user turn).
TOOL_FORETHOUGHT_SYSTEM_TEMPLATE = Template(
    """Use your creativity to work out what the tool you just collected could be used for.

A tool is usually used in one of two ways:
1. Combine it with another tool from your bag into a new tool: craft(<collected tool>, <tool from \
your bag>).
2. Use it on the target item of a task: apply(<collected tool>, <target item of a task>).

Hints:
1. Read the task and tool descriptions carefully and look for links between them.
2. In your Thought, consider explicitly the bag tools you could craft with and the task targets \
you could apply to.
3. Under Actions, list zero or more craft/apply calls, one per line, each followed by ` | ` and \
its justification. For an apply, name the task's index and say why the tool could solve that task.

Answer in this form:
Thought: ...
$actions_label
craft(<collected tool>, <tool from your bag>) | why the two combine into something useful
apply(<collected tool>, <target item>) | task <index>: why the tool may solve the task
(write `$actions_label none` when you have no candidate)"""
)

TOOL_FORETHOUGHT_USER_TEMPLATE = Template(
    """$marker
<collected tool>: $tool
Description: $description

Other tools in your bag:
$bag

Tasks waiting to be solved:
$task_list

Give your Thought and Actions as the system prompt asks. Think it through and be bold in \
proposing plausible craft and apply actions."""
)

# Prompt 8: forethought for a newly found task (system, then user turn).
TASK_FORETHOUGHT_SYSTEM_TEMPLATE = Template(
    """Use your creativity to work out whether any tool you carry could solve the task you just \
found.

A task is usually solved in one of three ways:
1. Click its target item.
2. Apply a tool from your bag to its target item.
3. Input a string into its target item.

Hints:
1. Think about what the task needs. If you have not clicked the target yet, a simple click comes \
first.
2. Read the tool descriptions and the hints of the memory pad and connect them to the task.
3. In your Thought, consider click, apply and input possibilities.
4. Under Actions, list zero or more click/apply/input calls, one per line, each followed by ` | ` \
and its justification.

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

Give your Thought and Actions as the system prompt asks. Think it through and be bold in \
proposing plausible click, apply and input actions."""
)

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


def render_task_line(index: int, name: str, target: str, notes: str) -> str:
    """One numbered entry of the task list (1-based index)."""
    return TASK_LINE_TEMPLATE.substitute(index=index, name=name, target=target, notes=notes)
