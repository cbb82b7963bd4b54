"""The one episode loop: observe, act, step, record (and judge), until the env ends the episode."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from forkingpaths.core.agent import Agent
from forkingpaths.core.env import Env, Observation
from forkingpaths.core.records import EpisodeRecord, StepRecord

StepHook = Callable[[StepRecord], Awaitable[None]]
"""Called with each step's record once it is appended, before the next decision: where a
protocol judges a step from what only the record holds (the agent's thought), adding its calls
and verdict to the record (MUTATE's Divergence Momentum judge)."""


async def play_episode(
    env: Env,
    agent: Agent,
    record: EpisodeRecord,
    *,
    max_steps: int,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    on_step: StepHook | None = None,
) -> Observation:
    """Play one episode of `env` into `record` and return the last observation.

    This is the only episode loop of the package: protocols with several attempts, dialogues
    and generate-and-execute tasks are envs. Exceptions from the agent or the env's models
    (outages) propagate with the steps taken so far kept in the record. Each step's record
    holds the agent's calls followed by the env's. `max_steps` is a safety net; envs end their
    episodes by their own rules or a TurnLimit wrapper.

    Reserved observation data: the reset observation's `data["initial_info"]` (when present)
    is what the record keeps as `initial_info` (else all of its data); the last observation's
    `data["outcome"]` is merged into `record.outcome`.
    """
    if max_steps <= 0:
        raise ValueError(f"max_steps must be positive, got {max_steps!r}")
    observation = env.reset(seed=record.seed if seed is None else seed, options=options)
    if not record.steps and not record.initial_observation:
        record.initial_observation = observation.text
        # An env whose agents read more at reset than its metrics need names what the record
        # keeps under "initial_info" (as the last observation names the outcome).
        record.initial_info = dict(observation.data.get("initial_info", observation.data))
    first = len(record.steps)
    for index in range(first, first + max_steps):
        decision = await agent.act(observation)
        result = await env.astep(decision.action)
        step = StepRecord(
            index=index,
            observation=observation.text,
            thought=decision.thought,
            action=decision.action,
            feedback=result.observation.text if result.feedback is None else result.feedback,
            reward=result.reward,
            valid=bool(result.info.get("valid", True)),
            terminated=result.terminated,
            truncated=result.truncated,
            info={k: v for k, v in result.info.items() if k != "valid"},
            calls=[*decision.calls, *result.calls],
        )
        record.steps.append(step)
        if on_step is not None:
            await on_step(step)
        observation = result.observation
        if result.done:
            break
    record.outcome = {**record.outcome, **observation.data.get("outcome", {})}
    return observation
