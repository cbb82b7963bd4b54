"""Responder: answer normalization, the two calls, retries, the lexical stand-in, judge_accuracy."""

from __future__ import annotations

import logging

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.turtlesoup import importers, responder_prompts
from forkingpaths.benchmarks.turtlesoup import responder as responder_module
from forkingpaths.benchmarks.turtlesoup.importers import LabelledGuess, load_corpus
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle
from forkingpaths.benchmarks.turtlesoup.responder import (
    ANSWERS,
    KEY_CLUE_TAGS,
    LexicalResponder,
    Responder,
    ResponderAnswer,
    answer_text,
    case_label,
    judge_accuracy,
    lexical_answer,
    normalize_answer,
    parse_key_clue,
    render_answer_messages,
    render_key_clue_messages,
)
from forkingpaths.benchmarks.turtlesoup.responder_scripted import (
    NOT_A_REQUEST,
    TurtleSoupResponderPolicy,
)
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import EchoPolicy, GarbagePolicy, ScriptedModel


def scripted(policy: object, name: str = "scripted/test") -> ScriptedModel:
    return ScriptedModel(name, policy, ModelRuntime(cache=False))  # type: ignore[arg-type]


def shipped(puzzle_id: str) -> Puzzle:
    puzzles, errors = load_corpus()
    assert errors == []
    return next(p for p in puzzles if p.id == puzzle_id)


def story(title: str, bottom: str = "A story.", key_clues: tuple[str, ...] = ()) -> Puzzle:
    return Puzzle(
        id=f"{title}-en",
        entry=title,
        category="uncategorized",
        language="en",
        title=title,
        surface="Something odd happened.",
        bottom=bottom,
        key_clues=key_clues,
        source="turtlebench",
    )


EN = "crime_thriller-01-en"
ZH = "crime_thriller-01-zh"


# ---- normalization ----


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", "Yes"),
        ("Yes.", "Yes"),
        ("**No**", "No"),
        ("yes, because he was there", "Yes"),
        ("Answer: Unknown", "Unknown"),
        ("The answer is no.", "No"),
        ("Final answer: **Yes**", "Yes"),
        ("Irrelevant", "Unknown"),
        ("Not relevant.", "Unknown"),
        ("`unknown`", "Unknown"),
        ("'No'", "No"),
        ("Yes<Key Clue>", "Yes"),
        ("YES!", "Yes"),
        ("ＹＥＳ！", "Yes"),
        ("  no  ", "No"),
        ("Nope", "No"),
        ("是", "Yes"),
        ("是的", "Yes"),
        ("是。", "Yes"),
        ("对", "Yes"),
        ("不是", "No"),
        ("不是的，他没去", "No"),
        ("否", "No"),
        ("不", "No"),
        ("不对！", "No"),
        ("不知道", "Unknown"),
        ("未知", "Unknown"),
        ("无关", "Unknown"),
        ("不重要。", "Unknown"),
        ("不确定", "Unknown"),
        ("答案：否", "No"),
        ("回答：是的", "Yes"),
        ("“无关”", "Unknown"),
        # Not "No" (review finding 10): uncertainty is Unknown.
        ("不是很确定", "Unknown"),
        ("我不是很确定。", "Unknown"),
        ("不太清楚", "Unknown"),
        ("No idea", "Unknown"),
        ("I have no idea.", "Unknown"),
        # Inline reasoning is removed before reading.
        ("<think>Yes? Hmm, no, the text says nothing.</think>\nUnknown", "Unknown"),
        ("<think>It might be yes.\n\nBut no.\n\nNo", "No"),
        ("The bottom says he left.</think> Yes", "Yes"),
    ],
)
def test_normalize_answer(reply: str, expected: str) -> None:
    assert normalize_answer(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "Yes or no",
        "Yes and no",
        "I cannot say yes or no",
        "Yes. Wait, no.",
        "是的，不过不是他",
        "nothing",
        "perhaps",
        "lorem ipsum dolor",
        # A refusal and a both-ways answer are not answers (retried, then recorded as failed).
        "No comment",
        "No comment.",
        "是也不是",
        "是也不是，要看情况",
        # Reasoning that never reached an answer.
        "<think>Yes, or no? Probably yes",
        "<think>yes</think>",
    ],
)
def test_normalize_answer_refuses_ambiguous_or_empty_replies(reply: str) -> None:
    assert normalize_answer(reply) is None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", True),
        ("yes.", True),
        ("是", True),
        ("No", False),
        ("**No**", False),
        ("否", False),
        ("不是", False),
        ("Unknown", None),
        ("maybe", None),
        ("<think>It touches clue 2, so yes?</think>No", False),
        ("<think>no</think>\n**Yes**", True),
    ],
)
def test_parse_key_clue(reply: str, expected: bool | None) -> None:
    assert parse_key_clue(reply) is expected


# ---- the model-backed responder ----


async def test_two_calls_and_key_clue_appended() -> None:
    puzzle = shipped(EN)
    model = FakeChatModel(["Yes", "Yes"])
    reply = await Responder(model, puzzle).answer("Was the tag a signal?")
    assert isinstance(reply, ResponderAnswer)
    assert (reply.answer, reply.key_clue, reply.text, reply.raw) == (
        "Yes",
        True,
        "Yes<Key Clue>",
        "Yes",
    )
    assert not reply.failed and not reply.failed_key_clue
    assert [c.purpose for c in reply.calls] == ["respond", "key_clue"]
    # Temperature 0 and seed 42 on both calls (App. D.1).
    assert [params for _, params in model.requests] == [ModelParams(temperature=0.0, seed=42)] * 2
    answer_messages, clue_messages = (messages for messages, _ in model.requests)
    assert answer_messages == render_answer_messages(puzzle, "Was the tag a signal?")
    assert clue_messages == render_key_clue_messages(puzzle, "Was the tag a signal?")
    assert puzzle.bottom in answer_messages[0].content
    assert answer_messages[-1].content.endswith("Was the tag a signal?")
    assert all(clue in clue_messages[-1].content for clue in puzzle.key_clues)
    assert reply.as_info()["text"] == "Yes<Key Clue>"


async def test_no_key_clue_and_unknown_with_key_clue() -> None:
    puzzle = shipped(EN)
    reply = await Responder(FakeChatModel(["No", "No"]), puzzle).answer("Was it a dog?")
    assert (reply.answer, reply.key_clue, reply.text) == ("No", False, "No")
    # The paper's transcripts show "Unknown <Key Clue>": the flag does not depend on the answer.
    reply = await Responder(FakeChatModel(["Irrelevant", "是"]), puzzle).answer("Was it night?")
    assert reply.text == "Unknown<Key Clue>"


async def test_key_clues_false_never_calls_the_clue_check() -> None:
    model = FakeChatModel(["No"])
    reply = await Responder(model, shipped(EN), key_clues=False).answer("Was it a dog?")
    assert len(model.requests) == 1
    assert [c.purpose for c in reply.calls] == ["respond"]
    assert reply.text == "No" and not reply.key_clue


async def test_empty_clue_library_skips_the_clue_check() -> None:
    model = FakeChatModel(["Yes"])
    reply = await Responder(model, story("Lonely")).answer("Is it a story?")
    assert len(model.requests) == 1 and reply.text == "Yes"


async def test_corrective_turn_after_an_unreadable_reply() -> None:
    model = FakeChatModel(["Let me think about the story first.", "No", "No"])
    reply = await Responder(model, shipped(EN)).answer("Was Bruno a policeman?")
    assert (reply.answer, reply.failed, reply.raw) == ("No", False, "No")
    assert [c.purpose for c in reply.calls] == ["respond", "respond", "key_clue"]
    retry = model.requests[1][0]
    assert retry[-2] == Message(role="assistant", content="Let me think about the story first.")
    assert retry[-1].role == "user"
    assert "Yes, No or Unknown" in retry[-1].content


async def test_garbage_is_retried_then_recorded_as_unknown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = scripted(GarbagePolicy(), "scripted/garbage")
    responder = Responder(model, shipped(EN), retries=2)
    with caplog.at_level(logging.WARNING):
        reply = await responder.answer("Was the tag a signal?")
    assert (reply.answer, reply.failed, reply.key_clue, reply.failed_key_clue) == (
        "Unknown",
        True,
        False,
        True,
    )
    assert reply.text == "Unknown"
    assert normalize_answer(reply.raw) is None and reply.raw
    assert [c.purpose for c in reply.calls] == ["respond"] * 3 + ["key_clue"] * 3
    assert all(c.model == "scripted/garbage" for c in reply.calls)
    assert "recorded as Unknown" in caplog.text and "crime_thriller-01-en" in caplog.text
    assert "recorded as not a key clue" in caplog.text


async def test_unparsable_key_clue_is_retried_then_false() -> None:
    model = FakeChatModel(["Yes", "Unknown", "It might be.", "Hard to say"])
    reply = await Responder(model, shipped(EN), retries=2).answer("Was the tag a signal?")
    assert (reply.answer, reply.failed, reply.key_clue, reply.failed_key_clue) == (
        "Yes",
        False,
        False,
        True,
    )
    assert reply.text == "Yes"
    assert [c.purpose for c in reply.calls] == ["respond"] + ["key_clue"] * 3
    assert "Yes or No" in model.requests[-1][0][-1].content


async def test_retries_zero_means_one_call() -> None:
    model = FakeChatModel(["???"])
    reply = await Responder(model, shipped(EN), retries=0, key_clues=False).answer("Q?")
    assert reply.failed and len(model.requests) == 1


@pytest.mark.parametrize("retries", [-1, 1.5, True, "2"])
def test_retries_are_validated(retries: object) -> None:
    with pytest.raises(ConfigError, match="retries"):
        Responder(FakeChatModel(["Yes"]), shipped(EN), retries=retries)  # type: ignore[arg-type]


async def test_chinese_puzzle_gets_chinese_prompts() -> None:
    puzzle = shipped(ZH)
    model = FakeChatModel(["不是", "否"])
    reply = await Responder(model, puzzle).answer("涂鸦是恶作剧吗？")
    # The answer stays canonical; what the Chinese player sees is Chinese.
    assert (reply.answer, reply.text) == ("No", "否")
    answer_messages, clue_messages = (messages for messages, _ in model.requests)
    assert answer_messages[0].content.startswith(responder_prompts.ZH.answer_heading)
    assert clue_messages[0].content.startswith(responder_prompts.ZH.clue_heading)
    assert responder_prompts.ZH.question_heading in answer_messages[1].content
    assert puzzle.bottom in answer_messages[0].content


async def test_reasoning_replies_are_read_after_the_reasoning() -> None:
    model = FakeChatModel(["<think>Yes... or No?</think>\nNo", "<think>no</think>Yes"])
    reply = await Responder(model, shipped(EN)).answer("Was it a prank?")
    assert (reply.answer, reply.key_clue, reply.failed) == ("No", True, False)
    assert len(model.requests) == 2  # no retry needed


async def test_chinese_answers_are_shown_in_chinese() -> None:
    assert answer_text("Yes", True, "zh") == "是<关键线索>"
    assert answer_text("Unknown", False, "zh") == "不知道"
    assert answer_text("No", True) == answer_text("No", True, "en") == "No<Key Clue>"
    assert KEY_CLUE_TAGS["zh"] == "<关键线索>"
    reply = await Responder(FakeChatModel(["Yes", "Yes"]), shipped(ZH)).answer("涂鸦是暗号吗？")
    assert (reply.answer, reply.text) == ("Yes", "是<关键线索>")
    lexical = await LexicalResponder(shipped(ZH)).answer("当时在下雨吗？")
    assert (lexical.answer, lexical.text) == ("Unknown", "不知道")


def test_prompt_sets_cover_both_languages_with_the_same_fields() -> None:
    assert set(responder_prompts.PROMPTS) == {"en", "zh"}
    for prompts in responder_prompts.PROMPTS.values():
        system = prompts.answer_system.substitute(surface="S", bottom="B")
        assert system.startswith(prompts.answer_heading)
        assert all(word in system for word in ANSWERS)
        user = prompts.clue_user.substitute(surface="S", bottom="B", clues="1. C", question="Q")
        assert prompts.question_heading in user and prompts.clues_heading in user


# ---- the lexical stand-in ----


async def test_lexical_responder_on_a_shipped_english_puzzle() -> None:
    responder = LexicalResponder(shipped(EN))
    copied = await responder.answer("Did the police raid the crew at the docks?")
    negated = await responder.answer("Did the police not raid the crew at the docks?")
    unrelated = await responder.answer("Was it raining?")
    assert (copied.answer, negated.answer, unrelated.answer) == ("Yes", "No", "Unknown")
    assert copied.calls == [] and not copied.failed
    # A negation in the bottom flips too: "The tag was not vandalism but a signal".
    assert (await responder.answer("Was the tag random vandalism?")).answer == "No"
    assert (await responder.answer("Was the tag a deliberate signal?")).answer == "Yes"


async def test_lexical_responder_on_a_shipped_chinese_puzzle() -> None:
    responder = LexicalResponder(shipped(ZH))
    assert (await responder.answer("警方在码头突袭了这个团伙吗？")).answer == "Yes"
    assert (await responder.answer("警方没有在码头突袭这个团伙吗？")).answer == "No"
    assert (await responder.answer("当时在下雨吗？")).answer == "Unknown"
    assert (await responder.answer("涂鸦是恶作剧吗？")).answer == "No"
    # "是不是" asks; it does not negate.
    assert (await responder.answer("布鲁诺是不是逃走了？")).answer == "Yes"


async def test_lexical_key_clue_flag() -> None:
    puzzle = shipped(EN)
    # Copies a clue, not the bottom ("not vandalism but a signal"): flagged, the answer aside.
    question = "Was the tag a deliberate signal meant for Bruno?"
    on = await LexicalResponder(puzzle).answer(question)
    assert on.key_clue and on.text == on.answer + "<Key Clue>"
    off = await LexicalResponder(puzzle, key_clues=False).answer(question)
    assert not off.key_clue and off.text == off.answer == on.answer
    # A bottom fact no clue words: answered, not flagged.
    bottom_fact = "Did the police raid the crew at the docks?"
    assert (await LexicalResponder(puzzle).answer(bottom_fact)).text == "Yes"
    assert not (await LexicalResponder(puzzle).answer("Was it raining?")).key_clue


def test_lexical_answer_is_deterministic_and_handles_empty_questions() -> None:
    story_texts = ("A man fell.", "The man was not pushed; he slipped on ice.")
    assert lexical_answer("Was he pushed?", story_texts, (), "en") == ("No", False)
    assert lexical_answer(
        "Did the man slip on ice?", story_texts, ("The man slipped on ice.",), "en"
    ) == (
        "Yes",
        True,
    )
    assert lexical_answer("?", story_texts, (), "en") == ("Unknown", False)


def test_lexical_thresholds_are_validated() -> None:
    with pytest.raises(ConfigError, match="answer_threshold"):
        LexicalResponder(shipped(EN), answer_threshold=0.0)


# ---- the scripted policy ----


@pytest.mark.parametrize(
    ("puzzle_id", "questions"),
    [
        (
            EN,
            [
                "Did the police raid the crew at the docks?",
                "Did the police not raid the crew at the docks?",
                "Was the tag a deliberate signal meant for Bruno?",
                "Was it raining?",
            ],
        ),
        (
            ZH,
            [
                "警方在码头突袭了这个团伙吗？",
                "涂鸦是恶作剧吗？",
                "涂鸦是暗号吗？",
                "当时在下雨吗？",
            ],
        ),
    ],
)
async def test_scripted_policy_answers_like_the_lexical_responder(
    puzzle_id: str, questions: list[str]
) -> None:
    puzzle = shipped(puzzle_id)
    model = scripted(TurtleSoupResponderPolicy(), "scripted/turtlesoup-responder")
    via_model = Responder(model, puzzle)
    lexical = LexicalResponder(puzzle)
    for question in questions:
        reply = await via_model.answer(question)
        expected = await lexical.answer(question)
        assert (reply.answer, reply.key_clue, reply.text) == (
            expected.answer,
            expected.key_clue,
            expected.text,
        )
        assert not reply.failed and len(reply.calls) == 2


def test_scripted_policy_refuses_other_requests() -> None:
    policy = TurtleSoupResponderPolicy()
    reply = policy.respond([Message(role="user", content="Hello")], ModelParams())
    assert reply == NOT_A_REQUEST and normalize_answer(reply) is None


# ---- judge_accuracy ----


def echo_factory(puzzle: Puzzle) -> Responder:
    """A responder whose model repeats the question, so each guess states its own answer."""
    return Responder(scripted(EchoPolicy(), "scripted/echo"), puzzle, key_clues=False)


async def test_judge_accuracy_on_hand_built_cases() -> None:
    stories = [story("Stamp"), story("Lift")]
    cases = [
        ("Yes", "Stamp", "T"),
        {"guess": "Yes", "title": "Lift", "label": "yes"},
        LabelledGuess(guess="No", title="Stamp", label="Yes"),
        ("No", "Lift", "f"),
        ("Unknown", "Stamp", "N"),
        ("Yes", "Lift", "Irrelevant"),
        ("Yes", "Nowhere", "T"),
    ]
    result = await judge_accuracy(cases, stories, echo_factory)
    assert (result["n"], result["n_cases"], result["unknown_titles"]) == (6, 7, 1)
    assert result["missing_titles"] == ["Nowhere"]
    assert result["accuracy"] == pytest.approx(4 / 6)
    yes, no, unknown = (result["labels"][label] for label in ANSWERS)
    assert (yes["precision"], yes["recall"], yes["support"]) == pytest.approx((2 / 3, 2 / 3, 3))
    assert (no["precision"], no["recall"], no["support"]) == pytest.approx((1 / 2, 1.0, 1))
    assert no["f1"] == pytest.approx(2 / 3)
    assert (unknown["precision"], unknown["recall"], unknown["support"]) == pytest.approx(
        (1.0, 1 / 2, 2)
    )
    assert result["confusion"]["Yes"] == {"Yes": 2, "No": 1, "Unknown": 0}
    assert result["responder_failures"] == 0
    assert [p["correct"] for p in result["predictions"]] == [True, True, False, True, True, False]


async def test_judge_accuracy_undefined_scores_are_none_not_zero() -> None:
    cases = [("Yes", "Stamp", "T"), ("Yes", "Stamp", "F")]
    result = await judge_accuracy(cases, {"any key": story("Stamp")}, echo_factory)
    unknown = result["labels"]["Unknown"]
    assert (unknown["precision"], unknown["recall"], unknown["f1"]) == (None, None, None)
    no = result["labels"]["No"]
    assert (no["precision"], no["recall"], no["f1"]) == (None, 0.0, None)
    assert result["accuracy"] == 0.5
    # Macro F1 over the labels with support (Yes, No); No's undefined F1 counts 0.
    yes_f1 = result["labels"]["Yes"]["f1"]
    assert yes_f1 == pytest.approx(2 / 3)
    assert result["macro_f1"] == pytest.approx((yes_f1 + 0.0) / 2)


async def test_macro_f1_averages_every_label_with_support() -> None:
    cases = [("Yes", "Stamp", "T"), ("No", "Stamp", "F"), ("Yes", "Stamp", "N")]
    result = await judge_accuracy(cases, [story("Stamp")], echo_factory)
    f1 = {label: row["f1"] for label, row in result["labels"].items()}
    # Unknown has support but was never answered: undefined F1, 0 in the average.
    assert f1["Unknown"] is None
    assert result["macro_f1"] == pytest.approx((f1["Yes"] + f1["No"] + 0.0) / 3)


async def test_judge_accuracy_with_no_known_title_and_bad_labels() -> None:
    result = await judge_accuracy([("Yes", "Nowhere", "T")], [story("Stamp")], echo_factory)
    assert result["n"] == 0 and result["accuracy"] is None and result["unknown_titles"] == 1
    with pytest.raises(ConfigError, match=r"cases\[0\].*label"):
        await judge_accuracy([("Yes", "Stamp", "maybe")], [story("Stamp")], echo_factory)
    with pytest.raises(ConfigError, match=r"cases\[0\]"):
        await judge_accuracy([("Yes", "Stamp")], [story("Stamp")], echo_factory)


def test_case_label() -> None:
    assert [case_label(x) for x in ("T", "f", " n ", "Irrelevant", "UNKNOWN")] == [
        "Yes",
        "No",
        "Unknown",
        "Unknown",
        "Unknown",
    ]


def test_case_labels_are_one_table_for_the_importer_and_the_responder() -> None:
    assert responder_module.CASE_LABELS is importers.CASE_LABELS
    for label, answer in importers.CASE_LABELS.items():
        assert case_label(label.upper()) == answer == importers.normalize_case_label(label)
    assert case_label("Correct") == "Yes" and case_label("对") == "Yes"
    with pytest.raises(ConfigError, match="Correct/Incorrect"):
        case_label("maybe")
