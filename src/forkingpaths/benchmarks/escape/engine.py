"""The escape-room engine: one scenario's world state and its rules (contract §2, App. E.1).

`EscapeGame` plays one `Scenario`. Definitions are immutable and shared; the mutable state is a
handful of flat lists of ints and bools (one entry per item, tool, scene or transition), so
`snapshot()` / `restore()` copy a few small lists and two games from one scenario never share
state. Agent input never raises: unparsable text, unknown, absent, invisible or non-interactable
names all come back as an `ActionResult` with `valid=False` and a response saying so.

Choices the contract leaves open: a transition that fired is spent (its waits stay satisfied)
until its item re-enters that state through `change_state`, which re-arms the state's
transitions; when several transitions of a state match an apply or input, the first in file
order takes it; real transitions take precedence over feedback transitions. Feedback on an
invalid action tells no more than the observation shows: a hidden object reads like one that
does not exist, and canonical text spells only visible names as the scenario does.

Speed: what the agent sees is rendered once per scene and world state (`View`), and a step
that leaves the world as it was is remembered by (scene, text): the same text in the same scene
and world gives the same result, so it is not parsed and played again. A step reads only the
items and tools its text names (a move: which scenes are visible), so a step that changes the
world drops only the remembered steps and views that read what it changed (`_Call.deps`); a
craft of tools in the bag is remembered for every scene at once. Each new text of a game is read
once (`_Call`: parsed, names looked up, handler chosen). `restore` and the end of the game drop
everything.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field, fields
from typing import Literal

from forkingpaths.benchmarks.escape.actions import (
    USAGE,
    ActionKind,
    action_key,
    action_parts,
    call_key,
    fold_name,
    format_action,
    head_kind,
    tidy,
)
from forkingpaths.benchmarks.escape.schema import Scenario, Scene, Transition
from forkingpaths.core.errors import ConfigError

BAG = -1
"""Tool location: in the agent's bag (a location >= 0 is a scene index)."""
GONE = -2
"""Tool location: used up."""

GAME_END = "GAME END!"
CHECKPOINT = "CHECKPOINT!"
DEFAULT_OBJECTIVE = "Find a way out of the room."
"""Shown when the scenario file has no `objective` (EscapeBench's files)."""

UNRECOGNISED = (
    "Unrecognised action {text}. Use click(x), apply(tool, item), input(text, item), "
    "craft(base, ingredient) or move(scene)."
)
WRONG_ARITY = "Unrecognised action {text}. Write it as {usage}."
BLOCKED = (
    "That finish action is blocked in this attempt: it completed a path in an earlier attempt. "
    "Try a different approach."
)
NOTHING = "Nothing happens."
ANYWHERE = -1
"""Scene index of remembered steps whose result is the same in every scene (crafts of tools in
the bag)."""
MEMO_LIMIT = 4096
"""Remembered (scene, text) results per game, and texts read per scenario, before they are
dropped all at once (bounds the memory a model that never repeats itself could fill)."""


# ---- results ----


@dataclass(frozen=True, init=False)
class ActionResult:
    """What one `EscapeGame.step` did."""

    action: str | None
    """Canonical text (names spelt as in the scenario, moves as the destination scene); None
    when the text was no action."""
    kind: ActionKind | None
    target: str | None
    """The item acted on (click/apply/input; the tool for a collecting click), the base tool
    (craft); None otherwise."""
    valid: bool
    """The action named things that exist here and now (an unsuccessful valid action is a
    try that did nothing)."""
    success: bool
    """Something happened: a transition fired or progressed, a tool was collected or crafted,
    a move was made."""
    response: str
    checkpoint: bool = False
    """A fired reward carried `CHECKPOINT!` (end of a phase)."""
    game_end: bool = False
    """A fired reward carried `GAME END!`; the game is over."""
    forbidden: bool = False
    """Refused before execution: a forbidden finish action of this attempt."""
    collected: tuple[str, ...] = ()
    """Tools that entered the bag at this step."""
    changed: bool = False
    """The world state (position excluded) changed."""

    def __init__(
        self,
        action: str | None,
        kind: ActionKind | None,
        target: str | None,
        valid: bool,
        success: bool,
        response: str,
        checkpoint: bool = False,
        game_end: bool = False,
        forbidden: bool = False,
        collected: tuple[str, ...] = (),
        changed: bool = False,
    ) -> None:
        # One result per step: the generated frozen __init__ sets its 11 fields one
        # object.__setattr__ at a time, three times slower than setting the dict at once.
        object.__setattr__(
            self,
            "__dict__",
            {
                "action": action,
                "kind": kind,
                "target": target,
                "valid": valid,
                "success": success,
                "response": response,
                "checkpoint": checkpoint,
                "game_end": game_end,
                "forbidden": forbidden,
                "collected": collected,
                "changed": changed,
            },
        )


def _invalid(action: str | None, kind: ActionKind | None, response: str) -> ActionResult:
    return ActionResult(action, kind, None, False, False, response)


def _unrecognised(action: object) -> str:
    """Feedback on text that is no action: the usage of the action it starts like, if any."""
    text = " ".join(str(action).split())
    shown_text = repr(text if len(text) <= 60 else text[:57] + "...")
    kind = head_kind(text)
    if kind in USAGE:
        return WRONG_ARITY.format(text=shown_text, usage=USAGE[kind])
    return UNRECOGNISED.format(text=shown_text)


# ---- the game ----


@dataclass(frozen=True)
class EscapeState:
    """Everything an `EscapeGame` changes while playing, as `snapshot()` returns it."""

    scenario: Scenario = field(repr=False, compare=False)
    """The scenario it was taken in (`restore` refuses a state of another one)."""
    scene: int
    over: bool
    world: tuple[tuple[int, ...], ...]
    """`EscapeGame.fingerprint()`: per item, tool, scene and transition, every flag and index."""


@dataclass(frozen=True, slots=True)
class View:
    """What the agent sees in one scene of one world state (`EscapeGame.view`), rendered once
    and returned again until the world changes."""

    scene: str
    items: tuple[str, ...]
    """Visible, interactable items of the scene."""
    scene_tools: tuple[str, ...]
    """Visible tools lying in the scene."""
    moves: tuple[tuple[str, str], ...]
    """(label, scene) per relation to a visible scene."""
    move_labels: tuple[str, ...]
    """The labels of `moves`, in order."""
    click_targets: tuple[str, ...]
    """`items`, then `scene_tools`: what a click can name here."""
    valid_scene_names: tuple[str, ...]
    """Names of the visible neighbouring scenes, each once."""
    bag: tuple[str, ...]
    """Tool names in the bag, in collection order."""
    bag_tools: tuple[tuple[str, str], ...]
    """(name, current desc) per tool in the bag."""
    scene_description: str
    possible_actions: str
    tools_in_bag: str


_VIEW_FIELD_SETTERS = tuple(View.__dict__[f.name].__set__ for f in fields(View))
"""Per field of `View`, in order, its slot's setter (`EscapeGame._render` builds views)."""


class EscapeGame:
    """One playthrough of a `Scenario` (rules: `docs/dev/escape-engine.md` §2)."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        crafting: Literal["ordered", "unordered"] = "ordered",
    ) -> None:
        if crafting not in ("ordered", "unordered"):
            raise ConfigError(f"crafting must be 'ordered' or 'unordered', got {crafting!r}")
        self._s = scenario
        self._unordered = crafting == "unordered"
        self._scene = 0
        self._over = False
        self._item_state = [0] * len(scenario.items)
        self._item_vis = [item.visible for item in scenario.items]
        self._item_int = [item.interactable for item in scenario.items]
        self._sat = [0] * scenario.n_transitions
        self._tool_state = [0] * len(scenario.tools)
        self._tool_vis = [tool.visible for tool in scenario.tools]
        self._tool_loc = [tool.scene for tool in scenario.tools]
        self._tool_applied = [0] * len(scenario.tools)
        self._tool_waited = [0] * len(scenario.tools)
        self._scene_vis = [scene.visible for scene in scenario.scenes]
        self._bag: list[int] = []
        self._changed = False
        text = scenario.engine_cache.get("text")
        if text is None:
            text = scenario.engine_cache["text"] = _Text(scenario)
        self._text: _Text = text
        """The scenario's text as views show it: built with the first game of the scenario and
        shared by every later one, as a loaded game's text is."""
        self._views: dict[int, View] = {}
        """Rendered views of the current world by scene index."""
        self._bag_view: tuple[tuple[str, ...], tuple[tuple[str, str], ...], str] | None = None
        """The bag's part of the views of the current world."""
        self._memo: dict[tuple[int, str], tuple[ActionResult, int]] = {}
        """(scene, action text) -> (result, scene after) of steps that left the world as it was."""
        self._dependents: dict[int, list[tuple[int, str]]] = {}
        """Part of the world (`_Call.deps`) -> keys of `_memo` whose results read it."""
        self._touched: list[int] = []
        """Parts of the world (`_Call.deps`) that fired transitions changed in this step."""
        self._parsed: dict[str, _Call | None] = scenario.engine_cache.setdefault("parsed", {})
        """Action text -> its `_Call`, or None when it is no action. Shared by every game of the
        scenario: neither the world nor the crafting rule matters to reading a text, and a run
        plays the same scenario in every trial."""
        self._scene_keys = [fold_name(scene.name) for scene in scenario.scenes]
        self._item_scene = [item.scene for item in scenario.items]
        self._tool_keys = [fold_name(tool.name) for tool in scenario.tools]

    # ---- properties ----

    @property
    def scenario(self) -> Scenario:
        return self._s

    @property
    def objective(self) -> str:
        """The scenario's objective, or `DEFAULT_OBJECTIVE` when its file states none."""
        return self._s.objective or DEFAULT_OBJECTIVE

    @property
    def scene(self) -> str:
        """Name of the current scene."""
        return self._s.scenes[self._scene].name

    @property
    def bag(self) -> list[str]:
        """Tool names in the bag, in collection order."""
        return list(self._bag_part()[0])

    @property
    def game_over(self) -> bool:
        return self._over

    # ---- state ----

    def snapshot(self) -> EscapeState:
        """The whole mutable state as an immutable value (definitions are shared, not copied)."""
        return EscapeState(self._s, self._scene, self._over, self.fingerprint())

    def restore(self, state: EscapeState) -> None:
        """Put back a `snapshot()` of a game of the same scenario (the snapshot stays usable)."""
        if not isinstance(state, EscapeState):
            raise ConfigError(
                "EscapeGame.restore: expected an EscapeState from snapshot(), "
                f"got {type(state).__name__}"
            )
        if state.scenario is not self._s and state.scenario != self._s:
            raise ConfigError(
                f"EscapeGame.restore: the state was taken in scenario {state.scenario.id!r}, "
                f"this game plays {self._s.id!r}"
            )
        self._scene, self._over = state.scene, state.over
        (
            self._item_state,
            self._item_vis,
            self._item_int,
            self._sat,
            self._tool_state,
            self._tool_vis,
            self._tool_loc,
            self._tool_applied,
            self._tool_waited,
            self._scene_vis,
            self._bag,
        ) = map(list, state.world)
        self._world_changed()

    def _world_changed(self) -> None:
        """Drop everything rendered or remembered for the world as it was."""
        self._views.clear()
        self._bag_view = None
        self._memo.clear()
        self._dependents.clear()
        self._touched.clear()

    def _changed_by(self, call: _Call) -> None:
        """Drop what was rendered or remembered from the parts of the world that `call` has
        just changed: the items and tools it names and those its fired transitions changed.
        A step reads nothing else (`_Call.deps`), so other remembered steps stand."""
        touched = self._touched
        if self._over:  # every step now answers that the game is over
            self._world_changed()
            return
        memo, dependents = self._memo, self._dependents
        n_items = len(self._item_scene)
        every_view = False
        for part in {*call.deps, *touched}:
            for key in dependents.pop(part, ()):
                memo.pop(key, None)
            if 0 <= part < n_items:
                self._views.pop(self._item_scene[part], None)
            else:  # a tool (maybe in the bag or lying in any scene) or scene visibility
                every_view = True
        if every_view:
            self._views.clear()
            self._bag_view = None
        touched.clear()

    def fingerprint(self) -> tuple[tuple[int, ...], ...]:
        """The world state without the current scene: equal fingerprints, equal worlds."""
        return (
            tuple(self._item_state),
            tuple(self._item_vis),
            tuple(self._item_int),
            tuple(self._sat),
            tuple(self._tool_state),
            tuple(self._tool_vis),
            tuple(self._tool_loc),
            tuple(self._tool_applied),
            tuple(self._tool_waited),
            tuple(self._scene_vis),
            tuple(self._bag),
        )

    def item_state(self, name: str) -> int | None:
        """Current state index of an item (None for an unknown name)."""
        index = self._s.item_ids.get(fold_name(name))
        return None if index is None else self._item_state[index]

    def tool_state(self, name: str) -> int | None:
        """Current state index of a tool (None for an unknown name)."""
        index = self._s.tool_ids.get(fold_name(name))
        return None if index is None else self._tool_state[index]

    # ---- stepping ----

    def step(self, action: str, *, forbidden: Collection[str] = ()) -> ActionResult:
        """Play one action. `forbidden` holds action keys (or actions) refused before
        execution in this attempt."""
        if forbidden or type(action) is not str:
            call = self._read(action) if type(action) is str else None
            result = self._play(call, action, forbidden)
            if result.changed:
                self._changed_by(call)  # type: ignore[arg-type]
            return result
        key = (self._scene, action)
        hit = self._memo.get(key)
        if hit is not None:
            self._scene = hit[1]
            return hit[0]
        call = self._parsed.get(action, _UNREAD)
        if call is _UNREAD:
            call = self._read(action)
        if call is not None and call.bag_only:  # type: ignore[union-attr]
            hit = self._memo.get((ANYWHERE, action))
            if hit is not None:
                return hit[0]
        result = self._play(call, action, forbidden)  # type: ignore[arg-type]
        if result.changed:
            self._changed_by(call)  # type: ignore[arg-type]
            return result
        memo = self._memo
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
            self._dependents.clear()
        entry = memo[key] = (result, self._scene)
        if call is not None:
            self._remember(call, key)  # type: ignore[arg-type]
            if call.bag_only and self._in_bag_or_unknown(call):  # type: ignore[union-attr]
                memo[(ANYWHERE, action)] = entry
                self._remember(call, (ANYWHERE, action))  # type: ignore[arg-type]
        return result

    def _remember(self, call: _Call, key: tuple[int, str]) -> None:
        """Note that the remembered step `key` reads `call.deps`."""
        dependents = self._dependents
        for part in call.deps:
            keys = dependents.get(part)
            if keys is None:
                dependents[part] = [key]
            else:
                keys.append(key)

    def _in_bag_or_unknown(self, call: _Call) -> bool:
        """Every name of `call` is a tool in the bag or no tool at all: then neither its result
        nor its canonical text depends on the scene."""
        tool_loc = self._tool_loc
        return all(tool < 0 or tool_loc[tool] == BAG for _, tool, _ in call.names)

    def _read(self, action: str) -> _Call | None:
        """The `_Call` of an action text (None when it is no action), cached by text."""
        cache = self._parsed
        call = cache.get(action, _UNREAD)
        if call is not _UNREAD:
            return call  # type: ignore[return-value]
        parts = action_parts(action)
        call = None if parts is None else _Call(self._s, *parts)
        if len(cache) >= MEMO_LIMIT:
            cache.clear()
        cache[action] = call
        return call

    def _play(self, call: _Call | None, action: str, forbidden: Collection[str]) -> ActionResult:
        if call is None:
            return _invalid(None, None, _unrecognised(action))
        kind = call.kind
        code = self._choose_names(call)
        canonical = call.canonical.get(code)
        if canonical is None:
            canonical = call.canonical[code] = format_action(kind, self._names(call, code))
        if self._over:
            return _invalid(canonical, kind, "The game is over.")
        if forbidden:
            refused = {action_key(f) or f for f in forbidden}
            if call_key(kind, self._names(call, code)) in refused:
                return ActionResult(canonical, kind, None, False, False, BLOCKED, forbidden=True)
        self._changed = False
        return call.handler(self, canonical, *call.handler_args)

    def _choose_names(self, call: _Call) -> int:
        """Which spelling each name of `call` gets in its canonical text (`_Call.canonical`):
        as in the scenario for what the agent can see now (an item or tool in view here, a bag
        tool, a visible neighbour, the current scene) and as typed otherwise, so that the
        canonical text never confirms that something hidden exists."""
        here = self._scene
        if call.kind == "move":
            dest = self._s.move_ids[here].get(call.keys[0], -1)
            if dest >= 0 and self._scene_vis[dest]:
                return 1 + dest
            if call.keys[0] == self._scene_keys[here]:
                return 1 + here
            return 0
        code = 0
        item_scene, item_vis = self._item_scene, self._item_vis
        tool_loc, tool_vis = self._tool_loc, self._tool_vis
        for item, tool, prefer_item in call.names:
            item_seen = item >= 0 and item_scene[item] == here and item_vis[item]
            loc = tool_loc[tool] if tool >= 0 else GONE
            tool_seen = loc == BAG or (loc == here and tool_vis[tool])
            if item_seen and (prefer_item or not tool_seen):
                code = 3 * code + 1
            elif tool_seen:
                code = 3 * code + 2
            else:
                code = 3 * code
        return code

    def _names(self, call: _Call, code: int) -> list[str]:
        """The names of `call`'s canonical text for a `_choose_names` code."""
        s = self._s
        if call.kind == "move":
            return [s.scenes[code - 1].name if code else call.args[0]]
        out = []
        for k, (item, tool, _) in enumerate(call.names):
            choice = code // 3 ** (len(call.names) - 1 - k) % 3
            arg = call.args[call.first_name + k]
            out.append(s.items[item].name if choice == 1 else s.tools[tool].name if choice else arg)
        if call.first_name:  # input: the typed text, trimmed
            out.insert(0, call.args[0].strip())
        return out

    def _item_in_view(self, key: str) -> int:
        """Index of the visible item of the current scene with folded name `key`, else -1."""
        index = self._s.item_ids.get(key, -1)
        if index >= 0 and self._s.items[index].scene == self._scene and self._item_vis[index]:
            return index
        return -1

    def _here_item(self, key: str) -> int:
        """Index of a visible, interactable item of the current scene named `key` (folded),
        else -1."""
        index = self._item_in_view(key)
        return index if index >= 0 and self._item_int[index] else -1

    def _bag_tool(self, key: str) -> int:
        index = self._s.tool_ids.get(key, -1)
        return index if index >= 0 and self._tool_loc[index] == BAG else -1

    def _click(self, canonical: str, name: str, key: str) -> ActionResult:
        s = self._s
        index = self._here_item(key)
        if index >= 0:
            return self._click_item(canonical, index)
        tool = s.tool_ids.get(key, -1)
        if tool >= 0 and self._tool_loc[tool] == self._scene and self._tool_vis[tool]:
            self._collect(tool)
            tool_name = s.tools[tool].name
            return ActionResult(
                canonical,
                "click",
                tool_name,
                True,
                True,
                f"You collect the {tool_name}; it is now in your bag.",
                collected=(tool_name,),
                changed=True,
            )
        if tool >= 0 and self._tool_loc[tool] == BAG:
            return _invalid(canonical, "click", f"The {s.tools[tool].name} is already in your bag.")
        return self._no_item(canonical, "click", name, key)

    def _no_item(self, canonical: str, kind: ActionKind, name: str, key: str) -> ActionResult:
        """Why `name` (folded: `key`) is no target here, telling only what the observation
        already shows: an item in view that is not interactable, a tool (to be crafted, not
        applied to), or nothing of that name here."""
        s = self._s
        index = self._item_in_view(key)
        if index >= 0:
            return _invalid(
                canonical, kind, f"The {s.items[index].name} cannot be interacted with."
            )
        tool = s.tool_ids.get(key, -1)
        if tool >= 0 and kind != "click":
            loc = self._tool_loc[tool]
            if loc == BAG or (loc == self._scene and self._tool_vis[tool]):
                tool_name = s.tools[tool].name
                if kind == "apply":
                    hint = "to combine two tools from your bag, use craft(base, ingredient)"
                else:
                    hint = "input(text, item) enters text into an item"
                return _invalid(canonical, kind, f"The {tool_name} is a tool, not an item: {hint}.")
        return _invalid(canonical, kind, f"There is no interactable item {tidy(name)!r} here.")

    def _click_item(self, canonical: str, index: int) -> ActionResult:
        item = self._s.items[index]
        state = item.states[self._item_state[index]]
        sat = self._sat
        rewards: list[str] = []
        collected: list[str] = []
        partial = False
        feedback: Transition | None = None
        for tr in state.transitions:
            if not tr.trigger:
                if feedback is None and any(w.kind == "click" for w in tr.wait_for):
                    feedback = tr
                continue
            mask = sat[tr.index]
            for k, wait in enumerate(tr.wait_for):
                if wait.kind == "click" and not (mask >> k) & 1:
                    mask |= 1 << k
                    sat[tr.index] = mask
                    self._changed = True
                    if mask == (1 << len(tr.wait_for)) - 1:
                        rewards.append(self._fire(tr, index, collected))
                    else:
                        partial = True
                    break
        if rewards:
            text = " ".join(r for r in rewards if r) or f"Something about the {item.name} changes."
            return self._fired(canonical, "click", item.name, text, rewards, collected)
        if partial:
            return ActionResult(
                canonical,
                "click",
                item.name,
                True,
                True,
                f"The {item.name} still needs something more.",
                changed=True,
            )
        if feedback is not None:
            return ActionResult(canonical, "click", item.name, True, False, feedback.reward)
        text = f"You examine the {item.name}: {state.desc}".rstrip()
        if state.neg_reward:
            text += " " + state.neg_reward
        return ActionResult(canonical, "click", item.name, True, False, text)

    def _apply(
        self, canonical: str, tool_name: str, tool_key: str, item_name: str, item_key: str
    ) -> ActionResult:
        s = self._s
        tool = self._bag_tool(tool_key)
        if tool < 0:
            return _invalid(canonical, "apply", f"{tidy(tool_name)!r} is not in your bag.")
        index = self._here_item(item_key)
        if index < 0:
            return self._no_item(canonical, "apply", item_name, item_key)
        t_def = s.tools[tool]
        item = s.items[index]
        t_state = t_def.states[self._tool_state[tool]]
        used = self._tool_applied[tool]
        slot = -1
        for k, key in enumerate(t_state.apply_to_keys):
            if key == item_key and not (used >> k) & 1:
                slot = k
                break
        state = item.states[self._item_state[index]]
        if slot >= 0:
            sat = self._sat
            for tr in state.transitions:
                if not tr.trigger:
                    continue
                mask = sat[tr.index]
                for k, wait in enumerate(tr.wait_for):
                    if wait.kind == "apply" and wait.tool == tool and not (mask >> k) & 1:
                        break
                else:
                    continue
                mask |= 1 << k
                sat[tr.index] = mask
                self._tool_applied[tool] = used | (1 << slot)
                self._changed = True
                collected: list[str] = []
                if mask == (1 << len(tr.wait_for)) - 1:
                    reward = self._fire(tr, index, collected)
                    self._maybe_use_up(tool)
                    text = f"You apply the {t_def.name} to the {item.name}. {reward}".rstrip()
                    return self._fired(canonical, "apply", item.name, text, [reward], collected)
                self._maybe_use_up(tool)
                return ActionResult(
                    canonical,
                    "apply",
                    item.name,
                    True,
                    True,
                    f"The {item.name} still needs something more.",
                    changed=True,
                )
        for tr in state.transitions:
            if not tr.trigger and any(w.kind == "apply" and w.tool == tool for w in tr.wait_for):
                return ActionResult(canonical, "apply", item.name, True, False, tr.reward)
        return self._nothing(canonical, "apply", item.name, state.neg_reward)

    def _input(self, canonical: str, text: str, item_name: str, item_key: str) -> ActionResult:
        index = self._here_item(item_key)
        if index < 0:
            return self._no_item(canonical, "input", item_name, item_key)
        item = self._s.items[index]
        state = item.states[self._item_state[index]]
        sat = self._sat
        for tr in state.transitions:
            if not tr.trigger:
                continue
            mask = sat[tr.index]
            for k, wait in enumerate(tr.wait_for):
                if wait.kind == "input" and not (mask >> k) & 1 and wait.arg == text:
                    break
            else:
                continue
            mask |= 1 << k
            sat[tr.index] = mask
            self._changed = True
            if mask == (1 << len(tr.wait_for)) - 1:
                collected: list[str] = []
                reward = self._fire(tr, index, collected)
                response = reward or f"You enter {text} into the {item.name}."
                return self._fired(canonical, "input", item.name, response, [reward], collected)
            return ActionResult(
                canonical,
                "input",
                item.name,
                True,
                True,
                f"The {item.name} still needs something more.",
                changed=True,
            )
        for tr in state.transitions:
            if not tr.trigger and any(w.kind == "input" and w.arg == text for w in tr.wait_for):
                return ActionResult(canonical, "input", item.name, True, False, tr.reward)
        return self._nothing(canonical, "input", item.name, state.neg_reward)

    def _craft(
        self,
        canonical: str,
        base_name: str,
        base_key: str,
        ingredient_name: str,
        ingredient_key: str,
    ) -> ActionResult:
        base = self._bag_tool(base_key)
        if base < 0:
            return _invalid(canonical, "craft", f"{tidy(base_name)!r} is not in your bag.")
        ingredient = self._bag_tool(ingredient_key)
        if ingredient < 0:
            item = self._item_in_view(ingredient_key)
            if item >= 0:
                return _invalid(
                    canonical,
                    "craft",
                    f"The {self._s.items[item].name} is an item, not a tool: to use a tool from "
                    "your bag on it, use apply(tool, item).",
                )
            return _invalid(canonical, "craft", f"{tidy(ingredient_name)!r} is not in your bag.")
        if base == ingredient:
            return _invalid(canonical, "craft", "craft needs two different tools from your bag.")
        result = self._try_craft(canonical, base, ingredient)
        if result is None and self._unordered:
            result = self._try_craft(canonical, ingredient, base)
        if result is None:
            return ActionResult(canonical, "craft", self._s.tools[base].name, True, False, NOTHING)
        return result

    def _try_craft(self, canonical: str, base: int, ingredient: int) -> ActionResult | None:
        tools = self._s.tools
        b_def, i_def = tools[base], tools[ingredient]
        b_state = b_def.states[self._tool_state[base]]
        i_state = i_def.states[self._tool_state[ingredient]]
        waited, applied = self._tool_waited[base], self._tool_applied[ingredient]
        i_key, b_key = self._tool_keys[ingredient], self._tool_keys[base]
        # Most crafts of a random agent match nothing: no generator or enumerate to set up.
        if i_key not in b_state.wait_for_keys or b_key not in i_state.apply_to_keys:
            return None
        wait_slot = next(
            (
                k
                for k, key in enumerate(b_state.wait_for_keys)
                if key == i_key and not (waited >> k) & 1
            ),
            -1,
        )
        apply_slot = next(
            (
                k
                for k, key in enumerate(i_state.apply_to_keys)
                if key == b_key and not (applied >> k) & 1
            ),
            -1,
        )
        if wait_slot < 0 or apply_slot < 0:
            return None
        waited |= 1 << wait_slot
        self._tool_waited[base] = waited
        self._tool_applied[ingredient] = applied | (1 << apply_slot)
        self._changed = True
        advanced = waited == (1 << len(b_state.wait_for)) - 1
        if advanced and self._tool_state[base] < len(b_def.states) - 1:
            self._set_tool_state(base, self._tool_state[base] + 1)
        self._maybe_use_up(ingredient)
        if advanced:
            desc = b_def.states[self._tool_state[base]].desc
            text = f"You craft the {b_def.name} with the {i_def.name}. Now: {desc}".rstrip()
        else:
            text = f"The {b_def.name} still needs something more."
        return ActionResult(canonical, "craft", b_def.name, True, True, text, changed=True)

    def _move(self, canonical: str, name: str, key: str) -> ActionResult:
        s = self._s
        dest = s.move_ids[self._scene].get(key, -1)
        if dest >= 0 and self._scene_vis[dest]:
            self._scene = dest
            return ActionResult(
                canonical, "move", None, True, True, f"You move to {s.scenes[dest].name}."
            )
        if dest < 0 and key == self._scene_keys[self._scene]:
            return _invalid(canonical, "move", f"You are already in {s.scenes[self._scene].name}.")
        valid = ", ".join(self.valid_scene_names()) or "(none)"
        return _invalid(
            canonical,
            "move",
            f"{tidy(name)!r} is not a scene you can move to from here; valid: {valid}.",
        )

    # ---- effects ----

    def _nothing(
        self, canonical: str, kind: ActionKind, target: str, neg_reward: str | None
    ) -> ActionResult:
        text = f"{NOTHING} {neg_reward}" if neg_reward else NOTHING
        return ActionResult(canonical, kind, target, True, False, text)

    def _fired(
        self,
        canonical: str,
        kind: ActionKind,
        target: str,
        response: str,
        rewards: list[str],
        collected: list[str],
    ) -> ActionResult:
        game_end = any(GAME_END in r for r in rewards)
        if game_end:
            self._over = True
        return ActionResult(
            canonical,
            kind,
            target,
            True,
            True,
            response,
            checkpoint=any(CHECKPOINT in r for r in rewards),
            game_end=game_end,
            collected=tuple(collected),
            changed=self._changed,
        )

    def _collect(self, tool: int) -> None:
        if self._tool_loc[tool] != BAG:
            self._tool_loc[tool] = BAG
            self._bag.append(tool)
            self._changed = True

    def _maybe_use_up(self, tool: int) -> None:
        """A bag tool in its last state whose `apply_to` is all used leaves the bag."""
        t_def = self._s.tools[tool]
        state = self._tool_state[tool]
        n_apply = len(t_def.states[state].apply_to)
        if (
            self._tool_loc[tool] == BAG
            and state == len(t_def.states) - 1
            and n_apply
            and self._tool_applied[tool] == (1 << n_apply) - 1
        ):
            self._tool_loc[tool] = GONE
            self._bag.remove(tool)

    def _set_tool_state(self, tool: int, state: int) -> None:
        if self._tool_state[tool] != state:
            self._tool_state[tool] = state
            self._tool_applied[tool] = 0
            self._tool_waited[tool] = 0
            self._changed = True

    def _set_item_state(self, index: int, state: int) -> None:
        if self._item_state[index] != state:
            self._item_state[index] = state
            for tr in self._s.items[index].states[state].transitions:
                self._sat[tr.index] = 0
            self._changed = True

    def _fire(self, tr: Transition, owner: int, collected: list[str]) -> str:
        """Run a transition's triggers in order; its reward."""
        self._changed = True
        touched, n_items = self._touched, len(self._item_scene)
        for trig in tr.trigger:
            op, kind, target, value = trig.op, trig.kind, trig.index, trig.value
            touched.append(target if kind == "item" else n_items + target if kind == "tool" else -1)
            if op == "change_state":
                if kind == "item":
                    self._set_item_state(target, value)  # type: ignore[arg-type]
                else:
                    self._set_tool_state(target, value)  # type: ignore[arg-type]
            elif op == "change_visible":
                flags = (
                    self._item_vis
                    if kind == "item"
                    else self._tool_vis
                    if kind == "tool"
                    else self._scene_vis
                )
                flags[target] = bool(value)
            elif op == "change_interact":
                self._item_int[target] = bool(value)
            else:  # become_tool
                touched.append(owner)
                self._tool_vis[target] = True
                if self._tool_loc[target] != BAG:
                    self._collect(target)
                    collected.append(self._s.tools[target].name)
                self._item_vis[owner] = False
                self._item_int[owner] = False
        return tr.reward

    # ---- what the agent sees ----

    def view(self) -> View:
        """What the agent sees now (the parts of `describe_scene`, `possible_actions` and
        `tools_in_bag`, and the names they list), rendered once per scene and world state."""
        view = self._views.get(self._scene)
        if view is None:
            view = self._views[self._scene] = self._render()
        return view

    def _render(self) -> View:
        """The current scene's view of the current world, from the scenario's text."""
        here = self._scene
        scene = self._text.scenes[here]
        item_vis, item_int, item_state = self._item_vis, self._item_int, self._item_state
        tool_loc, tool_vis, tool_state = self._tool_loc, self._tool_vis, self._tool_state
        scene_vis = self._scene_vis
        lines = [scene.head]
        offers = ["Possible actions:"]
        items: list[str] = []
        for index, by_state, name, offer in scene.items:
            if item_vis[index]:
                lines.append(by_state[item_state[index]])
                if item_int[index]:
                    items.append(name)
                    offers.append(offer)
        scene_tools: list[str] = []
        for index, by_state, name, offer in scene.tools:
            if tool_loc[index] == here and tool_vis[index]:
                lines.append(by_state[tool_state[index]])
                scene_tools.append(name)
                offers.append(offer)
        moves: list[tuple[str, str]] = []
        for dest, move, offer in scene.moves:
            if scene_vis[dest]:
                moves.append(move)
                offers.append(offer)
        bag_view = self._bag_part()
        view = object.__new__(View)
        # A frozen dataclass's __init__ sets its 12 fields one object.__setattr__ at a time;
        # the slots' own setters, in field order, do the same several times faster.
        for set_field, value in zip(
            _VIEW_FIELD_SETTERS,
            (
                scene.name,
                tuple(items),
                tuple(scene_tools),
                tuple(moves),
                tuple([label for label, _ in moves]),
                (*items, *scene_tools),
                tuple(dict.fromkeys([dest for _, dest in moves])),
                bag_view[0],
                bag_view[1],
                "\n".join(lines),
                "\n".join(offers),
                bag_view[2],
            ),
            strict=True,
        ):
            set_field(view, value)
        return view

    def _bag_part(self) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], str]:
        """(names, (name, desc) pairs, `tools_in_bag` text) of the bag, the same in every
        scene: rendered once per world state."""
        part = self._bag_view
        if part is None:
            part = self._bag_view = self._render_bag()
        return part

    def _render_bag(self) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], str]:
        tools, tool_state = self._text.tools, self._tool_state
        shown = [tools[t][tool_state[t]] for t in self._bag]
        if not shown:
            return (), (), "Tools in bag: (none)"
        pairs = tuple(pair for pair, _ in shown)
        in_bag = "\n".join(["Tools in bag:"] + [line for _, line in shown])
        return tuple(name for name, _ in pairs), pairs, in_bag

    def interactable_items(self) -> list[str]:
        """Visible, interactable items of the current scene."""
        return list(self.view().items)

    def scene_tools(self) -> list[str]:
        """Visible tools lying in the current scene."""
        return list(self.view().scene_tools)

    def moves(self) -> list[tuple[str, str]]:
        """(label, scene) per relation of the current scene to a visible scene."""
        return list(self.view().moves)

    def valid_scene_names(self) -> list[str]:
        """Names of the visible neighbouring scenes, each once."""
        return list(self.view().valid_scene_names)

    def bag_tools(self) -> list[tuple[str, str]]:
        """(name, current desc) per tool in the bag."""
        return list(self.view().bag_tools)

    def describe_scene(self) -> str:
        return self.view().scene_description

    def possible_actions(self) -> str:
        return self.view().possible_actions

    def tools_in_bag(self) -> str:
        return self.view().tools_in_bag

    # ---- for reference agents and checkers ----

    def candidate_actions(self) -> list[str]:
        """Every canonical click, apply, craft and move available now (not input)."""
        view = self.view()
        items, bag = view.items, view.bag
        out = [f"click({name})" for name in view.click_targets]
        out += [f"apply({tool}, {item})" for tool in bag for item in items]
        out += [f"craft({a}, {b})" for a in bag for b in bag if a != b]
        out += [f"move({scene})" for scene in view.valid_scene_names]
        return out

    def route_to(self, scene: str) -> list[str] | None:
        """Shortest list of canonical moves to `scene` through visible scenes; [] when there,
        None when unreachable or unknown."""
        s = self._s
        goal = s.scene_ids.get(fold_name(scene))
        if goal is None or (not self._scene_vis[goal] and goal != self._scene):
            return None
        start = self._scene
        parent = {start: start}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            if here == goal:
                break
            for _label, dest in s.neighbours[here]:
                if dest not in parent and self._scene_vis[dest]:
                    parent[dest] = here
                    queue.append(dest)
        if goal not in parent:
            return None
        path = []
        node = goal
        while node != start:
            path.append(f"move({s.scenes[node].name})")
            node = parent[node]
        return path[::-1]

    def locate(self, name: str) -> str | None:
        """Scene of a visible item, or of a visible tool lying on the floor; else None."""
        s = self._s
        key = fold_name(name)
        index = s.item_ids.get(key)
        if index is not None and self._item_vis[index]:
            return s.scenes[s.items[index].scene].name
        tool = s.tool_ids.get(key)
        if tool is not None and self._tool_loc[tool] >= 0 and self._tool_vis[tool]:
            return s.scenes[self._tool_loc[tool]].name
        return None


class _Text:
    """A scenario's text as the views show it, every line built once: per scene its heading
    line, per item and tool of it one object line per state and its offer line, per move its
    offer line; per tool and state its bag entry."""

    __slots__ = ("scenes", "tools")

    def __init__(self, s: Scenario) -> None:
        self.scenes = tuple(_SceneText.build(s, scene) for scene in s.scenes)
        self.tools: tuple[tuple[tuple[tuple[str, str], str], ...], ...] = tuple(
            tuple(
                ((tool.name, state.desc), f"<applicable tool> {tool.name}: {state.desc}")
                for state in tool.states
            )
            for tool in s.tools
        )
        """Per tool, per state: ((name, desc), bag line)."""


@dataclass(frozen=True, slots=True)
class _SceneText:
    name: str
    head: str
    items: tuple[tuple[int, tuple[str, ...], str, str], ...]
    """(item index, object line per state, name, offer line) per item, in file order."""
    tools: tuple[tuple[int, tuple[str, ...], str, str], ...]
    moves: tuple[tuple[int, tuple[str, str], str], ...]
    """(destination index, (label, destination name), offer line) per relation."""

    @staticmethod
    def build(s: Scenario, scene: Scene) -> _SceneText:
        objects = [
            tuple(
                (
                    obj.index,
                    tuple(_object_line(obj.position, obj.name, st.desc) for st in obj.states),
                    obj.name,
                    f"<interactable item> {obj.name}",
                )
                for obj in group
            )
            for group in (scene.items, scene.tools)
        ]
        moves = []
        for label, dest in s.neighbours[scene.index]:
            dest_name = s.scenes[dest].name
            offer = f"<interactable scene> {label}: It leads to {dest_name}"
            moves.append((dest, (label, dest_name), offer))
        return _SceneText(
            name=scene.name,
            head=f"You are in the scene '{scene.name}'. {scene.desc}".rstrip(),
            items=objects[0],  # type: ignore[arg-type]
            tools=objects[1],  # type: ignore[arg-type]
            moves=tuple(moves),
        )


def _object_line(position: str, name: str, desc: str) -> str:
    head = f"- {position}, there is {name}" if position else f"- There is {name}"
    return f"{head}: {desc}".rstrip() if desc else head


_UNREAD = object()
"""`EscapeGame._parsed`'s answer for a text not read yet (None means: no action)."""


class _Call:
    """An action text read once per game: what `parse_action` found, its names folded and
    looked up in the scenario, and the handler that plays it; the canonical texts it can have
    are built at their first use."""

    __slots__ = (
        "args",
        "bag_only",
        "canonical",
        "deps",
        "first_name",
        "handler",
        "handler_args",
        "keys",
        "kind",
        "names",
    )

    def __init__(self, s: Scenario, kind: str, args: tuple[str, ...]) -> None:
        # A name argument is tidied (`tidy`), so its `fold_name` is its casefold; an input's
        # text is kept as typed.
        first = 1 if kind == "input" else 0
        if len(args) == 1:
            keys: tuple[str, ...] = (args[0].casefold(),)
        else:
            keys = (fold_name(args[0]) if first else args[0].casefold(), args[1].casefold())
        self.kind = kind
        self.args = args
        self.keys = keys
        self.first_name = first
        """Index of the first argument that is a name (an input's text is none)."""
        self.names: tuple[tuple[int, int, bool], ...] = ()
        """Per name: (item index, tool index, whether an item in view is preferred to a tool of
        the same name), -1 for neither; none for a move (its name is a scene)."""
        self.bag_only = False
        """A craft naming no item: with its tools in the bag (or none such), the same in every
        scene (`EscapeGame._in_bag_or_unknown`)."""
        self.deps: tuple[int, ...] = (-1,)
        """The parts of the world the step reads (`EscapeGame._changed_by`): an item by index,
        a tool by item count + index, -1 for which scenes are visible (moves only)."""
        if kind != "move":
            item_ids, tool_ids, n_items = s.item_ids, s.tool_ids, len(s.items)
            names = []
            deps = []
            for k in range(first, len(args)):
                item, tool = item_ids.get(keys[k], -1), tool_ids.get(keys[k], -1)
                names.append((item, tool, kind == "click" or (k == 1 and kind != "craft")))
                if item >= 0:
                    deps.append(item)
                if tool >= 0:
                    deps.append(n_items + tool)
            self.names = tuple(names)
            self.deps = tuple(deps)
            self.bag_only = kind == "craft" and all(item < 0 for item, _, _ in names)
        self.canonical: dict[int, str] = {}
        """Canonical text per `EscapeGame._choose_names` code, built at its first use."""
        if kind == "click":
            self.handler, self.handler_args = EscapeGame._click, (args[0], keys[0])
        elif kind == "apply":
            self.handler = EscapeGame._apply
            self.handler_args = (args[0], keys[0], args[1], keys[1])
        elif kind == "input":
            self.handler = EscapeGame._input
            self.handler_args = (args[0].strip(), args[1], keys[1])
        elif kind == "craft":
            self.handler = EscapeGame._craft
            self.handler_args = (args[0], keys[0], args[1], keys[1])
        else:
            self.handler, self.handler_args = EscapeGame._move, (args[0], keys[0])
