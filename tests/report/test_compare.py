"""Comparing runs ranks them by each metric's declared direction."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.report.html_tables import read_page

from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.core.benchmark import PlotArtifact
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.report.compare import compare_runs
from forkingpaths.report.tables import Best, format_value
from forkingpaths.runner.run import execute_run


async def test_best_runs_are_marked_by_direction(tmp_path: Path) -> None:
    runs = []
    for agent in ("frontier", "random"):
        spec = RunSpec(
            benchmark="griddag",
            split="main",
            instances=["low-easy-s0", "medium-medium-s1"],
            agent=agent,
        )
        result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
        runs.append(result)
    table, _ = compare_runs([r.run_dir.path for r in runs], None)
    header = table.header
    assert header[6:10] == [
        "success_rate ↑",
        "exploration_error ↓",
        "exploitation_error ↓",
        "steps_success ↓",
    ]
    frontier, random = table.rows
    success = [r.metrics["metrics"]["success_rate"] for r in runs]
    exploration = [r.metrics["metrics"]["exploration_error"] for r in runs]
    # The BFS frontier agent succeeds everywhere with no exploration error; the random walk not.
    assert success[0] == 1.0 > success[1] and exploration[0] == 0.0 < exploration[1]
    assert frontier[6] == Best(1.0) and random[6] == success[1]
    assert frontier[7] == Best(0.0) and random[7] == exploration[1]
    assert format_value(frontier[6]) == "1.0000 ★"
    assert "↑ higher is better" in table.note


async def test_html_comparison_links_runs_and_names_its_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = []
    for agent in ("frontier", "random"):
        spec = RunSpec(benchmark="griddag", split="main", instances=["low-easy-s0"], agent=agent)
        runs.append(await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path))
    # A benchmark's figure with nothing drawn (no file written) is left out, heading and all.
    monkeypatch.setattr(
        GridDagBenchmark,
        "compare_plots",
        lambda self, summaries, out_dir: [PlotArtifact("empty", out_dir / "none.png")],
    )
    dirs = [r.run_dir.path for r in runs]
    out = tmp_path / "cmp" / "comparison.html"
    _, path = compare_runs(dirs, out)
    assert path == out
    page = read_page(out)
    assert list(page.tables) == ["griddag-v1"]
    assert page.tables["griddag-v1"][0][:5] == ["run", "agent", "model", "ok", "errored"]
    assert page.links["griddag-v1"] == [(d.name, f"../{d.name}/report.html") for d in dirs]
    assert page.images == [] and "Figures" not in page.tables
    command = f"forkingpaths compare {dirs[0]} {dirs[1]} --html {out}"
    assert command in " ".join(page.text.split())
