"""Memory and time of a run's end phase, `forkingpaths report`, `show` (one call of one episode)
and `export parquet`, in run size, side by side with another revision of the package.

A run's end phase (scoring, metrics.json, report.html with its figures) and `forkingpaths report
RUN` each run in a fresh process on a generated griddag run (the quick suite's ReAct run with a
scripted model, its small-map episodes repeated as trials); each prints its peak RSS. The times
are from the command's start to its summary on the terminal and to its exit, for
`forkingpaths report` on the generated runs and for a small fresh `forkingpaths run`.

    python benchmarks/bench_run_memory.py --before /tmp/fp-before/src
    python benchmarks/bench_run_memory.py --before /tmp/fp-before/src --episodes 5000 100000

`--before SRC` is a `src` folder of the other revision (`git archive HEAD | tar -x -C DIR`).
A side whose process passes `--limit-gb` of address space is stopped there and shown as more
than the limit.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from viewer_run import write_big_run

SMALL_MAPS = (
    "low-easy-s0",
    "low-easy-s1",
    "low-easy-s2",
    "medium-easy-s0",
    "medium-easy-s1",
    "medium-easy-s2",
)
"""The source episodes repeated: griddag's small maps (6 to 13 steps, 7-12 KB a record)."""

LIMIT_MB = 300.0

# Run in a fresh interpreter with the revision's src first on sys.path: the end phase as
# execute_run does it after the last episode (in-process figures on both sides, so the peak is
# the whole phase's), then the peak RSS.
_END_PHASE = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import plan_jobs
from forkingpaths.runner.rundir import RunDirectory
import forkingpaths.runner.run as run_module
run_dir = RunDirectory(Path(sys.argv[2]))
header = run_dir.read_header()
bench = make_benchmark(header.spec.benchmark, **header.spec.benchmark_options)
jobs = plan_jobs(header.spec, bench)
start_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
drawing = None
if hasattr(run_module, "finish_run"):
    # As `forkingpaths run` ends: figures drawn by a process of their own.
    _, _, drawing = run_module.finish_run(run_dir, bench, jobs, figures="background")
else:
    from forkingpaths.report.html import write_run_report
    from forkingpaths.runner.scoring import finalize_run
    metrics, records = finalize_run(run_dir, bench, jobs)
    write_run_report(run_dir, header, bench, records, metrics)
seconds = time.perf_counter() - t0
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
figures_kb = None
if drawing is not None:
    drawing.wait()
    figures_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({
    "start_mb": start_kb / 1024,
    "peak_mb": peak_kb / 1024,
    "figures_mb": None if figures_kb is None else figures_kb / 1024,
    "seconds": seconds,
}))
"""

_CLI = """
import sys
sys.path.insert(0, sys.argv.pop(1))
from forkingpaths.cli import main
main(sys.argv[1:])
"""

_SUMMARY_MARK = "episodes ok / errored / planned"
"""A line of the summary table `run` and `report` print."""


_SOURCE_RUN = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from forkingpaths.core.records import RunOptions
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.suite import quick_specs
spec = next(s for s in quick_specs() if s.benchmark.startswith("griddag") and s.model)
result = asyncio.run(
    execute_run(spec, RunOptions(progress=False), runs_dir=Path(sys.argv[2]), write_report=False)
)
print(result.run_dir.path)
"""


def source_run(src: str, work: Path) -> Path:
    """The quick suite's griddag ReAct run with its scripted model (steps and model calls),
    played by the package at `src`: the older revision's format, which both sides read."""
    out = subprocess.run(
        [sys.executable, "-c", _SOURCE_RUN, src, str(work)],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _limit(limit_gb: float) -> object:
    def apply() -> None:
        import resource

        size = int(limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return apply


def _run_limited(
    cmd: list[str], limit_gb: float, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`cmd` under the address-space limit, in a process group of its own; past `timeout` the
    group is killed (a process at the limit may hang instead of failing) and counts as past
    the limit."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_limit(limit_gb),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return subprocess.CompletedProcess(cmd, -9, out, err)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def end_phase(src: str, run: Path, limit_gb: float, timeout: float) -> dict[str, float] | None:
    """The end phase of `run` with the package at `src`, in a fresh process; None when it
    passed the memory limit."""
    for extra in ("report.html", "metrics.json"):
        (run / extra).unlink(missing_ok=True)
    shutil.rmtree(run / "plots", ignore_errors=True)
    proc = _run_limited([sys.executable, "-c", _END_PHASE, src, str(run)], limit_gb, timeout)
    if proc.returncode != 0:
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    metrics.pop("timing", None)  # wall times differ between any two readings
    out["metrics"] = metrics
    return out


def timed_command(
    src: str, args: list[str], limit_gb: float, timeout: float
) -> dict[str, float] | None:
    """`forkingpaths ARGS` with the package at `src`: seconds to the summary's line and to exit,
    and the process's peak RSS (measured by a one-shot parent); None past the memory limit."""
    wrapper = (
        "import json, resource, subprocess, sys, time\n"
        "t0 = time.perf_counter(); summary = None\n"
        "proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True)\n"
        "for line in proc.stdout:\n"
        f"    if summary is None and {_SUMMARY_MARK!r} in line:\n"
        "        summary = time.perf_counter() - t0\n"
        "rc = proc.wait(); total = time.perf_counter() - t0\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'rc': rc, 'summary_s': summary, 'exit_s': total, 'peak_mb': peak}))\n"
    )
    env = {**os.environ, "COLUMNS": "120"}
    cmd = [sys.executable, "-c", wrapper, sys.executable, "-c", _CLI, src, *args]
    proc = _run_limited(cmd, limit_gb, timeout, env)
    if proc.returncode != 0:
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return out if out["rc"] == 0 else None


def _mb(value: dict[str, float] | None, limit_gb: float) -> str:
    return f"> {limit_gb * 1024:,.0f}" if value is None else f"{value['peak_mb']:,.0f}"


def _s(value: dict[str, float] | None, key: str) -> str:
    if value is None or value.get(key) is None:
        return "–"
    return f"{value[key]:.2f}"


def _median(values: list[dict[str, float] | None], key: str) -> dict[str, float] | None:
    if any(v is None for v in values):
        return None
    present = [v for v in values if v is not None]
    return {k: statistics.median(v[k] for v in present) for k in (key, "peak_mb")}


def _pair(
    name: str,
    medians: dict[str, dict[str, float] | None],
    shown: Callable[[dict[str, float] | None], str],
) -> tuple[str, str, str]:
    """A row of the table: the figure's name, then the before and after sides as `shown`."""
    return name, shown(medians["before"]), shown(medians["after"])


def _figures_mb(values: list[dict[str, float] | None]) -> str:
    """The figures' process's peak, where the figures were drawn in one of their own."""
    drawn = [v["figures_mb"] for v in values if v is not None and v.get("figures_mb")]
    return f"{statistics.median(drawn):,.0f}" if drawn else "in-process"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="src folder of the other revision")
    parser.add_argument("--after", default=str(Path(__file__).resolve().parents[1] / "src"))
    parser.add_argument("--episodes", type=int, nargs="+", default=[5000, 100_000])
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians)")
    parser.add_argument("--limit-gb", type=float, default=3.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    parser.add_argument("--work", type=Path, default=None, help="keep the runs here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-run-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    source = source_run(args.before, work / "source")
    sides = {"before": args.before, "after": args.after}

    print(f"{'figure':<44} {'before':>10} {'after':>10}  (goal: < {LIMIT_MB:.0f} MiB)")
    for episodes in args.episodes:
        run = work / f"griddag-{episodes}"
        size = write_big_run(source, run, episodes, instances=SMALL_MAPS)["episodes_bytes"]
        print(f"-- {episodes:,} episodes, episodes.jsonl {size / 2**20:,.0f} MiB")
        end: dict[str, list[dict[str, float] | None]] = {k: [] for k in sides}
        report: dict[str, list[dict[str, float] | None]] = {k: [] for k in sides}
        show: dict[str, list[dict[str, float] | None]] = {k: [] for k in sides}
        export: dict[str, list[dict[str, float] | None]] = {k: [] for k in sides}
        # One call of an episode in the middle of the run, its messages whole.
        show_args = ["show", str(run), str(episodes // 2), "--step", "1", "--call", "0"]
        for _ in range(args.rounds):
            for side, src in sides.items():
                end[side].append(end_phase(src, run, args.limit_gb, args.timeout))
                report[side].append(
                    timed_command(src, ["report", str(run)], args.limit_gb, args.timeout)
                )
                show[side].append(timed_command(src, show_args, args.limit_gb, args.timeout))
                out = work / f"parquet-{side}"
                export_args = ["export", "parquet", str(run), "--out", str(out)]
                export[side].append(timed_command(src, export_args, args.limit_gb, args.timeout))
                shutil.rmtree(out, ignore_errors=True)
        end_m = {k: _median(v, "seconds") for k, v in end.items()}
        rep_m = {k: _median(v, "exit_s") for k, v in report.items()}
        rep_s = {k: _median(v, "summary_s") for k, v in report.items()}
        show_m = {k: _median(v, "exit_s") for k, v in show.items()}
        export_m = {k: _median(v, "exit_s") for k, v in export.items()}
        mb = functools.partial(_mb, limit_gb=args.limit_gb)
        rows = [
            _pair("end phase peak RSS, the run's process (MiB)", end_m, mb),
            ("  its figures' own process (MiB)", *map(_figures_mb, end.values())),
            _pair("end phase seconds", end_m, lambda v: _s(v, "seconds")),
            _pair("`report` peak RSS (MiB)", rep_m, mb),
            _pair("`report` seconds to summary", rep_s, lambda v: _s(v, "summary_s")),
            _pair("`report` seconds to exit", rep_m, lambda v: _s(v, "exit_s")),
            _pair("`show RUN N --step 1 --call 0` peak RSS (MiB)", show_m, mb),
            _pair("  its seconds to exit", show_m, lambda v: _s(v, "exit_s")),
            _pair("`export parquet RUN` peak RSS (MiB)", export_m, mb),
            _pair("  its seconds to exit", export_m, lambda v: _s(v, "exit_s")),
        ]
        for name, before, after in rows:
            print(f"{name:<44} {before:>10} {after:>10}")
        if end["before"][0] is not None and end["after"][0] is not None:
            same = end["before"][0]["metrics"] == end["after"][0]["metrics"]
            print(f"{'metrics.json identical (timings aside)':<44} {'yes' if same else 'NO':>21}")

    # The fixed cost at the end of a small fresh run: summary on the terminal, then exit.
    times: dict[str, list[dict[str, float] | None]] = {k: [] for k in sides}
    for n in range(max(3, args.rounds)):
        for side, src in sides.items():
            runs_dir = work / f"fresh-{side}-{n}"
            cmd = ["run", "griddag", "--agent", "frontier", "--instances", "low-easy-s0"]
            cmd += ["--runs-dir", str(runs_dir), "--no-progress"]
            times[side].append(timed_command(src, cmd, args.limit_gb, args.timeout))
    fresh_s = {k: _median(v, "summary_s") for k, v in times.items()}
    fresh_e = {k: _median(v, "exit_s") for k, v in times.items()}
    print("-- `forkingpaths run griddag --agent frontier` (1 episode), medians")
    for name, key, medians in (
        ("seconds to summary", "summary_s", fresh_s),
        ("seconds to exit", "exit_s", fresh_e),
    ):
        print(f"{name:<44} {_s(medians['before'], key):>10} {_s(medians['after'], key):>10}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
