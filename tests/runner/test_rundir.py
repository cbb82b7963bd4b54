"""Run directory: header, spec mismatch, append/read, torn-line repair, supersession."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkingpaths.core.errors import SpecMismatch
from forkingpaths.core.records import EpisodeRecord, RunSpec
from forkingpaths.runner.rundir import RunDirectory


def _spec(**kw: object) -> RunSpec:
    base = {"benchmark": "griddag-v1", "split": "main", "agent": "frontier"}
    return RunSpec(**{**base, **kw})


def _record(instance: str, status: str = "ok", trial: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r",
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=trial,
        seed=1,
        agent="frontier",
        status=status,  # type: ignore[arg-type]
    )


def test_open_creates_header_and_reopens_same_spec(tmp_path: Path) -> None:
    rd = RunDirectory(tmp_path / "r")
    header = rd.open(_spec())
    assert (tmp_path / "r" / "spec.json").exists()
    assert header.environment["python"]
    assert rd.open(_spec()).spec == header.spec


def test_different_spec_is_refused_naming_fields(tmp_path: Path) -> None:
    rd = RunDirectory(tmp_path / "r")
    rd.open(_spec())
    with pytest.raises(SpecMismatch) as err:
        rd.open(_spec(split="semantic", agent_options={"prompt": "balance"}))
    message = str(err.value)
    assert "split" in message and "agent_options.prompt" in message
    assert "--force-new" in message


def test_append_and_latest_record_supersedes(tmp_path: Path) -> None:
    rd = RunDirectory(tmp_path / "r")
    rd.open(_spec())
    rd.append(_record("a", "error"))
    rd.append(_record("b"))
    rd.append(_record("a", "ok"))
    latest = rd.latest_records()
    assert set(latest) == {("a", 0), ("b", 0)}
    assert latest[("a", 0)].status == "ok"


def test_torn_last_line_is_dropped_on_reopen(tmp_path: Path) -> None:
    rd = RunDirectory(tmp_path / "r")
    rd.open(_spec())
    rd.append(_record("a"))
    with rd.episodes_path.open("a") as fh:
        fh.write('{"schema_version": 1, "run_id": "r", "bench')  # killed mid-write
    assert [r.instance_id for r in rd.iter_records()] == ["a"]
    rd.open(_spec())
    rd.append(_record("b"))
    assert [r.instance_id for r in rd.iter_records()] == ["a", "b"]
    assert rd.episodes_path.read_text().count("\n") == 2
