"""Path metadata of a scenario (`<scenario>.meta.yaml`, contract §4, App. E.2).

Each phase of a scenario has four gold paths: A (affordance), B (alternative principle) and two
creative leaps C1 and C2. A path names its finish action (the action that completes it) and a
gold action sequence from the phase's start. `replay_gold` plays a gold sequence on a game, the
way the checker and the oracle agent use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from forkingpaths.benchmarks.escape.actions import action_key
from forkingpaths.benchmarks.escape.engine import ActionResult, EscapeGame
from forkingpaths.benchmarks.escape.schema import YamlNode, compose_yaml, read_text
from forkingpaths.core.errors import ConfigError, shown

SCHEMA_VERSION = 1
PATH_ID = re.compile(r"^P(\d+)_(A|B|C1|C2)$")
PATH_KINDS = ("A", "B", "C1", "C2")

META_KEYS = ("schema_version", "scenario", "title", "phases", "paths")
PHASE_KEYS = ("phase", "name", "marker", "start_scene")
PATH_KEYS = ("id", "phase", "type", "mechanism", "finish", "gold", "extra", "note")

PathType = Literal["A", "B", "C"]


@dataclass(frozen=True)
class PathSpec:
    """One gold solution path."""

    id: str
    """`P<phase>_<A|B|C1|C2>`."""
    phase: int
    type: PathType
    """A affordance, B alternative principle, C creative leap."""
    mechanism: str
    finish: str
    """The action that completes the path (its canonical text)."""
    gold: tuple[str, ...]
    """Actions from the phase's start; the last one is `finish`."""
    extra: bool = False
    """A path of ours that the paper's catalog lacks (`extra: true`): played, found and
    forbidden like any other, counted apart from Path Discovery unless the `extra_paths`
    option includes it (Desert Restart's P1_C1: Table 16 prints "No tire-side C1 path")."""
    note: str = ""
    """Why a path is extra, or any other remark (free text)."""
    index: int = field(default=0, compare=False)
    """Position in the file's `paths` list."""
    line: int = field(default=0, compare=False)
    finish_line: int = field(default=0, compare=False)
    gold_lines: tuple[int, ...] = field(default=(), compare=False)

    @property
    def finish_key(self) -> str:
        return action_key(self.finish) or self.finish

    @property
    def kind(self) -> str:
        """A, B, C1 or C2 (the id's suffix)."""
        return self.id.split("_", 1)[1]


@dataclass(frozen=True)
class PhaseSpec:
    phase: int
    name: str
    marker: str
    """Reward text that ends the phase: `CHECKPOINT!` or `GAME END!`."""
    start_scene: str | None = None
    """Where the phase's gold sequences start (phase 2: walked to after a phase-1 path)."""
    index: int = field(default=0, compare=False)
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class ScenarioMeta:
    scenario: str
    title: str
    phases: tuple[PhaseSpec, ...]
    paths: tuple[PathSpec, ...]
    source: Path | None = field(default=None, compare=False)

    def phase(self, number: int) -> PhaseSpec:
        for phase in self.phases:
            if phase.phase == number:
                return phase
        raise KeyError(f"no phase {number} in {self.scenario} (phases: {self.phase_numbers})")

    @property
    def phase_numbers(self) -> list[int]:
        return [p.phase for p in self.phases]

    def paths_of_phase(self, number: int) -> list[PathSpec]:
        return [p for p in self.paths if p.phase == number]

    def path(self, path_id: str) -> PathSpec:
        for path in self.paths:
            if path.id == path_id:
                return path
        raise KeyError(
            f"no path {path_id!r} in {self.scenario} (paths: {[p.id for p in self.paths]})"
        )

    @property
    def extra_ids(self) -> list[str]:
        """Ids of the paths the paper's catalog lacks (`extra: true`)."""
        return [p.id for p in self.paths if p.extra]

    def path_by_finish_key(self, key: str) -> PathSpec | None:
        """The path whose finish action has this `action_key` (or action text)."""
        key = action_key(key) or key
        for path in self.paths:
            if path.finish_key == key:
                return path
        return None


def default_meta_path(scenario_path: Path) -> Path:
    """The sibling metadata file of a scenario: `<stem>.meta.yaml`."""
    name = scenario_path.name
    stem = name[: -len(".yaml")] if name.endswith(".yaml") else scenario_path.stem
    return scenario_path.with_name(f"{stem}.meta.yaml")


def load_meta(path: Path | str, *, name: str | None = None) -> ScenarioMeta:
    """Load a metadata file (or YAML text when `name` is given); `ScenarioError` with file,
    line and `paths[3].gold[5]`-style place on any problem."""
    if name is None:
        source = Path(path)
        text = read_text(source)
        file, origin = str(source), source
    else:
        text, file, origin = str(path), name, None
    root = YamlNode(file, compose_yaml(text, file), "")
    root.mapping("a metadata file", META_KEYS)
    version = root.require("schema_version", "a metadata file")
    if version.text("`schema_version`").strip() != str(SCHEMA_VERSION):
        version.fail(
            f"unsupported schema_version {shown(version.node.value)}; expected {SCHEMA_VERSION}"
        )
    scenario = root.require("scenario", "a metadata file").name("`scenario`")
    title_src = root.get("title")
    title = title_src.text("`title`") if title_src else scenario
    phases = []
    seen_phases: set[int] = set()
    phase_srcs = root.require("phases", "a metadata file").children("`phases`")
    if not phase_srcs:
        root.require("phases", "").fail("`phases` must list at least one phase")
    for i, p_src in enumerate(phase_srcs):
        p_src.mapping("a phase", PHASE_KEYS)
        number_src = p_src.require("phase", "a phase")
        number = _int(number_src, "`phase`")
        if number in seen_phases:
            number_src.fail(f"duplicate phase {number}")
        seen_phases.add(number)
        start = p_src.get("start_scene")
        phases.append(
            PhaseSpec(
                phase=number,
                name=p_src.require("name", "a phase").text("`name`"),
                marker=p_src.require("marker", "a phase").name("`marker`"),
                start_scene=start.name("`start_scene`") if start else None,
                index=i,
                line=p_src.line,
            )
        )
    paths = []
    seen_ids: dict[str, int] = {}
    for i, src in enumerate(root.require("paths", "a metadata file").children("`paths`")):
        src.mapping("a path", PATH_KEYS)
        id_src = src.require("id", "a path")
        path_id = id_src.name("`id`")
        match = PATH_ID.match(path_id)
        if match is None:
            id_src.fail(f"path id {path_id!r} must read P<phase>_<A|B|C1|C2>, like P1_A or P2_C1")
        if path_id in seen_ids:
            id_src.fail(f"duplicate path id {path_id!r} (first at line {seen_ids[path_id]})")
        seen_ids[path_id] = id_src.line
        phase_src = src.require("phase", "a path")
        phase = _int(phase_src, "`phase`")
        if phase not in seen_phases:
            phase_src.fail(f"unknown phase {phase}; phases: {sorted(seen_phases)}")
        if int(match.group(1)) != phase:
            id_src.fail(f"path id {path_id!r} does not match its phase {phase}")
        type_src = src.require("type", "a path")
        path_type = type_src.name("`type`")
        expected = match.group(2)[0]
        if path_type != expected:
            type_src.fail(f"type {path_type!r} does not match id {path_id!r} (expected {expected})")
        finish_src = src.require("finish", "a path")
        finish = finish_src.name("`finish`")
        if action_key(finish) is None:
            finish_src.fail(f"finish {finish!r} is not an action like apply(tool, item)")
        gold_srcs = src.require("gold", "a path").children("`gold`")
        if not gold_srcs:
            src.require("gold", "").fail("`gold` must list at least one action")
        gold = tuple(g.name("a gold action") for g in gold_srcs)
        extra_src = src.get("extra")
        note_src = src.get("note")
        paths.append(
            PathSpec(
                id=path_id,
                phase=phase,
                type=path_type,  # type: ignore[arg-type]
                mechanism=src.require("mechanism", "a path").text("`mechanism`"),
                finish=finish,
                gold=gold,
                extra=extra_src.flag("`extra`") if extra_src else False,
                note=note_src.text("`note`") if note_src else "",
                index=i,
                line=src.line,
                finish_line=finish_src.line,
                gold_lines=tuple(g.line for g in gold_srcs),
            )
        )
    return ScenarioMeta(
        scenario=scenario,
        title=title,
        phases=tuple(sorted(phases, key=lambda p: p.phase)),
        paths=tuple(paths),
        source=origin,
    )


def _int(src: YamlNode, what: str) -> int:
    raw = src.text(what).strip()
    if not raw.isdigit() or int(raw) < 1:
        src.fail(f"{what} must be a positive integer, got {shown(src.node.value)}")
    return int(raw)


# ---- replaying gold sequences ----


def walk_to(game: EscapeGame, scene: str | None) -> list[ActionResult]:
    """Move along the shortest visible route to `scene`, where there is one (else stay)."""
    if scene is None:
        return []
    route = game.route_to(scene)
    return [game.step(move) for move in route or ()]


def replay_gold(
    game: EscapeGame,
    meta: ScenarioMeta,
    path_id: str,
    *,
    after: str | None = None,
) -> list[ActionResult]:
    """Play path `path_id` on `game` (a fresh game for phase 1 or with `after`).

    With `after`, the gold of that earlier-phase path is played first (its results are not
    returned). Then the game walks to the phase's `start_scene` where a route exists, and plays
    the path's gold. Returns the walk's results followed by one result per gold action, so the
    gold's own results are always the last `len(gold)`. Every action is played, whatever the
    earlier results."""
    path = meta.path(path_id)
    if after is not None:
        before = meta.path(after)
        if before.phase >= path.phase:
            raise ConfigError(
                f"after={after!r} must be a path of an earlier phase than {path_id!r}"
            )
        replay_gold(game, meta, after)
    results = walk_to(game, meta.phase(path.phase).start_scene)
    results += [game.step(action) for action in path.gold]
    return results


def gold_actions(results: Sequence[ActionResult], path: PathSpec) -> list[ActionResult]:
    """The results of `path`'s own gold actions out of `replay_gold`'s list."""
    return list(results[len(results) - len(path.gold) :])
