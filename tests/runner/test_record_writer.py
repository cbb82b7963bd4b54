"""RecordWriter: a run's records written from a thread of their own, in order, failures raised."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable
from pathlib import Path

import pytest

from forkingpaths.core.records import EpisodeRecord, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RecordWriter, RunDirectory

SPEC = RunSpec(benchmark="griddag", split="main", trials=2, agent="frontier")


def _records(tmp_path: Path) -> list[EpisodeRecord]:
    result = asyncio.run(
        execute_run(SPEC, RunOptions(progress=False), runs_dir=tmp_path / "src", write_report=False)
    )
    return list(result.records())


def _disk_full_at(n: int) -> Callable[[RunDirectory, EpisodeRecord], None]:
    """`RunDirectory.append` whose `n`-th call finds the disk full."""
    real = RunDirectory.append
    calls = 0

    def append(self: RunDirectory, record: EpisodeRecord) -> None:
        nonlocal calls
        calls += 1
        if calls == n:
            raise OSError(errno.ENOSPC, "No space left on device", str(self.episodes_path))
        real(self, record)

    return append


def test_records_are_written_in_the_order_given(tmp_path: Path) -> None:
    records = _records(tmp_path)
    run_dir = RunDirectory(tmp_path / "copy")
    run_dir.open(SPEC)
    writer = RecordWriter(run_dir)
    for record in reversed(records):
        writer.append(record)
    writer.close()
    assert [r.key for r in run_dir.iter_records()] == [r.key for r in reversed(records)]


def test_a_failed_write_is_raised_and_nothing_after_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(tmp_path)
    run_dir = RunDirectory(tmp_path / "copy")
    run_dir.open(SPEC)
    monkeypatch.setattr(RunDirectory, "append", _disk_full_at(2))
    writer = RecordWriter(run_dir)
    with pytest.raises(OSError, match="No space left"):
        try:
            for record in records:
                writer.append(record)
        finally:
            writer.close()
    # The first record stays; none after the failed one was written out of order.
    assert [r.key for r in run_dir.iter_records()] == [records[0].key]


def test_a_run_whose_disk_fills_stops_with_the_error_and_keeps_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RunDirectory, "append", _disk_full_at(3))
    with pytest.raises(OSError, match="No space left"):
        asyncio.run(execute_run(SPEC, RunOptions(progress=False), runs_dir=tmp_path))
    (run_path,) = list(tmp_path.iterdir())
    assert len(list(RunDirectory(run_path).iter_records())) == 2
