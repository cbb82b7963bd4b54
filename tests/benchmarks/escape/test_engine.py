"""EscapeGame: the rules of contract §2 on a small hand-built room, action parsing, rendering,
snapshots and the helpers reference agents use."""

from __future__ import annotations

import pytest

from forkingpaths.benchmarks.escape.engine import (
    BLOCKED,
    EscapeGame,
    ParsedAction,
    action_key,
    parse_action,
)
from forkingpaths.benchmarks.escape.schema import Scenario, ScenarioError, load_scenario

WORKSHOP = """\
- name: study
  objective: "Get out of the house."
  desc: "A cramped study."
  scene_relations:
    Go to the hallway: hallway
  items:
  - position: "On the far wall"
    item:
      name: wall safe
      states:
      - desc: "A steel safe with a keypad."
        neg_reward: "The door holds firm."
        transitions:
        - wait_for: [input, 0411]
          trigger: [change_state, 1]
          reward: "The bolts retract. CHECKPOINT!"
        - wait_for:
          - apply, crowbar
          trigger:
          - change_state, 1
          - change_visible, tool, door key, true
          reward: "The hinges give way. CHECKPOINT!"
        - wait_for: [apply, tape]
          reward: "The tape will not stick to the steel."
      - desc: "The safe stands open."
  - position: "On the desk"
    item:
      name: lamp
      states:
      - desc: "A dark lamp."
        transitions:
        - wait_for: [click]
          trigger: [change_state, 1]
          reward: "The lamp lights up."
      - desc: "A glowing lamp."
        transitions:
        - wait_for: [click]
          trigger: [change_state, 0]
          reward: "The lamp goes dark."
  - position: "Above the desk"
    item:
      name: painting
      interactable: false
      states:
      - desc: "A portrait."
  - position: "Under the desk"
    item:
      name: drawer
      states:
      - desc: "A shut drawer."
        transitions:
        - wait_for: [click]
          trigger: [change_visible, tool, tape, true]
          reward: "The drawer slides open; there is tape inside."
  - position: "On the shelf"
    item:
      name: vase
      states:
      - desc: "A heavy vase."
        transitions:
        - wait_for: [click]
          trigger: [become_tool, Vase]
          reward: "You lift the vase."
  - position: "Behind the curtain"
    item:
      name: hidden switch
      visible: false
      states:
      - desc: "A switch."
  tools:
  - position: "In the safe"
    tool:
      name: door key
      visible: false
      states:
      - desc: "A brass key."
        apply_to: [front door]
  - position: "In the drawer"
    tool:
      name: tape
      visible: false
      states:
      - desc: "A roll of tape."
        apply_to: [crowbar]
  - position: "In your hands"
    tool:
      name: Vase
      visible: false
      states:
      - desc: "A heavy vase."
        apply_to: [window]
- name: hallway
  desc: "A long hallway."
  scene_relations:
    Back to the study: study
    Climb through the window: garden
  items:
  - position: "At the end"
    item:
      name: front door
      states:
      - desc: "A locked door."
        neg_reward: "Locked tight."
        transitions:
        - wait_for: [apply, door key]
          trigger: [change_state, 1]
          reward: "The door swings open. GAME END!"
      - desc: "An open door."
  - position: "On the side wall"
    item:
      name: window
      states:
      - desc: "A barred window."
        transitions:
        - wait_for: [apply, Vase, apply, hammer]
          trigger: [change_state, 1]
          reward: "never: this flat list is one wait with wrong arity"
      - desc: "A broken window."
  tools:
  - position: "Leaning on the wall"
    tool:
      name: crowbar
      states:
      - desc: "A bent crowbar."
        wait_for: [tape]
      - desc: "A crowbar with a taped grip."
        apply_to: [wall safe]
  - position: "On the floor"
    tool:
      name: hammer
      states:
      - desc: "A claw hammer."
        apply_to: [window]
- name: garden
  visible: false
  desc: "A small garden."
  scene_relations:
    Climb back in: hallway
"""


def workshop_text() -> str:
    # The window needs two tools (multi-apply) and opens the garden.
    return WORKSHOP.replace(
        """        - wait_for: [apply, Vase, apply, hammer]
          trigger: [change_state, 1]
          reward: "never: this flat list is one wait with wrong arity"
""",
        """        - wait_for:
          - apply, Vase
          - apply, hammer
          trigger:
          - change_state, 1
          - change_visible, scene, garden, true
          reward: "The window shatters."
""",
    )


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario(workshop_text(), name="workshop")


def play(game: EscapeGame, *actions: str) -> None:
    for action in actions:
        result = game.step(action)
        assert result.valid, (action, result.response)


# ---- parsing ----


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click(lamp)", ("click", ("lamp",))),
        ("Action: `click( Wall   Safe )`", ("click", ("Wall Safe",))),
        ('ACTION:  "apply(pipe head , wall safe)"', ("apply", ("pipe head", "wall safe"))),
        ("craft ( a ,b ) because it might work (maybe)", ("craft", ("a", "b"))),
        ('input("1,2,3", keypad)', ("input", ("1,2,3", "keypad"))),
        ("input('  2518 ', keypad)", ("input", ("2518", "keypad"))),
        ("click(captain's log)", ("click", ("captain's log",))),
        ("click(lamp (broken))", ("click", ("lamp (broken)",))),
        ("Move(Go to the hallway)", ("move", ("Go to the hallway",))),
        ("input(, keypad)", ("input", ("", "keypad"))),
    ],
)
def test_parse_action_accepts_the_grammar(text: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert parse_action(text) == ParsedAction(*expected)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "look around",
        "jump(high)",
        "click()",
        "click(a, b)",
        "apply(hammer)",
        "input(1,2,3, keypad)",
        "click(lamp",
        "",
        None,
        42,
    ],
)
def test_parse_action_refuses_the_rest(text: object) -> None:
    assert parse_action(text) is None  # type: ignore[arg-type]


def test_action_key_lowercases_names_but_not_input_strings() -> None:
    assert action_key("Apply( Pipe  HEAD, Wall Safe)") == "apply(pipe head, wall safe)"
    assert action_key("input( AbC , Keypad)") == "input(AbC, keypad)"
    assert action_key('input("1,2", pad)') == 'input("1,2", pad)'
    assert action_key("nonsense") is None


# ---- rules ----


def test_start_view_and_rendering(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    assert game.scene == "study" and game.bag == [] and not game.game_over
    assert game.objective == "Get out of the house."
    assert game.describe_scene().splitlines() == [
        "You are in the scene 'study'. A cramped study.",
        "- On the far wall, there is wall safe: A steel safe with a keypad.",
        "- On the desk, there is lamp: A dark lamp.",
        "- Above the desk, there is painting: A portrait.",
        "- Under the desk, there is drawer: A shut drawer.",
        "- On the shelf, there is vase: A heavy vase.",
    ]
    assert game.possible_actions().splitlines() == [
        "Possible actions:",
        "<interactable item> wall safe",
        "<interactable item> lamp",
        "<interactable item> drawer",
        "<interactable item> vase",
        "<interactable scene> Go to the hallway: It leads to hallway",
    ]
    assert game.tools_in_bag() == "Tools in bag: (none)"
    assert game.interactable_items() == ["wall safe", "lamp", "drawer", "vase"]
    assert game.scene_tools() == []
    assert game.moves() == [("Go to the hallway", "hallway")]
    assert game.valid_scene_names() == ["hallway"]


def test_click_examines_with_neg_reward_and_changes_nothing(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    before = game.fingerprint()
    result = game.step("click(WALL  safe)")
    assert result.action == "click(wall safe)" and result.kind == "click"
    assert result.target == "wall safe"
    assert result.valid and not result.success and not result.changed
    assert (
        result.response
        == "You examine the wall safe: A steel safe with a keypad. The door holds firm."
    )
    assert game.fingerprint() == before


def test_click_transition_fires_and_re_arms_on_state_change(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    on = game.step("click(lamp)")
    assert on.success and on.changed and on.response == "The lamp lights up."
    assert game.item_state("lamp") == 1
    off = game.step("click(lamp)")
    assert off.response == "The lamp goes dark." and game.item_state("lamp") == 0
    assert game.step("click(lamp)").response == "The lamp lights up."


def test_click_transition_without_state_change_is_spent_after_firing(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    first = game.step("click(drawer)")
    assert first.success and first.response.startswith("The drawer slides open")
    assert game.scene_tools() == ["tape"]
    again = game.step("click(drawer)")
    assert again.valid and not again.success and again.response.startswith("You examine")


def test_click_collects_a_visible_tool(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)")
    result = game.step("click(TAPE)")
    assert result.response == "You collect the tape; it is now in your bag."
    assert result.collected == ("tape",) and result.target == "tape" and result.changed
    assert game.bag == ["tape"] and game.scene_tools() == []
    assert game.tools_in_bag() == "Tools in bag:\n<applicable tool> tape: A roll of tape."
    assert game.bag_tools() == [("tape", "A roll of tape.")]
    again = game.step("click(tape)")
    assert not again.valid and "already in your bag" in again.response


def test_invisible_and_non_interactable_targets_are_refused(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    before = game.fingerprint()
    for action, name in [
        ("click(painting)", "painting"),
        ("click(hidden switch)", "hidden switch"),
        ("click(door key)", "door key"),
        ("click(front door)", "front door"),
        ("click(unicorn)", "unicorn"),
    ]:
        result = game.step(action)
        assert not result.valid and not result.success, action
        assert result.response == f"There is no interactable item '{name}' here."
    assert game.fingerprint() == before


def test_become_tool_puts_the_tool_in_the_bag_and_hides_the_item(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    result = game.step("click(vase)")
    assert result.response == "You lift the vase." and result.collected == ("Vase",)
    assert game.bag == ["Vase"] and "vase" not in game.interactable_items()
    assert "vase" not in game.describe_scene()


def test_move_by_label_and_by_scene_name(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    result = game.step("move( go to THE hallway )")
    assert result.action == "move(hallway)" and result.success and not result.changed
    assert game.scene == "hallway"
    assert game.step("move(Study)").action == "move(study)" and game.scene == "study"
    bad = game.step("move(garden)")
    assert not bad.valid
    assert bad.response == "'garden' is not a scene you can move to from here; valid: hallway."
    play(game, "move(hallway)")
    hidden = game.step("move(Climb through the window)")
    assert not hidden.valid and "valid: study." in hidden.response
    assert game.valid_scene_names() == ["study"]


def test_input_is_exact_and_case_sensitive_after_trimming(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    wrong = game.step("input(411, wall safe)")
    assert wrong.valid and not wrong.success
    assert wrong.response == "Nothing happens. The door holds firm."
    right = game.step("input(' 0411 ', Wall Safe)")
    assert right.action == "input(0411, wall safe)" and right.target == "wall safe"
    assert right.success and right.checkpoint and not right.game_end
    assert right.response == "The bolts retract. CHECKPOINT!"
    assert game.item_state("wall safe") == 1
    assert not game.step("input(0411, drawer)").success


def test_apply_needs_the_tool_in_the_bag_and_an_item_here(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    result = game.step("apply(hammer, wall safe)")
    assert not result.valid and result.response == "'hammer' is not in your bag."
    play(game, "click(drawer)", "click(tape)")
    result = game.step("apply(tape, front door)")
    assert (
        not result.valid and result.response == "There is no interactable item 'front door' here."
    )
    result = game.step("apply(tape, lamp)")
    assert result.valid and not result.success and result.response == "Nothing happens."


def test_feedback_transition_answers_and_consumes_nothing(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)")
    before = game.fingerprint()
    result = game.step("apply(tape, wall safe)")
    assert result.valid and not result.success and not result.changed
    assert result.response == "The tape will not stick to the steel."
    assert game.fingerprint() == before and game.bag == ["tape"]


def test_ordered_craft_refuses_the_swapped_order(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)", "move(hallway)", "click(crowbar)")
    swapped = game.step("craft(tape, crowbar)")
    assert swapped.valid and not swapped.success and swapped.response == "Nothing happens."
    assert game.bag == ["tape", "crowbar"]
    result = game.step("craft(Crowbar, TAPE)")
    assert result.action == "craft(crowbar, tape)" and result.target == "crowbar"
    assert result.success and result.changed
    assert (
        result.response == "You craft the crowbar with the tape. Now: A crowbar with a taped grip."
    )
    assert game.bag == ["crowbar"]  # tape: last state, apply_to used up
    assert game.tool_state("crowbar") == 1


def test_unordered_craft_accepts_the_swapped_order(scenario: Scenario) -> None:
    game = EscapeGame(scenario, crafting="unordered")
    play(game, "click(drawer)", "click(tape)", "move(hallway)", "click(crowbar)")
    result = game.step("craft(tape, crowbar)")
    assert result.success and result.target == "crowbar" and game.bag == ["crowbar"]


def test_craft_needs_two_different_bag_tools(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)")
    assert (
        game.step("craft(tape, tape)").response == "craft needs two different tools from your bag."
    )
    assert game.step("craft(tape, hammer)").response == "'hammer' is not in your bag."
    with pytest.raises(ValueError, match="crafting"):
        EscapeGame(scenario, crafting="sideways")  # type: ignore[arg-type]


def test_apply_fires_triggers_and_the_used_tool_leaves_the_bag(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)", "move(hallway)", "click(crowbar)")
    play(game, "craft(crowbar, tape)", "move(study)")
    result = game.step("apply(crowbar, wall safe)")
    assert (
        result.response
        == "You apply the crowbar to the wall safe. The hinges give way. CHECKPOINT!"
    )
    assert result.checkpoint and result.success and result.target == "wall safe"
    assert game.bag == []  # crowbar: last state, its one apply_to used
    assert game.scene_tools() == ["door key"]
    play(game, "click(door key)", "move(hallway)")
    end = game.step("apply(door key, front door)")
    assert end.game_end and game.game_over and not end.checkpoint
    after = game.step("click(front door)")
    assert not after.valid and after.response == "The game is over."


def test_multi_apply_needs_every_tool(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(vase)", "move(hallway)", "click(hammer)")
    first = game.step("apply(hammer, window)")
    assert first.success and first.changed and not first.checkpoint
    assert first.response == "The window still needs something more."
    assert game.bag == ["Vase"] and game.item_state("window") == 0
    again = game.step("apply(hammer, window)")
    assert not again.valid  # the hammer left the bag: its only apply_to is used
    second = game.step("apply(vase, window)")
    assert second.response == "You apply the Vase to the window. The window shatters."
    assert game.item_state("window") == 1 and game.bag == []
    assert game.valid_scene_names() == ["study", "garden"]
    assert game.step("move(Climb through the window)").success and game.scene == "garden"


def test_forbidden_finish_action_is_refused_and_changes_nothing(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    before = (game.fingerprint(), game.scene)
    result = game.step("Input(0411,  WALL SAFE)", forbidden={"input(0411, wall safe)"})
    assert result.forbidden and not result.valid and not result.success
    assert result.response == BLOCKED
    assert result.action == "input(0411, wall safe)"
    assert (game.fingerprint(), game.scene) == before
    other = game.step("input(0411, wall safe)", forbidden=["apply(crowbar, wall safe)"])
    assert other.success and not other.forbidden


def test_unrecognised_text_is_an_invalid_step(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    result = game.step("foo")
    assert result.action is None and result.kind is None and not result.valid
    assert result.response == (
        "Unrecognised action 'foo'. Use click(x), apply(tool, item), input(text, item), "
        "craft(base, ingredient) or move(scene)."
    )


# ---- state ----


def test_snapshot_restore_round_trip(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)")
    snap = game.snapshot()
    state = (game.fingerprint(), game.scene, game.bag)
    play(game, "move(hallway)", "click(crowbar)", "craft(crowbar, tape)", "click(hammer)")
    assert game.fingerprint() != state[0]
    game.restore(snap)
    assert (game.fingerprint(), game.scene, game.bag) == state
    play(game, "move(hallway)", "click(crowbar)")
    game.restore(snap)  # a snapshot stays usable after a restore
    assert (game.fingerprint(), game.scene, game.bag) == state


def test_two_games_of_one_scenario_are_independent(scenario: Scenario) -> None:
    one, two = EscapeGame(scenario), EscapeGame(scenario)
    play(one, "click(drawer)", "click(tape)", "move(hallway)")
    assert two.scene == "study" and two.bag == [] and two.scene_tools() == []
    assert one.fingerprint() != two.fingerprint()


def test_fingerprint_ignores_position(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    before = game.fingerprint()
    play(game, "move(hallway)")
    assert game.fingerprint() == before


# ---- helpers for reference agents ----


def test_candidate_actions_route_and_locate(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)", "click(vase)")
    assert game.candidate_actions() == [
        "click(wall safe)",
        "click(lamp)",
        "click(drawer)",
        "apply(tape, wall safe)",
        "apply(tape, lamp)",
        "apply(tape, drawer)",
        "apply(Vase, wall safe)",
        "apply(Vase, lamp)",
        "apply(Vase, drawer)",
        "craft(tape, Vase)",
        "craft(Vase, tape)",
        "move(hallway)",
    ]
    assert game.route_to("study") == []
    assert game.route_to("HALLWAY") == ["move(hallway)"]
    assert game.route_to("garden") is None  # not visible yet
    assert game.route_to("attic") is None
    assert game.locate("front door") == "hallway"
    assert game.locate("hammer") == "hallway"
    assert game.locate("tape") is None  # in the bag
    assert game.locate("hidden switch") is None
    assert game.locate("painting") == "study"


def test_a_flat_list_is_one_entry() -> None:
    # Listing 1's flat form: `[apply, Vase, apply, hammer]` is one apply with three arguments.
    with pytest.raises(ScenarioError, match="`apply` takes one tool name, got 3 arguments"):
        load_scenario(WORKSHOP, name="workshop")
