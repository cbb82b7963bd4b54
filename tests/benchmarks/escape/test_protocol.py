"""MUTATE protocol: attempts, forbidden finish actions, stops, path credit, Metric 2 judging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkingpaths.api import run
from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark, is_judged
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.models.runtime import ModelRuntime

CELL = Path(__file__).parent / "fixtures" / "cell"


def bench(**options: object) -> EscapeBenchmark:
    return EscapeBenchmark(scenarios=str(CELL), **options)


def cell_instance(b: EscapeBenchmark):  # type: ignore[no-untyped-def]
    return b.select_instances("custom", ["cell"])[0]


class ScriptAgent:
    """Plays fixed action lists, one list per attempt (then `wait()`)."""

    def __init__(self, attempts: list[list[str]]) -> None:
        self.attempts = attempts
        self.n = -1
        self.queue: list[str] = []

    def reset(self, instance: object, seed: int) -> None:
        self.n += 1
        self.queue = list(self.attempts[self.n]) if self.n < len(self.attempts) else []

    async def act(self, observation: Observation) -> Decision:
        return Decision(self.queue.pop(0) if self.queue else "wait()", thought="because")

    def state(self) -> dict[str, object]:
        return {}


def record_for(b: EscapeBenchmark) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t", benchmark=b.id, split="custom", instance_id="cell", seed=7, agent="script"
    )


A = [
    "move(Go to the alcove)",
    "click(crowbar)",
    "move(Back to the cell)",
    "apply(crowbar, cell door)",
]
B = ["click(note)", "input(4321, cell door)"]


async def test_found_path_is_forbidden_in_later_attempts() -> None:
    b = bench(max_steps=8, meaningless_limit=20)
    record = record_for(b)
    # Attempt 2 repeats path A: refused, nothing changes; then it finds B.
    agent = ScriptAgent([A, [*A, *B], B, []])
    await b.run_episode(cell_instance(b), agent, record)  # type: ignore[arg-type]
    attempts = record.outcome["attempts"]
    assert [a["paths"] for a in attempts] == [["P1_A"], ["P1_B"], [], []]
    assert record.outcome["paths_found"] == ["P1_A", "P1_B"]
    refused = [s for s in record.steps if s.info.get("forbidden")]
    assert len(refused) == 2  # A in attempt 2, B in attempt 3
    assert all(not s.valid for s in refused)
    second = [s for s in record.steps if s.info["attempt"] == 1]
    assert "apply(crowbar, cell door)" in second[0].observation  # Prompt 3 lists it
    assert "DIVERSITY CONSTRAINT" in second[0].observation
    # After the refusal the door is still closed: path B completes in the same attempt.
    assert second[-1].info["path"] == "P1_B"


async def test_a_forbidden_action_that_would_not_finish_plays_normally() -> None:
    b = bench(max_steps=6, attempts=2)
    record = record_for(b)
    # Attempt 2 tries the forbidden finish before holding the crowbar: an ordinary failure.
    agent = ScriptAgent([A, ["apply(crowbar, cell door)", "click(spoon)"]])
    await b.run_episode(cell_instance(b), agent, record)  # type: ignore[arg-type]
    second = [s for s in record.steps if s.info["attempt"] == 1]
    assert not second[0].info["forbidden"]
    assert "not in your bag" in second[0].feedback


async def test_first_tries_are_not_meaningless_even_when_they_fail_alike() -> None:
    b = bench()
    env = b.make_env(cell_instance(b))
    env.reset()
    env.step("click(spoon)")
    first = env.step("input(1111, cell door)")
    second = env.step("input(2222, cell door)")  # same response, but a new action
    again = env.step("input(2222, cell door)")
    assert not first.info["meaningless"] and not second.info["meaningless"]
    assert again.info["meaningless"]


async def test_attempt_stops_after_twenty_meaningless_steps() -> None:
    b = bench(max_steps=50)
    record = record_for(b)
    agent = ScriptAgent([["dance wildly"] * 60, [], [], []])
    await b.run_episode(cell_instance(b), agent, record)  # type: ignore[arg-type]
    first = record.outcome["attempts"][0]
    assert first["stop"] == "meaningless" and first["steps"] == 20
    assert first["invalid"] == 20
    assert record.steps[19].truncated and record.steps[19].info["stop"] == "meaningless"


async def test_new_response_is_not_meaningless_but_a_repeat_is() -> None:
    b = bench()
    env = b.make_env(cell_instance(b))
    env.reset()
    first = env.step("click(note)")
    again = env.step("click(note)")
    assert first.info["valid"] and not first.info["meaningless"]
    assert again.info["meaningless"]
    moved = env.step("move(Go to the alcove)")
    assert not moved.info["meaningless"]  # a new scene is something learned
    env.step("move(Back to the cell)")
    again = env.step("move(Go to the alcove)")
    assert again.info["meaningless"]  # known scene, same response: nothing new


async def test_step_budget_truncates_the_attempt() -> None:
    b = bench(max_steps=3, attempts=1)
    record = record_for(b)
    await b.run_episode(cell_instance(b), ScriptAgent([A]), record)  # type: ignore[arg-type]
    assert record.outcome["attempts"][0]["stop"] == "budget"
    assert len(record.steps) == 3 and record.outcome["paths_found"] == []


async def test_unparsable_model_answer_is_recorded_invalid_and_the_attempt_goes_on() -> None:
    b = bench(attempts=1)
    record = record_for(b)
    agent = ScriptAgent([["I think I should look around", *B]])
    await b.run_episode(cell_instance(b), agent, record)  # type: ignore[arg-type]
    assert not record.steps[0].valid
    assert record.outcome["paths_found"] == ["P1_B"]
    assert record.metrics == {} and b.episode_metrics(record)["invalid_actions"] == 1


async def test_judge_scores_off_path_apply_craft_input_steps() -> None:
    from forkingpaths.benchmarks.escape.judge_scripted import DivergenceJudgePolicy
    from forkingpaths.models.scripted import ScriptedModel

    b = bench(attempts=1)
    record = record_for(b)
    actions = ["click(spoon)", "apply(spoon, cell door)", "input(1234, cell door)", *B]
    judge = ScriptedModel("scripted/escape-judge", DivergenceJudgePolicy(), ModelRuntime())
    await b.run_episode(cell_instance(b), ScriptAgent([actions]), record, {"judge": judge})  # type: ignore[arg-type]
    judged = [s for s in record.steps if "judge" in s.info]
    assert [s.action for s in judged] == ["apply(spoon, cell door)", "input(1234, cell door)"]
    assert all(is_judged(s) for s in judged)
    assert all(c.purpose == "judge" for s in judged for c in s.calls)
    metrics = b.episode_metrics(record)
    assert metrics["judged_steps"] == 2 and metrics["judge_missing"] == 0
    assert all(1 <= metrics[c] <= 5 for c in ("originality", "elaboration", "groundedness"))


async def test_judge_answers_that_are_not_scores_are_recorded_missing() -> None:
    from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

    b = bench(attempts=1)
    record = record_for(b)
    actions = ["click(spoon)", "apply(spoon, cell door)", *B]
    judge = ScriptedModel("scripted/garbage", GarbagePolicy(), ModelRuntime())
    await b.run_episode(cell_instance(b), ScriptAgent([actions]), record, {"judge": judge})  # type: ignore[arg-type]
    step = next(s for s in record.steps if "judge" in s.info)
    assert "missing" in step.info["judge"]
    assert len(step.calls) == 3  # first try + 2 retries
    metrics = b.episode_metrics(record)
    assert metrics["originality"] is None and metrics["judge_missing"] == 1


def test_oracle_finds_every_path_of_the_fixture(tmp_path: Path) -> None:
    result = run(
        "escape",
        agent="oracle",
        split="custom",
        benchmark_options={"scenarios": str(CELL)},
        runs_dir=tmp_path,
    )
    metrics = result.metrics["metrics"]
    assert metrics["paths_found"] == 4 and metrics["paths_total"] == 4
    assert metrics["path_discovery_text"] == "4 / 4 (100.0%)"
    assert metrics["by_group"]["cell"]["P1_C1"] == "O"
    assert metrics["originality"] is None  # no judge configured: Metric 2 not computed


def test_run_with_a_judge_role_end_to_end(tmp_path: Path) -> None:
    result = run(
        "escape",
        agent="base",
        model="scripted/escape-explorer",
        split="custom",
        benchmark_options={"scenarios": str(CELL), "max_steps": 12},
        roles={"judge": "scripted/escape-judge"},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    spec = json.loads((result.run_dir.path / "spec.json").read_text())
    assert spec["spec"]["roles"]["judge"]["model"] == "scripted/escape-judge"
    metrics = result.metrics["metrics"]
    assert metrics["judged_steps"] + metrics["judge_missing"] > 0
    record = result.records[0]
    assert record.n_calls > sum(len(s.calls) for s in record.steps if "judge" not in s.info)


def test_unknown_role_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such model role"):
        run(
            "escape",
            agent="oracle",
            split="custom",
            benchmark_options={"scenarios": str(CELL)},
            roles={"responder": "scripted/echo"},
            runs_dir=tmp_path,
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"attempts": 0}, "attempts"),
        ({"max_steps": "many"}, "max_steps"),
        ({"crafting": "sideways"}, "crafting"),
        ({"scenarios": "/no/such/dir"}, "does not exist"),
        ({"colour": "red"}, "unknown escape option"),
    ],
)
def test_bad_benchmark_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        EscapeBenchmark(**options)
