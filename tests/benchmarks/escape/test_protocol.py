"""MUTATE protocol: attempts, forbidden finish actions, stops, path credit, Metric 2 judging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.benchmarks.escape.scripts import ScriptAgent

from forkingpaths.api import run
from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark, EscapeOptions
from forkingpaths.benchmarks.escape.metrics import is_judged
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.models.runtime import ModelRuntime

CELL = Path(__file__).parent / "fixtures" / "cell"


def bench(**options: object) -> EscapeBenchmark:
    return EscapeBenchmark(scenarios=str(CELL), **options)


def cell_instance(b: EscapeBenchmark):  # type: ignore[no-untyped-def]
    return b.select_instances("custom", ["cell"])[0]


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


async def test_the_attempts_are_one_episode_whose_records_mark_each_attempt_end() -> None:
    b = bench(max_steps=8, meaningless_limit=20)
    record = record_for(b)
    agent = ScriptAgent([A, [*A, *B], B, []])
    await b.run_episode(cell_instance(b), agent, record)  # type: ignore[arg-type]
    steps = record.steps
    assert [s.index for s in steps] == list(range(26))
    assert [(s.info["attempt"], s.info["t"]) for s in steps] == [
        *((0, t) for t in range(1, 5)),
        *((1, t) for t in range(1, 7)),
        *((2, t) for t in range(1, 9)),
        *((3, t) for t in range(1, 9)),
    ]
    # Each attempt's last step is marked as it ended: at the goal, or at the budget.
    ends = [(s.index, s.terminated, s.truncated, s.info["stop"]) for s in steps if "stop" in s.info]
    assert ends == [(3, True, False, "goal"), (9, True, False, "goal"), (17, False, True, "budget"),
                    (25, False, True, "budget")]  # fmt: skip
    assert [s.index for s in steps if s.terminated or s.truncated] == [3, 9, 17, 25]
    # Its feedback is the attempt's last view; the next step is shown the next attempt's start.
    first_end, next_start = steps[3], steps[4]
    assert "[Step 4]\nAction: apply(crowbar, cell door)" in first_end.feedback
    assert "Next move: [Step 5]" in first_end.feedback
    assert "DIVERSITY CONSTRAINT" not in first_end.feedback  # attempt 0 forbade nothing
    assert next_start.observation.startswith("Recent history: (none yet)")
    assert "Next move: [Step 1]" in next_start.observation
    assert "  * apply(crowbar, cell door)" in next_start.observation
    assert record.initial_observation == steps[0].observation
    assert steps[2].feedback == steps[3].observation  # within an attempt, as any env
    assert [s.reward for s in steps if s.reward] == [1.0, 1.0]
    assert record.outcome == {
        "scenario": "cell",
        "paths_found": ["P1_A", "P1_B"],
        "paths_total": ["P1_A", "P1_B", "P1_C1", "P1_C2"],
        "paths_extra": [],
        "escapes": 2,
        "attempts": [
            {"attempt": 0, "paths": ["P1_A"], "checkpoints": 0, "game_end": True,
             "stop": "goal", "steps": 4, "meaningless": 0, "invalid": 0},
            {"attempt": 1, "paths": ["P1_B"], "checkpoints": 0, "game_end": True,
             "stop": "goal", "steps": 6, "meaningless": 1, "invalid": 1},
            {"attempt": 2, "paths": [], "checkpoints": 0, "game_end": False,
             "stop": "budget", "steps": 8, "meaningless": 7, "invalid": 7},
            {"attempt": 3, "paths": [], "checkpoints": 0, "game_end": False,
             "stop": "budget", "steps": 8, "meaningless": 8, "invalid": 8},
        ],
    }  # fmt: skip
    metrics = b.episode_metrics(record)
    assert (metrics["avg_steps"], metrics["invalid_actions"], metrics["path_discovery"]) == (
        6.5,
        16,
        0.5,
    )


def test_the_env_starts_the_next_attempt_itself() -> None:
    b = bench(attempts=2, max_steps=8)
    env = b.make_env(cell_instance(b))
    start = env.reset(seed=0)
    assert (start.data["attempt"], start.data["forbidden"]) == (0, [])
    for action in A[:-1]:
        assert not env.step(action).done and env.attempt_end is None
    finish = env.step(A[-1])
    # Attempt 0 escaped: the step goes on into attempt 1, whose start it shows.
    assert (finish.terminated, finish.truncated, finish.info["stop"]) == (False, False, "goal")
    assert finish.observation.data["attempt"] == 1 and finish.observation.data["step"] == 1
    assert finish.observation.data["forbidden"] == ["apply(crowbar, cell door)"]
    assert "outcome" not in finish.observation.data
    end = env.attempt_end
    assert end is not None and (end.terminated, end.truncated) == (True, False)
    assert (end.observation.data["attempt"], end.observation.data["step"]) == (0, 5)
    assert not env.step("click(note)").done and env.attempt_end is None
    last = env.step("input(4321, cell door)")
    assert (last.terminated, last.truncated) == (True, False)
    assert last.observation.data["outcome"]["paths_found"] == ["P1_A", "P1_B"]
    assert env.attempt_end is None


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
    assert [s.index for s in record.steps if is_judged(s)] == [1, 2]
    assert [[c.purpose for c in s.calls] for s in record.steps] == [
        [],
        ["judge"],
        ["judge"],
        [],
        [],
    ]
    scores = {"originality": 3, "elaboration": 2, "groundedness": 2}
    assert [s.info["judge"] for s in judged] == [scores, scores]
    metrics = b.episode_metrics(record)
    assert {k: metrics[k] for k in (*scores, "judged_steps", "judge_missing")} == {
        "originality": 3.0,
        "elaboration": 2.0,
        "groundedness": 2.0,
        "judged_steps": 2,
        "judge_missing": 0,
    }


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
    assert (metrics["judged_steps"], metrics["judge_missing"]) == (12, 0)
    assert (metrics["originality"], metrics["elaboration"], metrics["groundedness"]) == (
        3.0,
        3.0,
        4.0,
    )
    record = next(iter(result.records()))
    judge_calls = [c for s in record.steps for c in s.calls if c.purpose == "judge"]
    assert (len(record.steps), record.n_calls, len(judge_calls)) == (48, 60, 12)


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
        (
            {"attempts": 0},
            "escape option attempts (attempts per scenario, §3.3; a positive integer, the "
            "paper's is 4): Input should be greater than 0, got 0",
        ),
        (
            {"attempts": True},
            "escape option attempts (attempts per scenario, §3.3; a positive integer, the "
            "paper's is 4): Input should be a valid integer, got true",
        ),
        (
            {"max_steps": "many"},
            "escape option max_steps (step budget of one attempt; a positive integer, 50 when "
            'the paper states none): Input should be a valid integer, got "many"',
        ),
        (
            {"crafting": "sideways"},
            "escape option crafting (craft(base, ingredient) order: ordered (MUTATE) or "
            "unordered (EscapeBench)): Input should be 'ordered' or 'unordered', got "
            '"sideways"',
        ),
        (
            {"scenarios": "/no/such/dir"},
            "escape option scenarios (scenario YAMLs of split `custom`: a directory or one "
            'file): Value error, no such file or directory, got "/no/such/dir"',
        ),
        (
            {"colour": "red"},
            "escape has no option 'colour'; its options: attempts, max_steps, "
            "meaningless_limit, crafting, extra_paths, scenarios",
        ),
    ],
)
def test_bad_benchmark_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        EscapeBenchmark(**options)
    assert str(refused.value) == message


def test_options_default_to_the_papers_and_keep_the_scenarios_path_resolved() -> None:
    assert EscapeBenchmark().config == EscapeOptions(
        attempts=4, max_steps=50, meaningless_limit=20, crafting="ordered", scenarios=None
    )
    b = bench(attempts=2)
    assert b.config.scenarios == str(CELL.resolve())
    assert b.options == {"scenarios": str(CELL.resolve()), "attempts": 2}
    assert b.splits == ("mutate", "custom")
    assert b.max_steps(cell_instance(b)) == 2 * 50
