"""The eeb-v1 benchmark: maze and match-2 test and training instances, agents, Table 3 metrics."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from forkingpaths.benchmarks.eeb.games import (
    RECORD_METRICS,
    game_env,
    match2_instance_id,
    maze_instance_id,
)
from forkingpaths.benchmarks.eeb.level_files import LevelSet, load_level_path
from forkingpaths.benchmarks.eeb.match2 import MATCH2_METRIC_LABELS, aggregate_match2
from forkingpaths.benchmarks.eeb.match2_levels import MATCH2_DIFFICULTIES, load_match2_split
from forkingpaths.benchmarks.eeb.maze import DEFAULT_MAX_STEPS, aggregate_maze
from forkingpaths.benchmarks.eeb.maze_levels import (
    generate_maze_level,
    generate_release_geometry_level,
    load_maze_split,
)
from forkingpaths.benchmarks.eeb.pinning import check_pinned
from forkingpaths.benchmarks.eeb.reproduce import reproductions
from forkingpaths.benchmarks.eeb.scoring import SCORINGS, score_variants
from forkingpaths.benchmarks.eeb.view import eeb_world_view
from forkingpaths.core.benchmark import (
    AgentSpec,
    Benchmark,
    Instance,
    MetricSpec,
    QuickConfig,
    ScoredEpisode,
)
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.reproduce import Reproduction

_AGENTS = "forkingpaths.benchmarks.eeb.agents"
_PATH_SPLITS = MappingProxyType(
    {
        "test": "held-out level",
        "maze": "held-out maze",
        "match2": "held-out match-2 board",
        "maze-train": "training maze",
    }
)
"""What each split plays from a `levels` path (for the refusal of an empty one)."""


class EEBOptions(BaseModel):
    """Options of eeb-v1 (`--option`, `benchmark_options`); the defaults are the paper's (or
    ours where it states none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    full_vision: bool = Field(
        default=False,
        strict=True,
        description="maze: show the whole board, Table 7's Full-Vision ablation; true or false",
    )
    """Maze: the agent sees the whole board and every monster (Table 7's Full-Vision ablation);
    it changes only what is shown, not scoring."""
    props: bool = Field(
        default=True,
        strict=True,
        description="match-2: false is Table 7's NoProps ablation; true or false",
    )
    """Match-2: False refuses every prop action (Table 7's NoProps ablation)."""
    max_steps: int = Field(
        default=DEFAULT_MAX_STEPS,
        strict=True,
        ge=1,
        description="maze step cap, default 100 since the paper gives none; a positive integer",
    )
    """Maze: steps after which an episode is truncated (a game rule: the observation shows it
    and a truncated episode fails). Match-2 levels carry their own step budgets (Table 2)."""
    maze_size: int | None = Field(
        default=None,
        strict=True,
        ge=5,
        description="maze board size, default 9 as in Table 2; an integer >= 5",
    )
    """Maze: None plays the shipped 9x9 levels (Table 2); another size regenerates the same
    level numbers and seeds at that size (7 as in the paper's level-1 trace, App. C)."""
    levels: str | None = Field(
        default=None,
        strict=True,
        min_length=1,
        description="a level file or folder in the release's format (its data/levels, ours); "
        "replaces the shipped levels: mazes in a folder named *train* make maze-train, the "
        "other levels test, maze and match2",
    )
    """A file or folder of level files (`level_files.load_level_path`): the release's mazes
    (integer grid codes, `mode: "Level N"`), its match-2 boards, collections, our files. The
    splits then hold these levels, split as `eeb learn --levels` splits them: a level whose
    file lies in a folder whose name contains "train" (the release's `maze_train`) is a
    training level, every other one is held out. `test` plays the held-out mazes and match-2
    boards (the release's maze_eval and match_game: 180), `maze` and `match2` one game's
    held-out levels, `maze-train` the training mazes (maze_train: 30). A split the path holds
    no level for is refused in one line rather than filled with the shipped levels, so a run
    with `levels` plays only the path. A defective entry is a warning naming the file and
    position."""
    levels_sha256: str | None = Field(
        default=None,
        strict=True,
        pattern=r"^[0-9a-f]{64}$",
        description="pins the content of `levels` (sha256 as eeb's reproductions write it): "
        "64 lowercase hex digits",
    )
    """The content of `levels` the run was planned with (`pinning.content_digest`: the file,
    or every *.json under the folder). The path alone is in the run's spec, so a file edited
    in place would resume the old run on new levels; with the digest a changed path is
    refused in one line, and a new digest makes a new run. `reproduce eeb:*` sets it."""
    geometry: Literal["paper", "release"] = Field(
        default="paper",
        description="maze level set: paper (9x9, 15/20/25 percent walls) or release (7x7, 9x9, "
        "11x11 for L1-L3, about 14 percent walls)",
    )
    """Maze: `paper` plays the shipped levels (Table 2: 9x9; our wall densities 15/20/25%);
    `release` generates the same level numbers and seeds with the release's sizes (7, 9, 11)
    and its measured wall density (14/13/13%, `RELEASE_WALL_DENSITY`)."""
    rules: Literal["paper", "release"] = Field(
        default="paper",
        description="maze rules: paper (App. B.1, our choices where it is silent) or release "
        "(the authors' game code: a wall hit sends you to the start, 2-3 cell moves check only "
        "the landing cell, A.Explor over non-wall cells, items only on level 3, points for "
        "items and broken walls)",
    )
    """Maze: which rules the game plays (`MazeEnv`, its docstring cites the release's lines).
    `release` switches the five rules where the paper's text is silent or says otherwise to
    the release's (src/game/environment.py): a wall hit also sends the agent back to the
    start; a 2-3 cell move looks only at its landing cell (it jumps walls and skips the
    cells between); A.Explor divides by the non-wall cells; items and the key work only on
    level-3 boards; items (+100..+300) and broken walls (+500) pay points. Combined with
    `levels` (the release's data/levels) it is the release's game on the release's boards;
    with `geometry=release` the release's game on our boards at the release's sizes. It
    composes with `scoring`: `scoring=paper` records the game's score as played (B.1, plus
    the release's item and wall points under this option), `table4` / `release` are formulas
    on the episode's counts and ignore those points."""
    scoring: Literal["paper", "table4", "release"] = Field(
        default="paper",
        description="maze A.Score: paper (the game's score, App. B.1), table4 (inferred from "
        "Table 4: no life penalty, +500 per kill) or release (the release's reported score: "
        "table4 plus 500 per broken wall)",
    )
    """Maze: how an episode's score is recorded. `paper` is the score the game kept (App.
    B.1's rules, with `rules=release` also the release's item and wall points). `table4` is
    the rule INFERRED from Table 4's numbers (the paper never states it): B.1 without the
    -1000 per life lost, plus 500 per monster killed. `release` is the formula the release's
    evaluation script reports as the score (scripts/evaluate_agent.py:588-601, averaged by
    scripts/analyze_results.py:73): `table4` plus 500 per wall broken. Both are computed from
    the episode's counts (`scoring.py`). The game, its rewards and what the agent is told do
    not change; only the recorded score does."""

    @model_validator(mode="after")
    def _one_level_source(self) -> EEBOptions:
        if self.levels is not None and (self.geometry != "paper" or self.maze_size is not None):
            raise ValueError("levels replaces the maze levels; give it without geometry/maze_size")
        if self.levels_sha256 is not None and self.levels is None:
            raise ValueError("levels_sha256 pins the content of levels; give it with levels")
        if self.geometry == "release" and self.maze_size is not None:
            raise ValueError(
                "geometry=release sets the maze sizes (7, 9, 11); give it without maze_size"
            )
        return self


class EEBBenchmark(Benchmark):
    """EvoEmpirBench (evoempirbench.txt): locally observable maze and match-2 elimination.

    Splits: `test` = 30 maze levels per difficulty (L1-L3) + 30 match-2 levels per difficulty
    (easy/medium/hard), 180 episodes (§3, Table 2); `maze` and `match2` = one game's 90;
    `maze-train` = the 30 training mazes Agent-ExpVer learns on; `levels` (a folder of the
    release's files) replaces them all, its training folders (`maze_train`) feeding
    `maze-train` and the rest the others. Options: `EEBOptions` (`full_vision`, `props`,
    `max_steps`, `maze_size`, `levels`, `levels_sha256`, `geometry`, `rules`, `scoring`).
    Metrics: Table 3,
    per game and level and over all levels.
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
    metric_specs = MappingProxyType(
        {
            "maze_success_rate": MetricSpec("maze success rate (Suc.Rate)", "higher"),
            "maze_score": MetricSpec("maze average score (A.Score)", "higher"),
            "match2_success_rate": MetricSpec("match-2 success rate (Suc.Rate)", "higher"),
            "match2_score": MetricSpec("match-2 average score (A.Score)", "higher"),
        }
    )
    Options = EEBOptions
    cli_entry_point = "forkingpaths.benchmarks.eeb.cli:app"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config: EEBOptions
        self._levels: dict[str, Any] = {}
        self._level_set: LevelSet | None = None

    # ---- instances ----

    def instances(self, split: str) -> list[Instance]:
        if self.config.levels is not None and split in self.splits:
            return self._from_path(split)
        if split == "test":
            return self._maze("test", split) + self._match2(split)
        if split == "maze":
            return self._maze("test", split)
        if split == "maze-train":
            return self._maze("train", split)
        if split == "match2":
            return self._match2(split)
        return self.select_instances(split, None)  # raises NameNotFound listing the splits

    def level_set(self) -> LevelSet:
        """The levels of the `levels` option (read once per benchmark object)."""
        if self._level_set is None:
            if self.config.levels_sha256 is not None:
                check_pinned(
                    self.config.levels, "levels", self.config.levels_sha256, "levels_sha256"
                )
            self._level_set = load_level_path(str(self.config.levels))
        return self._level_set

    def select_instances(self, split: str, ids: list[str] | None) -> list[Instance]:
        self._check_path_split(split)
        return super().select_instances(split, ids)

    def sample_instances(self, split: str, n: int) -> list[Instance]:
        self._check_path_split(split)
        return super().sample_instances(split, n)

    def _check_path_split(self, split: str) -> None:
        """With `levels`, a split the path holds no level for is refused in one line (never
        the shipped levels in its place: the run says it plays the path)."""
        if self.config.levels is None or split not in self.splits or self._from_path(split):
            return
        held = Counter((e.training, e.game) for e in self.level_set().entries)
        holds = ", ".join(
            f"{n} {'training' if training else 'held-out'} "
            f"{'maze' if game == 'maze' else 'match-2 board'}{'s' if n > 1 else ''}"
            for (training, game), n in sorted(held.items())
        )
        raise ConfigError(
            f"levels: {self.config.levels!r} holds no {_PATH_SPLITS[split]} for split "
            f"{split!r} (it holds {holds}; training levels are those in a folder whose name "
            f"contains 'train', as the release's maze_train)"
        )

    def _from_path(self, split: str) -> list[Instance]:
        """The split's levels of the `levels` path, in file order: `test` the held-out mazes
        and match-2 boards, `maze` / `match2` one game's held-out levels, `maze-train` the
        training mazes (`LevelEntry.training`, as `eeb learn --levels` reads the path)."""
        out = []
        for entry in self.level_set().entries:
            if entry.training is not (split == "maze-train"):
                continue
            if split in ("maze", "maze-train") and entry.game != "maze":
                continue
            if split == "match2" and entry.game != "match2":
                continue
            self._levels.setdefault(entry.id, entry.level)
            level = entry.level
            params: dict[str, Any] = {"game": entry.game, "file": entry.source}
            if entry.game == "maze":
                params["level"] = level.level  # type: ignore[union-attr]
            else:
                params["difficulty"] = level.difficulty  # type: ignore[union-attr]
            out.append(Instance(id=entry.id, split=split, params=params))
        return out

    def _maze(self, data_split: str, split: str) -> list[Instance]:
        size = self.config.maze_size
        release = self.config.geometry == "release"
        out = []
        for rel, level in load_maze_split(data_split):  # type: ignore[arg-type]
            if release:
                level = generate_release_geometry_level(level.level, level.meta["seed"])
            elif size is not None and size != level.size:
                # Another grid size: the same level numbers and seeds, generated at that size.
                level = generate_maze_level(level.level, level.meta["seed"], size)
            instance_id = maze_instance_id(rel)
            self._levels.setdefault(instance_id, level)
            params = {"game": "maze", "level": level.level, "file": rel}
            out.append(Instance(id=instance_id, split=split, params=params))
        return out

    def _match2(self, split: str) -> list[Instance]:
        out = []
        for key, level in load_match2_split("test").items():
            instance_id = match2_instance_id(key)
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
        return game_env(
            instance.params["game"],
            self.level(instance),
            max_steps=self.config.max_steps,
            full_vision=self.config.full_vision,
            props=self.config.props,
            rules=self.config.rules,
        )

    def max_steps(self, instance: Instance) -> int:
        """The game's own step budget: the maze cap or the match-2 level's. Both envs truncate
        at it themselves (a game rule: the observation counts down to it and a truncated
        episode fails), so the runner's TurnLimit at the same number never fires."""
        if instance.params["game"] == "maze":
            return self.config.max_steps
        return self.level(instance).max_steps

    def reproductions(self) -> list[Reproduction]:
        """`forkingpaths reproduce eeb:table4` ... `eeb:table7` (reproduce.py)."""
        return reproductions()

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The maze map (observed and full, with fog) or the match-2 board per position, with
        the truths the agent played with (view.py)."""
        return eeb_world_view(self, record)

    # ---- scoring ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        params = self.instance(record.instance_id).params
        game = params["game"]
        label = (
            {"level": params["level"]} if game == "maze" else {"difficulty": params["difficulty"]}
        )
        metrics = RECORD_METRICS[game](record)
        if game == "maze":
            metrics["invalid_actions"] = sum(not step.valid for step in record.steps)
            metrics.update(score_variants(metrics))
            metrics["score"] = metrics[f"score_{SCORINGS[self.config.scoring]}"]
        return {"game": game, **label, **metrics}

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        """Table 3's metrics per game and level (`by_group`, keyed by the tables' labels) and
        headline success rates and scores. Rates are fractions in [0, 1] for both games, as in
        every forkingpaths metric; the paper's tables print them as percentages."""
        maze: dict[str, list[dict[str, Any]]] = defaultdict(list)
        match2: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for episode in episodes:
            m = episode.metrics
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
    table = aggregate_maze(episodes)
    for key in _MAZE_PERCENT_KEYS:
        table[key] = table[key] / 100
    return {"episodes": len(episodes), **_rounded(table)}


def _match2_table(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    table = aggregate_match2(episodes)
    labelled = {MATCH2_METRIC_LABELS.get(k, k): v for k, v in table.items()}
    return {"episodes": len(episodes), **_rounded(labelled)}


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in values.items()}
