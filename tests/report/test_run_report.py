"""A run's report.html: the Run table names every model, counts read as counts, no column
twice."""

from __future__ import annotations

from pathlib import Path

from tests.report.html_tables import column, read_page

from forkingpaths.core.benchmark import MetricSpec
from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.report.tables import Plain, format_value, metric_cell
from forkingpaths.runner.run import RunResult, execute_run

ESCAPE_ROOMS = ["zombie_lab", "house_heist"]


async def _run(spec: RunSpec, runs_dir: Path) -> RunResult:
    return await execute_run(spec, RunOptions(progress=False), runs_dir=runs_dir)


def _fields(table: list[list[str]]) -> dict[str, str]:
    return {row[0]: row[1] for row in table[1:]}


async def test_run_table_lists_the_role_models(tmp_path: Path) -> None:
    escape = await _run(
        RunSpec(
            benchmark="escape-v1",
            split="mutate",
            instances=ESCAPE_ROOMS,
            agent="redna",
            model="scripted/escape-explorer",
            roles={"judge": RoleModel(model="scripted/escape-judge")},
        ),
        tmp_path,
    )
    soup = await _run(
        RunSpec(
            benchmark="turtlesoup-v1",
            split="all",
            instances=["crime_thriller-01-en", "original-01-en"],
            agent="mosaic",
            model="scripted/turtlesoup-questioner",
            roles={
                "responder": RoleModel(model="scripted/turtlesoup-responder"),
                "judge": RoleModel(model="scripted/turtlesoup-judge"),
            },
        ),
        tmp_path,
    )
    oracle = await _run(
        RunSpec(benchmark="escape-v1", split="mutate", instances=ESCAPE_ROOMS, agent="oracle"),
        tmp_path,
    )
    run = _fields(read_page(escape.run_dir.report_path).tables["Run"])
    assert run["model"] == "scripted/escape-explorer"
    assert run["judge model"] == "scripted/escape-judge"
    run = _fields(read_page(soup.run_dir.report_path).tables["Run"])
    assert run["model"] == "scripted/turtlesoup-questioner"
    assert run["responder model"] == "scripted/turtlesoup-responder"
    assert run["judge model"] == "scripted/turtlesoup-judge"
    # A role nobody configured is named as such, not left out.
    assert _fields(read_page(oracle.run_dir.report_path).tables["Run"])["judge model"] == (
        "– (not configured)"
    )


async def test_counts_print_as_integers_and_scores_keep_their_decimals(tmp_path: Path) -> None:
    oracle = await _run(
        RunSpec(benchmark="escape-v1", split="mutate", instances=ESCAPE_ROOMS, agent="oracle"),
        tmp_path,
    )
    # paths found per room is a mean over trials (a float) of a count: 4 and 8, not 4.0000.
    groups = oracle.metrics["metrics"]["by_group"]
    assert groups["zombie_lab"]["paths_found"] == 4.0
    page = read_page(oracle.run_dir.report_path)
    table = page.tables["By configuration"]
    assert table[0] == [
        "group",
        "paths_found",
        "paths_total",
        "extra_paths_found",
        "avg_steps",
    ]
    assert column(table, "extra_paths_found") == ["0", "0"]
    assert column(table, "paths_found") == ["4", "8"]
    assert column(table, "paths_total") == ["4", "8"]
    metrics = _fields(page.tables["Metrics"])
    assert metrics["paths_found"] == "12" and metrics["episodes"] == "2"
    # Scores keep four decimals even when whole.
    assert metrics["path_discovery"] == "1.0000"


def test_metric_cells_decide_by_type_and_key() -> None:
    specs = {"overall": MetricSpec("Overall", "higher"), "sd": MetricSpec("spread", "none")}
    assert metric_cell("overall", 50.0, specs) == 50.0
    assert format_value(metric_cell("overall", 50.0, specs)) == "50.0000"
    assert metric_cell("paths_found", 8.0, specs, counts={"paths_found"}) == 8
    assert format_value(metric_cell("paths_found", 8.0, specs, counts={"paths_found"})) == "8"
    assert format_value(metric_cell("paths_found", 2.5, specs, counts={"paths_found"})) == "2.5"
    assert metric_cell("paths_found", 2.5, specs, counts={"paths_found"}) == Plain(2.5)
    assert format_value(metric_cell("episodes", 8, specs)) == "8"
    # A descriptive figure (direction none) is not padded to four decimals either.
    assert format_value(metric_cell("sd", 30.0, specs)) == "30"
    assert format_value(metric_cell("sd", 0.125, specs)) == "0.125"


async def test_episodes_table_has_one_steps_column(tmp_path: Path) -> None:
    frontier = await _run(
        RunSpec(
            benchmark="griddag-v1",
            split="main",
            instances=["low-easy-s0", "medium-easy-s1"],
            agent="frontier",
        ),
        tmp_path,
    )
    # griddag scores a `steps` metric per episode besides the record's steps.
    assert "steps" in next(iter(frontier.records())).metrics
    table = read_page(frontier.run_dir.report_path).tables["Episodes"]
    assert table[0].count("steps") == 1
    assert table[0][:4] == ["instance", "trial", "status", "steps"]
    assert column(table, "steps") == ["8", "11"]
