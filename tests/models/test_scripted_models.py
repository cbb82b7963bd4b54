"""Tests of scripted models: echo and garbage policies, accounting, every registered policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkingpaths.core import registry
from forkingpaths.core.chat import Message, ModelParams, ScriptedPolicy
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import make_model
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import EchoPolicy, GarbagePolicy, estimate_usage
from forkingpaths.models.usage import UsageMeter


async def test_echo_round_trip_through_make_model(tmp_path: Path) -> None:
    meter = UsageMeter()
    runtime = ModelRuntime(cache=True, cache_path=tmp_path / "c.sqlite", meter=meter)
    model = make_model("scripted/echo", ModelOptions(), runtime)
    messages = [
        Message(role="system", content="You are terse."),
        Message(role="user", content="first"),
        Message(role="assistant", content="ok"),
        Message(role="user", content="say this back"),
    ]
    completion = await model.complete(messages)
    assert completion.text == "say this back"
    assert completion.model == "scripted/echo"
    assert completion.usage == estimate_usage(messages, "say this back")
    assert (completion.cost_usd, completion.cached, completion.attempts) == (0.0, False, 1)
    await model.complete(messages)
    assert (meter.calls, meter.cached_calls) == (2, 0)
    assert meter.prompt_tokens == 2 * completion.usage.prompt_tokens
    # Scripted answers never go through the response cache.
    assert not (tmp_path / "c.sqlite").exists()


def test_token_estimate_is_a_quarter_of_the_characters_plus_one() -> None:
    usage = estimate_usage([Message(role="user", content="x" * 40)], "y" * 7)
    assert (usage.prompt_tokens, usage.completion_tokens) == (11, 2)


def test_echo_without_user_message_is_empty() -> None:
    assert EchoPolicy().respond([Message(role="system", content="s")], ModelParams()) == ""


async def test_garbage_round_trip_is_deterministic(tmp_path: Path) -> None:
    runtime = ModelRuntime(cache=False)
    model = make_model("scripted/garbage", ModelOptions(), runtime)
    messages = [Message(role="user", content="Reply with JSON.")]
    first, second = await model.complete(messages), await model.complete(messages)
    assert first.text == second.text and first.text


def test_garbage_is_varied_and_never_json() -> None:
    policy = GarbagePolicy()
    answers = [
        policy.respond([Message(role="user", content=f"prompt {i}")], ModelParams())
        for i in range(300)
    ]
    assert len(set(answers)) > 290
    assert len({len(a.split()) for a in answers}) > 5
    for text in answers:
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)


@pytest.mark.parametrize("name", sorted(registry.scripted_policy_table()))
async def test_every_registered_policy_answers(name: str) -> None:
    model = make_model(f"scripted/{name}", ModelOptions(), ModelRuntime(cache=False))
    assert isinstance(model.policy, ScriptedPolicy)  # type: ignore[attr-defined]
    completion = await model.complete([Message(role="user", content="What do you do next?")])
    assert isinstance(completion.text, str)
