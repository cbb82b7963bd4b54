"""Start-up of `forkingpaths run`: seconds from the command's start to its first episode's start
(from the record's `started_at`), to the summary on stdout and to its exit, for this revision and
another (`--before SRC`, e.g. `git archive 70b5816 src | tar -x -C DIR`), side by side in
interleaved rounds (medians). Also `import forkingpaths.cli` alone. Target: first episode < 1 s."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

COMMANDS = {
    "no model": ["run", "griddag", "--agent", "frontier"],
    # A remote model on a closed loopback port: the episode starts, its first call fails at once
    # (no retries); what is timed is everything before it, the client's import included.
    "remote model": [
        *("run", "griddag", "--agent", "react", "--model", "openai-compat/m"),
        *("--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0", "--no-cache"),
    ],
}
COMMON = ["--instances", "low-easy-s0", "--no-progress"]


def one_run(src: Path, command: list[str]) -> dict[str, float]:
    """One `forkingpaths run` with `src` first on the path: seconds to each milestone."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory() as tmp:
        start_wall, start = time.time(), time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "forkingpaths.cli", *command, *COMMON, "--runs-dir", tmp],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        summary = None
        assert proc.stdout is not None
        for line in proc.stdout:
            if summary is None and " metric " in line:  # the summary table's header
                summary = time.perf_counter() - start
        proc.wait()
        exited = time.perf_counter() - start
        (run_dir,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        first = json.loads((run_dir / "episodes.jsonl").read_text().splitlines()[0])
        began = datetime.fromisoformat(first["started_at"]).timestamp() - start_wall
    return {"first": began, "summary": summary or float("nan"), "exit": exited}


def import_seconds(src: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import forkingpaths.cli"], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, required=True, help="src folder of the other side")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    keys = ["import", *(f"{name}: {m}" for name in COMMANDS for m in ("first", "summary", "exit"))]
    figures = {side: {key: [] for key in keys} for side in sides}
    for src in sides.values():  # warm the file cache once per side
        one_run(src, COMMANDS["no model"])
    for _ in range(args.rounds):
        for side, src in sides.items():
            figures[side]["import"].append(import_seconds(src))
            for name, command in COMMANDS.items():
                for key, value in one_run(src, command).items():
                    figures[side][f"{name}: {key}"].append(value)
    print(f"forkingpaths {' '.join(COMMON)} ...   rounds: {args.rounds} (medians)")
    for name, command in COMMANDS.items():
        print(f"  {name}: forkingpaths {' '.join(command)}")
    print(f"{'seconds from the start to':46s}  {'before':>7s}  {'after':>7s}")
    labels = {
        "first": "the first episode's start",
        "summary": "the summary printed",
        "exit": "the command's exit (no terminal)",
    }
    for key in keys:
        name, _, milestone = key.partition(": ")
        label = (
            "`import forkingpaths.cli` done" if key == "import" else f"{name}: {labels[milestone]}"
        )
        before = statistics.median(figures["before"][key])
        after = statistics.median(figures["after"][key])
        print(f"{label:46s}  {before:7.2f}  {after:7.2f}")
    print("target: the first episode starts < 1 s after the command")


if __name__ == "__main__":
    main()
