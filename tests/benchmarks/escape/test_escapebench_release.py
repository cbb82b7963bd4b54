"""EscapeBench's released games: each upstream slip repaired as a warning (one sample per kind,
written in the release's format), and a reference action log replayed to GAME END."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from forkingpaths.benchmarks.escape.check import check_scenario
from forkingpaths.benchmarks.escape.cli import app
from forkingpaths.benchmarks.escape.engine import EscapeGame
from forkingpaths.benchmarks.escape.reference_log import (
    LogEntry,
    find_reference_log,
    load_reference_log,
    reference_log_name,
    replay_reference_log,
)
from forkingpaths.benchmarks.escape.schema import (
    LOAD_WARNING_KINDS,
    Scenario,
    ScenarioError,
    load_scenario,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

# A small game of our own in the release's format (data/gameN-M.yaml): comma-string entries,
# `True`/`False`, a close-up shown by a click, a craft whose base is the flashlight-like tool.
GAME = """\
- name: boathouse
  desc: A damp boathouse with a workbench and a door onto the water.
  scene_relations:
    To the workbench close-up: workbench close-up
    To the loft: loft
  items:
  - position: Against the wall
    item:
      name: workbench
      states:
      - desc: A cluttered workbench.
        neg_reward: Perhaps you should look closer.
        transitions:
        - wait_for:
          - click
          trigger:
          - change_visible, scene, workbench close-up, True
          - change_interact, False
          reward: You lean over the workbench.
  - position: In the far wall
    item:
      name: boat door
      states:
      - desc: A door with a 3-digit combination lock.
        neg_reward: It needs a 3-digit code.
        transitions:
        - wait_for:
          - input, 472
          trigger:
          - change_state, 1
          reward: The door swings open onto the lake. GAME END!
      - desc: The door is open.

- name: workbench close-up
  desc: A closer look at the workbench.
  visible: False
  scene_relations:
    Back to the boathouse: boathouse
  items:
  - position: On the bench
    item:
      name: tin box
      states:
      - desc: A tin box, its lid rusted shut.
        neg_reward: Something could pry it open.
        transitions:
        - wait_for:
          - apply, screwdriver
          trigger:
          - change_state, 1
          - change_visible, tool, note, True
          reward: The lid pops off. A note lies inside.
      - desc: An open tin box.
  tools:
  - position: Among the rags
    tool:
      name: screwdriver
      states:
      - desc: A screwdriver, its joint stiff with rust.
        wait_for:
        - oil can
      - desc: A freshly oiled screwdriver.
        apply_to:
        - tin box
  - position: In the tin box
    tool:
      name: note
      visible: False
      states:
      - desc: A note that reads 472.

- name: loft
  desc: A low loft under the roof.
  scene_relations:
    Back to the boathouse: boathouse
  tools:
  - position: On a beam
    tool:
      name: oil can
      states:
      - desc: A small can of machine oil.
        apply_to:
        - screwdriver
"""

# Its reference log in the release's format (data/reference/key_log_N-M.txt): no moves, the
# position as the chain of scenes from the first, the craft written ingredient first.
LOG_ENTRIES = [
    ("boathouse", "click(workbench)"),
    ("boathouse -> workbench close-up", "click(screwdriver)"),
    ("boathouse -> loft", "click(oil can)"),
    ("boathouse -> loft", "craft(oil can, screwdriver)"),
    ("boathouse -> workbench close-up", "apply(screwdriver, tin box)"),
    ("boathouse -> workbench close-up", "click(note)"),
    ("boathouse", "input(472, boat door)"),
]


def log_text(entries: list[tuple[str, str]]) -> str:
    return "".join(
        json.dumps({"position": p, "action_answer": a}, indent=4) + "\n" for p, a in entries
    )


def release(tmp_path: Path, games: dict[str, str], log: str | None = None) -> Path:
    """A data/ folder laid out like the release's: games, and reference/key_log_9-1.txt."""
    data = tmp_path / "data"
    (data / "reference").mkdir(parents=True)
    for stem, text in games.items():
        (data / f"{stem}.yaml").write_text(text, encoding="utf-8")
    (data / "reference" / "key_log_9-1.txt").write_text(
        log if log is not None else log_text(LOG_ENTRIES), encoding="utf-8"
    )
    return data


def line_of(text: str, fragment: str) -> int:
    return next(i + 1 for i, line in enumerate(text.splitlines()) if fragment in line)


def entries_of(tmp_path: Path) -> list[LogEntry]:
    """The sample log, read back from a file in the release's format."""
    path = tmp_path / "key_log_9-1.txt"
    path.write_text(log_text(LOG_ENTRIES), encoding="utf-8")
    return load_reference_log(path)


def lenient(text: str) -> Scenario:
    return load_scenario(text, name="game9-1")


def strict_problem(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(text, name="game9-1", strict=True)
    return info.value.problem


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(app, args)


# ---- the clean game ----


def test_the_sample_game_loads_clean_and_its_log_replays_to_game_end(tmp_path: Path) -> None:
    scenario = lenient(GAME)
    assert scenario.warnings == ()
    entries = entries_of(tmp_path)
    assert (entries[1].line, entries[1].scene) == (5, "workbench close-up")
    replay = replay_reference_log(EscapeGame(scenario, crafting="unordered"), entries, "log")
    assert replay.game_end and replay.failure is None
    assert (replay.played, replay.entries) == (7, 7)
    walked = [s.result.action for s in replay.steps if s.entry is None]
    assert walked == [
        "move(workbench close-up)",
        "move(boathouse)",
        "move(loft)",
        "move(boathouse)",
        "move(workbench close-up)",
        "move(boathouse)",
    ]
    # The log crafts ingredient first: under MUTATE's ordered crafting that does nothing.
    ordered = replay_reference_log(EscapeGame(scenario), entries, "log")
    assert not ordered.game_end and ordered.played == 3
    assert ordered.failure == "log:13: entry 3 'craft(oil can, screwdriver)': Nothing happens."


# ---- one sample per defect kind ----

DEFECTS = {
    # A transition's reward indented out onto its state (game1-2's ventilation fan).
    "state-reward": (
        "          reward: You lean over the workbench.\n",
        "        reward: You lean over the workbench.\n",
        "        reward: You lean over",
        "scenes[0].items[0].item.states[0].reward",
        "`reward` belongs to a transition, not a state: read as the reward of transitions[0]",
        "`reward` in an item state",
    ),
    # game1-3's nails and board.
    "neg-rewards": (
        "        neg_reward: Something could pry it open.\n",
        "        neg_rewards: Something could pry it open.\n",
        "neg_rewards:",
        "scenes[1].items[0].item.states[0].neg_rewards",
        "`neg_rewards` read as `neg_reward`",
        "`neg_rewards` in an item state",
    ),
    # game2-4's handle: `change_interact, False.`.
    "flag-punctuation": (
        "          - change_interact, False\n",
        "          - change_interact, False.\n",
        "change_interact, False.",
        "scenes[0].items[0].item.states[0].transitions[0].trigger[1]",
        'the flag of change_interact "False." read as False',
        'must be true or false, got "False."',
    ),
    # game3-1's painting.
    "tool-interactable": (
        "      name: note\n      visible: False\n",
        "      name: note\n      interactable: False\n      visible: False\n",
        "interactable: False",
        "scenes[1].tools[1].tool.interactable",
        "`interactable` on a tool: tools have none, ignored",
        "unknown key `interactable` in `tool`",
    ),
    # game3-2's pipe on machine / game2-4's blender: a state the item does not have.
    "state-out-of-range": (
        "          - change_state, 1\n          - change_visible, tool, note, True\n",
        "          - change_visible, tool, note, True\n          - change_state, 2\n",
        "change_state, 2",
        "scenes[1].items[0].item.states[0].transitions[0].trigger[1]",
        "state index 2 out of range: 'tin box' has 2 states; the trigger is skipped",
        "state index 2 out of range: 'tin box' has 2 states",
    ),
    # game2-3-easy's shelf close-up: the kitchen lost its relation to it.
    "unreachable-scene": (
        "    To the loft: loft\n",
        "",
        "- name: loft",
        "scenes[2]",
        "no relation leads to scene 'loft'; added 'To the loft' to its `Back to` scene 'boathouse'",
        None,
    ),
}


def test_every_warning_kind_has_a_sample() -> None:
    assert set(DEFECTS) == set(LOAD_WARNING_KINDS)


@pytest.mark.parametrize("kind", sorted(DEFECTS))
def test_each_release_defect_is_one_warning_naming_file_line_and_place(
    kind: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    old, new, at, where, problem, strict = DEFECTS[kind]
    assert GAME.count(old) == 1
    text = GAME.replace(old, new)
    with caplog.at_level(logging.WARNING):
        scenario = lenient(text)
    [warning] = scenario.warnings
    assert (warning.kind, warning.file, warning.where) == (kind, "game9-1", where)
    assert warning.line == line_of(text, at) and warning.problem == problem
    assert caplog.messages == [f"game9-1:{warning.line}: {where}: {problem}"]
    if strict is not None:
        assert strict in strict_problem(text)
    # Each repaired game still plays its reference log to the end.
    entries = entries_of(tmp_path)
    replay = replay_reference_log(EscapeGame(scenario, crafting="unordered"), entries, "log")
    assert replay.game_end


def test_the_repairs_read_what_the_author_meant() -> None:
    moved = lenient(GAME.replace(*DEFECTS["state-reward"][:2]))
    assert moved.find_item("workbench").states[0].transitions[0].reward == (  # type: ignore[union-attr]
        "You lean over the workbench."
    )
    typo = lenient(GAME.replace(*DEFECTS["neg-rewards"][:2]))
    assert typo.find_item("tin box").states[0].neg_reward == "Something could pry it open."  # type: ignore[union-attr]
    flag = lenient(GAME.replace(*DEFECTS["flag-punctuation"][:2]))
    trigger = flag.find_item("workbench").states[0].transitions[0].trigger[1]  # type: ignore[union-attr]
    assert (trigger.op, trigger.value) == ("change_interact", False)
    skipped = lenient(GAME.replace(*DEFECTS["state-out-of-range"][:2]))
    ops = [t.op for t in skipped.find_item("tin box").states[0].transitions[0].trigger]  # type: ignore[union-attr]
    assert ops == ["change_visible"]
    linked = lenient(GAME.replace(*DEFECTS["unreachable-scene"][:2]))
    assert linked.scenes[0].relations[-1] == ("To the loft", "loft")


def test_defects_that_cannot_be_played_are_still_refused() -> None:
    # No meaning can be read into these: refused with the reason, strict or not.
    bad_flag = GAME.replace("change_interact, False\n", "change_interact, Nope\n")
    with pytest.raises(ScenarioError, match='must be true or false, got "Nope"'):
        lenient(bad_flag)
    negative = GAME.replace(
        "change_state, 1\n          reward: The door",
        "change_state, -1\n          reward: The door",
    )
    with pytest.raises(ScenarioError, match="state index -1 out of range"):
        lenient(negative)
    other_key = GAME.replace("neg_reward: It needs", "negreward: It needs")
    with pytest.raises(ScenarioError, match="unknown key `negreward`"):
        lenient(other_key)


def test_check_lists_the_repairs_as_warnings(tmp_path: Path) -> None:
    path = tmp_path / "game9-1.yaml"
    path.write_text(GAME.replace(*DEFECTS["neg-rewards"][:2]), encoding="utf-8")
    issues = check_scenario(path)
    assert [i.severity for i in issues if "neg_rewards" in i.message] == ["warning"]
    assert not [i for i in issues if i.severity == "error"]


# ---- the reference logs ----


def test_log_names_and_layout(tmp_path: Path) -> None:
    assert reference_log_name("game1-2-hard") == "key_log_1-2.txt"
    assert reference_log_name("game3-1") == "key_log_3-1.txt"
    assert reference_log_name("house_heist") is None
    data = release(tmp_path, {"game9-1-easy": GAME})
    assert find_reference_log(data / "game9-1-easy.yaml") == data / "reference/key_log_9-1.txt"
    assert find_reference_log(data / "game9-2.yaml") is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"position": "a"', ":1: not a JSON object (Expecting ',' delimiter)"),
        ("[1]", ":1: entry 0: expected an object, got list"),
        (
            '{"position": "a", "action_answer": "click(x)"}\n{"position": "b"}',
            ":2: entry 1: needs a text `action_answer`",
        ),
        ('{"action_answer": "click(x)"}', ":1: entry 0: needs a text `position`"),
        ("  \n", ": no entries"),
    ],
)
def test_malformed_logs_are_refused_with_file_and_line(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "key_log_9-1.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidFile) as info:
        load_reference_log(path)
    assert str(info.value) == f"{path}{problem}"


def test_replay_log_command_counts_loads_warnings_and_game_ends(tmp_path: Path) -> None:
    games = {
        "game9-1": GAME,
        "game9-1-easy": GAME.replace(*DEFECTS["neg-rewards"][:2]),
        "game9-1-hard": GAME.replace(*DEFECTS["state-out-of-range"][:2]),
    }
    data = release(tmp_path, games)
    result = invoke(["replay-log", str(data)])
    assert result.exit_code == 0, result.output
    # The log's 7 actions, and the 6 moves that walk to the scene each one names.
    end = "GAME END after 7/7 logged actions + 6 moves walking between their scenes = 13 steps"
    assert result.stdout.splitlines() == [
        f"game9-1-easy.yaml: {end} (1 load warning)",
        f"game9-1-hard.yaml: {end} (1 load warning)",
        f"game9-1.yaml: {end}",
        "3 of 3 games load (warnings: 1 neg-rewards, 1 state-out-of-range); "
        "3 of 3 reference logs replay to GAME END (crafting=unordered)",
    ]
    ordered = invoke(["replay-log", str(data / "game9-1.yaml"), "--crafting", "ordered", "--json"])
    assert ordered.exit_code == 1
    row, summary = (json.loads(line) for line in ordered.stdout.splitlines())
    assert (row["game_end"], row["played"], row["entries"]) == (False, 3, 7)
    # 3 logged actions played, 3 walking moves, and the failing 4th action: 7 steps.
    assert (row["walks"], row["steps"]) == (3, 7)
    assert summary["summary"]["game_end"] == 0 and summary["summary"]["loaded"] == 1


def test_replay_log_command_reports_refusals_and_bad_arguments(tmp_path: Path) -> None:
    broken = GAME.replace("neg_reward: It needs", "negreward: It needs")
    data = release(tmp_path, {"game9-1": GAME, "game9-2": broken})
    result = invoke(["replay-log", str(data)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[1].startswith("game9-2.yaml: refused: ") and "unknown key `negreward`" in lines[1]
    assert lines[-1] == (
        "1 of 2 games load (warnings: none); 1 of 2 reference logs replay to GAME END "
        "(crafting=unordered)"
    )
    bad = invoke(["replay-log", str(data), "--crafting", "sideways"])
    assert isinstance(bad.exception, ConfigError)
    assert str(bad.exception) == "--crafting must be one of ordered, unordered, got 'sideways'"
    two = invoke(["replay-log", str(data), "--log", str(data / "reference/key_log_9-1.txt")])
    assert str(two.exception) == "--log names one log, but 2 games were given"
    missing = invoke(["replay-log", str(tmp_path / "nope")])
    assert str(missing.exception) == (
        f"GAMES: {str(tmp_path / 'nope')!r} is neither a game YAML nor a directory"
    )
