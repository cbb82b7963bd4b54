"""A paper's table reproduced on the embedded local model: SmolLM2 through llama.cpp plays the
protocol's run, and the table lays its numbers beside the published ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import needs_local_model

from forkingpaths.core.registry import make_benchmark
from forkingpaths.core.reproduce import load_published
from forkingpaths.runner.reproduce import run_reproduction
from forkingpaths.runner.rundir import load_records

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, needs_local_model]

MODEL = "local/smollm2-135m"


def test_a_table_reproduces_on_the_local_model(tmp_path: Path) -> None:
    # EvoEmpirBench's Table 5 is one run (the base agent on the match-2 boards); one board keeps
    # it to a few minutes on two cores.
    outcome = run_reproduction("eeb:table5", model=MODEL, limit=1, runs_dir=tmp_path)
    (table,) = outcome.result.tables
    published = load_published(make_benchmark("eeb").published_dir() / "table5.yaml")
    # No published model matches SmolLM2: the table's first row is the one set beside ours.
    first = published.rows[0].values
    (row,) = table.rows
    assert {k: v for k, v in row.published.items() if k in first} == first
    assert all(v is not None for k, v in row.ours.items() if k in ("success_rate", "score"))
    (run_dir,) = outcome.runs.values()
    spec = json.loads((run_dir / "spec.json").read_text())
    assert spec.get("spec", spec)["model"] == MODEL
    (record,) = load_records(run_dir)
    calls = [c for step in record.steps for c in step.calls]
    assert calls and all(c.model == MODEL and c.messages for c in calls)
    assert record.status == "ok"
