"""Puzzle corpus (contract §1): the shipped 60 bilingual entries, categories, language detection,
and every refusal of our YAML format named by file, index and field while the rest loads."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from forkingpaths.benchmarks.turtlesoup.importers import load_corpus, load_corpus_problems
from forkingpaths.benchmarks.turtlesoup.puzzles import (
    CATEGORIES,
    CATEGORY_NAMES_ZH,
    CORPUS_DIR,
    UNCATEGORIZED,
    Puzzle,
    PuzzleError,
    PuzzleWarning,
    category_id,
    category_name,
    detect_language,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

EN = {
    "title": "The Empty Lighthouse",
    "surface": "The lighthouse lamp went dark, and the keeper was glad.",
    "bottom": "The keeper had retired that day; the new automatic lamp failed on its first night, "
    "and he was glad the town finally saw that it still needed him.",
    "key_clues": ["The keeper no longer worked there.", "The lamp was automatic."],
    "logic_points": ["The automatic lamp failed and proved the keeper was still needed."],
    "key_details": ["The keeper had retired that day."],
}
ZH = {
    "title": "空灯塔",
    "surface": "灯塔的灯熄灭了，守塔人却很高兴。",
    "bottom": "守塔人那天刚退休；新装的自动灯第一晚就坏了，他很高兴镇上终于明白还需要他。",
    "key_clues": ["守塔人已经不在那里工作了。", "灯是自动的。"],
    "logic_points": ["自动灯坏了，证明镇上仍然需要守塔人。"],
    "key_details": ["守塔人那天刚退休。"],
}


def entry(entry_id: str = "clever_logic-01", **changes: Any) -> dict[str, Any]:
    """A valid bilingual entry of our format, with top-level keys replaced or (None) removed."""
    base: dict[str, Any] = {
        "id": entry_id,
        "category": "clever_logic",
        "en": copy.deepcopy(EN),
        "zh": copy.deepcopy(ZH),
    }
    for key, value in changes.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def write(path: Path, entries: Any) -> Path:
    path.write_text(yaml.safe_dump(entries, allow_unicode=True, sort_keys=False), "utf-8")
    return path


# ---- the shipped corpus ----


def test_shipped_corpus_loads_120_puzzles_without_errors() -> None:
    puzzles, errors = load_corpus()
    assert errors == []
    assert len(puzzles) == 120
    assert len({p.id for p in puzzles}) == 120
    per_cell = Counter((p.category, p.language) for p in puzzles)
    assert per_cell == {(c, lang): 10 for c in CATEGORIES for lang in ("en", "zh")}


def test_shipped_entries_are_parallel_in_both_languages() -> None:
    puzzles, _ = load_corpus()
    by_entry: dict[str, dict[str, Puzzle]] = {}
    for p in puzzles:
        by_entry.setdefault(p.entry, {})[p.language] = p
    assert len(by_entry) == 60
    for name, pair in by_entry.items():
        en, zh = pair["en"], pair["zh"]
        assert en.id == f"{name}-en" and zh.id == f"{name}-zh"
        assert name.startswith(en.category + "-")
        assert 5 <= len(en.key_clues) <= 7
        assert len(en.key_clues) == len(zh.key_clues)
        assert len(en.logic_points) == len(zh.logic_points) > 0
        assert len(en.key_details) == len(zh.key_details) > 0
        assert en.source == zh.source == "forkingpaths"
        assert detect_language(en.bottom) == "en" and detect_language(zh.bottom) == "zh"


def test_shipped_corpus_language_filter_and_directory_path() -> None:
    english, errors = load_corpus(language="en")
    assert errors == [] and len(english) == 60
    assert {p.language for p in english} == {"en"}
    from_dir, errors = load_corpus(CORPUS_DIR)
    assert errors == [] and len(from_dir) == 120
    # Read by path, a puzzle's source is the file it came from.
    assert from_dir[0].source.endswith(".yaml")


# ---- categories, languages, records ----


def test_categories_have_display_names_in_both_languages() -> None:
    assert list(CATEGORIES) == [
        "crime_thriller",
        "mind_game",
        "supernatural",
        "constant_change",
        "clever_logic",
        "original",
    ]
    assert CATEGORIES["crime_thriller"] == "Crime Thriller"
    assert list(CATEGORY_NAMES_ZH.values()) == [
        "犯罪惊悚",
        "心理迷局",
        "超自然",
        "世事无常",
        "巧妙逻辑",
        "原创",
    ]
    assert category_name("mind_game") == "Mind Game"
    assert category_name("mind_game", "zh") == "心理迷局"
    assert category_name(UNCATEGORIZED) == "Uncategorized"
    with pytest.raises(ConfigError, match="Unknown category 'romance'"):
        category_name("romance")
    with pytest.raises(TypeError):
        CATEGORIES["romance"] = "Romance"  # type: ignore[index]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("crime_thriller", "crime_thriller"),
        ("Crime Thriller", "crime_thriller"),
        ("crime-thriller", "crime_thriller"),
        ("CRIME  THRILLER", "crime_thriller"),
        ("Mind_Game", "mind_game"),
        ("constant change", "constant_change"),
        ("Supernatural Fantasy", "supernatural"),
        ("Original Data", "original"),
        ("犯罪惊悚", "crime_thriller"),
        ("心理迷局", "mind_game"),
        ("超自然", "supernatural"),
        ("世事无常", "constant_change"),
        ("巧妙逻辑", "clever_logic"),
        ("原创", "original"),
        ("romance", None),
        ("", None),
    ],
)
def test_category_id_maps_names_case_and_separator_insensitively(
    name: str, expected: str | None
) -> None:
    assert category_id(name) == expected


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("A man walks into a bar and asks for water.", "en"),
        ("一个男人走进酒吧要了一杯水。", "zh"),
        ("Li Wei visited 马赛 last summer with his whole family and two dogs.", "en"),
        ("布鲁诺在 Marseille 开了一家古董店，专门销赃。", "zh"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_puzzle_error_names_file_index_and_field() -> None:
    error = PuzzleError("a.yaml", 3, "en.key_clues", "empty clue library")
    assert str(error) == "a.yaml#3: en.key_clues: empty clue library"
    assert isinstance(error, InvalidFile)
    assert (error.file, error.index, error.field) == ("a.yaml", 3, "en.key_clues")
    assert str(PuzzleError("b.json", None, "", "not valid JSON")) == "b.json: not valid JSON"


def test_puzzle_refuses_a_language_other_than_en_or_zh() -> None:
    with pytest.raises(ConfigError, match="'fr'"):
        Puzzle("x-fr", "x", "original", "fr", "T", "S", "B", ("c",))


def test_bad_language_argument_and_missing_path_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'fr' is not one of en, zh"):
        load_corpus(language="fr")
    with pytest.raises(ConfigError, match="does not exist"):
        load_corpus(tmp_path / "nowhere")


# ---- our format: refusals one entry at a time ----


def refusals(tmp_path: Path, bad: dict[str, Any]) -> tuple[list[Puzzle], list[PuzzleError]]:
    """Load a file of a good entry, `bad`, and another good entry."""
    file = write(tmp_path / "set.yaml", [entry("a"), bad, entry("c")])
    return load_corpus(file)


def no_field(block: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != field}


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        (entry("b", en=no_field(EN, "surface")), "en.surface", "missing"),
        (entry("b", zh={**ZH, "title": "  "}), "zh.title", "expected non-empty text"),
        (entry("b", id=None), "id", "missing"),
        (entry("b", category=None), "category", "missing"),
        (entry("b", category="romance"), "category", "unknown category"),
        (entry("b", en={**EN, "key_clues": []}), "en.key_clues", "empty clue library"),
        (entry("b", zh=no_field(ZH, "key_clues")), "zh.key_clues", "missing"),
        (entry("b", en={**EN, "key_clues": ["ok", 3]}), "en.key_clues", "list of non-empty"),
        (entry("b", en={**EN, "clues": ["x"]}), "en.clues", "unknown field"),
        (entry("b", zh=copy.deepcopy(EN)), "zh", "mismatched language: the text reads as en"),
        (entry("b", en=copy.deepcopy(ZH)), "en", "the text reads as zh"),
        (entry("b", fr=copy.deepcopy(EN)), "fr", 'language "fr" is not one of en, zh'),
        (entry("b", en=None, zh=None), "en", "an entry needs en and/or zh"),
        (entry("b", en="just text"), "en", "expected a mapping"),
    ],
)
def test_bad_entry_is_refused_with_file_index_and_field_while_the_rest_loads(
    tmp_path: Path, bad: dict[str, Any], field: str, message: str
) -> None:
    puzzles, errors = refusals(tmp_path, bad)
    assert [p.id for p in puzzles] == ["a-en", "a-zh", "c-en", "c-zh"]
    assert len(errors) == 1, [str(e) for e in errors]
    error = errors[0]
    assert (error.file, error.index, error.field) == (str(tmp_path / "set.yaml"), 1, field)
    assert message in error.message
    assert str(error).startswith(f"{tmp_path / 'set.yaml'}#1: {field}: ")


@pytest.mark.parametrize(
    ("zh", "field", "message"),
    [
        (
            {**ZH, "key_clues": [*ZH["key_clues"], "多一条。"]},
            "zh.key_clues",
            "mismatched languages: 3 items but en.key_clues has 2; each language loads alone",
        ),
        (
            {**ZH, "logic_points": []},
            "zh.logic_points",
            "mismatched languages: 0 items but en.logic_points has 1; each language loads alone",
        ),
    ],
)
def test_languages_that_differ_in_a_list_load_alone_with_a_warning(
    tmp_path: Path, zh: dict[str, Any], field: str, message: str
) -> None:
    file = write(tmp_path / "set.yaml", [entry("a"), entry("b", zh=zh), entry("c")])
    puzzles, problems = load_corpus_problems(file)
    assert [p.id for p in puzzles] == ["a-en", "a-zh", "b-en", "b-zh", "c-en", "c-zh"]
    assert [str(p) for p in problems] == [f"{file}#1: {field}: {message}"]
    assert isinstance(problems[0], PuzzleWarning) and problems[0].kind == "mismatched_languages"
    assert load_corpus(file)[1] == []  # load_corpus returns refusals only (warnings are logged)


def test_an_entry_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    puzzles, errors = load_corpus(write(tmp_path / "x.yaml", [entry("a"), "oops"]))
    assert [p.id for p in puzzles] == ["a-en", "a-zh"]
    assert [(e.index, e.field) for e in errors] == [(1, "")]


def test_every_problem_of_an_entry_is_reported(tmp_path: Path) -> None:
    bad = entry("b", category="romance", en=no_field(EN, "bottom"), zh={**ZH, "key_clues": []})
    _, errors = refusals(tmp_path, bad)
    assert sorted(e.field for e in errors) == ["category", "en.bottom", "zh.key_clues"]


def test_duplicate_ids_are_refused_within_and_across_files(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", [entry("one"), entry("two"), entry("one")])
    write(tmp_path / "b.yaml", [entry("two", en=None), entry("three")])
    puzzles, errors = load_corpus(tmp_path)
    assert [p.id for p in puzzles] == [
        "one-en",
        "one-zh",
        "two-en",
        "two-zh",
        "three-en",
        "three-zh",
    ]
    assert [str(e) for e in errors] == [
        f"{tmp_path / 'a.yaml'}#2: id: duplicate id 'one' (first at {tmp_path / 'a.yaml'}#0)",
        f"{tmp_path / 'b.yaml'}#0: id: duplicate id 'two' (first at {tmp_path / 'a.yaml'}#1)",
    ]


def test_a_duplicate_id_is_reported_even_when_its_first_entry_was_refused(
    tmp_path: Path,
) -> None:
    first = entry("one", category="romance")  # refused: unknown category
    write(tmp_path / "a.yaml", [first, entry("one"), entry("two")])
    write(tmp_path / "b.yaml", [entry("one", zh=None)])
    puzzles, errors = load_corpus(tmp_path)
    assert [p.id for p in puzzles] == ["two-en", "two-zh"]
    where = f"{tmp_path / 'a.yaml'}#0, itself refused"
    assert [str(e) for e in errors] == [
        str(errors[0]),
        f"{tmp_path / 'a.yaml'}#1: id: duplicate id 'one' (first at {where})",
        f"{tmp_path / 'b.yaml'}#0: id: duplicate id 'one' (first at {where})",
    ]
    assert errors[0].field == "category"


def test_single_language_entries_load(tmp_path: Path) -> None:
    file = write(tmp_path / "x.yaml", [entry("e", zh=None), entry("z", en=None)])
    puzzles, errors = load_corpus(file)
    assert errors == []
    assert [p.id for p in puzzles] == ["e-en", "z-zh"]


def test_gold_points_may_be_absent_and_clues_may_be_waived(tmp_path: Path) -> None:
    bare = {k: v for k, v in EN.items() if k not in ("logic_points", "key_details", "key_clues")}
    file = write(tmp_path / "x.yaml", [entry("e", en=bare, zh=None)])
    puzzles, errors = load_corpus(file)
    assert puzzles == [] and [e.field for e in errors] == ["en.key_clues"]
    assert "--allow-no-clues" in errors[0].message and "allow_no_clues=true" in errors[0].message
    puzzles, errors = load_corpus(file, allow_no_clues=True)
    assert errors == []
    assert (puzzles[0].key_clues, puzzles[0].logic_points, puzzles[0].key_details) == ((), (), ())


def test_category_display_names_are_accepted_in_our_format(tmp_path: Path) -> None:
    file = write(
        tmp_path / "x.yaml", [entry("e", category="Clever Logic"), entry("f", category="原创")]
    )
    puzzles, errors = load_corpus(file)
    assert errors == []
    assert [p.category for p in puzzles] == ["clever_logic"] * 2 + ["original"] * 2


def test_bad_yaml_and_non_list_files_are_refused_whole(tmp_path: Path) -> None:
    write(tmp_path / "good.yaml", [entry("a")])
    (tmp_path / "broken.yaml").write_text("- id: x\n  en: [unclosed\n", "utf-8")
    write(tmp_path / "mapping.yaml", {"id": "x"})
    puzzles, errors = load_corpus(tmp_path)
    assert [p.id for p in puzzles] == ["a-en", "a-zh"]
    by_file = {Path(e.file).name: e for e in errors}
    assert set(by_file) == {"broken.yaml", "mapping.yaml"}
    assert by_file["broken.yaml"].index is None
    assert "not valid YAML at line" in by_file["broken.yaml"].message
    assert "expected a list of entries" in by_file["mapping.yaml"].message


def test_text_is_stripped_and_sources_name_the_file(tmp_path: Path) -> None:
    file = write(tmp_path / "x.yaml", [entry("e", en={**EN, "title": "  Padded  "}, zh=None)])
    (puzzle,), _ = load_corpus(file)
    assert puzzle.title == "Padded"
    assert puzzle.source == str(file)
    assert puzzle.key_clues == tuple(EN["key_clues"])
