"""The env contract's own pieces: async steps, the wrappers, options models, the one loop."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import check_options
from forkingpaths.core.env import (
    Env,
    FormatObservation,
    Observation,
    OrderEnforcing,
    Step,
    TurnLimit,
)
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.core.protocol import play_episode
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, StepRecord


class Counter(Env):
    """Counts to `goal`; an action other than "+" is invalid; the reset seed starts the count."""

    def __init__(self, goal: int = 3) -> None:
        self.goal, self.count = goal, 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        self.count = (options or {}).get("start", 0)
        return Observation(f"at {self.count}", {"count": self.count})

    def step(self, action: str) -> Step:
        valid = action == "+"
        self.count += valid
        done = self.count >= self.goal
        data = {"count": self.count, "outcome": {"reached": self.count}} if done else {}
        return Step(
            Observation(f"at {self.count}", data), float(valid), done, False, {"valid": valid}
        )


class JudgedCounter(Counter):
    """A protocol env: its step awaits a (stand-in) judge whose call it reports."""

    async def astep(self, action: str) -> Step:
        result = Counter.step(self, action)
        call = ModelCallRecord(model="scripted/judge", response="fine", purpose="judge")
        return Step(
            result.observation, result.reward, result.terminated, False, result.info, [call]
        )

    step = Env.step  # only the asynchronous step, like every protocol env


class Plus:
    """An agent that always answers "+", with one model call per decision."""

    def reset(self, instance: Any, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        return Decision("+", "count up", [ModelCallRecord(model="scripted/echo", response="+")])

    def state(self) -> dict[str, Any]:
        return {}


def _record() -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r", benchmark="t-v1", split="s", instance_id="i", seed=5, agent="plus"
    )


async def test_order_enforcing_refuses_a_step_before_reset_and_after_the_end() -> None:
    env = OrderEnforcing(Counter(goal=1))
    with pytest.raises(ResetNeeded, match="before reset"):
        await env.astep("+")
    env.reset(seed=0)
    assert (await env.astep("+")).terminated
    with pytest.raises(ResetNeeded):
        await env.astep("+")
    env.reset(seed=0)
    assert (await env.astep("x")).info == {"valid": False}


async def test_turn_limit_truncates_the_step_that_reaches_it() -> None:
    env = TurnLimit(Counter(goal=10), 2)
    env.reset(seed=0)
    first, second = await env.astep("+"), await env.astep("x")
    assert (first.truncated, second.truncated) == (False, True)
    assert second.info == {"valid": False, "turn_limit": 2}
    env.reset(seed=0)
    assert not (await env.astep("+")).truncated  # reset starts the count again


@pytest.mark.parametrize("turns", [0, -1, 1.5, True])
def test_turn_limit_refuses_a_bad_limit(turns: Any) -> None:
    with pytest.raises(ValueError, match="max_turns must be a positive integer"):
        TurnLimit(Counter(), turns)


async def test_format_observation_rewrites_only_the_text() -> None:
    env = FormatObservation(Counter(goal=2), lambda o: o.text.upper())
    assert env.reset(seed=0).text == "AT 0"
    step = await env.astep("+")
    assert step.observation.text == "AT 1" and step.reward == 1.0


def test_a_protocol_env_says_how_to_step_it() -> None:
    with pytest.raises(TypeError, match=r"await env\.astep"):
        JudgedCounter().step("+")


async def test_play_episode_records_agent_then_env_calls_and_runs_the_hook() -> None:
    judged: list[int] = []

    async def hook(step: StepRecord) -> None:
        judged.append(step.index)
        step.info["judged"] = True

    record = _record()
    last = await play_episode(
        OrderEnforcing(JudgedCounter(goal=3)),
        Plus(),
        record,
        max_steps=10,
        options={"start": 1},
        on_step=hook,
    )
    assert record.initial_observation == "at 1" and record.initial_info == {"count": 1}
    assert [s.index for s in record.steps] == [0, 1] and judged == [0, 1]
    assert [[c.purpose for c in s.calls] for s in record.steps] == [["act", "judge"]] * 2
    assert record.steps[-1].terminated and record.steps[-1].info == {"judged": True}
    assert record.outcome == {"reached": 3} and last.text == "at 3"


class Levels(Counter):
    """Each "+" clears a level: the step answers a verdict, the next observation is the next
    level (the CreativeBench shape)."""

    def step(self, action: str) -> Step:
        result = Counter.step(self, action)
        return Step(
            result.observation,
            result.reward,
            result.terminated,
            False,
            result.info,
            feedback=f"verdict {self.count}",
        )


async def test_a_step_may_answer_something_other_than_the_next_observation() -> None:
    record = _record()
    env = TurnLimit(FormatObservation(Levels(goal=5), lambda o: o.text), 2)
    await play_episode(env, Plus(), record, max_steps=10)
    assert [(s.observation, s.feedback) for s in record.steps] == [
        ("at 0", "verdict 1"),
        ("at 1", "verdict 2"),
    ]
    # The wrappers keep what the env answered.
    assert record.steps[-1].truncated and record.steps[-1].info["turn_limit"] == 2


async def test_play_episode_stops_at_max_steps_and_refuses_a_bad_one() -> None:
    record = _record()
    await play_episode(Counter(goal=100), Plus(), record, max_steps=4)
    assert len(record.steps) == 4 and record.outcome == {}
    with pytest.raises(ValueError, match="max_steps must be positive"):
        await play_episode(Counter(), Plus(), _record(), max_steps=0)


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    budget: int = Field(default=3, ge=1, description="steps per attempt, App. B")


def test_options_model_names_the_option_the_value_and_what_is_allowed() -> None:
    assert check_options(Options, {}, "demo") == Options(budget=3)
    with pytest.raises(ConfigError) as bad:
        check_options(Options, {"budget": 0}, "demo")
    assert str(bad.value) == (
        "demo option budget (steps per attempt, App. B): Input should be greater than or equal "
        "to 1, got 0"
    )
    with pytest.raises(ConfigError, match="demo has no option 'budgt'; its options: budget"):
        check_options(Options, {"budgt": 2}, "demo")
