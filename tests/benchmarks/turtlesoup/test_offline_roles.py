"""The obvious offline command is judged: a scripted questioner's roles are the scripted
responder and judge, unless the user names others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.turtlesoup.benchmark import TurtleSoupBenchmark
from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.runner.run import with_default_roles

INSTANCES = "crime_thriller-01-en,clever_logic-01-zh"


def test_scripted_questioner_alone_is_judged_with_no_responder_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        ["run", "turtlesoup", "--agent", "mosaic", "--model", "scripted/turtlesoup-questioner",
         "--instances", INSTANCES, "--runs-dir", str(tmp_path), "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    (run_dir,) = tmp_path.iterdir()
    metrics = json.loads((run_dir / "metrics.json").read_text())["metrics"]
    assert (metrics["episodes"], metrics["judged_episodes"], metrics["n_scored"]) == (2, 2, 2)
    assert metrics["responder_failures"] == 0 and metrics["unscored_points"] == 0
    assert metrics["overall"] == pytest.approx(3.6)
    spec = json.loads((run_dir / "spec.json").read_text())["spec"]
    assert {r: m["model"] for r, m in spec["roles"].items()} == {
        "responder": "scripted/turtlesoup-responder",
        "judge": "scripted/turtlesoup-judge",
    }
    records = load_records(run_dir)
    assert [(r.initial_info["responder"], r.initial_info["judge"]) for r in records] == [
        ("scripted/turtlesoup-responder", "scripted/turtlesoup-judge")
    ] * 2
    called = {c.model for r in records for s in r.steps for c in s.calls}
    assert called == {
        "scripted/turtlesoup-questioner",
        "scripted/turtlesoup-responder",
        "scripted/turtlesoup-judge",
    }


def test_a_role_the_user_names_is_kept(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="forkingpaths.benchmarks.turtlesoup.benchmark")
    result = run(
        "turtlesoup",
        agent="baseline",
        model="scripted/turtlesoup-questioner",
        instances=["supernatural-01-en"],
        roles={"judge": "scripted/echo"},
        benchmark_options={"max_turns": 2},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    (record,) = list(result.records())
    assert record.initial_info["responder"] == "scripted/turtlesoup-responder"
    assert record.initial_info["judge"] == "scripted/echo"
    assert record.metrics["responder_failures"] == 0
    assert not [r for r in caplog.records if "judge role falls back" in r.getMessage()]


def test_the_default_roles_are_written_into_the_spec(tmp_path: Path) -> None:
    bench = TurtleSoupBenchmark()
    spec = RunSpec(
        benchmark=bench.id, split="all", agent="mosaic", model="scripted/turtlesoup-questioner"
    )
    assert {r: m.model for r, m in with_default_roles(spec, bench).roles.items()} == {
        "responder": "scripted/turtlesoup-responder",
        "judge": "scripted/turtlesoup-judge",
    }
    named = spec.model_copy(update={"roles": {"judge": RoleModel(model="scripted/echo")}})
    assert {r: m.model for r, m in with_default_roles(named, bench).roles.items()} == {
        "responder": "scripted/turtlesoup-responder",
        "judge": "scripted/echo",
    }
    other = spec.model_copy(update={"model": "scripted/echo"})
    assert with_default_roles(other, bench).roles == {}
