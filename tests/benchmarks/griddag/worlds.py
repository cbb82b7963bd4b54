"""Small hand-built griddag worlds, and played records, shared by the griddag tests."""

from __future__ import annotations

from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.benchmarks.griddag.world import World
from forkingpaths.core.records import EpisodeRecord, StepRecord

# y=2:  .  A  .  G        S start, A primitive, B requires A, G (goal) requires B or C,
# y=1:  .  #  #  .        C requires A and B; '#' are obstacles.
# y=0:  S  .  B  C
SMALL_WORLD = World.from_json(
    {
        "cells": [[x, y] for x in range(4) for y in range(3) if (x, y) not in ((1, 1), (2, 1))],
        "start": [0, 0],
        "nodes": {
            "A": {"pos": [1, 2], "options": []},
            "B": {"pos": [2, 0], "options": [["A"]]},
            "C": {"pos": [3, 0], "options": [["A", "B"]]},
            "G": {"pos": [3, 2], "options": [["B"], ["C"]]},
        },
        "goal": "G",
    }
)


def played_record(bench: GridDagBenchmark, instance_id: str, moves: list[str]) -> EpisodeRecord:
    """A record of `moves` played on the instance's env (seed 0), built as the runner builds one."""
    env = bench.make_env(bench.instance(instance_id))
    obs = env.reset(seed=0)
    record = EpisodeRecord(
        run_id="t",
        benchmark=bench.id,
        split="main",
        instance_id=instance_id,
        seed=0,
        agent="scripted",
        initial_observation=obs.text,
        initial_info=dict(obs.data),
    )
    for i, move in enumerate(moves):
        step = env.step(move)
        record.steps.append(
            StepRecord(
                index=i,
                observation=obs.text,
                action=move,
                feedback=step.observation.text,
                valid=step.info["valid"],
                info={k: v for k, v in step.info.items() if k != "valid"},
            )
        )
        obs = step.observation
    return record
