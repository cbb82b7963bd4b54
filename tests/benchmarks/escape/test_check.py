"""The scenario checker: load errors as issues, every static lint, and the metadata rules of
contract §4 replayed on a small two-phase room (16 phase-1 x phase-2 combinations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkingpaths.benchmarks.escape.check import CheckIssue, check_scenario
from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.metadata import (
    ScenarioMeta,
    default_meta_path,
    gold_actions,
    load_meta,
    replay_gold,
)
from forkingpaths.benchmarks.escape.schema import ScenarioError, load_scenario

OPEN_SAFE = '["change_state, 1", "change_visible, item, door, true"]'

VAULT = f"""\
- name: cell
  objective: "Open the safe, then get out."
  desc: "A bare cell."
  scene_relations:
    Go to the shed: shed
  items:
  - position: "In the corner"
    item:
      name: safe
      states:
      - desc: "A locked safe."
        neg_reward: "It does not budge."
        transitions:
        - wait_for: [apply, key]
          trigger: {OPEN_SAFE}
          reward: "The safe opens. CHECKPOINT!"
        - wait_for: [input, 1234]
          trigger: {OPEN_SAFE}
          reward: "The keypad beeps. CHECKPOINT!"
        - wait_for: [apply, drill]
          trigger: {OPEN_SAFE}
          reward: "The lock gives. CHECKPOINT!"
      - desc: "An open safe."
  - position: "On the wall"
    item:
      name: lever
      states:
      - desc: "A rusty lever."
        transitions:
        - wait_for: [click]
          trigger:
          - change_state, 1
          - change_state, item, safe, 1
          - change_visible, item, door, true
          reward: "Something clunks inside the safe. CHECKPOINT!"
      - desc: "A pulled lever."
  - position: "Behind the safe"
    item:
      name: door
      visible: false
      states:
      - desc: "A heavy door."
        transitions:
        - wait_for: [apply, crowbar]
          trigger: [change_state, 1]
          reward: "The door pops open. GAME END!"
        - wait_for: [input, 9999]
          trigger: [change_state, 1]
          reward: "The door unlocks. GAME END!"
        - wait_for: [apply, saw]
          trigger: [change_state, 1]
          reward: "You saw through the hinges. GAME END!"
        - wait_for: [apply, rope]
          trigger: [change_state, 1]
          reward: "You pull the door off. GAME END!"
      - desc: "An open door."
  tools:
  - position: "On the floor"
    tool:
      name: key
      states:
      - desc: "A key."
        apply_to: [safe]
  - position: "On a hook"
    tool:
      name: crowbar
      states:
      - desc: "A crowbar."
        apply_to: [door]
  - position: "On a nail"
    tool:
      name: hook
      states:
      - desc: "A hook."
        apply_to: [rope]
- name: shed
  desc: "A shed."
  scene_relations:
    Back to the cell: cell
  tools:
  - position: "On the bench"
    tool:
      name: drill
      states:
      - desc: "A drill."
        apply_to: [safe]
  - position: "On the wall"
    tool:
      name: saw
      states:
      - desc: "A saw."
        apply_to: [door]
  - position: "In a heap"
    tool:
      name: rope
      states:
      - desc: "A rope."
        wait_for: [hook]
      - desc: "A rope with a hook."
        apply_to: [door]
"""


def path_block(path_id: str, finish: str, gold: list[str]) -> str:
    phase, kind = path_id[1], path_id.split("_")[1]
    lines = [
        f"- id: {path_id}",
        f"  phase: {phase}",
        f"  type: {kind[0]}",
        f"  mechanism: {path_id} mechanism.",
        f"  finish: {finish}",
        "  gold:",
    ] + [f"  - {action}" for action in gold]
    return "\n".join(lines) + "\n"


PATHS = {
    "P1_A": ("apply(key, safe)", ["click(key)", "apply(key, safe)"]),
    "P1_B": ("input(1234, safe)", ["input(1234, safe)"]),
    "P1_C1": (
        "apply(drill, safe)",
        ["move(Go to the shed)", "click(drill)", "move(cell)", "apply(drill, safe)"],
    ),
    "P1_C2": ("click(lever)", ["click(lever)"]),
    "P2_A": ("apply(crowbar, door)", ["click(crowbar)", "apply(crowbar, door)"]),
    "P2_B": ("input(9999, door)", ["input(9999, door)"]),
    "P2_C1": ("apply(saw, door)", ["move(shed)", "click(saw)", "move(cell)", "apply(saw, door)"]),
    "P2_C2": (
        "apply(rope, door)",
        [
            "click(hook)",
            "move(shed)",
            "click(rope)",
            "craft(rope, hook)",
            "move(cell)",
            "apply(rope, door)",
        ],
    ),
}


def meta_text(paths: dict[str, tuple[str, list[str]]] | None = None, start: str = "cell") -> str:
    head = (
        "schema_version: 1\nscenario: vault\ntitle: Vault\nphases:\n"
        "- phase: 1\n  name: Safe\n  marker: CHECKPOINT!\n"
        f"- phase: 2\n  name: Escape\n  marker: GAME END!\n  start_scene: {start}\npaths:\n"
    )
    return head + "".join(
        path_block(pid, finish, gold) for pid, (finish, gold) in (paths or PATHS).items()
    )


def write(tmp_path: Path, scenario: str = VAULT, meta: str | None = None) -> Path:
    path = tmp_path / "vault.yaml"
    path.write_text(scenario, encoding="utf-8")
    default_meta_path(path).write_text(meta if meta is not None else meta_text(), "utf-8")
    return path


def line_of(text: str, fragment: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if fragment in line)


def errors(issues: list[CheckIssue]) -> list[CheckIssue]:
    return [i for i in issues if i.severity == "error"]


def only(issues: list[CheckIssue], fragment: str) -> CheckIssue:
    hits = [i for i in issues if fragment in i.message]
    assert len(hits) == 1, [str(i) for i in issues]
    return hits[0]


# ---- a clean room ----


def test_clean_two_phase_room_has_no_issue(tmp_path: Path) -> None:
    assert check_scenario(write(tmp_path)) == []


def test_replay_gold_walks_to_the_start_scene_after_a_phase_one_path(tmp_path: Path) -> None:
    path = write(tmp_path)
    scenario, meta = load_scenario(path), load_meta(default_meta_path(path))
    game = EscapeGame(scenario)
    results = replay_gold(game, meta, "P2_A", after="P1_C1")
    assert [r.action for r in results] == ["click(crowbar)", "apply(crowbar, door)"]
    assert results[-1].game_end
    game = EscapeGame(scenario)
    replay_gold(game, meta, "P1_C1")
    game.step("move(shed)")
    results = replay_gold(game, meta, "P2_B")  # walks back to the cell first
    assert [r.action for r in results] == ["move(cell)", "input(9999, door)"]
    assert [r.action for r in gold_actions(results, meta.path("P2_B"))] == ["input(9999, door)"]
    with pytest.raises(ValueError, match="earlier phase"):
        replay_gold(EscapeGame(scenario), meta, "P1_A", after="P2_A")


def test_meta_lookups(tmp_path: Path) -> None:
    meta = load_meta(default_meta_path(write(tmp_path)))
    assert isinstance(meta, ScenarioMeta) and meta.title == "Vault"
    assert [p.id for p in meta.paths_of_phase(2)] == ["P2_A", "P2_B", "P2_C1", "P2_C2"]
    assert meta.path_by_finish_key("Apply(Saw,  DOOR)") is meta.path("P2_C1")
    assert meta.path_by_finish_key("click(door)") is None
    assert meta.phase(2).start_scene == "cell" and meta.phase(1).marker == "CHECKPOINT!"
    assert meta.path("P1_C2").type == "C" and meta.path("P1_C2").kind == "C2"


def test_check_str_format() -> None:
    issue = CheckIssue("a.yaml", 3, "scenes[0]", "bad", "warning")
    assert str(issue) == "a.yaml:3: scenes[0]: bad"
    assert str(CheckIssue("a.yaml", 1, "", "bad")) == "a.yaml:1: bad"


# ---- scenario lints ----


def test_load_error_becomes_one_issue(tmp_path: Path) -> None:
    text = VAULT.replace("[apply, saw]", "[apply, chainsaw]")
    issues = check_scenario(write(tmp_path, text))
    assert len(issues) == 1
    issue = issues[0]
    assert issue.line == line_of(text, "chainsaw") and issue.severity == "error"
    assert issue.where == "scenes[0].items[2].item.states[0].transitions[2].wait_for"
    assert "unknown tool 'chainsaw'" in issue.message


def test_unreachable_states_are_warned(tmp_path: Path) -> None:
    text = VAULT.replace(
        '      - desc: "A pulled lever."\n',
        '      - desc: "A pulled lever."\n      - desc: "A broken lever."\n',
    )
    text = text.replace("        wait_for: [hook]\n", "")  # the rope can no longer be crafted
    issues = check_scenario(write(tmp_path, text))
    lever = only(issues, "item 'lever' in state 2")
    assert lever.severity == "warning" and lever.where == "scenes[0].items[1].item.states[2]"
    assert lever.line == line_of(text, "A broken lever.")
    rope = only(issues, "tool 'rope' in state 1")
    assert rope.where == "scenes[1].tools[2].tool.states[1]"
    assert rope.line == line_of(text, "A rope with a hook.")


def test_tool_nothing_accepts_is_warned(tmp_path: Path) -> None:
    text = VAULT + (
        '  - position: "In the dust"\n    tool:\n      name: feather\n      states:\n'
        '      - desc: "A feather."\n'
    )
    issue = only(check_scenario(write(tmp_path, text)), "nothing accepts tool 'feather'")
    assert issue.severity == "warning" and issue.where == "scenes[1].tools[3].tool"
    assert issue.line == line_of(text, "name: feather")


def test_apply_to_entries_nothing_waits_for_are_warned(tmp_path: Path) -> None:
    text = VAULT.replace(
        '      - desc: "A key."\n        apply_to: [safe]',
        '      - desc: "A key."\n        apply_to: [safe, lever, hook]',
    )
    issues = check_scenario(write(tmp_path, text))
    lever = only(issues, "lists 'lever', but 'lever' never waits for 'key'")
    assert (
        lever.severity == "warning"
        and lever.where == "scenes[0].tools[0].tool.states[0].apply_to[1]"
    )
    assert lever.line == line_of(text, 'desc: "A key."')
    hook = only(issues, "lists 'hook', but 'hook' never waits for 'key'")
    assert hook.where == "scenes[0].tools[0].tool.states[0].apply_to[2]"
    assert not errors(issues)


def test_a_missing_objective_is_warned(tmp_path: Path) -> None:
    text = VAULT.replace('  objective: "Open the safe, then get out."\n', "")
    issue = only(check_scenario(write(tmp_path, text)), "no `objective`")
    assert (issue.severity, issue.where, issue.line) == ("warning", "scenes[0]", 1)


def test_waits_that_no_apply_to_can_satisfy_are_errors(tmp_path: Path) -> None:
    text = VAULT.replace(
        '        apply_to: [door]\n  - position: "On a nail"',
        '        apply_to: []\n  - position: "On a nail"',
    )
    issue = only(check_scenario(write(tmp_path, text)), "waits for `apply, crowbar`")
    assert issue.severity == "error"
    assert issue.where == "scenes[0].items[2].item.states[0].transitions[0].wait_for"
    assert issue.line == line_of(text, "[apply, crowbar]")
    text = VAULT.replace("        apply_to: [rope]\n", "        apply_to: [door]\n")
    issue = only(check_scenario(write(tmp_path, text)), "ingredient 'hook'")
    assert issue.where == "scenes[1].tools[2].tool.states[0].wait_for"


def test_scenes_never_visible_are_errors(tmp_path: Path) -> None:
    text = VAULT.replace("- name: shed\n  desc:", "- name: shed\n  visible: false\n  desc:")
    issues = check_scenario(write(tmp_path, text), tmp_path / "none.meta.yaml")
    issue = only(issues, "not visible at start")
    assert issue.severity == "error" and issue.where == "scenes[1]"
    assert issue.line == line_of(text, "- name: shed")


def test_unlinked_scene_and_never_visible_objects_are_warned(tmp_path: Path) -> None:
    text = VAULT + (
        "- name: attic\n  desc: d\n  items:\n  - item:\n      name: ghost\n      visible: false\n"
        "      states:\n      - desc: boo\n"
    )
    issues = check_scenario(write(tmp_path, text))
    assert only(issues, "no scene relation leads to scene 'attic'").severity == "warning"
    assert only(issues, "item 'ghost' is never made visible").where == "scenes[2].items[0].item"


# ---- metadata rules ----


def test_missing_path_kinds_and_unknown_start_scene(tmp_path: Path) -> None:
    paths = {k: v for k, v in PATHS.items() if k != "P2_C2"}
    text = meta_text(paths, start="garden")
    issues = check_scenario(write(tmp_path, meta=text))
    missing = only(issues, "phase 2 has no C2 path")
    assert missing.where == "phases[1]" and missing.line == line_of(text, "- phase: 2")
    start = only(issues, "unknown scene 'garden'")
    assert start.where == "phases[1].start_scene"


def test_gold_problems_are_located(tmp_path: Path) -> None:
    paths = dict(PATHS)
    paths["P1_A"] = ("apply(key, safe)", ["input(1234, safe)", "click(key)", "apply(key, safe)"])
    paths["P1_C1"] = ("apply(drill, safe)", ["click(drill)", "apply(drill, safe)"])
    paths["P2_A"] = ("click(crowbar)", ["click(crowbar)"])
    paths["P2_B"] = ("input(0000, door)", ["input(9999, door)"])
    text = meta_text(paths)
    issues = errors(check_scenario(write(tmp_path, meta=text)))
    p1a = [i for i in issues if i.where == "paths[0].gold[0]"]
    assert {i.message for i in p1a} == {
        "'input(1234, safe)' is the finish action of P1_B",
        "P1_A: reaches CHECKPOINT! before its finish action",
    }
    invalid = only(issues, "P1_C1: invalid action")
    assert invalid.where == "paths[2].gold[0]" and invalid.line == line_of(text, "- click(drill)")
    never = [i for i in issues if "P2_A (after" in i.message]
    assert len(never) == 2  # after P1_B and P1_C2 (broken phase-1 golds are skipped)
    assert all("never reaches GAME END!" in i.message for i in never)
    mismatch = only(issues, "is not the finish")
    assert mismatch.where == "paths[5].gold[0]"


def test_duplicate_finish_actions(tmp_path: Path) -> None:
    paths = dict(PATHS)
    paths["P2_C1"] = ("Apply(crowbar, DOOR)", ["click(crowbar)", "apply(crowbar, door)"])
    text = meta_text(paths)
    issue = only(check_scenario(write(tmp_path, meta=text)), "is also the finish of P2_A")
    assert issue.where == "paths[6].finish"


def test_phase_two_finish_must_not_end_the_game_from_the_start(tmp_path: Path) -> None:
    text = VAULT.replace("      name: door\n      visible: false\n", "      name: door\n")
    issues = [i for i in check_scenario(write(tmp_path, text)) if "initial state" in i.message]
    assert [i.where for i in issues] == ["paths[4]", "paths[5]", "paths[6]", "paths[7]"]
    assert issues[1].message == (
        "P2_B reaches GAME END! from the initial state, without the phase-1 marker"
    )


def test_meta_sibling_is_optional_and_meta_option_wins(tmp_path: Path) -> None:
    path = tmp_path / "vault.yaml"
    path.write_text(VAULT, encoding="utf-8")
    assert check_scenario(path) == []
    other = tmp_path / "other.meta.yaml"
    other.write_text(meta_text().replace("scenario: vault", "scenario: tomb"), "utf-8")
    issue = only(check_scenario(path, other), "names scenario 'tomb'")
    assert issue.where == "scenario"


@pytest.mark.parametrize(
    ("old", "new", "where", "fragment", "at"),
    [
        ("schema_version: 1", "schema_version: 2", "schema_version", "schema_version", 1),
        ("- id: P1_B", "- id: P1_D", "paths[1].id", "must read P<phase>_<A|B|C1|C2>", 21),
        ("- id: P1_B\n  phase: 1", "- id: P1_B\n  phase: 3", "paths[1].phase", "phase 3", 22),
        ("- id: P1_B\n  phase: 1", "- id: P1_B\n  phase: 2", "paths[1].id", "its phase 2", 21),
        ("  type: B", "  type: C", "paths[1].type", "does not match id 'P1_B'", 23),
        ("  mechanism: P1_B mechanism.\n", "", "paths[1]", "needs `mechanism`", 21),
        (
            "  finish: input(1234, safe)",
            "  finish: open it",
            "paths[1].finish",
            "not an action",
            25,
        ),
        ("- id: P1_C1", "- id: P1_A", "paths[2].id", "duplicate path id 'P1_A'", 28),
        ("  start_scene: cell", "  start_scen: cell", "phases[1].start_scen", "unknown key", 11),
        ("  finish: input(1234", "  finnish: input(1234", "paths[1].finnish", "unknown key", 25),
    ],
)
def test_bad_metadata_is_refused_with_line_and_place(
    tmp_path: Path, old: str, new: str, where: str, fragment: str, at: int
) -> None:
    text = meta_text()
    assert old in text and text.splitlines()[20] == "- id: P1_B"
    bad = text.replace(old, new, 1)
    with pytest.raises(ScenarioError) as info:
        load_meta(bad, name="vault.meta.yaml")
    assert info.value.where == where and fragment in info.value.problem
    assert info.value.line == at
    issues = check_scenario(write(tmp_path, meta=bad))
    assert len(issues) == 1 and (issues[0].where, issues[0].line) == (where, at)
