"""AUT transfer: objects, env, Base and ReDNA agents, judge, metrics, Table 4 aggregate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.aut import (
    AUTBenchmark,
    AUTEnv,
    AUTObject,
    load_aut_objects,
    parse_uses,
    read_use_scores,
    uses_of_action,
)
from forkingpaths.benchmarks.escape.aut_scripted import AUTJudgePolicy, AUTScriptedPolicy
from forkingpaths.core import registry
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

BRICK = AUTObject("brick", "brick", "a rectangular block of fired clay used to build walls")


class Recorder:
    """Wraps a policy and keeps every request it answers (test-only)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.requests: list[tuple[list[Message], ModelParams]] = []

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        self.requests.append((list(messages), params))
        return self.policy.respond(messages, params)


def scripted(policy: Any, name: str) -> ScriptedModel:
    return ScriptedModel(name, policy, ModelRuntime(cache=False))


async def play(
    bench: AUTBenchmark,
    agent_name: str,
    agent_policy: Any,
    judge_policy: Any | None,
    instance_id: str = "brick",
) -> EpisodeRecord:
    instance = bench.instance(instance_id)
    agent = bench.make_agent(agent_name, scripted(agent_policy, "scripted/aut-scripted"), {})
    agent.reset(instance, 0)
    record = EpisodeRecord(
        run_id="r",
        benchmark=bench.id,
        split="objects",
        instance_id=instance_id,
        seed=0,
        agent=agent_name,
    )
    roles = {} if judge_policy is None else {"judge": scripted(judge_policy, "scripted/judge")}
    await bench.run_episode(instance, agent, record, roles)
    record.tally_calls()
    record.metrics = bench.episode_metrics(record)
    return record


# ---- objects and options ----


def test_objects_and_class_settings() -> None:
    objects = load_aut_objects()
    assert len(objects) == 20
    assert len({o.id for o in objects}) == 20
    bench = AUTBenchmark()
    ids = [i.id for i in bench.instances("objects")]
    assert ids[:2] == ["brick", "paperclip"]
    (quick,) = bench.quick
    assert quick.instances == tuple(ids[:2]) and quick.agent == "redna"
    assert dict(quick.roles) == {"judge": "scripted/aut-judge"}
    assert {"aut-scripted", "aut-judge"} <= set(registry.SCRIPTED_POLICIES)
    assert set(bench.model_roles) == {"judge"}
    assert bench.headline_metrics == ("originality", "elaboration", "fluency")
    for spec in bench.agents.values():
        assert spec.needs_model and spec.default_options == {"temperature": 0.7}


def test_options_are_validated() -> None:
    assert AUTBenchmark(runs=2).runs == 2
    assert AUTBenchmark(runs="4").runs == 4
    for bad in (0, -1, "many", True, 1.5):
        with pytest.raises(ConfigError, match="runs"):
            AUTBenchmark(runs=bad)
    with pytest.raises(ConfigError, match="unknown aut option"):
        AUTBenchmark(rounds=3)
    bench = AUTBenchmark()
    with pytest.raises(ConfigError, match="needs one"):
        bench.make_agent("redna", None, {})
    with pytest.raises(ConfigError, match="temperature"):
        bench.make_agent("base", scripted(AUTScriptedPolicy(), "m"), {"temperature": -1})
    with pytest.raises(ConfigError, match="no option"):
        bench.make_agent("base", scripted(AUTScriptedPolicy(), "m"), {"runs": 2})


# ---- reading uses ----


@pytest.mark.parametrize(
    ("text", "uses"),
    [
        ('["a doorstop", "a pendulum"]', ["a doorstop", "a pendulum"]),
        ('Sure!\n```json\n["a doorstop", "A   DOORSTOP", " "]\n```', ["a doorstop"]),
        (
            '[{"use": "a doorstop", "why": "heavy"}, {"idea": "a pendulum"}]',
            ["a doorstop", "a pendulum"],
        ),
        (
            "1. a doorstop\n2) a pendulum\n- a bob\n* a stamp",
            ["a doorstop", "a pendulum", "a bob", "a stamp"],
        ),
        ("no uses here", []),
    ],
)
def test_parse_uses(text: str, uses: list[str]) -> None:
    assert parse_uses(text) == uses


def test_uses_of_action() -> None:
    assert uses_of_action('["a", "b", "A"]') == ["a", "b"]
    for bad in ("", "???", "[]", '[""]', '{"action": 42}', "[1, 2]", "x" * 5000):
        assert uses_of_action(bad) is None


# ---- env ----


def test_env_memory_runs_and_invalid_actions() -> None:
    env = AUTEnv(BRICK, runs=3)
    first = env.reset(seed=0)
    assert first.text.startswith(prompts.TASK_HEADING) and "Object: brick (" in first.text
    assert first.data["run"] == 0 and first.data["memory"] == []
    step = env.step('["a doorstop", "a pendulum"]')
    assert step.info["valid"] is True and step.info["uses"] == ["a doorstop", "a pendulum"]
    assert not step.done
    assert step.observation.data["run"] == 1
    assert step.observation.data["memory"] == ["a doorstop", "a pendulum"]
    bad = env.step("I cannot think of anything")
    assert bad.info["valid"] is False and bad.info["uses"] == [] and "error" in bad.info
    last = env.step('["a stamp"]')
    assert last.terminated and last.observation.data["memory"] == [
        "a doorstop",
        "a pendulum",
        "a stamp",
    ]
    assert last.observation.data["outcome"] == {"runs": 3, "uses": 3}
    with pytest.raises(ResetNeeded):
        env.step('["more"]')
    assert env.reset().data["memory"] == []


# ---- episodes end to end ----


async def test_redna_episode_passes_memory_to_narrowing_and_is_judged() -> None:
    agent_policy, judge_policy = Recorder(AUTScriptedPolicy()), Recorder(AUTJudgePolicy())
    record = await play(AUTBenchmark(), "redna", agent_policy, judge_policy)
    assert len(record.steps) == 3
    narrows = [
        m[-1].content
        for m, _ in agent_policy.requests
        if m[-1].content.startswith(prompts.NARROW_HEADING)
    ]
    diverges = [
        m[-1].content
        for m, _ in agent_policy.requests
        if m[-1].content.startswith(prompts.DIVERGE_HEADING)
    ]
    assert len(narrows) == len(diverges) == 3
    uses = [json.loads(s.action) for s in record.steps]
    assert all(uses) and len({u for run in uses for u in run}) == sum(map(len, uses))
    # Run 1's Narrowing sees no memory; run 3's sees every use of runs 1 and 2.
    assert f"(do not repeat them or close variants of them):\n{prompts.NOTHING}" in narrows[0]
    for use in uses[0] + uses[1]:
        assert f"- {use}" in narrows[2]
    # Diverge is conditioned on the object only: never the memory, never the criterion.
    for text in diverges:
        assert not any(use in text for run in uses for use in run)
        assert "earlier runs" not in text
    assert all(p.temperature == 0.7 for _, p in agent_policy.requests)
    assert all(p.temperature == 0.0 for _, p in judge_policy.requests)
    for s in record.steps:
        assert [c.purpose for c in s.calls] == ["diverge", "narrow", "judge"]
        assert s.observation.startswith(prompts.TASK_HEADING)
        assert s.thought.startswith("Diverge proposed")
        assert len(s.info["judge"]["scores"]) == len(s.info["uses"])
    assert record.n_calls == 9
    m = record.metrics
    assert m["judged"] is True and m["judge_missing"] == 0 and m["runs"] == 3
    assert m["fluency"] == pytest.approx(sum(map(len, uses)) / 3)
    assert m["rated_uses"] == sum(map(len, uses))
    rated = [s for step in record.steps for s in step.info["judge"]["scores"]]
    assert m["originality"] == pytest.approx(sum(s["originality"] for s in rated) / len(rated))
    assert [r["fluency"] for r in m["by_run"]] == [len(u) for u in uses]


async def test_base_episode_never_sees_memory() -> None:
    agent_policy = Recorder(AUTScriptedPolicy())
    record = await play(AUTBenchmark(), "base", agent_policy, AUTJudgePolicy())
    assert len(agent_policy.requests) == 3
    first = agent_policy.requests[0][0]
    for messages, params in agent_policy.requests:
        assert messages == first  # every run is asked the very same thing
        assert params.temperature == 0.7
        assert messages[-1].content.startswith(prompts.TASK_HEADING)
    assert [[c.purpose for c in s.calls] for s in record.steps] == [["act", "judge"]] * 3


async def test_redna_beats_base_under_the_scripted_stand_ins() -> None:
    bench = AUTBenchmark()
    base = [
        await play(bench, "base", AUTScriptedPolicy(), AUTJudgePolicy(), i)
        for i in ("brick", "paperclip")
    ]
    redna = [
        await play(bench, "redna", AUTScriptedPolicy(), AUTJudgePolicy(), i)
        for i in ("brick", "paperclip")
    ]
    a, b = bench.aggregate(base), bench.aggregate(redna)
    assert b["originality"] > a["originality"] and b["elaboration"] > a["elaboration"]
    assert a["objects"] == 2 and a["runs"] == 3 and a["judged"] is True
    # Base answers the same every run: no spread across runs.
    assert a["originality_std"] == 0.0 and a["fluency_std"] == 0.0


async def test_unjudged_episode_has_no_scores() -> None:
    record = await play(AUTBenchmark(runs=2), "base", AUTScriptedPolicy(), None)
    assert len(record.steps) == 2
    assert all("judge" not in s.info for s in record.steps)
    m = record.metrics
    assert m["judged"] is False and m["originality"] is None and m["elaboration"] is None
    assert m["fluency"] == 3.0
    agg = AUTBenchmark().aggregate([record])
    assert agg["originality"] is None and agg["originality_std"] is None and agg["judged"] is False
    assert agg["fluency"] == 3.0 and agg["fluency_std"] == 0.0


async def test_garbage_judge_is_recorded_missing_not_coerced() -> None:
    record = await play(AUTBenchmark(), "redna", AUTScriptedPolicy(), GarbagePolicy())
    for s in record.steps:
        assert "missing" in s.info["judge"] and "after 3 attempts" in s.info["judge"]["missing"]
        assert [c.purpose for c in s.calls] == ["diverge", "narrow", "judge", "judge", "judge"]
    m = record.metrics
    assert m["judged"] is True and m["judge_missing"] == 3
    assert m["originality"] is None and m["rated_uses"] == 0


async def test_aggregate_sample_std_over_runs_and_errored_episodes() -> None:
    bench = AUTBenchmark()
    record = await play(bench, "redna", AUTScriptedPolicy(), AUTJudgePolicy())
    # Overwrite the ratings with known values: run means 1, 3, 5 -> mean 3, sample std 2.
    for s, value in zip(record.steps, (1, 3, 5), strict=True):
        s.info["judge"] = {
            "scores": [{"originality": value, "elaboration": 2}] * len(s.info["uses"])
        }
    errored = EpisodeRecord(
        run_id="r",
        benchmark=bench.id,
        split="objects",
        instance_id="shoe",
        seed=0,
        agent="redna",
        status="error",
    )
    agg = bench.aggregate([record, errored])
    assert agg["originality"] == pytest.approx(3.0) and agg["originality_std"] == pytest.approx(2.0)
    assert agg["elaboration"] == 2.0 and agg["elaboration_std"] == 0.0
    assert agg["objects"] == 1 and agg["errored"] == 1
    assert [r["originality"] for r in agg["by_run"]] == [1.0, 3.0, 5.0]
    # Metrics recompute from a round-tripped record.
    again = EpisodeRecord.model_validate_json(record.model_dump_json())
    assert bench.episode_metrics(again) == bench.episode_metrics(record)


# ---- the judge's reply format ----


def test_read_use_scores() -> None:
    reply = json.dumps(
        [
            {"use": 2, "originality": 5, "elaboration": 4},
            {"use": 1, "originality": 1, "elaboration": 2},
        ]
    )
    assert read_use_scores(reply, 2) == (
        [{"originality": 1, "elaboration": 2}, {"originality": 5, "elaboration": 4}],
        "",
    )
    nested = json.dumps({"ratings": [{"originality": 3, "elaboration": 3}]})
    assert read_use_scores(nested, 1)[0] == [{"originality": 3, "elaboration": 3}]
    assert "expected 2 ratings, got 1" in read_use_scores(nested, 2)[1]
    bad = json.dumps([{"originality": 9, "elaboration": 3}])
    assert read_use_scores(bad, 1) == (None, "use 1: originality: 9 is outside 1-5")
    assert read_use_scores("Originality: 4", 1)[0] is None
