"""Mosaic-Agent's prompts as data: the YAML files render byte for byte what the templates written
in Python rendered (hashes taken from that code, commit bb1799d), and the genre table."""

from __future__ import annotations

import hashlib
from importlib.resources import files

import yaml

from forkingpaths.benchmarks.turtlesoup.agents import mosaic_prompts as prompts
from forkingpaths.benchmarks.turtlesoup.agents.genres import GENRES, genre_by_id
from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES, CATEGORY_NAMES_ZH

HISTORY = (
    {"turn": 1, "question": "Was it raining?", "answer": "Yes", "key_clue": True},
    {"turn": 2, "question": "Did he die?", "answer": "Unknown", "key_clue": False},
)
GENRE_IDS = ("crime_thriller", "mind_game", "supernatural", "constant_change", "clever_logic")

# sha256 (first 16 hex digits) of each sample render by the prompts module of bb1799d, where
# the templates were Python strings; a deliberate prompt change updates these.
RENDERED = {
    "en/local": "8e1ed585c656f25b",
    "en/belief": "6acaedcdd9d26306",
    "en/aps": "8176b4b9c8f03a8e",
    "en/genre": "680f7dea3e8e76ec",
    "en/candidates": "80fb3cd46b625e8d",
    "en/screen": "0d082b97a3f716d5",
    "en/summary": "1f46089db578167b",
    "en/strategy/crime_thriller": "835fda1d9aa0305a",
    "en/strategy/mind_game": "26f247ae188d3875",
    "en/strategy/supernatural": "f6e4fcd7a073e4f8",
    "en/strategy/constant_change": "22e8b2a9f97f8a36",
    "en/strategy/clever_logic": "6313547d1e905f50",
    "zh/local": "08007bcd38615d7f",
    "zh/belief": "9f8082518e1739ec",
    "zh/aps": "72c969ddfa4135e6",
    "zh/genre": "064cfca670214559",
    "zh/candidates": "62530d7ccd44d2b4",
    "zh/screen": "e1c6befbba7ffea9",
    "zh/summary": "9f609e0b99f6e096",
    "zh/strategy/crime_thriller": "658ee397e916bb21",
    "zh/strategy/mind_game": "065c74402093dfb5",
    "zh/strategy/supernatural": "a3a78300149278aa",
    "zh/strategy/constant_change": "f7ebb8bb3afa9209",
    "zh/strategy/clever_logic": "d0c9ae31c8abc12c",
}


def sample_renders() -> dict[str, str]:
    """Every prompt kind and every genre strategy, in both languages, for fixed inputs."""
    out: dict[str, str] = {}
    for lang in ("en", "zh"):
        history = prompts.render_history(HISTORY, lang)
        clues = prompts.render_history(HISTORY[:1], lang)
        latest = prompts.render_exchange(HISTORY[-1], lang)
        out[f"{lang}/local"] = prompts.render_local(
            lang, surface="S", latest=latest, history=history
        )
        out[f"{lang}/belief"] = prompts.render_belief(
            lang, surface="S", key_clues=clues, history=history, previous=prompts.or_none("", lang)
        )
        out[f"{lang}/aps"] = prompts.render_aps(
            lang,
            surface="S",
            key_clues=clues,
            logic=prompts.render_list(["a", "b"], lang),
            details=prompts.render_list([], lang),
            conclusion="C",
        )
        out[f"{lang}/genre"] = prompts.render_genre(
            lang, surface="S", history=history, key_clues=clues
        )
        out[f"{lang}/candidates"] = prompts.render_candidates(
            lang,
            surface="S",
            advice="A",
            analysis="N",
            guidance=prompts.strategy_text(None, lang),
            history=history,
        )
        out[f"{lang}/screen"] = prompts.render_screen(
            lang,
            surface="S",
            advice="A",
            analysis="N",
            history=history,
            asked=prompts.render_numbered(["q1", "q2"], lang),
            candidates=prompts.render_numbered(["c1", "c2", "c3"], lang),
            blacklist=prompts.render_list(["x"], lang),
        )
        out[f"{lang}/summary"] = prompts.render_summary(
            lang, surface="S", key_clues=clues, history=history
        )
        for genre in GENRE_IDS:
            out[f"{lang}/strategy/{genre}"] = prompts.strategy_text(genre, lang)
    return out


def test_prompt_files_render_what_the_python_templates_rendered() -> None:
    renders = sample_renders()
    digests = {k: hashlib.sha256(v.encode()).hexdigest()[:16] for k, v in renders.items()}
    assert digests == RENDERED


def test_each_prompt_starts_with_its_marker_and_fills_every_placeholder() -> None:
    renders = sample_renders()
    assert renders["en/local"].startswith("TURTLE SOUP / ANALYSE THE LATEST ANSWER\n")
    assert renders["zh/summary"].startswith("海龟汤 / 最终还原故事\n")
    assert "<Latest question and answer>\nQ2: Did he die?\nA2: Unknown\n" in renders["en/local"]
    assert "问1：Was it raining?\n答1：是<关键线索>" in renders["zh/belief"]
    assert not [k for k, v in renders.items() if "$" in v]


def test_prompt_files_hold_the_kinds_and_one_strategy_per_genre() -> None:
    for lang in ("en", "zh"):
        path = files(prompts.__package__) / "prompts" / f"mosaic.{lang}.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert list(data) == [
            "local", "belief", "aps", "genre", "candidates", "screen", "summary",
            "unknown_strategy", "strategies",
        ]  # fmt: skip
        assert list(data["strategies"]) == [g.id for g in GENRES]
        assert prompts.prompts_for(lang).strategies["mind_game"] == data["strategies"]["mind_game"]
    assert prompts.prompts_for("fr") is prompts.prompts_for("en")


def test_genres_are_the_five_narrative_categories_with_their_names() -> None:
    assert [g.id for g in GENRES] == list(GENRE_IDS)
    for genre in GENRES:
        assert dict(genre.names) == {"en": CATEGORIES[genre.id], "zh": CATEGORY_NAMES_ZH[genre.id]}
    assert genre_by_id("supernatural").aliases == (
        "supernatural fantasy",
        "supernatural fantasy type",
        "fantasy",
        "灵异",
        "奇幻",
    )
    assert prompts.render_genres("zh") == "- 犯罪惊悚\n- 心理迷局\n- 超自然\n- 世事无常\n- 巧妙逻辑"
