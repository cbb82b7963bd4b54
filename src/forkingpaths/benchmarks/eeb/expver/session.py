"""An Agent-ExpVer learning run from a model id, shared by `eeb learn` and `eeb:table6`."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from forkingpaths.benchmarks.eeb.agents.base import make_base
from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository
from forkingpaths.benchmarks.eeb.expver.learner import (
    EPISODES_FILE,
    ROUNDS_FILE,
    TRUTHS_FILE,
    ExpVerLearner,
)
from forkingpaths.benchmarks.eeb.expver.levels import game_instance_params, learning_levels
from forkingpaths.benchmarks.eeb.expver.records import ExpVerConfig, LearningResult
from forkingpaths.benchmarks.eeb.games import RECORD_METRICS, game_env
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import RunParamsModel, check_model_access, make_model
from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)

DEFAULT_ROUNDS = 5
"""Learning rounds of `eeb learn` (§4 gives no number; ours)."""
DEFAULT_LEVELS_PER_ROUND = 3
"""Training levels per round of `eeb learn` (ours)."""
DEFAULT_EVAL_LEVELS = 9
"""Held-out levels Delta (Eq. 6) is measured on, three per difficulty (ours)."""
SMOKE_BUDGET = {"rounds": 1, "levels_per_round": 1, "eval_levels": 1}
"""The smallest learning run: what a `--limit` smoke test of Table 6 learns with."""


async def learn_truths(
    config: ExpVerConfig,
    model: str,
    out_dir: Path,
    *,
    model_options: ModelOptions | None = None,
    cache: bool = True,
    max_steps: int | None = None,
    initial_truths: Path | None = None,
    levels: str | Path | None = None,
) -> LearningResult:
    """Learn truths for `config.game` with `model` (agent and ExpVer modules alike) into
    `out_dir` (truths.json, expver_rounds.jsonl, expver_episodes.jsonl, learning_curve.png).

    `max_steps` caps every episode, the maze's own step cap included; `initial_truths` is a
    truths file to start from; `levels` a level file or folder to learn on instead of the
    shipped levels (`learning_levels`). The model is checked before anything is played."""
    options = model_options or ModelOptions()
    check_model_access(model, options)
    if max_steps is not None:
        config = config.model_copy(update={"max_steps": max_steps})
    game = config.game
    game_cap = {} if max_steps is None else {"max_steps": max_steps}
    train, held_out = learning_levels(game, levels)
    start = TruthRepository.load(initial_truths) if initial_truths else ()
    chat = RunParamsModel(make_model(model, options, ModelRuntime(cache=cache)), options.params)
    learner = ExpVerLearner(
        config,
        make_agent=lambda texts: make_base(model=chat, truths=texts),
        make_env=lambda level: game_env(game, level, **game_cap),
        episode_metrics=RECORD_METRICS[game],
        model=chat,
        out_dir=out_dir,
        train_levels=train,
        eval_levels=held_out,
        initial_truths=start,
        agent_model=model,
        instance_params=game_instance_params,
    )
    try:
        return await learner.learn()
    finally:
        await chat.aclose()


async def learned_truths_file(
    target: Path,
    work_dir: Path,
    config: ExpVerConfig,
    model: str,
    *,
    model_options: ModelOptions | None = None,
    cache: bool = True,
    levels: str | Path | None = None,
) -> Path:
    """`target`, a truths file learned by `learn_truths` in `work_dir`, made resumably: a
    `target` already there is reused as it is; one missing is learned, and only a finished
    learning writes it (truths.json is rewritten after every round, so a half-learned one is
    never taken). The files of an interrupted learning in `work_dir` are cleared and the
    learning restarts; the response cache replays the calls it had made at temperature 0.
    `levels`: learn on this level file or folder (`learning_levels`) instead of the shipped
    levels."""
    if target.exists():
        log.info("%s: reusing the learned truths already there", target)
        return target
    stale = [work_dir / name for name in (ROUNDS_FILE, EPISODES_FILE)]
    if any(path.exists() for path in stale):
        log.warning("%s: an interrupted learning; it restarts from round 0", work_dir)
        for path in stale:
            path.unlink(missing_ok=True)
    log.info(
        "learning %s truths with %s (truthweaver=%s) in %s",
        config.game,
        model,
        config.truthweaver,
        work_dir,
    )
    await learn_truths(
        config, model, work_dir, model_options=model_options, cache=cache, levels=levels
    )
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes((work_dir / TRUTHS_FILE).read_bytes())
    os.replace(partial, target)  # atomic: `target` exists only once it is whole
    return target
