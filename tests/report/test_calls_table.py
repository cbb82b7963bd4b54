"""Per-purpose model calls in metrics.json, the run report and the terminal summary."""

from __future__ import annotations

from pathlib import Path

from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.report.tables import calls_table
from forkingpaths.runner.run import execute_run


async def test_calls_are_counted_by_purpose_with_the_judge_apart(tmp_path: Path) -> None:
    spec = RunSpec(
        benchmark="escape",
        split="mutate",
        instances=["zombie_lab"],
        agent="redna",
        model="scripted/escape-explorer",
        benchmark_options={"attempts": 1, "max_steps": 12},
        roles={"judge": RoleModel(model="scripted/escape-judge")},
    )
    result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
    (record,) = list(result.records())
    by_purpose: dict[str, int] = {}
    for step in record.steps:
        for call in step.calls:
            by_purpose[call.purpose] = by_purpose.get(call.purpose, 0) + 1
    stats = result.metrics["calls_by_purpose"]
    assert {p: s["calls"] for p, s in stats.items()} == by_purpose
    assert "judge" in stats and stats["judge"]["empty_replies"] == 0
    invalid = sum(not s.valid for s in record.steps) / len(record.steps)
    assert result.metrics["invalid_step_rate"] == round(invalid, 4)
    table = calls_table(result.metrics)
    assert table is not None and [row[0] for row in table.rows] == sorted(by_purpose)
    assert [row[1] for row in table.rows] == [by_purpose[p] for p in sorted(by_purpose)]
    html = (result.run_dir.path / "report.html").read_text()
    assert "Model calls by purpose" in html


def test_a_run_without_model_calls_has_no_calls_table() -> None:
    assert calls_table({"calls_by_purpose": {}, "timing": {}}) is None
