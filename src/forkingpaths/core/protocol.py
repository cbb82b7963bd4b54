"""The single-episode protocol: observe, act, step, record, until the env ends the episode."""

from __future__ import annotations

from forkingpaths.core.agent import Agent
from forkingpaths.core.env import Env
from forkingpaths.core.records import EpisodeRecord, StepRecord


async def play_episode(env: Env, agent: Agent, record: EpisodeRecord, *, max_steps: int) -> None:
    """Run one episode into `record`. Exceptions from the agent (model outages) propagate with
    the steps taken so far kept in the record."""
    observation = env.reset(seed=record.seed)
    record.initial_observation = observation.text
    record.initial_info = dict(observation.data)
    for index in range(max_steps):
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
