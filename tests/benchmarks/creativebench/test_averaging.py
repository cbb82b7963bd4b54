"""Explore averaging: the paper's (Eq. 4, constrained levels only) and the release's
(eval_explore.py: every row, level 0 with novelty 0), on hand-built records and a real run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import run_cli

from forkingpaths.api import load_records, run
from forkingpaths.benchmarks.creativebench.averaging import subset_summary, trial_cells
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunOptions, StepRecord

Row = tuple[int | None, float, float | None]
"""(Explore level or None for a Combo row, quality, novelty)."""


def record(instance: str, subset: str, trial: int, rows: list[Row]) -> EpisodeRecord:
    steps = []
    for index, (level, quality, novelty) in enumerate(rows):
        info: dict[str, Any] = {"verdict": "PASSED" if quality else "FAILED", "quality": quality}
        if level is not None:
            info["level"] = level
        if level == 0:
            info["baseline_solution"] = True  # as the env writes it: no novelty key at all
        else:
            info["novelty"] = novelty
        steps.append(StepRecord(index=index, observation="", action="", feedback="", info=info))
    return EpisodeRecord(
        run_id="hand",
        benchmark="creativebench-v1",
        split="all",
        instance_id=instance,
        trial=trial,
        seed=42 + trial,
        agent="vanilla",
        initial_info={"subset": subset},
        steps=steps,
    )


# Trial 0: problem a passes L0 and L1, fails L2; problem b fails L0, passes L1.
# Trial 1: a passes all three levels; b passes L0, fails L1. Combo c1 passes then fails.
RECORDS = [
    record("a", "explore", 0, [(0, 1.0, None), (1, 1.0, 0.5), (2, 0.0, 0.75)]),
    record("b", "explore", 0, [(0, 0.0, None), (1, 1.0, 0.25)]),
    record("a", "explore", 1, [(0, 1.0, None), (1, 1.0, 0.25), (2, 1.0, 0.5)]),
    record("b", "explore", 1, [(0, 1.0, None), (1, 0.0, 1.0)]),
    record("c1", "combo", 0, [(None, 1.0, 0.5)]),
    record("c1", "combo", 1, [(None, 0.0, 0.25)]),
]
EXPLORE = [r for r in RECORDS if r.initial_info["subset"] == "explore"]


def test_paper_averaging_leaves_level_0_out_of_novelty_and_creativity() -> None:
    per_trial = trial_cells(EXPLORE, "paper")
    # Trial 0: Pass@1 over all 5 rows = 3/5; novelty over the 3 constrained rows
    # (0.5 + 0.75 + 0.25) / 3; creativity (0.5 + 0 + 0.25) / 3; passed rows (0.5 + 0.25) / 2.
    assert per_trial[0]["pass_at_1"] == pytest.approx(0.6)
    assert per_trial[0]["novelty"] == pytest.approx(0.5)
    assert per_trial[0]["creativity"] == pytest.approx(0.25)
    assert per_trial[0]["novelty_passed"] == pytest.approx(0.375)
    assert per_trial[1]["pass_at_1"] == pytest.approx(0.8)
    assert per_trial[1]["novelty"] == pytest.approx(1.75 / 3)
    assert per_trial[1]["creativity"] == pytest.approx(0.25)
    summary = subset_summary(EXPLORE, "paper")
    assert summary["pass_at_1"] == pytest.approx(0.7)
    assert summary["pass_at_1_std"] == pytest.approx(0.1414213562)
    assert summary["novelty"] == pytest.approx((0.5 + 1.75 / 3) / 2)
    assert summary["creativity"] == pytest.approx(0.25) and summary["creativity_std"] == 0.0
    assert summary["rows"] == 10 and summary["trials"] == 2


def test_release_averaging_counts_level_0_rows_with_novelty_0_pooled_over_rows() -> None:
    per_trial = trial_cells(EXPLORE, "release")
    # Trial 0: every row counts: novelty (0 + 0.5 + 0.75 + 0 + 0.25) / 5, creativity
    # (0 + 0.5 + 0 + 0 + 0.25) / 5 -- pooled over rows, not per problem first (which would
    # give (1.25 / 3 + 0.25 / 2) / 2 = 0.2708...). Pass@1 is the paper's.
    assert per_trial[0]["pass_at_1"] == pytest.approx(0.6)
    assert per_trial[0]["novelty"] == pytest.approx(0.3)
    assert per_trial[0]["creativity"] == pytest.approx(0.15)
    assert per_trial[0]["novelty_passed"] == pytest.approx(0.25)  # (0 + 0.5 + 0.25) / 3
    assert per_trial[1]["novelty"] == pytest.approx(0.35)
    assert per_trial[1]["creativity"] == pytest.approx(0.15)
    assert per_trial[1]["novelty_passed"] == pytest.approx(0.1875)  # (0 + .25 + .5 + 0) / 4
    summary = subset_summary(EXPLORE, "release")
    assert summary["pass_at_1"] == pytest.approx(0.7)
    assert summary["novelty"] == pytest.approx(0.325)
    assert summary["novelty_std"] == pytest.approx(0.0353553391)
    assert summary["creativity"] == pytest.approx(0.15)
    assert summary["novelty_passed"] == pytest.approx(0.21875)
    assert summary["rows"] == 10 and summary["trials"] == 2


def test_the_option_switches_run_metrics_and_leaves_combo_alone() -> None:
    paper = CreativeBenchmark().score_records(RECORDS)
    release = CreativeBenchmark(explore_averaging="release").score_records(RECORDS)
    assert paper["explore_averaging"] == "paper" and release["explore_averaging"] == "release"
    assert paper["explore_novelty"] == pytest.approx((0.5 + 1.75 / 3) / 2)
    assert release["explore_novelty"] == pytest.approx(0.325)
    assert paper["explore_creativity"] == pytest.approx(0.25)
    assert release["explore_creativity"] == pytest.approx(0.15)
    assert paper["explore_pass_at_1"] == release["explore_pass_at_1"] == pytest.approx(0.7)
    for key in ("pass_at_1", "novelty", "creativity"):
        assert paper[f"combo_{key}"] == release[f"combo_{key}"]
    assert (paper["combo_pass_at_1"], paper["combo_novelty"], paper["combo_creativity"]) == (
        pytest.approx(0.5),
        pytest.approx(0.375),
        pytest.approx(0.25),
    )
    one = EXPLORE[0]  # trial 0 of problem a alone
    assert CreativeBenchmark().episode_metrics(one)["novelty"] == pytest.approx(0.625)
    released = CreativeBenchmark(explore_averaging="release").episode_metrics(one)
    assert released["novelty"] == pytest.approx(1.25 / 3)
    assert released["creativity"] == pytest.approx(0.5 / 3)


def test_a_bad_averaging_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        CreativeBenchmark(explore_averaging="per-problem")
    message = str(caught.value)
    assert "\n" not in message
    assert "explore_averaging" in message and 'got "per-problem"' in message
    assert "'paper' or 'release'" in message


def test_report_rescores_a_run_under_its_specs_averaging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(
        "creativebench",
        agent="reference",
        split="explore",
        instances=["run-length-encode"],
        benchmark_options={"explore_averaging": "release", "embedding": "none"},
        runs_dir=tmp_path,
        options=RunOptions(progress=False, cache=False),
    )
    path = result.run_dir.path
    records = load_records(path)
    levels = len(records[0].steps)
    paper = subset_summary(records, "paper")["novelty"]
    (path / "metrics.json").unlink()
    code, _out, err = run_cli(["report", str(path)], capsys)
    assert code == 0, err
    metrics = json.loads((path / "metrics.json").read_text())["metrics"]
    assert metrics["explore_averaging"] == "release"
    # The reference agent passes every level: release novelty = paper novelty x (levels-1)/levels.
    assert levels == 4 and paper > 0
    assert metrics["explore_novelty"] == pytest.approx(paper * 3 / 4)
    assert metrics["explore_creativity"] == pytest.approx(paper * 3 / 4)
