"""EscapeAgent (App. D.3): the Base policy plus task-list reflection and forethought candidates."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.escape.agents import escapeagent_prompts as prompts
from forkingpaths.benchmarks.escape.agents.parsing import (
    ActionCall,
    bag_lines,
    find_calls,
    fold_name,
    read_call,
)
from forkingpaths.benchmarks.escape.agents.react import ReActAgent, require_model
from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.env import Observation
from forkingpaths.core.records import ModelCallRecord
from forkingpaths.models.base import ChatModel, Message

TASK_FUNCTIONS: tuple[str, ...] = ("new", "update", "delete", "none")
"""The task-list maintaining calls of Prompt 5."""
TOOL_CANDIDATE_KINDS: tuple[str, ...] = ("craft", "apply")
"""What a new-tool forethought may propose (Prompt 7)."""
TASK_CANDIDATE_KINDS: tuple[str, ...] = ("click", "apply", "input")
"""What a new-task forethought may propose (Prompt 8)."""

_INDEX = re.compile(r"\d+")
_THOUGHT = re.compile(
    r"thought[\s*_`]*:(.*?)(?=^[\s>*_#`-]*actions?[\s*_`]*:|\Z)", re.I | re.S | re.M
)
_SEPARATORS = " \t|:-–—*_`.,;"
"""What may stand between a candidate call and its justification."""


@dataclass
class Task:
    """One entry of the task list: an unresolved target and what is known about solving it."""

    name: str
    target: str
    notes: str


@dataclass(frozen=True)
class TaskListOp:
    """A reflection's answer: `new(name, feedback)`, `update(index, feedback)`, `delete(index)`
    or `none()`; `index` is 1-based as the task list shows it."""

    kind: str
    index: int | None = None
    name: str = ""
    feedback: str = ""


NONE_OP = TaskListOp("none")


def parse_task_op(text: str) -> TaskListOp:
    """The last task-list call in a reflection reply; anything unreadable is `none()`.

    `new` needs a name (feedback may be empty); `update` and `delete` need an index (a number,
    `#2` and `task 2` are read as 2) and `update` a feedback. Commas inside a feedback are kept.
    """
    calls = find_calls(text, TASK_FUNCTIONS)
    if not calls:
        return NONE_OP
    call = calls[-1]
    args = call.args
    if call.kind == "new" and args and args[0]:
        return TaskListOp("new", name=args[0], feedback=", ".join(args[1:]).strip())
    if call.kind in ("update", "delete") and args and (number := _INDEX.search(args[0])):
        feedback = ", ".join(args[1:]).strip()
        if call.kind == "delete":
            return TaskListOp("delete", index=int(number.group()))
        if feedback:
            return TaskListOp("update", index=int(number.group()), feedback=feedback)
    return NONE_OP


@dataclass(frozen=True)
class Candidate:
    """An action a forethought proposed, waiting in the queue with its justification."""

    call: ActionCall
    justification: str


def parse_candidates(text: str, kinds: tuple[str, ...]) -> list[Candidate]:
    """The candidate calls of a forethought reply: every call of `kinds` after its `Actions:`
    label (or anywhere when there is none), each with the text after it on its line as its
    justification, or the reply's Thought when that text is empty."""
    label = text.lower().rfind(prompts.ACTIONS_LABEL.lower())
    body = text[label + len(prompts.ACTIONS_LABEL) :] if label >= 0 else text
    thought = _THOUGHT.search(text)
    fallback = thought.group(1).strip() if thought else ""
    out = []
    for line in body.splitlines():
        calls = find_calls(line, kinds)
        for i, call in enumerate(calls):
            end = calls[i + 1].start if i + 1 < len(calls) else len(line)
            why = line[call.start + len(call.text) : end].lstrip(_SEPARATORS).rstrip()
            out.append(Candidate(call, why or fallback))
    return out


class EscapeAgent:
    """The Base policy plus EscapeAgent's reflection and forethought modules (App. D.3).

    Each step, in order:
    1. Reflection (after every step but the first of an attempt): one call with Prompt 5 as
       system and Prompt 6 (position, scene, possible actions, the task list, the last action and
       its response) as user, answered with `new(name, feedback)`, `update(index, feedback)`,
       `delete(index)` or `none()`; an unreadable answer or an index off the list is `none()`.
       A new task's target item is the last action's target (click/apply/input/craft), else the
       first current item its name or feedback mentions, else left blank.
    2. Forethought: when the reflection created a task, one call with Prompt 8 (the task, the
       bag tools, and the memory pad: the distinct environment responses of the working memory)
       proposing click/apply/input candidates; when the last step collected a tool still in the
       bag, one call with Prompt 7 (the tool, its description, the other bag tools, the task
       list) proposing craft/apply candidates. Candidates join the back of the queue (an action
       already queued is not queued twice).
    3. The queue is popped in order: the first candidate still valid for this observation (its
       item names among `items` (click: or `scene_tools`), its tool names in the bag, not a
       forbidden finish action) is the action, its justification the thought, at no further
       call; invalid ones are dropped. With the queue empty, the Base policy decides, with
       Prompt 4 (free exploration) appended to its user turn.

    The task list and the queue belong to one attempt: `reset` clears them.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.base = ReActAgent(model)
        self.tasks: list[Task] = []
        self.queue: deque[Candidate] = deque()

    def reset(self, instance: Instance, seed: int) -> None:
        self.base.reset(instance, seed)
        self.tasks = []
        self.queue = deque()

    async def act(self, observation: Observation) -> Decision:
        data = observation.data
        calls: list[ModelCallRecord] = []
        last = data.get("last")
        if isinstance(last, Mapping):
            task = await self._reflect(data, last, calls)
            if task is not None:
                await self._foresee_task(task, data, calls)
            for tool in _names(last.get("collected")):
                await self._foresee_tool(tool, data, calls)
        while self.queue:
            candidate = self.queue.popleft()
            if is_valid_candidate(candidate.call, data):
                self.base.remember(observation, candidate.justification)
                return Decision(
                    action=candidate.call.text, thought=candidate.justification, calls=calls
                )
        decision = await self.base.decide(observation, prompts.render_free_exploration())
        decision.calls = calls + decision.calls
        return decision

    def state(self) -> dict[str, Any]:
        return {}

    # ---- reflection ----

    def render_tasks(self) -> str:
        """The numbered task list as the prompts show it."""
        if not self.tasks:
            return prompts.NO_TASKS
        return "\n".join(
            prompts.render_task_line(i, t.name, t.target or "(unknown)", t.notes or "-")
            for i, t in enumerate(self.tasks, start=1)
        )

    async def _reflect(
        self, data: Mapping[str, Any], last: Mapping[str, Any], calls: list[ModelCallRecord]
    ) -> Task | None:
        user = prompts.render_reflection_user(
            scene=str(data.get("scene", "")),
            scene_description=str(data.get("scene_description", "")),
            possible_actions=str(data.get("possible_actions", "")),
            task_list=self.render_tasks(),
            action=str(last.get("action", "")),
            response=str(last.get("response", "")),
        )
        reply = await self._call(prompts.render_reflection_system(), user, "reflect", calls)
        return self.apply_op(parse_task_op(reply), data, last)

    def apply_op(
        self, op: TaskListOp, data: Mapping[str, Any], last: Mapping[str, Any] | None = None
    ) -> Task | None:
        """Carry out a task-list call; returns the task a `new` created (None otherwise)."""
        if op.kind == "new":
            task = Task(op.name, _task_target(op, data, last), op.feedback)
            self.tasks.append(task)
            return task
        if op.index is not None and 1 <= op.index <= len(self.tasks):
            if op.kind == "update":
                self.tasks[op.index - 1].notes = op.feedback
            elif op.kind == "delete":
                del self.tasks[op.index - 1]
        return None

    # ---- forethought ----

    async def _foresee_task(
        self, task: Task, data: Mapping[str, Any], calls: list[ModelCallRecord]
    ) -> None:
        user = prompts.render_task_forethought_user(
            name=task.name,
            target=task.target or "(unknown)",
            notes=task.notes,
            bag=bag_lines(str(data.get("tools_in_bag", ""))),
            memory_pad=_memory_pad(data),
        )
        system = prompts.render_task_forethought_system()
        reply = await self._call(system, user, "forethought", calls)
        self._enqueue(parse_candidates(reply, TASK_CANDIDATE_KINDS))

    async def _foresee_tool(
        self, tool: str, data: Mapping[str, Any], calls: list[ModelCallRecord]
    ) -> None:
        bag = [t for t in data.get("bag", []) if isinstance(t, Mapping)]
        mine = [t for t in bag if fold_name(str(t.get("name", ""))) == fold_name(tool)]
        if not mine:
            return  # used up or never reached the bag: nothing to plan for
        others = "\n".join(
            f"<applicable tool> {t.get('name', '')}: {t.get('desc', '')}"
            for t in bag
            if t not in mine
        )
        user = prompts.render_tool_forethought_user(
            tool=str(mine[0].get("name", tool)),
            description=str(mine[0].get("desc", "")),
            bag=others,
            task_list=self.render_tasks(),
        )
        system = prompts.render_tool_forethought_system()
        reply = await self._call(system, user, "forethought", calls)
        self._enqueue(parse_candidates(reply, TOOL_CANDIDATE_KINDS))

    def _enqueue(self, candidates: Iterable[Candidate]) -> None:
        queued = {c.call.key for c in self.queue}
        for candidate in candidates:
            if candidate.call.key not in queued:
                self.queue.append(candidate)
                queued.add(candidate.call.key)

    async def _call(
        self, system: str, user: str, purpose: str, calls: list[ModelCallRecord]
    ) -> str:
        messages = [Message(role="system", content=system), Message(role="user", content=user)]
        completion = await self.model.complete(messages, self.base.params)
        calls.append(ModelCallRecord.from_completion(completion, purpose=purpose))
        return completion.text


def is_valid_candidate(call: ActionCall, data: Mapping[str, Any]) -> bool:
    """Whether a queued call still fits the observation: its names are items here (or, for a
    click, tools lying here) and tools in the bag, and it is no forbidden finish action."""
    items = {fold_name(str(n)) for n in data.get("items", [])}
    lying = {fold_name(str(n)) for n in data.get("scene_tools", [])}
    bag = {fold_name(str(t.get("name", ""))) for t in data.get("bag", []) if isinstance(t, Mapping)}
    forbidden = {c.key for f in data.get("forbidden", []) if (c := read_call(str(f)))}
    if call.key in forbidden:
        return False
    args = [fold_name(a) for a in call.args]
    if call.kind == "click":
        return len(args) == 1 and args[0] in items | lying
    if call.kind == "apply":
        return len(args) == 2 and args[0] in bag and args[1] in items
    if call.kind == "craft":
        return len(args) == 2 and args[0] != args[1] and set(args) <= bag
    if call.kind == "input":
        return len(args) == 2 and bool(call.args[0].strip()) and args[1] in items
    return False


def _names(value: Any) -> list[str]:
    """Tool names from `last["collected"]` (a name, a list of names, or nothing)."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _task_target(op: TaskListOp, data: Mapping[str, Any], last: Mapping[str, Any] | None) -> str:
    if last and last.get("kind") in ("click", "apply", "input", "craft") and last.get("target"):
        return str(last["target"])
    mentioned = fold_name(f"{op.name} {op.feedback}")
    for item in data.get("items", []):
        if fold_name(str(item)) in mentioned:
            return str(item)
    return ""


def _memory_pad(data: Mapping[str, Any]) -> str:
    """The distinct environment responses of the working memory, oldest first."""
    seen: list[str] = []
    for entry in data.get("history", []):
        response = str(entry.get("response", "")).strip() if isinstance(entry, Mapping) else ""
        if response and response not in seen:
            seen.append(response)
    return "\n".join(f"- {r}" for r in seen)


def make_escapeagent(
    benchmark: Benchmark | None = None, model: ChatModel | None = None
) -> EscapeAgent:
    """Factory of the `escapeagent` agent (App. D.3)."""
    return EscapeAgent(require_model(model, "escapeagent"))
