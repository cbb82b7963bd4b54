"""Scenario loading (contract §1, App. E.1): accepted forms, lookups, and every refusal with its
line number and place in the structure."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from forkingpaths.benchmarks.escape.actions import fold_name
from forkingpaths.benchmarks.escape.schema import (
    Scenario,
    ScenarioError,
    load_scenario,
    resolve_scenario,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

ROOM = """\
- name: Study
  objective: "Open the safe."
  desc: "A small study."
  visible: TRUE
  scene_relations:
    Go to the hallway: hallway
  items:
  - position: "On the wall"
    item:
      name: Wall   Safe
      interactable: False
      states:
      - desc: "A steel safe."
        neg_reward: "It holds."
        transitions:
        - wait_for: [input, 0411]
          trigger: [change_state, 1]
          reward: "Open. CHECKPOINT!"
        - wait_for:
          - apply, pipe head
          - click
          trigger:
          - change_state, 1
          - change_visible, tool, key, true
          - change_interact, item, wall safe, true
          reward: "Forced."
        - wait_for: "input, 1,2,3"
          trigger: [[change_visible, scene, hallway, false], [change_state, item, vase, 1]]
        - wait_for: [apply, key]
      - desc: "Open."
  - item:
      name: vase
      states:
      - desc: "A vase."
        transitions:
        - wait_for: [click]
          trigger: [become_tool, Vase]
      - desc: "Gone."
  tools:
  - position: "In the safe"
    tool:
      name: key
      visible: false
      states:
      - desc: "A key."
        apply_to: [wall safe]
  - tool:
      name: vase
      visible: false
      states:
      - desc: "A vase in hand."
- name: hallway
  desc: "A hallway."
  scene_relations:
    Back: Study
  tools:
  - position: "On the floor"
    tool:
      name: pipe head
      states:
      - desc: "A pipe head."
        apply_to: [wall safe, key]
        wait_for: [key]
"""


def load(text: str) -> Scenario:
    return load_scenario(text, name="room")


def refusal(text: str) -> ScenarioError:
    """The refusal of a strict load (EscapeBench's repairable slips refused too)."""
    with pytest.raises(ScenarioError) as info:
        load_scenario(textwrap.dedent(text), name="room", strict=True)
    return info.value


def line_of(text: str, fragment: str, nth: int = 0) -> int:
    """1-based line of the `nth` line holding `fragment`."""
    hits = [i + 1 for i, line in enumerate(textwrap.dedent(text).splitlines()) if fragment in line]
    return hits[nth]


# ---- accepted forms ----


def test_room_loads_with_ids_lookups_and_flags() -> None:
    scenario = load(ROOM)
    assert scenario.id == "room" and scenario.source is None
    assert scenario.objective == "Open the safe."
    assert [s.name for s in scenario.scenes] == ["Study", "hallway"]
    safe = scenario.find_item("  WALL safe ")
    assert safe is not None and safe.name == "Wall Safe"  # whitespace folded, case kept
    assert safe.interactable is False and safe.visible is True
    assert safe.position == "On the wall"
    assert scenario.scenes[0].visible is True
    assert scenario.find_scene("study") is scenario.scenes[0]
    assert scenario.find_tool("PIPE HEAD") is scenario.tools[2]
    assert scenario.scenes[0].relations == (("Go to the hallway", "hallway"),)
    assert scenario.move_ids[0] == {"go to the hallway": 1, "hallway": 1}
    assert scenario.move_ids[1] == {"back": 0, "study": 0}
    assert scenario.n_transitions == 5


def test_flat_comma_single_string_and_nested_forms() -> None:
    scenario = load(ROOM)
    safe = scenario.items[0]
    t0, t1, t2, t3 = safe.states[0].transitions
    assert [(w.kind, w.arg) for w in t0.wait_for] == [("input", "0411")]  # not octal 265
    assert [(t.op, t.kind, t.name, t.value, t.explicit) for t in t0.trigger] == [
        ("change_state", "item", "Wall Safe", 1, False)
    ]
    assert [(w.kind, w.arg, w.tool) for w in t1.wait_for] == [
        ("apply", "pipe head", 2),
        ("click", None, -1),
    ]
    assert [(t.op, t.kind, t.name, t.value) for t in t1.trigger] == [
        ("change_state", "item", "Wall Safe", 1),
        ("change_visible", "tool", "key", True),
        ("change_interact", "item", "Wall Safe", True),
    ]
    assert [(w.kind, w.arg) for w in t2.wait_for] == [("input", "1,2,3")]
    assert [(t.op, t.kind, t.name, t.value) for t in t2.trigger] == [
        ("change_visible", "scene", "hallway", False),
        ("change_state", "item", "vase", 1),
    ]
    assert t3.is_feedback and t3.reward == "" and not t1.is_feedback
    assert [t.index for t in (t0, t1, t2, t3)] == [0, 1, 2, 3]


def test_become_tool_lets_an_item_and_its_tool_share_a_name() -> None:
    scenario = load(ROOM)
    vase_item, vase_tool = scenario.find_item("vase"), scenario.find_tool("VASE")
    assert vase_item is not None and vase_tool is not None
    (trigger,) = vase_item.states[0].transitions[0].trigger
    assert (trigger.op, trigger.kind, trigger.index) == ("become_tool", "tool", vase_tool.index)


def test_tool_states_resolve_apply_to_and_wait_for() -> None:
    pipe = load(ROOM).find_tool("pipe head")
    assert pipe is not None
    assert pipe.states[0].apply_to == ("Wall Safe", "key")
    assert pipe.states[0].apply_to_keys == ("wall safe", "key")
    assert pipe.states[0].wait_for == ("key",)


def test_load_from_a_path_uses_the_stem_and_keeps_the_source(tmp_path: Path) -> None:
    path = tmp_path / "house_heist.yaml"
    path.write_text(ROOM, encoding="utf-8")
    scenario = load_scenario(path)
    assert scenario.id == "house_heist" and scenario.source == path
    assert load_scenario(str(path)).scenes == scenario.scenes


def test_unreadable_file_is_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidFile, match="cannot read"):
        load_scenario(tmp_path / "missing.yaml")


def test_fold_name() -> None:
    assert fold_name("  Pipe \t  HEAD ") == "pipe head"


def test_resolve_scenario_accepts_paths_and_reports_unknown_names(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(ROOM, encoding="utf-8")
    assert resolve_scenario(str(path)) == path
    with pytest.raises(ConfigError, match="escape scenario"):
        resolve_scenario("no_such_scenario_name")
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_scenario(str(tmp_path / "nope.yaml"))


# ---- refusals: line and place ----


def test_malformed_yaml_gives_the_parser_line() -> None:
    text = """\
    - name: a
      objective: o
      desc: [unclosed
    - name: b
    """
    err = refusal(text)
    assert err.file == "room" and err.where == ""
    assert "malformed YAML" in str(err) and err.line >= 3
    assert str(err).startswith(f"room:{err.line}: malformed YAML")


@pytest.mark.parametrize("text", ["name: a\n", "[]\n", "", "- just text\n"])
def test_not_a_list_of_scenes(text: str) -> None:
    err = refusal(text)
    assert err.line == 1
    assert "list of scenes" in err.problem or "a scene must be a mapping" in err.problem


def test_missing_scene_name_and_desc() -> None:
    err = refusal("- objective: o\n  desc: d\n")
    assert (err.line, err.where) == (1, "scenes[0]") and "`name`" in err.problem
    err = refusal("- name: a\n  objective: o\n  desc: d\n- name: b\n")
    assert (err.line, err.where) == (4, "scenes[1]") and "`desc`" in err.problem


def test_objective_is_optional_as_in_escapebench_but_only_on_the_first_scene() -> None:
    scenario = load("- name: a\n  desc: d\n  image_path: a.png\n")
    assert scenario.objective == ""
    err = refusal("- name: a\n  objective: o\n  desc: d\n- name: b\n  objective: p\n  desc: d\n")
    assert (err.line, err.where) == (5, "scenes[1].objective")
    assert "only the first scene carries `objective`" in err.problem


@pytest.mark.parametrize(
    ("old", "new", "where", "at"),
    [
        ("  visible: TRUE\n", "  visable: TRUE\n", "scenes[0].visable", "visable"),
        (
            '  - position: "On the wall"',
            '  - place: "On the wall"',
            "scenes[0].items[0].place",
            "place",
        ),
        (
            "      interactable: False",
            "      interactible: False",
            "scenes[0].items[0].item.interactible",
            "interactible",
        ),
        (
            '        neg_reward: "It holds."',
            '        neg-reward: "It holds."',
            "scenes[0].items[0].item.states[0].neg-reward",
            "neg-reward",
        ),
        (
            '          reward: "Open. CHECKPOINT!"',
            '          rewards: "Open. CHECKPOINT!"',
            "scenes[0].items[0].item.states[0].transitions[0].rewards",
            "rewards",
        ),
        (
            "          trigger: [change_state, 1]\n",
            "          triggers: [change_state, 1]\n",
            "scenes[0].items[0].item.states[0].transitions[0].triggers",
            "triggers",
        ),
        (
            '      visible: false\n      states:\n      - desc: "A key."',
            '      hidden: true\n      states:\n      - desc: "A key."',
            "scenes[0].tools[0].tool.hidden",
            "hidden",
        ),
        (
            "        apply_to: [wall safe]",
            "        applies_to: [wall safe]",
            "scenes[0].tools[0].tool.states[0].applies_to",
            "applies_to",
        ),
    ],
)
def test_unknown_keys_are_refused(old: str, new: str, where: str, at: str) -> None:
    # A misspelt `triggers:` used to turn a transition into a silent dead end.
    text = ROOM.replace(old, new, 1)
    err = refusal(text)
    assert err.where == where and "unknown key" in err.problem
    assert err.line == line_of(text, at)


def test_repeated_keys_and_move_labels_are_refused() -> None:
    text = ROOM.replace("      name: key\n", "      name: key\n      name: spare key\n")
    err = refusal(text)
    assert err.where == "scenes[0].tools[0].tool.name" and "duplicate key `name`" in err.problem
    assert err.line == line_of(text, "name: spare key")
    text = ROOM.replace("    Back: Study\n", "    Back: Study\n    back: hallway\n")
    err = refusal(text)
    assert err.where == "scenes[1].scene_relations" and "duplicate move label 'back'" in err.problem
    assert err.line == line_of(text, "back: hallway")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            'name: vase\n      states:\n      - desc: "A vase."',
            'name: vase, blue\n      states:\n      - desc: "A vase."',
        ),
        ("name: pipe head", "name: pipe (head"),
        ("    Back: Study", "    'Back, quickly': Study"),
        ("- name: hallway", '- name: "\'hallway"'),
    ],
)
def test_names_that_an_action_could_not_spell_are_refused(old: str, new: str) -> None:
    err = refusal(ROOM.replace(old, new, 1))
    assert "cannot be written in an action" in err.problem


def one_item(transition: str, *, extra_states: str = "", scene_extra: str = "") -> str:
    """A one-scene room whose item `safe` has one transition (indented YAML lines)."""
    body = textwrap.indent(textwrap.dedent(transition), " " * 8)
    return (
        "- name: a\n  objective: o\n  desc: d\n  items:\n  - item:\n      name: safe\n"
        "      states:\n      - desc: closed\n        transitions:\n"
        + body
        + "      - desc: open\n"
        + extra_states
        + "  tools:\n  - tool:\n      name: key\n      states:\n      - desc: k\n"
        "        apply_to: [safe]\n" + scene_extra
    )


TRANSITION = "scenes[0].items[0].item.states[0].transitions[0]"


CLICK = "- wait_for: [click]\n  trigger: "


@pytest.mark.parametrize(
    ("transition", "where", "fragment", "at"),
    [
        (CLICK + "[explode, 1]\n", "trigger[0]", "unknown trigger", "explode"),
        (
            "- wait_for: [click]\n  trigger:\n  - change_state, 1\n  - change_state, item, safe\n",
            "trigger[1]",
            "change_state takes N or item|tool, NAME, N; got 2",
            "change_state, item, safe",
        ),
        (CLICK + "[become_tool]\n", "trigger[0]", "become_tool takes one", "become_tool"),
        (
            CLICK + "['change_visible, door, safe, true']\n",
            "trigger[0]",
            "change_visible acts on scene|item|tool",
            "door",
        ),
        (
            CLICK + "['change_interact, tool, key, true']\n",
            "trigger[0]",
            "change_interact acts on item",
            "change_interact",
        ),
        (CLICK + "[change_visible, maybe]\n", "trigger", "true or false", "maybe"),
        (CLICK + "[change_state, one]\n", "trigger", "integer", "one]"),
        (
            "- wait_for: [kick, safe]\n  trigger: [change_state, 1]\n",
            "wait_for[0]",
            "unknown",
            "kick",
        ),
        (
            "- wait_for: ['click, now']\n  trigger: [change_state, 1]\n",
            "wait_for[0]",
            "no arg",
            "now",
        ),
        (
            "- wait_for: [apply]\n  trigger: [change_state, 1]\n",
            "wait_for[0]",
            "one tool",
            "[apply]",
        ),
        (
            "- wait_for: [input]\n  trigger: [change_state, 1]\n",
            "wait_for[0]",
            "expected",
            "[input]",
        ),
        (
            "- wait_for: [apply, hammer]\n  trigger: [change_state, 1]\n",
            "wait_for",
            "hammer",
            "hammer",
        ),
        (CLICK + "['change_state, item, box, 1']\n", "trigger[0]", "unknown item 'box'", "box"),
        (
            CLICK + "['change_visible, tool, box, true']\n",
            "trigger[0]",
            "unknown tool 'box'",
            "box",
        ),
        (
            CLICK + "['change_visible, scene, cellar, true']\n",
            "trigger[0]",
            "unknown scene 'cellar'",
            "cellar",
        ),
        (CLICK + "[change_state, 2]\n", "trigger", "out of range", "change_state, 2"),
        (CLICK + "[change_state, -1]\n", "trigger", "out of range", "change_state, -1"),
        (
            CLICK + "['change_state, tool, key, 1']\n",
            "trigger[0]",
            "'key' has 1 states",
            "tool, key",
        ),
        (CLICK + "[become_tool, hammer]\n", "trigger", "unknown tool", "hammer"),
        ("- trigger: [change_state, 1]\n", "", "at least one `wait_for`", "- trigger"),
    ],
)
def test_bad_transitions_are_refused_with_line_and_place(
    transition: str, where: str, fragment: str, at: str
) -> None:
    text = one_item(transition)
    err = refusal(text)
    expected_where = f"{TRANSITION}.{where}" if where else TRANSITION
    assert err.where == expected_where
    assert fragment in err.problem
    assert err.line == line_of(text, at)
    assert str(err) == f"room:{err.line}: {expected_where}: {err.problem}"


def test_become_tool_must_name_a_tool_of_the_same_scene() -> None:
    text = one_item(
        "- wait_for: [click]\n  trigger: [become_tool, hammer]\n",
        scene_extra=(
            "- name: b\n  desc: d\n  tools:\n  - tool:\n      name: hammer\n      states:\n"
            "      - desc: h\n"
        ),
    )
    err = refusal(text)
    assert err.where == f"{TRANSITION}.trigger" and "not defined in this scene" in err.problem
    assert err.line == line_of(text, "become_tool, hammer")


def test_relation_to_an_unknown_scene() -> None:
    text = "- name: a\n  objective: o\n  desc: d\n  scene_relations:\n    Go down: cellar\n"
    err = refusal(text)
    assert (err.line, err.where) == (5, "scenes[0].scene_relations.Go down")
    assert "unknown scene 'cellar'" in err.problem


def test_apply_to_and_tool_wait_for_must_name_known_objects() -> None:
    text = one_item("- wait_for: [click]\n  trigger: [change_state, 1]\n").replace(
        "apply_to: [safe]", "apply_to: [safe, drawer]"
    )
    err = refusal(text)
    assert err.where == "scenes[0].tools[0].tool.states[0].apply_to[1]"
    assert "unknown item or tool 'drawer'" in err.problem
    assert err.line == line_of(text, "apply_to")
    text = one_item("- wait_for: [click]\n  trigger: [change_state, 1]\n").replace(
        "apply_to: [safe]", "apply_to: [safe]\n        wait_for:\n        - safe"
    )
    err = refusal(text)
    assert err.where == "scenes[0].tools[0].tool.states[0].wait_for[0]"
    assert "unknown tool 'safe'" in err.problem and err.line == line_of(text, "- safe")


def test_duplicate_names() -> None:
    two = "- name: a\n  objective: o\n  desc: d\n- name: A\n  desc: d\n"
    err = refusal(two)
    assert (err.line, err.where) == (4, "scenes[1].name") and "duplicate scene" in err.problem
    items = (
        "- name: a\n  objective: o\n  desc: d\n  items:\n  - item:\n      name: Box\n"
        "      states:\n      - desc: x\n- name: b\n  desc: d\n  items:\n  - item:\n"
        "      name: box\n      states:\n      - desc: y\n"
    )
    err = refusal(items)
    assert (err.line, err.where) == (13, "scenes[1].items[0].item.name")
    assert "duplicate item name 'box' (first at line 6)" in err.problem
    clash = (
        "- name: a\n  objective: o\n  desc: d\n  items:\n  - item:\n      name: box\n"
        "      states:\n      - desc: x\n  tools:\n  - tool:\n      name: BOX\n      states:\n"
        "      - desc: y\n"
    )
    err = refusal(clash)
    assert (err.line, err.where) == (6, "scenes[0].items[0].item.name")
    assert "a tool has it too" in err.problem
    tools = clash.replace(
        "  items:\n  - item:\n      name: box\n      states:\n      - desc: x\n", ""
    )
    tools += "  - tool:\n      name: box\n      states:\n      - desc: z\n"
    err = refusal(tools)
    assert err.where == "scenes[0].tools[1].tool.name" and "duplicate tool" in err.problem


def test_empty_states_and_bad_flags() -> None:
    text = "- name: a\n  objective: o\n  desc: d\n  items:\n  - item:\n      name: box\n"
    text += "      states: []\n"
    err = refusal(text)
    assert (err.line, err.where) == (7, "scenes[0].items[0].item.states")
    assert "at least one state" in err.problem
    text = "- name: a\n  objective: o\n  desc: d\n  visible: yes\n"
    err = refusal(text)
    assert (err.line, err.where) == (4, "scenes[0].visible") and "true or false" in err.problem
    text = "- name: a\n  objective: o\n  desc: d\n  items:\n  - item:\n      name: box\n"
    err = refusal(text)
    assert (err.line, err.where) == (6, "scenes[0].items[0].item") and "`states`" in err.problem
