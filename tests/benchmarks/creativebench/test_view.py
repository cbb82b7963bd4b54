"""The creativebench world view: frames per position, baselines, verdicts, hostile text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.creativebench.agents.solver import ReferenceSolver
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.records import EpisodeRecord, StepRecord

PROBLEM = "count-primes"
COMBO = "combo-01"
RELEASE_EXPLORE = Path(__file__).parent / "fixtures" / "release_explore.jsonl"
HOSTILE = '<script>alert(1)</script> " onmouseover="x javascript:alert(1)'
HOSTILE_LEVEL0 = f"def count_primes(n):\n    return {HOSTILE!r}\n"
"""A level-0 answer that fails its tests and carries hostile text."""


class Answers:
    """Answers each level in turn with the given programs (the level's reference for None)."""

    def __init__(self, programs: list[str | None]) -> None:
        self.programs = list(programs)

    def reset(self, instance: object, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        program = self.programs.pop(0)
        if program is None:
            program = observation.data["task"]["reference_solution"]
        return Decision(program)

    def state(self) -> dict[str, object]:
        return {}


def record_for(instance_id: str, split: str) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="view", benchmark="creativebench-v1", split=split, instance_id=instance_id,
        seed=0, agent="test",
    )  # fmt: skip


def play(bench: CreativeBenchmark, instance_id: str, agent: Any, **roles: Any) -> EpisodeRecord:
    async def go() -> EpisodeRecord:
        instance = bench.instance(instance_id)
        record = record_for(instance_id, instance.split)
        try:
            await bench.run_episode(instance, agent, record, roles)
        finally:
            await bench.aclose()
        record.metrics = bench.episode_metrics(record)
        return record

    return asyncio.run(go())


@pytest.fixture(scope="module")
def bench() -> CreativeBenchmark:
    return CreativeBenchmark(embedding="none")


@pytest.fixture(scope="module")
def judged(bench: CreativeBenchmark) -> EpisodeRecord:
    """count-primes: a failing hostile level 0, then every level's reference, judged
    non-compliant by a judge whose reasons are hostile."""
    levels = len(bench.explore_tasks()[PROBLEM])
    verdict = {"compliant": False, "violations": [HOSTILE]}
    judge = FakeChatModel([json.dumps(verdict)])
    agent = Answers([HOSTILE_LEVEL0] + [None] * (levels - 1))
    return play(bench, PROBLEM, agent, judge=judge)


@pytest.fixture(scope="module")
def stuck(bench: CreativeBenchmark) -> EpisodeRecord:
    """count-primes answered with the level-0 reference at every level: it passes, and breaks
    the explicit check rules of the stacked constraints."""
    level0 = bench.explore_tasks()[PROBLEM][0].reference_solution
    return play(bench, PROBLEM, Answers([level0] * len(bench.explore_tasks()[PROBLEM])))


@pytest.fixture(scope="module")
def combo(bench: CreativeBenchmark) -> EpisodeRecord:
    return play(bench, COMBO, ReferenceSolver())


def test_one_frame_per_position_holding_what_its_step_recorded(
    bench: CreativeBenchmark, judged: EpisodeRecord, stuck: EpisodeRecord, combo: EpisodeRecord
) -> None:
    for record in (judged, stuck, combo):
        view = bench.world_view(record)
        assert view is not None and view["kind"] == "creativebench"
        frames = view["frames"]
        assert len(frames) == len(record.steps) + 1
        assert frames[0]["position"] == 0 and frames[0]["answered"] == 0
        for p, frame in enumerate(frames[1:], start=1):
            step = record.steps[p - 1]
            assert frame["position"] == p
            assert frame["code"] == step.action
            for key in ("verdict", "demo_verdict", "detail", "quality", "novelty", "level"):
                assert frame.get(key) == step.info.get(key)
            assert frame["task"] == p - 1  # the env plays the levels in order
        json.dumps(view)


def test_answered_and_passed_levels_only_grow(
    bench: CreativeBenchmark, judged: EpisodeRecord, stuck: EpisodeRecord
) -> None:
    for record in (judged, stuck):
        frames = bench.world_view(record)["frames"]  # type: ignore[index]
        assert [f["answered"] for f in frames] == list(range(len(frames)))
        passed = [f["passed"] for f in frames]
        assert passed == sorted(passed)
        assert passed[-1] == sum(s.info["quality"] == 1.0 for s in record.steps)


def test_the_run_level0_answer_is_the_novelty_baseline_of_the_constrained_levels(
    bench: CreativeBenchmark, stuck: EpisodeRecord
) -> None:
    view = bench.world_view(stuck)
    assert view is not None
    level0, *constrained = view["frames"][1:]
    assert level0["novelty_base"] == {"kind": "reference", "task": 0, "scored": False}
    for frame in constrained:
        assert frame["novelty_base"]["kind"] == "run"
        assert frame["novelty_base"]["label"] == "run-level0"
        # Eq. 4's y_b is the program of position 1: the run's level-0 answer.
        assert view["frames"][frame["novelty_base"]["position"]]["code"] == stuck.steps[0].action
        assert frame["novelty"] == 0.0 and frame["embedding_distance"] is None


def test_each_stacked_constraint_gets_the_static_checkers_verdict(
    bench: CreativeBenchmark, stuck: EpisodeRecord
) -> None:
    view = bench.world_view(stuck)
    assert view is not None
    assert view["frames"][1]["constraint_verdicts"] == []  # level 0: nothing to break
    for frame, step in zip(view["frames"][2:], stuck.steps[1:], strict=True):
        task = view["tasks"][frame["task"]]
        verdicts = frame["constraint_verdicts"]
        assert [v["number"] for v in verdicts] == [c["number"] for c in task["constraints"]]
        assert len(verdicts) == step.info["level"]
        broken = {v["constraint"] for v in frame["violations"]}
        assert broken  # the level-0 program breaks an explicit rule at every constrained level
        for verdict in verdicts:
            assert verdict["static"] == ("violated" if verdict["number"] in broken else "clear")
        assert len(frame["violations"]) == len(step.info["violations"])
        assert all(not v["inferred"] for v in frame["violations"])
        assert "judge" not in frame  # no judge role: the static checker decided alone


def test_a_failed_level0_shows_the_reference_baseline_and_the_judges_verdict(
    bench: CreativeBenchmark, judged: EpisodeRecord
) -> None:
    view = bench.world_view(judged)
    assert view is not None
    level0, *constrained = view["frames"][1:]
    assert level0["verdict"] != "PASSED" and level0["code"] == HOSTILE_LEVEL0
    reference0 = bench.explore_tasks()[PROBLEM][0].reference_solution
    assert view["tasks"][0]["reference_solution"] == reference0
    for frame in constrained:
        base = frame["novelty_base"]
        assert base == {"kind": "reference", "label": "reference-level0", "task": 0, "scored": True}
        assert frame["judge"]["compliant"] is False
        assert HOSTILE in frame["judge"]["reasons"]  # model text, unchanged
        assert frame["quality"] == 0.0
    assert view["judge"] == "fake/model"


def test_a_combo_view_holds_the_k_source_solutions_and_both_test_verdicts(
    bench: CreativeBenchmark, combo: EpisodeRecord
) -> None:
    view = bench.world_view(combo)
    assert view is not None and view["subset"] == "combo"
    task = next(t for t in bench.combo_tasks() if t.id == COMBO)
    (shown,) = view["tasks"]
    assert shown["source_solutions"] == list(task.source_solutions)
    assert shown["reference_solution"] == task.canonical_solution
    assert [t["field"] for t in shown["tests"]] == ["full_test_func", "demo_test_func"]
    frame = view["frames"][1]
    assert frame["novelty_base"] == {"kind": "sources", "task": 0, "count": 2}
    assert frame["verdict"] == frame["demo_verdict"] == "PASSED"
    assert {"ngram_distance", "embedding_distance", "novelty"} <= frame.keys()
    assert "constraint_verdicts" not in frame
    assert view["metrics"]["pass_at_1"] == 1.0


def test_an_errored_record_without_steps_gives_a_valid_view(bench: CreativeBenchmark) -> None:
    record = record_for(PROBLEM, "explore")
    record.status, record.error = "error", f"sandbox gone {HOSTILE}"
    view = bench.world_view(record)
    assert view is not None
    assert view["subset"] == "explore"  # from the task set: the reset info is missing
    assert len(view["frames"]) == 1 and view["error"].endswith(HOSTILE)
    unknown = record_for("no-such-task", "all")
    view = bench.world_view(unknown)
    assert view is not None and view["subset"] is None and view["tasks"] == []
    json.dumps(view)


def test_old_and_partial_step_info_does_not_raise(bench: CreativeBenchmark) -> None:
    record = record_for(PROBLEM, "explore")
    record.initial_info = {"subset": "explore"}
    finding = {"rule": "nodes:For", "detail": f"{HOSTILE}: breaks constraint 1 (x)", "line": 2}
    steps = [
        {"verdict": "PASSED", "level": 0},
        # An old record: no `baseline` label, an advisory finding, a malformed finding.
        {"verdict": "PASSED", "level": 1, "novelty": 0.5, "advisory_violations": [finding, 3]},
        {},  # info keys all missing
    ]
    record.steps = [
        StepRecord(index=i, observation="", action=HOSTILE, feedback="", info=info)
        for i, info in enumerate(steps)
    ]
    view = bench.world_view(record)
    assert view is not None
    frames = view["frames"]
    assert frames[2]["novelty_base"]["label"] == "run-level0"  # level 0 passed
    assert frames[2]["advisory_violations"][0]["constraint"] == 1
    assert frames[2]["constraint_verdicts"][0]["static"] == "advisory"
    assert frames[2]["advisory_violations"][0]["detail"].startswith(HOSTILE)
    assert frames[3]["task"] == 2 and frames[3]["code"] == HOSTILE
    json.dumps(view)


def test_inferred_rule_findings_are_advisory_per_constraint() -> None:
    bench = CreativeBenchmark(embedding="none", tasks=str(RELEASE_EXPLORE))
    levels = bench.explore_tasks()["7"]
    record = play(bench, "7", Answers([levels[0].reference_solution] * len(levels)))
    view = bench.world_view(record)
    assert view is not None
    for frame in view["frames"][2:]:
        assert frame["violations"] == [] and frame["advisory_violations"]
        statics = {v["static"] for v in frame["constraint_verdicts"]}
        assert "advisory" in statics and "violated" not in statics
        assert all(c["check"] == {} for c in view["tasks"][frame["task"]]["constraints"])
