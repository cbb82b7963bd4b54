"""EscapeGame: the rules of contract §2 on a small hand-built room, action parsing, rendering,
snapshots and the helpers reference agents use."""

from __future__ import annotations

import random

import pytest

from forkingpaths.benchmarks.escape.actions import ActionCall, action_key, parse_action
from forkingpaths.benchmarks.escape.engine import BLOCKED, DEFAULT_OBJECTIVE, EscapeGame
from forkingpaths.benchmarks.escape.schema import (
    Scenario,
    ScenarioError,
    load_scenario,
    resolve_scenario,
    scenario_names,
)
from forkingpaths.core.errors import ConfigError

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
        ("input(  25  18 , Key   Pad)", ("input", ("25  18", "Key Pad"))),
        ('click(" Wall   Safe ")', ("click", ("Wall Safe",))),
        ("click(captain's log)", ("click", ("captain's log",))),
        ("click(lamp (broken))", ("click", ("lamp (broken)",))),
        ("Move(Go to the hallway)", ("move", ("Go to the hallway",))),
        ("input(, keypad)", ("input", ("", "keypad"))),
    ],
)
def test_parse_action_accepts_the_grammar(text: str, expected: tuple[str, tuple[str, ...]]) -> None:
    assert parse_action(text) == ActionCall(*expected)  # type: ignore[arg-type]


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
        ("click(hidden switch)", "hidden switch"),
        ("click(door key)", "door key"),
        ("click(front door)", "front door"),
        ("click(unicorn)", "unicorn"),
    ]:
        result = game.step(action)
        assert not result.valid and not result.success, action
        assert result.response == f"There is no interactable item '{name}' here."
    # The painting is in view (the scene description lists it) but not interactable.
    result = game.step("click( PAINTING )")
    assert not result.valid and result.response == "The painting cannot be interacted with."
    assert game.fingerprint() == before


def test_a_visible_non_interactable_item_is_named_as_such_with_a_tool_in_the_bag(
    scenario: Scenario,
) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)")
    before = game.fingerprint()
    for action in ("apply(tape, painting)", "input(1234, painting)"):
        result = game.step(action)
        assert not result.valid and result.response == "The painting cannot be interacted with."
    # An item of another scene gets the plain answer: nothing is revealed about it.
    result = game.step("apply(tape, front door)")
    assert result.response == "There is no interactable item 'front door' here."
    assert game.fingerprint() == before


def test_applying_or_typing_into_a_tool_points_to_craft(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    play(game, "click(drawer)", "click(tape)", "move(hallway)")
    lying = game.step("apply(tape, crowbar)")  # the crowbar lies here, not yet collected
    assert not lying.valid
    assert lying.response == (
        "The crowbar is a tool, not an item: to combine two tools from your bag, "
        "use craft(base, ingredient)."
    )
    play(game, "click(crowbar)")
    before = game.fingerprint()
    assert game.step("apply(tape, Crowbar)").response == lying.response
    assert "craft(base, ingredient)" in game.step("apply(tape, tape)").response
    typed = game.step("input(1234, crowbar)")
    assert not typed.valid and typed.response == (
        "The crowbar is a tool, not an item: input(text, item) enters text into an item."
    )
    assert game.fingerprint() == before
    # A tool lying in another scene is not named.
    play(game, "move(study)")
    result = game.step("apply(tape, hammer)")
    assert result.response == "There is no interactable item 'hammer' here."


def test_canonical_text_never_confirms_a_hidden_name(scenario: Scenario) -> None:
    # The canonical action reaches agents (ReDNA's memory): a hidden switch, a tool still in
    # the safe and an unseen garden must come back spelt as typed, like a name that does not
    # exist, while visible things get the scenario's spelling.
    game = EscapeGame(scenario)
    for typed, hidden in [
        ("click(HIDDEN Switch)", "click(HIDDEN Switch)"),
        ("click(Door Key)", "click(Door Key)"),
        ("apply(Door Key, Front Door)", "apply(Door Key, Front Door)"),
        ("move(Garden)", "move(Garden)"),
        ("click(Unicorn)", "click(Unicorn)"),
    ]:
        assert game.step(typed).action == hidden
    assert game.step("click(  LAMP )").action == "click(lamp)"
    assert game.step("move(Go to the HALLWAY)").action == "move(hallway)"
    play(game, "move(study)", "click(vase)")
    assert game.step("apply(VASE, Lamp)").action == "apply(Vase, lamp)"  # the tool it became


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
    here = game.step("move( STUDY )")
    assert not here.valid and not here.success and here.action == "move(study)"
    assert here.response == "You are already in study." and game.scene == "study"
    play(game, "move(hallway)")
    hidden = game.step("move(Climb through the window)")
    assert not hidden.valid and "valid: study." in hidden.response
    assert game.valid_scene_names() == ["study"]


def test_input_is_exact_and_case_sensitive_after_trimming(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    wrong = game.step("input(411, wall safe)")
    assert wrong.valid and not wrong.success
    assert wrong.response == "Nothing happens. The door holds firm."
    # Only the ends are trimmed: inner spaces of a typed string stay, quoted or not.
    for spaced in ("input(04 11, wall safe)", "input(' 04  11 ', wall safe)"):
        assert not game.step(spaced).success, spaced
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
    # An item in view as the ingredient points to apply.
    assert game.step("craft(tape, Wall Safe)").response == (
        "The wall safe is an item, not a tool: to use a tool from your bag on it, "
        "use apply(tool, item)."
    )
    assert game.step("craft(tape, front door)").response == "'front door' is not in your bag."
    with pytest.raises(ConfigError, match="crafting"):
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


def test_a_known_action_with_the_wrong_arguments_gets_its_usage(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    result = game.step("input(1,2,3, keypad)")
    assert not result.valid and result.action is None
    assert result.response == (
        "Unrecognised action 'input(1,2,3, keypad)'. Write it as input(text, item); "
        "quote a text that holds a comma."
    )
    assert game.step("Apply(hammer)").response.endswith("Write it as apply(tool, item).")


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


def test_restore_refuses_what_is_no_snapshot_of_this_scenario(scenario: Scenario) -> None:
    game = EscapeGame(scenario)
    with pytest.raises(ConfigError, match="expected an EscapeState from snapshot"):
        game.restore(("study", False))  # type: ignore[arg-type]
    other = load_scenario(CELL, name="cell")
    with pytest.raises(ConfigError, match="taken in scenario 'cell', this game plays 'workshop'"):
        game.restore(EscapeGame(other).snapshot())
    # The same scenario loaded twice is the same scenario.
    again = EscapeGame(load_scenario(workshop_text(), name="workshop"))
    play(again, "click(drawer)")
    game.restore(again.snapshot())
    assert game.fingerprint() == again.fingerprint()


@pytest.mark.parametrize("name", scenario_names())
def test_restore_then_replay_gives_the_same_responses_and_worlds(name: str) -> None:
    """Fuzz: random play, a snapshot at a random step, restore, replay the rest; every result,
    fingerprint, scene and bag must repeat, in the same game and in a fresh one."""
    scenario = load_scenario(resolve_scenario(name))
    codes = sorted(
        {
            wait.arg or ""
            for item in scenario.items
            for state in item.states
            for tr in state.transitions
            for wait in tr.wait_for
            if wait.kind == "input"
        }
    )
    rng = random.Random(name)
    for _ in range(25):
        crafting = rng.choice(["ordered", "unordered"])
        game = EscapeGame(scenario, crafting=crafting)  # type: ignore[arg-type]
        length = rng.randint(1, 80)
        cut = rng.randint(0, length - 1)
        tail: list[tuple[str, object]] = []
        snap = game.snapshot()
        for t in range(length):
            if t == cut:
                snap = game.snapshot()
            pool = [*game.candidate_actions(), "click(nothing)", "craft(a, b)", "wait"]
            tried = rng.sample(codes, min(3, len(codes)))
            pool += [f"input({c}, {i})" for c in tried for i in game.interactable_items()]
            action = rng.choice(pool)
            result = game.step(action)
            if t >= cut:
                tail.append((action, (result, game.fingerprint(), game.scene, game.bag)))
        for target in (game, EscapeGame(scenario, crafting=crafting)):  # type: ignore[arg-type]
            target.restore(snap)
            for action, expected in tail:
                result = target.step(action)
                assert (result, target.fingerprint(), target.scene, target.bag) == expected


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


# ---- an EscapeBench-style room ----

ESCAPEBENCH_ROOM = """\
- name: living room
  desc: A living room with a cabinet and a locked exit door.
  scene_relations:
    To the cabinet close-up: cabinet close-up
    To the bathroom: bathroom
    To the kitchen: kitchen
  items:
  - position: Beside the wall
    item:
      name: cabinet
      interactable: True
      states:
      - desc: An old cabinet.
        neg_reward: Perhaps you should see it up close
        transitions:
        - wait_for:
          - click
          trigger:
          - change_visible, scene, cabinet close-up, True
          - change_interact, False
          reward: you can see the cabinet up close now.
  - position: Right side
    item:
      name: exit door
      states:
      - desc: A locked door with a 4-digit keypad.
        neg_reward: The door is locked.
        transitions:
        - wait_for:
          - input, 4713
          trigger:
          - change_interact, False
          reward: The exit door unlocks. GAME END!
- name: cabinet close-up
  desc: A closer look at the cabinet.
  visible: False
  scene_relations:
    Back to the living room: living room
  items:
  - position: On top
    item:
      name: vase
      states:
      - desc: A small vase that could be carried.
        transitions:
        - wait_for:
          - click
          trigger:
          - become_tool, vase shard
          reward: The vase breaks as you pick it up; you keep a shard.
  - position: Beside the vase
    item:
      name: telephone
      states:
      - desc: An old rotary telephone with no dial tone.
  tools:
  - position: On top
    tool:
      name: shard_1
      visible: True
      states:
      - desc: A piece of broken mirror.
        apply_to:
        - mirror
  - position: On top
    tool:
      name: vase shard
      visible: False
      states:
      - desc: A curved shard of mirrored glass from the vase.
        apply_to:
        - mirror
- name: bathroom
  desc: A bathroom with a broken mirror.
  scene_relations:
    To the living room: living room
  items:
  - position: On the wall
    item:
      name: mirror
      interactable: True
      states:
      - desc: The mirror is missing four pieces.
        neg_reward: The mirror is incomplete.
        transitions:
        - wait_for:
          - apply, shard_1
          - apply, shard_2
          - apply, shard_3
          - apply, vase shard
          trigger:
          - change_state, 1
          reward: The mirror is complete. It is dark in here though.
      - desc: The mirror is complete but the room is dark.
        neg_reward: Too dark to read it.
        transitions:
        - wait_for:
          - apply, flashlight
          trigger:
          - change_state, 2
          - change_interact, False
          reward: The light reveals '4713' written on the mirror.
      - desc: The mirror shows 4713.
  tools:
  - position: On the sink
    tool:
      name: shard_2
      states:
      - desc: A piece of broken mirror.
        apply_to:
        - mirror
- name: kitchen
  desc: A kitchen.
  scene_relations:
    To the living room: living room
  tools:
  - position: On the counter
    tool:
      name: shard_3
      states:
      - desc: A piece of broken mirror.
        apply_to:
        - mirror
  - position: In the drawer
    tool:
      name: flashlight
      visible: True
      states:
      - desc: A flashlight without power.
        wait_for:
        - battery
      - desc: The flashlight now has a battery.
        apply_to:
        - mirror
  - position: In the drawer
    tool:
      name: battery
      states:
      - desc: A battery.
        apply_to:
        - flashlight
"""
"""EscapeBench's dialect (game1-1.yaml): no objective, comma-string entries, `True`/`False`,
close-up scenes shown by a click, items with desc-only states, a four-shard mirror, a flashlight
crafted with a battery, and a become_tool."""

ESCAPEBENCH_GOLD = [
    "click(cabinet)",
    "move(To the cabinet close-up)",
    "click(telephone)",
    "click(shard_1)",
    "click(vase)",
    "move(living room)",
    "move(kitchen)",
    "click(shard_3)",
    "click(flashlight)",
    "click(battery)",
    "craft(battery, flashlight)",
    "move(living room)",
    "move(bathroom)",
    "click(shard_2)",
    "apply(shard_1, mirror)",
    "apply(shard_2, mirror)",
    "apply(shard_3, mirror)",
    "apply(vase shard, mirror)",
    "apply(flashlight, mirror)",
    "move(living room)",
    "input(4713, exit door)",
]


def test_an_escapebench_room_plays_to_game_end_with_unordered_crafting() -> None:
    scenario = load_scenario(ESCAPEBENCH_ROOM, name="eb_room")
    game = EscapeGame(scenario, crafting="unordered")
    assert game.objective == DEFAULT_OBJECTIVE
    assert game.valid_scene_names() == ["bathroom", "kitchen"]  # the close-up is hidden
    results = [game.step(action) for action in ESCAPEBENCH_GOLD]
    assert all(r.valid for r in results), [(r.action, r.response) for r in results if not r.valid]
    by_action = dict(zip(ESCAPEBENCH_GOLD, results, strict=True))
    assert by_action["click(telephone)"].response == (
        "You examine the telephone: An old rotary telephone with no dial tone."
    )
    assert by_action["click(vase)"].collected == ("vase shard",)
    assert by_action["craft(battery, flashlight)"].target == "flashlight"
    shards = [by_action[f"apply({s}, mirror)"] for s in ("shard_1", "shard_2", "shard_3")]
    assert all(r.success and r.response == "The mirror still needs something more." for r in shards)
    assert by_action["apply(vase shard, mirror)"].response.endswith("It is dark in here though.")
    assert results[-1].game_end and game.game_over and game.bag == []
    assert not any(r.checkpoint for r in results)


def test_escapebench_crafting_is_order_sensitive_only_in_ordered_mode() -> None:
    scenario = load_scenario(ESCAPEBENCH_ROOM, name="eb_room")
    to_kitchen = ["move(kitchen)", "click(flashlight)", "click(battery)"]
    ordered = EscapeGame(scenario)
    play(ordered, *to_kitchen)
    wrong = ordered.step("craft(battery, flashlight)")
    assert wrong.valid and not wrong.success and wrong.response == "Nothing happens."
    assert ordered.bag == ["flashlight", "battery"] and ordered.tool_state("flashlight") == 0
    right = ordered.step("craft(flashlight, battery)")
    assert right.success and ordered.bag == ["flashlight"]
    assert ordered.tool_state("flashlight") == 1
    unordered = EscapeGame(scenario, crafting="unordered")
    play(unordered, *to_kitchen)
    swapped = unordered.step("craft(Battery, FLASHLIGHT)")
    assert swapped.success and swapped.action == "craft(battery, flashlight)"
    assert unordered.bag == ["flashlight"] and unordered.tool_state("flashlight") == 1


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


CELL = """\
- name: cell
  desc: "A bare cell."
  items:
  - item:
      name: cot
      states:
      - desc: "An iron cot."
"""


def test_a_scenario_without_objective_shows_the_default_one() -> None:
    # EscapeBench's files carry no objective.
    game = EscapeGame(load_scenario(CELL, name="cell"))
    assert game.scenario.objective == "" and game.objective == DEFAULT_OBJECTIVE


def test_a_flat_list_is_one_entry() -> None:
    # Listing 1's flat form: `[apply, Vase, apply, hammer]` is one apply with three arguments.
    with pytest.raises(ScenarioError, match="`apply` takes one tool name, got 3 arguments"):
        load_scenario(WORKSHOP, name="workshop")
