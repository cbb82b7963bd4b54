"""End-to-end runs through execute_run with the reference agent: records, resume, rescore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkingpaths.core.errors import ConfigError, MissingAPIKey, NameNotFound, SpecMismatch
from forkingpaths.core.records import RECORD_SCHEMA_VERSION, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import rescore_run

INSTANCES = ["low-easy-s0", "medium-medium-s1", "high-hard-s2"]
OPTIONS = RunOptions(concurrency=3, progress=False)


def _spec(**kw: object) -> RunSpec:
    base: dict[str, object] = {
        "benchmark": "griddag",
        "split": "main",
        "instances": INSTANCES,
        "agent": "frontier",
    }
    return RunSpec(**{**base, **kw})


async def test_run_writes_the_run_directory(tmp_path: Path) -> None:
    result = await execute_run(_spec(), OPTIONS, runs_dir=tmp_path)
    path = result.run_dir.path
    for name in ("spec.json", "episodes.jsonl", "metrics.json", "report.html"):
        assert (path / name).exists(), name
    lines = (path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 3
    record = json.loads(lines[0])
    assert record["schema_version"] == RECORD_SCHEMA_VERSION and record["benchmark"] == "griddag-v1"
    assert record["steps"][0]["info"]["position"]
    metrics = json.loads((path / "metrics.json").read_text())
    assert metrics["episodes"] == {"planned": 3, "ok": 3, "errored": 0}
    assert metrics["metrics"]["success_rate"] == 1.0
    assert metrics["complete"] is True
    assert "Trajectory" in (path / "report.html").read_text()


async def test_rerun_resumes_and_rescore_is_identical(tmp_path: Path) -> None:
    first = await execute_run(_spec(), OPTIONS, runs_dir=tmp_path)
    again = await execute_run(_spec(), OPTIONS, runs_dir=tmp_path)
    assert again.run_dir.path == first.run_dir.path
    assert again.new_episodes == 0 and again.skipped_episodes == 3
    assert len(again.run_dir.episodes_path.read_text().splitlines()) == 3
    rescored, _, _ = rescore_run(RunDirectory(first.run_dir.path))
    assert rescored["metrics"] == first.metrics["metrics"]


async def test_changed_spec_on_named_run_is_refused(tmp_path: Path) -> None:
    await execute_run(_spec(), OPTIONS, runs_dir=tmp_path, run_id="mine")
    with pytest.raises(SpecMismatch, match="instances"):
        await execute_run(
            _spec(instances=["low-easy-s1"]), OPTIONS, runs_dir=tmp_path, run_id="mine"
        )
    other = await execute_run(
        _spec(instances=["low-easy-s1"]), OPTIONS, runs_dir=tmp_path, run_id="mine", force_new=True
    )
    assert other.run_dir.path.name == "mine-2"
    assert other.new_episodes == 1


@pytest.mark.parametrize(
    ("spec", "error", "needle"),
    [
        ({"benchmark": "gridag"}, NameNotFound, "griddag"),
        ({"agent": "fronteir"}, NameNotFound, "frontier"),
        ({"split": "mian"}, NameNotFound, "main"),
        ({"instances": ["nope"]}, ConfigError, "nope"),
        ({"agent": "react"}, ConfigError, "needs a model"),
        ({"agent": "frontier", "model": "scripted/echo"}, ConfigError, "without a model"),
        ({"agent": "react", "model": "nosuch/x"}, NameNotFound, "openai-compat"),
        ({"agent": "react", "model": "scripted/nosuch"}, NameNotFound, "griddag-frontier"),
    ],
)
async def test_bad_input_is_refused_before_any_episode(
    tmp_path: Path, spec: dict[str, object], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        await execute_run(_spec(**spec), OPTIONS, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir()), "nothing may be written for a refused spec"


async def test_missing_api_key_is_refused_before_any_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingAPIKey, match="OPENAI_API_KEY"):
        await execute_run(_spec(agent="react", model="openai/gpt-4.1"), OPTIONS, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())


async def test_garbage_model_records_invalid_actions_and_goes_on(tmp_path: Path) -> None:
    spec = _spec(agent="react", model="scripted/garbage", instances=["low-easy-s0"])
    result = await execute_run(spec, OPTIONS, runs_dir=tmp_path)
    (record,) = list(result.records())
    assert record.status == "ok"
    budget = record.metrics["budget"]
    assert len(record.steps) == budget, "garbage never ends the episode early"
    assert all(not s.valid for s in record.steps)
    assert record.steps[-1].truncated
    assert result.metrics["metrics"]["invalid_action_rate"] == 1.0
    assert result.metrics["metrics"]["success_rate"] == 0.0
    # A refused move is an error in the paper's metric: the agent never leaves the start.
    assert record.metrics["exploration_error"] == 1.0


async def test_scripted_frontier_model_through_react_solves(tmp_path: Path) -> None:
    spec = _spec(agent="react", model="scripted/griddag-frontier")
    result = await execute_run(spec, OPTIONS, runs_dir=tmp_path)
    assert result.metrics["metrics"]["success_rate"] == 1.0
    assert result.metrics["usage"]["calls"] == sum(len(r.steps) for r in result.records())
    assert all(
        s.calls and s.calls[0].model == "scripted/griddag-frontier"
        for s in next(iter(result.records())).steps
    )
