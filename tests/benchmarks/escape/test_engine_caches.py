"""The engine's caches change nothing: a cached view or remembered step equals a fresh one, the
prompt renders as its template does, and libyaml composes the tree the Python parser does."""

from __future__ import annotations

import copy
import pickle
import random
from pathlib import Path

import pytest
import yaml

from forkingpaths.benchmarks.escape.engine import ANYWHERE, MEMO_LIMIT, EscapeGame, View
from forkingpaths.benchmarks.escape.env import EscapeEnv
from forkingpaths.benchmarks.escape.observation import (
    OBSERVATION_TEMPLATE,
    history_from_data,
    render_diversity_constraint,
    render_history,
    render_observation,
)
from forkingpaths.benchmarks.escape.schema import (
    Scenario,
    ScenarioError,
    compose_yaml,
    load_scenario,
    resolve_scenario,
    scenario_names,
    scenarios_dir,
)

ROOM = """\
- name: hall
  desc: A bare hall.
  scene_relations:
    To the cellar: cellar
  items:
  - position: By the door
    item:
      name: chest
      states:
      - desc: A locked chest.
        neg_reward: It is locked.
        transitions:
        - wait_for:
          - apply, key
          trigger:
          - change_state, 1
          - change_visible, tool, coin, True
          reward: The chest opens.
      - desc: An open chest.
  tools:
  - position: In the chest
    tool:
      name: coin
      visible: False
      states:
      - desc: A gold coin.
- name: cellar
  desc: A damp cellar.
  scene_relations:
    Back to the hall: hall
  tools:
  - position: On a hook
    tool:
      name: key
      states:
      - desc: An iron key.
        apply_to:
        - chest
"""


def fresh_view(game: EscapeGame) -> View:
    """The view a game with empty caches renders for `game`'s state (a copy of the scenario
    starts without what games of it shared)."""
    other = EscapeGame(copy.copy(game.scenario))
    other.restore(game.snapshot())
    return other.view()


def fresh_step(game: EscapeGame, action: str, crafting: str) -> tuple[object, ...]:
    """What a game with empty caches in `game`'s state does with `action`."""
    other = EscapeGame(copy.copy(game.scenario), crafting=crafting)  # type: ignore[arg-type]
    other.restore(game.snapshot())
    result = other.step(action)
    return result, other.scene, other.fingerprint()


def random_action(rng: random.Random, game: EscapeGame, scenario: Scenario) -> str:
    names = [i.name for i in scenario.items] + [t.name for t in scenario.tools]
    roll = rng.random()
    if roll < 0.7:
        return rng.choice([*game.candidate_actions(), "click(nothing)"])
    if roll < 0.8:
        return f"input(0000, {rng.choice(names)})"
    if roll < 0.9:
        return f"apply({rng.choice(names)}, {rng.choice(names)})"
    return rng.choice(["look", "CLICK( " + rng.choice(names).upper() + " )", "move(nowhere)"])


@pytest.mark.parametrize("name", scenario_names())
def test_cached_views_and_remembered_steps_equal_fresh_ones(name: str) -> None:
    """Fuzz: after every step (a remembered one, one that changed the world and dropped the
    caches, a restore) the view equals the one a fresh game renders, and every step's result
    equals what a fresh game in the same state does."""
    scenario = load_scenario(resolve_scenario(name))
    rng = random.Random(name)
    for crafting in ("ordered", "unordered"):
        game = EscapeGame(scenario, crafting=crafting)  # type: ignore[arg-type]
        start = game.snapshot()
        played: list[str] = []
        for t in range(300):
            # Replay earlier actions often, so that many steps come from the memo.
            action = rng.choice(played) if played and rng.random() < 0.4 else None
            action = action or random_action(rng, game, scenario)
            expected = fresh_step(game, action, crafting)
            result = game.step(action)
            assert (result, game.scene, game.fingerprint()) == expected, (t, action)
            played.append(action)
            view = game.view()
            assert view == fresh_view(game), (t, action)
            assert game.describe_scene() == view.scene_description
            assert game.possible_actions() == view.possible_actions
            assert game.tools_in_bag() == view.tools_in_bag
            if result.game_end or rng.random() < 0.02:
                game.restore(start)
                assert game.view() == fresh_view(game)


def test_games_of_one_scenario_share_what_they_read_and_copies_do_not() -> None:
    scenario = load_scenario(ROOM, name="room")
    first, second = EscapeGame(scenario), EscapeGame(scenario, crafting="unordered")
    first.step("click(chest)")
    first.view()
    # The second game reads the first's texts and view lines, and still plays from its own
    # world: the chest is locked for both, and a move in one leaves the other where it was.
    assert (
        second.step("click(chest)")
        == fresh_step(EscapeGame(scenario), "click(chest)", "ordered")[0]
    )
    assert second._parsed is first._parsed
    assert second.view() == first.view()
    assert second._text is first._text
    first.step("move(cellar)")
    assert (first.scene, second.scene) == ("cellar", "hall")
    assert second.view() == fresh_view(second)
    assert first.view() == fresh_view(first)
    for other in (
        copy.copy(scenario),
        copy.deepcopy(scenario),
        pickle.loads(pickle.dumps(scenario)),
    ):
        assert other == scenario
        assert other.engine_cache == {}
    assert set(scenario.engine_cache) == {"parsed", "text"}


def test_a_world_change_drops_the_cached_view_and_the_remembered_steps() -> None:
    game = EscapeGame(load_scenario(ROOM, name="room"))
    before = game.view()
    assert "- By the door, there is chest: A locked chest." in before.scene_description
    assert game.view() is before  # rendered once while nothing changes
    refused = game.step("apply(key, chest)")
    assert refused.response == "'key' is not in your bag."
    assert game.step("apply(key, chest)") is refused  # remembered: same scene, same world
    assert game.step("move(To the cellar)").success
    assert game.view().bag == ()
    collected = game.step("click(key)")
    assert collected.changed and game.view().bag == ("key",)
    assert game.view().tools_in_bag == "Tools in bag:\n<applicable tool> key: An iron key."
    assert game.step("move(Back to the hall)").success
    # The bag changed: the hall's view and the refusal of a moment ago are gone.
    hall = game.view()
    assert hall is not before and hall.bag == ("key",)
    opened = game.step("apply(key, chest)")
    assert opened.changed and opened.response.endswith("The chest opens.")
    after = game.view()
    assert "- By the door, there is chest: An open chest." in after.scene_description
    assert after.scene_tools == ("coin",) and "<interactable item> coin" in after.possible_actions
    assert after == fresh_view(game)
    # A restore puts back the world it names, caches and all.
    game.restore(EscapeGame(game.scenario).snapshot())
    assert game.view() == before and game.step("click(coin)").valid is False


def test_the_memo_is_bounded_and_keeps_answering_the_same() -> None:
    game = EscapeGame(load_scenario(ROOM, name="room"))
    answers = {}
    for k in range(MEMO_LIMIT + 10):
        answers[k] = game.step(f"click(thing {k})")
    assert len(game._memo) <= MEMO_LIMIT and len(game._parsed) <= MEMO_LIMIT
    for k in (0, MEMO_LIMIT + 9):
        assert game.step(f"click(thing {k})") == answers[k]


def test_a_world_change_keeps_the_remembered_steps_that_do_not_read_what_changed() -> None:
    """A step reads only the items and tools it names (a move: which scenes are visible), so
    a change elsewhere leaves it remembered; a change to what it names drops it."""
    game = EscapeGame(load_scenario(ROOM, name="room"))
    examined = game.step("click(chest)")
    assert not examined.changed and (0, "click(chest)") in game._memo
    game.step("move(To the cellar)")
    assert game.step("click(key)").changed  # the key, not the chest, changed
    assert (0, "click(chest)") in game._memo and (0, "move(To the cellar)") in game._memo
    # A craft of tools in the bag reads no scene: remembered for every scene at once.
    crafted = game.step("craft(key, nothing)")
    assert (ANYWHERE, "craft(key, nothing)") in game._memo
    game.step("move(Back to the hall)")
    assert game.step("craft(key, nothing)") is crafted
    assert game.step("click(chest)") is examined
    assert game.step("apply(key, chest)").changed  # the chest changed
    assert (0, "click(chest)") not in game._memo
    assert game.step("click(chest)") != examined
    assert game.view() == fresh_view(game)


def test_forbidden_steps_are_not_remembered() -> None:
    game = EscapeGame(load_scenario(ROOM, name="room"))
    blocked = game.step("move(cellar)", forbidden=["move(cellar)"])
    assert blocked.forbidden and game.scene == "hall"
    assert game.step("move(cellar)").success and game.scene == "cellar"


# ---- the prompt ----


def data_with(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "objective": "Get out. It costs $5 {or} ${more}.",
        "step": 3,
        "scene": "hall $scene",
        "scene_description": "A {brace} and a $dollar and $$ and ${x}.",
        "possible_actions": "Possible actions:\n<interactable item> chest",
        "tools_in_bag": "Tools in bag: (none)",
        "valid_scene_names": ["cellar", "attic"],
        "forbidden": ["click(chest)"],
        "history": [
            {"step": 1, "action": "click(chest)", "response": "It is {locked} $1."},
            {"step": 2, "action": "move(cellar)", "response": "You move to cellar."},
        ],
    }
    data.update(changes)
    return data


def template_render(data: dict[str, object], history: object = None) -> str:
    """Prompt 2 through `string.Template`, as it was rendered before the format string."""
    names = list(data.get("valid_scene_names", []))  # type: ignore[call-overload]
    entries = history if history is not None else history_from_data(data)
    return OBSERVATION_TEMPLATE.substitute(
        history=render_history(entries),  # type: ignore[arg-type]
        objective=data["objective"],
        step=data["step"],
        scene=data["scene"],
        scene_description=data["scene_description"],
        possible_actions=data["possible_actions"],
        tools_in_bag=data["tools_in_bag"],
        valid_scene_names=", ".join(names) if names else "(none)",
        example_scene=names[0] if names else "scene name",
        diversity=render_diversity_constraint(data.get("forbidden", [])),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"history": [], "forbidden": [], "valid_scene_names": []},
        {"history": [{"step": k, "action": f"a{k}", "response": "r"} for k in range(14)]},
    ],
)
def test_the_prompt_renders_as_its_template_does(changes: dict[str, object]) -> None:
    data = data_with(**changes)
    assert render_observation(data) == template_render(data)
    thoughts = [
        type(e)(e.step, e.action, e.response, "I {think} $so") for e in history_from_data(data)
    ]
    assert render_observation(data, thoughts) == template_render(data, thoughts)


def test_the_env_prompt_renders_as_its_template_does() -> None:
    game = EscapeGame(load_scenario(ROOM, name="room"))
    env = EscapeEnv(game, None)
    observation = env.reset()
    for action in ["click(chest)", "move(cellar)", "click(key)", "move(hall)", "nonsense"]:
        assert observation.text == template_render(observation.data)
        observation = env.step(action).observation
    assert observation.text == template_render(observation.data)


# ---- loading ----


def tree(node: yaml.Node) -> tuple[object, ...]:
    """What the loader reads of a node: kind, tag, value, line (not the parsers' style flags)."""
    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, node.start_mark.line)
    if isinstance(node, yaml.SequenceNode):
        return ("seq", node.tag, node.start_mark.line, tuple(tree(n) for n in node.value))
    pairs = tuple((tree(k), tree(v)) for k, v in node.value)
    return ("map", node.tag, node.start_mark.line, pairs)


def shipped_yaml() -> list[Path]:
    data = scenarios_dir().parent
    return sorted(data.rglob("*.yaml")) + sorted(Path(__file__).parent.rglob("*.yaml"))


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")
@pytest.mark.parametrize("path", shipped_yaml(), ids=lambda p: p.name)
def test_libyaml_composes_the_tree_the_python_parser_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    slow = yaml.compose(text, Loader=yaml.SafeLoader)
    assert tree(compose_yaml(text, path.name)) == tree(slow)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("- name: a\n  desc: [unclosed\n", "malformed YAML: while parsing a flow sequence"),
        ("- a\nb: c\n", "malformed YAML: "),
        ("- name: a\n  desc: \ud800\n", "malformed YAML: unacceptable character #xd800"),
        ("- name: a\n  desc: \x00\n", "malformed YAML: unacceptable character #x0000"),
        ("", "empty file: expected a list of scenes"),
        ("# only a comment\n", "empty file: expected a list of scenes"),
    ],
)
def test_a_malformed_file_is_refused_in_the_python_parsers_words(text: str, problem: str) -> None:
    with pytest.raises(ScenarioError) as info:
        compose_yaml(text, "bad")
    assert info.value.problem.startswith(problem)
    try:
        yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        words = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        assert (info.value.line, info.value.problem) == (
            mark.line + 1 if mark else 1,
            f"malformed YAML: {words}",
        )
    except yaml.YAMLError as exc:
        assert (info.value.line, info.value.problem) == (1, f"malformed YAML: {exc}")
