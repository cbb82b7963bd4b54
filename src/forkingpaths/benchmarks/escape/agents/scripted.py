"""Scripted escape model `escape-explorer`: answers every prompt the escape agents send, offline.

It is a deterministic stand-in for a model, not a solver: it reads the prompt text the way a
model would and answers in each prompt's format, so the Base, Self-Refine, EscapeAgent, ReDNA and
R-only loops run end to end without a network. It keeps no state (ScriptedPolicy contract).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from forkingpaths.benchmarks.escape.actions import fold_name, parse_action
from forkingpaths.benchmarks.escape.agents import escapeagent_prompts, redna_prompts
from forkingpaths.core.chat import Message, ModelParams

# Lines of the env's rendered blocks (docs/dev/escape-engine.md §3).
_ITEM = re.compile(r"^\s*<interactable item>\s*(.+?)\s*$", re.MULTILINE)
_SCENE = re.compile(r"^\s*<interactable scene>\s*(.+?):\s*It leads to\s*(.+?)\s*$", re.MULTILINE)
_TOOL = re.compile(r"^\s*<applicable tool>\s*(.+?)(?::\s.*)?$", re.MULTILINE)
_STEP_HEADER = re.compile(r"^\[Step (\d+)\]\s*$", re.MULTILINE)
_ACT_STEP = re.compile(r"\[Step (\d+)\]")
_FORBIDDEN = re.compile(r"^\s*\*\s*(.+?)\s*$", re.MULTILINE)
_TASK = re.compile(
    r"^\s*(?:(\d+)\.\s*)?\[Task\] Name: (.*), Target Item: (.*?)\s*$(?:\n\s*Notes: (.*)$)?",
    re.MULTILINE,
)
_NEW_TOOL = re.compile(r"^<new tool>:\s*(.+?)\s*$", re.MULTILINE)
_FAILED_ON_TARGET = re.compile(r"^\s*\*\s*(.+?) \(x\d+\) -> ", re.MULTILINE)
_SUBSTANTIVE = re.compile(r"^Failures on this target other than click: (\d+)\s*$", re.MULTILINE)
_FAILED_ENTRY = re.compile(r"^\s*\d+\.\s*(.+?) \(failed \d+ times?\)\s*$", re.MULTILINE)
_FAILURE_WORDS = re.compile(
    r"\b(nothing happens|no effect|not|cannot|can't|won't|doesn't|isn't|unable|fail\w*|"
    r"refuse\w*|blocked|invalid|unknown|still)\b",
    re.IGNORECASE,
)

NO_STATE = "Thought: I cannot find an escape-room state in this prompt.\nAction: none()"
"""The reply to a prompt the policy does not recognise (the env records it as invalid)."""


def prompt_kind(messages: list[Message]) -> str:
    """Which prompt the last user turn is: `dn` (Prompt 11, or the corrective turn after a DN
    reply), `tool-forethought`, `task-forethought`, `reflection` or `act` (anything else:
    Prompt 2, alone or with a suffix)."""
    text = _last_user(messages)
    if redna_prompts.DIVERGENT_INPUTS in text or text.startswith(redna_prompts.DN_RETRY_MARKER):
        return "dn"
    if text.startswith(escapeagent_prompts.TOOL_FORETHOUGHT_MARKER):
        return "tool-forethought"
    if text.startswith(escapeagent_prompts.TASK_FORETHOUGHT_MARKER):
        return "task-forethought"
    if re.search(rf"^{re.escape(escapeagent_prompts.REFLECTION_MARKER)}$", text, re.MULTILINE):
        return "reflection"
    return "act"


class EscapeExplorerPolicy:
    """`scripted/escape-explorer`: a scripted, deterministic explorer for the escape agents.

    Act prompts (Prompt 2 with any suffix): the first action, in this order, that the recent
    history does not hold, that a "failures by target" block (R-only) does not list, and that is
    no forbidden finish action: click each interactable item or visible tool not yet in the bag
    (clicking collects tools), apply each bag tool to each item, craft each ordered pair of bag
    tools, move to each neighbouring scene; then the first one not in the recent history even if
    listed as failed; when every one was tried recently, the one tried longest ago. Reflection
    prompts: `delete(i)` when a task's target answered without a failure word, `update(i, ...)`
    when it failed again, `new(...)` for a failed click/apply/input on an untracked item,
    otherwise `none()`. Forethought prompts: an apply to the first task's target and a craft
    with the first other bag tool (new tool), or a click and an apply on the task's target (new
    task). DN prompts (and the corrective turn
    after a DN reply): a short divergent list and an apply/input/craft on the target that the
    shown failed attempts do not hold, the search starting at an offset given by the target's
    non-click failure count.
    """

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        kind = prompt_kind(messages)
        text = _last_user(messages)
        if kind == "dn":
            # A corrective turn is answered from the Prompt 11 it follows.
            dn = [m.content for m in messages if redna_prompts.DIVERGENT_INPUTS in m.content]
            return answer_dn(dn[-1] if dn else text)
        if kind == "tool-forethought":
            return answer_tool_forethought(text)
        if kind == "task-forethought":
            return answer_task_forethought(text)
        if kind == "reflection":
            return answer_reflection(text)
        return answer_act(text)


def _last_user(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def _key(action: str) -> str:
    call = parse_action(action)
    return call.key if call is not None else fold_name(action)


@dataclass(frozen=True)
class _Scene:
    items: list[str]
    bag: list[str]
    scenes: list[str]
    history: list[str]
    forbidden: set[str]
    failed: set[str]
    """Actions an R-only "failures by target" block lists."""


def _read_scene(text: str) -> _Scene:
    # History comes first in Prompt 2 and ends where the objective starts.
    head, _, rest = text.partition("YOUR OBJECTIVE:")
    if not rest:
        head, rest = "", text
    history = []
    for block in _STEP_HEADER.split(head)[2::2]:
        for line in block.splitlines():
            if line.startswith("Action:"):
                history.append(_key(line.removeprefix("Action:").strip()))
    rest, _, failures = rest.partition(redna_prompts.FAILURES_BY_TARGET_HEADING)
    _, _, diversity = rest.partition("DIVERSITY CONSTRAINT")
    bag = [m.group(1) for m in _TOOL.finditer(rest)]
    in_bag = {fold_name(t) for t in bag}
    return _Scene(
        items=[m.group(1) for m in _ITEM.finditer(rest) if fold_name(m.group(1)) not in in_bag],
        bag=bag,
        scenes=[m.group(2) for m in _SCENE.finditer(rest)],
        history=history,
        forbidden={_key(m.group(1)) for m in _FORBIDDEN.finditer(diversity)},
        failed={_key(m.group(1)) for m in _FAILED_ON_TARGET.finditer(failures)},
    )


def _reply(thought: str, action: str) -> str:
    return f"Thought: {thought}\nAction: {action}"


def answer_act(text: str) -> str:
    """An act prompt's reply: the explorer's next action (see EscapeExplorerPolicy)."""
    scene = _read_scene(text)
    options: list[tuple[str, str]] = [
        (f"click({item})", f"I have not looked at {item} lately; clicking it shows what it is.")
        for item in scene.items
    ]
    options += [
        (f"apply({tool}, {item})", f"{tool} from my bag might change {item}; untried lately.")
        for tool in scene.bag
        for item in scene.items
    ]
    options += [
        (f"craft({base}, {extra})", f"Working {extra} into {base} may give it a new capability.")
        for base in scene.bag
        for extra in scene.bag
        if base != extra
    ]
    options += [
        (f"move({name})", f"Nothing new to try here, so I go to {name}.") for name in scene.scenes
    ]
    options = [o for o in options if _key(o[0]) not in scene.forbidden]
    if not options:
        return NO_STATE
    recent = set(scene.history)
    for action, thought in options:
        if _key(action) not in recent and _key(action) not in scene.failed:
            return _reply(thought, action)
    for action, thought in options:
        if _key(action) not in recent:
            return _reply(f"{thought} It failed before, but nothing else is left.", action)
    # Everything was tried within the working memory: retry what was tried longest ago.
    last_seen = {key: i for i, key in enumerate(scene.history)}
    action, _ = min(options, key=lambda o: last_seen.get(_key(o[0]), -1))
    return _reply("Every option here was tried recently; I retry the oldest one.", action)


def answer_reflection(text: str) -> str:
    """A reflection prompt's reply: one task-list call (see EscapeExplorerPolicy)."""
    lines = text.splitlines()
    prefix = "Your action:"
    action = next((ln.removeprefix(prefix).strip() for ln in lines if ln.startswith(prefix)), "")
    _, _, after = text.partition(escapeagent_prompts.REFLECTION_MARKER + "\n")
    response = after.split("\n\n", 1)[0].strip()
    call = parse_action(action)
    if call is None or call.kind == "move" or not call.args:
        return "none()"
    target = (
        call.args[1] if call.kind in ("apply", "input") and len(call.args) > 1 else call.args[0]
    )
    failed = _FAILURE_WORDS.search(response) is not None
    for match in _TASK.finditer(text):
        if match.group(1) and fold_name(match.group(3)) == fold_name(target):
            index, notes = match.group(1), (match.group(4) or "").strip()
            if not failed:
                return f"delete({index})"
            return f"update({index}, {notes}; {call.text} failed too)"
    if failed and call.kind in ("click", "apply", "input"):
        first = response.split(". ")[0].strip().rstrip(".")
        return f"new(deal with {target}, {call.text} did not work: {first})"
    return "none()"


def answer_tool_forethought(text: str) -> str:
    """A new-tool forethought's reply: up to two craft/apply candidates."""
    found = _NEW_TOOL.search(text)
    tool = found.group(1) if found else ""
    others = [
        t for t in (m.group(1) for m in _TOOL.finditer(text)) if fold_name(t) != fold_name(tool)
    ]
    tasks = [(m.group(1), m.group(3)) for m in _TASK.finditer(text) if m.group(1)]
    lines = []
    if tool and tasks and tasks[0][1] != "(unknown)":
        index, target = tasks[0]
        lines.append(f"apply({tool}, {target}) | task {index}: {tool} may be what {target} needs.")
    if tool and others:
        lines.append(f"craft({tool}, {others[0]}) | The two may combine into a more capable tool.")
    body = "\n".join(lines) if lines else "none"
    sep = "\n" if lines else " "
    return (
        f"Thought: I look for tasks and bag tools that {tool or 'the tool'} connects to.\n"
        f"{escapeagent_prompts.ACTIONS_LABEL}{sep}{body}"
    )


def answer_task_forethought(text: str) -> str:
    """A new-task forethought's reply: a click on the target and an apply of the first tool."""
    found = _TASK.search(text)
    target = found.group(3) if found else ""
    bag = [m.group(1) for m in _TOOL.finditer(text)]
    if not target or target == "(unknown)":
        label = escapeagent_prompts.ACTIONS_LABEL
        return f"Thought: The task names no target I can act on.\n{label} none"
    lines = [f"click({target}) | A simple inspection comes first."]
    if bag:
        lines.append(f"apply({bag[0]}, {target}) | {bag[0]} might meet what the task needs.")
    return (
        f"Thought: I start with the simplest interactions with {target}.\n"
        f"{escapeagent_prompts.ACTIONS_LABEL}\n" + "\n".join(lines)
    )


def answer_dn(text: str) -> str:
    """A DN prompt's reply: 2-4 divergent candidates, then one apply/input/craft on the target."""
    divergent, _, convergent = text.partition(redna_prompts.CONVERGENT_INPUTS)
    _, _, divergent = divergent.partition(redna_prompts.DIVERGENT_INPUTS)
    lines = divergent.strip().splitlines()
    target = lines[1].strip() if len(lines) > 1 and lines[0].startswith("Target item") else ""
    bag = [m.group(1) for m in _TOOL.finditer(divergent)]
    items = {fold_name(m.group(1)) for m in _ITEM.finditer(convergent)}
    failed = {_key(m.group(1)) for m in _FAILED_ENTRY.finditer(convergent)}
    if fold_name(target) in items:
        candidates = [f"apply({tool}, {target})" for tool in bag]
        candidates.append(f"input(1234, {target})")
    else:
        candidates = [
            f"craft({target}, {tool})" for tool in bag if fold_name(tool) != fold_name(target)
        ]
    candidates += [f"craft({a}, {b})" for a in bag for b in bag if a != b]
    if not candidates:
        return NO_STATE
    # The start of the search turns with the target's non-click count, so repeated DN steps on
    # one target begin at different candidates.
    count = _SUBSTANTIVE.search(text)
    offset = int(count.group(1)) % len(candidates) if count else 0
    turned = candidates[offset:] + candidates[:offset]
    choice = next((c for c in turned if _key(c) not in failed), turned[0])
    listed = "; ".join(f"({i}) {c}" for i, c in enumerate(candidates[:4], start=1))
    return _reply(
        f"Divergent candidates: {listed}. Convergent: {choice} is valid and has not failed on "
        f"{target} yet, so it changes the failed mechanism.",
        choice,
    )
