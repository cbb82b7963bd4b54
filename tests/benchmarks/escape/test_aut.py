"""AUT transfer: objects, options, env and its judge, Base and ReDNA agents, metrics, Table 4."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from forkingpaths.benchmarks.escape import aut_prompts as prompts
from forkingpaths.benchmarks.escape.aut import AUTBenchmark
from forkingpaths.benchmarks.escape.aut_agents import parse_uses
from forkingpaths.benchmarks.escape.aut_env import (
    INVALID_USES,
    AUTEnv,
    AUTObject,
    load_aut_objects,
    uses_of_action,
)
from forkingpaths.benchmarks.escape.aut_judge import read_use_scores
from forkingpaths.benchmarks.escape.aut_scripted import AUTJudgePolicy, AUTScriptedPolicy
from forkingpaths.core import registry
from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, ResetNeeded
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

BRICK = AUTObject("brick", "brick", "a rectangular block of fired clay used to build walls")

# What the scripted stand-ins make of the brick. Diverge rotates the idea pool to start at "a
# pendulum bob" (crc32 of the name), so "a paperweight" and "a doorstop" fall outside its 12
# candidates; Narrowing keeps the first three candidates not already given.
BRICK_REDNA_USES = [
    [
        "Use the brick as a pendulum bob: hung from a string it swings at a steady rate, so it "
        "can time short intervals.",
        "Use the brick as a plant marker: pushed into the soil beside a seedling it shows what "
        "was sown there.",
        "Use the brick as a musical instrument: struck, scraped or blown across it makes a sound "
        "that can keep a rhythm.",
    ],
    [
        "Use the brick as a stamp for patterns in clay: pressed into soft clay it leaves its "
        "outline, which repeats into a border.",
        "Use the brick as a signal to a search party: placed where it catches the light or "
        "stands out against the ground it draws the eye from far away.",
        "Use the brick as a unit of measure: laid end to end it gives a repeatable length for "
        "rough measurements when no ruler is at hand.",
    ],
    [
        "Use the brick as a float for a fishing line: tied to the line it marks where the hook "
        "is and dips when a fish bites.",
        "Use the brick as a mould for sand castles: filled with damp sand and turned over it "
        "leaves a tower with its shape.",
        "Use the brick as a shadow-puppet piece: held between a lamp and a wall it casts a shape "
        "that can be moved to tell a story.",
    ],
]
BRICK_BASE_USES = [
    "Use the brick as a paperweight.",
    "Use the brick as a doorstop.",
    "Use the brick as a game piece.",
]

# A judge with known ratings (originality, elaboration) per idea, so the aggregation is pinned:
# run means of originality 11/3, 2, 4 (mean 29/9, sample std sqrt(93)/9) and of elaboration 4,
# 7/3, 11/3 (mean 10/3, sample std sqrt(63)/9).
TABLE_RATINGS = {
    "pendulum bob": (5, 4),
    "plant marker": (2, 3),
    "musical instrument": (4, 5),
    "stamp for patterns": (3, 3),
    "signal to a search": (1, 2),
    "unit of measure": (2, 2),
    "float for a fishing": (4, 4),
    "mould for sand": (5, 5),
    "shadow-puppet": (3, 2),
}


class TableJudgePolicy:
    """Rates each numbered use by the idea it names (`TABLE_RATINGS`), listed in reverse order
    with its `use` number (test-only)."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        request = messages[-1].content.split("Uses to rate:", 1)[-1]
        ratings = []
        for number, text in re.findall(r"^(\d+)\. (.+)$", request, re.MULTILINE):
            o, e = next(v for k, v in TABLE_RATINGS.items() if k in text)
            ratings.append({"use": int(number), "originality": o, "elaboration": e})
        return json.dumps(ratings[::-1])


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


# ---- objects, options, declarations ----


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
    # The protocol is the env's: the one episode loop of the base class plays it.
    assert AUTBenchmark.run_episode is Benchmark.run_episode


def test_metric_specs_cover_the_aggregate() -> None:
    specs = AUTBenchmark.metric_specs
    assert {m: specs[m].direction for m in AUTBenchmark.headline_metrics} == {
        "originality": "higher",
        "elaboration": "higher",
        "fluency": "higher",
    }
    record = EpisodeRecord(
        run_id="r", benchmark="aut-v1", split="objects", instance_id="brick", seed=0, agent="b"
    )
    scalar = {k for k, v in AUTBenchmark().score_records([record]).items() if k != "by_run"}
    assert scalar == set(specs)


def test_options_are_validated() -> None:
    assert AUTBenchmark().config.runs == 3
    assert AUTBenchmark(runs=2).config.runs == 2
    assert AUTBenchmark(runs="4").config.runs == 4
    assert AUTBenchmark(runs=2).options == {"runs": 2}
    for bad in (0, -1, "many", True, 1.5):
        with pytest.raises(ConfigError, match="aut option runs \\(runs per object"):
            AUTBenchmark(runs=bad)
    with pytest.raises(ConfigError) as error:
        AUTBenchmark(runs=0)
    assert str(error.value) == (
        "aut option runs (runs per object, App. D.6: 3; an integer >= 1): Input should be "
        "greater than or equal to 1, got 0"
    )
    with pytest.raises(ConfigError) as error:
        AUTBenchmark(rounds=3)
    assert str(error.value) == "aut has no option 'rounds'; its options: runs"


def test_agent_options_are_validated() -> None:
    bench = AUTBenchmark()
    model = scripted(AUTScriptedPolicy(), "m")
    agent = bench.make_agent("base", model, {"temperature": "0.3", "max_tokens": "64"})
    assert agent.params == ModelParams(temperature=0.3, max_tokens=64)
    assert bench.make_agent("redna", model, {}).params == ModelParams(temperature=0.7)
    with pytest.raises(ConfigError, match="agent 'redna' needs a model"):
        bench.make_agent("redna", None, {})
    with pytest.raises(ConfigError) as error:
        bench.make_agent("base", model, {"temperature": -1})
    assert str(error.value) == (
        "agent 'base' option temperature (sampling temperature, App. D.6: 0.7; a number >= 0): "
        "Input should be greater than or equal to 0, got -1"
    )
    for bad in ({"temperature": True}, {"temperature": math.inf}, {"max_tokens": 0}):
        with pytest.raises(ConfigError, match=f"agent 'base' option {next(iter(bad))}"):
            bench.make_agent("base", model, bad)
    with pytest.raises(ConfigError, match="no option"):
        bench.make_agent("base", model, {"runs": 2})


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


async def test_env_memory_runs_and_invalid_actions() -> None:
    env = AUTEnv(BRICK, runs=3)
    first = env.reset(seed=0)
    assert first.text == prompts.TASK.substitute(object_line=BRICK.object_line)
    assert first.data == {
        "object": "brick",
        "object_id": "brick",
        "description": BRICK.description,
        "run": 0,
        "runs": 3,
        "memory": [],
    }
    step = await env.astep('["a doorstop", "a pendulum"]')
    assert step.info == {
        "valid": True,
        "run": 0,
        "object": "brick",
        "uses": ["a doorstop", "a pendulum"],
    }
    assert (step.reward, step.terminated, step.truncated, step.calls) == (0.0, False, False, [])
    assert step.observation.data["run"] == 1
    assert step.observation.data["memory"] == ["a doorstop", "a pendulum"]
    bad = await env.astep("I cannot think of anything")
    assert bad.info == {
        "valid": False,
        "run": 1,
        "object": "brick",
        "uses": [],
        "error": INVALID_USES,
    }
    last = await env.astep('["a stamp"]')
    assert last.terminated and last.observation.data["memory"] == [
        "a doorstop",
        "a pendulum",
        "a stamp",
    ]
    assert last.observation.data["outcome"] == {"runs": 3, "uses": 3}
    assert env.reset().data["memory"] == []


async def test_runner_wrappers_refuse_steps_out_of_order() -> None:
    bench = AUTBenchmark(runs=1)
    env = bench.wrap_env(bench.make_env(bench.instance("brick")), bench.instance("brick"))
    with pytest.raises(ResetNeeded):
        await env.astep('["a doorstop"]')
    env.reset(seed=0)
    assert (await env.astep('["a doorstop"]')).terminated
    with pytest.raises(ResetNeeded):
        await env.astep('["more"]')


async def test_env_judges_each_run_with_its_role_model() -> None:
    judge = Recorder(AUTJudgePolicy())
    env = AUTBenchmark(runs=2).make_env(
        AUTBenchmark().instance("brick"), {"judge": scripted(judge, "scripted/aut-judge")}
    )
    env.reset(seed=0)
    step = await env.astep(json.dumps(BRICK_BASE_USES))
    # rate_use: "paperweight" and "doorstop" are ordinary words (originality 1); 6-7 words, no
    # causal word: elaboration 2; "a game piece" is not ordinary (originality 3).
    assert step.info["judge"] == {
        "scores": [
            {"originality": 1, "elaboration": 2},
            {"originality": 1, "elaboration": 2},
            {"originality": 3, "elaboration": 2},
        ]
    }
    assert [c.purpose for c in step.calls] == ["judge"]
    ((messages, params),) = judge.requests
    assert params.temperature == 0.0
    assert messages == [
        Message(role="system", content=prompts.JUDGE_SYSTEM),
        Message(
            role="user",
            content=prompts.JUDGE_USER.substitute(
                object_line="Object: brick (a rectangular block of fired clay used to build walls)",
                uses="1. Use the brick as a paperweight.\n2. Use the brick as a doorstop.\n"
                "3. Use the brick as a game piece.",
                count=3,
            ),
        ),
    ]
    # A run without uses is rated empty without a call.
    empty = await env.astep("no list")
    assert empty.info["judge"] == {"scores": []} and empty.calls == []
    assert len(judge.requests) == 1 and empty.terminated


# ---- episodes end to end ----


async def test_redna_episode_exact_uses_ratings_and_metrics() -> None:
    agent_policy, judge_policy = Recorder(AUTScriptedPolicy()), Recorder(TableJudgePolicy())
    bench = AUTBenchmark()
    record = await play(bench, "redna", agent_policy, judge_policy)
    assert [json.loads(s.action) for s in record.steps] == BRICK_REDNA_USES
    assert [s.info["uses"] for s in record.steps] == BRICK_REDNA_USES
    assert [s.info["run"] for s in record.steps] == [0, 1, 2]
    expected = [
        [{"originality": o, "elaboration": e} for o, e in triple]
        for triple in (
            [(5, 4), (2, 3), (4, 5)],
            [(3, 3), (1, 2), (2, 2)],
            [(4, 4), (5, 5), (3, 2)],
        )
    ]
    assert [s.info["judge"] for s in record.steps] == [{"scores": e} for e in expected]
    for s in record.steps:
        assert [c.purpose for c in s.calls] == ["diverge", "narrow", "judge"]
        assert s.observation == record.initial_observation
        assert s.valid and not s.truncated
    assert [s.terminated for s in record.steps] == [False, False, True]
    assert record.n_calls == 9
    assert record.outcome == {"runs": 3, "uses": 9}

    # Run 1's Narrowing sees no memory; run 3's sees every use of runs 1 and 2, in order.
    asked = [messages[-1].content for messages, _ in agent_policy.requests]
    narrows = [t for t in asked if t.startswith(prompts.NARROW_HEADING)]
    memory_heading = "Uses already given in earlier runs (do not repeat them or close variants "
    assert f"{memory_heading}of them):\n{prompts.NOTHING}\n" in narrows[0]
    given = "\n".join(f"- {u}" for u in BRICK_REDNA_USES[0] + BRICK_REDNA_USES[1])
    assert f"{memory_heading}of them):\n{given}\n\n" in narrows[2]
    # Diverge is conditioned on the object only: the same request every run.
    diverge = prompts.DIVERGE.substitute(object_line=BRICK.object_line)
    assert asked[0::2] == [diverge] * 3 and asked[1::2] == narrows
    assert all(p.temperature == 0.7 for _, p in agent_policy.requests)
    assert len(agent_policy.requests) == 6 and len(judge_policy.requests) == 3

    m = record.metrics
    assert m == {
        "object": "brick",
        "runs": 3,
        "fluency": 3.0,
        "originality": pytest.approx(29 / 9),
        "elaboration": pytest.approx(30 / 9),
        "judged": True,
        "rated_uses": 9,
        "judge_missing": 0,
        "by_run": [
            {"run": 0, "fluency": 3, "originality": pytest.approx(11 / 3), "elaboration": 4.0},
            {"run": 1, "fluency": 3, "originality": 2.0, "elaboration": pytest.approx(7 / 3)},
            {
                "run": 2,
                "fluency": 3,
                "originality": 4.0,
                "elaboration": pytest.approx(11 / 3),
            },
        ],
    }
    agg = bench.score_records([record])
    assert agg["originality"] == pytest.approx(29 / 9)
    assert agg["originality_std"] == pytest.approx(math.sqrt(93) / 9)
    assert agg["elaboration"] == pytest.approx(30 / 9)
    assert agg["elaboration_std"] == pytest.approx(math.sqrt(63) / 9)
    assert (agg["fluency"], agg["fluency_std"]) == (3.0, 0.0)
    assert (agg["objects"], agg["errored"], agg["runs"], agg["rated_uses"]) == (1, 0, 3, 9)


async def test_quick_suite_values_under_the_scripted_stand_ins() -> None:
    """The quick suite's pair of stand-ins, and Base under them, to the exact value."""
    bench = AUTBenchmark()
    base = [
        await play(bench, "base", AUTScriptedPolicy(), AUTJudgePolicy(), i)
        for i in ("brick", "paperclip")
    ]
    redna = [
        await play(bench, "redna", AUTScriptedPolicy(), AUTJudgePolicy(), i)
        for i in ("brick", "paperclip")
    ]
    assert [s.info["uses"] for s in base[0].steps] == [BRICK_BASE_USES] * 3
    assert [s.thought for s in base[0].steps] == [""] * 3
    assert [[c.purpose for c in s.calls] for s in base[0].steps] == [["act", "judge"]] * 3
    by_run = {"objects": 2, "fluency": 3.0, "rated_uses": 6}
    assert bench.score_records(base) == {
        "originality": pytest.approx(5 / 3),
        "originality_std": 0.0,
        "elaboration": 2.0,
        "elaboration_std": 0.0,
        "fluency": 3.0,
        "fluency_std": 0.0,
        "objects": 2,
        "errored": 0,
        "runs": 3,
        "judged": True,
        "rated_uses": 18,
        "judge_missing": 0,
        "by_run": [
            {"run": r, **by_run, "originality": pytest.approx(5 / 3), "elaboration": 2.0}
            for r in range(3)
        ],
    }
    # Every elaborated ReDNA use has 18+ words and a causal word: 5 and 5 (metrics.json of the
    # quick suite).
    agg = bench.score_records(redna)
    assert {k: agg[k] for k in ("originality", "elaboration", "fluency", "rated_uses")} == {
        "originality": 5.0,
        "elaboration": 5.0,
        "fluency": 3.0,
        "rated_uses": 18,
    }
    assert [s.info["uses"] for s in redna[1].steps] == [
        [u.replace("the brick", "the paperclip") for u in run] for run in BRICK_REDNA_USES
    ]


async def test_base_episode_never_sees_memory() -> None:
    agent_policy = Recorder(AUTScriptedPolicy())
    await play(AUTBenchmark(), "base", agent_policy, AUTJudgePolicy())
    task = prompts.TASK.substitute(object_line=BRICK.object_line)
    # Every run is asked the very same thing, the task alone.
    assert (
        agent_policy.requests
        == [([Message(role="user", content=task)], ModelParams(temperature=0.7))] * 3
    )


async def test_unjudged_episode_has_no_scores() -> None:
    record = await play(AUTBenchmark(runs=2), "base", AUTScriptedPolicy(), None)
    assert len(record.steps) == 2
    assert all("judge" not in s.info for s in record.steps)
    assert [[c.purpose for c in s.calls] for s in record.steps] == [["act"]] * 2
    m = record.metrics
    assert m["judged"] is False and m["originality"] is None and m["elaboration"] is None
    assert m["fluency"] == 3.0 and m["rated_uses"] == 0
    agg = AUTBenchmark().score_records([record])
    assert agg["originality"] is None and agg["originality_std"] is None and agg["judged"] is False
    assert agg["fluency"] == 3.0 and agg["fluency_std"] == 0.0 and agg["runs"] == 2


async def test_garbage_judge_is_recorded_missing_not_coerced() -> None:
    record = await play(AUTBenchmark(), "redna", AUTScriptedPolicy(), GarbagePolicy())
    for s in record.steps:
        assert s.info["judge"] == {"missing": "no JSON list of rating objects (after 3 attempts)"}
        assert [c.purpose for c in s.calls] == ["diverge", "narrow", "judge", "judge", "judge"]
    m = record.metrics
    assert m["judged"] is True and m["judge_missing"] == 3
    assert m["originality"] is None and m["rated_uses"] == 0
    assert record.n_calls == 15


async def test_aggregate_pools_uses_per_run_and_leaves_errored_episodes_out() -> None:
    bench = AUTBenchmark()
    brick = await play(bench, "redna", AUTScriptedPolicy(), AUTJudgePolicy())
    clip = await play(bench, "redna", AUTScriptedPolicy(), AUTJudgePolicy(), "paperclip")
    # Run 0: brick gives one use rated 5, paperclip three rated 1: pooled over the four uses,
    # 2.0 (the mean of the object means would be 3.0). Runs 1 and 2: 3 and 5 for every use.
    brick.steps[0].info["uses"] = brick.steps[0].info["uses"][:1]
    for record, first in ((brick, 5), (clip, 1)):
        for s, value in zip(record.steps, (first, 3, 5), strict=True):
            n = len(s.info["uses"])
            s.info["judge"] = {"scores": [{"originality": value, "elaboration": 2}] * n}
    errored = EpisodeRecord(
        run_id="r",
        benchmark=bench.id,
        split="objects",
        instance_id="shoe",
        seed=0,
        agent="redna",
        status="error",
    )
    agg = bench.score_records([brick, clip, errored])
    assert [r["originality"] for r in agg["by_run"]] == [2.0, 3.0, 5.0]
    assert [r["fluency"] for r in agg["by_run"]] == [2.0, 3.0, 3.0]
    assert [r["rated_uses"] for r in agg["by_run"]] == [4, 6, 6]
    assert agg["originality"] == pytest.approx(10 / 3)
    assert agg["originality_std"] == pytest.approx(math.sqrt(7 / 3))
    assert agg["fluency"] == pytest.approx(8 / 3)
    assert agg["elaboration"] == 2.0 and agg["elaboration_std"] == 0.0
    assert (agg["objects"], agg["errored"], agg["rated_uses"]) == (2, 1, 16)
    # Metrics recompute from a round-tripped record.
    again = EpisodeRecord.model_validate_json(brick.model_dump_json())
    assert bench.episode_metrics(again) == bench.episode_metrics(brick)
    assert bench.episode_metrics(brick)["originality"] == pytest.approx((5 + 3 * 3 + 5 * 3) / 7)


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
    assert read_use_scores(nested, 1) == ([{"originality": 3, "elaboration": 3}], "")
    assert read_use_scores(nested, 2) == (None, "expected 2 ratings, got 1")
    bad = json.dumps([{"originality": 9, "elaboration": 3}])
    assert read_use_scores(bad, 1) == (None, "use 1: originality: 9 is outside 1-5")
    assert read_use_scores("Originality: 4", 1) == (None, "no JSON list of rating objects")
