"""Evaluation protocol: calibration, weights, point counts, parsing, retries, scripted judge."""

from __future__ import annotations

import dataclasses
import json

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.turtlesoup.evaluation import (
    CONCLUSION_WEIGHT,
    DETAIL_WEIGHT,
    HIGH_CONFIDENCE_THRESHOLD,
    LOGIC_WEIGHT,
    VALIDITY_THRESHOLD,
    Evaluation,
    PointScore,
    calibrate,
    evaluate,
    extraction_messages,
    json_objects,
    match_messages,
    metrics_from_evaluation,
    overall_score,
    point_counts,
    read_conclusion,
    read_extraction,
    read_match,
    skip_nested,
    split_sentences,
    structured_summary,
    text_length,
)
from forkingpaths.benchmarks.turtlesoup.evaluation_prompts import EN, ZH, prompts_for
from forkingpaths.benchmarks.turtlesoup.evaluation_scripted import (
    TurtleSoupJudgePolicy,
    similarity,
)
from forkingpaths.benchmarks.turtlesoup.importers import load_corpus
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel


def scripted(policy: object, name: str) -> ScriptedModel:
    return ScriptedModel(name, policy, ModelRuntime(cache=False))  # type: ignore[arg-type]


def judge() -> ScriptedModel:
    return scripted(TurtleSoupJudgePolicy(), "scripted/turtlesoup-judge")


def puzzle(language: str = "en", **changes: object) -> Puzzle:
    fields: dict[str, object] = {
        "id": f"test-01-{language}",
        "entry": "test-01",
        "category": "crime_thriller",
        "language": language,
        "title": "The Clean Shutter",
        "surface": "A shutter was clean one morning and its owner fled.",
        "bottom": (
            "Bruno sold stolen goods for a smuggling crew. The crew sprayed a tag on his shutter "
            "every night while they were safe. The police arrested the crew at the docks. "
            "Nobody sprayed the tag, so Bruno knew he would be next and fled."
        ),
        "key_clues": ("The tag was a signal.",),
        "logic_points": (
            "A nightly tag served as a secret all-clear signal between criminal partners.",
            "The missing tag told the fence that his partners had been arrested, so he fled.",
        ),
        "key_details": (
            "Bruno sold stolen goods for a smuggling crew.",
            "The police arrested the crew at the docks.",
            "The tag was sprayed on the shutter every night.",
        ),
    }
    fields.update(changes)
    return Puzzle(**fields)  # type: ignore[arg-type]


def perfect(p: Puzzle) -> dict[str, object]:
    return {"logic": list(p.logic_points), "details": list(p.key_details), "conclusion": p.bottom}


# ---- calibration and weights (§4.4, App. D.3) ----


def test_constants_are_the_papers() -> None:
    assert (LOGIC_WEIGHT, DETAIL_WEIGHT, CONCLUSION_WEIGHT) == (0.3, 0.3, 0.4)
    assert (VALIDITY_THRESHOLD, HIGH_CONFIDENCE_THRESHOLD) == (0.5, 0.8)


@pytest.mark.parametrize(
    ("raw", "calibrated"),
    [(0.0, 0.0), (0.49, 0.0), (0.5, 0.5), (0.65, 0.65), (0.79, 0.79), (0.8, 1.0), (1.0, 1.0)],
)
def test_calibrate_two_thresholds(raw: float, calibrated: float) -> None:
    assert calibrate(raw) == pytest.approx(calibrated)


@pytest.mark.parametrize("bad", [-0.1, 1.01, float("nan"), True, "0.7"])
def test_calibrate_refuses_values_outside_the_unit_interval(bad: object) -> None:
    with pytest.raises(ConfigError, match="similarity score"):
        calibrate(bad)  # type: ignore[arg-type]


def test_overall_weights_worked_example() -> None:
    assert overall_score(50, 100, 25) == pytest.approx(0.3 * 50 + 0.3 * 100 + 0.4 * 25)
    assert overall_score(50, 100, 25) == pytest.approx(55)
    assert overall_score(None, 100, 25) is None


def test_metrics_follow_the_weights() -> None:
    ev = Evaluation(
        puzzle_id="p",
        language="en",
        logic=[
            PointScore(point="a", score=0.9, best_match=0, calibrated=1.0),
            PointScore(point="b", score=0.3, best_match=None, calibrated=0.0),
        ],
        details=[PointScore(point="c", score=0.85, best_match=1, calibrated=1.0)],
        conclusion=0.25,
    )
    metrics = metrics_from_evaluation(ev)
    assert metrics["logic_accuracy"] == pytest.approx(50)
    assert metrics["detail_fidelity"] == pytest.approx(100)
    assert metrics["conclusion_match"] == pytest.approx(25)
    assert metrics["overall"] == pytest.approx(55)
    assert metrics["unscored_points"] == 0


def test_unscored_points_are_left_out_of_means_and_counted() -> None:
    ev = Evaluation(
        puzzle_id="p",
        language="en",
        logic=[
            PointScore(point="a", score=0.6, best_match=0, calibrated=0.6),
            PointScore(point="b", reason="unscored: no JSON"),
        ],
        details=[PointScore(point="c", reason="unscored: no JSON")],
        conclusion=1.0,
    )
    metrics = metrics_from_evaluation(ev)
    assert metrics["logic_accuracy"] == pytest.approx(60)
    assert metrics["detail_fidelity"] is None
    assert metrics["overall"] is None
    assert metrics["unscored_points"] == 2


# ---- point counts (App. D.3) ----


@pytest.mark.parametrize(
    ("length", "n_logic"),
    [(0, 2), (179, 2), (180, 2), (181, 2), (339, 3), (340, 4), (499, 5), (500, 5), (501, 5)],
)
def test_logic_count_is_linear_between_180_and_500_chinese_characters(
    length: int, n_logic: int
) -> None:
    assert point_counts("字" * length, "zh")[0] == n_logic


def test_chinese_length_counts_non_space_characters() -> None:
    assert text_length("他 跑了。\n她躲起来！", "zh") == 9


def test_english_length_is_words_times_one_and_three_quarters() -> None:
    assert text_length(" ".join(["word"] * 100), "en") == 175
    assert point_counts(" ".join(["word"] * 102), "en")[0] == 2  # 178.5 -> 179
    assert point_counts(" ".join(["word"] * 286), "en")[0] == 5  # 500.5 -> 501
    # 194.3 words -> 340 on the Chinese scale: the half-way point rounds up.
    assert text_length(" ".join(["word"] * 194), "en") == 340


@pytest.mark.parametrize(
    ("text", "language", "n_details"),
    [
        ("字" * 180, "zh", 3),  # length 3, one sentence counts as 3 -> 3
        ("字" * 500, "zh", 6),  # length 8, sentences 3 -> 5.5 -> 6
        ("短句。" * 10, "zh", 6),  # length 3, ten sentences clip to 8 -> 5.5 -> 6
        ("字字字字字。" * 100, "zh", 8),  # both estimates at their maximum
        ("He ran. " * 5, "en", 4),  # length 3, five sentences -> 4
        ("", "en", 3),
    ],
)
def test_detail_count_averages_length_and_sentences(
    text: str, language: str, n_details: int
) -> None:
    n_logic, counted = point_counts(text, language)
    assert counted == n_details
    assert 2 <= n_logic <= 5


def test_point_counts_of_the_shipped_corpus_match_its_gold_points() -> None:
    puzzles, errors = load_corpus()
    assert not errors
    same_logic = [
        p for p in puzzles if point_counts(p.bottom, p.language)[0] == len(p.logic_points)
    ]
    assert len(same_logic) >= 0.9 * len(puzzles)
    for p in puzzles:
        n_logic, n_details = point_counts(p.bottom, p.language)
        assert 2 <= n_logic <= 5 and 3 <= n_details <= 8


def test_point_counts_refuse_an_unknown_language() -> None:
    with pytest.raises(ConfigError, match="language"):
        point_counts("text", "fr")


def test_sentence_splitting() -> None:
    assert split_sentences('She said "go." Then he left! Why?', "en") == [
        'She said "go."',
        "Then he left!",
        "Why?",
    ]
    assert split_sentences("他走了。“为什么？”她问。", "zh") == ["他走了。", "“为什么？”", "她问。"]


# ---- reading judge replies ----


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"best_match_index": 2, "best_match_score": 0.9}', (0.9, 1)),
        ('{"best_match_index": null, "best_match_score": 0.3}', (0.3, None)),
        ('```json\n{"best_match_index": 1, "best_match_score": 1}\n```', (1.0, 0)),
        ('Here it is: {"best_match_index": 3, "best_match_score": 0.55} done.', (0.55, 2)),
        ('{"best_match_score": 0.0, "best_match_index": null, "note": "none"}', (0.0, None)),
    ],
)
def test_read_match_accepts(reply: str, expected: tuple[float, int | None]) -> None:
    value, reason = read_match(reply, 3)
    assert value == expected and reason == ""


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("The best match is statement 2.", "no JSON object"),
        ('{"best_match_index": 2, "best_match_score": "0.9"}', "must be a number"),
        ('{"best_match_index": 2, "best_match_score": 1.2}', "must be a number"),
        ('{"best_match_index": 2, "best_match_score": true}', "must be a number"),
        ('{"best_match_index": 4, "best_match_score": 0.9}', "from 1 to 3"),
        ('{"best_match_index": 0, "best_match_score": 0.9}', "from 1 to 3"),
        ('{"best_match_index": 1.0, "best_match_score": 0.9}', "from 1 to 3"),
        ('{"best_match_index": "2", "best_match_score": 0.9}', "from 1 to 3"),
        ('{"best_match_score": 0.9}', "best_match_index is missing"),
        # Schema A/B: the index is given exactly when the score is 0.5 or more.
        ('{"best_match_index": null, "best_match_score": 0.7}', "a score of 0.5 or more names"),
        ('{"best_match_index": null, "best_match_score": 0.5}', "a score of 0.5 or more names"),
        ('{"best_match_index": 2, "best_match_score": 0.3}', "below 0.5 the index must be null"),
        ('{"best_match_index": 1, "best_match_score": 0.49}', "below 0.5 the index must be null"),
    ],
)
def test_read_match_refuses(reply: str, reason: str) -> None:
    value, why = read_match(reply, 3)
    assert value is None and reason in why


def test_read_match_accepts_the_schema_boundaries() -> None:
    assert read_match('{"best_match_index": 1, "best_match_score": 0.5}', 3) == ((0.5, 0), "")
    assert read_match('{"best_match_index": null, "best_match_score": 0.49}', 3) == (
        (0.49, None),
        "",
    )


async def test_a_contradictory_match_is_retried_then_unscored() -> None:
    p = puzzle(key_details=("Only detail.",), logic_points=("Only logic.",))
    contradictory = '{"best_match_index": null, "best_match_score": 0.9}'
    fake = FakeChatModel([contradictory, contradictory, contradictory, '{"conclusion_score": 1}'])
    ev = await evaluate(fake, p, {"logic": ["x"], "details": [], "conclusion": "z"})
    assert not ev.logic[0].scored and "a score of 0.5 or more" in (ev.logic[0].reason or "")
    assert ev.details[0].score == 0.0  # no predicted details: 0 without a call
    assert [c.purpose for c in ev.calls] == ["match"] * 3 + ["conclusion"]
    assert metrics_from_evaluation(ev)["unscored_points"] == 1


def test_readers_strip_reasoning_and_read_the_last_object() -> None:
    draft = '<think>Maybe {"best_match_index": 1, "best_match_score": 0.9}? No.</think>'
    assert read_match(draft + '{"best_match_index": 2, "best_match_score": 0.6}', 3) == (
        (0.6, 1),
        "",
    )
    two = (
        '{"best_match_index": 1, "best_match_score": 0.9} no, rather: '
        '```json\n{"best_match_index": 3, "best_match_score": 0.8}\n```'
    )
    assert read_match(two, 3) == ((0.8, 2), "")
    # The last object with both keys, not an earlier one or a later fragment.
    partial = '{"best_match_index": 3, "best_match_score": 0.8} {"best_match_score": 0.1}'
    assert read_match(partial, 3) == ((0.8, 2), "")
    assert read_match("<think>unfinished", 3)[0] is None
    assert read_conclusion('<think>{"conclusion_score": 0.1}</think>{"conclusion_score": 0.9}') == (
        0.9,
        "",
    )
    assert read_conclusion('{"score": 0.2} then {"conclusion_score": 0.7}') == (0.7, "")
    extraction = (
        "<think>[Logical Relationships]\n- Logic 1: draft\n</think>\n"
        "[Logical Relationships]\n- Logic 1: A causes B.\n"
        "[Detailed Information]\n- Detail 1: old draft\n"
        "[Detailed Information]\n- Detail 1: The shop.\n"
    )
    assert read_extraction(extraction) == ((["A causes B."], ["The shop."]), "")
    fenced_draft = '<think>```json\n{"logic": ["draft"]}\n```</think>{"logic": ["L"]}'
    assert structured_summary(fenced_draft) == (["L"], [], "")


@pytest.mark.parametrize(
    "reply",
    [
        '{"a":' * 50_000,
        "[" * 100_000,
        "```json\n" + '{"a":' * 5_000 + "1" + "}" * 5_000 + "\n```",
        '{"x": ' + "[" * 5_000 + "]" * 5_000 + ', "best_match_score": 0.9}',
    ],
    ids=["deep-object", "deep-list", "deep-fenced", "deep-inside"],
)
async def test_deeply_nested_json_is_unreadable_not_an_error(reply: str) -> None:
    assert json_objects(reply) == []
    assert read_match(reply, 3) == (None, "no JSON object with best_match_score")
    assert read_conclusion(reply)[0] is None
    assert structured_summary(reply) is None
    # A readable object after a deep value is still found.
    deep = '{"a":' * 5_000 + "1" + "}" * 5_000
    assert read_match(deep + ' {"best_match_index": 1, "best_match_score": 0.9}', 3) == (
        (0.9, 0),
        "",
    )
    p = puzzle()
    ev = await evaluate(FakeChatModel([reply]), p, perfect(p))
    assert ev.unscored_points == len(p.logic_points) + len(p.key_details)
    assert ev.conclusion is None


def test_skip_nested_respects_strings() -> None:
    text = '{"a": "} ] {", "b": [1, {"c": "\\"}"}]} tail'
    assert text[skip_nested(text, 0) :] == " tail"
    assert skip_nested("[[[", 0) == 3


def test_read_conclusion() -> None:
    assert read_conclusion('{"conclusion_score": 0.75}') == (0.75, "")
    assert read_conclusion('```\n{"score": 1}\n```') == (1.0, "")
    assert read_conclusion('{"conclusion_score": 2}')[0] is None
    assert read_conclusion("pretty good")[0] is None


def test_read_extraction_in_both_languages() -> None:
    english = (
        "[Logical Relationships]\n- Logic 1: A causes B.\n- Logic 2: B causes C.\n"
        "[Detailed Information]\n- Detail 1: The shop is in Marseille.\n- Detail 2: ...\n"
    )
    assert read_extraction(english) == (
        (["A causes B.", "B causes C."], ["The shop is in Marseille."]),
        "",
    )
    chinese = "\n".join(
        [
            "**[逻辑关系]**",
            "1. 逻辑1：甲导致乙。",
            "",
            "[细节信息]：",
            "- 细节 1：店在马赛。",
            "- 细节2: 有涂鸦。",
        ]
    )
    assert read_extraction(chinese) == ((["甲导致乙。"], ["店在马赛。", "有涂鸦。"]), "")


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Logic: A causes B.", "no [Logical Relationships] block"),
        ("[Logical Relationships]\n- Logic 1: A.", "no [Detailed Information] block"),
        ("[Logical Relationships]\n[Detailed Information]\n- Detail 1: x", "lists no items"),
    ],
)
def test_read_extraction_refuses(reply: str, reason: str) -> None:
    value, why = read_extraction(reply)
    assert value is None and reason in why


def test_structured_summary_from_json_text_and_free_text() -> None:
    fenced = '```json\n{"logic": ["a"], "details": ["b", " "], "conclusion": "c"}\n```'
    assert structured_summary(fenced) == (["a"], ["b"], "c")
    assert structured_summary({"Logic": "one", "conclusion": "c"}) == (["one"], [], "c")
    assert structured_summary("He did it because of the tag.") is None
    assert structured_summary('{"logic": 3}') is None  # wrong types in text: free text
    with pytest.raises(ConfigError, match=r"summary\.logic"):
        structured_summary({"logic": 3})


# ---- prompts ----


def test_prompts_exist_in_both_languages_and_language_selects() -> None:
    assert prompts_for("en") is EN and prompts_for("zh") is ZH
    with pytest.raises(ConfigError, match="language"):
        prompts_for("de")
    english = extraction_messages(puzzle().bottom, "en")[1].content
    assert english.startswith(EN.extract_heading)
    assert "about 2 logical steps" in english and EN.logic_label in english
    chinese = match_messages("甲", ["乙", "丙"], "zh")[1].content
    assert chinese.startswith(ZH.match_heading)
    assert "\n1. 乙\n2. 丙\n" in chinese


# ---- the protocol with the scripted judge ----


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_perfect_summary_scores_100(language: str) -> None:
    puzzles, _ = load_corpus()
    p = next(x for x in puzzles if x.language == language)
    ev = await evaluate(judge(), p, perfect(p))
    metrics = metrics_from_evaluation(ev)
    assert metrics == {
        "logic_accuracy": 100.0,
        "detail_fidelity": 100.0,
        "conclusion_match": 100.0,
        "overall": pytest.approx(100.0),
        "unscored_points": 0,
    }
    assert ev.summary_format == "json" and not ev.extracted
    purposes = [c.purpose for c in ev.calls]
    assert purposes == ["match"] * (len(p.logic_points) + len(p.key_details)) + ["conclusion"]
    assert [s.best_match for s in ev.logic] == list(range(len(p.logic_points)))


async def test_a_json_summary_given_as_text_is_read_directly() -> None:
    p = puzzle()
    ev = await evaluate(judge(), p, "```json\n" + json.dumps(perfect(p)) + "\n```")
    assert ev.summary_format == "json"
    assert ev.predicted_logic == list(p.logic_points)
    assert "extract" not in [c.purpose for c in ev.calls]


async def test_gold_points_are_used_when_present_and_extracted_when_absent() -> None:
    p = puzzle()
    present = await evaluate(judge(), p, perfect(p))
    assert present.gold_logic == list(p.logic_points)
    assert present.gold_details == list(p.key_details)
    assert not present.extracted

    bare = dataclasses.replace(p, logic_points=(), key_details=())
    absent = await evaluate(judge(), bare, perfect(p))
    assert absent.extracted
    assert absent.calls[0].purpose == "extract"
    n_logic, n_details = point_counts(p.bottom, "en")
    assert 1 <= len(absent.gold_logic) <= n_logic
    assert 1 <= len(absent.gold_details) <= n_details
    sentences = split_sentences(p.bottom, "en")
    assert set(absent.gold_logic + absent.gold_details) <= set(sentences)

    # Only the missing kind is extracted; the given kind is kept.
    half = dataclasses.replace(p, key_details=())
    mixed = await evaluate(judge(), half, perfect(p))
    assert mixed.extracted and mixed.gold_logic == list(p.logic_points)
    assert mixed.gold_details and mixed.gold_details != list(p.key_details)


async def test_free_text_summary_is_extracted_with_the_same_prompt() -> None:
    p = puzzle()
    text = p.bottom
    ev = await evaluate(judge(), p, text)
    assert ev.summary_format == "text" and ev.summary == text
    extract = ev.calls[0]
    assert extract.purpose == "extract"
    assert extract.response.startswith(EN.logic_label)
    assert ev.predicted_logic and ev.predicted_details
    assert set(ev.predicted_logic + ev.predicted_details) <= set(split_sentences(text, "en"))
    # A gold detail that is a sentence of the bottom scores in full when the extraction listed
    # that sentence among the details.
    listed = [d for d in ev.details if d.point in ev.predicted_details]
    assert listed and all(d.calibrated == 1.0 for d in listed)
    assert all(ev.predicted_details[d.best_match] == d.point for d in listed)  # type: ignore[index]
    assert ev.conclusion == pytest.approx(1.0)


async def test_chinese_free_text_path() -> None:
    puzzles, _ = load_corpus()
    p = next(x for x in puzzles if x.language == "zh")
    ev = await evaluate(judge(), p, p.bottom)
    assert ev.summary_format == "text" and ev.predicted_logic and ev.predicted_details
    assert ev.calls[0].response.startswith(ZH.logic_label)
    assert ev.conclusion == pytest.approx(1.0)
    assert metrics_from_evaluation(ev)["unscored_points"] == 0


async def test_an_unrelated_summary_scores_low() -> None:
    p = puzzle()
    ev = await evaluate(judge(), p, {"logic": ["A cat sat on a mat."], "conclusion": "Weather."})
    metrics = metrics_from_evaluation(ev)
    assert metrics["logic_accuracy"] == 0 and metrics["detail_fidelity"] == 0
    assert metrics["overall"] < 10
    # No predicted details: every gold detail scores 0 without a matching call.
    assert all(d.score == 0 and d.reason for d in ev.details)
    assert [c.purpose for c in ev.calls].count("match") == len(p.logic_points)


@pytest.mark.parametrize("summary", ["", "   ", {"logic": [], "details": [], "conclusion": ""}])
async def test_an_empty_summary_scores_zero_without_matching_calls(summary: object) -> None:
    p = puzzle()
    ev = await evaluate(judge(), p, summary)  # type: ignore[arg-type]
    assert ev.summary_format == "empty" and ev.calls == []
    assert metrics_from_evaluation(ev) == {
        "logic_accuracy": 0.0,
        "detail_fidelity": 0.0,
        "conclusion_match": 0.0,
        "overall": 0.0,
        "unscored_points": 0,
    }


async def test_an_empty_summary_still_extracts_missing_gold_points() -> None:
    bare = dataclasses.replace(puzzle(), logic_points=(), key_details=())
    ev = await evaluate(judge(), bare, "")
    assert [c.purpose for c in ev.calls] == ["extract"]
    assert ev.gold_logic and all(s.score == 0 for s in ev.logic)


# ---- retries and unscored points ----


async def test_garbage_judge_leaves_everything_unscored_after_two_retries() -> None:
    p = puzzle()
    garbage = scripted(GarbagePolicy(), "scripted/garbage")
    ev = await evaluate(garbage, p, perfect(p))
    n_points = len(p.logic_points) + len(p.key_details)
    assert all(not s.scored and s.calibrated is None for s in ev.logic + ev.details)
    assert all(s.reason and "after 3 attempts" in s.reason for s in ev.logic + ev.details)
    assert ev.conclusion is None and "unscored" in (ev.conclusion_reason or "")
    purposes = [c.purpose for c in ev.calls]
    assert purposes.count("match") == 3 * n_points
    assert purposes.count("conclusion") == 3
    metrics = metrics_from_evaluation(ev)
    assert metrics["unscored_points"] == n_points
    assert metrics["logic_accuracy"] is None and metrics["overall"] is None
    assert len(ev.errors) == n_points + 1


async def test_garbage_judge_cannot_extract() -> None:
    bare = dataclasses.replace(puzzle(), logic_points=(), key_details=())
    garbage = scripted(GarbagePolicy(), "scripted/garbage")
    ev = await evaluate(garbage, bare, "Bruno fled because his partners were arrested.")
    assert not ev.extracted and ev.gold_logic == [] and ev.logic == []
    assert [c.purpose for c in ev.calls].count("extract") == 6  # gold and summary, 3 each
    assert any("gold points could not be extracted" in e for e in ev.errors)
    assert any("predicted points could not be extracted" in e for e in ev.errors)
    assert metrics_from_evaluation(ev)["overall"] is None
    # The gold points that could not be extracted are counted, never a silent gap.
    expected = sum(point_counts(bare.bottom, "en"))
    assert ev.unextracted_points == expected > 0
    assert metrics_from_evaluation(ev)["unscored_points"] == expected


@pytest.mark.parametrize("summary", ["", {"logic": ["x"], "details": ["y"], "conclusion": "z"}])
async def test_failed_gold_extraction_counts_the_expected_points_as_unscored(
    summary: object,
) -> None:
    # The puzzle has its logic points but no details: only the details were to be extracted.
    half = dataclasses.replace(puzzle(), key_details=())
    garbage = scripted(GarbagePolicy(), "scripted/garbage")
    ev = await evaluate(garbage, half, summary)  # type: ignore[arg-type]
    n_details = point_counts(half.bottom, "en")[1]
    assert ev.unextracted_points == n_details
    unscored_logic = sum(not p.scored for p in ev.logic)
    assert ev.unscored_points == unscored_logic + n_details
    stored = Evaluation.from_dict(json.loads(json.dumps(ev.to_dict())))
    assert metrics_from_evaluation(stored)["unscored_points"] == unscored_logic + n_details
    # Older records without the field read as 0.
    old = {k: v for k, v in ev.to_dict().items() if k != "unextracted_points"}
    assert Evaluation.from_dict(old).unextracted_points == 0


async def test_a_corrective_turn_follows_an_unusable_reply() -> None:
    p = puzzle(key_details=("Only detail.",), logic_points=("Only logic.",))
    fake = FakeChatModel(
        [
            "statement 1 fits best",
            '```json\n{"best_match_index": 1, "best_match_score": 0.7}\n```',
            '{"best_match_index": null, "best_match_score": 0.2}',
            '{"conclusion_score": 0.5}',
        ]
    )
    ev = await evaluate(fake, p, {"logic": ["x"], "details": ["y"], "conclusion": "z"})
    assert ev.logic[0].score == pytest.approx(0.7) and ev.logic[0].best_match == 0
    assert ev.logic[0].calibrated == pytest.approx(0.7)
    assert ev.details[0].score == pytest.approx(0.2) and ev.details[0].calibrated == 0
    assert ev.conclusion == pytest.approx(0.5)
    retry_messages, params = fake.requests[1]
    assert [m.role for m in retry_messages] == ["system", "user", "assistant", "user"]
    assert retry_messages[2].content == "statement 1 fits best"
    assert "could not be used" in retry_messages[3].content
    assert params == ModelParams(temperature=0.0, seed=42)
    assert [c.purpose for c in ev.calls] == ["match", "match", "match", "conclusion"]


async def test_retries_must_be_a_non_negative_integer() -> None:
    with pytest.raises(ConfigError, match="retries"):
        await evaluate(judge(), puzzle(), "x", retries=-1)


# ---- storing and recomputing ----


async def test_metrics_recompute_from_a_stored_evaluation() -> None:
    p = puzzle()
    ev = await evaluate(judge(), p, p.bottom)
    stored = json.loads(json.dumps(ev.to_dict()))
    again = Evaluation.from_dict(stored)
    assert again == ev
    assert metrics_from_evaluation(again) == metrics_from_evaluation(ev)
    assert metrics_from_evaluation(stored) == metrics_from_evaluation(ev)


def test_from_dict_names_the_bad_field() -> None:
    with pytest.raises(InvalidFile, match=r"logic\.0\.score"):
        Evaluation.from_dict(
            {"puzzle_id": "p", "language": "en", "logic": [{"point": "a", "score": "x"}]}
        )


# ---- the scripted judge ----


def test_scripted_similarity_and_unknown_requests() -> None:
    assert similarity("The crew was arrested.", "The crew was arrested.") == 1.0
    assert similarity("同伙被捕了。", "同伙被捕了。") == 1.0
    assert similarity("A cat.", "Police raid.") == 0.0
    answer = TurtleSoupJudgePolicy().respond([Message(role="user", content="hi")], ModelParams())
    assert "TurtleSoup evaluation" in answer


def test_scripted_judge_answers_null_below_the_threshold() -> None:
    messages = match_messages("The crew was arrested at the docks.", ["A cat sat."], "en")
    reply = json.loads(TurtleSoupJudgePolicy().respond(messages, ModelParams()))
    assert reply == {"best_match_index": None, "best_match_score": 0.0}
