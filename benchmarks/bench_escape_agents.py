"""MUTATE: wall time of the reference agents (oracle, systematic, random) over all ten scenarios
under the full protocol (4 attempts each), through the real runner, with the paths they find."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.runner.run import execute_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", default="oracle,systematic,random")
    args = parser.parse_args()
    print(f"{'agent':<12} {'wall s':>8} {'steps':>7} {'steps/s':>9}  path discovery")
    for agent in args.agents.split(","):
        spec = RunSpec(benchmark="escape-v1", split="mutate", agent=agent)
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = asyncio.run(
                execute_run(
                    spec, RunOptions(progress=False), runs_dir=Path(tmp), write_report=False
                )
            )
            wall = time.perf_counter() - start
        steps = sum(e.n_steps for e in result.episodes)
        metrics = result.metrics["metrics"]
        print(
            f"{agent:<12} {wall:>8.2f} {steps:>7} {steps / wall:>9.0f}  "
            f"{metrics['path_discovery_text']}"
        )


if __name__ == "__main__":
    main()
