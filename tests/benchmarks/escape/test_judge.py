"""Metric 2 judge: score parsing, retries then missing, call records, items from step records."""

from __future__ import annotations

import json

import pytest

from forkingpaths.benchmarks.escape import judge_prompts
from forkingpaths.benchmarks.escape.judge import (
    CRITERIA,
    JudgeItem,
    judge_item_from_step,
    judge_step,
    read_scores,
    render_judge_messages,
)
from forkingpaths.benchmarks.escape.judge_scripted import DivergenceJudgePolicy, heuristic_scores
from forkingpaths.benchmarks.escape.observation import render_observation
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import StepRecord
from forkingpaths.models.factory import RunParamsModel
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

VALID = {"originality": 4, "elaboration": 2, "groundedness": 5}


def scripted(policy: object, name: str = "scripted/test") -> ScriptedModel:
    return ScriptedModel(name, policy, ModelRuntime(cache=False))  # type: ignore[arg-type]


def item(**changes: object) -> JudgeItem:
    fields: dict[str, object] = {
        "objective": "Open the wall safe and leave the house.",
        "scene_context": "You are in the scene 'study'. A cramped study.",
        "bag": ("pipe head", "adhesive tape"),
        "history": ({"step": 1, "action": "click(wall safe)", "response": "A steel safe."},),
        "thought": "The tape could lift the print from the glass, so the scanner would accept it.",
        "action": "craft(adhesive tape, wine glass)",
        "response": "Nothing happens.",
    }
    fields.update(changes)
    return JudgeItem(**fields)  # type: ignore[arg-type]


class CorrectedPolicy:
    """Answers prose to a fresh judge request and valid JSON once corrected."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        if messages[-1].content.startswith("Your answer could not be read"):
            return json.dumps(VALID)
        return "The step looks rather creative to me."


class RecordingPolicy:
    """Valid scores; remembers the parameters and messages of every request (test-only)."""

    def __init__(self) -> None:
        self.requests: list[tuple[list[Message], ModelParams]] = []

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        self.requests.append((list(messages), params))
        return json.dumps(VALID)


# ---- parsing ----


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(VALID),
        'Here you go: {"originality": 4, "elaboration": 2, "groundedness": 5, "rationale": "x"}',
        '```json\n{"Originality": 4, "Elaboration": 2, "Groundedness": 5}\n```',
        "Originality: 4\nElaboration: 2\nGroundedness: 5",
        "**Originality**: 4/5\n- Elaboration = 2\n3. Groundedness - 5",
        '{"scores": {"originality": 4, "elaboration": {"score": 2}, "groundedness": 5}}',
    ],
)
def test_read_scores_accepts_json_fenced_nested_and_lines(text: str) -> None:
    assert read_scores(text) == (VALID, "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"originality": 6, "elaboration": 2, "groundedness": 5}', "outside 1-5"),
        ('{"originality": 0, "elaboration": 2, "groundedness": 5}', "outside 1-5"),
        ('{"originality": 3.5, "elaboration": 2, "groundedness": 5}', "whole number"),
        ('{"originality": "4", "elaboration": 2, "groundedness": 5}', "whole number"),
        ('{"originality": true, "elaboration": 2, "groundedness": 5}', "whole number"),
        ('{"originality": 4, "elaboration": 2}', "missing groundedness"),
        ("Originality: 4\nElaboration: 2", "missing groundedness"),
        ("Originality: 4.5\nElaboration: 2\nGroundedness: 5", "whole number"),
        ("Originality: 4\nOriginality: 2\nElaboration: 2\nGroundedness: 5", "conflicting"),
        ("I would rate this step as quite original and well grounded.", "no JSON object"),
        ("", "no JSON object"),
    ],
)
def test_read_scores_refuses_anything_else(text: str, reason: str) -> None:
    scores, why = read_scores(text)
    assert scores is None and reason in why


def test_read_scores_never_reads_garbage() -> None:
    policy = GarbagePolicy()
    for n in range(50):
        reply = policy.respond([Message(role="user", content=str(n))], ModelParams())
        assert read_scores(reply)[0] is None


# ---- asking ----


async def test_judge_step_scores_at_temperature_zero_even_under_run_defaults() -> None:
    policy = RecordingPolicy()
    # The run's sampling defaults (here 0.7) must not reach the judge.
    model = RunParamsModel(scripted(policy), ModelParams(temperature=0.7))
    verdict = await judge_step(model, item())
    assert verdict.scores == VALID and verdict.missing_reason is None
    assert verdict.attempts == 1 and len(verdict.calls) == 1
    assert verdict.calls[0].purpose == "judge"
    assert verdict.calls[0].response == json.dumps(VALID)
    assert verdict.calls[0].model == "scripted/test"
    assert verdict.calls[0].prompt_tokens > 0
    messages, params = policy.requests[0]
    assert params.temperature == 0.0
    assert [m.role for m in messages] == ["system", "user"]


async def test_judge_step_retries_with_a_corrective_turn() -> None:
    verdict = await judge_step(scripted(CorrectedPolicy()), item())
    assert verdict.scores == VALID
    assert verdict.attempts == 2
    assert [c.purpose for c in verdict.calls] == ["judge", "judge"]
    assert verdict.calls[0].response.startswith("The step looks")


async def test_garbage_judge_is_recorded_missing_after_retries() -> None:
    model = scripted(GarbagePolicy(), "scripted/garbage")
    verdict = await judge_step(model, item())
    assert verdict.scores is None and not verdict.scored
    assert verdict.attempts == 3 and len(verdict.calls) == 3
    assert all(c.purpose == "judge" and c.model == "scripted/garbage" for c in verdict.calls)
    assert verdict.missing_reason is not None and "after 3 attempts" in verdict.missing_reason
    assert verdict.as_info() == {"missing": verdict.missing_reason}


async def test_retries_zero_asks_once_and_bad_retries_are_refused() -> None:
    verdict = await judge_step(scripted(GarbagePolicy()), item(), retries=0)
    assert verdict.attempts == 1 and verdict.scores is None
    with pytest.raises(ConfigError, match="retries"):
        await judge_step(scripted(GarbagePolicy()), item(), retries=-1)


def test_judge_request_shows_the_whole_context() -> None:
    history = tuple(
        {"step": n, "action": f"click(item{n})", "response": f"resp {n}"} for n in range(1, 13)
    )
    system, user = render_judge_messages(item(history=history))
    assert system.content == judge_prompts.JUDGE_SYSTEM
    for criterion in CRITERIA:
        assert criterion.capitalize() in system.content
    text = user.content
    assert text.startswith(judge_prompts.JUDGE_HEADING)
    for part in ("Open the wall safe", "A cramped study", "- pipe head", "craft(adhesive tape"):
        assert part in text
    assert "[Step 12] click(item12) -> resp 12" in text
    assert "[Step 2] click(item2)" not in text  # only the last 10 steps
    empty = render_judge_messages(item(thought="", bag=(), history=()))[1].content
    assert judge_prompts.NO_THOUGHT in empty and judge_prompts.NOTHING in empty


# ---- the scripted stand-in ----


async def test_scripted_judge_answers_the_json_format() -> None:
    verdict = await judge_step(scripted(DivergenceJudgePolicy()), item())
    assert verdict.scores == {"originality": 4, "elaboration": 4, "groundedness": 2}
    assert verdict.attempts == 1


async def test_scripted_judge_prefers_mechanistic_unconventional_steps() -> None:
    judge = scripted(DivergenceJudgePolicy())
    rich = await judge_step(
        judge,
        item(
            thought="The key failed before, so instead I will use the pipe head as a lever "
            "because its weight could pry the safe door open, which would let me reach the key.",
            action="apply(pipe head, wall safe)",
        ),
    )
    bare = await judge_step(judge, item(thought="", action="click(wall safe)"))
    assert rich.scores == {"originality": 4, "elaboration": 5, "groundedness": 4}
    assert bare.scores == {"originality": 1, "elaboration": 1, "groundedness": 1}


def test_heuristic_originality_rewards_unrelated_tool_target_pairs() -> None:
    related = heuristic_scores("", "apply(metal bar, metal gate)")
    unrelated = heuristic_scores("", "apply(grip cloth, metal gate)")
    assert unrelated["originality"] == related["originality"] + 1
    assert heuristic_scores("", "input(2518, wall safe)")["originality"] == 3


async def test_scripted_judge_refuses_other_requests() -> None:
    model = scripted(DivergenceJudgePolicy())
    reply = await model.complete([Message(role="user", content="hello")])
    assert read_scores(reply.text)[0] is None


# ---- items from records ----


def test_judge_item_from_step_info() -> None:
    step = StepRecord(
        index=4,
        observation="(prompt)",
        thought="Use the tape.",
        action="apply(adhesive tape, wine glass)",
        feedback="(next prompt)",
        info={
            "attempt": 0,
            "t": 5,
            "scene_description": "You are in the scene 'kitchen'.",
            "bag_before": ["adhesive tape", "pipe head"],
            "bag": ["pipe head"],
            "history": [{"step": 4, "action": "click(wine glass)", "response": "A glass."}],
            "last": {"response": "The tape lifts a print."},
        },
    )
    got = judge_item_from_step(step, "Escape.")
    assert got == JudgeItem(
        objective="Escape.",
        scene_context="You are in the scene 'kitchen'.",
        bag=("adhesive tape", "pipe head"),
        history=({"step": 4, "action": "click(wine glass)", "response": "A glass."},),
        thought="Use the tape.",
        action="apply(adhesive tape, wine glass)",
        response="The tape lifts a print.",
    )


def _data(step: int, history: list[dict[str, object]]) -> dict[str, object]:
    return {
        "objective": "Open the wall safe.",
        "step": step,
        "scene": "study",
        "scene_description": "You are in the scene 'study'. A cramped study.\n"
        "- On the far wall, there is wall safe: A steel safe.",
        "possible_actions": "<interactable item> wall safe",
        "tools_in_bag": "<applicable tool> pipe head: A heavy fitting.\n"
        "<applicable tool> bent wire: A thin wire.",
        "valid_scene_names": ["hallway"],
        "history": history,
    }


def test_judge_item_from_step_falls_back_to_the_rendered_observations() -> None:
    before = [{"step": 1, "action": "click(wall safe)", "response": "A steel safe.\nIt is shut."}]
    after = [*before, {"step": 2, "action": "apply(bent wire, wall safe)", "response": "Clink."}]
    step = StepRecord(
        index=1,
        observation=render_observation(_data(2, before)),
        thought="Pick the lock.",
        action="apply(bent wire, wall safe)",
        feedback=render_observation(_data(3, after)),
        info={"attempt": 0, "t": 2},
    )
    got = judge_item_from_step(step, "")
    assert got.objective == "Open the wall safe."
    assert got.scene_context.startswith("You are in the scene 'study'.")
    assert "there is wall safe" in got.scene_context
    assert got.bag == ("pipe head", "bent wire")
    assert got.history == (
        {"step": 1, "action": "click(wall safe)", "response": "A steel safe. It is shut."},
    )
    assert got.response == "Clink."
