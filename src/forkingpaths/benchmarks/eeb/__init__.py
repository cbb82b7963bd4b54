"""EvoEmpirBench (evoempirbench.txt): maze and match-2 games, Table 3 metrics, Agent-ExpVer.

The paper: Zhao et al., "EvoEmpirBench: Dynamic Spatial Reasoning with Agent-ExpVer". Where
it lives:

* §3.1 Game Rules, App. B.1 (rules, scoring, actions) -> `maze.py` (`MazeEnv`: local 3x3
  observability, monsters, items) and `match2.py` (`Match2Env`: gravity, seeded refill,
  props). Each env's class docstring is its spec, with the decisions where the paper is silent.
* §3.2 Difficulty Settings, Table 2 (maze levels 1-3; match-2 easy/medium/hard budgets and
  targets) -> `maze_levels.py` and `match2_levels.py` (generators and level files), with the
  shipped levels under `data/`.
* §3.3 Evaluation Metrics, Table 3 (the columns of Tables 4-5) -> `maze_episode_metrics`,
  `aggregate_maze` in `maze.py`; `match2_episode_metrics`, `aggregate_match2` in `match2.py`;
  from records in `games.py`; per game and level in `EEBBenchmark.aggregate` (`benchmark.py`).
* §3 and §5 the benchmark: the 180 test episodes, the Table 7 ablations (Full-Vision, NoProps)
  as options -> `benchmark.py` (`EEBBenchmark`, `EEBOptions`).
* App. B.1 agent prompts, §4.3 Eq. 5 (base prompt + truths), reference players, the human
  baseline of Table 5 -> `agents/` (see its docstring).
* §4 Agent-ExpVer (GeoLink, InsightForce, verification, TruthWeaver, Delta; App. A, B.2;
  Table 6's W/o.TW ablation; Figure 3b) -> `expver/` (see its docstring).
* Playing a level file from the command line (`forkingpaths eeb replay`) -> `replay.py`;
  `forkingpaths eeb replay|learn` -> `cli.py`.
"""
