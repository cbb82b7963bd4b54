"""CreativeBench protocol end to end: sandbox verdicts, constraints, novelty, metrics, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions

PROBLEM = "count-primes"


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
    for record in result.records:
        assert bench.episode_metrics(record) == record.metrics


def test_scripted_solver_gets_runtime_errors_and_the_judge_is_not_asked(tmp_path: Path) -> None:
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
    (record,) = result.records
    assert {s.info["verdict"] for s in record.steps} == {"RUNTIME_ERROR"}
    # The level-0 solution failed: novelty is measured against the reference, flagged.
    assert all(s.info["baseline"] == "reference-level0" for s in record.steps[1:])
    assert not [c for s in record.steps for c in s.calls if c.purpose != "solve"]
    assert result.metrics["metrics"]["explore_creativity"] == 0.0


def test_bad_options_are_refused() -> None:
    for options, needle in (
        ({"timeout": 0}, "timeout"),
        ({"workers": 0}, "workers"),
        ({"tasks": "/no/such.jsonl"}, "does not exist"),
        ({"colour": 1}, "unknown creativebench option"),
    ):
        with pytest.raises(ConfigError, match=needle):
            CreativeBenchmark(**options)


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
    assert set(result) == {"verdict", "isolation", "duration_s", "stdout_tail", "stderr_tail"}
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


def test_paired_t_test_between_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs = []
    for agent, model in (("reference", None), ("vanilla", "scripted/creative-solver")):
        result = run(
            "creativebench",
            agent=agent,
            model=model,
            split="combo",
            instances=["combo-01", "combo-02", "combo-03"],
            runs_dir=tmp_path,
            options=RunOptions(progress=False, cache=False),
        )
        dirs.append(str(result.run_dir.path))
    code, out, err = run_cli(["creativebench", "ttest", *dirs, "--json"], capsys)
    assert code == 0, err
    test = json.loads(out)
    assert test["n"] == 3 and test["mean_diff"] > 0
    assert len(load_records(dirs[0])) == 3
