"""MUTATE's metrics from records: Path Discovery (Metric 1) and Divergence Momentum (Metric 2)."""

from __future__ import annotations

from typing import Any

from forkingpaths.benchmarks.escape.metrics import (
    attempt_steps,
    counted_paths,
    divergence_momentum,
    episode_facts,
    is_judged,
    path_discovery,
    path_table,
)
from forkingpaths.core.records import EpisodeRecord, StepRecord

PATHS = ["P1_A", "P1_B", "P1_C1", "P1_C2"]


def step(index: int, **info: Any) -> StepRecord:
    return StepRecord(
        index=index, observation="", thought="", action="", feedback="", info=dict(info)
    )


def record(
    found: list[str], steps: list[int], judged: tuple[dict[str, Any], ...] = ()
) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t",
        benchmark="escape-v1",
        split="mutate",
        instance_id="cell",
        seed=0,
        agent="a",
        steps=[step(i, judge=verdict) for i, verdict in enumerate(judged)],
        outcome={
            "paths_found": found,
            "paths_total": PATHS,
            "attempts": [{"attempt": i, "steps": n} for i, n in enumerate(steps)],
        },
    )


def facts(*records: EpisodeRecord) -> list[dict[str, Any]]:
    """What the metrics read of the records (a run keeps these, not the records)."""
    return [episode_facts(r) for r in records]


def test_path_discovery_counts_distinct_paths_over_the_paths_there_are() -> None:
    one = record(["P1_B", "P1_A"], [4, 6, 50, 50])
    two = record(["P1_A"], [50, 50, 50, 20])
    none = {"extra_paths_found": 0, "extra_paths_total": 0}
    assert path_discovery(facts(one)) == {
        "paths_found": 2,
        "paths_total": 4,
        "path_discovery": 0.5,
        **none,
    }
    assert path_discovery(facts(one, two)) == {
        "paths_found": 3,
        "paths_total": 8,
        "path_discovery": 0.375,
        **none,
    }
    assert path_discovery(facts()) == {
        "paths_found": 0,
        "paths_total": 0,
        "path_discovery": None,
        **none,
    }
    assert attempt_steps(facts(one, two)) == [4, 6, 50, 50, 50, 50, 50, 20]


def test_a_path_the_paper_lacks_is_counted_apart_unless_included() -> None:
    # Desert Restart's P1_C1: found here, but not in the paper's catalog (Table 16).
    found = record(["P1_C1", "P1_A"], [5, 7])
    found.outcome["paths_extra"] = ["P1_C1"]
    missed = record(["P1_B"], [5])
    missed.outcome["paths_extra"] = ["P1_C1"]
    assert path_discovery(facts(found, missed)) == {
        "paths_found": 2,
        "paths_total": 6,
        "path_discovery": 2 / 6,
        "extra_paths_found": 1,
        "extra_paths_total": 2,
    }
    assert path_discovery(facts(found, missed), include_extra=True) == {
        "paths_found": 3,
        "paths_total": 8,
        "path_discovery": 0.375,
        "extra_paths_found": 1,
        "extra_paths_total": 2,
    }
    assert counted_paths(episode_facts(found)) == (["P1_A"], ["P1_A", "P1_B", "P1_C2"])


def test_path_table_marks_a_path_found_in_any_record() -> None:
    one = record(["P1_B"], [4])
    two = record(["P1_C2", "P1_B"], [4])
    assert path_table(facts(one)) == {"P1_A": "X", "P1_B": "O", "P1_C1": "X", "P1_C2": "X"}
    assert path_table(facts(one, two)) == {"P1_A": "X", "P1_B": "O", "P1_C1": "X", "P1_C2": "O"}
    assert path_table(facts()) == {}


def test_divergence_momentum_means_scored_steps_and_counts_missing_ones() -> None:
    one = record(
        [],
        [3],
        (
            {"originality": 2, "elaboration": 4, "groundedness": 3},
            {"missing": "prose (after 3 attempts)"},
        ),
    )
    two = record([], [3], ({"originality": 5, "elaboration": 1, "groundedness": 4},))
    assert divergence_momentum(facts(one, two)) == {
        "originality": 3.5,
        "elaboration": 2.5,
        "groundedness": 3.5,
        "judged_steps": 2,
        "judge_missing": 1,
    }
    assert divergence_momentum(facts(record([], [3]))) == {
        "originality": None,
        "elaboration": None,
        "groundedness": None,
        "judged_steps": 0,
        "judge_missing": 0,
    }


def test_metric_2_judges_off_path_apply_craft_and_input_steps_only() -> None:
    cases = [
        ({"kind": "apply", "path": None, "forbidden": False}, True),
        ({"kind": "craft", "path": None, "forbidden": False}, True),
        ({"kind": "input", "path": None, "forbidden": False}, True),
        ({"kind": "apply", "path": "P1_A", "forbidden": False}, False),  # completed a path
        ({"kind": "apply", "path": None, "forbidden": True}, False),  # a refused finish action
        ({"kind": "click", "path": None, "forbidden": False}, False),
        ({"kind": None, "path": None, "forbidden": False}, False),  # unparsable
    ]
    assert [is_judged(step(0, **info)) for info, _ in cases] == [judged for _, judged in cases]
