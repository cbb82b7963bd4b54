"""The suite's report: a table per benchmark with each run linked to its report, rebuilt by
`forkingpaths report SUITE_DIR` from suite.json, and terminal tables that never cut a title."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console
from tests.report.html_tables import column, read_page

import forkingpaths.runner.suite as suite_module
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.run import RunResult
from forkingpaths.runner.suite import (
    SUITE_FILE,
    is_suite_directory,
    print_metrics,
    rebuild_suite_report,
    run_suite,
)

ROOMS = ["zombie_lab", "house_heist"]
MAPS = ["low-easy-s0", "medium-easy-s1"]
SOUPS = ["crime_thriller-01-en", "original-01-en"]
SPECS = [
    RunSpec(benchmark="escape-v1", split="mutate", instances=ROOMS, agent="oracle"),
    RunSpec(
        benchmark="escape-v1",
        split="mutate",
        instances=ROOMS,
        agent="redna",
        model="scripted/escape-explorer",
        roles={"judge": RoleModel(model="scripted/escape-judge")},
    ),
    RunSpec(benchmark="griddag-v1", split="main", instances=MAPS, agent="frontier"),
    RunSpec(benchmark="griddag-v1", split="main", instances=MAPS, agent="random"),
    RunSpec(
        benchmark="turtlesoup-v1",
        split="all",
        instances=SOUPS,
        agent="mosaic",
        model="scripted/turtlesoup-questioner",
        roles={
            "responder": RoleModel(model="scripted/turtlesoup-responder"),
            "judge": RoleModel(model="scripted/turtlesoup-judge"),
        },
    ),
]
ESCAPE_HEADER = [
    "run",
    "agent",
    "model",
    "roles",
    "ok",
    "errored",
    "paths found ↑",
    "Path Discovery ↑",
    "Avg Step ↓",
    "Originality ↑",
    "Elaboration ↑",
    "Groundedness ↑",
    "cost (USD)",
]
GRIDDAG_HEADER = [
    "run",
    "agent",
    "model",
    "ok",
    "errored",
    "success rate ↑",
    "exploration error ↓",
    "exploitation error ↓",
    "steps (successful episodes) ↓",
    "cost (USD)",
]


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[RunResult], Path, str]:
    """A small `quick` suite (two instances a run) played for real with scripted models: its
    results, the suite's directory and what it printed in 80 columns."""
    runs_dir = tmp_path_factory.mktemp("runs")
    console = Console(width=80, record=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(suite_module, "quick_specs", lambda: SPECS)
        results = run_suite("quick", RunOptions(progress=False), runs_dir=runs_dir, console=console)
    return results, runs_dir / "suite-quick", console.export_text()


def test_one_table_per_benchmark_with_runs_linked(
    suite_run: tuple[list[RunResult], Path, str],
) -> None:
    results, suite_dir, _ = suite_run
    page = read_page(suite_dir / "report.html")
    assert list(page.tables) == ["escape-v1", "griddag-v1", "turtlesoup-v1"]
    escape, griddag, soup = page.tables.values()
    assert escape[0] == ESCAPE_HEADER
    oracle = ["oracle", "–", "–", "2", "0", "12 ★", "1.0000 ★", "11.1250 ★", "–", "–", "–"]
    assert escape[1][1:] == [*oracle, "0.0000"]
    redna = ["redna", "scripted/escape-explorer", "judge=scripted/escape-judge", "2", "0", "0"]
    assert escape[2][1:7] == redna
    assert griddag[0] == GRIDDAG_HEADER
    assert column(griddag, "success rate ↑") == ["1.0000 ★", "0.0000"]
    assert soup[0][3] == "roles" and soup[0][9] == "Overall (0.3 L + 0.3 D + 0.4 C, %) ↑"
    assert column(soup, "roles") == [
        "responder=scripted/turtlesoup-responder, judge=scripted/turtlesoup-judge"
    ]
    # Every run links to its own report by a relative path, so the folder opens from disk.
    links = [link for section in page.links.values() for link in section]
    assert links == [
        (r.run_dir.path.name, f"../{r.run_dir.path.name}/report.html") for r in results
    ]
    for _, href in links:
        assert (suite_dir / href).resolve() == next(
            r.run_dir.report_path.resolve() for r in results if r.run_dir.path.name in href
        )
        assert (suite_dir / href).is_file()
    assert all((suite_dir / src).is_file() for src in page.images)


def test_suite_report_is_rebuilt_from_its_directory(
    suite_run: tuple[list[RunResult], Path, str],
) -> None:
    results, suite_dir, _ = suite_run
    report = suite_dir / "report.html"
    before = report.read_text(encoding="utf-8")
    assert f"forkingpaths report {suite_dir}" in read_page(report).text
    assert is_suite_directory(suite_dir)
    assert not is_suite_directory(results[0].run_dir.path)
    report.unlink()
    results[0].run_dir.metrics_path.unlink()
    results[0].run_dir.report_path.unlink()
    assert rebuild_suite_report(suite_dir) == report
    assert report.read_text(encoding="utf-8") == before
    assert results[0].run_dir.metrics_path.is_file()
    assert results[0].run_dir.report_path.is_file()


def test_a_broken_suite_record_is_refused_in_one_line(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite-quick"
    suite_dir.mkdir()
    (suite_dir / SUITE_FILE).write_text('{"suite": "quick"}', encoding="utf-8")
    with pytest.raises(InvalidFile) as info:
        rebuild_suite_report(suite_dir)
    assert str(info.value) == f"{suite_dir / SUITE_FILE}: not a suite record (Field required)"
    (suite_dir / SUITE_FILE).write_text('{"suite": "quick", "runs": ["../gone"]}')
    with pytest.raises(InvalidFile) as info:
        rebuild_suite_report(suite_dir)
    assert str(info.value) == (
        f"{suite_dir / SUITE_FILE}: {tmp_path / 'gone'} is not a run directory (no spec.json)"
    )


def _first_column(text: str) -> str:
    """The first column of the tables a console printed, every line's cell joined, without
    whitespace (a wrapped title reads whole)."""
    cells = [re.split("[│┃]", line)[1] for line in text.splitlines() if line[:1] in "│┃"]
    return re.sub(r"\s+", "", "".join(cells))


def test_terminal_tables_print_every_metric_title_whole(
    suite_run: tuple[list[RunResult], Path, str],
) -> None:
    _, _, printed = suite_run
    assert "…" not in printed
    first = _first_column(printed)
    for header in (ESCAPE_HEADER, GRIDDAG_HEADER):
        for title in header[1:]:
            assert re.sub(r"\s+", "", title) in first
    assert "Overall(0.3L+0.3D+0.4C,%)↑" in first


def test_run_summary_never_cuts_a_metric_name(
    suite_run: tuple[list[RunResult], Path, str],
) -> None:
    results, _, _ = suite_run
    soup = results[-1].metrics
    console = Console(width=40, record=True)
    print_metrics(console, make_benchmark("turtlesoup"), soup)
    printed = console.export_text()
    assert "…" not in printed
    first = _first_column(printed)
    for key, value in soup["metrics"].items():
        if not isinstance(value, dict):  # the breakdown by group is left to the report
            assert key in first
    assert "episodesok/errored/planned" in first
