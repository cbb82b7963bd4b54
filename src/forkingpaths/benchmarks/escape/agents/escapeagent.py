"""EscapeAgent (App. D.3): the Base policy plus task-list reflection and forethought candidates."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from forkingpaths.benchmarks.escape.actions import ActionCall, find_calls, fold_name, parse_action
from forkingpaths.benchmarks.escape.agents import escapeagent_prompts as prompts
from forkingpaths.benchmarks.escape.agents.attempts import AttemptAgent
from forkingpaths.benchmarks.escape.agents.parsing import bag_lines
from forkingpaths.benchmarks.escape.agents.react import ReActAgent
from forkingpaths.core.agent import Decision, require_model
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.chat import ChatModel, Message
from forkingpaths.core.env import Observation
from forkingpaths.core.records import ModelCallRecord

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
    scene: str = ""
    """The scene where the target item was seen ("" when unknown)."""


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


class EscapeAgent(AttemptAgent):
    """The Base policy plus EscapeAgent's reflection and forethought modules (App. D.3).

    Each step, in order:
    1. Bookkeeping from the observation: the agent's own map of the scenes it has observed
       (scene -> {move label -> destination scene}, and the items and lying tools last seen
       there), and the set of actions executed since the world last changed (cleared by every
       successful step but a move, which changes only the position; the env's meaningless-step
       rule ignores position too).
    2. Reflection, only after an interaction with an item (a click on an item, an apply, an
       input) or a craft, as EscapeBench's EscapeAgent does: moves, tool collection and invalid
       actions (no target) get no reflection call, which would cost a call and rarely change the
       list. One call with Prompt 5 as system and Prompt 6 (position, scene, possible actions,
       the task list, the last action and its response) as user, answered with
       `new(name, feedback)`, `update(index, feedback)`, `delete(index)` or `none()`; an
       unreadable answer or an index off the list is `none()`. A new task's target item is the
       last click/apply/input's target, else the first current item its name or feedback
       mentions, else left blank; the task records the scene where that item was seen. A `new`
       for a target that already has a task is turned into an update of that task (its feedback
       added to the notes) and starts no forethought: re-filing the same obstacle would loop.
       The paper's `update(updated_feedback)` takes the new feedback only; ours takes the task's
       index too, `update(index, feedback)`: the list is numbered and several tasks may be open,
       so the index says which task the feedback belongs to.
    3. Forethought: when the reflection created a task, one call with Prompt 8 (the task, the
       bag tools, and the memory pad: the distinct environment responses of the working memory)
       proposing click/apply/input candidates; when a tool entered the bag (collected) or a
       base tool changed (a successful craft: its new description is in the bag), one call with
       Prompt 7 (the tool, its description, the other bag tools, the task list) proposing
       craft/apply candidates. Candidates join the back of the queue (an action already queued
       is not queued twice).
    4. The queue is read from the front. A candidate whose names are all here (items among
       `items`, for a click also `scene_tools`; tools in the bag) is the action, its
       justification the thought, at no further call. One aimed at an item (or, for a click, a
       lying tool) last seen in another scene stays at the front while the agent walks there:
       the action is the first move of a shortest route over the agent's own map (named by the
       destination scene, which the env accepts like the label). A candidate is dropped when a
       name no longer exists anywhere the agent knows of (a tool not in the bag, an item in no
       observed scene), when it is a forbidden finish action, when it was already executed
       since the world last changed, or when no route to its scene is known. With the queue
       empty, the Base policy decides, with Prompt 4 (free exploration) appended to its user
       turn.

    The task list, the queue, the map and the executed set belong to one attempt:
    `start_attempt` clears them.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.base = ReActAgent(model)
        self.tasks: list[Task] = []
        self.queue: deque[Candidate] = deque()
        self.scene_moves: dict[str, dict[str, str]] = {}
        """Scene -> {move label -> destination scene}, as last observed there."""
        self.scene_names: dict[str, set[str]] = {}
        """Scene -> folded names of its interactable items and lying tools, as last observed."""
        self.executed: set[str] = set()
        """Keys of the actions executed since the world last changed."""
        self._items_before: set[str] | None = None
        """Folded item names of the previous observation (None at an attempt's start)."""

    def start_attempt(self, instance: Instance, seed: int) -> None:
        self.base.start_attempt(instance, seed)
        self.tasks = []
        self.queue = deque()
        self.scene_moves = {}
        self.scene_names = {}
        self.executed = set()
        self._items_before = None

    async def act(self, observation: Observation) -> Decision:
        self.follow_attempt(observation)
        data = observation.data
        calls: list[ModelCallRecord] = []
        last = data.get("last")
        items_before = self._items_before
        self.observe(data)
        if isinstance(last, Mapping):
            if reflects_on(last, items_before):
                task = await self._reflect(data, last, calls)
                if task is not None:
                    await self._foresee_task(task, data, calls)
            for tool in new_tools(last):
                await self._foresee_tool(tool, data, calls)
        decision = self.next_candidate(observation)
        if decision is not None:
            decision.calls = calls
            return decision
        decision = await self.base.decide(observation, prompts.render_free_exploration())
        decision.calls = calls + decision.calls
        return decision

    def state(self) -> dict[str, Any]:
        return {}

    # ---- bookkeeping ----

    def observe(self, data: Mapping[str, Any]) -> None:
        """Update the scene map, the items seen and the executed set from one observation."""
        scene = str(data.get("scene", ""))
        items = {fold_name(str(n)) for n in data.get("items", []) if str(n).strip()}
        lying = {fold_name(str(n)) for n in data.get("scene_tools", []) if str(n).strip()}
        if scene:
            moves = [m for m in data.get("moves", []) if isinstance(m, Mapping)]
            self.scene_moves[scene] = {
                str(m.get("label", "")): str(m.get("scene", "")) for m in moves if m.get("scene")
            }
            self.scene_names[scene] = items | lying
        self._items_before = items
        last = data.get("last")
        if not isinstance(last, Mapping):
            return
        if last.get("success") and last.get("kind") != "move":
            self.executed.clear()
        elif (key := _action_key(last)) is not None:
            self.executed.add(key)

    def locate(self, name: str) -> str | None:
        """The scene where the item or lying tool `name` was last seen, None if nowhere."""
        key = fold_name(name)
        recorded = [fold_name(t.scene) for t in self.tasks if fold_name(t.target) == key]
        scenes = [scene for scene, names in self.scene_names.items() if key in names]
        for scene in scenes:
            if fold_name(scene) in recorded:
                return scene
        return scenes[0] if scenes else None

    def route(self, start: str, goal: str) -> list[str]:
        """Destination scenes of a shortest walk from `start` to `goal` over the observed map
        ([] when `goal` is `start` or unreachable as far as the agent knows)."""
        previous: dict[str, str] = {start: start}
        frontier = deque([start])
        while frontier:
            scene = frontier.popleft()
            if scene == goal:
                path = []
                while scene != start:
                    path.append(scene)
                    scene = previous[scene]
                return path[::-1]
            for dest in self.scene_moves.get(scene, {}).values():
                if dest not in previous:
                    previous[dest] = scene
                    frontier.append(dest)
        return []

    # ---- the candidate queue ----

    def next_candidate(self, observation: Observation) -> Decision | None:
        """The action the queue gives at this observation (None when it is empty)."""
        data = observation.data
        here = str(data.get("scene", ""))
        while self.queue:
            candidate = self.queue[0]
            where = self.candidate_scene(candidate.call, data)
            if where == here:
                self.queue.popleft()
                self.base.remember(observation, candidate.justification)
                return Decision(action=candidate.call.text, thought=candidate.justification)
            path = self.route(here, where) if where else []
            if not path:
                self.queue.popleft()
                continue
            thought = prompts.render_route_thought(
                scene=where, action=candidate.call.text, why=candidate.justification
            )
            self.base.remember(observation, thought)
            return Decision(action=f"move({path[0]})", thought=thought)
        return None

    def candidate_scene(self, call: ActionCall, data: Mapping[str, Any]) -> str | None:
        """Where `call` can be carried out: the current scene, another scene the agent knows
        holds its item, or None (drop it: unknown names, forbidden, or already tried since the
        world last changed)."""
        here = str(data.get("scene", ""))
        forbidden = {c.key for f in data.get("forbidden", []) if (c := parse_action(str(f)))}
        if call.key in forbidden or call.key in self.executed:
            return None
        if is_valid_candidate(call, data):
            return here
        args = [fold_name(a) for a in call.args]
        if call.kind == "click" and len(args) == 1:
            target = call.args[0]
        elif call.kind in ("apply", "input") and len(args) == 2:
            usable = args[0] in _bag(data) if call.kind == "apply" else bool(args[0])
            if not usable:
                return None
            target = call.args[1]
        else:
            return None  # a craft needs only the bag: not valid here is not valid anywhere
        scene = self.locate(target)
        return None if scene == here else scene

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
        """Carry out a task-list call; returns the task a `new` created (None otherwise, also
        when the `new` named a target that already has a task: that task is updated)."""
        if op.kind == "new":
            target = _task_target(op, data, last)
            existing = next(
                (t for t in self.tasks if target and fold_name(t.target) == fold_name(target)),
                None,
            )
            if existing is not None:
                if op.feedback and op.feedback not in existing.notes:
                    existing.notes = "; ".join(n for n in (existing.notes, op.feedback) if n)
                return None
            items = {fold_name(str(n)) for n in data.get("items", [])}
            here = str(data.get("scene", "")) if fold_name(target) in items else ""
            scene = here or (self.locate(target) or "" if target else "")
            task = Task(op.name, target, op.feedback, scene)
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


def reflects_on(last: Mapping[str, Any], items_before: set[str] | None) -> bool:
    """Whether the step `last` gets a reflection: a click on an item (not a tool collected),
    an apply, an input or a craft, with a target (an invalid action has none)."""
    kind, target = last.get("kind"), last.get("target")
    if not isinstance(target, str) or not target.strip():
        return False
    if kind in ("apply", "input", "craft"):
        return True
    if kind != "click":
        return False
    if items_before is not None:
        return fold_name(target) in items_before
    return fold_name(target) not in {fold_name(n) for n in _names(last.get("collected"))}


def new_tools(last: Mapping[str, Any]) -> list[str]:
    """Tools the step `last` put in the bag or changed: those collected, and the base tool of a
    successful craft."""
    tools = _names(last.get("collected"))
    target = last.get("target")
    crafted = last.get("kind") == "craft" and bool(last.get("success"))
    known = {fold_name(t) for t in tools}
    if crafted and isinstance(target, str) and target.strip() and fold_name(target) not in known:
        tools.append(target)
    return tools


def is_valid_candidate(call: ActionCall, data: Mapping[str, Any]) -> bool:
    """Whether a queued call still fits the observation: its names are items here (or, for a
    click, tools lying here) and tools in the bag, and it is no forbidden finish action."""
    items = {fold_name(str(n)) for n in data.get("items", [])}
    lying = {fold_name(str(n)) for n in data.get("scene_tools", [])}
    bag = _bag(data)
    forbidden = {c.key for f in data.get("forbidden", []) if (c := parse_action(str(f)))}
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


def _bag(data: Mapping[str, Any]) -> set[str]:
    """Folded names of the bag tools of an observation."""
    bag = data.get("bag", [])
    return {fold_name(str(t.get("name", ""))) for t in bag if isinstance(t, Mapping)}


def _action_key(last: Mapping[str, Any]) -> str | None:
    """The comparison key of the step `last` (canonical text when the env gave one)."""
    call = parse_action(str(last.get("canonical") or last.get("action") or ""))
    return call.key if call is not None else None


def _names(value: Any) -> list[str]:
    """Tool names from `last["collected"]` (a name, a list of names, or nothing)."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def _task_target(op: TaskListOp, data: Mapping[str, Any], last: Mapping[str, Any] | None) -> str:
    # A craft's target is its base tool, no item: such a task is located by what it mentions.
    if last and last.get("kind") in ("click", "apply", "input") and last.get("target"):
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
