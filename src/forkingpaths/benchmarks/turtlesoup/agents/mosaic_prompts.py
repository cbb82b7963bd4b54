"""Mosaic-Agent's prompts (§4.1, App. E.2): their markers and labels, loading and rendering."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from string import Template
from types import MappingProxyType
from typing import Any

import yaml

from forkingpaths.benchmarks.turtlesoup.agents.genres import GENRES
from forkingpaths.benchmarks.turtlesoup.responder import ANSWER_WORDS as RESPONDER_ANSWER_WORDS
from forkingpaths.benchmarks.turtlesoup.responder import KEY_CLUE_TAGS

# The templates are data: `prompts/mosaic.en.yaml` and `prompts/mosaic.zh.yaml`, one prompt per
# kind plus the genre strategies. Every prompt carries the information, rules and output format
# of the paper's App. E.2 prompt of the same role in our own words. Each starts with a marker
# line (how `scripted.py` recognises the prompt kind) and wraps its inputs in `<Label>...</Label>`
# blocks whose labels are listed in `SECTION_LABELS`, so a reader (or the scripted policy) finds
# every input by name. The belief state keeps the English JSON keys `logic`, `details`,
# `conclusion` in both languages: the evaluation reads them (contract §3).

LANGUAGES = ("en", "zh")
"""Prompt languages; the puzzle's language selects."""

# Marker lines, one per prompt kind and language: the first line of the rendered prompt.
LOCAL_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / ANALYSE THE LATEST ANSWER", "zh": "海龟汤 / 解读最新回答"}
)
BELIEF_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / UPDATE THE WORKING THEORY", "zh": "海龟汤 / 更新整体推理"}
)
APS_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / FIND THE DOUBTS IN THE THEORY", "zh": "海龟汤 / 找出推理中的疑点"}
)
GENRE_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / CLASSIFY THE STORY", "zh": "海龟汤 / 判断故事类型"}
)
CANDIDATES_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / PROPOSE THREE QUESTIONS", "zh": "海龟汤 / 拟出三个问题"}
)
SCREEN_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / CHOOSE THE NEXT QUESTION", "zh": "海龟汤 / 选出下一个问题"}
)
SUMMARY_MARKER = MappingProxyType(
    {"en": "TURTLE SOUP / FINAL ACCOUNT OF THE STORY", "zh": "海龟汤 / 最终还原故事"}
)

SECTION_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "surface": MappingProxyType({"en": "Story surface", "zh": "汤面"}),
        "key_clues": MappingProxyType({"en": "Key clue records", "zh": "关键线索记录"}),
        "history": MappingProxyType({"en": "Questions and answers so far", "zh": "已有问答"}),
        "recent": MappingProxyType({"en": "Recent questions and answers", "zh": "最近的问答"}),
        "latest": MappingProxyType({"en": "Latest question and answer", "zh": "最新一问"}),
        "earlier": MappingProxyType({"en": "Earlier questions and answers", "zh": "此前的问答"}),
        "previous": MappingProxyType({"en": "Previous theory", "zh": "先前的推理"}),
        "logic": MappingProxyType({"en": "Theory: logic", "zh": "推理：逻辑"}),
        "details": MappingProxyType({"en": "Theory: details", "zh": "推理：细节"}),
        "conclusion": MappingProxyType({"en": "Theory: conclusion", "zh": "推理：结论"}),
        "advice": MappingProxyType({"en": "Question suggestions", "zh": "提问建议"}),
        "analysis": MappingProxyType({"en": "Analysis of the last answer", "zh": "上一回答的分析"}),
        "guidance": MappingProxyType({"en": "Genre guidance", "zh": "类型指引"}),
        "asked": MappingProxyType({"en": "Questions already asked", "zh": "已问过的问题"}),
        "blacklist": MappingProxyType({"en": "Ruled-out directions", "zh": "已排除的方向"}),
        "candidates": MappingProxyType({"en": "Candidates", "zh": "候选问题"}),
        "genres": MappingProxyType({"en": "Genres", "zh": "类型列表"}),
    }
)
"""Input block labels: kind -> language -> label, as written between `<` and `>`."""

NONE_TEXT = MappingProxyType({"en": "(none yet)", "zh": "（暂无）"})
"""What an empty input block says."""

KEY_CLUE_TAG: Mapping[str, str] = KEY_CLUE_TAGS
"""How a flagged answer is shown in a history line: the responder's tag of each language, as
the dialogue shows it to a player."""

ANSWER_WORDS: Mapping[str, Mapping[str, str]] = RESPONDER_ANSWER_WORDS
"""The responder's answers (contract §2 `ANSWERS`) as a history line shows them: the words the
dialogue shows a player of each language."""

HISTORY_LINE = MappingProxyType({"en": ("Q", "A", ": "), "zh": ("问", "答", "：")})
"""(question prefix, answer prefix, separator) of a history line: `Q3: ...` / `A3: Yes`."""


@dataclass(frozen=True)
class MosaicPrompts:
    """The templates and strategy texts of one language (`prompts/mosaic.<language>.yaml`)."""

    local: Template
    belief: Template
    aps: Template
    genre: Template
    candidates: Template
    screen: Template
    summary: Template
    unknown_strategy: str
    strategies: Mapping[str, str]
    """Genre id -> the genre's questioning strategy (the genre guidance)."""


_TEMPLATES = ("local", "belief", "aps", "genre", "candidates", "screen", "summary")


@cache
def _load(language: str) -> MosaicPrompts:
    """The prompt file of a language, read once per process (package data, never changed)."""
    path = files(__package__) / "prompts" / f"mosaic.{language}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return MosaicPrompts(
        **{kind: Template(data[kind]) for kind in _TEMPLATES},
        unknown_strategy=data["unknown_strategy"],
        strategies=MappingProxyType(dict(data["strategies"])),
    )


def resolve_language(language: Any) -> str:
    """The prompt language for a puzzle language: "zh" for Chinese, "en" for anything else."""
    return "zh" if str(language or "").strip().lower().startswith("zh") else "en"


def prompts_for(language: str) -> MosaicPrompts:
    """The prompt set of a language ("en" for anything but "zh")."""
    return _load(resolve_language(language))


def or_none(text: str, language: str) -> str:
    """`text`, or the language's "(none yet)" when it is blank."""
    return text.strip() or NONE_TEXT[resolve_language(language)]


def render_exchange(entry: Mapping[str, Any], language: str) -> str:
    """One history entry `{turn, question, answer, key_clue}` as two lines (`Q3: ...`/`A3: Yes`)."""
    lang = resolve_language(language)
    q_prefix, a_prefix, sep = HISTORY_LINE[lang]
    turn = entry.get("turn", "?")
    raw = str(entry.get("answer", "")).strip()
    answer = ANSWER_WORDS[lang].get(raw, raw)
    if entry.get("key_clue"):
        answer += KEY_CLUE_TAG[lang]
    question = str(entry.get("question", "")).strip()
    return f"{q_prefix}{turn}{sep}{question}\n{a_prefix}{turn}{sep}{answer}"


def render_history(entries: Sequence[Mapping[str, Any]], language: str) -> str:
    """History entries, oldest first, or "(none yet)"."""
    return or_none("\n".join(render_exchange(e, language) for e in entries), language)


def render_list(items: Sequence[str], language: str) -> str:
    """Items as a dash list, or "(none yet)"."""
    return or_none("\n".join(f"- {item}" for item in items if str(item).strip()), language)


def render_numbered(items: Sequence[str], language: str) -> str:
    """Items as a numbered list (1., 2., ...), or "(none yet)"."""
    return or_none("\n".join(f"{i}. {item}" for i, item in enumerate(items, start=1)), language)


def render_genres(language: str) -> str:
    """The genre list of the classification prompt, one name per line."""
    lang = resolve_language(language)
    return "\n".join(f"- {genre.names[lang]}" for genre in GENRES)


def render_local(language: str, *, surface: str, latest: str, history: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).local.substitute(
        marker=LOCAL_MARKER[lang], surface=surface, latest=latest, history=history
    )


def render_belief(
    language: str, *, surface: str, key_clues: str, history: str, previous: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).belief.substitute(
        marker=BELIEF_MARKER[lang],
        surface=surface,
        key_clues=key_clues,
        history=history,
        previous=previous,
    )


def render_aps(
    language: str, *, surface: str, key_clues: str, logic: str, details: str, conclusion: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).aps.substitute(
        marker=APS_MARKER[lang],
        surface=surface,
        key_clues=key_clues,
        logic=logic,
        details=details,
        conclusion=conclusion,
    )


def render_genre(language: str, *, surface: str, history: str, key_clues: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).genre.substitute(
        marker=GENRE_MARKER[lang],
        surface=surface,
        history=history,
        key_clues=key_clues,
        genres=render_genres(lang),
    )


def render_candidates(
    language: str, *, surface: str, advice: str, analysis: str, guidance: str, history: str
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).candidates.substitute(
        marker=CANDIDATES_MARKER[lang],
        surface=surface,
        advice=advice,
        analysis=analysis,
        guidance=guidance,
        history=history,
    )


def render_screen(
    language: str,
    *,
    surface: str,
    advice: str,
    analysis: str,
    history: str,
    asked: str,
    candidates: str,
    blacklist: str,
) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).screen.substitute(
        marker=SCREEN_MARKER[lang],
        surface=surface,
        advice=advice,
        analysis=analysis,
        history=history,
        asked=asked,
        candidates=candidates,
        blacklist=blacklist,
    )


def render_summary(language: str, *, surface: str, key_clues: str, history: str) -> str:
    lang = resolve_language(language)
    return prompts_for(lang).summary.substitute(
        marker=SUMMARY_MARKER[lang], surface=surface, key_clues=key_clues, history=history
    )


def strategy_text(genre_id: str | None, language: str) -> str:
    """The questioning strategy of a genre id, or the unknown-genre strategy for None."""
    prompts = prompts_for(language)
    if genre_id is None:
        return prompts.unknown_strategy
    return prompts.strategies[genre_id]


FALLBACK_QUESTIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "en": (
            "Does the story keep to the logic of the real world?",
            "Is every important character in the story a human being?",
            "Has someone in the story died?",
            "Does the story span more than one period of time?",
            "Does an object mentioned in the surface have a hidden meaning?",
            "Did a misunderstanding lead to what happened?",
        ),
        "zh": (
            "这个故事完全符合现实世界的逻辑吗？",
            "故事里的关键角色都是人吗？",
            "故事里有人死了吗？",
            "故事跨越了不止一个时间段吗？",
            "汤面里提到的某件物品有特殊含义吗？",
            "事情的发生是因为一场误会吗？",
        ),
    }
)
"""Questions asked when no candidate can be read from the model's reply: the first probes of
the unknown-genre strategy, taken in order, skipping those already asked."""
