"""Bytes on disk per episode: every quick-suite run, and one 30-question TurtleSoup Mosaic episode
with a model responder and judge, each run's episodes.jsonl plus its text store (texts.jsonl).

    python benchmarks/bench_record_bytes.py                 # runs them here, in a temp dir
    python benchmarks/bench_record_bytes.py --runs-dir DIR  # measures existing run directories

Pass the runs dir of another revision's quick suite to compare before and after side by side:
    python benchmarks/bench_record_bytes.py --runs-dir OLD --against NEW
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from forkingpaths.core.records import RoleModel, RunOptions, RunSpec
from forkingpaths.runner.run import execute_run
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
        calls = sum(len(step["calls"]) for line in lines for step in json.loads(line)["steps"])
        texts = run / "texts.jsonl"
        out[run.name] = (
            len(lines),
            calls,
            (run / "episodes.jsonl").stat().st_size,
            texts.stat().st_size if texts.exists() else 0,
        )
    return out


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
        head = f"{'run':<62} {'episodes':>8} {'calls':>6} {'KiB/episode':>12}"
        print(head + (f" {'other':>10} {'this/other':>10}" if second else ""))
        for run, (episodes, calls, records, texts) in first.items():
            per = (records + texts) / max(episodes, 1) / 1024
            line = f"{run:<62} {episodes:>8} {calls:>6} {per:>12.1f}"
            if run in second:
                e2, _, r2, t2 = second[run]
                then = (r2 + t2) / max(e2, 1) / 1024
                line += f" {then:>10.1f} {per / then if then else 0:>10.2f}"
            print(line)


if __name__ == "__main__":
    main()
