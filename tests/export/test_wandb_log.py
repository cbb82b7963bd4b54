"""`--wandb`: real offline W&B runs of real runs, read back from the files W&B writes."""

from __future__ import annotations

import json
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions, RunSpec
from forkingpaths.export.wandb_log import WandbLogger, log_run_to_wandb
from forkingpaths.runner.run import RunResult, execute_run

pytest.importorskip("wandb")

INSTANCES = ["low-easy-s0", "medium-medium-s1"]
OPTIONS = RunOptions(concurrency=2, progress=False)
SPEC = RunSpec(
    benchmark="griddag",
    split="main",
    instances=INSTANCES,
    agent="react",
    model="scripted/griddag-frontier",
)


@pytest.fixture(autouse=True)
def offline_wandb(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Offline, no key, and every file W&B keeps (settings, cache, staged tables) in tmp."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_DIR", raising=False)
    for name in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(name, str(tmp_path / "wandb-home" / name.lower()))
    monkeypatch.setenv("WANDB_SILENT", "true")


# --- reading an offline run: its .wandb file is a LevelDB-style log of protobuf records --------

_BLOCK = 32768
_FULL, _LAST = 1, 4


def _records(path: Path) -> Iterator[Any]:
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    ident, magic, _version = struct.unpack("<4sHB", data[:7])
    assert (ident, magic) == (b":W&B", 0xBEE1)
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        if _BLOCK - pos % _BLOCK < 7:  # a block's tail too short for a header is padding
            pos += _BLOCK - pos % _BLOCK
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0:
            break
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (_FULL, _LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            yield record


def _items(items: Any) -> dict[str, Any]:
    return {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}


class OfflineRun:
    """What an offline W&B run holds: its run record, history rows, summary and exit code."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.history: list[dict[str, Any]] = []
        self.summary: dict[str, Any] = {}
        self.exit_code: int | None = None
        for record in _records(next(folder.glob("run-*.wandb"))):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                self.name, self.project = record.run.display_name, record.run.project
                self.config = _items(record.run.config.update)
                self.started = record.run.start_time.ToNanoseconds()
            elif kind == "history":
                self.history.append(_items(record.history.item))
            elif kind == "summary":
                self.summary.update(_items(record.summary.update))
            elif kind == "exit":
                self.exit_code = record.exit.exit_code

    @property
    def episodes(self) -> list[dict[str, Any]]:
        return [row for row in self.history if "episode/instance_id" in row]

    def table(self) -> dict[str, Any]:
        path = self.summary["episodes/path"]  # nested keys read as a/b
        return json.loads((self.folder / "files" / path).read_text())


def _offline_runs(root: Path) -> list[OfflineRun]:
    """The offline runs under a W&B dir, first started first (a folder name has only seconds).

    W&B's service process writes the file; on a busy machine it may still be writing when
    `finish()` has returned, so a run is read again until its exit record (written last) is in.
    """
    runs = []
    for folder in (root / "wandb").glob("offline-run-*"):
        deadline = time.monotonic() + 60
        run = OfflineRun(folder)
        while (
            run.exit_code is None or not hasattr(run, "started")
        ) and time.monotonic() < deadline:
            time.sleep(0.1)
            run = OfflineRun(folder)
        runs.append(run)
    return sorted(runs, key=lambda run: run.started)


# --- tests --------------------------------------------------------------------------------------


async def test_a_run_is_logged_as_it_goes(tmp_path: Path) -> None:
    result = await execute_run(
        SPEC, OPTIONS, runs_dir=tmp_path, observers=[WandbLogger("forkingpaths-tests")]
    )
    # W&B's files sit in the run directory (WANDB_DIR is unset).
    [wb] = _offline_runs(result.run_dir.path)
    assert (wb.name, wb.project) == (result.run_dir.run_id, "forkingpaths-tests")
    assert wb.config["run_id"] == result.run_dir.run_id
    assert wb.config["agent"] == "react" and wb.config["instances"] == INSTANCES
    assert wb.exit_code == 0

    rows = sorted(wb.episodes, key=lambda row: row["episode"])
    assert [row["episode"] for row in rows] == [0, 1]
    by_instance = {r.instance_id: r for r in result.records()}
    assert sorted(row["episode/instance_id"] for row in rows) == sorted(INSTANCES)
    for row in rows:
        record = by_instance[row["episode/instance_id"]]
        assert row["episode/status"] == "ok" and row["episode/errored"] == 0
        assert row["episode/steps"] == len(record.steps) > 0
        assert row["episode/calls"] == record.n_calls
        assert row["episode/tokens"] == (
            record.usage.prompt_tokens + record.usage.completion_tokens
        )
        assert row["metric/success"] == int(record.metrics["success"]) == 1
        for name, value in record.metrics.items():
            if isinstance(value, int | float):
                assert row[f"metric/{name}"] == value, name
            else:  # None, or a dict (griddag's case_counts): not a chart
                assert f"metric/{name}" not in row, name
    # Running totals end at the run's usage.
    usage = result.metrics["usage"]
    assert rows[-1]["total/episodes"] == 2
    assert rows[-1]["total/calls"] == usage["calls"]
    assert rows[-1]["total/tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]

    # metrics.json's scalars are the summary, under run/.
    metrics = result.metrics["metrics"]
    assert wb.summary["run/metrics/success_rate"] == metrics["success_rate"]
    assert wb.summary["run/metrics/steps_mean"] == metrics["steps_mean"]
    assert wb.summary["run/episodes/ok"] == 2 and wb.summary["run/complete"] is True
    assert wb.summary["run/usage/prompt_tokens"] == usage["prompt_tokens"]
    assert not any(key.startswith(("run/errors", "run/run_id")) for key in wb.summary)

    table = wb.table()
    assert len(table["data"]) == 2
    row = dict(zip(table["columns"], table["data"][0], strict=True))
    record = by_instance[row["instance_id"]]
    assert row["status"] == "ok" and row["error"] == "" and row["seed"] == record.seed
    assert row["success"] == 1 and row["steps"] == len(record.steps)


class Stop(Exception):
    """Stands for whatever stops a run mid-way (Ctrl-C, a crash)."""


class StopAfterOneEpisode:
    """An observer that stops the run at its first recorded episode."""

    def run_started(self, *args: object) -> None: ...

    def episode_recorded(self, record: EpisodeRecord) -> None:
        raise Stop

    def run_finished(self, result: RunResult | None) -> None: ...


async def test_a_stopped_run_is_failed_in_wandb_and_its_resume_counts_on(tmp_path: Path) -> None:
    # One logger serves runs in turn (a suite), one W&B run each.
    logger = WandbLogger("forkingpaths-tests", wandb_dir=tmp_path / "wb")
    one_at_a_time = OPTIONS.model_copy(update={"concurrency": 1})
    with pytest.raises(Stop):
        await execute_run(
            SPEC, one_at_a_time, runs_dir=tmp_path, observers=[logger, StopAfterOneEpisode()]
        )
    assert logger.run is None
    resumed = await execute_run(SPEC, one_at_a_time, runs_dir=tmp_path, observers=[logger])
    assert (resumed.skipped_episodes, resumed.new_episodes) == (1, 1)

    stopped, finished = _offline_runs(tmp_path / "wb")
    assert stopped.exit_code == 1 and len(stopped.episodes) == 1
    assert "episodes/path" not in stopped.summary  # no table for a run that did not finish
    assert finished.exit_code == 0
    # The resumed invocation logs only its new episode, numbered and totalled after the first.
    [row] = finished.episodes
    assert row["episode"] == 1 and row["total/episodes"] == 2
    assert row["total/calls"] == resumed.metrics["usage"]["calls"]
    assert len(finished.table()["data"]) == 2


async def test_a_finished_run_is_logged_after_the_fact(tmp_path: Path) -> None:
    result = await execute_run(SPEC, OPTIONS, runs_dir=tmp_path / "runs")
    log_run_to_wandb(result.run_dir.path, "forkingpaths-tests", wandb_dir=tmp_path / "wb")
    [wb] = _offline_runs(tmp_path / "wb")
    assert wb.name == result.run_dir.run_id and wb.exit_code == 0
    assert [row["episode"] for row in wb.episodes] == [0, 1]
    assert wb.summary["run/metrics/success_rate"] == result.metrics["metrics"]["success_rate"]
    assert len(wb.table()["data"]) == 2


def test_missing_wandb_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # makes `import wandb` raise ImportError
    with pytest.raises(ConfigError, match=r"pip install 'forkingpaths\[wandb\]'"):
        WandbLogger("forkingpaths-tests")


def test_an_empty_project_is_refused() -> None:
    with pytest.raises(ConfigError, match="--wandb"):
        WandbLogger(" ")
