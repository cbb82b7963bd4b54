"""The creativebench-v1 protocol as an env: one program per task, the sandbox's verdict, the
constraint judge's calls in the step, the outcome at the end."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.creativebench.env import CreativeEnv, Services, task_view
from forkingpaths.benchmarks.creativebench.novelty import ngram_distance
from forkingpaths.benchmarks.creativebench.tasks import (
    ComboTask,
    ExploreTask,
    explore_levels,
    load_combo,
    load_explore,
)
from forkingpaths.core.errors import ConfigError

RELEASE_EXPLORE = Path(__file__).parent / "fixtures" / "release_explore.jsonl"
COMPLIANT = json.dumps({"compliant": True, "violations": []})


@pytest.fixture
async def services() -> AsyncIterator[Services]:
    shared = Services(embedding="none", workers=1)
    yield shared
    await shared.aclose()


def release_levels() -> list[ExploreTask]:
    """Problem 7 of the release fixture: level 0, then "no slicing", then "no modulo"."""
    tasks, errors = load_explore(RELEASE_EXPLORE)
    assert errors == []
    return explore_levels(tasks)["7"]


def first_combo() -> ComboTask:
    tasks, errors = load_combo(None)
    assert errors == []
    return tasks[0]


async def test_an_explore_episode_is_one_step_per_level_and_the_judge_calls_are_the_steps(
    services: Services,
) -> None:
    levels = release_levels()
    judge = FakeChatModel([COMPLIANT])
    env = CreativeEnv("explore", levels, services, judge=judge)
    first = env.reset(seed=42, options={"solver_model": "other/solver"})
    assert first.text == levels[0].question
    assert first.data == {
        **task_view("explore", levels[0]),
        "initial_info": {
            "subset": "explore",
            "embedding": "none",
            "sandbox_python": services.python,
            "judge": "fake/model",
            "judge_is_solver": False,
        },
    }

    level0 = await env.astep(levels[0].reference_solution)
    isolation = services.sandbox().isolation
    assert (level0.reward, level0.terminated, level0.truncated, level0.calls) == (
        0.0,
        False,
        False,
        [],
    )
    assert level0.info == {
        "level": 0,
        "verdict": "PASSED",
        "isolation": isolation,
        "detail": "",
        "no_code": False,
        "violations": [],
        "quality": 1.0,
        "baseline_solution": True,
        "valid": True,
    }
    # The next observation is the next level, as a solver is shown it.
    assert level0.observation.data == task_view("explore", levels[1])
    assert level0.observation.text == (
        f"{levels[1].question}\n\nConstraints:\n- Slicing the list is not allowed."
    )

    # The level-0 program again: it slices, an inferred (advisory) finding the judge dismisses.
    level1 = await env.astep(levels[0].reference_solution)
    assert [c.purpose for c in level1.calls] == ["constraint-judge"]
    assert level1.calls[0].response == COMPLIANT
    assert level1.info["advisory_violations"] == [
        {
            "rule": "nodes:Slice",
            "detail": "Slice construct: breaks constraint 1 (Slicing the list is not allowed.)",
            "line": 2,
            "inferred": True,
        }
    ]
    assert level1.info["judge"] == {"compliant": True, "reasons": "compliant"}
    assert (level1.info["quality"], level1.info["novelty"]) == (1.0, 0.0)
    assert level1.info["baseline"] == "run-level0" and not level1.terminated

    level2 = await env.astep(levels[2].reference_solution)
    assert (level2.terminated, level2.truncated, level2.observation.text) == (True, False, "PASSED")
    assert level2.observation.data == {
        "subset": "explore",
        "outcome": {"subset": "explore", "levels": 3, "passed_levels": 3},
    }
    expected = ngram_distance(levels[2].reference_solution, levels[0].reference_solution)
    assert level2.info["novelty"] == expected and level2.info["embedding_distance"] is None
    assert len(judge.requests) == 2


async def test_a_combo_episode_is_one_step_and_an_answer_without_code_is_invalid(
    services: Services,
) -> None:
    task = first_combo()
    env = CreativeEnv("combo", [task], services, judge=FakeChatModel([COMPLIANT]))
    for answer, verdict in (("", "RUNTIME_ERROR"), ("I cannot write it.", "SYNTAX_ERROR")):
        start = env.reset(seed=0)
        assert start.data["initial_info"]["judge"] == "none"  # Combo is never judged
        step = await env.astep(answer)
        assert step.terminated and not step.truncated
        assert (step.info["verdict"], step.info["demo_verdict"]) == (verdict, verdict)
        assert (step.info["no_code"], step.info["valid"], step.info["quality"]) == (
            True,
            False,
            0.0,
        )
        assert step.observation.text == f"{verdict}: {step.info['detail']}"
        assert step.observation.data == {
            "subset": "combo",
            "outcome": {"subset": "combo", "passed": False},
        }
    env.reset(seed=0)
    solved = await env.astep(task.canonical_solution)
    assert solved.observation.text == "PASSED" and solved.info["valid"] is True
    assert solved.observation.data["outcome"] == {"subset": "combo", "passed": True}
    assert solved.calls == []


async def test_a_judge_that_is_the_solvers_model_is_recorded_and_said_once(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    levels = release_levels()
    judge = FakeChatModel([COMPLIANT])
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        env = CreativeEnv("explore", levels, services, judge=judge)
        start = env.reset(seed=0, options={"solver_model": "fake/model"})
        assert start.data["initial_info"]["judge_is_solver"] is True
    warnings = [m for m in caplog.messages if "judge is the solver's own model" in m]
    assert warnings == [
        "creativebench: the constraint judge is the solver's own model fake/model; it judges "
        "its own answers (pass --role judge=MODEL for an independent judge)"
    ]
    alone = CreativeEnv("explore", levels, services).reset(options={"solver_model": "fake/model"})
    assert alone.data["initial_info"]["judge"] == "none"
    assert alone.data["initial_info"]["judge_is_solver"] is False


def test_an_env_is_built_for_its_subsets_tasks_only() -> None:
    services = Services(embedding="none")
    with pytest.raises(ConfigError, match='subset: expected one of combo, explore, got "fusion"'):
        CreativeEnv("fusion", [first_combo()], services)
    with pytest.raises(ConfigError, match="a combo episode plays ComboTasks"):
        CreativeEnv("combo", release_levels(), services)
    with pytest.raises(ConfigError, match="a combo episode plays one task, got 2"):
        CreativeEnv("combo", [first_combo(), first_combo()], services)
