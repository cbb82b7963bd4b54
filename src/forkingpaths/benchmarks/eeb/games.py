"""What the eeb benchmark and Agent-ExpVer share per game: building envs, metrics from records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from forkingpaths.core.env import Env
from forkingpaths.core.records import EpisodeRecord

Game = Literal["maze", "match2"]


def maze_record_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """`maze_episode_metrics` of a recorded maze episode (from its last step's info)."""
    from forkingpaths.benchmarks.eeb.maze import maze_episode_metrics

    if record.steps:
        return maze_episode_metrics(record.steps[-1].info)
    data = record.initial_info
    return maze_episode_metrics({**data, "t": data.get("steps", 0)})


def match2_record_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """`match2_episode_metrics` of a recorded match-2 episode (`valid` lives on the StepRecord,
    so it is put back into each info)."""
    from forkingpaths.benchmarks.eeb.match2 import match2_episode_metrics

    infos = [{**step.info, "valid": step.valid} for step in record.steps]
    max_steps = infos[-1]["max_steps"] if infos else record.initial_info["max_steps"]
    return match2_episode_metrics(infos, max_steps=max_steps).to_dict()


RECORD_METRICS: Mapping[str, Callable[[EpisodeRecord], dict[str, Any]]] = {
    "maze": maze_record_metrics,
    "match2": match2_record_metrics,
}
"""The `episode_metrics` callable of each game, for levels outside the eeb benchmark."""


def game_env(
    game: Game,
    level: Any,
    *,
    max_steps: int = 100,
    full_vision: bool = False,
    props: bool = True,
) -> Env:
    """The env of `level` with the eeb benchmark's options (maze step cap and full-vision
    ablation; match-2 NoProps ablation)."""
    if game == "maze":
        from forkingpaths.benchmarks.eeb.maze import MazeEnv

        return MazeEnv(level, max_steps=max_steps, full_vision=full_vision)
    from forkingpaths.benchmarks.eeb.match2 import Match2Env

    return Match2Env(level, props=props)
