"""Bytes on disk per episode: every quick-suite run, and one 30-question TurtleSoup Mosaic episode
with a model responder and judge, each run's episodes.jsonl plus its text store (texts.jsonl).

    python benchmarks/bench_record_bytes.py                 # runs them here, in a temp dir
    python benchmarks/bench_record_bytes.py --runs-dir DIR  # measures existing run directories

Pass the runs dir of another revision's quick suite to compare before and after side by side:
    python benchmarks/bench_record_bytes.py --runs-dir NEW --against OLD

Columns: KiB per episode of episodes.jsonl (`records`) and with texts.jsonl (`+texts`), then the
same for the other runs dir and this/other for each. With --against, a second table: how long
reading a run's records takes (`RunDirectory.iter_records`, messages not loaded), ms per
episode, median of interleaved rounds, this beside the other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.suite import quick_specs

MOSAIC = RunSpec(
    benchmark="turtlesoup-v1",
    split="all",
    instances=["clever_logic-01-en"],
    agent="mosaic",
    model="scripted/turtlesoup-questioner",
    roles={
        "responder": RoleModel(model="scripted/turtlesoup-responder"),
        "judge": RoleModel(model="scripted/turtlesoup-judge"),
    },
)


def measure(runs_dir: Path) -> dict[str, tuple[int, int, int, int]]:
    """Run id -> (episodes, calls, bytes of episodes.jsonl, bytes of texts.jsonl)."""
    out = {}
    for run in sorted(p for p in runs_dir.iterdir() if (p / "spec.json").exists()):
        lines = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
        # A step without calls leaves them out on disk (record schema 3).
        calls = sum(
            len(step.get("calls", ())) for line in lines for step in json.loads(line)["steps"]
        )
        texts = run / "texts.jsonl"
        out[run.name] = (
            len(lines),
            calls,
            (run / "episodes.jsonl").stat().st_size,
            texts.stat().st_size if texts.exists() else 0,
        )
    return out


def read_ms(runs: list[Path], rounds: int = 5) -> list[float]:
    """Per run, the median over interleaved rounds of ms per episode to read its records."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            count = sum(1 for _ in RunDirectory(run).iter_records())
            times[i].append((time.perf_counter() - start) * 1000 / max(count, 1))
    return [statistics.median(t) for t in times]


def run_all(runs_dir: Path) -> None:
    options = RunOptions(progress=False, cache=False)
    for spec in [*quick_specs(), MOSAIC]:
        asyncio.run(execute_run(spec, options, runs_dir=runs_dir, write_report=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", type=Path)
    parser.add_argument("--against", type=Path, help="a second runs dir to put beside it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = args.runs_dir or Path(tmp)
        if args.runs_dir is None:
            run_all(runs)
        first = measure(runs)
        second = measure(args.against) if args.against else {}
        # KiB per episode: the records (episodes.jsonl) apart, and with the text store.
        head = f"{'run':<62} {'episodes':>8} {'calls':>6} {'records':>8} {'+texts':>8}"
        print(head + (f" {'other':>8} {'+texts':>8} {'ratio':>6} {'+texts':>6}" if second else ""))
        for run, (episodes, calls, records, texts) in first.items():
            rec = records / max(episodes, 1) / 1024
            per = (records + texts) / max(episodes, 1) / 1024
            line = f"{run:<62} {episodes:>8} {calls:>6} {rec:>8.1f} {per:>8.1f}"
            if run in second:
                e2, _, r2, t2 = second[run]
                rec2 = r2 / max(e2, 1) / 1024
                then = (r2 + t2) / max(e2, 1) / 1024
                line += f" {rec2:>8.1f} {then:>8.1f}"
                line += f" {rec / rec2 if rec2 else 0:>6.2f} {per / then if then else 0:>6.2f}"
            print(line)
        shared = [run for run in first if run in second]
        if shared:
            print(f"\n{'read ms/episode':<62} {'this':>8} {'other':>8} {'ratio':>6}")
            pairs = [p for run in shared for p in (runs / run, args.against / run)]
            ms = read_ms(pairs)
            for i, run in enumerate(shared):
                now, then = ms[2 * i], ms[2 * i + 1]
                print(f"{run:<62} {now:>8.2f} {then:>8.2f} {now / then:>6.2f}")


if __name__ == "__main__":
    main()
