"""Small hand-built griddag worlds shared by the agent, knowledge and policy tests."""

from __future__ import annotations

from forkingpaths.benchmarks.griddag.world import World

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
