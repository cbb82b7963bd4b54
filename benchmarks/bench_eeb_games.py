"""EvoEmpirBench: env steps/s with random actions per game (targets: maze >= 20,000/s, match-2
>= 5,000/s) and the wall time of the reference agents over all 180 test instances."""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from forkingpaths.benchmarks.eeb.match2 import Match2Env
from forkingpaths.benchmarks.eeb.match2_levels import load_match2_split
from forkingpaths.benchmarks.eeb.maze import MazeEnv
from forkingpaths.benchmarks.eeb.maze_levels import load_maze_split
from forkingpaths.core.env import Env
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.runner.run import execute_run


def steps_per_second(envs: list[Env], actions: list[str], steps: int, rng: random.Random) -> float:
    env_index = 0
    env = envs[0]
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        result = env.step(rng.choice(actions))
        if result.done:
            env_index = (env_index + 1) % len(envs)
            env = envs[env_index]
            env.reset(seed=env_index)
    return steps / (time.perf_counter() - start)


def match2_actions(rng: random.Random, count: int = 500) -> list[str]:
    # Mostly eliminations at random cells (many of them invalid, as a weak model's), some props.
    out = []
    for _ in range(count):
        i, j = rng.randrange(8), rng.randrange(8)
        kind = rng.choice(["eliminate"] * 8 + ["row", "col", "bomb", "hammer"])
        if kind in ("row", "col"):
            out.append(f'{{"action": {{"type": "{kind}", "index": {i}}}}}')
        else:
            out.append(f'{{"action": {{"type": "{kind}", "pos": [{i}, {j}]}}}}')
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(0)
    mazes = [MazeEnv(level) for _, level in load_maze_split("test")]
    maze_rate = steps_per_second(mazes, [f"Action: {a}" for a in range(12)], args.steps, rng)
    boards = [Match2Env(level) for level in load_match2_split("test").values()]
    match2_rate = steps_per_second(boards, match2_actions(rng), args.steps, rng)
    print(f"maze   : {maze_rate:10,.0f} steps/s random actions (target >= 20,000)")
    print(f"match-2: {match2_rate:10,.0f} steps/s random actions (target >= 5,000)")
    with tempfile.TemporaryDirectory() as tmp:
        spec = RunSpec(benchmark="eeb", split="test", agent="reference")
        start = time.perf_counter()
        result = asyncio.run(
            execute_run(spec, RunOptions(progress=False), runs_dir=Path(tmp), write_report=False)
        )
        seconds = time.perf_counter() - start
    m = result.metrics
    print(
        f"reference agents over all {m['episodes']['planned']} test instances: {seconds:.2f} s "
        f"(maze success {m['metrics'].get('maze_success_rate')}, "
        f"match-2 success {m['metrics'].get('match2_success_rate')})"
    )


if __name__ == "__main__":
    main()
