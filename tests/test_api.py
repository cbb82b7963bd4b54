"""The Python entry points mirror the CLI."""

from __future__ import annotations

from pathlib import Path

from forkingpaths.api import load_records, run


def test_run_and_load_records(tmp_path: Path) -> None:
    result = run("griddag", agent="frontier", instances=["low-easy-s0"], runs_dir=tmp_path)
    assert result.metrics["metrics"]["success_rate"] == 1.0
    records = load_records(result.run_dir.path)
    assert [r.instance_id for r in records] == ["low-easy-s0"]
    assert records[0].metrics == next(iter(result.records())).metrics
