"""griddag environment steps/s on the largest preset, and the error metric on a 10,000-step
trajectory (target: well under 1 s, the metric is incremental)."""

from __future__ import annotations

import argparse
import random
import time

from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.generator import generate_world
from forkingpaths.benchmarks.griddag.metric import score_trajectory
from forkingpaths.benchmarks.griddag.world import DIRECTIONS, World


def largest_world() -> World:
    worlds = [generate_world("high", "hard", seed) for seed in range(3)]
    return max(worlds, key=lambda w: len(w.cells))


def bench_env(world: World, steps: int, rng: random.Random) -> float:
    env = GridDagEnv(world)
    obs = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        # Mostly admissible moves, some refused ones, as a weak model would produce.
        available = obs.data["available"]
        action = rng.choice(available) if rng.random() < 0.9 else rng.choice(list(DIRECTIONS))
        result = env.step(action)
        obs = env.reset(seed=0) if result.done else result.observation
    return steps / (time.perf_counter() - start)


def random_walk(world: World, steps: int, rng: random.Random) -> list[tuple[int, int]]:
    """A walk that never enters the goal's cell, so every one of its moves is scored."""
    goal = world.nodes[world.goal].pos
    positions = [world.start]
    for _ in range(steps):
        options = [c for c in world.neighbours(positions[-1]) if c != goal]
        positions.append(rng.choice(options))
    return positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env-steps", type=int, default=200_000)
    parser.add_argument("--trajectory", type=int, default=10_000)
    args = parser.parse_args()
    rng = random.Random(0)
    world = largest_world()
    side = world.meta.get("grid_side")
    print(
        f"largest preset map: high/hard, {len(world.cells)} traversable cells (grid {side}), "
        f"{len(world.nodes)} nodes, budget {world.budget}"
    )
    rate = bench_env(world, args.env_steps, rng)
    print(f"env: {rate:,.0f} steps/s ({args.env_steps:,} steps, resets included)")
    positions = random_walk(world, args.trajectory, rng)
    start = time.perf_counter()
    score = score_trajectory(world, positions)
    seconds = time.perf_counter() - start
    print(
        f"metric: {len(score.steps):,} scored moves of a {args.trajectory:,}-step random walk "
        f"in {seconds:.3f} s ({len(score.steps) / seconds:,.0f} moves/s)"
    )


if __name__ == "__main__":
    main()
