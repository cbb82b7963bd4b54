"""`forkingpaths escape check`: lint a scenario and replay its path metadata (App. E.2).

`check_scenario` never raises on a bad file: a load error becomes one issue. On a scenario that
loads it reports static problems (states nothing can reach, tools nothing accepts, waits no
`apply_to` can satisfy, scenes that can never be shown) and, with metadata, replays every gold
path as contract §4 demands (phase 2 after each phase-1 path), reporting file, line and the place
inside the structure (`scenes[1].items[0].item.states[2]`, `paths[3].gold[5]`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from forkingpaths.benchmarks.escape.actions import action_key, fold_name
from forkingpaths.benchmarks.escape.engine import CHECKPOINT, GAME_END, ActionResult, EscapeGame
from forkingpaths.benchmarks.escape.metadata import (
    PATH_KINDS,
    ScenarioMeta,
    default_meta_path,
    load_meta,
    replay_gold,
)
from forkingpaths.benchmarks.escape.schema import Scenario, ScenarioError, load_scenario
from forkingpaths.core.errors import InvalidFile

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class CheckIssue:
    """One problem found in a scenario or metadata file."""

    file: str
    line: int
    where: str
    """Place inside the structure: `scenes[0].tools[1].tool`, `paths[2].gold[4]`."""
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = f" {self.where}:" if self.where else ""
        return f"{self.file}:{self.line}:{where} {self.message}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def check_scenario(yaml_path: Path, meta_path: Path | None = None) -> list[CheckIssue]:
    """Every problem of a scenario (and of its metadata: `meta_path`, else the sibling
    `<stem>.meta.yaml` when it exists), errors and warnings, in file order per file."""
    yaml_path = Path(yaml_path)
    try:
        scenario = load_scenario(yaml_path)
    except ScenarioError as exc:
        return [CheckIssue(exc.file, exc.line, exc.where, exc.problem)]
    except InvalidFile as exc:
        return [CheckIssue(str(yaml_path), 1, "", str(exc))]
    # Defects the loader repaired or skipped (EscapeBench's slips) come first, as warnings.
    issues = [CheckIssue(w.file, w.line, w.where, w.problem, "warning") for w in scenario.warnings]
    issues += lint_scenario(scenario, str(yaml_path))
    if meta_path is None:
        sibling = default_meta_path(yaml_path)
        meta_path = sibling if sibling.is_file() else None
    if meta_path is not None:
        try:
            meta = load_meta(meta_path)
        except ScenarioError as exc:
            issues.append(CheckIssue(exc.file, exc.line, exc.where, exc.problem))
        except InvalidFile as exc:
            issues.append(CheckIssue(str(meta_path), 1, "", str(exc)))
        else:
            issues += check_meta(scenario, meta, str(meta_path))
    return issues


# ---- the scenario on its own ----


def lint_scenario(scenario: Scenario, file: str) -> list[CheckIssue]:
    """Static lints of a loaded scenario (a simple over-approximation of what can happen)."""
    issues: list[CheckIssue] = []

    def report(line: int, where: str, message: str, severity: Severity = "error") -> None:
        issues.append(CheckIssue(file, line, where, message, severity))

    if not scenario.objective:
        report(
            scenario.scenes[0].line,
            "scenes[0]",
            "the first scene has no `objective`: agents are shown a generic one",
            "warning",
        )
    item_where = {}
    tool_where = {}
    for scene in scenario.scenes:
        for j, item in enumerate(scene.items):
            item_where[item.index] = f"scenes[{scene.index}].items[{j}].item"
        for j, tool in enumerate(scene.tools):
            tool_where[tool.index] = f"scenes[{scene.index}].tools[{j}].tool"

    # What the triggers of reachable states can do (fixpoint over item and tool states).
    item_reach = [{0} for _ in scenario.items]
    tool_reach = [{0} for _ in scenario.tools]
    shown_scenes = {s.index for s in scenario.scenes if s.visible}
    shown_items = {i.index for i in scenario.items if i.visible}
    shown_tools = {t.index for t in scenario.tools if t.visible}
    grown = True
    while grown:
        grown = False
        for item in scenario.items:
            for k in sorted(item_reach[item.index]):
                for tr in item.states[k].transitions:
                    for trig in tr.trigger:
                        if trig.op == "change_state":
                            reach = item_reach if trig.kind == "item" else tool_reach
                            target = reach[trig.index]
                        elif trig.op == "change_visible" and trig.value:
                            target = {"scene": shown_scenes, "item": shown_items}.get(
                                trig.kind, shown_tools
                            )
                        elif trig.op == "become_tool":
                            target = shown_tools
                        else:
                            continue
                        value = trig.value if trig.op == "change_state" else trig.index
                        if value not in target:
                            target.add(value)  # type: ignore[arg-type]
                            grown = True
        for tool in scenario.tools:
            for k in sorted(tool_reach[tool.index]):
                nxt = k + 1
                if (
                    tool.states[k].wait_for
                    and nxt < len(tool.states)
                    and nxt not in tool_reach[tool.index]
                ):
                    tool_reach[tool.index].add(nxt)
                    grown = True

    for item in scenario.items:
        where = item_where[item.index]
        for k, state in enumerate(item.states):
            if k not in item_reach[item.index]:
                report(
                    state.line,
                    f"{where}.states[{k}]",
                    f"no trigger can ever put item {item.name!r} in state {k}",
                    "warning",
                )
        if item.index not in shown_items:
            report(item.line, where, f"item {item.name!r} is never made visible", "warning")
        for k, state in enumerate(item.states):
            for m, tr in enumerate(state.transitions):
                for wait in tr.wait_for:
                    if wait.kind != "apply" or not tr.trigger:
                        continue
                    tool = scenario.tools[wait.tool]
                    if not any(fold_name(item.name) in s.apply_to_keys for s in tool.states):
                        report(
                            wait.line,
                            f"{where}.states[{k}].transitions[{m}].wait_for",
                            f"waits for `apply, {tool.name}` but no state of tool "
                            f"{tool.name!r} lists {item.name!r} in apply_to",
                        )

    waited_for = {
        wait.tool
        for item in scenario.items
        for state in item.states
        for tr in state.transitions
        for wait in tr.wait_for
        if wait.kind == "apply"
    }
    craft_bases = {fold_name(n) for tool in scenario.tools for s in tool.states for n in s.apply_to}
    for tool in scenario.tools:
        where = tool_where[tool.index]
        for k, state in enumerate(tool.states):
            for m, target_name in enumerate(state.apply_to):
                if not _accepts(scenario, target_name, tool.index):
                    report(
                        state.line,
                        f"{where}.states[{k}].apply_to[{m}]",
                        f"lists {target_name!r}, but {target_name!r} never waits for "
                        f"{tool.name!r}: that apply or craft can only do nothing",
                        "warning",
                    )
        for k, state in enumerate(tool.states):
            if k not in tool_reach[tool.index]:
                report(
                    state.line,
                    f"{where}.states[{k}]",
                    f"no trigger or craft can ever put tool {tool.name!r} in state {k}",
                    "warning",
                )
            for ingredient_name in state.wait_for:
                ingredient = scenario.find_tool(ingredient_name)
                if ingredient is not None and not any(
                    fold_name(tool.name) in s.apply_to_keys for s in ingredient.states
                ):
                    report(
                        state.line,
                        f"{where}.states[{k}].wait_for",
                        f"waits for ingredient {ingredient.name!r}, whose apply_to never lists "
                        f"{tool.name!r}",
                    )
        if (
            all(not s.apply_to for s in tool.states)
            and tool.index not in waited_for
            and fold_name(tool.name) not in craft_bases
            and all(not s.wait_for for s in tool.states)
        ):
            report(
                tool.line,
                where,
                f"nothing accepts tool {tool.name!r}: every apply_to is empty and no "
                "transition waits for it",
                "warning",
            )
        if tool.index not in shown_tools:
            report(tool.line, where, f"tool {tool.name!r} is never made visible", "warning")

    linked = {0}
    frontier = [0]
    while frontier:
        here = frontier.pop()
        for _label, dest in scenario.neighbours[here]:
            if dest not in linked:
                linked.add(dest)
                frontier.append(dest)
    for scene in scenario.scenes:
        where = f"scenes[{scene.index}]"
        if scene.index not in shown_scenes:
            report(
                scene.line,
                where,
                f"scene {scene.name!r} is not visible at start and no trigger makes it visible",
            )
        if scene.index not in linked:
            report(
                scene.line,
                where,
                f"no scene relation leads to scene {scene.name!r} from {scenario.scenes[0].name!r}",
                "warning",
            )
    issues.sort(key=lambda i: i.line)
    return issues


def _accepts(scenario: Scenario, name: str, tool: int) -> bool:
    """Whether item or base tool `name` waits for `tool` anywhere (a transition's `apply`, a
    state's `wait_for`)."""
    item = scenario.find_item(name)
    if item is not None:
        return any(
            wait.kind == "apply" and wait.tool == tool
            for state in item.states
            for tr in state.transitions
            for wait in tr.wait_for
        )
    base = scenario.find_tool(name)
    key = fold_name(scenario.tools[tool].name)
    return base is not None and any(key in state.wait_for_keys for state in base.states)


# ---- the path metadata ----


def check_meta(scenario: Scenario, meta: ScenarioMeta, file: str) -> list[CheckIssue]:
    """Metadata rules of contract §4, gold paths replayed on fresh games."""
    issues: list[CheckIssue] = []

    def report(line: int, where: str, message: str, severity: Severity = "error") -> None:
        issues.append(CheckIssue(file, line, where, message, severity))

    if meta.scenario != scenario.id:
        report(1, "scenario", f"names scenario {meta.scenario!r}, but the file is {scenario.id!r}")
    for phase in meta.phases:
        where = f"phases[{phase.index}]"
        kinds = {p.kind for p in meta.paths_of_phase(phase.phase)}
        missing = [k for k in PATH_KINDS if k not in kinds]
        if missing:
            report(phase.line, where, f"phase {phase.phase} has no {', '.join(missing)} path")
        if phase.start_scene is not None and scenario.find_scene(phase.start_scene) is None:
            report(phase.line, f"{where}.start_scene", f"unknown scene {phase.start_scene!r}")
    finishes: dict[str, str] = {}
    for path in meta.paths:
        key = path.finish_key
        if key in finishes:
            report(
                path.finish_line,
                f"paths[{path.index}].finish",
                f"finish {path.finish!r} is also the finish of {finishes[key]}",
            )
        else:
            finishes[key] = path.id
        last = len(path.gold) - 1
        if action_key(path.gold[last]) != key:
            report(
                path.gold_lines[last],
                f"paths[{path.index}].gold[{last}]",
                f"the last gold action {path.gold[last]!r} is not the finish {path.finish!r}",
            )
        for j, action in enumerate(path.gold):
            other = finishes_of_others(meta, path.id).get(action_key(action) or action)
            if other is not None:
                report(
                    path.gold_lines[j],
                    f"paths[{path.index}].gold[{j}]",
                    f"{action!r} is the finish action of {other}",
                )
    if issues and any(i.where.endswith("start_scene") for i in issues):
        return issues
    issues += _replay_all(scenario, meta, file)
    return issues


def finishes_of_others(meta: ScenarioMeta, path_id: str) -> dict[str, str]:
    """Finish key -> path id for every path but `path_id`."""
    return {p.finish_key: p.id for p in meta.paths if p.id != path_id}


def _marker_hit(result: ActionResult, marker: str) -> bool:
    if marker == CHECKPOINT:
        return result.checkpoint
    if marker == GAME_END:
        return result.game_end
    return result.success and marker in result.response


def _replay_all(scenario: Scenario, meta: ScenarioMeta, file: str) -> list[CheckIssue]:
    issues: list[CheckIssue] = []
    phases = list(meta.phases)
    broken: set[str] = set()
    for n, phase in enumerate(phases):
        earlier = [meta.paths_of_phase(p.phase) for p in phases[:n]]
        for prefix in itertools.product(*earlier):
            if any(p.id in broken for p in prefix):
                continue
            context = f" (after {' then '.join(p.id for p in prefix)})" if prefix else ""
            for path in meta.paths_of_phase(phase.phase):
                game = EscapeGame(scenario)
                for before in prefix:
                    replay_gold(game, meta, before.id)
                results = replay_gold(game, meta, path.id)
                found = list(_gold_issues(results, meta, path.id, file, context))
                if found and not prefix:
                    broken.add(path.id)
                issues += found
        if n > 0:
            for path in meta.paths_of_phase(phase.phase):
                game = EscapeGame(scenario)
                results = replay_gold(game, meta, path.id)
                for result in results:
                    if result.checkpoint:
                        break
                    if result.game_end:
                        issues.append(
                            CheckIssue(
                                file,
                                path.line,
                                f"paths[{path.index}]",
                                f"{path.id} reaches {GAME_END} from the initial state, without "
                                f"the phase-{phases[n - 1].phase} marker",
                            )
                        )
                        break
    return issues


def _gold_issues(
    results: list[ActionResult], meta: ScenarioMeta, path_id: str, file: str, context: str
) -> Iterator[CheckIssue]:
    path = meta.path(path_id)
    phase = meta.phase(path.phase)
    n_walk = len(results) - len(path.gold)
    for result in results[:n_walk]:
        if not result.valid:
            yield CheckIssue(
                file,
                phase.line,
                f"phases[{phase.index}].start_scene",
                f"{path.id}{context}: walking to {phase.start_scene!r} failed at "
                f"{result.action}: {result.response}",
            )
            return
    gold = results[n_walk:]
    for j, result in enumerate(gold):
        where = f"paths[{path.index}].gold[{j}]"
        line = path.gold_lines[j]
        if not result.valid:
            yield CheckIssue(
                file, line, where, f"{path.id}{context}: invalid action: {result.response}"
            )
            return
        if _marker_hit(result, phase.marker):
            if j < len(gold) - 1:
                yield CheckIssue(
                    file,
                    line,
                    where,
                    f"{path.id}{context}: reaches {phase.marker} before its finish action",
                )
            return
    last = len(gold) - 1
    yield CheckIssue(
        file,
        path.gold_lines[last],
        f"paths[{path.index}].gold[{last}]",
        f"{path.id}{context}: the gold never reaches {phase.marker} "
        f"(last response: {gold[last].response!r})",
    )
