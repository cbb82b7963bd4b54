"""The five narrative genres Mosaic-Agent's meta-cognition chooses between (§4.1, App. E.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES, CATEGORY_NAMES_ZH


@dataclass(frozen=True)
class Genre:
    """A narrative genre the meta-cognition agent can choose (the paper's five, App. E.2).

    Its questioning strategy (the "genre guidance" of the question prompts) is prompt text, one
    per language, in `prompts/mosaic.<language>.yaml` under `strategies.<id>`."""

    id: str
    """The benchmark's category id of this genre (`puzzles.CATEGORIES`)."""
    names: Mapping[str, str]
    """Language -> the name listed in the classification prompt (the one a vote must give)."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted in a vote (the paper's strategy titles, short forms)."""


def _genre(genre_id: str, *aliases: str) -> Genre:
    """A genre named as its puzzle category is, in both languages."""
    names = MappingProxyType({"en": CATEGORIES[genre_id], "zh": CATEGORY_NAMES_ZH[genre_id]})
    return Genre(genre_id, names, aliases)


GENRES: tuple[Genre, ...] = (
    _genre("crime_thriller", "crime", "crime thriller type", "罪案惊悚", "罪案", "犯罪"),
    _genre("mind_game", "mind maze", "mind maze type", "psychological", "心理迷宫", "心理"),
    _genre(
        "supernatural",
        "supernatural fantasy",
        "supernatural fantasy type",
        "fantasy",
        "灵异",
        "奇幻",
    ),
    _genre(
        "constant_change",
        "worldly vicissitudes",
        "worldly vicissitudes type",
        "vicissitudes",
        "无常",
    ),
    _genre(
        "clever_logic", "logic and cleverness", "logic and cleverness type", "logic", "巧思", "逻辑"
    ),
)
"""The five narrative genres of App. E.2, named as the benchmark's categories in both languages
(`puzzles.CATEGORIES`, `puzzles.CATEGORY_NAMES_ZH`). The sixth category, Original, is a source
(expert-authored stories of any genre), not a genre: it has no strategy in the paper and is not
offered as a vote."""


def genre_by_id(genre_id: str) -> Genre:
    """The genre with this id (KeyError for an unknown id)."""
    for genre in GENRES:
        if genre.id == genre_id:
            return genre
    raise KeyError(genre_id)
