"""Tests of the scripted griddag models: FrontierPolicy, NoisyFrontierPolicy, RandomWalkPolicy."""

from __future__ import annotations

import json

import pytest
from tests.benchmarks.griddag.worlds import SMALL_WORLD

from forkingpaths.benchmarks.griddag.agents import prompts
from forkingpaths.benchmarks.griddag.agents.knowledge import (
    KnownMap,
    choose_frontier_move,
    parse_observation,
)
from forkingpaths.benchmarks.griddag.agents.react import strip_action_json
from forkingpaths.benchmarks.griddag.agents.scripted import (
    FrontierPolicy,
    NoisyFrontierPolicy,
    RandomWalkPolicy,
)
from forkingpaths.benchmarks.griddag.env import GridDagEnv
from forkingpaths.benchmarks.griddag.world import parse_direction
from forkingpaths.core.chat import Message, ModelParams, ScriptedPolicy
from forkingpaths.models.scripted import load_policy

PARAMS = ModelParams()


def system(mode: str = "default") -> Message:
    return Message(role="system", content=prompts.render_system_prompt("base", mode))


def conversation(mode: str, observations: list[str], replies: list[str]) -> list[Message]:
    messages = [system(mode)]
    for i, text in enumerate(observations):
        messages.append(Message(role="user", content=text))
        if i < len(replies):
            messages.append(Message(role="assistant", content=replies[i]))
    return messages


FIRST_OBSERVATION = (
    "OBSERVATION: You are at [0, 0]. You found nothing here. Available directions: up, right. "
    "You spent 0 steps."
)


def test_policies_satisfy_the_protocol_and_answer_like_a_model() -> None:
    first_turn = conversation("default", [FIRST_OBSERVATION], [])
    for policy, answer in (
        (FrontierPolicy(), '{"action":"up"}'),  # the nearest unvisited cell, direction order
        (RandomWalkPolicy(), '{"action":"right"}'),
    ):
        assert isinstance(policy, ScriptedPolicy)  # what ScriptedModel accepts
        assert policy.respond(first_turn, PARAMS) == answer


@pytest.mark.parametrize("harness", [False, True])
def test_frontier_policy_equals_frontier_move_along_an_episode(harness: bool) -> None:
    """At every turn of an episode driven by the policy itself, its answer is exactly the JSON of
    choose_frontier_move over the same observations; it solves the world."""
    policy = FrontierPolicy()
    env = GridDagEnv(SMALL_WORLD)
    current = env.reset(seed=0)
    observations: list[str] = []
    replies: list[str] = []
    known = KnownMap()
    for _ in range(SMALL_WORLD.budget):
        known.update(parse_observation(current.text))
        # A trailing harness-like summary must not change the answer.
        text = f"{current.text}\n\nYou discovered X at [9, 9]." if harness else current.text
        observations.append(text)
        reply = policy.respond(conversation("default", observations, replies), PARAMS)
        assert json.loads(reply) == {"action": choose_frontier_move(known)}
        assert reply == json.dumps({"action": choose_frontier_move(known)}, separators=(",", ":"))
        replies.append(reply)
        result = env.step(reply)
        assert result.info["valid"]
        current = result.observation
        if result.done:
            break
    assert current.data["outcome"]["success"]


def test_frontier_policy_reasoning_mode_writes_prose_then_json() -> None:
    reply = FrontierPolicy().respond(conversation("reasoning", [FIRST_OBSERVATION], []), PARAMS)
    assert reply == (
        "No activatable state is closer than the unvisited cell [0, 1], 1 step(s) away, so I "
        'explore toward it.\n{"action":"up"}'
    )
    assert parse_direction(reply) == "up"
    assert strip_action_json(reply) == reply.split("\n")[0]


def test_frontier_policy_is_stateless() -> None:
    policy = FrontierPolicy()
    a = conversation(
        "default",
        [
            "OBSERVATION: You are at [0, 0]. You found nothing here. Available directions: right. "
            "You spent 0 steps."
        ],
        [],
    )
    b = conversation(
        "default",
        [
            "OBSERVATION: You are at [5, 5]. You found nothing here. Available directions: down. "
            "You spent 0 steps."
        ],
        [],
    )
    first = policy.respond(a, PARAMS)
    assert policy.respond(b, PARAMS) == '{"action":"down"}'
    assert policy.respond(a, PARAMS) == first == '{"action":"right"}'


def test_frontier_policy_skips_user_turns_that_are_not_observations() -> None:
    messages = [
        system(),
        Message(role="user", content="Let's begin."),
        Message(
            role="user",
            content="OBSERVATION: You are at [0, 0]. You found nothing here. Available "
            "directions: left. You spent 0 steps.",
        ),
    ]
    assert FrontierPolicy().respond(messages, PARAMS) == '{"action":"left"}'


def _random_conversations() -> list[list[Message]]:
    out = []
    for x in range(12):
        text = (
            f"OBSERVATION: You are at [{x}, 1]. You found nothing here. Available directions: "
            f"up, down, left, right. You spent {x} steps."
        )
        out.append(conversation("default", [text], []))
    return out


def test_random_walk_policy_is_deterministic_and_legal() -> None:
    policy = RandomWalkPolicy()
    answers = [policy.respond(m, PARAMS) for m in _random_conversations()]
    assert answers == [RandomWalkPolicy().respond(m, PARAMS) for m in _random_conversations()]
    # Seeded by the conversation: pinned, so a change of seeding shows here.
    assert [json.loads(a)["action"] for a in answers] == [
        "left", "up", "left", "left", "up", "right", "up", "up", "left", "right", "right", "left",
    ]  # fmt: skip
    narrow = conversation(
        "default",
        [
            "OBSERVATION: You are at [0, 0]. You found nothing here. Available directions: down. "
            "You spent 0 steps."
        ],
        [],
    )
    assert policy.respond(narrow, PARAMS) == '{"action":"down"}'


def test_random_walk_policy_reasoning_mode_ends_with_json() -> None:
    messages = _random_conversations()[0]
    messages[0] = system("reasoning")
    reply = RandomWalkPolicy().respond(messages, PARAMS)
    assert reply == f'{prompts.REASONING_RANDOM}\n{{"action":"left"}}'
    assert strip_action_json(reply) == prompts.REASONING_RANDOM


# ---- NoisyFrontierPolicy ----


def _open_cells(count: int, mode: str = "reasoning") -> list[list[Message]]:
    """`count` one-turn conversations at distinct cells with all four directions open."""
    out = []
    for i in range(count):
        x, y = divmod(i, 20)
        text = (
            f"OBSERVATION: You are at [{x}, {y}]. You found nothing here. Available directions: "
            "up, down, left, right. You spent 0 steps."
        )
        out.append(conversation(mode, [text], []))
    return out


def test_noisy_policy_is_registered_with_the_paper_stand_in_share() -> None:
    policy = load_policy("griddag-noisy")
    assert isinstance(policy, NoisyFrontierPolicy)
    assert policy.epsilon == NoisyFrontierPolicy.epsilon == 0.3
    with pytest.raises(ValueError, match=r"epsilon: 1\.5 is not a probability in \[0, 1\]"):
        NoisyFrontierPolicy(1.5)


def test_noisy_policy_is_stateless_and_reproducible() -> None:
    conversations = _open_cells(40, "default")
    policy = NoisyFrontierPolicy()
    first = [policy.respond(m, PARAMS) for m in conversations]
    # Another object, and the same object after other requests: the same replies.
    assert [NoisyFrontierPolicy().respond(m, PARAMS) for m in reversed(conversations)] == first[
        ::-1
    ]
    assert [policy.respond(m, PARAMS) for m in conversations] == first


def test_noisy_policy_random_share_is_near_epsilon_in_the_reasoning_format() -> None:
    """On 400 fixed observations the coin comes up random on a share near 0.3 (pinned), each
    random reply says so before its JSON; the others are exactly the frontier reply."""
    conversations = _open_cells(400)
    frontier, noisy = FrontierPolicy(), NoisyFrontierPolicy()
    random_replies = 0
    for messages in conversations:
        reply = noisy.respond(messages, PARAMS)
        if reply.startswith(prompts.REASONING_RANDOM):
            random_replies += 1
            reasoning, action = reply.split("\n")
            assert reasoning == prompts.REASONING_RANDOM == strip_action_json(reply)
            assert json.loads(action)["action"] in ("up", "down", "left", "right")
        else:
            assert reply == frontier.respond(messages, PARAMS)
    assert random_replies == 118  # 29.5%: the draw is pinned, so a change of seeding shows here
    assert NoisyFrontierPolicy(0.0).respond(conversations[0], PARAMS) == frontier.respond(
        conversations[0], PARAMS
    )
    assert all(
        NoisyFrontierPolicy(1.0).respond(m, PARAMS).startswith(prompts.REASONING_RANDOM)
        for m in conversations[:20]
    )


def test_noisy_policy_draws_from_the_whole_conversation_system_prompt_included() -> None:
    """The same observations under another prompt variant draw differently (as a real model
    would answer differently), and the default mode answers with bare JSON."""
    base = _open_cells(40, "default")
    other = Message(role="system", content=prompts.render_system_prompt("exploration"))
    exploration = [[other, *m[1:]] for m in base]
    policy = NoisyFrontierPolicy()
    a = [policy.respond(m, PARAMS) for m in base]
    b = [policy.respond(m, PARAMS) for m in exploration]
    assert all(json.loads(r)["action"] for r in a + b)  # bare JSON, no prose
    assert sum(x != y for x, y in zip(a, b, strict=True)) == 18
