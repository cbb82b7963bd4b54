"""The single-episode protocol: observe, act, step, record, until the env ends the episode."""

from __future__ import annotations

from forkingpaths.core.agent import Agent
from forkingpaths.core.env import Env, Observation
from forkingpaths.core.records import EpisodeRecord, StepRecord


async def play_episode(
    env: Env,
    agent: Agent,
    record: EpisodeRecord,
    *,
    max_steps: int,
    seed: int | None = None,
) -> Observation:
    """Run one episode into `record` and return the last observation. Exceptions from the agent
    (model outages) propagate with the steps taken so far kept in the record.

    Protocols with several plays per record (MUTATE's attempts) call it once per play: steps are
    numbered on from those already recorded and the first play's reset is the record's initial
    observation."""
    observation = env.reset(seed=record.seed if seed is None else seed)
    if not record.steps and not record.initial_observation:
        record.initial_observation = observation.text
        record.initial_info = dict(observation.data)
    first = len(record.steps)
    for index in range(first, first + max_steps):
        decision = await agent.act(observation)
        result = env.step(decision.action)
        record.steps.append(
            StepRecord(
                index=index,
                observation=observation.text,
                thought=decision.thought,
                action=decision.action,
                feedback=result.observation.text,
                reward=result.reward,
                valid=bool(result.info.get("valid", True)),
                terminated=result.terminated,
                truncated=result.truncated,
                info={k: v for k, v in result.info.items() if k != "valid"},
                calls=decision.calls,
            )
        )
        observation = result.observation
        if result.done:
            break
    record.outcome = {**record.outcome, **observation.data.get("outcome", {})}
    return observation
