"""Tests of the TurtleSoup questioners: Mosaic-Agent (call pattern, meta-cognition EMA and switch
rule, screening, ablations, summary), the baseline, the human agent and the scripted policy."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from rich.console import Console
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.turtlesoup.agents import baseline_prompts
from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.baseline import first_question, make_baseline
from forkingpaths.benchmarks.turtlesoup.agents.genres import GENRES
from forkingpaths.benchmarks.turtlesoup.agents.human import HumanQuestioner, make_human
from forkingpaths.benchmarks.turtlesoup.agents.mosaic import (
    GENRE_VOTE_PARAMS,
    BeliefState,
    MetaCognition,
    MosaicAgent,
    make_mosaic,
    match_candidate,
    parse_aps,
    parse_belief,
    parse_candidates,
    parse_genre,
    ruled_out,
    same_direction,
    smoothed_confidence,
    tally_votes,
)
from forkingpaths.benchmarks.turtlesoup.agents.scripted import (
    UNRECOGNISED,
    TurtleSoupQuestionerPolicy,
    prompt_kind,
)
from forkingpaths.benchmarks.turtlesoup.dialogue import SOLVE_COMMAND
from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES, CATEGORY_NAMES_ZH
from forkingpaths.core.agent import Agent, Decision
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import Completion, Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.registry import make_benchmark
from forkingpaths.models.cache import cache_key
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

SURFACE_EN = (
    "For months, Kenji ate at the same ramen stall every night and left the owner a huge tip. "
    "One night the owner pushed the note back, and Kenji wept with joy."
)
SURFACE_ZH = (
    "几个月来，健二每晚都在同一家拉面摊吃面，总给老板娘一大笔小费。"
    "一天晚上，老板娘把钞票推了回来，健二喜极而泣。"
)
INSTANCE = Instance(id="supernatural-01-en", split="en")


def scripted_model(policy: Any = None) -> ScriptedModel:
    return ScriptedModel(
        "scripted/turtlesoup-questioner",
        policy or TurtleSoupQuestionerPolicy(),
        ModelRuntime(cache=False),
    )


class OverridePolicy:
    """The scripted questioner, except for the prompt kinds given (reply text or a function of
    the prompt); a test-local policy, still deterministic in the messages."""

    def __init__(self, overrides: Mapping[str, str | Callable[[str], str]]) -> None:
        self.inner = TurtleSoupQuestionerPolicy()
        self.overrides = overrides

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        kind, _ = prompt_kind(messages)
        if kind in self.overrides:
            reply = self.overrides[kind]
            return reply(messages[-1].content) if callable(reply) else reply
        return self.inner.respond(messages, params)


class RecordingModel:
    """Passes requests to a ChatModel and keeps every user prompt with the reply."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.exchanges: list[tuple[str, str]] = []

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        completion = await self.inner.complete(messages, params)
        self.exchanges.append((messages[-1].content, completion.text))
        return completion


def observation(
    turn: int,
    history: list[dict[str, Any]],
    *,
    phase: str = "ask",
    language: str = "en",
) -> Observation:
    """An observation as the TurtleSoup env builds it (contract §3)."""
    data = {
        "puzzle_id": f"supernatural-01-{language}",
        "language": language,
        "title": "The Note Pushed Back",
        "surface": SURFACE_ZH if language == "zh" else SURFACE_EN,
        "turn": turn,
        "max_turns": 30,
        "history": [dict(e) for e in history],
        "key_clues": [dict(e) for e in history if e["key_clue"]],
        "phase": phase,
    }
    return Observation(text=f"{data['surface']}\n(turn {turn})", data=data)


def answer_for(turn: int) -> tuple[str, bool]:
    """A fixed answer schedule: Yes/No/Unknown in turn, no key clues."""
    return (("Yes", False), ("No", False), ("Unknown", False))[turn % 3]


async def play(
    agent: Any,
    turns: int,
    *,
    language: str = "en",
    answers: Callable[[int], tuple[str, bool]] = answer_for,
) -> tuple[list[Decision], Decision]:
    """Run `turns` ask turns and the summary; the answers come from `answers(turn)`."""
    agent.reset(INSTANCE, 0)
    history: list[dict[str, Any]] = []
    decisions = []
    for turn in range(1, turns + 1):
        decision = await agent.act(observation(turn, history, language=language))
        decisions.append(decision)
        answer, clue = answers(turn)
        history.append(
            {"turn": turn, "question": decision.action, "answer": answer, "key_clue": clue}
        )
    final = await agent.act(observation(turns + 1, history, phase="summarize", language=language))
    return decisions, final


def purposes(decision: Decision) -> list[str]:
    return [call.purpose for call in decision.calls]


# --- the scripted policy ---------------------------------------------------------------------

HISTORY = [
    {"turn": 1, "question": "Did the owner remember Kenji?", "answer": "Yes", "key_clue": True},
    {"turn": 2, "question": "Was Kenji a ghost?", "answer": "No", "key_clue": False},
    {"turn": 3, "question": "Was the day repeating?", "answer": "Yes", "key_clue": True},
]


def all_prompts(language: str) -> dict[str, str]:
    """One rendered prompt of every kind the questioners send."""
    surface = SURFACE_ZH if language == "zh" else SURFACE_EN
    history = prompts.render_history(HISTORY, language)
    clues = prompts.render_history([e for e in HISTORY if e["key_clue"]], language)
    candidates = ["Was the note fake?", "Did the owner know Kenji?", "Was it raining?"]
    return {
        "local": prompts.render_local(
            language,
            surface=surface,
            latest=prompts.render_exchange(HISTORY[-1], language),
            history=prompts.render_history(HISTORY[:-1], language),
        ),
        "belief": prompts.render_belief(
            language, surface=surface, key_clues=clues, history=history, previous="(none yet)"
        ),
        "aps": prompts.render_aps(
            language,
            surface=surface,
            key_clues=clues,
            logic="- a loop",
            details="- the owner remembered",
            conclusion="Kenji was in a loop.",
        ),
        "genre": prompts.render_genre(language, surface=surface, history=history, key_clues=clues),
        "candidates": prompts.render_candidates(
            language,
            surface=surface,
            advice="- Was the day repeating?",
            analysis="New information.",
            guidance=prompts.strategy_text(None, language),
            history=history,
        ),
        "screen": prompts.render_screen(
            language,
            surface=surface,
            advice="(none yet)",
            analysis="(none yet)",
            history=history,
            asked=prompts.render_numbered([e["question"] for e in HISTORY], language),
            candidates=prompts.render_numbered(candidates, language),
            blacklist=prompts.render_list([], language),
        ),
        "summary": prompts.render_summary(
            language, surface=surface, key_clues=clues, history=history
        ),
        "question": baseline_prompts.render_question(
            language, surface=surface, history=history, turn=4, max_turns=30
        ),
        "final": baseline_prompts.render_final(
            language, surface=surface, key_clues=clues, history=history
        ),
    }


@pytest.mark.parametrize("language", ["en", "zh"])
def test_scripted_policy_answers_every_prompt_kind_in_its_format(language: str) -> None:
    policy = TurtleSoupQuestionerPolicy()
    rendered = all_prompts(language)
    replies = {}
    for kind, text in rendered.items():
        messages = [Message(role="user", content=text)]
        assert prompt_kind(messages) == (kind, language)
        replies[kind] = policy.respond(messages, ModelParams())
        assert replies[kind] == policy.respond(messages, ModelParams())  # deterministic
    assert "1." in replies["local"] and "3." in replies["local"]
    belief = parse_belief(replies["belief"])
    assert belief is not None and len(belief.details) == 2  # the two Yes answers
    assert len(belief.logic) == 2  # both Yes answers were key clues
    assert parse_belief(replies["summary"]) is not None
    assert parse_aps(replies["aps"])
    assert parse_genre(replies["genre"]) is not None
    assert len(parse_candidates(replies["candidates"])) == 3
    assert replies["screen"] in ["Was the note fake?", "Did the owner know Kenji?"]
    assert replies["question"].endswith(("?", "？"))
    assert replies["question"] not in [e["question"] for e in HISTORY]
    # The baseline's final summary is the same JSON belief Mosaic's summary prompt gets.
    assert parse_belief(replies["final"]) == parse_belief(replies["summary"])


def test_scripted_policy_genre_follows_cue_words() -> None:
    text = all_prompts("en")["genre"]
    reply = TurtleSoupQuestionerPolicy().respond(
        [Message(role="user", content=text)], ModelParams()
    )
    assert reply in [g.names["en"] for g in GENRES]
    murder = text.replace(SURFACE_EN, "A man was found dead with a knife; the police found blood.")
    reply = TurtleSoupQuestionerPolicy().respond(
        [Message(role="user", content=murder)], ModelParams()
    )
    assert reply == "Crime Thriller"
    plain = prompts.render_genre(
        "zh", surface="她打开了门。", history="（暂无）", key_clues="（暂无）"
    )
    reply = TurtleSoupQuestionerPolicy().respond(
        [Message(role="user", content=plain)], ModelParams()
    )
    assert reply == "巧妙逻辑"  # no cue at all


def test_scripted_policy_screening_skips_asked_and_ruled_out_questions() -> None:
    text = all_prompts("en")["screen"]
    text = text.replace(
        "<Ruled-out directions>\n(none yet)",
        "<Ruled-out directions>\n- Was the note counterfeit or fake?",
    )
    reply = TurtleSoupQuestionerPolicy().respond(
        [Message(role="user", content=text)], ModelParams()
    )
    assert reply == "Did the owner know Kenji?"


def test_scripted_policy_answers_unknown_prompts_plainly() -> None:
    reply = TurtleSoupQuestionerPolicy().respond(
        [Message(role="user", content="Hello there")], ModelParams()
    )
    assert reply == UNRECOGNISED


def test_every_genre_has_a_strategy_in_both_languages() -> None:
    for language in prompts.LANGUAGES:
        assert prompts.strategy_text(None, language)
        for genre in GENRES:
            assert prompts.strategy_text(genre.id, language)
            assert genre.names[language] in prompts.render_genres(language)
    assert [g.id for g in GENRES] == [
        "crime_thriller",
        "mind_game",
        "supernatural",
        "constant_change",
        "clever_logic",
    ]


# --- Mosaic: call pattern --------------------------------------------------------------------


async def test_mosaic_call_pattern_over_a_scripted_dialogue() -> None:
    agent = make_mosaic(model=scripted_model())
    assert isinstance(agent, Agent)
    decisions, final = await play(agent, 12)
    genre = ["genre"] * 3
    expected = {1: ["candidates", "screen"]}
    for turn in range(2, 13):
        pattern = ["local"]
        if (turn - 1) % 5 == 0:
            pattern += ["belief", "aps", *genre]  # 5 answered: belief+APS and the 5-turn check
        expected[turn] = [*pattern, "candidates", "screen"]
    assert {t: purposes(d) for t, d in enumerate(decisions, start=1)} == expected
    assert purposes(final) == ["belief"]
    questions = [d.action for d in decisions]
    assert all(q.strip() for q in questions)
    assert len(set(questions)) == len(questions)  # the scripted screen avoids asked questions


async def test_mosaic_genre_check_triggered_by_three_new_key_clues() -> None:
    agent = make_mosaic(model=scripted_model())

    def clue_answers(turn: int) -> tuple[str, bool]:
        return ("Yes", turn in (1, 2, 3, 5, 6, 7))

    decisions, _ = await play(agent, 9, answers=clue_answers)
    checks = [t for t, d in enumerate(decisions, start=1) if "genre" in purposes(d)]
    # 3 clues after turn 3 -> check at turn 4; 3 more by turn 7 -> check at turn 8 (the 5-turn
    # rule alone would fire at turn 9).
    assert checks == [4, 8]
    assert all(purposes(decisions[t - 1]).count("genre") == 3 for t in checks)


async def test_mosaic_uses_the_interval_option() -> None:
    agent = make_mosaic(model=scripted_model(), deliberation_interval=3, metacognition=False)
    decisions, _ = await play(agent, 8)
    beliefs = [t for t, d in enumerate(decisions, start=1) if "belief" in purposes(d)]
    assert beliefs == [4, 7]


async def test_mosaic_decisions_record_genre_confidence_and_blacklist() -> None:
    agent = make_mosaic(
        model=scripted_model(OverridePolicy({"genre": "Supernatural"})), pruning=False
    )
    decisions, _ = await play(agent, 7)
    assert "genre: unknown (c=0.50)" in decisions[0].thought
    assert "genre: Supernatural (c=0.85)" in decisions[5].thought
    assert "blacklist: " in decisions[5].thought
    assert agent.genre == "supernatural"
    assert agent.confidence == pytest.approx(0.85)


async def test_mosaic_strategy_follows_the_chosen_genre() -> None:
    model = RecordingModel(scripted_model(OverridePolicy({"genre": "Mind Game"})))
    agent = make_mosaic(model=model)
    await play(agent, 6)
    candidate_prompts = [p for p, _ in model.exchanges if p.startswith("TURTLE SOUP / PROPOSE")]
    assert "Genre: not determined yet." in candidate_prompts[0]
    assert "Genre: Mind Game." in candidate_prompts[-1]  # after the check at turn 6


# --- Mosaic: meta-cognition hand numbers -----------------------------------------------------


def test_ema_switches_on_a_strong_first_vote() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    check = meta.update(["supernatural"] * 3, answered=5, clues=0)
    assert check.confidence_after == pytest.approx(0.7 * 1 + 0.3 * 0.5)  # 0.85 > 0.5 + 0.1
    assert check.switched and meta.genre == "supernatural"


def test_agreeing_vote_updates_confidence_without_switching() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    meta.update(["supernatural"] * 3, answered=5, clues=0)
    check = meta.update(["supernatural", "supernatural", "mind_game"], answered=10, clues=0)
    assert check.winner == "supernatural" and not check.switched
    assert meta.confidence == pytest.approx(0.7 * 2 / 3 + 0.3 * 0.85)


def test_weak_vote_does_not_switch() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    check = meta.update(["crime_thriller", None, None], answered=5, clues=0)
    assert check.share == pytest.approx(1 / 3)
    assert meta.confidence == pytest.approx(0.7 / 3 + 0.15)  # 0.383, not > 0.6
    assert meta.genre is None and not check.switched


def test_disagreeing_majority_below_threshold_keeps_genre_but_lowers_confidence() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    meta.update(["supernatural"] * 3, answered=5, clues=0)
    meta.update(["crime_thriller", "crime_thriller", "supernatural"], answered=10, clues=0)
    assert meta.genre == "supernatural"  # 0.72 is not > 0.85 + 0.1
    assert meta.confidence == pytest.approx(0.7 * 2 / 3 + 0.3 * 0.85)


def test_tie_keeps_everything() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    check = meta.update(["supernatural", "mind_game", "clever_logic"], answered=5, clues=2)
    assert check.winner is None and meta.genre is None and meta.confidence == 0.5
    assert (meta.checked_answered, meta.checked_clues) == (5, 2)
    assert tally_votes([None, None, None]) == (None, 0.0)
    assert smoothed_confidence(0.5, 1.0, 0.7) == pytest.approx(0.85)


def test_a_unanimous_disagreeing_vote_switches_the_genre() -> None:
    # The vote's share is the confidence in the voted genre, also when it is not the current one
    # (docstring of MosaicAgent): 0.7 * 1 + 0.3 * 0.85 = 0.955 > 0.85 + 0.1.
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    meta.update(["supernatural"] * 3, answered=5, clues=0)
    check = meta.update(["crime_thriller"] * 3, answered=10, clues=0)
    assert check.confidence_after == pytest.approx(0.955)
    assert check.switched and meta.genre == "crime_thriller"


def test_check_trigger_rules() -> None:
    meta = MetaCognition(alpha=0.7, threshold=0.1)
    assert not meta.due(answered=4, clues=2)
    assert meta.due(answered=2, clues=3)
    assert meta.due(answered=5, clues=0)
    meta.update(["mind_game"] * 3, answered=5, clues=1)
    assert not meta.due(answered=9, clues=3)
    assert meta.due(answered=10, clues=1) and meta.due(answered=6, clues=4)


# --- Mosaic: the three genre votes ----------------------------------------------------------


class ParamsModel:
    """The scripted questioner behind the ChatModel protocol, keeping each request's params; a
    genre prompt is answered by `genre(params)`."""

    def __init__(self, genre: Callable[[ModelParams], str] | None = None) -> None:
        self.name = "scripted/params"
        self.inner = TurtleSoupQuestionerPolicy()
        self.genre = genre
        self.requests: list[tuple[str | None, ModelParams]] = []

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        params = params or ModelParams()
        kind, _ = prompt_kind(messages)
        self.requests.append((kind, params))
        if kind == "genre" and self.genre is not None:
            text = self.genre(params)
        else:
            text = self.inner.respond(messages, params)
        return Completion(text=text, model=self.name)


async def test_each_genre_vote_is_sampled_with_its_own_seed() -> None:
    model = ParamsModel()
    agent = make_mosaic(model=model)
    decisions, _ = await play(agent, 6)
    votes = [params for kind, params in model.requests if kind == "genre"]
    assert [(p.temperature, p.seed) for p in votes] == [(0.7, 1), (0.7, 2), (0.7, 3)]
    assert votes == list(GENRE_VOTE_PARAMS)
    # Every other call carries the paper's seed 42 (App. D.1), and only that field: the run's
    # temperature and the rest still apply.
    others = [p for kind, p in model.requests if kind != "genre"]
    assert others and all(p == ModelParams(seed=42) for p in others)
    assert all(p.model_fields_set == {"seed"} for p in others)
    # Three different response-cache keys for one prompt: no vote is a copy of another.
    message = [Message(role="user", content=all_prompts("en")["genre"])]
    keys = {cache_key("m", None, message, p) for p in GENRE_VOTE_PARAMS}
    assert len(keys) == 3
    (check,) = agent.meta.checks
    assert check.settings == tuple({"temperature": 0.7, "seed": s} for s in (1, 2, 3))
    assert "(temperature 0.7, seeds 1/2/3)" in decisions[5].thought


@pytest.mark.parametrize(
    ("options", "seed"), [({}, 42), ({"model_seed": 7}, 7), ({"model_seed": None}, None)]
)
async def test_every_agent_call_carries_the_benchmark_seed(
    options: dict[str, object], seed: int | None
) -> None:
    bench = make_benchmark("turtlesoup", **options)
    for agent_name in ("mosaic", "baseline"):
        model = ParamsModel()
        agent = bench.make_agent(agent_name, model, {})
        await play(agent, 6)
        non_votes = [p for kind, p in model.requests if kind != "genre"]
        assert non_votes and {p.seed for p in non_votes} == {seed}
        # No seed: the field is left unset, so a run's own ModelParams seed applies.
        assert all(("seed" in p.model_fields_set) == (seed is not None) for p in non_votes)


async def test_genre_votes_can_disagree() -> None:
    names = {1: "Supernatural", 2: "Mind Game", 3: "Supernatural"}
    agent = make_mosaic(model=ParamsModel(lambda params: names[params.seed or 0]))
    decisions, _ = await play(agent, 6)
    (check,) = agent.meta.checks
    assert check.votes == ("supernatural", "mind_game", "supernatural")
    assert check.winner == "supernatural" and check.share == pytest.approx(2 / 3)
    assert agent.confidence == pytest.approx(0.7 * 2 / 3 + 0.3 * 0.5)
    assert "votes: Supernatural, Mind Game, Supernatural" in decisions[5].thought


def test_chinese_genre_names_are_the_category_names() -> None:
    for genre in GENRES:
        assert genre.names["zh"] == CATEGORY_NAMES_ZH[genre.id]
        assert genre.names["en"] == CATEGORIES[genre.id]
    assert parse_genre("犯罪惊悚") == "crime_thriller"
    assert parse_genre("罪案惊悚") == "crime_thriller"  # the old name is still read
    assert "类型：犯罪惊悚。" in prompts.strategy_text("crime_thriller", "zh")


# --- Mosaic: screening and ablations ---------------------------------------------------------

FIXED_CANDIDATES = "1. Was Kenji a ghost?\n2. Did the owner know Kenji?\n3. Was it raining?"
ASKED_FIRST = [
    {"turn": 1, "question": "was kenji a GHOST", "answer": "No", "key_clue": False},
]


@pytest.mark.parametrize(
    "options", [{"pruning": True}, {"pruning": False}], ids=["not-verbatim", "no-pruning"]
)
async def test_fallback_skips_asked_and_blacklisted_candidates(options: dict[str, bool]) -> None:
    overrides = {"candidates": FIXED_CANDIDATES, "screen": "I like the second idea best."}
    agent = make_mosaic(
        model=scripted_model(OverridePolicy(overrides)), deliberation=False, **options
    )
    # Candidate 1 was asked (case and punctuation aside): the fallback takes candidate 2.
    decision = await agent.act(observation(2, ASKED_FIRST))
    assert decision.action == "Did the owner know Kenji?"
    assert "candidate 2 of 3" in decision.thought and "first not asked" in decision.thought
    # Candidate 2 on the blacklist too (two negative answers in one direction): candidate 3.
    history = [
        *ASKED_FIRST,
        {"turn": 2, "question": "Did the owner know Kenji?", "answer": "No", "key_clue": False},
        {
            "turn": 3,
            "question": "Did the owner know Kenji well?",
            "answer": "No",
            "key_clue": False,
        },
    ]
    assert (await agent.act(observation(4, history))).action == "Was it raining?"
    # All three asked: the first, as before.
    history.append({"turn": 4, "question": "Was it raining?", "answer": "No", "key_clue": False})
    assert (await agent.act(observation(5, history))).action == "Was Kenji a ghost?"


def second_candidate(prompt: str) -> str:
    block = prompt.split("<Candidates>\n", 1)[1].split("\n</Candidates>", 1)[0]
    return block.splitlines()[1].split(". ", 1)[1]


async def test_screening_picks_the_candidate_it_names_verbatim() -> None:
    model = RecordingModel(scripted_model(OverridePolicy({"screen": second_candidate})))
    agent = make_mosaic(model=model)
    decision = await agent.act(observation(1, []))
    candidates = parse_candidates(model.exchanges[0][1])
    assert decision.action == candidates[1]
    assert "candidate 2 of 3 (screened)" in decision.thought


async def test_screening_reply_with_number_and_quotes_still_counts_as_verbatim() -> None:
    reply = lambda prompt: f'2. "{second_candidate(prompt)}"'  # noqa: E731
    model = RecordingModel(scripted_model(OverridePolicy({"screen": reply})))
    decision = await make_mosaic(model=model).act(observation(1, []))
    assert decision.action == parse_candidates(model.exchanges[0][1])[1]


async def test_screening_reply_that_is_no_candidate_takes_the_first() -> None:
    reply = "I would ask whether Kenji is a time traveller."
    model = RecordingModel(scripted_model(OverridePolicy({"screen": reply})))
    agent = make_mosaic(model=model)
    decision = await agent.act(observation(1, []))
    assert decision.action == parse_candidates(model.exchanges[0][1])[0]
    assert "not verbatim" in decision.thought and agent.counts["screen_fallback"] == 1


async def test_without_pruning_the_first_candidate_is_asked() -> None:
    model = RecordingModel(scripted_model())
    agent = make_mosaic(model=model, pruning=False)
    decisions, _ = await play(agent, 6)
    assert all("screen" not in purposes(d) for d in decisions)
    candidate_replies = [r for p, r in model.exchanges if p.startswith("TURTLE SOUP / PROPOSE")]
    assert [d.action for d in decisions] == [parse_candidates(r)[0] for r in candidate_replies]


async def test_without_deliberation_no_local_belief_or_aps_and_a_summary_call() -> None:
    model = RecordingModel(scripted_model())
    agent = make_mosaic(model=model, deliberation=False)
    decisions, final = await play(agent, 11)
    used = {p for d in decisions for p in purposes(d)}
    assert used == {"genre", "candidates", "screen"}
    assert purposes(final) == ["summary"]
    candidate_prompts = [p for p, _ in model.exchanges if p.startswith("TURTLE SOUP / PROPOSE")]
    assert "<Question suggestions>\n(none yet)" in candidate_prompts[-1]
    assert "<Analysis of the last answer>\n(none yet)" in candidate_prompts[-1]
    assert set(json.loads(final.action)) == {"logic", "details", "conclusion"}


async def test_without_metacognition_no_votes_and_the_generic_strategy() -> None:
    model = RecordingModel(scripted_model(OverridePolicy({"genre": "Supernatural"})))
    agent = make_mosaic(model=model, metacognition=False)
    decisions, _ = await play(agent, 11)
    assert all("genre" not in purposes(d) for d in decisions)
    candidate_prompts = [p for p, _ in model.exchanges if p.startswith("TURTLE SOUP / PROPOSE")]
    assert all("Genre: not determined yet." in p for p in candidate_prompts)
    assert agent.genre is None


async def test_key_clues_flag_is_stored_and_changes_no_call() -> None:
    with_clues, without = (
        make_mosaic(model=scripted_model()),
        make_mosaic(model=scripted_model(), key_clues=False),
    )
    assert with_clues.key_clues and not without.key_clues
    a, _ = await play(with_clues, 6)
    b, _ = await play(without, 6)
    assert [purposes(d) for d in a] == [purposes(d) for d in b]


# --- Mosaic: belief, APS and summary ---------------------------------------------------------


async def test_summary_is_the_belief_json() -> None:
    agent = make_mosaic(model=scripted_model())
    decisions, final = await play(agent, 7)
    summary = json.loads(final.action)
    assert list(summary) == ["logic", "details", "conclusion"]
    assert summary["logic"] == [
        "A hidden cause behind the surface is being uncovered by the answers."
    ]
    assert summary["conclusion"] == (
        "For months, Kenji ate at the same ramen stall every night and left the owner a huge "
        "tip. The answers so far establish: Is Kenji connected to the owner; Is Kenji different "
        "from what it first seems."
    )
    yes_questions = [
        d.action for t, d in enumerate(decisions, start=1) if answer_for(t)[0] == "Yes"
    ]
    assert summary["details"] == [f"Yes to: {q}" for q in yes_questions]
    assert summary == agent.belief.to_dict()


async def test_unreadable_belief_keeps_the_previous_one() -> None:
    def belief(prompt: str) -> str:
        # Readable at the first deliberation, garbage afterwards.
        if "Q6:" in prompt:
            return "no json here, sorry"
        return json.dumps({"logic": ["L"], "details": ["D"], "conclusion": "C"})

    agent = make_mosaic(model=scripted_model(OverridePolicy({"belief": belief})))
    _, final = await play(agent, 11)
    assert agent.belief == BeliefState(["L"], ["D"], "C")
    assert json.loads(final.action) == {"logic": ["L"], "details": ["D"], "conclusion": "C"}
    assert agent.counts["belief_unreadable"] == 2  # turn 11 and the final one


async def test_aps_proposals_reach_the_candidate_prompt() -> None:
    aps = json.dumps([{"doubt": "why the note", "analysis": "a", "proposal": "Was it a loop?"}])
    model = RecordingModel(scripted_model(OverridePolicy({"aps": aps})))
    agent = make_mosaic(model=model)
    await play(agent, 6)
    assert agent.aps[0].proposal == "Was it a loop?"
    last = [p for p, _ in model.exchanges if p.startswith("TURTLE SOUP / PROPOSE")][-1]
    assert "- Was it a loop? (why the note)" in last


async def test_chinese_puzzle_gets_chinese_prompts() -> None:
    model = RecordingModel(scripted_model())
    agent = make_mosaic(model=model)
    decisions, final = await play(agent, 6, language="zh")
    assert all(p.startswith("海龟汤 / ") for p, _ in model.exchanges)
    assert all(d.action.endswith("？") for d in decisions)
    assert "已确认" in final.action  # non-ASCII kept in the JSON
    assert set(json.loads(final.action)) == {"logic", "details", "conclusion"}


# --- garbage replies -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"deliberation": False}, {"pruning": False}, {"metacognition": False}],
)
async def test_mosaic_survives_garbage_replies(options: dict[str, bool]) -> None:
    model = ScriptedModel("scripted/garbage", GarbagePolicy(), ModelRuntime(cache=False))
    agent = make_mosaic(model=model, **options)
    decisions, final = await play(agent, 11)
    assert all(d.action.strip() for d in decisions)
    summary = json.loads(final.action)
    assert set(summary) == {"logic", "details", "conclusion"}
    assert summary["conclusion"]  # the raw reply, since no belief was ever readable


async def test_mosaic_survives_empty_replies() -> None:
    agent = make_mosaic(model=FakeChatModel([""]))
    decisions, final = await play(agent, 6)
    assert decisions[0].action == prompts.FALLBACK_QUESTIONS["en"][0]
    assert len({d.action for d in decisions}) == 6
    assert json.loads(final.action) == {"logic": [], "details": [], "conclusion": ""}


async def test_baseline_survives_garbage_and_empty_replies() -> None:
    garbage = ScriptedModel("scripted/garbage", GarbagePolicy(), ModelRuntime(cache=False))
    decisions, final = await play(make_baseline(model=garbage), 4)
    assert all(d.action for d in decisions) and final.action
    decisions, final = await play(make_baseline(model=FakeChatModel([""])), 3)
    assert [d.action for d in decisions] == list(prompts.FALLBACK_QUESTIONS["en"][:3])
    assert final.action == ""


# --- parsing ---------------------------------------------------------------------------------


def test_parsers_strip_inline_reasoning() -> None:
    draft = '<think>{"logic": ["draft"], "details": [], "conclusion": "wrong"}</think>'
    final = '{"logic": ["L"], "details": ["D"], "conclusion": "C"}'
    assert parse_belief(draft + final) == BeliefState(["L"], ["D"], "C")
    assert parse_belief(draft) is None
    aps = '<think>[{"doubt": "x", "proposal": "Draft?"}]</think>[{"doubt": "d", "proposal": "P?"}]'
    assert [p.proposal for p in parse_aps(aps)] == ["P?"]
    assert parse_genre("<think>Supernatural? No...</think>\nMind Game") == "mind_game"
    assert parse_genre("<think>Supernatural, surely") is None  # unfinished reasoning only
    candidates = parse_candidates("<think>1. Draft one?\n2. Draft two?</think>\n1. A?\n2. B?")
    assert candidates == ["A?", "B?"]
    assert match_candidate("<think>A? or B?</think>B?", candidates) == 1
    assert first_question("<think>Is it a draft?</think>\nWas Kenji dead?") == "Was Kenji dead?"


@pytest.mark.parametrize(
    "reply",
    [
        "[" * 100_000,
        '{"a":' * 50_000,
        "```json\n" + "[" * 5_000 + "]" * 5_000 + "\n```",
    ],
    ids=["deep-list", "deep-object", "deep-fenced"],
)
async def test_deeply_nested_json_is_unreadable_not_an_error(reply: str) -> None:
    assert parse_belief(reply) is None and parse_aps(reply) == []
    # Readable JSON after a deep value is still found.
    deep = "[" * 5_000 + "]" * 5_000
    assert parse_belief(deep + ' {"logic": ["L"]}') == BeliefState(logic=["L"])
    agent = make_mosaic(model=FakeChatModel([reply]))
    decisions, final = await play(agent, 6)
    assert all(d.action for d in decisions)
    assert set(json.loads(final.action)) == {"logic", "details", "conclusion"}


def test_parse_belief_variants() -> None:
    fenced = '```json\n{"details": ["a"], "logic": "x\\ny", "conclusion": ["c1", "c2"]}\n```'
    assert parse_belief(fenced) == BeliefState(["x", "y"], ["a"], "c1 c2")
    chinese = 'Sure: {"逻辑": ["因为"], "细节": ["钞票"], "结论": "循环结束"}'
    assert parse_belief(chinese) == BeliefState(["因为"], ["钞票"], "循环结束")
    assert parse_belief("no json at all") is None
    assert parse_belief('{"answer": "yes"}') is None
    assert parse_belief('{"logic": [], "details": [], "conclusion": ""}') is None


def test_parse_aps_json_and_labelled_lines() -> None:
    text = 'Here: [{"doubt": "d1", "analysis": "a1", "proposal": "p1?"}, {"x": 1}]'
    assert [(p.doubt, p.proposal) for p in parse_aps(text)] == [("d1", "p1?")]
    lines = (
        "Point of Doubt 1: why tears\nAnalysis 1: joy or grief\nProposal 1: Was he happy?\n"
        "**Doubt 2:** the note\nAnalysis: fake?\nQuestion Suggestion: Was the note fake?"
    )
    aps = parse_aps(lines)
    assert [(p.doubt, p.analysis, p.proposal) for p in aps] == [
        ("why tears", "joy or grief", "Was he happy?"),
        ("the note", "fake?", "Was the note fake?"),
    ]
    assert (
        parse_aps("疑点：钞票\n分析：可能是假钞\n建议：钞票是假的吗？")[0].proposal
        == "钞票是假的吗？"
    )
    assert parse_aps("lorem ipsum") == []


def test_parse_candidates_and_match() -> None:
    reply = "1. [Was the note fake?]\n2) **Did the owner know him?**\n3. Was it raining?\n4. Extra?"
    candidates = parse_candidates(reply)
    assert candidates == ["Was the note fake?", "Did the owner know him?", "Was it raining?"]
    assert parse_candidates("Some thoughts.\nIs he alive?\nIs she?") == ["Is he alive?", "Is she?"]
    assert match_candidate("Did the owner know him?", candidates) == 1
    assert match_candidate("Question: Was it raining?", candidates) == 2
    assert match_candidate("Did the owner know Kenji?", candidates) is None
    assert match_candidate("2", candidates) is None


def test_parse_genre_names_ids_and_aliases() -> None:
    assert parse_genre("Supernatural") == "supernatural"
    assert parse_genre("**Worldly Vicissitudes Type**") == "constant_change"
    assert parse_genre("mind_game") == "mind_game"
    assert parse_genre("心理迷局") == "mind_game"
    assert parse_genre("Clever Logic, not Crime Thriller") == "clever_logic"
    assert parse_genre("banana") is None


def test_blacklist_rule() -> None:
    def entry(turn: int, question: str, answer: str, clue: bool = False) -> dict[str, Any]:
        return {"turn": turn, "question": question, "answer": answer, "key_clue": clue}

    history = [
        entry(1, "Was the dead man a doctor?", "No"),
        entry(2, "Was the dead man a lawyer?", "Unknown"),
        entry(3, "Was it raining?", "No"),
        entry(4, "Was the weather cold?", "No"),  # different direction from turn 3
        entry(5, "Did he own the stall?", "No"),
        entry(6, "Did he own the stall's building?", "No", clue=True),  # key clue: kept
        entry(7, "死者是男人吗？", "No"),
        entry(8, "死者是女人吗？", "Unknown"),
    ]
    assert ruled_out(history) == [
        "Was the dead man a doctor?",
        "Was the dead man a lawyer?",
        "死者是男人吗？",
        "死者是女人吗？",
    ]
    assert same_direction("Was the note fake?", "Was the note counterfeit or fake?")
    assert not same_direction("Did he die?", "Was it raining?")


def test_first_question_of_a_baseline_reply() -> None:
    assert first_question("Let me think.\n**Question:** Was Kenji dead?") == "Was Kenji dead?"
    assert first_question("1. Is it night") == "Is it night"
    assert first_question("  \n") == ""


# --- baseline --------------------------------------------------------------------------------


async def test_baseline_one_call_per_turn_and_the_mosaic_json_summary() -> None:
    model = RecordingModel(scripted_model())
    decisions, final = await play(make_baseline(model=model), 5)
    assert [purposes(d) for d in decisions] == [["question"]] * 5
    assert purposes(final) == ["summary"]
    assert len({d.action for d in decisions}) == 5
    assert "Q4:" in model.exchanges[4][0]  # the full history is shown
    # Asked for Mosaic's JSON summary, so Table 3 compares one format (review finding 10).
    final_prompt = model.exchanges[-1][0]
    assert '{"details": ["detail 1", "..."], "logic": ["step 1", "..."]' in final_prompt
    summary = json.loads(final.action)
    assert set(summary) == {"logic", "details", "conclusion"} and summary["conclusion"]


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_baseline_final_prompt_asks_for_the_json_in_both_languages(language: str) -> None:
    prompt = all_prompts(language)["final"]
    assert '"logic"' in prompt and '"details"' in prompt and '"conclusion"' in prompt


async def test_baseline_accepts_a_free_text_summary_and_strips_reasoning() -> None:
    reply = '<think>Was it {"logic": ["draft"]}? No.</think>\nKenji was a ghost all along.'
    model = scripted_model(OverridePolicy({"final": reply}))
    _, final = await play(make_baseline(model=model), 2)
    assert final.action == "Kenji was a ghost all along."
    assert "free text" in final.thought
    # A JSON summary after the reasoning is read as JSON.
    belief = '<think>draft</think>```json\n{"logic": ["a"], "details": [], "conclusion": "c"}\n```'
    _, final = await play(make_baseline(model=scripted_model(OverridePolicy({"final": belief}))), 2)
    assert json.loads(final.action) == {"logic": ["a"], "details": [], "conclusion": "c"}


# --- options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("deliberation", "yes"),
        ("metacognition", 1),
        ("pruning", None),
        ("key_clues", "false"),
        ("deliberation_interval", 0),
        ("deliberation_interval", 2.5),
        ("deliberation_interval", True),
        ("ema_alpha", 0),
        ("ema_alpha", 1.5),
        ("ema_alpha", "0.7"),
        ("switch_threshold", -0.1),
        ("switch_threshold", 1),
        ("history_window", 0),
        ("screening_window", -4),
    ],
)
def test_mosaic_options_are_validated(option: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=option):
        make_mosaic(model=FakeChatModel(["x"]), **{option: value})


def test_factories_need_a_model() -> None:
    with pytest.raises(ConfigError, match="model"):
        make_mosaic(model=None)
    with pytest.raises(ConfigError, match="model"):
        make_baseline(model=None)


def test_mosaic_defaults_are_the_papers() -> None:
    agent = make_mosaic(model=FakeChatModel(["x"]), ema_alpha=1)
    assert agent.ema_alpha == 1.0
    agent = make_mosaic(model=FakeChatModel(["x"]))
    assert (agent.deliberation_interval, agent.ema_alpha, agent.switch_threshold) == (5, 0.7, 0.1)
    assert (agent.history_window, agent.screening_window) == (10, 4)
    assert isinstance(agent, MosaicAgent)


async def test_mosaic_starts_clean_on_a_new_puzzle() -> None:
    agent = make_mosaic(model=scripted_model(OverridePolicy({"genre": "Supernatural"})))
    await play(agent, 6)
    assert agent.genre == "supernatural"
    other = observation(1, [])
    other.data["puzzle_id"] = "crime_thriller-01-en"
    await agent.act(other)
    assert agent.genre is None and agent.belief.is_empty()


# --- human -----------------------------------------------------------------------------------


def quiet_human(lines: list[str]) -> tuple[HumanQuestioner, list[str]]:
    feed = iter(lines)
    prompts_seen: list[str] = []

    def input_fn(prompt: str) -> str:
        prompts_seen.append(prompt)
        return next(feed)

    console = Console(file=io.StringIO(), width=100)
    return HumanQuestioner(input_fn=input_fn, console=console), prompts_seen


async def test_human_asks_then_solves_early_and_writes_a_summary() -> None:
    human, seen = quiet_human(["Was the day repeating?", "/solve", "Kenji lived", "in a loop.", ""])
    human.reset(INSTANCE, 0)
    first = await human.act(observation(1, []))
    assert first.action == "Was the day repeating?"
    history = [{"turn": 1, "question": first.action, "answer": "Yes", "key_clue": True}]
    assert (await human.act(observation(2, history))).action == SOLVE_COMMAND
    # A benchmark that asks again gets the same answer without a new prompt.
    assert (await human.act(observation(3, history))).action == SOLVE_COMMAND
    final = await human.act(observation(3, history, phase="summarize"))
    assert final.action == "Kenji lived\nin a loop."
    assert seen == ["question> ", "question> ", "summary> ", "... ", "... "]
    output = human.console.file.getvalue()  # type: ignore[attr-defined]
    assert SURFACE_EN.split()[0] in output and "turn 1" in output


async def test_human_empty_line_and_end_of_input() -> None:
    human, _ = quiet_human([""])
    human.reset(INSTANCE, 0)
    assert (await human.act(observation(1, []))).action == SOLVE_COMMAND
    final = await human.act(observation(1, [], phase="summarize"))
    assert final.action == ""  # the input ended


def test_make_human_validates_input_fn() -> None:
    def read(prompt: str) -> str:
        return "x"

    human = make_human(input_fn=read)
    assert type(human) is HumanQuestioner
    assert (human.input_fn, human.solved, human.instance_id) == (read, False, "")
    assert make_human().input_fn is input
    with pytest.raises(ConfigError, match="input_fn"):
        make_human(input_fn="not callable")  # type: ignore[arg-type]
