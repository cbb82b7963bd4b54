"""CreativeBench protocol end to end: sandbox verdicts, constraints, novelty, metrics, CLI."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import FakeChatModel, run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.creativebench import benchmark as benchmark_module
from forkingpaths.benchmarks.creativebench import constraints as constraints_module
from forkingpaths.benchmarks.creativebench import metrics as metrics_module
from forkingpaths.benchmarks.creativebench import novelty as novelty_module
from forkingpaths.benchmarks.creativebench.agents.solver import ReferenceSolver
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.benchmarks.creativebench.env import NOVELTY_CODE_LIMIT, cap_code
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions
from forkingpaths.models.mockserver import run_mock_server_in_thread

PROBLEM = "count-primes"
FIXTURES = Path(__file__).parent / "fixtures"
RELEASE_EXPLORE = FIXTURES / "release_explore.jsonl"


class LevelZeroEverywhere:
    """Answers every Explore level with the level-0 reference: correct, but it ignores the
    constraints (the checker must catch it)."""

    def __init__(self, bench: CreativeBenchmark) -> None:
        self.level0 = bench.explore_tasks()[PROBLEM][0].reference_solution

    def reset(self, instance: object, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        return Decision(self.level0)

    def state(self) -> dict[str, object]:
        return {}


def record_for(instance_id: str) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t",
        benchmark="creativebench-v1",
        split="explore",
        instance_id=instance_id,
        seed=0,
        agent="x",
    )


async def test_constraint_violations_zero_the_quality_of_a_passing_solution() -> None:
    bench = CreativeBenchmark(embedding="none")
    try:
        instance = next(i for i in bench.instances("explore") if i.id == PROBLEM)
        record = record_for(PROBLEM)
        await bench.run_episode(instance, LevelZeroEverywhere(bench), record)  # type: ignore[arg-type]
    finally:
        await bench.aclose()
    level0, *constrained = record.steps
    assert level0.info["verdict"] == "PASSED" and level0.info["quality"] == 1.0
    assert "novelty" not in level0.info  # the baseline itself
    for step in constrained:
        assert step.info["verdict"] == "PASSED"
        assert step.info["violations"] and step.info["quality"] == 0.0
        assert step.info["baseline"] == "run-level0"
        # Identical to the baseline: no novelty at all (4-gram term alone with `none`).
        assert step.info["novelty"] == 0.0 and step.info["embedding_distance"] is None
    metrics = bench.episode_metrics(record)
    assert metrics["pass_at_1"] == pytest.approx(1 / len(record.steps))
    assert metrics["creativity"] == 0.0


def test_reference_run_passes_everything_and_scores_novelty(tmp_path: Path) -> None:
    result = run(
        "creativebench",
        agent="reference",
        split="all",
        instances=["combo-01", PROBLEM],
        runs_dir=tmp_path,
        options=RunOptions(progress=False),
    )
    metrics = result.metrics["metrics"]
    assert metrics["combo_pass_at_1"] == 1.0 and metrics["explore_pass_at_1"] == 1.0
    assert 0 < metrics["combo_novelty"] <= 3 and 0 < metrics["explore_novelty"] <= 3
    assert metrics["combo_creativity"] == pytest.approx(metrics["combo_novelty"])
    assert metrics["isolation"]
    bench = CreativeBenchmark()
    for record in result.records():
        assert bench.episode_metrics(record) == record.metrics


def test_scripted_solver_answers_the_references_and_the_judge_rates_them(tmp_path: Path) -> None:
    result = run(
        "creativebench",
        agent="vanilla",
        model="scripted/creative-solver",
        split="explore",
        instances=[PROBLEM],
        roles={"judge": "scripted/constraint-judge"},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    (record,) = list(result.records())
    # Seed 42 misses no level of count-primes (`scripted.misses`): every reference passes.
    assert {s.info["verdict"] for s in record.steps} == {"PASSED"}
    assert all(s.info["baseline"] == "run-level0" for s in record.steps[1:])
    # The judge rates every passed constrained level (App. B.1), each compliant.
    judged = [s for s in record.steps if "judge" in s.info]
    assert [s.info["level"] for s in judged] == [1, 2, 3, 4]
    assert all(s.info["judge"]["compliant"] for s in judged)
    metrics = result.metrics["metrics"]
    assert metrics["explore_pass_at_1"] == 1.0 and metrics["explore_no_code"] == 0
    assert metrics["explore_creativity"] == pytest.approx(metrics["explore_novelty"])


def test_bad_options_are_refused_naming_option_value_and_what_is_allowed() -> None:
    timeout = "creativebench option timeout (sandbox seconds per execution (wall and CPU), > 0;"
    workers = "creativebench option workers (sandbox pool size, a positive integer"
    RELEASE = "(the paper's release asks its sandbox for 30))"
    for options, message in (
        ({"timeout": 0}, f"{timeout} default 10 {RELEASE}: Input should be greater than 0, got 0"),
        ({"timeout": True}, f"{timeout} default 10 {RELEASE}: Input should be a valid number"),
        ({"memory_mb": 10}, "option memory_mb (sandbox address-space limit per execution in MB"),
        ({"workers": 0}, f"{workers} (default: one per core)): Input should be greater than or"),
        ({"tasks": "/no/such.jsonl"}, "Value error, '/no/such.jsonl' does not exist"),
        (
            {"colour": 1},
            "creativebench has no option 'colour'; its options: tasks, embedding, "
            "embedding_base_url, timeout, memory_mb, sandbox_python, workers",
        ),
    ):
        with pytest.raises(ConfigError) as refused:
            CreativeBenchmark(**options)
        assert message in str(refused.value)


def test_the_tasks_option_is_recorded_as_an_absolute_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(RELEASE_EXPLORE.parent)
    bench = CreativeBenchmark(tasks=RELEASE_EXPLORE.name, timeout=5)
    assert bench.options == {"tasks": str(RELEASE_EXPLORE.resolve()), "timeout": 5}
    assert (bench.config.timeout, bench.services.timeout) == (5.0, 5.0)
    assert [i.id for i in bench.instances("explore")] == ["7"]


def test_exec_and_novelty_json_contracts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text("def add(a, b):\n    return a + b\n")
    tests = tmp_path / "tests.py"
    tests.write_text(
        "def test():\n    assert add(2, 3) == 5\n\nif __name__ == '__main__':\n    test()\n"
    )
    code, out, err = run_cli(
        ["creativebench", "exec", str(solution), "--tests", str(tests), "--json"], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    assert set(result) == {
        "verdict",
        "isolation",
        "duration_s",
        "stdout_tail",
        "stderr_tail",
        "python",
    }
    assert result["verdict"] == "PASSED"
    other = tmp_path / "other.py"
    other.write_text("def add(x, y):\n    total = x\n    total += y\n    return total\n")
    code, out, err = run_cli(
        ["creativebench", "novelty", str(solution), str(other), "--embedding", "none", "--json"],
        capsys,
    )
    assert code == 0, err
    score = json.loads(out)
    assert list(score) == ["ngram_distance", "embedding_distance", "novelty"]
    assert score["embedding_distance"] is None and score["novelty"] == score["ngram_distance"]


def test_import_reports_bad_rows_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "combo.jsonl"
    good = {
        "question": "Write f().",
        "canonical_solution": "def f():\n    return 1\n",
        "demo_test_func": "",
        "full_test_func": "def test():\n    assert f() == 1\n",
        "language": "python",
        "difficulty": "easy",
    }
    rows.write_text(json.dumps(good) + "\n" + "{not json\n")
    _, out, _ = run_cli(["creativebench", "import", str(rows), "--json"], capsys)
    report = json.loads(out)
    assert report["rows"] == 1 and report["kind"] == "combo"
    assert any(":2:" in e for e in report["errors"])


class Answers:
    """Answers every task with one fixed text (prose, a huge program...)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def reset(self, instance: object, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        return Decision(self.text)

    def state(self) -> dict[str, object]:
        return {}


class LevelZeroOfRelease:
    """Answers every level of the release fixture (problem 7) with its level-0 reference, which
    slices: a violation of the inferred "no slicing" rule of levels 1 and 2."""

    def __init__(self, bench: CreativeBenchmark) -> None:
        self.code = bench.explore_tasks()["7"][0].reference_solution

    def reset(self, instance: object, seed: int) -> None: ...

    async def act(self, observation: Observation) -> Decision:
        return Decision(self.code)

    def state(self) -> dict[str, object]:
        return {}


async def play(
    bench: CreativeBenchmark, instance_id: str, agent: Any, **roles: Any
) -> EpisodeRecord:
    instance = bench.instance(instance_id)
    record = record_for(instance_id)
    try:
        await bench.run_episode(instance, agent, record, roles)
    finally:
        await bench.aclose()
    return record


# ---- trials and seeds (App. B.2) ----


def test_trials_zero_one_two_run_with_the_papers_seeds() -> None:
    bench = CreativeBenchmark()
    instance = bench.instance("combo-01")
    assert [bench.episode_seed(instance, t, 0) for t in range(3)] == [42, 43, 44]
    assert bench.episode_seed(bench.instance(PROBLEM), 0, 0) == 42  # the same for every instance
    assert [bench.episode_seed(instance, t, 10) for t in range(3)] == [52, 53, 54]
    assert "temperature 0.1" in (CreativeBenchmark.__doc__ or "")
    assert "42, 43, 44" in (CreativeBenchmark.__doc__ or "")


def test_three_trials_are_three_draws_never_replayed_by_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At temperature 0 the response cache would replay trial 1 into trials 2 and 3 unless each
    request carries its trial's seed (the cache key includes it)."""
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))
    cached = []
    with run_mock_server_in_thread(latency_ms=1) as base_url:
        for _ in range(2):
            result = run(
                "creativebench",
                agent="vanilla",
                model="openai-compat/creative-solver",
                base_url=base_url,
                split="combo",
                instances=["combo-01"],
                trials=3,
                runs_dir=tmp_path / "runs",
                force_new=True,
                options=RunOptions(progress=False),  # the response cache is on
            )
            assert sorted(r.seed for r in result.records()) == [42, 43, 44]
            assert result.metrics["metrics"]["judge"] == "none"  # Combo is never judged
            cached.append([c.cached for r in result.records() for s in r.steps for c in s.calls])
    assert cached[0] == [False, False, False]  # three seeds, three distinct requests
    assert cached[1] == [True, True, True]  # the cache works, each trial from its own entry


# ---- the judge role ----


def test_the_judge_defaults_to_the_agents_model_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="forkingpaths.benchmarks.creativebench.benchmark")
    result = run(
        "creativebench",
        agent="vanilla",
        model="scripted/creative-solver",
        split="explore",
        instances=[PROBLEM, "second-largest"],
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False, concurrency=1),
    )
    assert {r.initial_info["judge"] for r in result.records()} == {"scripted/creative-solver"}
    assert all(r.initial_info["judge_is_solver"] for r in result.records())
    assert all(r.metrics["judge"] == "scripted/creative-solver" for r in result.records())
    assert result.metrics["metrics"]["judge"] == "scripted/creative-solver"
    warnings = [m for m in caplog.messages if "judge is the solver's own model" in m]
    assert len(warnings) == 1


def test_without_any_model_the_static_checker_decides_and_the_judge_is_none(
    tmp_path: Path,
) -> None:
    result = run(
        "creativebench",
        agent="reference",
        split="explore",
        instances=[PROBLEM],
        runs_dir=tmp_path,
        options=RunOptions(progress=False),
    )
    (record,) = list(result.records())
    assert record.initial_info["judge"] == "none" and record.metrics["judge"] == "none"
    assert result.metrics["metrics"]["judge"] == "none"
    assert not any("judge" in s.info for s in record.steps)
    assert result.metrics["metrics"]["explore_pass_at_1"] == 1.0


# ---- inferred rules are advisory ----


async def test_an_inferred_violation_alone_does_not_zero_quality() -> None:
    bench = CreativeBenchmark(embedding="none", tasks=str(RELEASE_EXPLORE))
    record = await play(bench, "7", LevelZeroOfRelease(bench))
    level0, level1, level2 = record.steps
    for step in (level1, level2):
        assert step.info["verdict"] == "PASSED"
        assert step.info["violations"] == []
        (advisory,) = [v for v in step.info["advisory_violations"] if v["rule"] == "nodes:Slice"]
        assert advisory["inferred"] is True
        assert step.info["quality"] == 1.0  # no judge: the hint alone decides nothing
    assert level0.info["quality"] == 1.0


async def test_inferred_violations_reach_the_judge_as_hints_and_it_decides() -> None:
    bench = CreativeBenchmark(embedding="none", tasks=str(RELEASE_EXPLORE))
    verdict = {"compliant": False, "violations": [{"constraint": 1, "why": "slices"}]}
    judge = FakeChatModel([json.dumps(verdict)])
    record = await play(bench, "7", LevelZeroOfRelease(bench), judge=judge)
    assert [s.info["quality"] for s in record.steps] == [1.0, 0.0, 0.0]
    assert record.steps[1].info["judge"]["compliant"] is False
    user_turn = judge.requests[0][0][1].content
    assert constraints_module.STATIC_HINTS.template.splitlines()[0] in user_turn
    assert "Slice construct: breaks constraint 1" in user_turn
    # A judge that dismisses the hint keeps the solution's Quality.
    bench = CreativeBenchmark(embedding="none", tasks=str(RELEASE_EXPLORE))
    lenient = FakeChatModel([json.dumps({"compliant": True, "violations": []})])
    record = await play(bench, "7", LevelZeroOfRelease(bench), judge=lenient)
    assert [s.info["quality"] for s in record.steps] == [1.0, 1.0, 1.0]


async def test_an_explicit_check_violation_stays_final_and_the_judge_is_not_asked() -> None:
    bench = CreativeBenchmark(embedding="none")
    judge = FakeChatModel([json.dumps({"compliant": True, "violations": []})])
    record = await play(bench, PROBLEM, LevelZeroEverywhere(bench), judge=judge)
    assert all(s.info["quality"] == 0.0 for s in record.steps[1:])
    assert all(not v["inferred"] for s in record.steps for v in s.info["violations"])
    assert judge.requests == []


# ---- baselines, no_code, novelty_passed ----


async def test_a_problem_without_level_zero_uses_its_lowest_levels_reference(
    tmp_path: Path,
) -> None:
    rows = RELEASE_EXPLORE.read_text(encoding="utf-8").splitlines()[1:]  # levels 1 and 2
    path = tmp_path / "no_level0.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    bench = CreativeBenchmark(embedding="none", tasks=str(path))
    record = await play(bench, "7", ReferenceSolver())
    assert [s.info["baseline"] for s in record.steps] == ["reference-lowest-level"] * 2
    assert record.steps[0].info["novelty"] == 0.0  # the lowest level against itself
    metrics = bench.episode_metrics(record)
    assert metrics["reference_baselines"] == 2


def test_failed_level0_falls_back_to_the_reference_and_is_counted(tmp_path: Path) -> None:
    # Seed 43 (trial 0 with --seed 1) is a miss of count-primes-L0 and combo-01 and of no
    # other count-primes level (`scripted.misses`): level 0 gets the stub, the rest pass.
    result = run(
        "creativebench",
        agent="vanilla",
        model="scripted/creative-solver",
        split="all",
        instances=["combo-01", PROBLEM],
        seed=1,
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    metrics = result.metrics["metrics"]
    levels = len(CreativeBenchmark().explore_tasks()[PROBLEM])
    assert metrics["explore_reference_baselines"] == levels - 1
    assert metrics["combo_reference_baselines"] == 0
    assert metrics["explore_pass_at_1"] == pytest.approx((levels - 1) / levels)
    assert metrics["combo_pass_at_1"] == 0.0
    # The stubs parse (the question's bare signature header is never echoed): code, only wrong.
    assert metrics["explore_no_code"] == 0 and metrics["combo_no_code"] == 0
    # A failed row keeps its novelty (the paper's Novelty = E_i[Novelty_i] over every row).
    assert metrics["combo_novelty"] > 0 and metrics["combo_novelty_passed"] is None


async def test_prose_and_empty_answers_count_as_no_code() -> None:
    for text in ("I am sorry, I cannot write this program.", "   "):
        bench = CreativeBenchmark(embedding="none")
        record = await play(bench, "combo-01", Answers(text))
        assert record.steps[0].info["no_code"] is True
        assert bench.episode_metrics(record)["no_code"] == 1
    bench = CreativeBenchmark(embedding="none")
    record = await play(bench, PROBLEM, Answers("Here is my idea: count them."))
    assert bench.episode_metrics(record)["no_code"] == len(record.steps)


def test_novelty_over_passed_rows_only(tmp_path: Path) -> None:
    result = run(
        "creativebench",
        agent="reference",
        split="explore",
        instances=[PROBLEM],
        runs_dir=tmp_path,
        options=RunOptions(progress=False),
    )
    metrics = result.metrics["metrics"]
    assert metrics["explore_novelty_passed"] == pytest.approx(metrics["explore_novelty"])
    record = next(iter(result.records()))
    record.steps[1].info["quality"] = 0.0  # one failed row leaves the passed-only mean
    passed = [s.info["novelty"] for s in record.steps[2:]]
    cells = CreativeBenchmark().episode_metrics(record)
    assert cells["novelty_passed"] == pytest.approx(sum(passed) / len(passed))


# ---- the shared metric functions ----


def test_the_benchmark_scores_with_the_metrics_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run(
        "creativebench",
        agent="reference",
        split="combo",
        instances=["combo-01", "combo-02"],
        trials=2,
        runs_dir=tmp_path,
        options=RunOptions(progress=False),
    )
    bench = CreativeBenchmark()
    monkeypatch.setattr(metrics_module, "creativity", lambda q, n: 7.0)
    monkeypatch.setattr(metrics_module, "mean_std", lambda values: (5.0, 0.5))
    assert bench.episode_metrics(next(iter(result.records())))["creativity"] == 7.0
    summary = bench.score_records(list(result.records()))
    assert summary["combo_creativity"] == 5.0 and summary["combo_creativity_std"] == 0.5
    assert not hasattr(benchmark_module, "statistics")  # no second implementation


# ---- CPU work off the event loop, size cap ----


def test_cap_code_keeps_the_first_bytes_and_says_so() -> None:
    assert cap_code("x = 1\n") == ("x = 1\n", False)
    capped, cut = cap_code("é" * NOVELTY_CODE_LIMIT)
    assert cut and len(capped.encode()) <= NOVELTY_CODE_LIMIT and set(capped) == {"é"}
    assert cap_code("a" * NOVELTY_CODE_LIMIT) == ("a" * NOVELTY_CODE_LIMIT, False)


async def test_a_huge_answer_is_scored_on_its_first_200kb_flagged() -> None:
    bench = CreativeBenchmark(embedding="none")
    huge = "def f():\n    return 1\n" + "# padding line\n" * 20_000
    record = await play(bench, "combo-01", Answers(huge))
    assert len(huge.encode()) > NOVELTY_CODE_LIMIT
    info = record.steps[0].info
    assert info["novelty_truncated"] is True and info["novelty"] is not None
    small = await play(CreativeBenchmark(embedding="none"), "combo-01", Answers("x = 1\n"))
    assert "novelty_truncated" not in small.steps[0].info


@pytest.mark.parametrize("embedding", ["none", "ast-tfidf"])
async def test_canonicalisation_embedding_and_the_checker_run_off_the_event_loop(
    embedding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    seen: dict[str, set[int]] = {"canonicalize": set(), "vectors": set(), "check": set()}
    canonicalize = novelty_module.canonicalize
    vectors = novelty_module.AstTfidfEmbeddings.vectors
    check = constraints_module.check_constraints

    def spy_canonicalize(code: str) -> str:
        seen["canonicalize"].add(threading.get_ident())
        return canonicalize(code)

    def spy_vectors(self: Any, texts: Any) -> Any:
        seen["vectors"].add(threading.get_ident())
        return vectors(self, texts)

    def spy_check(code: str, constraints: Any) -> Any:
        seen["check"].add(threading.get_ident())
        return check(code, constraints)

    monkeypatch.setattr(novelty_module, "canonicalize", spy_canonicalize)
    monkeypatch.setattr(novelty_module.AstTfidfEmbeddings, "vectors", spy_vectors)
    monkeypatch.setattr(constraints_module, "check_constraints", spy_check)
    bench = CreativeBenchmark(embedding=embedding)
    await play(bench, PROBLEM, LevelZeroEverywhere(bench))
    assert seen["canonicalize"] and seen["check"]
    assert embedding == "none" or seen["vectors"]
    assert loop_thread not in set().union(*seen.values())
    assert asyncio.get_running_loop()  # the loop itself is this test's


# ---- paired t-test (App. E.1) ----


def two_runs(tmp_path: Path, seeds: tuple[int, int] = (0, 0)) -> list[str]:
    dirs = []
    for (agent, model), seed in zip(
        (("reference", None), ("vanilla", "scripted/creative-solver")), seeds, strict=True
    ):
        result = run(
            "creativebench",
            agent=agent,
            model=model,
            split="all",
            instances=["combo-01", "combo-02", PROBLEM],
            trials=3,
            seed=seed,
            runs_dir=tmp_path,
            options=RunOptions(progress=False, cache=False),
        )
        dirs.append(str(result.run_dir.path))
    return dirs


def test_paired_t_test_pairs_per_trial_subset_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = two_runs(tmp_path)
    code, out, err = run_cli(["creativebench", "ttest", *dirs, "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["pairing"] == "trial" and report["trials"] == [0, 1, 2]
    assert report["seeds"] == {"0": [42], "1": [43], "2": [44]}
    tests = {(t["subset"], t["metric"]): t for t in report["tests"]}
    for subset in ("combo", "explore"):
        for metric in ("pass_at_1", "novelty", "creativity"):
            test = tests[(subset, metric)]
            assert test["n"] == 3 and test["df"] == 2  # one test per subset, N = trials
            assert test["ci_low"] <= test["mean_diff"] <= test["ci_high"]
    # Reference 1 on every row; the scripted solver misses (`scripted.misses`) combo-01 at
    # seed 43 and combo-02 at 44, count-primes L0 at 43, L2 and L4 at 44.
    assert tests[("combo", "pass_at_1")]["mean_diff"] == pytest.approx((0 + 0.5 + 0.5) / 3)
    assert tests[("explore", "pass_at_1")]["mean_diff"] == pytest.approx((0 + 0.2 + 0.4) / 3)
    assert len(load_records(dirs[0])) == 9
    code, out, err = run_cli(["creativebench", "ttest", *dirs, "--metric", "creativity"], capsys)
    assert code == 0, err
    assert "combo creativity: mean diff +" in out and "95% CI [" in out and "df = 2" in out


def test_paired_t_test_per_row_and_mismatched_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = two_runs(tmp_path)
    code, out, err = run_cli(["creativebench", "ttest", *dirs, "--per-row", "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    combo = next(t for t in report["tests"] if t["subset"] == "combo")
    assert report["pairing"] == "row" and combo["n"] == 6  # 2 problems x 3 trials
    other = two_runs(tmp_path / "shifted", seeds=(0, 1))
    code, _out, err = run_cli(["creativebench", "ttest", dirs[0], other[1]], capsys)
    message = " ".join(err.split())
    assert code != 0 and "trial 0: seed 42 in" in message and "but 43 in" in message
    assert "the same seeds" in message


def test_paired_t_test_needs_two_trials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = []
    for agent, model in (("reference", None), ("vanilla", "scripted/creative-solver")):
        result = run(
            "creativebench",
            agent=agent,
            model=model,
            split="combo",
            instances=["combo-01", "combo-02"],
            runs_dir=tmp_path,
            options=RunOptions(progress=False, cache=False),
        )
        dirs.append(str(result.run_dir.path))
    code, _out, err = run_cli(["creativebench", "ttest", *dirs], capsys)
    assert code != 0 and "--trials 3" in " ".join(err.split())
    code, out, err = run_cli(["creativebench", "ttest", *dirs, "--per-row", "--json"], capsys)
    assert code == 0, err
    assert {t["n"] for t in json.loads(out)["tests"]} == {2}


# ---- documentation ----


def test_package_docstring_cites_the_paper_and_maps_every_module() -> None:
    import forkingpaths.benchmarks.creativebench as package

    doc = " ".join((package.__doc__ or "").split())
    assert "CreativeBench: Benchmarking and Enhancing Machine Creativity" in doc
    for module in sorted(Path(package.__file__).parent.glob("*.py")):
        if module.name != "__init__.py":
            assert f"`{module.name}`" in doc, module.name
    for section in ("§3.2", "§3.3", "§4.3", "App. B.1", "App. E.1", "App. E.3", "App. F"):
        assert section in doc, section
    history = " ".join((CreativeBenchmark.__doc__ or "").split())
    assert "Versions: v1" in history


# ---- reproduce --limit ----


def test_a_limit_of_the_mixed_split_takes_both_subsets() -> None:
    bench = CreativeBenchmark()
    combo, explore = list(bench.combo_tasks()), list(bench.explore_tasks())

    def picked(split: str, n: int) -> list[str]:
        return [i.id for i in bench.sample_instances(split, n)]

    assert picked("all", 1) == ["combo-01"]
    assert picked("all", 2) == ["combo-01", explore[0]]
    assert picked("all", 3) == ["combo-01", "combo-02", explore[0]]
    assert picked("all", 4) == [c.id for c in combo[:2]] + explore[:2]
    # Explore has 16 problems: past 32 the rest of a limit goes to Combo, then to nothing.
    assert len(explore) == 16 and len(combo) == 25
    assert picked("all", 40) == [c.id for c in combo[:24]] + explore
    assert picked("all", 100) == [i.id for i in bench.instances("all")]
    # A split of one subset: the first n.
    assert picked("explore", 2) == explore[:2] and picked("combo", 1) == ["combo-01"]
