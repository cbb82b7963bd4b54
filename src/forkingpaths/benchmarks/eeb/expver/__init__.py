"""Agent-ExpVer (evoempirbench.txt §4, App. A, B.2): online learning of truths from played games.

Where the paper lives:

* §4.1 GeoLink, Eqs. 1-2 (play with the current policy; the key steps of the trace that the
  game's highlight metrics point to) -> `geolink.py`; the episodes are `play_episode` runs
  driven by `learner.py`.
* §4.2 InsightForce, Eq. 3 (trajectory + metrics -> subjective experience; App. B.2 "Game
  Session Analysis" prompt) -> `insightforce.py`; verification, Eq. 4 (replay the level with the
  experience; promote it if passed with a higher score) -> `ExpVerLearner.verify` in
  `learner.py`.
* §4.2 TruthWeaver (merge, remove, insert; App. B.2 "Game Truth Knowledge Organization Task"
  prompt) -> `truthweaver.py`; both modules' answers are read leniently by `answers.py`.
* §4.3 policy = base prompt + truths, Eq. 5 -> the eeb base agent with `truths`
  (`agents/base.py`, `agents/truths.py`); Delta, Eq. 6, and reverting a round -> `learner.py`.
* Experiences, verdicts, evaluations and the lines of `expver_rounds.jsonl` -> `records.py`;
  training and held-out levels -> `levels.py`; Figure 3b (the learning curve) -> `plots.py`.
* The modules' prompt texts -> `prompts.py`; `scripted/eeb-expver`, an offline stand-in model
  for a whole learning run -> `scripted.py`.
* A learning run from a model id (levels, agent, model, learner) and the resumable truths file
  that `reproduce eeb:table6` learns -> `session.py`; its command, `forkingpaths eeb learn`,
  is in `eeb/cli.py`.
"""

from __future__ import annotations

from forkingpaths.benchmarks.eeb.expver.geolink import (
    KeyStep,
    highlight_candidates,
    select_key_steps,
)
from forkingpaths.benchmarks.eeb.expver.insightforce import (
    parse_experience,
    render_insightforce_prompt,
)
from forkingpaths.benchmarks.eeb.expver.learner import ExpVerLearner, derive_seed
from forkingpaths.benchmarks.eeb.expver.levels import (
    game_instance_params,
    game_levels,
    learning_levels,
)
from forkingpaths.benchmarks.eeb.expver.plots import plot_learning_curve
from forkingpaths.benchmarks.eeb.expver.records import (
    Evaluation,
    Experience,
    ExperienceLog,
    ExpVerConfig,
    LearningResult,
    RoundRecord,
    Verdict,
)
from forkingpaths.benchmarks.eeb.expver.session import (
    DEFAULT_EVAL_LEVELS,
    DEFAULT_LEVELS_PER_ROUND,
    DEFAULT_ROUNDS,
    SMOKE_BUDGET,
    learn_truths,
    learned_truths_file,
)
from forkingpaths.benchmarks.eeb.expver.truthweaver import (
    parse_organised_truths,
    render_truthweaver_prompt,
)

__all__ = [
    "DEFAULT_EVAL_LEVELS",
    "DEFAULT_LEVELS_PER_ROUND",
    "DEFAULT_ROUNDS",
    "SMOKE_BUDGET",
    "Evaluation",
    "ExpVerConfig",
    "ExpVerLearner",
    "Experience",
    "ExperienceLog",
    "KeyStep",
    "LearningResult",
    "RoundRecord",
    "Verdict",
    "derive_seed",
    "game_instance_params",
    "game_levels",
    "highlight_candidates",
    "learn_truths",
    "learned_truths_file",
    "learning_levels",
    "parse_experience",
    "parse_organised_truths",
    "plot_learning_curve",
    "render_insightforce_prompt",
    "render_truthweaver_prompt",
    "select_key_steps",
]
