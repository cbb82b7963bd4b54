"""Replays a list of actions on one level: the JSON-lines contract of `forkingpaths eeb replay`."""

from __future__ import annotations

import json
from collections.abc import Sequence

from forkingpaths.core.env import Env


def replay_lines(env: Env, actions: Sequence[str], *, seed: int | None = 0) -> list[str]:
    """One JSON object per step of replaying `actions` from reset(seed), stopping at the end of
    the episode. Each holds the step's info: at least t, action, valid, reward, score, done,
    plus lives and position (maze) or board and steps_remaining (match-2)."""
    env.reset(seed=seed)
    lines = []
    for action in actions:
        result = env.step(action)
        lines.append(json.dumps(result.info, sort_keys=True))
        if result.done:
            break
    return lines
