"""Escape-room scenarios: immutable definitions and the YAML loader (App. E.1, contract §1).

A scenario file is a YAML list of scenes (`docs/dev/escape-engine.md` §1). `load_scenario`
refuses a file that cannot be played with a `ScenarioError` naming the file, the line and the
path inside the structure (`scenes[2].items[0].item.states[1].transitions[0].trigger[1]`);
nothing is half-loaded, and a misspelt or repeated key is refused too. The slips found in
EscapeBench's released games (`LOAD_WARNING_KINDS`) are repaired or skipped instead, each as a
`LoadWarning` on `Scenario.warnings` (and a logged warning) naming file, line and place.
References are resolved at load: every trigger and wait carries the global index of the object
it names, so the engine never searches by name while stepping.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal, NoReturn

import yaml

from forkingpaths.benchmarks.escape.actions import fold_name, tidy
from forkingpaths.core.errors import ConfigError, InvalidFile, NameNotFound, shown

WAIT_KINDS = ("click", "apply", "input")
SCENE_KEYS = (
    "name",
    "objective",
    "desc",
    "visible",
    "scene_relations",
    "items",
    "tools",
    "image_path",
)
"""Keys of a scene (`image_path`, EscapeBench's picture of the scene, is accepted and unused)."""
ITEM_ENTRY_KEYS = ("position", "item")
ITEM_KEYS = ("name", "visible", "interactable", "states")
ITEM_STATE_KEYS = ("desc", "neg_reward", "transitions")
TRANSITION_KEYS = ("wait_for", "trigger", "reward")
TOOL_ENTRY_KEYS = ("position", "tool")
TOOL_KEYS = ("name", "visible", "states")
TOOL_STATE_KEYS = ("desc", "apply_to", "wait_for")
TRIGGER_OPS = ("change_state", "change_visible", "change_interact", "become_tool")

ObjectKind = Literal["scene", "item", "tool"]

log = logging.getLogger(__name__)

LOAD_WARNING_KINDS = {
    "state-reward": "a `reward` on an item state (indented one level too far out): moved onto "
    "that state's last transition without a reward, or dropped when there is none",
    "neg-rewards": "`neg_rewards` for `neg_reward`: read as `neg_reward`",
    "flag-punctuation": "a flag with trailing punctuation (`False.`): read without it",
    "tool-interactable": "`interactable` on a tool (tools have no such flag): ignored",
    "state-out-of-range": "a change_state trigger to a state the object does not have: the "
    "trigger is skipped",
    "unreachable-scene": "a scene no relation leads to, whose own `Back to ...` relation names "
    "a reachable scene: that scene gets the missing relation to it (`To the NAME`)",
}
"""The defects of EscapeBench's released games that are repaired or skipped, not refused: kind
-> what the loader does (upstream's engine ignores all five, or never reads the bad state)."""
ITEM_STATE_TOLERATED = ("neg_rewards", "reward")
TOOL_TOLERATED = ("interactable",)


@dataclass(frozen=True)
class LoadWarning:
    """A defect the loader repaired or skipped: `FILE:LINE: WHERE: PROBLEM`."""

    file: str
    line: int
    where: str
    problem: str
    kind: str
    """A key of `LOAD_WARNING_KINDS`."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.where}: {self.problem}"


class ScenarioError(InvalidFile):
    """A scenario or metadata file is invalid: `FILE:LINE: WHERE: PROBLEM`."""

    def __init__(self, file: str, line: int, where: str, problem: str) -> None:
        self.file, self.line, self.where, self.problem = file, line, where, problem
        location = f"{file}:{line}: {where}: " if where else f"{file}:{line}: "
        super().__init__(location + problem)


# ---- definitions ----


@dataclass(frozen=True)
class WaitFor:
    """One awaited action of a transition: `click`, `apply, TOOL` or `input, STRING`."""

    kind: Literal["click", "apply", "input"]
    arg: str | None = None
    """The tool's name (apply, as spelt in its definition) or the expected string (input)."""
    tool: int = -1
    """Global index of the tool (apply), else -1."""
    line: int = 0


@dataclass(frozen=True)
class Trigger:
    """One world update run when a transition fires."""

    op: Literal["change_state", "change_visible", "change_interact", "become_tool"]
    kind: ObjectKind
    """What `index` indexes: `Scenario.scenes`, `.items` or `.tools`."""
    name: str
    index: int
    value: int | bool | None
    """The state index (change_state), the flag (change_visible/interact); None for
    become_tool."""
    explicit: bool = True
    """False when the trigger acts on the owning item without naming it."""
    line: int = 0


@dataclass(frozen=True)
class Transition:
    """What an item state waits for, what it then does, and the feedback it gives."""

    wait_for: tuple[WaitFor, ...]
    trigger: tuple[Trigger, ...]
    reward: str
    index: int
    """Global index of the transition (the engine keeps one satisfied-waits mask per index)."""
    line: int = 0

    @property
    def is_feedback(self) -> bool:
        """No triggers: an informative dead end that changes and consumes nothing."""
        return not self.trigger


@dataclass(frozen=True)
class ItemState:
    desc: str
    neg_reward: str | None
    transitions: tuple[Transition, ...]
    line: int = 0


@dataclass(frozen=True)
class Item:
    name: str
    position: str
    visible: bool
    interactable: bool
    states: tuple[ItemState, ...]
    scene: int
    """Index of the scene that holds it."""
    index: int
    """Global index in `Scenario.items`."""
    line: int = 0


@dataclass(frozen=True)
class ToolState:
    desc: str
    apply_to: tuple[str, ...]
    """Items it can be applied to, and base tools it can be crafted into."""
    wait_for: tuple[str, ...]
    """Ingredient tools this tool, as a craft base, waits for."""
    apply_to_keys: tuple[str, ...]
    wait_for_keys: tuple[str, ...]
    line: int = 0


@dataclass(frozen=True)
class Tool:
    name: str
    position: str
    visible: bool
    states: tuple[ToolState, ...]
    scene: int
    index: int
    line: int = 0


@dataclass(frozen=True)
class Scene:
    name: str
    desc: str
    visible: bool
    relations: tuple[tuple[str, str], ...]
    """(move label, destination scene name), in file order."""
    items: tuple[Item, ...]
    tools: tuple[Tool, ...]
    index: int
    line: int = 0


@dataclass(frozen=True)
class Scenario:
    """One escape room: its scenes and the lookup maps built once at construction."""

    id: str
    objective: str
    """The first scene's `objective`; "" when the file has none (EscapeBench's files)."""
    scenes: tuple[Scene, ...]
    source: Path | None = None
    warnings: tuple[LoadWarning, ...] = field(default=(), repr=False, compare=False)
    """Defects repaired or skipped at load (`LOAD_WARNING_KINDS`), in file order."""
    items: tuple[Item, ...] = field(init=False, repr=False, compare=False)
    """Every item of every scene, by global index."""
    tools: tuple[Tool, ...] = field(init=False, repr=False, compare=False)
    scene_ids: Mapping[str, int] = field(init=False, repr=False, compare=False)
    """Folded scene name -> index."""
    item_ids: Mapping[str, int] = field(init=False, repr=False, compare=False)
    tool_ids: Mapping[str, int] = field(init=False, repr=False, compare=False)
    move_ids: tuple[Mapping[str, int], ...] = field(init=False, repr=False, compare=False)
    """Per scene: folded move label or neighbouring scene name -> destination index."""
    neighbours: tuple[tuple[tuple[str, int], ...], ...] = field(
        init=False, repr=False, compare=False
    )
    """Per scene: (label, destination index) for every relation to a known scene."""
    n_transitions: int = field(init=False, repr=False, compare=False)
    engine_cache: dict[str, Any] = field(init=False, repr=False, compare=False)
    """What the engine derives from this scenario alone and every game of it shares (the text
    views show, the action texts read so far): empty at load, never part of equality, a copy
    or a pickle."""

    def __post_init__(self) -> None:
        items = tuple(item for scene in self.scenes for item in scene.items)
        tools = tuple(tool for scene in self.scenes for tool in scene.tools)
        scene_ids = {fold_name(s.name): s.index for s in self.scenes}
        neighbours = []
        move_ids = []
        for scene in self.scenes:
            pairs = tuple(
                (label, scene_ids[fold_name(dest)])
                for label, dest in scene.relations
                if fold_name(dest) in scene_ids
            )
            moves: dict[str, int] = {}
            for _label, dest in pairs:
                moves.setdefault(fold_name(self.scenes[dest].name), dest)
            for label, dest in pairs:  # a label wins over a scene name spelt the same
                moves[fold_name(label)] = dest
            neighbours.append(pairs)
            move_ids.append(moves)
        setattr_ = object.__setattr__
        setattr_(self, "items", items)
        setattr_(self, "tools", tools)
        setattr_(self, "scene_ids", scene_ids)
        setattr_(self, "item_ids", {fold_name(i.name): i.index for i in items})
        setattr_(self, "tool_ids", {fold_name(t.name): t.index for t in tools})
        setattr_(self, "neighbours", tuple(neighbours))
        setattr_(self, "move_ids", tuple(move_ids))
        setattr_(
            self,
            "n_transitions",
            sum(len(s.transitions) for item in items for s in item.states),
        )
        setattr_(self, "engine_cache", {})

    def __getstate__(self) -> dict[str, Any]:
        # A copy or a pickle (a Ray worker's) starts with its own empty cache: what the engine
        # derived is rebuilt where it is used, never shipped.
        return {**self.__dict__, "engine_cache": {}}

    def find_scene(self, name: str) -> Scene | None:
        index = self.scene_ids.get(fold_name(name))
        return None if index is None else self.scenes[index]

    def find_item(self, name: str) -> Item | None:
        index = self.item_ids.get(fold_name(name))
        return None if index is None else self.items[index]

    def find_tool(self, name: str) -> Tool | None:
        index = self.tool_ids.get(fold_name(name))
        return None if index is None else self.tools[index]


# ---- where scenario files live ----


def scenarios_dir() -> Path:
    """The package's shipped scenarios: `data/scenarios/*.yaml`."""
    return Path(str(files("forkingpaths.benchmarks.escape") / "data" / "scenarios"))


def scenario_names() -> list[str]:
    """Stems of the shipped scenarios (metadata files excluded)."""
    root = scenarios_dir()
    if not root.is_dir():
        return []
    return sorted(
        p.name[: -len(".yaml")] for p in root.glob("*.yaml") if not p.name.endswith(".meta.yaml")
    )


def resolve_scenario(arg: str | Path) -> Path:
    """A scenario argument as a file: an existing path, or the stem of a shipped scenario."""
    path = Path(arg)
    if path.is_file():
        return path
    text = str(arg)
    if "/" not in text and "\\" not in text:
        stem = text[: -len(".yaml")] if text.endswith(".yaml") else text
        shipped = scenarios_dir() / f"{stem}.yaml"
        if shipped.is_file():
            return shipped
        if not text.endswith((".yaml", ".yml")):
            raise NameNotFound("escape scenario", text, scenario_names())
    raise ConfigError(f"scenario file {text!r} does not exist (give a path or a scenario name)")


# ---- the loader ----

_NULL_TAG = "tag:yaml.org,2002:null"
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)
"""libyaml's SafeLoader; None when PyYAML was built without it."""


class YamlNode:
    """A YAML node, the file it came from and its path inside the structure."""

    __slots__ = ("file", "node", "path", "warnings")

    def __init__(
        self, file: str, node: yaml.Node, path: str, warnings: list[LoadWarning] | None = None
    ) -> None:
        self.file, self.node, self.path = file, node, path
        self.warnings = warnings
        """Where repairable defects go; None: strict, every defect is refused."""

    def child(self, node: yaml.Node, path: str) -> YamlNode:
        return YamlNode(self.file, node, path, self.warnings)

    def warn(self, kind: str, problem: str) -> None:
        """Record a repaired defect, or refuse it when this node is read strictly."""
        if self.warnings is None:
            self.fail(problem)
        warning = LoadWarning(self.file, self.line, self.path, problem, kind)
        self.warnings.append(warning)
        log.warning("%s", warning)

    @property
    def line(self) -> int:
        return self.node.start_mark.line + 1

    def fail(self, problem: str) -> NoReturn:
        raise ScenarioError(self.file, self.line, self.path, problem)

    @property
    def is_null(self) -> bool:
        return isinstance(self.node, yaml.ScalarNode) and self.node.tag == _NULL_TAG

    def kind(self) -> str:
        if isinstance(self.node, yaml.MappingNode):
            return "a mapping"
        if isinstance(self.node, yaml.SequenceNode):
            return "a list"
        return "null" if self.is_null else f"the scalar {shown(self.node.value)}"

    def mapping(
        self, what: str, keys: tuple[str, ...] | None = None, tolerated: tuple[str, ...] = ()
    ) -> YamlNode:
        """This node as a mapping without repeated keys and, with `keys`, without others: a
        misspelt key (`triggers:`) would otherwise be dropped without a word. `tolerated` keys
        pass when the file is read leniently; the caller repairs and reports them."""
        if not isinstance(self.node, yaml.MappingNode):
            self.fail(f"{what} must be a mapping, got {self.kind()}")
        seen: set[str] = set()
        for key_node, _ in self.node.value:
            raw = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
            key = self.child(key_node, f"{self.path}.{raw}" if self.path else str(raw))
            name = key.text(f"a key of {what}")
            if name in seen:
                key.fail(f"duplicate key `{name}` in {what}")
            lenient = name in tolerated and self.warnings is not None
            if keys is not None and name not in keys and not lenient:
                key.fail(f"unknown key `{name}` in {what}; expected one of {', '.join(keys)}")
            seen.add(name)
        return self

    def get(self, key: str) -> YamlNode | None:
        """The value under `key` of a mapping; None when absent or null."""
        for key_node, value_node in self.node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                path = f"{self.path}.{key}" if self.path else key
                child = self.child(value_node, path)
                return None if child.is_null else child
        return None

    def require(self, key: str, what: str) -> YamlNode:
        child = self.get(key)
        if child is None:
            self.fail(f"{what} needs `{key}`")
        return child

    def children(self, what: str) -> list[YamlNode]:
        """Entries of a list (a null value is an empty list)."""
        if self.is_null:
            return []
        if not isinstance(self.node, yaml.SequenceNode):
            self.fail(f"{what} must be a list, got {self.kind()}")
        return [self.child(node, f"{self.path}[{i}]") for i, node in enumerate(self.node.value)]

    def text(self, what: str) -> str:
        if not isinstance(self.node, yaml.ScalarNode) or self.is_null:
            self.fail(f"{what} must be text, got {self.kind()}")
        return str(self.node.value)

    def name(self, what: str) -> str:
        value = tidy(self.text(what))
        if not value:
            self.fail(f"{what} must not be empty")
        return value

    def ident(self, what: str) -> str:
        """A scene, item or tool name or a move label: agents write it inside `kind(a, b)` and
        authors inside comma-separated entries, so it must survive both unquoted."""
        value = self.name(what)
        depth = 0
        for ch in value:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                break
        if "," in value or depth != 0 or value[0] in "'\"`":
            self.fail(
                f"{what} {value!r} cannot be written in an action: it may not hold a comma, "
                "unbalanced parentheses or a leading quote"
            )
        return value

    def flag(self, what: str) -> bool:
        return _flag(self, self.text(what), what)


def _flag(src: YamlNode, raw: str, what: str) -> bool:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        bare = value.rstrip(".;:!")
        if bare not in ("true", "false") or src.warnings is None:
            src.fail(f"{what} must be true or false, got {shown(raw)}")
        src.warn("flag-punctuation", f"{what} {shown(raw)} read as {bare.capitalize()}")
        value = bare
    return value == "true"


def _opt_flag(parent: YamlNode, key: str, default: bool) -> bool:
    child = parent.get(key)
    return default if child is None else child.flag(f"`{key}`")


def _opt_text(parent: YamlNode, key: str) -> str | None:
    child = parent.get(key)
    return None if child is None else child.text(f"`{key}`")


def _entries(
    src: YamlNode | None, keywords: tuple[str, ...], what: str
) -> list[tuple[YamlNode, list[str]]]:
    """`wait_for` / `trigger` entries as (source, [keyword, arg, ...]), accepting one string,
    a list of comma strings, Listing 1's flat list, and a list of flat lists."""
    if src is None:
        return []
    if isinstance(src.node, yaml.ScalarNode):
        return [(src, _split_entry(src.text(what)))]
    items = src.children(what)
    if not items:
        return []
    raws: list[str | None] = [
        item.node.value if isinstance(item.node, yaml.ScalarNode) and not item.is_null else None
        for item in items
    ]

    def entry_like(raw: str | None) -> bool:
        return raw is not None and raw.split(",", 1)[0].strip().lower() in keywords

    first = raws[0]
    if (
        len(items) > 1
        and first is not None
        and "," not in first
        and first.strip().lower() in keywords
        and not all(entry_like(raw) for raw in raws[1:])
    ):
        parts = []
        for item, raw in zip(items, raws, strict=True):
            if raw is None:
                item.fail(f"an argument of {what} must be a scalar, got {item.kind()}")
            parts.append(raw.strip())
        return [(src, parts)]
    out = []
    for item, raw in zip(items, raws, strict=True):
        if isinstance(item.node, yaml.SequenceNode):
            parts = []
            for sub in item.children(what):
                parts.append(sub.text(f"an argument of {what}").strip())
            if not parts:
                item.fail(f"empty {what} entry")
            out.append((item, parts))
        elif raw is None:
            item.fail(f"a {what} entry must be text like 'keyword, arg', got {item.kind()}")
        else:
            out.append((item, _split_entry(raw)))
    return out


def _split_entry(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",")]


def _index(src: YamlNode, raw: str) -> int:
    text = raw.strip()
    if not text.lstrip("-").isdigit():
        src.fail(f"a state index must be an integer, got {shown(raw)}")
    return int(text)


@dataclass
class _Names:
    """Pass 1: every name of the file, for resolving references in pass 2."""

    scenes: dict[str, int] = field(default_factory=dict)
    scene_names: list[str] = field(default_factory=list)
    items: dict[str, int] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    item_states: list[int] = field(default_factory=list)
    tool_states: list[int] = field(default_factory=list)
    item_names: list[str] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    tool_scene: list[int] = field(default_factory=list)
    clashes: dict[int, tuple[int, YamlNode]] = field(default_factory=dict)
    """Item index -> (tool index, item name source) for an item and a tool with one name."""


def load_scenario(source: Path | str, *, name: str | None = None, strict: bool = False) -> Scenario:
    """Load a scenario: `source` is a path, or YAML text when `name` is given. The defects of
    `LOAD_WARNING_KINDS` are repaired onto `Scenario.warnings` (and logged), or with `strict`
    refused like any other."""
    if name is None:
        path = Path(source)
        text = read_text(path)
        file, scenario_id, origin = str(path), path.name.removesuffix(".yaml"), path
        scenario_id = scenario_id.removesuffix(".yml")
    else:
        text, file, scenario_id, origin = str(source), name, name, None
    root = compose_yaml(text, file)
    warnings: list[LoadWarning] | None = None if strict else []
    return _build(YamlNode(file, root, "scenes", warnings), scenario_id, origin)


def read_text(path: Path) -> str:
    """A user's file as UTF-8 text; an unreadable or undecodable file is an `InvalidFile`."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InvalidFile(f"{path}: not UTF-8 text") from None


def compose_yaml(text: str, file: str) -> yaml.Node:
    """The YAML node tree of `text` (SafeLoader), a malformed file refused with its line.

    libyaml's parser (`CSafeLoader`, when PyYAML was built with it) composes the same tree
    (tags, values, lines) some 20 times faster, and parsing is nine tenths of a load; a file it
    refuses is read again by the pure-Python parser, whose message is the one shown."""
    if _FAST_LOADER is not None:
        try:
            node = yaml.compose(text, Loader=_FAST_LOADER)
        except (yaml.YAMLError, ValueError):  # ValueError: text libyaml cannot take as UTF-8
            pass
        else:
            if node is None:
                raise ScenarioError(file, 1, "", "empty file: expected a list of scenes")
            return node
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise ScenarioError(file, line, "", f"malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(file, 1, "", f"malformed YAML: {exc}") from None
    if node is None:
        raise ScenarioError(file, 1, "", "empty file: expected a list of scenes")
    return node


def _build(root: YamlNode, scenario_id: str, origin: Path | None) -> Scenario:
    if not isinstance(root.node, yaml.SequenceNode) or not root.node.value:
        root.fail(f"a scenario must be a non-empty list of scenes, got {root.kind()}")
    later_keys = tuple(k for k in SCENE_KEYS if k != "objective")
    scene_srcs = [
        s.mapping("a scene", SCENE_KEYS)
        if i == 0
        else s.mapping("a scene (only the first scene carries `objective`)", later_keys)
        for i, s in enumerate(root.children("the scenes"))
    ]
    names = _index_names(scene_srcs)
    # EscapeBench's files have no objective: the engine then shows a default one.
    objective_src = scene_srcs[0].get("objective")
    objective = objective_src.text("`objective`") if objective_src else ""
    scenes = []
    items_seen = 0
    tools_seen = 0
    transitions_seen = [0]
    for s_index, src in enumerate(scene_srcs):
        scene_name = src.require("name", "a scene").name("the scene name")
        desc = src.require("desc", f"scene {scene_name!r}").text("`desc`")
        relations = []
        rel_src = src.get("scene_relations")
        if rel_src is not None:
            rel_src.mapping("`scene_relations`")
            labels: set[str] = set()
            for key_node, value_node in rel_src.node.value:
                key = root.child(key_node, rel_src.path)
                label = key.ident("a move label")
                if fold_name(label) in labels:
                    key.fail(f"duplicate move label {label!r} (labels match case-insensitively)")
                labels.add(fold_name(label))
                dest_src = root.child(value_node, f"{rel_src.path}.{label}")
                dest = dest_src.name("a destination scene")
                if fold_name(dest) not in names.scenes:
                    dest_src.fail(f"unknown scene {dest!r}")
                relations.append((label, dest))
        items = []
        for entry in _list(src, "items"):
            item = _build_item(entry, names, s_index, items_seen, transitions_seen)
            items.append(item)
            items_seen += 1
        tools = []
        for entry in _list(src, "tools"):
            tools.append(_build_tool(entry, names, s_index, tools_seen))
            tools_seen += 1
        scenes.append(
            Scene(
                name=scene_name,
                desc=desc,
                visible=_opt_flag(src, "visible", True),
                relations=tuple(relations),
                items=tuple(items),
                tools=tuple(tools),
                index=s_index,
                line=src.line,
            )
        )
    all_items = [item for scene in scenes for item in scene.items]
    for item_index, (tool_index, name_src) in names.clashes.items():
        becomes = {
            t.index
            for state in all_items[item_index].states
            for tr in state.transitions
            for t in tr.trigger
            if t.op == "become_tool"
        }
        if tool_index not in becomes:
            name_src.fail(
                f"duplicate name {names.item_names[item_index]!r}: a tool has it too "
                "(an item may share a name only with the tool it becomes via become_tool)"
            )
    if root.warnings is not None:
        scenes = _link_orphans(scenes, scene_srcs)
    found = sorted(root.warnings or (), key=lambda w: w.line)
    return Scenario(
        id=scenario_id,
        objective=objective,
        scenes=tuple(scenes),
        source=origin,
        warnings=tuple(found),
    )


def _link_orphans(scenes: list[Scene], srcs: list[YamlNode]) -> list[Scene]:
    """Give each scene no relation leads to, but whose `Back to X` relation names a reachable
    scene X, the relation from X it evidently lost (game2-3-easy's shelf close-up has `Back
    to the kitchen`, the kitchen nothing towards it, while game2-3 and game2-3-hard have it)."""
    ids = {fold_name(s.name): s.index for s in scenes}
    while True:
        reached = {0}
        frontier = [0]
        while frontier:
            for _label, dest in scenes[frontier.pop()].relations:
                index = ids[fold_name(dest)]
                if index not in reached:
                    reached.add(index)
                    frontier.append(index)
        repaired = False
        for scene in scenes:
            if scene.index in reached:
                continue
            back = [
                ids[fold_name(dest)]
                for label, dest in scene.relations
                if fold_name(label).startswith("back to") and ids[fold_name(dest)] in reached
            ]
            if len(back) != 1:
                continue
            parent = scenes[back[0]]
            labels = {fold_name(label) for label, _ in parent.relations}
            label = f"To the {scene.name}"
            if fold_name(label) in labels:
                label = scene.name
            scenes[parent.index] = replace(
                parent, relations=(*parent.relations, (label, scene.name))
            )
            srcs[scene.index].warn(
                "unreachable-scene",
                f"no relation leads to scene {scene.name!r}; added {label!r} to its `Back to` "
                f"scene {parent.name!r}",
            )
            repaired = True
            break
        if not repaired:
            return scenes


def _list(parent: YamlNode, key: str) -> list[YamlNode]:
    child = parent.get(key)
    return [] if child is None else child.children(f"`{key}`")


def _index_names(scene_srcs: list[YamlNode]) -> _Names:
    names = _Names()
    where_named: dict[str, YamlNode] = {}
    for s_index, src in enumerate(scene_srcs):
        name_src = src.require("name", "a scene")
        key = fold_name(name_src.ident("the scene name"))
        if key in names.scenes:
            name_src.fail(f"duplicate scene name {name_src.name('')!r}")
        names.scenes[key] = s_index
        names.scene_names.append(name_src.name("the scene name"))
        for entry in _list(src, "items"):
            body = entry.mapping("an item entry", ITEM_ENTRY_KEYS).require("item", "an item entry")
            body.mapping("`item`", ITEM_KEYS)
            n_src = body.require("name", "an item")
            name = n_src.ident("the item name")
            key = fold_name(name)
            if key in names.items:
                n_src.fail(f"duplicate item name {name!r} (first at line {where_named[key].line})")
            names.items[key] = len(names.item_names)
            where_named[key] = n_src
            names.item_names.append(name)
            states = body.require("states", f"item {name!r}").children("`states`")
            if not states:
                body.require("states", "").fail(f"item {name!r} needs at least one state")
            names.item_states.append(len(states))
        for entry in _list(src, "tools"):
            body = entry.mapping("a tool entry", TOOL_ENTRY_KEYS).require("tool", "a tool entry")
            body.mapping("`tool`", TOOL_KEYS, TOOL_TOLERATED)
            n_src = body.require("name", "a tool")
            name = n_src.ident("the tool name")
            key = fold_name(name)
            if key in names.tools:
                first = where_named["tool:" + key].line
                n_src.fail(f"duplicate tool name {name!r} (first at line {first})")
            names.tools[key] = len(names.tool_names)
            where_named["tool:" + key] = n_src
            names.tool_names.append(name)
            names.tool_scene.append(s_index)
            states = body.require("states", f"tool {name!r}").children("`states`")
            if not states:
                body.require("states", "").fail(f"tool {name!r} needs at least one state")
            names.tool_states.append(len(states))
    for key, item_index in names.items.items():
        if key in names.tools:
            names.clashes[item_index] = (names.tools[key], where_named[key])
    return names


def _build_item(
    entry: YamlNode, names: _Names, scene: int, index: int, transitions_seen: list[int]
) -> Item:
    body = entry.require("item", "an item entry")
    name = body.require("name", "an item").name("the item name")
    states = []
    n_states = names.item_states[index]
    for s_src in body.require("states", "").children("`states`"):
        s_src.mapping("an item state", ITEM_STATE_KEYS, ITEM_STATE_TOLERATED)
        transitions = []
        for t_src in _list(s_src, "transitions"):
            t_src.mapping("a transition", TRANSITION_KEYS)
            waits = tuple(
                _wait(e_src, parts, names)
                for e_src, parts in _entries(t_src.get("wait_for"), WAIT_KINDS, "wait_for")
            )
            triggers = tuple(
                trig
                for e_src, parts in _entries(t_src.get("trigger"), TRIGGER_OPS, "trigger")
                if (trig := _trigger(e_src, parts, names, scene, index, name, n_states)) is not None
            )
            if not waits:
                t_src.fail("a transition needs at least one `wait_for` entry")
            transitions.append(
                Transition(
                    wait_for=waits,
                    trigger=triggers,
                    reward=_opt_text(t_src, "reward") or "",
                    index=transitions_seen[0],
                    line=t_src.line,
                )
            )
            transitions_seen[0] += 1
        _state_reward(s_src, transitions)
        states.append(
            ItemState(
                desc=_opt_text(s_src, "desc") or "",
                neg_reward=_neg_reward(s_src),
                transitions=tuple(transitions),
                line=s_src.line,
            )
        )
    position = entry.get("position")
    return Item(
        name=name,
        position=tidy(position.text("`position`")) if position else "",
        visible=_opt_flag(body, "visible", True),
        interactable=_opt_flag(body, "interactable", True),
        states=tuple(states),
        scene=scene,
        index=index,
        line=body.line,
    )


def _state_reward(s_src: YamlNode, transitions: list[Transition]) -> None:
    """EscapeBench's `reward` written on a state, one level out from its transition: the
    reward of the state's last transition that has none (that transition's feedback)."""
    src = s_src.get("reward")
    if src is None:
        return
    text = src.text("`reward`")
    for k in range(len(transitions) - 1, -1, -1):
        if not transitions[k].reward:
            transitions[k] = replace(transitions[k], reward=text)
            src.warn(
                "state-reward",
                f"`reward` belongs to a transition, not a state: read as the reward of "
                f"transitions[{k}]",
            )
            return
    src.warn("state-reward", "`reward` on a state whose transitions all have one: ignored")


def _neg_reward(s_src: YamlNode) -> str | None:
    value = _opt_text(s_src, "neg_reward")
    typo = s_src.get("neg_rewards")
    if typo is None:
        return value
    if value is not None:
        typo.warn("neg-rewards", "`neg_rewards` beside `neg_reward`: ignored")
        return value
    typo.warn("neg-rewards", "`neg_rewards` read as `neg_reward`")
    return typo.text("`neg_rewards`")


def _wait(src: YamlNode, parts: list[str], names: _Names) -> WaitFor:
    keyword = parts[0].lower()
    if keyword == "click":
        if len(parts) != 1:
            src.fail(f"`click` takes no argument, got {len(parts) - 1}")
        return WaitFor("click", line=src.line)
    if keyword == "apply":
        if len(parts) != 2 or not parts[1]:
            src.fail(f"`apply` takes one tool name, got {len(parts) - 1} arguments")
        tool = names.tools.get(fold_name(parts[1]))
        if tool is None:
            src.fail(f"unknown tool {parts[1]!r}")
        return WaitFor("apply", names.tool_names[tool], tool, line=src.line)
    if keyword == "input":
        if len(parts) < 2:
            src.fail("`input` takes the expected string")
        raw = src.node.value if isinstance(src.node, yaml.ScalarNode) else None
        if raw is not None and "," in raw and raw.split(",", 1)[0].strip().lower() == "input":
            expected = raw.split(",", 1)[1].strip()  # the string may itself hold commas
        elif len(parts) == 2:
            expected = parts[1]
        else:
            src.fail(f"`input` takes one string, got {len(parts) - 1} arguments")
        return WaitFor("input", expected, line=src.line)
    src.fail(f"unknown wait_for {shown(parts[0])}; expected click, apply, TOOL or input, STRING")


def _trigger(
    src: YamlNode,
    parts: list[str],
    names: _Names,
    scene: int,
    owner: int,
    owner_name: str,
    owner_states: int,
) -> Trigger | None:
    """The trigger of one entry; None when it is skipped (a state index out of range, read
    leniently)."""
    op = parts[0].lower()
    args = parts[1:]
    line = src.line
    if op not in TRIGGER_OPS:
        src.fail(f"unknown trigger {shown(parts[0])}; expected one of {', '.join(TRIGGER_OPS)}")
    if op == "become_tool":
        if len(args) != 1 or not args[0]:
            src.fail(f"become_tool takes one tool name, got {len(args)} arguments")
        tool = names.tools.get(fold_name(args[0]))
        if tool is None:
            src.fail(f"unknown tool {args[0]!r}")
        if names.tool_scene[tool] != scene:
            src.fail(f"become_tool names tool {args[0]!r}, which is not defined in this scene")
        return Trigger(op, "tool", names.tool_names[tool], tool, None, line=line)
    kinds: tuple[ObjectKind, ...] = {
        "change_state": ("item", "tool"),
        "change_visible": ("scene", "item", "tool"),
        "change_interact": ("item",),
    }[op]
    if len(args) == 1:
        kind: ObjectKind = "item"
        index, name, explicit, raw = owner, owner_name, False, args[0]
    elif len(args) == 3:
        if args[0].lower() not in kinds:
            src.fail(f"{op} acts on {'|'.join(kinds)}, got {shown(args[0])}")
        kind = args[0].lower()  # type: ignore[assignment]
        table = {"scene": names.scenes, "item": names.items, "tool": names.tools}[kind]
        found = table.get(fold_name(args[1]))
        if found is None:
            src.fail(f"unknown {kind} {args[1]!r}")
        index, explicit, raw = found, True, args[2]
        name = {"scene": names.scene_names, "item": names.item_names, "tool": names.tool_names}[
            kind
        ][found]
    else:
        shapes = f"BOOL or {'|'.join(kinds)}, NAME, BOOL"
        if op == "change_state":
            shapes = "N or item|tool, NAME, N"
        src.fail(f"{op} takes {shapes}; got {len(args)} arguments")
    value: int | bool
    if op == "change_state":
        value = _index(src, raw)
        count = (
            owner_states
            if not explicit
            else (names.item_states[index] if kind == "item" else names.tool_states[index])
        )
        if not 0 <= value < count:
            problem = f"state index {value} out of range: {name!r} has {count} states"
            if value < 0:
                src.fail(problem)
            src.warn("state-out-of-range", f"{problem}; the trigger is skipped")
            return None
    else:
        value = _flag(src, raw, f"the flag of {op}")
    return Trigger(op, kind, name, index, value, explicit, line)  # type: ignore[arg-type]


def _build_tool(entry: YamlNode, names: _Names, scene: int, index: int) -> Tool:
    body = entry.require("tool", "a tool entry")
    name = body.require("name", "a tool").name("the tool name")
    states = []
    interactable = body.get("interactable")
    if interactable is not None and body.warnings is not None:
        interactable.warn("tool-interactable", "`interactable` on a tool: tools have none, ignored")
    for s_src in body.require("states", "").children("`states`"):
        s_src.mapping("a tool state", TOOL_STATE_KEYS)
        apply_to = tuple(_tool_refs(s_src, "apply_to", names, items_too=True))
        wait_for = tuple(_tool_refs(s_src, "wait_for", names, items_too=False))
        states.append(
            ToolState(
                desc=_opt_text(s_src, "desc") or "",
                apply_to=apply_to,
                wait_for=wait_for,
                apply_to_keys=tuple(fold_name(n) for n in apply_to),
                wait_for_keys=tuple(fold_name(n) for n in wait_for),
                line=s_src.line,
            )
        )
    position = entry.get("position")
    return Tool(
        name=name,
        position=tidy(position.text("`position`")) if position else "",
        visible=_opt_flag(body, "visible", True),
        states=tuple(states),
        scene=scene,
        index=index,
        line=body.line,
    )


def _tool_refs(state: YamlNode, key: str, names: _Names, *, items_too: bool) -> list[str]:
    src = state.get(key)
    if src is None:
        return []
    refs = [src] if isinstance(src.node, yaml.ScalarNode) else src.children(f"`{key}`")
    out = []
    for ref in refs:
        name = ref.name(f"an entry of `{key}`")
        if fold_name(name) in names.tools:
            out.append(names.tool_names[names.tools[fold_name(name)]])
        elif items_too and fold_name(name) in names.items:
            out.append(names.item_names[names.items[fold_name(name)]])
        else:
            ref.fail(f"unknown {'item or tool' if items_too else 'tool'} {name!r}")
    return out
