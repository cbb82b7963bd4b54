"""`creativebench exec` per row: one CLI call per row against one `exec --batch` over all rows.

The rows are the built-in set's reference solutions with their tests (Combo's full and demo
tests, Explore's tests): a release's rows as a researcher would check them. Both run through
the CLI a user types, side by side in one run; `--rounds` interleaved, medians. The per-call
side runs `--sample` rows (each call is a whole interpreter start); both report seconds per row.

Usage: python benchmarks/bench_exec_batch.py [--rounds 3] [--sample 12]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from forkingpaths.benchmarks.creativebench.tasks import load_combo, load_explore

FP = [sys.executable, "-m", "forkingpaths.cli", "creativebench", "exec"]


def _rows() -> list[dict[str, str]]:
    explore, _ = load_explore()
    combo, _ = load_combo()
    rows = [{"solution": t.reference_solution, "tests": t.test_code} for t in explore]
    for task in combo:
        for tests in (task.full_test_func, task.demo_test_func):
            if tests.strip():
                rows.append({"solution": task.canonical_solution, "tests": tests})
    return [{"id": str(n), **row} for n, row in enumerate(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=12)
    args = parser.parse_args()
    rows = _rows()
    per_call, batched = [], []
    with tempfile.TemporaryDirectory(prefix="bench-exec-") as tmp:
        work = Path(tmp)
        batch = work / "rows.jsonl"
        batch.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        for _ in range(args.rounds):
            start = time.perf_counter()
            for row in rows[: args.sample]:
                (work / "s.py").write_text(row["solution"], encoding="utf-8")
                (work / "t.py").write_text(row["tests"], encoding="utf-8")
                subprocess.run(
                    [*FP, str(work / "s.py"), "--tests", str(work / "t.py"), "--json"],
                    capture_output=True,
                    check=False,
                )
            per_call.append((time.perf_counter() - start) / args.sample)
            start = time.perf_counter()
            done = subprocess.run(
                [*FP, "--batch", str(batch), "--out", str(work / "v.jsonl")],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(done.stderr)
            batched.append((time.perf_counter() - start) / len(rows))
        summary = done.stderr.strip()
    call, batch_s = statistics.median(per_call), statistics.median(batched)
    print(f"{len(rows)} rows (the built-in set's references); medians of {args.rounds} rounds")
    print(f"{'mode':<40}{'s per row':>12}")
    print(f"{'one exec call per row':<40}{call:>12.3f}")
    print(f"{'exec --batch, all rows':<40}{batch_s:>12.3f}")
    print(f"batch / per call: {call / batch_s:.1f}x faster per row")
    print(f"batch said: {summary}")


if __name__ == "__main__":
    main()
