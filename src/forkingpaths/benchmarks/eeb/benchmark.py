"""The eeb-v1 benchmark: maze and match-2 test and training instances, agents, Table 3 metrics."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, QuickConfig
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord

_AGENTS = "forkingpaths.benchmarks.eeb.agents"
MAZE_LEVEL_IDS = (1, 2, 3)
MATCH2_DIFFICULTIES = ("easy", "medium", "hard")
DEFAULT_MAZE_STEP_CAP = 100


class EEBBenchmark(Benchmark):
    """EvoEmpirBench (evoempirbench.txt): locally observable maze and match-2 elimination.

    Splits: `test` = 30 maze levels per difficulty (L1-L3) + 30 match-2 levels per difficulty
    (easy/medium/hard), 180 episodes (§3, Table 2); `maze` and `match2` = one game's 90;
    `maze-train` = the 30 training mazes Agent-ExpVer learns on. Options: `full_vision`
    (Table 7 ablation, maze), `props` (False = the NoProps ablation, match-2), `max_steps`
    (maze step cap, default 100), `maze_size` (default 9, Table 2; other sizes regenerate the
    same levels and seeds at that size, e.g. 7 as in the paper's level-1 trace). Metrics: Table
    3, per game and level and over all levels.
    """

    id = "eeb-v1"
    name = "eeb"
    description = "EvoEmpirBench: locally observable maze and match-2; Table 3 metrics"
    splits = ("test", "maze", "match2", "maze-train")
    default_split = "test"
    agents = MappingProxyType(
        {
            "base": AgentSpec(
                f"{_AGENTS}.base:make_base",
                needs_model=True,
                description="the paper's base LLM agent (App. B.1); truths=FILE adds learned "
                "truths (Agent-ExpVer policy, Eq. 5)",
            ),
            "reference": AgentSpec(
                f"{_AGENTS}.reference:make_reference",
                needs_model=False,
                description="reference: maze BFS explorer / match-2 greedy on targets",
            ),
            "random": AgentSpec(
                f"{_AGENTS}.reference:make_random",
                needs_model=False,
                description="reference: uniform random actions",
            ),
            "human": AgentSpec(
                f"{_AGENTS}.human:make_human",
                needs_model=False,
                description="a person plays in the terminal; recorded like any agent",
                interactive=True,
            ),
        }
    )
    estimate_policy = "eeb-reference"
    quick = (
        QuickConfig(split="test", agent="reference"),
        QuickConfig(split="test", agent="base", model="scripted/eeb-reference"),
    )
    headline_metrics = ("maze_success_rate", "maze_score", "match2_success_rate", "match2_score")
    cli_entry_point = "forkingpaths.benchmarks.eeb.cli:app"

    def __init__(self, **options: Any) -> None:
        allowed = {"full_vision", "props", "max_steps", "maze_size"}
        unknown = set(options) - allowed
        if unknown:
            raise ConfigError(
                f"unknown eeb option(s) {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}"
            )
        for flag in ("full_vision", "props"):
            if flag in options and not isinstance(options[flag], bool):
                raise ConfigError(f"{flag}: expected true or false, got {options[flag]!r}")
        cap = options.get("max_steps", DEFAULT_MAZE_STEP_CAP)
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ConfigError(f"max_steps: expected a positive integer, got {cap!r}")
        size = options.get("maze_size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 5):
            raise ConfigError(f"maze_size: expected an integer >= 5 (default 9), got {size!r}")
        super().__init__(**options)
        self._levels: dict[str, Any] = {}

    # ---- instances ----

    def instances(self, split: str) -> list[Instance]:
        if split == "test":
            return self._maze("test", split) + self._match2(split)
        if split == "maze":
            return self._maze("test", split)
        if split == "maze-train":
            return self._maze("train", split)
        if split == "match2":
            return self._match2(split)
        return self.select_instances(split, None)  # raises NameNotFound listing the splits

    def _maze(self, data_split: str, split: str) -> list[Instance]:
        from forkingpaths.benchmarks.eeb.maze_levels import load_maze_split

        size = self.options.get("maze_size")
        out = []
        for rel, level in load_maze_split(data_split):  # type: ignore[arg-type]
            if size is not None and size != level.size:
                # Another grid size: the same level numbers and seeds, generated at that size.
                from forkingpaths.benchmarks.eeb.maze_levels import generate_maze_level

                level = generate_maze_level(level.level, level.meta["seed"], size)
            instance_id = _maze_id(rel)
            self._levels.setdefault(instance_id, level)
            params = {"game": "maze", "level": level.level, "file": rel}
            out.append(Instance(id=instance_id, split=split, params=params))
        return out

    def _match2(self, split: str) -> list[Instance]:
        from forkingpaths.benchmarks.eeb.match2_levels import load_match2_split

        out = []
        for key, level in load_match2_split("test").items():
            instance_id = f"match2-{key.replace('/', '-')}"
            self._levels.setdefault(instance_id, level)
            params = {"game": "match2", "difficulty": level.difficulty, "file": key}
            out.append(Instance(id=instance_id, split=split, params=params))
        return out

    def level(self, instance: Instance) -> Any:
        """The instance's MazeLevel or Match2Level (loaded once per benchmark object)."""
        if instance.id not in self._levels:
            self.instance(instance.id)
        return self._levels[instance.id]

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        from forkingpaths.benchmarks.eeb.games import game_env

        return game_env(
            instance.params["game"],
            self.level(instance),
            max_steps=self.options.get("max_steps", DEFAULT_MAZE_STEP_CAP),
            full_vision=self.options.get("full_vision", False),
            props=self.options.get("props", True),
        )

    def max_steps(self, instance: Instance) -> int:
        # Both envs end their episodes themselves; this is only a safety net above them.
        if instance.params["game"] == "maze":
            return self.options.get("max_steps", DEFAULT_MAZE_STEP_CAP) + 1
        return self.level(instance).max_steps + 1

    # ---- scoring ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        from forkingpaths.benchmarks.eeb.games import RECORD_METRICS

        params = self.instance(record.instance_id).params
        game = params["game"]
        label = (
            {"level": params["level"]} if game == "maze" else {"difficulty": params["difficulty"]}
        )
        metrics = RECORD_METRICS[game](record)
        if game == "maze":
            metrics["invalid_actions"] = sum(not step.valid for step in record.steps)
        return {"game": game, **label, **metrics}

    def aggregate(self, records: list[EpisodeRecord]) -> dict[str, Any]:
        """Table 3's metrics per game and level (`by_group`, keyed by the tables' labels) and
        headline success rates and scores. Rates are fractions in [0, 1] for both games, as in
        every forkingpaths metric; the paper's tables print them as percentages."""
        maze: dict[str, list[dict[str, Any]]] = defaultdict(list)
        match2: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            m = record.metrics
            if m["game"] == "maze":
                maze[f"L{m['level']}"].append(m)
            else:
                match2[m["difficulty"]].append(m)
        out: dict[str, Any] = {}
        by_group: dict[str, Any] = {}
        if maze:
            everything = [m for group in maze.values() for m in group]
            overall = _maze_table(everything)
            out["maze_success_rate"] = overall["Suc.Rate"]
            out["maze_score"] = overall["A.Score"]
            by_group["maze-all"] = overall
            for name in sorted(maze):
                by_group[f"maze-{name}"] = _maze_table(maze[name])
        if match2:
            everything = [m for group in match2.values() for m in group]
            overall = _match2_table(everything)
            out["match2_success_rate"] = overall["Suc.Rate"]
            out["match2_score"] = overall["A.Score"]
            by_group["match2-all"] = overall
            for name in MATCH2_DIFFICULTIES:
                if name in match2:
                    by_group[f"match2-{name}"] = _match2_table(match2[name])
        out["by_group"] = by_group
        return out


# The maze aggregate prints Table 4's percentages; these become fractions like every other rate.
_MAZE_PERCENT_KEYS = ("Suc.Rate", "A.Explor", "A.Gold")


def _maze_table(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    from forkingpaths.benchmarks.eeb.maze import aggregate_maze

    table = aggregate_maze(episodes)
    for key in _MAZE_PERCENT_KEYS:
        table[key] = table[key] / 100
    return {"episodes": len(episodes), **_rounded(table)}


def _match2_table(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    from forkingpaths.benchmarks.eeb.match2 import MATCH2_METRIC_LABELS, aggregate_match2

    table = aggregate_match2(episodes)
    labelled = {MATCH2_METRIC_LABELS.get(k, k): v for k, v in table.items()}
    return {"episodes": len(episodes), **_rounded(labelled)}


def _maze_id(rel: str) -> str:
    """ "test/level2/007" -> "maze-l2-007"; "train/012" -> "maze-train-012"."""
    parts = rel.split("/")
    if parts[0] == "train":
        return f"maze-train-{parts[-1]}"
    return f"maze-l{parts[1].removeprefix('level')}-{parts[-1]}"


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in values.items()}
