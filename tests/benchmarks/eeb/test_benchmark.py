"""eeb-v1: splits of §3/Table 2, metrics of Table 3 from records, options, CLI contracts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.runner.run import execute_run

DATA = Path(__file__).parents[3] / "src/forkingpaths/benchmarks/eeb/data"


def test_splits_hold_the_papers_instances() -> None:
    bench = EEBBenchmark()
    assert len(bench.instances("maze")) == 90 and len(bench.instances("match2")) == 90
    assert len(bench.instances("test")) == 180
    assert len(bench.instances("maze-train")) == 30
    levels = {i.params["level"] for i in bench.instances("maze")}
    assert levels == {1, 2, 3}
    assert {i.params["difficulty"] for i in bench.instances("match2")} == {"easy", "medium", "hard"}


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"full_vision": "yes"}, "full_vision"),
        ({"props": 1}, "props"),
        ({"max_steps": 0}, "max_steps"),
        ({"size": 7}, "size"),
        ({"maze_size": 3}, "maze_size"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        EEBBenchmark(**options)


async def test_reference_run_reports_table3_per_game_and_level(tmp_path: Path) -> None:
    ids = ["maze-l1-000", "maze-l3-004", "match2-easy-000", "match2-hard-001"]
    spec = RunSpec(benchmark="eeb", split="test", instances=ids, agent="reference")
    result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
    metrics = result.metrics["metrics"]
    groups = metrics["by_group"]
    assert set(groups) >= {"maze-all", "maze-L1", "maze-L3", "match2-all", "match2-easy"}
    for key in (
        "Suc.Rate",
        "A.Score",
        "A.Steps",
        "A.Explor",
        "A.Gold",
        "Rem.HP",
        "A.Kills",
        "A.Barr",
    ):
        assert key in groups["maze-all"]
    for key in ("Suc.Rate", "A.Score", "R/M.S", "Score/Step", "Clear/Step", "API Eff."):
        assert key in groups["match2-all"]
    # One scale for every rate: fractions in [0, 1] (the paper prints percentages).
    for group in groups.values():
        assert 0.0 <= group["Suc.Rate"] <= 1.0
    assert 0.0 <= groups["maze-all"]["A.Explor"] <= 1.0 and groups["maze-all"]["A.Gold"] <= 1.0
    assert metrics["maze_success_rate"] == 1.0
    assert groups["match2-all"]["API Eff."] == 1.0, "the reference agent never errs"


async def test_noprops_and_full_vision_reach_the_env(tmp_path: Path) -> None:
    bench = EEBBenchmark(props=False, full_vision=True)
    maze = bench.make_env(bench.instance("maze-l2-000"))
    maze.reset(seed=0)
    assert not any("?" in row for row in maze.map_rows()), "full vision shows every cell"
    partial = EEBBenchmark().make_env(bench.instance("maze-l2-000"))
    partial.reset(seed=0)
    assert any("?" in row for row in partial.map_rows())
    board = bench.make_env(bench.instance("match2-easy-000"))
    observation = board.reset(seed=0)
    assert observation.data["props_enabled"] is False
    step = board.step('{"action": {"type": "hammer", "pos": [0, 0]}}')
    assert step.info["valid"] is False and "NoProps" in step.info["error"]
    with_props = EEBBenchmark().make_env(bench.instance("match2-easy-000"))
    assert with_props.reset(seed=0).data["props_enabled"] is True


def test_replay_contract(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    actions = tmp_path / "actions.txt"
    actions.write_text("Action: 9\nnonsense\nAction: 0\n")
    level = DATA / "maze/test/level1/000.json"
    code, out, _ = run_cli(["eeb", "replay", "maze", str(level), "--actions", str(actions)], capsys)
    assert code == 0
    steps = [json.loads(line) for line in out.splitlines()]
    assert [s["t"] for s in steps] == [1, 2, 3]
    assert steps[1]["valid"] is False
    for step in steps:
        assert {"t", "action", "valid", "reward", "score", "done", "lives", "position"} <= set(step)
    actions.write_text('{"action": {"type": "row", "index": 3}}\n')
    level = DATA / "match2/test/easy/000.json"
    code, out, _ = run_cli(
        ["eeb", "replay", "match2", str(level), "--actions", str(actions)], capsys
    )
    (step,) = [json.loads(line) for line in out.splitlines()]
    assert {"t", "action", "valid", "reward", "score", "done", "board", "steps_remaining"} <= set(
        step
    )
    assert len(step["board"]) == 8 and all(len(row) == 8 for row in step["board"])


def test_replay_refuses_a_malformed_level(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"board": ["AAAA"] * 8, "max_steps": 10, "color_targets": {}}))
    actions = tmp_path / "a.txt"
    actions.write_text("x\n")
    code, _, err = run_cli(["eeb", "replay", "match2", str(bad), "--actions", str(actions)], capsys)
    assert code == 2 and "board" in err and "Traceback" not in err


def test_learn_runs_offline_and_writes_truths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))
    args = ["eeb", "learn", "maze", "--model", "scripted/eeb-expver", "--rounds", "1",
            "--levels-per-round", "1", "--eval-levels", "2", "--runs-dir", str(tmp_path),
            "--run-id", "learn"]  # fmt: skip
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    out_dir = tmp_path / "learn"
    truths = json.loads((out_dir / "truths.json").read_text())
    assert truths["game"] == "maze" and isinstance(truths["truths"], list)
    assert (out_dir / "learning_curve.png").exists()
    rounds = (out_dir / "expver_rounds.jsonl").read_text().splitlines()
    assert len(rounds) == 2  # round 0 (the starting policy) and one learning round
    assert "Agent-ExpVer" in out


async def test_human_agent_plays_one_episode_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter(["Action: 9"] * 200)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    spec = RunSpec(benchmark="eeb", split="maze", instances=["maze-l1-000"], agent="human")
    result = await execute_run(spec, RunOptions(concurrency=8), runs_dir=tmp_path)
    (record,) = list(result.records())
    assert record.status == "ok" and record.steps and record.steps[0].action.endswith("9")


def test_maze_size_regenerates_the_same_levels_at_that_size() -> None:
    small = EEBBenchmark(maze_size=7)
    level = small.level(small.instance("maze-l1-004"))
    assert level.size == 7 and level.meta["seed"] == 1004
    env = small.make_env(small.instance("maze-l1-004"))
    assert (
        len(env.reset(seed=0).data["map"] if "map" in env.reset(seed=0).data else env.map_rows())
        == 7
    )


def test_error_messages_are_not_read_as_markup(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "t.json"
    bad.write_text('{"grid_size": 9, "start": "[/x]"}')
    actions = tmp_path / "a.txt"
    actions.write_text("1\n")
    code, _, err = run_cli(["eeb", "replay", "maze", str(bad), "--actions", str(actions)], capsys)
    assert code == 2 and "Traceback" not in err
    assert "[/x]" in err or "start" in err


def test_learning_skips_evaluation_when_the_truths_did_not_change(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))
    args = ["eeb", "learn", "match2", "--model", "scripted/eeb-expver", "--rounds", "2",
            "--levels-per-round", "2", "--eval-levels", "3", "--no-verify",
            "--runs-dir", str(tmp_path), "--run-id", "l"]  # fmt: skip
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    rounds = [
        json.loads(line) for line in (tmp_path / "l/expver_rounds.jsonl").read_text().splitlines()
    ]
    episodes = [
        json.loads(line)["agent_state"]["expver"]
        for line in (tmp_path / "l/expver_episodes.jsonl").read_text().splitlines()
    ]
    for r in rounds[1:]:
        evals = [e for e in episodes if e.get("phase") == "eval" and e.get("round") == r["round"]]
        if r["truths_candidate"] == r["truths_before"] and r["delta"] == 0.0:
            assert not evals, "unchanged truths are not evaluated again"
