"""Draws a run report's figures and writes its report.html again with them: in this process, or
as the background process of `figures.start_figures` (`python -m ...figures_worker RUN_DIR`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from forkingpaths.core.registry import make_benchmark
from forkingpaths.report.html import write_run_report
from forkingpaths.runner.episode import plan_jobs
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import score_run


def draw_figures(run_path: Path) -> None:
    """Score the run from its records as recorded (metrics.json was just written from the same
    records), draw the figures, write report.html with them (the background drawer's work; in
    the run's own process `runner.run.draw_run_figures` reuses the rows its scoring kept)."""
    run_dir = RunDirectory(run_path)
    header = run_dir.read_header()
    benchmark = make_benchmark(header.spec.benchmark, **header.spec.benchmark_options)
    scored = score_run(run_dir, benchmark, plan_jobs(header.spec, benchmark))
    summary = run_dir.read_metrics().model_dump()
    write_run_report(run_dir, header, benchmark, scored, summary, figures="inline")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # Its output goes to the run's plots/.figures.log (a figure that failed, with its cause).
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    # The pending mark stays: unlocked once this process ends, it reads as done, and a
    # newer drawer of the same run may already hold it (removing it would hide that one).
    draw_figures(Path(args[0]))


if __name__ == "__main__":
    main()
