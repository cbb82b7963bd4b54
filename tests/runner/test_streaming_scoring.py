"""Scoring that reads a run one record at a time equals the whole-list scoring it replaced, on
real runs of every benchmark; reports of runs in older formats; figures after the summary."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.doubles import run_cli
from tests.runner import whole_list_scoring
from tests.web.runs import small_quick_specs

from forkingpaths.core.records import EpisodeRecord, RunOptions, RunSpec
from forkingpaths.core.registry import benchmark_names, make_benchmark
from forkingpaths.report.figures import figures_pending, start_figures, wait_for_figures
from forkingpaths.runner.episode import plan_jobs
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import EPISODES_FILE, INDEX_FILE, RunDirectory
from forkingpaths.runner.scoring import finalize_run, rescore_run, score_run


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every quick-suite configuration on two instances, two trials each (per-trial spreads)."""
    runs_dir = tmp_path_factory.mktemp("streaming-runs")
    paths = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORKINGPATHS_CACHE_DIR", str(runs_dir.parent / "streaming-cache"))
        for spec in small_quick_specs():
            spec = spec.model_copy(update={"trials": 2})
            result = asyncio.run(
                execute_run(spec, RunOptions(progress=False), runs_dir=runs_dir, write_report=False)
            )
            paths.append(result.run_dir.path)
    return paths


def _whole_list(run_dir: RunDirectory, *, recompute: bool) -> dict:
    """metrics.json as the scoring before streaming computed it: every latest record in plan
    order, in memory."""
    header = run_dir.read_header()
    bench = make_benchmark(header.spec.benchmark, **header.spec.benchmark_options)
    jobs = plan_jobs(header.spec, bench)
    latest = run_dir.latest_records()
    records = [latest[job.key] for job in jobs if job.key in latest]
    if recompute:
        for record in records:
            if record.status == "ok":
                record.metrics = bench.episode_metrics(record)
    summary = whole_list_scoring.summarize(header, bench, records, len(jobs))
    return json.loads(json.dumps(summary.model_dump()))


def test_every_benchmark_is_scored(quick_runs: list[Path]) -> None:
    played = {RunDirectory(p).read_header().spec.benchmark.rsplit("-v", 1)[0] for p in quick_runs}
    assert {make_benchmark(n).id.rsplit("-v", 1)[0] for n in benchmark_names()} <= played


def test_metrics_equal_the_whole_list_scoring(quick_runs: list[Path]) -> None:
    for path in quick_runs:
        run_dir = RunDirectory(path)
        written = json.loads(run_dir.metrics_path.read_text(encoding="utf-8"))
        # Every number, timings included: the same values added in the same order.
        assert written == _whole_list(run_dir, recompute=False), path.name
        rescored, bench, scored = rescore_run(run_dir)
        assert json.loads(json.dumps(rescored)) == _whole_list(run_dir, recompute=True), path.name
        # One row per planned episode, in the plan's order.
        jobs = plan_jobs(run_dir.read_header().spec, bench)
        assert [e.key for e in scored.episodes] == [job.key for job in jobs]


def test_records_stream_back_latest_only_and_in_the_order_asked(tmp_path: Path) -> None:
    spec = small_quick_specs()[0]
    result = asyncio.run(
        execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path, write_report=False)
    )
    run_dir = result.run_dir
    first = next(iter(run_dir.iter_records()))
    # The same episode recorded again (a retry): the later record is the one that counts.
    retried = first.model_copy(update={"duration_s": first.duration_s + 1})
    run_dir.append(retried)
    bench = make_benchmark(spec.benchmark)
    scored = score_run(run_dir, bench, plan_jobs(result.run_dir.read_header().spec, bench))
    streamed = list(scored.records())
    assert sorted(r.key for r in streamed) == sorted(e.key for e in scored.episodes)
    assert len(streamed) == len({r.key for r in streamed})
    again = next(r for r in streamed if r.key == first.key)
    assert again.duration_s == retried.duration_s
    wanted = list(reversed(scored.episodes))
    assert [r.key for r in scored.records(wanted)] == [e.key for e in wanted]


def _rewrite_as_old_lines(run_dir: RunDirectory, *, schema_1: bool) -> list[EpisodeRecord]:
    """episodes.jsonl as an older forkingpaths wrote it: every field of a record on its line
    (schema 2 before compaction), or without requests at all (schema 1, before transcripts)."""
    records = list(run_dir.iter_records())
    lines = []
    for record in records:
        data = record.model_dump(mode="json")
        if schema_1:
            data["schema_version"] = 1
            for step in data["steps"]:
                for call in step["calls"]:
                    for key in ("messages", "messages_ref", "params", "finish_reason"):
                        call.pop(key, None)
        lines.append(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    (run_dir.path / EPISODES_FILE).write_text("".join(lines), encoding="utf-8")
    for name in (INDEX_FILE, "metrics.json", "report.html"):
        (run_dir.path / name).unlink(missing_ok=True)
    return records


@pytest.mark.parametrize("schema_1", [False, True])
def test_report_rebuilds_a_run_written_in_an_older_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema_1: bool
) -> None:
    spec = next(s for s in small_quick_specs() if s.benchmark.startswith("griddag") and s.model)
    result = asyncio.run(
        execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path, write_report=False)
    )
    run_dir = result.run_dir
    _rewrite_as_old_lines(run_dir, schema_1=schema_1)
    code, out, _ = run_cli(["report", str(run_dir.path)], capsys)
    assert code == 0
    assert "episodes ok / errored / planned" in out
    # The summary is printed before the page (and its figures) is written.
    assert out.index("episodes ok / errored / planned") < out.index("report:")
    written = json.loads(run_dir.metrics_path.read_text(encoding="utf-8"))
    assert written == _whole_list(run_dir, recompute=True)
    page = run_dir.report_path.read_text(encoding="utf-8")
    assert "<img" in page and "being drawn" not in page


def test_a_run_returns_before_its_figures_and_its_report_gains_them(tmp_path: Path) -> None:
    """`figures="background"` (what `forkingpaths run` asks): matplotlib is never imported by
    the run's process; the page says its figures are coming, and a waiter sees them appear."""
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from forkingpaths.core.records import RunOptions, RunSpec\n"
        "from forkingpaths.runner.run import execute_run\n"
        "spec = RunSpec(benchmark='griddag', split='main', instances=['low-easy-s0'],"
        " agent='frontier')\n"
        "result = asyncio.run(execute_run(spec, RunOptions(progress=False),"
        " runs_dir=Path(sys.argv[1]), figures='background'))\n"
        "print(result.run_dir.path)\n"
        "print('matplotlib' in sys.modules)\n"
        "print('being drawn' in result.run_dir.report_path.read_text())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    run_path, imported, announced = Path(out[0]), out[1], out[2]
    assert imported == "False"
    assert announced == "True"
    assert wait_for_figures(run_path, timeout=120)
    assert not figures_pending(run_path)
    page = (run_path / "report.html").read_text(encoding="utf-8")
    assert "<img" in page and "being drawn" not in page
    assert (run_path / "plots" / "trajectory_low-easy-s0_t0.png").is_file()


def test_a_second_drawer_replaces_the_first_and_is_waited_for(tmp_path: Path) -> None:
    """A run resumed while its figures are still being drawn: the old drawer is stopped (its
    records are no longer the latest), the new one holds the mark, and a waiter waits for it."""
    spec = RunSpec(benchmark="griddag", split="main", instances=["low-easy-s0"], agent="frontier")
    result = asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path))
    run_dir = result.run_dir
    first = start_figures(run_dir)
    second = start_figures(run_dir)
    # Stopped (or already done): the second took the mark only once the first let it go.
    first.process.wait(timeout=60)
    assert wait_for_figures(run_dir.path, timeout=120)
    assert second.process.poll() is not None  # the waiter waited for the second drawer
    assert second.process.returncode == 0
    assert "<img" in run_dir.report_path.read_text(encoding="utf-8")


def test_the_cli_without_a_terminal_draws_after_the_summary_and_leaves_nothing_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(
        [
            "run",
            "griddag",
            "--agent",
            "frontier",
            "--instances",
            "low-easy-s0",
            "--runs-dir",
            str(tmp_path),
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0 and "report:" in out
    (run_path,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    # Drawn by the command itself: no mark, no process left, the page complete on return.
    assert not (run_path / "plots" / ".drawing").exists()
    page = (run_path / "report.html").read_text(encoding="utf-8")
    assert "<img" in page and "being drawn" not in page


def test_finalize_run_reads_the_run_and_not_a_list(tmp_path: Path) -> None:
    """metrics.json of a run whose records are only on disk: nothing is passed in memory."""
    spec = small_quick_specs()[0]
    result = asyncio.run(
        execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path, write_report=False)
    )
    bench = make_benchmark(spec.benchmark)
    jobs = plan_jobs(result.run_dir.read_header().spec, bench)
    result.run_dir.metrics_path.unlink()
    metrics, scored = finalize_run(result.run_dir, bench, jobs)
    assert metrics == result.metrics
    assert [e.key for e in scored.episodes] == [j.key for j in jobs]
