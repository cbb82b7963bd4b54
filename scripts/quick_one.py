"""Run the quick suite's runs of some benchmarks only (for checking a change against a baseline
with scripts/diff_runs.py).

    python scripts/quick_one.py OUT_DIR BENCHMARK_ID [BENCHMARK_ID ...]   # e.g. escape-v1 aut-v1
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from forkingpaths.core.records import RunOptions
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.suite import quick_specs


def main() -> None:
    out, wanted = Path(sys.argv[1]), set(sys.argv[2:])
    for spec in quick_specs():
        if spec.benchmark in wanted:
            result = asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=out))
            print(result.run_dir.path)


if __name__ == "__main__":
    main()
