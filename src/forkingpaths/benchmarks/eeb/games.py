"""What the eeb benchmark and Agent-ExpVer share per game: envs, instance ids, record metrics."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from forkingpaths.benchmarks.eeb.match2 import Match2Env, match2_episode_metrics
from forkingpaths.benchmarks.eeb.maze import (
    DEFAULT_MAX_STEPS,
    MazeEnv,
    MazeRules,
    maze_episode_metrics,
)
from forkingpaths.core.env import Env
from forkingpaths.core.records import EpisodeRecord

Game = Literal["maze", "match2"]


def maze_instance_id(rel: str) -> str:
    """The eeb-v1 id of a shipped maze: "test/level2/007" -> "maze-l2-007"; "train/012" ->
    "maze-train-012"."""
    parts = rel.split("/")
    if parts[0] == "train":
        return f"maze-train-{parts[-1]}"
    return f"maze-l{parts[1].removeprefix('level')}-{parts[-1]}"


def match2_instance_id(key: str) -> str:
    """The eeb-v1 id of a shipped match-2 level: "easy/003" -> "match2-easy-003"."""
    return f"match2-{key.replace('/', '-')}"


def maze_record_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """`maze_episode_metrics` of a recorded maze episode (from its last step's info)."""
    if record.steps:
        return maze_episode_metrics(record.steps[-1].info)
    data = record.initial_info
    return maze_episode_metrics({**data, "t": data.get("steps", 0)})


def match2_record_metrics(record: EpisodeRecord) -> dict[str, Any]:
    """`match2_episode_metrics` of a recorded match-2 episode (`valid` lives on the StepRecord,
    so it is put back into each info)."""
    infos = [{**step.info, "valid": step.valid} for step in record.steps]
    max_steps = infos[-1]["max_steps"] if infos else record.initial_info["max_steps"]
    return match2_episode_metrics(infos, max_steps=max_steps).to_dict()


RECORD_METRICS: Mapping[str, Callable[[EpisodeRecord], dict[str, Any]]] = MappingProxyType(
    {"maze": maze_record_metrics, "match2": match2_record_metrics}
)
"""The `episode_metrics` callable of each game, for levels outside the eeb benchmark."""


def game_env(
    game: Game,
    level: Any,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    full_vision: bool = False,
    props: bool = True,
    rules: MazeRules = "paper",
) -> Env:
    """The env of `level` with the eeb benchmark's options (maze step cap, full-vision
    ablation and rules; match-2 NoProps ablation)."""
    if game == "maze":
        return MazeEnv(level, max_steps=max_steps, full_vision=full_vision, rules=rules)
    return Match2Env(level, props=props)
