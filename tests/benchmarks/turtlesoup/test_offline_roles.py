"""The obvious offline command is judged: a scripted questioner's roles are the scripted
responder and judge, unless the user names others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.turtlesoup.benchmark import TurtleSoupBenchmark
from forkingpaths.core.records import RunOptions
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy

INSTANCES = "crime_thriller-01-en,clever_logic-01-zh"


def scripted(policy: str) -> ScriptedModel:
    return ScriptedModel(f"scripted/{policy}", load_policy(policy), ModelRuntime())


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
    (record,) = result.records
    assert record.initial_info["responder"] == "scripted/turtlesoup-responder"
    assert record.initial_info["judge"] == "scripted/echo"
    assert record.metrics["responder_failures"] == 0
    assert not [r for r in caplog.records if "judge role falls back" in r.getMessage()]


def test_role_models_swap_only_the_scripted_questioner() -> None:
    bench = TurtleSoupBenchmark()
    questioner, echo = scripted("turtlesoup-questioner"), scripted("echo")
    roles = bench.role_models({"responder": questioner, "judge": questioner})
    assert {role: model.name for role, model in roles.items()} == {
        "responder": "scripted/turtlesoup-responder",
        "judge": "scripted/turtlesoup-judge",
    }
    # One stand-in per benchmark object, shared by the episodes.
    assert bench.role_models({"responder": questioner})["responder"] is roles["responder"]
    assert bench.role_models({"responder": echo, "judge": echo}) == {
        "responder": echo,
        "judge": echo,
    }
    assert bench.role_models({}) == {}
