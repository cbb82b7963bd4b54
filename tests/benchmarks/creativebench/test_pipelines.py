"""Construction pipelines: Combo (Algorithm 1) and Explore (Algorithm 2) end to end with the
scripted policies and a real sandbox; resume, each filter, the repair loop, Explore's stops."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.benchmarks.creativebench.constraints import check_constraints
from forkingpaths.benchmarks.creativebench.construction.combo import (
    WordCountEmbedding,
    build_combo,
    cosine,
    run_combo_pipeline,
)
from forkingpaths.benchmarks.creativebench.construction.explore import (
    build_explore,
    run_explore_pipeline,
)
from forkingpaths.benchmarks.creativebench.construction.harness import IOCase, build_test_function
from forkingpaths.benchmarks.creativebench.construction.replies import (
    drop_main_guard,
    read_audit,
    read_constraint,
    read_fusion,
    read_inputs,
)
from forkingpaths.benchmarks.creativebench.construction.sources import (
    ExploreSeed,
    SourceComponent,
    components_from_combo,
    load_components,
)
from forkingpaths.benchmarks.creativebench.construction.workdir import (
    CALLS_FILE,
    COMBO_ROWS,
    EXPLORE_ROWS,
    REPORT_FILE,
    STATE_FILE,
    PipelineDir,
    PipelineReport,
)
from forkingpaths.benchmarks.creativebench.pipeline_scripted import (
    BROKEN_MARKER,
    CATALOGUE,
    LADDER,
    PipelinePolicy,
    apply_workarounds,
)
from forkingpaths.benchmarks.creativebench.sandbox import Sandbox, Verdict
from forkingpaths.benchmarks.creativebench.tasks import Constraint, load_combo, load_explore
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, SpecMismatch
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel

COMPONENTS = [
    SourceComponent(
        "words", "Language Fundamentals", "def count_words(text):\n    return len(text.split())\n"
    ),
    SourceComponent(
        "graph",
        "Algorithms & Problem Solving",
        "def degree(edges, node):\n    return sum(node in edge for edge in edges)\n",
        "Degree of a node in an edge list.",
    ),
    SourceComponent(
        "stack",
        "Data Structures & Collections",
        "def balanced(text):\n    depth = 0\n    for c in text:\n"
        "        depth += {'(': 1, ')': -1}.get(c, 0)\n"
        "        if depth < 0:\n            return False\n    return depth == 0\n",
    ),
]

RANK_BASE = """def rank_scores(scores):
    totals = {}
    for name, points in scores:
        totals[name] = totals.get(name, 0) + points
    if not totals:
        return []
    best = max(totals.values())
    ordered = sorted(totals, key=lambda n: (-totals[n], n))
    return [[n, totals[n], totals[n] == best] for n in ordered]
"""

RANK_TESTS = """def test():
    assert rank_scores([]) == []
    assert rank_scores([["a", 3], ["b", 5], ["a", 4]]) == [["a", 7, True], ["b", 5, False]]
    assert rank_scores([["y", 2], ["x", 2]]) == [["x", 2, True], ["y", 2, True]]
    assert rank_scores([["solo", -1]]) == [["solo", -1, True]]


if __name__ == "__main__":
    test()
"""

RANK_SEED = ExploreSeed(
    problem_id="rank-scores",
    question=(
        "Implement `rank_scores(scores)`: given `[name, points]` pairs, total the points per "
        "name and return `[name, total, is_best]` lists, highest total first, ties by name."
    ),
    function_signature="def rank_scores(scores: list) -> list:",
    base_solution=RANK_BASE,
    test_code=RANK_TESTS,
    difficulty="easy",
    domain="Data Structures & Collections",
)
"""Uses sorting, max, a comprehension and a for loop: the scripted solver works around those
four and then meets `while` (its own rewrites use it), which it cannot avoid."""

RANK_LEVELS = 4

SECOND_QUESTION_COSINE = 0.4632
"""Cosine (4 places) of the word-count embeddings of the first two questions the scripted
pipeline writes from COMPONENTS with seed 0."""


class RecordingPolicy:
    """A PipelinePolicy that keeps every request it answered (test double)."""

    def __init__(self, policy: PipelinePolicy) -> None:
        self.policy = policy
        self.requests: list[list[Message]] = []

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        self.requests.append(list(messages))
        return self.policy.respond(messages, params)


def scripted(policy: Any = None) -> ScriptedModel:
    return ScriptedModel(
        "scripted/creativebench-pipeline", policy or PipelinePolicy(), ModelRuntime()
    )


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox() as box:
        yield box


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def state(out: Path) -> list[dict[str, Any]]:
    return read_jsonl(out / STATE_FILE)


def calls(out: Path) -> list[dict[str, Any]]:
    return read_jsonl(out / CALLS_FILE)


# ---- Combo ----


async def test_combo_end_to_end_rows_load_and_pass(sandbox: Sandbox, tmp_path: Path) -> None:
    report = await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=3)
    assert report.kept == 3 and report.dropped == {} and report.finished == 3
    assert PipelineReport.model_validate_json((tmp_path / REPORT_FILE).read_text()) == report
    tasks, errors = load_combo(tmp_path / COMBO_ROWS)
    assert errors == [] and len(tasks) == 3
    for task in tasks:
        assert len(task.domains) == 2 and len(set(task.domains)) == 2
        assert len(task.source_solutions) == 2
        assert {c.code for c in COMPONENTS} >= set(task.source_solutions)
        assert task.demo_test_func.count("assert ") == 3
        assert task.full_test_func.count("assert ") > 3
        assert "Python" in task.question and "assert " in task.question
        assert task.difficulty == "easy"  # the default stand-in solves 3 of 5 samples
        for tests in (task.demo_test_func, task.full_test_func):
            assert (await sandbox.run(task.canonical_solution, tests)).verdict == Verdict.PASSED
    purposes = {c["purpose"] for c in calls(tmp_path)}
    assert purposes == {"fuse", "inputs", "question", "difficulty", "audit"}
    record = calls(tmp_path)[0]
    assert {"item", "model", "prompt_tokens", "completion_tokens", "response"} <= set(record)
    assert report.calls == len(calls(tmp_path))


async def test_combo_resume_skips_finished_items(sandbox: Sandbox, tmp_path: Path) -> None:
    await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=2)
    before = calls(tmp_path)
    report = await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=3)
    after = calls(tmp_path)
    assert after[: len(before)] == before
    assert {c["item"] for c in after[len(before) :]} == {"fused-0-0002"}
    assert report.resumed == 2 and report.kept == 3
    again = await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=3)
    assert len(calls(tmp_path)) == len(after) and again.resumed == 3
    assert [r["id"] for r in read_jsonl(tmp_path / COMBO_ROWS)] == [
        "fused-0-0000",
        "fused-0-0001",
        "fused-0-0002",
    ]


async def test_combo_refuses_a_directory_built_with_other_settings(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=1)
    with pytest.raises(SpecMismatch, match="difficulty_samples: 5 -> 2"):
        await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=1, difficulty_samples=2)


def test_interrupted_commit_is_rolled_back(tmp_path: Path) -> None:
    directory = PipelineDir(tmp_path, "combo", {"pipeline": "combo"})
    directory.open()
    directory.commit({"item": "a", "index": 0, "status": "kept"}, {"id": "a", "question": "q"})
    # A crash after the row and before its state line, then a torn state line.
    with (tmp_path / COMBO_ROWS).open("a") as handle:
        handle.write(json.dumps({"id": "b", "question": "q"}) + "\n")
    with (tmp_path / STATE_FILE).open("a") as handle:
        handle.write('{"item": "b", "ind')
    reopened = PipelineDir(tmp_path, "combo", {"pipeline": "combo"})
    reopened.open()
    assert [r["id"] for r in reopened.rows] == ["a"]
    assert [r["id"] for r in read_jsonl(tmp_path / COMBO_ROWS)] == ["a"]
    assert [e["item"] for e in state(tmp_path)] == ["a"]


async def test_difficulty_drops_problems_solved_in_every_sample(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    report = await build_combo(
        scripted(PipelinePolicy(solve="always")), sandbox, COMPONENTS, tmp_path, n=2
    )
    assert report.kept == 0 and report.dropped == {"too_easy": 2}
    assert all(e["detail"] == {"solved": 5, "samples": 5} for e in state(tmp_path))
    difficulty = [c for c in calls(tmp_path) if c["purpose"] == "difficulty"]
    assert len(difficulty) == 2 * 5
    assert not any(c["purpose"] == "audit" for c in calls(tmp_path))


async def test_difficulty_keeps_unsolved_problems_as_hard(sandbox: Sandbox, tmp_path: Path) -> None:
    report = await build_combo(
        scripted(PipelinePolicy(solve="never")), sandbox, COMPONENTS, tmp_path, n=1
    )
    assert report.kept == 1
    [row] = read_jsonl(tmp_path / COMBO_ROWS)
    assert row["difficulty"] == "hard"


async def test_quality_audit_drops_a_failed_rule_and_logs_why(
    sandbox: Sandbox, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    policy = PipelinePolicy(fail_rules=("numerical_precision",))
    with caplog.at_level(logging.WARNING):
        report = await build_combo(scripted(policy), sandbox, COMPONENTS, tmp_path, n=1)
    assert report.kept == 0 and report.dropped == {"quality_audit": 1}
    [entry] = state(tmp_path)
    assert list(entry["detail"]["failed_rules"]) == ["numerical_precision"]
    assert "configured to fail" in entry["detail"]["failed_rules"]["numerical_precision"]
    assert "numerical_precision" in caplog.text
    assert not (tmp_path / COMBO_ROWS).exists() or read_jsonl(tmp_path / COMBO_ROWS) == []


async def test_diversity_flags_repeated_questions(sandbox: Sandbox, tmp_path: Path) -> None:
    report = await build_combo(
        scripted(PipelinePolicy(program="schedule")), sandbox, COMPONENTS, tmp_path, n=3
    )
    assert report.kept == 3 and report.flagged == 2
    rows = read_jsonl(tmp_path / COMBO_ROWS)
    assert "diversity_flag" not in rows[0]
    for row in rows[1:]:
        assert row["diversity_flag"]["similar_to"] == rows[0]["id"]
        assert row["diversity_flag"]["cosine"] > 0.99


async def test_diversity_leaves_distinct_questions_unflagged(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=6)
    rows = read_jsonl(tmp_path / COMBO_ROWS)
    seen: set[str] = set()
    entries = [p.entry for p in CATALOGUE]
    for row in rows:
        [entry] = [e for e in entries if e in row["question"]]
        assert ("diversity_flag" in row) == (entry in seen)
        seen.add(entry)
    assert len(seen) >= 2


async def test_diversity_threshold_is_a_strict_bound(sandbox: Sandbox, tmp_path: Path) -> None:
    """A question is flagged only when its cosine with an earlier kept one exceeds the
    threshold: exactly at the threshold it stays unflagged, one float below it is flagged."""
    await build_combo(scripted(), sandbox, COMPONENTS, tmp_path / "probe", n=2)
    first, second = (r["question"] for r in read_jsonl(tmp_path / "probe" / COMBO_ROWS))
    similarity = cosine(*await WordCountEmbedding().embed([first, second]))
    assert round(similarity, 4) == SECOND_QUESTION_COSINE
    await build_combo(
        scripted(), sandbox, COMPONENTS, tmp_path / "at", n=2, diversity_threshold=similarity
    )
    at = read_jsonl(tmp_path / "at" / COMBO_ROWS)
    assert [r["question"] for r in at] == [first, second]
    assert ["diversity_flag" in r for r in at] == [False, False]
    below = math.nextafter(similarity, 0.0)
    await build_combo(
        scripted(), sandbox, COMPONENTS, tmp_path / "below", n=2, diversity_threshold=below
    )
    flagged = read_jsonl(tmp_path / "below" / COMBO_ROWS)
    assert [r["question"] for r in flagged] == [first, second]
    assert "diversity_flag" not in flagged[0]
    assert flagged[1]["diversity_flag"] == {
        "similar_to": "fused-0-0000",
        "cosine": SECOND_QUESTION_COSINE,
    }


async def test_repair_feeds_the_sandbox_error_back(sandbox: Sandbox, tmp_path: Path) -> None:
    policy = RecordingPolicy(PipelinePolicy(broken_first=True))
    report = await build_combo(scripted(policy), sandbox, COMPONENTS, tmp_path, n=1)
    assert report.kept == 1
    assert state(tmp_path)[0]["detail"]["repairs"] == 1
    repairs = [r for r in policy.requests if r[1].content.startswith(prompts.REPAIR_HEADING)]
    assert len(repairs) == 1
    error = repairs[0][1].content.split(prompts.SECTION_ERROR, 1)[1]
    assert "NameError" in error and BROKEN_MARKER in error
    [row] = read_jsonl(tmp_path / COMBO_ROWS)
    assert BROKEN_MARKER not in row["canonical_solution"]


async def test_fusion_that_stays_broken_is_dropped(sandbox: Sandbox, tmp_path: Path) -> None:
    report = await build_combo(
        scripted(PipelinePolicy(broken_first=True)),
        sandbox,
        COMPONENTS,
        tmp_path,
        n=1,
        repair_attempts=0,
    )
    assert report.dropped == {"fusion_failed": 1}
    assert BROKEN_MARKER in state(tmp_path)[0]["detail"]["error"]


async def test_combo_refuses_too_few_domains(sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="k=3 needs components from at least 3 domains"):
        await build_combo(scripted(), sandbox, COMPONENTS[:2], tmp_path, n=1, k=3)
    with pytest.raises(ConfigError, match="diversity_threshold"):
        await build_combo(scripted(), sandbox, COMPONENTS, tmp_path, n=1, diversity_threshold=2)


def test_components_come_from_combo_source_solutions() -> None:
    tasks, _ = load_combo()
    components = components_from_combo(tasks)
    assert len({c.domain for c in components}) >= 2
    assert {c.code for c in components} <= {s for t in tasks for s in t.source_solutions}


def test_components_file_refuses_bad_rows_by_line(tmp_path: Path) -> None:
    path = tmp_path / "components.jsonl"
    good = {"id": "a", "domain": "Others", "code": "def f():\n    return 1\n"}
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "not json",
                json.dumps({"id": "b", "domain": "", "code": "x = 1"}),
                json.dumps(good),
            ]
        )
        + "\n"
    )
    components, errors = load_components(path)
    assert [c.id for c in components] == ["a"]
    assert [(e.line, e.field) for e in errors] == [(2, ""), (3, "domain"), (4, "id")]
    assert str(errors[1]).startswith(f"{path}:3: domain: expected a non-empty string")


# ---- reading replies and building tests ----


def test_read_fusion_needs_solution_demo_and_entry() -> None:
    solution = "def helper(x):\n    return x\n\ndef solve(x):\n    return helper(x) + 1\n"
    demo = "def demo_testing():\n    print(solve(1))\n"
    text = f"Entry point: `solve`\n```python\n{solution}```\n```python\n{demo}```"
    fusion, reason = read_fusion(text)
    assert fusion is not None and reason == ""
    assert fusion.entry == "solve" and "demo_testing" in fusion.demo
    missing = read_fusion(f"```python\n{solution}```")
    assert missing == (None, "no ```python block defining demo_testing()")
    ambiguous = read_fusion(f"```python\n{solution}```\n```python\n{demo}```")
    assert ambiguous[0] is None and "Entry point" in ambiguous[1]
    wrong = read_fusion(f"Entry point: nope\n```python\n{solution}```\n```python\n{demo}```")
    assert wrong[0] is None and "'nope' is not a top-level function" in wrong[1]


def test_drop_main_guard_removes_only_the_guard() -> None:
    code = 'def f():\n    return 1\n\nif __name__ == "__main__":\n    print(f())\n'
    assert drop_main_guard(code) == "def f():\n    return 1\n"


def test_read_inputs_checks_arity_and_count() -> None:
    assert read_inputs("```json\n[[1, 2], [3, 4], [5, 6], [1, 2]]\n```", (2, 2)) == (
        [[1, 2], [3, 4], [5, 6]],
        "",
    )
    value, reason = read_inputs("[[1], [2, 3], [4, 5]]", (2, 2))
    assert value is None and "argument list 1 has 1 values" in reason
    value, reason = read_inputs("[[1], [2]]", (1, None))
    assert value is None and "only 2 distinct" in reason


def test_read_audit_needs_every_rule() -> None:
    verdicts = {rule: {"pass": True, "reason": ""} for rule in prompts.AUDIT_RULES}
    result, _ = read_audit(json.dumps({"rules": verdicts}))
    assert result is not None and all(ok for ok, _ in result.values())
    del verdicts["test_completeness"]
    result, reason = read_audit(json.dumps({"rules": verdicts}))
    assert result is None and reason == "no boolean verdict for test_completeness"


def test_read_constraint_refuses_repeats_and_bad_checks() -> None:
    first = {
        "constraint": "Do not use sorted().",
        "blocked_technique": "sorting",
        "expected_impact": "manual ordering",
        "verification_hint": "a call of sorted",
        "check": {"calls": ["sorted"]},
    }
    constraint, reason = read_constraint(json.dumps(first), [])
    assert reason == "" and constraint is not None
    assert constraint.check == {"calls": ("sorted",)}
    again = read_constraint(json.dumps({**first, "constraint": "No sorting."}), [constraint])
    assert again[0] is None and "constraint 1 in force already blocks" in again[1]
    bad = read_constraint(json.dumps({**first, "check": {"nodes": ["Loop"]}}), [])
    assert bad[0] is None and "'Loop' is not an ast node class" in bad[1]
    empty = read_constraint(json.dumps({**first, "expected_impact": ""}), [])
    assert empty[0] is None and "`expected_impact` must be a non-empty string" in empty[1]


async def test_built_tests_compare_floats_with_a_tolerance(sandbox: Sandbox) -> None:
    solution = "def third(x):\n    return [x / 3, {'k': x / 3}]\n"
    cases = [IOCase((1,), repr([1 / 3 + 1e-12, {"k": 1 / 3}]), approximate=True)]
    tests = build_test_function("third", cases)
    assert (await sandbox.run(solution, tests)).verdict == Verdict.PASSED
    wrong = build_test_function("third", [IOCase((1,), "[0.5, {'k': 0.5}]", approximate=True)])
    assert (await sandbox.run(solution, wrong)).verdict == Verdict.WRONG_ANSWER


# ---- Explore ----


async def build_rank(
    sandbox: Sandbox, out: Path, seeds: list[ExploreSeed] | None = None, **options: Any
) -> PipelineReport:
    model = scripted()
    return await build_explore(model, model, model, sandbox, seeds or [RANK_SEED], out, **options)


async def test_explore_climbs_until_the_first_unsolved_level(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    report = await build_rank(sandbox, tmp_path)
    assert report.kept == RANK_LEVELS + 1
    assert report.stopped == {"unsolved_level": 1} and report.dropped == {"unsolved_level": 1}
    tasks, errors = load_explore(tmp_path / EXPLORE_ROWS)
    assert errors == []
    assert [t.level for t in tasks] == list(range(RANK_LEVELS + 1))
    assert tasks[0].reference_solution == RANK_BASE and tasks[0].constraints == ()
    techniques = [c.blocked_technique for c in tasks[-1].constraints_detail]
    assert techniques == ["built-in sorting", "built-in max and min", "comprehensions", "for loops"]
    for task in tasks:
        assert len(task.constraints) == task.level
        result = await sandbox.run(task.reference_solution, task.test_code)
        assert result.verdict == Verdict.PASSED
        assert check_constraints(task.reference_solution, task.constraints_detail) == []
    done = state(tmp_path)[-1]
    assert done["status"] == "done" and done["levels"] == RANK_LEVELS + 1
    assert "while" in done["detail"]["constraint"].lower()
    failing = [c for c in calls(tmp_path) if c["item"] == f"rank-scores-L{RANK_LEVELS + 1}"]
    assert [c["purpose"] for c in failing].count("refine") == 3  # the default attempts
    assert {c["purpose"] for c in calls(tmp_path)} == {"constrain", "refine", "constraint-judge"}


async def test_explore_stops_at_max_levels(sandbox: Sandbox, tmp_path: Path) -> None:
    report = await build_rank(sandbox, tmp_path, max_levels=2)
    assert report.kept == 3 and report.stopped == {"max_levels": 1} and report.dropped == {}
    assert [r["level"] for r in read_jsonl(tmp_path / EXPLORE_ROWS)] == [0, 1, 2]


async def test_explore_resumes_from_the_last_kept_level(sandbox: Sandbox, tmp_path: Path) -> None:
    first = tmp_path / "first"
    await build_rank(sandbox, first)
    complete = read_jsonl(first / EXPLORE_ROWS)
    again = await build_rank(sandbox, first)
    assert again.resumed == 1 and len(calls(first)) == again.calls
    # Simulate a run killed after level 2 was committed.
    crashed = tmp_path / "crashed"
    await build_rank(sandbox, crashed)
    lines = (crashed / STATE_FILE).read_text().splitlines(keepends=True)
    (crashed / STATE_FILE).write_text("".join(lines[:3]))
    calls_before = len(calls(crashed))
    report = await build_rank(sandbox, crashed)
    assert report.resumed == 0 and report.kept == RANK_LEVELS + 1
    assert read_jsonl(crashed / EXPLORE_ROWS) == complete
    resumed_items = {c["item"] for c in calls(crashed)[calls_before:]}
    assert "rank-scores-L1" not in resumed_items and "rank-scores-L3" in resumed_items


async def test_explore_drops_a_seed_whose_base_fails(sandbox: Sandbox, tmp_path: Path) -> None:
    broken = ExploreSeed(
        problem_id="broken",
        question="Return 1.",
        function_signature="def one() -> int:",
        base_solution="def one():\n    return 2\n",
        test_code=RANK_TESTS.replace("rank_scores([]) == []", "one() == 1"),
    )
    report = await build_rank(sandbox, tmp_path, seeds=[broken, RANK_SEED], max_levels=1)
    assert report.dropped == {"base_failed": 1} and report.stopped["max_levels"] == 1
    assert {r["problem_id"] for r in read_jsonl(tmp_path / EXPLORE_ROWS)} == {"rank-scores"}


def test_scripted_workarounds_keep_behaviour_and_lift_the_rules() -> None:
    blocked = [t.name for t in LADDER[:6]]
    code = apply_workarounds(RANK_BASE, blocked)
    constraints = [
        Constraint(t.constraint, t.name, t.expected_impact, t.verification_hint, t.check)
        for t in LADDER[:6]
    ]
    assert check_constraints(code, constraints) == []
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(code + "\n" + RANK_TESTS, namespace)  # runs test(): raises if behaviour changed


# ---- entry points ----


async def test_run_pipelines_build_models_from_ids(tmp_path: Path) -> None:
    combo = await run_combo_pipeline(
        "scripted/echo", tmp_path / "combo", n=1, components=_components_file(tmp_path)
    )
    assert combo.dropped == {"fusion_unreadable": 1} and combo.calls == 3
    seeds = tmp_path / "seeds.jsonl"
    row = {
        "problem_id": RANK_SEED.problem_id,
        "level": 0,
        "question": RANK_SEED.question,
        "function_signature": RANK_SEED.function_signature,
        "constraints": [],
        "constraints_detail": [],
        "test_code": RANK_TESTS,
        "reference_solution": RANK_BASE,
    }
    seeds.write_text(json.dumps(row) + "\n")
    explore = await run_explore_pipeline("scripted/echo", tmp_path / "explore", seeds=seeds)
    assert explore.kept == 1 and explore.finished == 1 and sum(explore.dropped.values()) == 1
    with pytest.raises(ConfigError, match="unknown problem ids nope"):
        await run_explore_pipeline(
            "scripted/echo", tmp_path / "other", seeds=seeds, problems=["nope"]
        )


def _components_file(tmp_path: Path) -> Path:
    path = tmp_path / "components.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": c.id, "domain": c.domain, "code": c.code}) + "\n" for c in COMPONENTS
        )
    )
    return path
