"""`escape replay` (the JSON-lines contract) and `escape check` through the Typer sub-app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from forkingpaths.benchmarks.escape.cli import app
from forkingpaths.benchmarks.escape.schema import ScenarioError, scenario_names
from forkingpaths.core.errors import ConfigError, InvalidFile

ROOM = """\
- name: cell
  objective: "Get out."
  desc: "A bare cell."
  scene_relations:
    Go to the shed: shed
  items:
  - position: "In the corner"
    item:
      name: safe
      states:
      - desc: "A locked safe."
        transitions:
        - wait_for: [input, 1234]
          trigger: ["change_state, 1", "change_visible, item, door, true"]
          reward: "The safe opens. CHECKPOINT!"
      - desc: "An open safe."
  - position: "Behind the safe"
    item:
      name: door
      visible: false
      states:
      - desc: "A door."
        transitions:
        - wait_for: [apply, rope]
          trigger: [change_state, 1]
          reward: "You pull the door off. GAME END!"
      - desc: "Open."
  tools:
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
  - position: "In a heap"
    tool:
      name: rope
      states:
      - desc: "A rope."
        wait_for: [hook]
      - desc: "A rope with a hook."
        apply_to: [door]
"""

WIN = [
    "input(1234, safe)",
    "Action: click(Hook)",
    "move(Go to the shed)",
    "click(rope)",
    "craft(rope, hook)",
    "move(cell)",
    "apply(rope, door)",
    "click(safe)",
]

KEYS = ["t", "action", "valid", "response", "scene", "bag", "checkpoint", "game_end"]


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, args, input=stdin)


def records(result: Result) -> list[dict[str, object]]:
    assert result.exit_code == 0, (result.output, result.exception)
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def room(tmp_path: Path) -> Path:
    path = tmp_path / "cell.yaml"
    path.write_text(ROOM, encoding="utf-8")
    return path


def test_replay_prints_one_json_object_per_step_and_stops_at_game_end(
    room: Path, tmp_path: Path
) -> None:
    actions = tmp_path / "actions.txt"
    actions.write_text("\n".join(WIN) + "\n\n", encoding="utf-8")
    out = records(invoke(["replay", str(room), "--actions", str(actions)]))
    assert [list(r) for r in out] == [KEYS] * 7  # stops at GAME END!: click(safe) not played
    assert [r["t"] for r in out] == list(range(1, 8))
    assert [r["action"] for r in out] == WIN[:7]  # as given, not canonicalised
    assert out[0] == {
        "t": 1,
        "action": "input(1234, safe)",
        "valid": True,
        "response": "The safe opens. CHECKPOINT!",
        "scene": "cell",
        "bag": [],
        "checkpoint": True,
        "game_end": False,
    }
    assert out[2]["scene"] == "shed" and out[3]["bag"] == ["hook", "rope"]
    assert out[4]["bag"] == ["rope"]  # the hook is used up by the craft
    assert out[6]["game_end"] and out[6]["bag"] == [] and not out[6]["checkpoint"]


def test_replay_reads_stdin_and_reports_invalid_steps(room: Path) -> None:
    out = records(invoke(["replay", str(room), "--actions", "-"], "look around\nclick(rope)\n"))
    assert [r["valid"] for r in out] == [False, False]
    assert out[0]["response"].startswith("Unrecognised action 'look around'.")
    assert out[1]["response"] == "There is no interactable item 'rope' here."


def test_replay_forbid_and_crafting_options(room: Path) -> None:
    stdin = "input(1234, SAFE)\n"
    out = records(
        invoke(["replay", str(room), "--actions", "-", "--forbid", "input(1234, safe)"], stdin)
    )
    assert not out[0]["valid"] and "blocked" in out[0]["response"]
    swapped = "click(hook)\nmove(shed)\nclick(rope)\ncraft(hook, rope)\n"
    ordered = records(invoke(["replay", str(room), "--actions", "-"], swapped))
    assert ordered[-1]["response"] == "Nothing happens." and ordered[-1]["bag"] == ["hook", "rope"]
    unordered = records(
        invoke(["replay", str(room), "--actions", "-", "--crafting", "unordered"], swapped)
    )
    assert unordered[-1]["bag"] == ["rope"]


def test_replay_forbid_matches_other_spellings_and_refuses_before_validity(room: Path) -> None:
    forbid = ["--forbid", "  APPLY( Rope ,door )", "--forbid", "click(hook)"]
    stdin = "apply(rope,   DOOR)\nAction: `Click( HOOK )`\ninput(1234, safe)\n"
    out = records(invoke(["replay", str(room), "--actions", "-", *forbid], stdin))
    # The first one would fail anyway (no rope in the bag): it is refused all the same.
    assert [r["valid"] for r in out] == [False, False, True]
    assert all("blocked" in r["response"] for r in out[:2]) and out[2]["checkpoint"]
    assert [r["bag"] for r in out] == [[], [], []]


def test_replay_plays_an_escapebench_room_with_unordered_crafting(tmp_path: Path) -> None:
    from tests.benchmarks.escape.test_engine import ESCAPEBENCH_GOLD, ESCAPEBENCH_ROOM

    path = tmp_path / "eb_room.yaml"
    path.write_text(ESCAPEBENCH_ROOM, encoding="utf-8")
    stdin = "\n".join(ESCAPEBENCH_GOLD) + "\n"
    out = records(invoke(["replay", str(path), "--actions", "-", "--crafting", "unordered"], stdin))
    assert len(out) == len(ESCAPEBENCH_GOLD) and all(r["valid"] for r in out)
    assert out[-1]["game_end"] and out[-1]["bag"] == []
    ordered = records(invoke(["replay", str(path), "--actions", "-"], stdin))
    craft = ESCAPEBENCH_GOLD.index("craft(battery, flashlight)")
    assert ordered[craft]["response"] == "Nothing happens."
    light = ESCAPEBENCH_GOLD.index("apply(flashlight, mirror)")
    assert ordered[light]["response"] == "Nothing happens. Too dark to read it."


def test_replay_errors(room: Path, tmp_path: Path) -> None:
    result = invoke(["replay", str(room), "--actions", "-", "--crafting", "sideways"], "")
    assert isinstance(result.exception, ConfigError)
    result = invoke(["replay", str(room), "--actions", str(tmp_path / "missing.txt")])
    assert isinstance(result.exception, InvalidFile) and "cannot read" in str(result.exception)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: a\n  objective: o\n", encoding="utf-8")
    result = invoke(["replay", str(bad), "--actions", "-"], "click(x)\n")
    assert isinstance(result.exception, ScenarioError)
    assert str(result.exception).startswith(f"{bad}:1: scenes[0]:")
    result = invoke(["replay", "no_such_room", "--actions", "-"], "")
    assert isinstance(result.exception, ConfigError) and "escape scenario" in str(result.exception)


def test_replay_accepts_a_shipped_scenario_name() -> None:
    names = scenario_names()
    if not names:
        pytest.skip("no shipped scenarios yet")
    out = records(invoke(["replay", names[0], "--actions", "-"], "look\n"))
    assert out[0]["t"] == 1 and out[0]["valid"] is False


def test_check_ok_summary_and_errors(room: Path, tmp_path: Path) -> None:
    result = invoke(["check", str(room)])
    assert result.exit_code == 0
    assert result.stdout.strip() == "ok: 2 scenes, 2 items, 2 tools, 0 paths"
    broken = tmp_path / "broken.yaml"
    broken.write_text(ROOM.replace("- name: shed\n", "- name: shed\n  visible: false\n"), "utf-8")
    result = invoke(["check", str(broken)])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"error: {broken}:")
    assert "scene 'shed' is not visible at start" in result.stdout
    result = invoke(["check", str(broken), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["summary"] is None
    assert report["issues"][0]["where"] == "scenes[1]"
    assert set(report["issues"][0]) == {"file", "line", "where", "message", "severity"}


def test_check_reports_load_errors_and_meta_option(room: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: a\n  objective: o\n  desc: [\n", encoding="utf-8")
    result = invoke(["check", str(bad)])
    assert result.exit_code == 1 and "malformed YAML" in result.stdout
    meta = tmp_path / "m.meta.yaml"
    meta.write_text("schema_version: 1\nscenario: cell\nphases: []\npaths: []\n", "utf-8")
    result = invoke(["check", str(room), "--meta", str(meta)])
    assert result.exit_code == 1 and "at least one phase" in result.stdout
    result = invoke(["check", str(room), "--meta", str(tmp_path / "none.yaml")])
    assert isinstance(result.exception, ConfigError)
