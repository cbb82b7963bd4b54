"""Table 10: human scores, pairing with judged steps, Pearson/Spearman/pairwise by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.escape.agreement import (
    TABLE_COLUMNS,
    HumanScore,
    agreement,
    agreement_rows,
    average_ranks,
    load_human_scores,
    pair_with_judge,
    pairwise_agreement,
    pearson,
    render_agreement_table,
    spearman,
)
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.records import EpisodeRecord, RunSpec, StepRecord
from forkingpaths.runner.rundir import RunDirectory


def write_lines(path: Path, rows: list[Any]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


def rating(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "instance_id": "house_heist",
        "attempt": 0,
        "step": 3,
        "originality": 3,
        "elaboration": 4,
        "groundedness": 5,
    }
    row.update(changes)
    return row


def step(attempt: int, t: int, judge: dict[str, Any] | None) -> StepRecord:
    info: dict[str, Any] = {"attempt": attempt, "t": t}
    if judge is not None:
        info["judge"] = judge
    return StepRecord(index=t, observation="", action="apply(a, b)", feedback="", info=info)


def episode(instance_id: str, steps: list[StepRecord], trial: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r",
        benchmark="escape-v1",
        split="main",
        instance_id=instance_id,
        trial=trial,
        seed=0,
        agent="base",
        steps=steps,
    )


# ---- statistics by hand ----


def test_pearson_by_hand() -> None:
    # x - mean = (-1, 0, 1), y - mean = (-1, 1, 0): r = 1 / sqrt(2 * 2) = 0.5
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)


def test_spearman_uses_average_ranks_for_ties() -> None:
    assert average_ranks([3, 1, 3, 2]).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert average_ranks([2, 2, 2]).tolist() == [2.0, 2.0, 2.0]
    # ranks x = (1, 2.5, 2.5, 4), y = (1, 3, 2, 4): r = 4.5 / sqrt(4.5 * 5)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / math.sqrt(22.5))
    # A monotone but non-linear relation is a perfect rank correlation.
    assert spearman([1, 2, 3, 4], [1, 4, 9, 100]) == pytest.approx(1.0)


def test_pairwise_agreement_counts_judge_ties_half_and_skips_human_ties() -> None:
    # pairs (0,1): judge tie 0.5; (0,2): concordant; (1,2): concordant -> 2.5 / 3
    assert pairwise_agreement([1, 2, 3], [1, 1, 2]) == pytest.approx(2.5 / 3)
    # (0,1) human tie, skipped; (0,2) discordant 0; (1,2) judge tie 0.5 -> 0.5 / 2
    assert pairwise_agreement([1, 1, 2], [2, 1, 1]) == pytest.approx(0.25)
    assert pairwise_agreement([1, 2, 3], [3, 2, 1]) == 0.0
    assert pairwise_agreement([1.5, 2.0], [2, 3]) == 1.0


def test_undefined_statistics_are_none() -> None:
    assert pearson([], []) is None
    assert pearson([3], [4]) is None
    assert pearson([2, 2, 2], [1, 2, 3]) is None
    assert spearman([2, 2, 2], [1, 2, 3]) is None
    assert pairwise_agreement([2, 2, 2], [1, 2, 3]) is None
    assert pairwise_agreement([], []) is None
    with pytest.raises(ValueError, match="pearson"):
        pearson([1, 2], [1])


def test_agreement_rows_have_table_10_shape_and_pool_overall() -> None:
    pairs = {
        "originality": [(1.0, 1), (2.0, 3), (3.0, 2)],
        "elaboration": [(1.0, 1), (2.0, 2), (3.0, 3)],
        "groundedness": [(2.0, 2), (2.0, 3)],
    }
    rows = agreement(pairs)
    assert [r["Criterion"] for r in rows] == [
        "Overall",
        "Originality",
        "Elaboration",
        "Groundedness",
    ]
    assert all(tuple(r) == TABLE_COLUMNS for r in rows)
    assert [r["n"] for r in rows] == [8, 3, 3, 2]
    pooled = [p for c in ("originality", "elaboration", "groundedness") for p in pairs[c]]
    overall = rows[0]
    assert overall["Pearson"] == pytest.approx(pearson(*zip(*pooled, strict=True)))
    assert overall["Pairwise"] == pytest.approx(pairwise_agreement(*zip(*pooled, strict=True)))
    assert rows[1]["Pearson"] == pytest.approx(0.5)
    assert rows[2]["Pearson"] == pytest.approx(1.0) and rows[2]["Pairwise"] == 1.0
    assert rows[3]["Pearson"] is None and rows[3]["Pairwise"] is None
    table = render_agreement_table(rows)
    header = "| Criterion | n | Pearson | Spearman | Pairwise | Within1 |"
    assert table.splitlines()[0] == header
    assert "| Elaboration | 3 | 1.0000 | 1.0000 | 1.0000 |" in table
    assert "| Groundedness | 2 | - | - | - |" in table


# ---- human scores ----


def test_load_human_scores_averages_annotators(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "human.jsonl",
        [
            rating(annotator="a1"),
            "",
            rating(annotator="a2", originality=4, elaboration=5, groundedness=4),
            rating(step=4, trial=1, comment="extra fields are ignored"),
        ],
    )
    first, second = load_human_scores(path)
    assert first.key == ("house_heist", 0, 0, 3)
    assert first.scores == {"originality": 3.5, "elaboration": 4.5, "groundedness": 4.5}
    assert first.annotators == ("a1", "a2") and first.n_ratings == 2 and first.line == 1
    assert second.key == ("house_heist", 1, 0, 4) and second.n_ratings == 1


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({k: v for k, v in rating().items() if k != "step"}), "'step' is missing"),
        (json.dumps(rating(originality=6)), "'originality'"),
        (json.dumps(rating(elaboration="4")), "'elaboration'"),
        (json.dumps(rating(groundedness=2.5)), "'groundedness'"),
        (json.dumps(rating(groundedness=True)), "'groundedness'"),
        (json.dumps(rating(attempt=-1)), "'attempt'"),
        (json.dumps(rating(step=0)), "'step'"),
        (json.dumps(rating(trial="0")), "'trial'"),
        (json.dumps(rating(instance_id="")), "'instance_id'"),
    ],
)
def test_bad_human_lines_are_refused_with_file_line_and_field(
    tmp_path: Path, line: str, field: str
) -> None:
    path = write_lines(tmp_path / "human.jsonl", [rating(step=1), line])
    with pytest.raises(InvalidFile) as err:
        load_human_scores(path)
    message = str(err.value)
    assert f"{path}:2" in message and field in message


def test_one_annotator_rating_an_item_twice_is_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.jsonl", [rating(annotator="a1"), rating(annotator="a1")])
    with pytest.raises(InvalidFile, match=r"h\.jsonl:2: annotator 'a1' already rated .* line 1"):
        load_human_scores(path)


def test_missing_or_empty_human_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidFile, match="no file"):
        load_human_scores(tmp_path / "absent.jsonl")
    with pytest.raises(InvalidFile, match="no ratings"):
        load_human_scores(write_lines(tmp_path / "empty.jsonl", [""]))


# ---- pairing ----


def human(instance_id: str, attempt: int, t: int, value: float, trial: int = 0) -> HumanScore:
    scores = {"originality": value, "elaboration": value, "groundedness": value}
    return HumanScore(instance_id, trial, attempt, t, scores=scores)


def test_pair_with_judge_matches_on_instance_trial_attempt_and_step() -> None:
    judged = {"originality": 2, "elaboration": 3, "groundedness": 4}
    records = [
        episode(
            "house_heist",
            [
                step(0, 1, None),
                step(0, 2, judged),
                step(1, 2, {"originality": 5, "elaboration": 5, "groundedness": 5}),
                step(1, 3, {"missing": "no JSON object (after 3 attempts)"}),
            ],
        ),
        episode(
            "house_heist",
            [step(0, 2, {"originality": 1, "elaboration": 1, "groundedness": 1})],
            trial=1,
        ),
    ]
    items = [
        human("house_heist", 0, 2, 3.0),
        human("house_heist", 1, 2, 4.5),
        human("house_heist", 0, 2, 2.0, trial=1),
        human("house_heist", 0, 1, 1.0),  # step exists but was not judged
        human("house_heist", 1, 3, 2.0),  # judged, score missing
        human("zombie_lab", 0, 2, 2.0),  # no such episode
    ]
    pairs = pair_with_judge(items, records)
    assert pairs["originality"] == [(3.0, 2), (4.5, 5), (2.0, 1)]
    assert pairs["groundedness"] == [(3.0, 4), (4.5, 5), (2.0, 1)]
    assert pairs.matched == 3
    reasons = [(h.key, why) for h, why in pairs.unmatched]
    assert reasons[0] == (("house_heist", 0, 0, 1), "no judged step with this key in the records")
    assert reasons[1][0] == ("house_heist", 0, 1, 3) and "judge score missing" in reasons[1][1]
    assert reasons[2][0] == ("zombie_lab", 0, 0, 2)


def test_agreement_rows_reads_a_run_directory(tmp_path: Path) -> None:
    judge_values = [1, 2, 3, 3]
    records = [
        episode(
            "house_heist",
            [
                step(0, t, {"originality": v, "elaboration": v, "groundedness": v})
                for t, v in enumerate(judge_values, start=1)
            ],
        )
    ]
    run = RunDirectory(tmp_path / "run")
    run.open(RunSpec(benchmark="escape-v1", split="main", agent="base"))
    for record in records:
        run.append(record)
    human_rows = [
        rating(step=t, originality=h, elaboration=h, groundedness=h)
        for t, h in enumerate([1, 2, 4, 5], start=1)
    ]
    human_rows.append(rating(step=9))
    path = write_lines(tmp_path / "human.jsonl", human_rows)
    rows, unmatched = agreement_rows(path, tmp_path / "run")
    assert [r["n"] for r in rows] == [12, 4, 4, 4]
    # human 1,2,4,5 vs judge 1,2,3,3: one judge tie among the 6 pairs -> 5.5 / 6
    assert rows[1]["Pairwise"] == pytest.approx(5.5 / 6)
    assert rows[1]["Spearman"] == pytest.approx(spearman([1, 2, 4, 5], [1, 2, 3, 3]))
    assert [h.step for h, _ in unmatched] == [9]


def test_within_one_counts_items_at_most_one_point_apart() -> None:
    from forkingpaths.benchmarks.escape.agreement import within_one

    assert within_one([1, 3, 5, 2], [2, 5, 5, 4]) == 0.5
    assert within_one([], []) is None
