"""Importers (contract §1.1): the paper's release layout, TurtleBench stories and cases, the import
report, and write_corpus -> load_corpus round trips; every refusal names file and index."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from forkingpaths.benchmarks.turtlesoup.importers import (
    ImportReport,
    LabelledGuess,
    census,
    import_report,
    load_corpus,
    load_corpus_problems,
    load_turtlebench_cases,
    normalize_case_label,
    parse_tips,
    write_corpus,
)
from forkingpaths.benchmarks.turtlesoup.puzzles import UNCATEGORIZED, Puzzle, PuzzleWarning
from forkingpaths.core.errors import ConfigError

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
TURTLEBENCH = FIXTURES / "turtlebench"


def copy_fixture(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def dump(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return path


def story(title: str = "Quiet Bell", tips: object = ("The bell was broken.",)) -> dict[str, object]:
    return {
        "title": title,
        "surface": "The church bell did not ring at noon, and the whole village cheered.",
        "bottom": "The bell had rung at noon every day to mark a curfew; its silence meant the war "
        "was over.",
        "tips": list(tips) if isinstance(tips, tuple) else tips,
    }


# ---- the paper's release ----


def test_release_directory_loads_both_languages_and_maps_file_names() -> None:
    puzzles, errors = load_corpus(RELEASE)
    assert errors == []
    by_id = {p.id: p for p in puzzles}
    assert sorted(by_id) == [
        "crime_thriller-01-en",
        "crime_thriller-01-zh",
        "crime_thriller-02-en",
        "crime_thriller-02-zh",
        "supernatural-01-en",
        "supernatural-01-zh",
    ]
    frozen = by_id["crime_thriller-01-zh"]
    assert (frozen.entry, frozen.category, frozen.language) == (
        "crime_thriller-01",
        "crime_thriller",
        "zh",
    )
    assert frozen.title == "冻住的钥匙"
    assert frozen.source == "release"
    # The release has no gold points: the evaluation extracts them.
    assert frozen.logic_points == frozen.key_details == ()
    # `Supernatural.json` (display name) and `超自然.json` (Chinese display name) both map.
    assert (
        by_id["supernatural-01-en"].category
        == by_id["supernatural-01-zh"].category
        == "supernatural"
    )


def test_release_tips_given_as_one_string_lose_their_list_markers() -> None:
    puzzles, _ = load_corpus(RELEASE)
    by_id = {p.id: p for p in puzzles}
    assert by_id["crime_thriller-02-en"].key_clues == (
        "The money itself was the problem.",
        "She had seen the notes before.",
        "She wanted to alert the police.",
    )
    assert by_id["crime_thriller-02-zh"].key_clues == (
        "问题出在钱本身。",
        "她以前见过这些钞票。",
        "她想报警。",
    )


@pytest.mark.parametrize(
    ("tips", "clues", "problem"),
    [
        (["a", " b "], ("a", "b"), None),
        ("1) a\n\n(2) b\n3、c\n* d", ("a", "b", "c", "d"), None),
        (None, (), None),
        ({"a": 1}, (), "expected a list of strings"),
        (["a", 2], ("a",), "1 item(s) not text left out: [2]"),
    ],
)
def test_parse_tips(tips: object, clues: tuple[str, ...], problem: str | None) -> None:
    got, got_problem = parse_tips(tips)
    assert got == clues
    assert (got_problem is None) if problem is None else (problem in str(got_problem))


def test_language_option_keeps_one_release_language_without_reading_the_other(
    tmp_path: Path,
) -> None:
    release = copy_fixture("release", tmp_path)
    (release / "zh" / "crime-thriller.json").write_text("{ broken", "utf-8")
    puzzles, errors = load_corpus(release, language="en")
    assert errors == []
    assert {p.language for p in puzzles} == {"en"} and len(puzzles) == 3


def test_language_option_still_checks_the_clue_counts_against_the_other_language(
    tmp_path: Path,
) -> None:
    release = copy_fixture("release", tmp_path)
    en_file = release / "en" / "crime_thriller.json"
    stories = json.loads(en_file.read_text("utf-8"))
    stories[1]["tips"] = ["The money itself was the problem."]  # 1 tip; zh has 3
    dump(en_file, stories)
    zh_file = release / "zh" / "crime-thriller.json"
    for language, here, there in (("zh", zh_file, en_file), ("en", en_file, zh_file)):
        puzzles, problems = load_corpus_problems(release, language=language)
        assert sorted(p.id for p in puzzles) == [
            f"crime_thriller-01-{language}",
            f"crime_thriller-02-{language}",
            f"supernatural-01-{language}",
        ]
        assert len(problems) == 1 and isinstance(problems[0], PuzzleWarning)
        # The warning names the story of the language imported, and the other one it differs from.
        assert str(problems[0]).startswith(f"{here}#1: tips: mismatched languages: ")
        assert f"{there}#1 has" in problems[0].message


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_language_folder_imported_alone_is_checked_against_its_language(
    tmp_path: Path, language: str
) -> None:
    puzzles, errors = load_corpus(RELEASE / language)
    assert errors == [] and {p.language for p in puzzles} == {language} and len(puzzles) == 3
    release = copy_fixture("release", tmp_path)
    other = "zh" if language == "en" else "en"
    (release / "en" / "crime_thriller.json").replace(release / "en" / "mind_game.json")
    (release / "zh" / "crime-thriller.json").replace(release / "zh" / "mind_game.json")
    # A story of the other language filed in this folder: a warning, loaded as filed.
    foreign = json.loads((release / other / "mind_game.json").read_text("utf-8"))
    dump(release / language / "original.json", foreign[:1])
    puzzles, problems = load_corpus_problems(release / language)
    assert f"original-01-{language}" in {p.id for p in puzzles}
    assert [(Path(e.file).name, e.index, e.field, e.kind) for e in problems] == [  # type: ignore[attr-defined]
        ("original.json", 0, "language", "language")
    ]
    said = f"filed under {language}/ but the text reads as {other}; loaded as {language}"
    assert said in problems[0].message


def test_a_single_release_file_takes_its_language_from_its_directory() -> None:
    puzzles, errors = load_corpus(RELEASE / "zh" / "超自然.json")
    assert errors == []
    assert [p.id for p in puzzles] == ["supernatural-01-zh"]


def test_release_files_outside_language_directories_detect_their_language(
    tmp_path: Path,
) -> None:
    zh_story = json.loads((RELEASE / "zh" / "crime-thriller.json").read_text("utf-8"))[0]
    dump(tmp_path / "mind_game.json", [story(), zh_story])
    puzzles, errors = load_corpus(tmp_path)
    assert errors == []
    assert [p.id for p in puzzles] == ["mind_game-01-en", "mind_game-02-zh"]


def test_unknown_category_file_name_is_refused_and_the_rest_loads(tmp_path: Path) -> None:
    release = copy_fixture("release", tmp_path)
    dump(release / "en" / "romance.json", [story()])
    puzzles, errors = load_corpus(release)
    assert len(puzzles) == 6
    assert len(errors) == 1
    error = errors[0]
    assert (Path(error.file).name, error.index, error.field) == ("romance.json", None, "category")
    assert "file name 'romance' names no category" in error.message
    assert "crime_thriller (Crime Thriller)" in error.message


def test_bad_json_file_is_refused_whole_and_the_rest_loads(tmp_path: Path) -> None:
    release = copy_fixture("release", tmp_path)
    (release / "en" / "mind_game.json").write_text('[{"title": "x",}]', "utf-8")
    dump(release / "en" / "clever_logic.json", {"title": "not a list"})
    puzzles, errors = load_corpus(release)
    assert len(puzzles) == 6
    messages = {Path(e.file).name: str(e) for e in errors}
    assert set(messages) == {"mind_game.json", "clever_logic.json"}
    assert "mind_game.json: not valid JSON at line 1 column" in messages["mind_game.json"]
    assert "expected a JSON list of stories" in messages["clever_logic.json"]


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        ({k: v for k, v in story().items() if k != "surface"}, "surface", "missing"),
        ({**story(), "bottom": ""}, "bottom", "expected non-empty text"),
        (story(tips=[]), "tips", "empty clue library"),
        (story(tips=None), "tips", "missing"),
        (story(tips="  \n  "), "tips", "empty clue library"),
        (story(tips=[1, 2]), "tips", "empty clue library"),
        ("a bare string", "", "expected an object"),
    ],
)
def test_bad_release_story_is_refused_with_file_and_index(
    tmp_path: Path, bad: object, field: str, message: str
) -> None:
    (tmp_path / "en").mkdir()
    dump(tmp_path / "en" / "original.json", [story("One"), bad, story("Three")])
    puzzles, errors = load_corpus(tmp_path)
    assert [p.id for p in puzzles] == ["original-01-en", "original-03-en"]
    assert len(errors) == 1, [str(e) for e in errors]
    error = errors[0]
    assert (error.file, error.index, error.field) == (
        str(tmp_path / "en" / "original.json"),
        1,
        field,
    )
    assert message in error.message


def write_release(root: Path, en: list[object], zh: list[object], name: str) -> Path:
    """A release laid out as lin-ruo/TurtleSoup-Bench's data/: en/ and zh/ holding one
    indented JSON list per category, file names as the release spells them."""
    for language, stories in (("en", en), ("zh", zh)):
        (root / language).mkdir(parents=True, exist_ok=True)
        text = json.dumps(stories, ensure_ascii=False, indent=2)
        (root / language / f"{name}.json").write_text(text, "utf-8")
    return root


ZH_STORY = {
    "title": "安静的钟",
    "surface": "中午教堂的钟没有响，全村人却欢呼起来。",
    "bottom": "钟声每天中午响起，提醒宵禁；它不再响，意味着战争结束了。",
    "tips": ["钟声和宵禁有关。"],
}


def test_release_pair_with_different_clue_counts_loads_each_language_alone(
    tmp_path: Path,
) -> None:
    # As in the release's Constant_Change.json #5: 8 tips in English, 7 in Chinese.
    en_tips = [f"Clue number {i}." for i in range(1, 9)]
    zh_tips = [f"第{i}条线索。" for i in range(1, 8)]
    release = write_release(
        tmp_path / "data",
        [story("First"), story("Second", tips=tuple(en_tips))],
        [ZH_STORY, {**ZH_STORY, "tips": zh_tips}],
        "Constant_Change",
    )
    report = import_report(release)
    assert sorted(p.id for p in report.puzzles) == [
        "constant_change-01-en",
        "constant_change-01-zh",
        "constant_change-02-en",
        "constant_change-02-zh",
    ]
    by_id = {p.id: p for p in report.puzzles}
    assert len(by_id["constant_change-02-en"].key_clues) == 8
    assert len(by_id["constant_change-02-zh"].key_clues) == 7
    zh_file, en_file = (
        release / "zh" / "Constant_Change.json",
        release / "en" / "Constant_Change.json",
    )
    assert report.errors == []
    assert [str(w) for w in report.warnings] == [
        f"{zh_file}#1: tips: mismatched languages: 7 tips but {en_file}#1 has 8 "
        "(entry 'constant_change-02': each language loads alone)"
    ]
    assert report.warning_kinds() == {"mismatched_languages": 1}
    # Written in our format, the pair loads back with the same warning and both languages.
    out = write_corpus(report.puzzles, tmp_path / "ours.yaml")
    puzzles, problems = load_corpus_problems(out)
    assert len(puzzles) == 4
    assert [(p.index, p.field, p.kind) for p in problems] == [  # type: ignore[attr-defined]
        (1, "zh.key_clues", "mismatched_languages")
    ]


@pytest.mark.parametrize(
    ("change", "field", "kind", "message"),
    [
        ({"tips": ["A real clue.", 7, None]}, "tips", "tips", "2 item(s) not text left out"),
        ({"title": None}, "title", "title", "missing; the entry id stands in"),
        (
            {
                "surface": "教堂的钟中午没有响。",
                "bottom": "钟声代表宵禁，它的沉默意味着战争结束了。",
            },
            "language",
            "language",
            "filed under en/ but the text reads as zh; loaded as en",
        ),
    ],
)
def test_release_story_defects_that_still_play_are_warnings(
    tmp_path: Path, change: dict[str, object], field: str, kind: str, message: str
) -> None:
    bad = {**story("Second"), **change}
    release = write_release(tmp_path, [story("First"), bad], [ZH_STORY, ZH_STORY], "Mind_Game")
    report = import_report(release)
    assert report.errors == []
    assert len(report.puzzles) == 4
    assert [(w.file, w.index, w.field, w.kind) for w in report.warnings] == [
        (str(release / "en" / "Mind_Game.json"), 1, field, kind)
    ]
    assert message in report.warnings[0].message
    second = {p.id: p for p in report.puzzles}["mind_game-02-en"]
    if kind == "title":
        assert second.title == "mind_game-02"
    if kind == "tips":
        assert second.key_clues == ("A real clue.",)
    assert report.to_json()["warning_kinds"] == {kind: 1}


def test_duplicate_category_files_are_refused_per_entry(tmp_path: Path) -> None:
    (tmp_path / "en").mkdir()
    dump(tmp_path / "en" / "original.json", [story("A")])
    dump(tmp_path / "en" / "Original.json", [story("B")])
    puzzles, errors = load_corpus(tmp_path)
    assert [p.title for p in puzzles] == ["B"]  # sorted file order: "Original" < "original"
    assert [str(e) for e in errors] == [
        f"{tmp_path / 'en' / 'original.json'}#0: id: duplicate id 'original-01' "
        f"(first at {tmp_path / 'en' / 'Original.json'}#0)"
    ]


def test_a_duplicate_is_refused_even_when_the_first_entry_was_refused(tmp_path: Path) -> None:
    (tmp_path / "en").mkdir()
    dump(tmp_path / "en" / "Original.json", [story("A", tips=[])])  # refused: no clues
    dump(tmp_path / "en" / "original.json", [story("B")])
    puzzles, errors = load_corpus(tmp_path)
    assert puzzles == []
    first, second = tmp_path / "en" / "Original.json", tmp_path / "en" / "original.json"
    assert [(e.file, e.index, e.field) for e in errors] == [
        (str(first), 0, "tips"),
        (str(second), 0, "id"),
    ]
    assert errors[1].message == (f"duplicate id 'original-01' (first at {first}#0, itself refused)")


def test_deeply_nested_json_file_is_refused_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "stories.json").write_text("[" * 100_000, "utf-8")
    puzzles, errors = load_corpus(tmp_path, allow_no_clues=True)
    assert puzzles == [] and len(errors) == 1
    assert "nested too deeply" in errors[0].message


def test_a_directory_with_nothing_to_import_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", "utf-8")
    puzzles, errors = load_corpus(tmp_path)
    assert puzzles == []
    assert [e.index for e in errors] == [None]
    assert "no puzzles found" in errors[0].message


def test_a_cases_list_is_not_a_puzzle_file() -> None:
    puzzles, errors = load_corpus(TURTLEBENCH / "cases.list")
    assert puzzles == []
    assert "judge-accuracy" in errors[0].message


# ---- TurtleBench stories ----


def test_turtlebench_stories_need_clues_unless_allowed() -> None:
    puzzles, errors = load_corpus(TURTLEBENCH)
    assert puzzles == []
    stories = str(TURTLEBENCH / "stories.json")
    assert [(e.file, e.index, e.field) for e in errors] == [
        (stories, 0, "key_clues"),
        (stories, 1, "key_clues"),
    ]
    assert "--allow-no-clues" in errors[0].message
    # The message names every way to admit them: both commands and the run's option.
    for way in ("turtlesoup import", "turtlesoup play", "run turtlesoup", "allow_no_clues=true"):
        assert way in errors[0].message


def test_turtlebench_stories_load_without_clues_when_allowed() -> None:
    puzzles, errors = load_corpus(TURTLEBENCH / "stories.json", allow_no_clues=True)
    assert errors == []
    assert [p.id for p in puzzles] == ["turtlebench-01-en", "turtlebench-02-en"]
    piano = puzzles[0]
    assert piano.title == "The Silent Piano"
    assert (piano.category, piano.source, piano.key_clues) == (UNCATEGORIZED, "turtlebench", ())


def test_turtlebench_language_is_detected_or_given_and_checked(tmp_path: Path) -> None:
    zh = {
        "title": "沉默的钢琴",
        "surface": "钢琴家演奏完毕，全场寂静，她却微笑着鞠躬。",
        "bottom": "观众都是聋人，他们挥手鼓掌。",
    }
    en = {k: v for k, v in story().items() if k != "tips"}
    dump(tmp_path / "stories.json", [zh, en])
    puzzles, errors = load_corpus(tmp_path, allow_no_clues=True)
    assert errors == []
    assert [p.language for p in puzzles] == ["zh", "en"]
    puzzles, problems = load_corpus_problems(tmp_path, language="zh", allow_no_clues=True)
    assert [p.id for p in puzzles] == ["turtlebench-01-zh", "turtlebench-02-zh"]
    assert [(e.index, e.field, e.kind) for e in problems] == [(1, "language", "language")]  # type: ignore[attr-defined]
    assert "imported as zh but the text reads as en; loaded as zh" in problems[0].message


def test_turtlebench_stories_keyed_by_title_and_their_refusals(tmp_path: Path) -> None:
    plain = {k: v for k, v in story().items() if k not in ("title", "tips")}
    dump(
        tmp_path / "stories.json",
        {"Quiet Bell": plain, "Broken": {"surface": "Something odd."}, "Listed": [1]},
    )
    puzzles, errors = load_corpus(tmp_path, allow_no_clues=True)
    assert [p.title for p in puzzles] == ["Quiet Bell"]
    assert [(e.index, e.field) for e in errors] == [(1, "bottom"), (2, "")]


def test_turtlebench_duplicate_titles_and_categories(tmp_path: Path) -> None:
    base = {k: v for k, v in story().items() if k != "tips"}
    dump(
        tmp_path / "stories.json",
        [
            base,
            base,
            {**base, "title": "Other", "category": "Mind Game"},
            {**base, "title": "X", "category": "romance"},
        ],
    )
    report = import_report(tmp_path, allow_no_clues=True)
    assert [(p.title, p.category) for p in report.puzzles] == [
        ("Quiet Bell", UNCATEGORIZED),
        ("Quiet Bell", UNCATEGORIZED),
        ("Other", "mind_game"),
        ("X", UNCATEGORIZED),
    ]
    assert report.errors == []
    assert [(e.index, e.field, e.kind) for e in report.warnings] == [
        (1, "title", "duplicate_title"),
        (3, "category", "category"),
    ]
    assert "duplicate title 'Quiet Bell' (first at #0)" in report.warnings[0].message
    assert "(loaded uncategorized)" in report.warnings[1].message


# ---- TurtleBench cases ----


def test_cases_list_labels_map_to_responder_answers() -> None:
    guesses, errors = load_turtlebench_cases(TURTLEBENCH / "cases.list")
    assert errors == []
    assert guesses[0] == LabelledGuess("The audience could not hear", "The Silent Piano", "Yes")
    assert [g.label for g in guesses] == ["Yes", "No", "Unknown", "Yes", "No", "Unknown", "Unknown"]
    # A directory holding cases.list reads the same.
    assert load_turtlebench_cases(TURTLEBENCH) == (guesses, [])


@pytest.mark.parametrize(
    ("label", "answer"),
    [
        ("T", "Yes"),
        ("f", "No"),
        ("N", "Unknown"),
        ("Correct", "Yes"),
        ("INCORRECT", "No"),
        ("irrelevant", "Unknown"),
        ("对", "Yes"),
        ("错", "No"),
        ("不知道", "Unknown"),
        ("maybe", None),
    ],
)
def test_normalize_case_label(label: str, answer: str | None) -> None:
    assert normalize_case_label(label) == answer


def test_bad_case_lines_are_refused_by_line_number_and_the_rest_load(tmp_path: Path) -> None:
    cases = tmp_path / "cases.list"
    cases.write_text(
        "He was deaf\tThe Silent Piano\tT\n"
        "No label here\tThe Silent Piano\n"
        "It rained\tThe Silent Piano\tMaybe\n"
        "Who knows\tNo Such Story\tF\n"
        "\tThe Silent Piano\tF\n"
        "The coffee was cold\t|\tTwo Cups\t|\tIncorrect\n",
        "utf-8",
    )
    guesses, errors = load_turtlebench_cases(cases, titles={"The Silent Piano", "Two Cups"})
    assert guesses == [
        LabelledGuess("He was deaf", "The Silent Piano", "Yes"),
        LabelledGuess("The coffee was cold", "Two Cups", "No"),
    ]
    assert [(e.file, e.index, e.field) for e in errors] == [
        (str(cases), 2, ""),
        (str(cases), 3, "label"),
        (str(cases), 4, "title"),
        (str(cases), 5, "guess"),
    ]
    assert 'unknown label "Maybe"; expected T/F/N or Yes/No/Unknown/Irrelevant' in errors[1].message
    # Without titles to check against, the unknown story's case loads.
    guesses, errors = load_turtlebench_cases(cases)
    assert len(guesses) == 3 and len(errors) == 3


def test_missing_cases_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_turtlebench_cases(tmp_path / "cases.list")


# ---- the import report ----


def test_import_report_json_has_exactly_the_contract_keys(tmp_path: Path) -> None:
    release = copy_fixture("release", tmp_path)
    dump(release / "en" / "romance.json", [story()])
    report = import_report(release)
    assert isinstance(report, ImportReport)
    assert report.languages == ["en", "zh"]
    assert report.categories == {"crime_thriller": 4, "supernatural": 2}
    data = json.loads(json.dumps(report.to_json()))
    assert data == {
        "instances": 6,
        "puzzles": 3,
        "languages": ["en", "zh"],
        "categories": {"crime_thriller": 4, "supernatural": 2},
        "errors": [str(report.errors[0])],
        "warnings": [],
        "warning_kinds": {},
    }
    assert data["errors"][0].startswith(str(release / "en" / "romance.json") + ": category: ")


def test_census_counts_instances_as_puzzles_times_languages() -> None:
    def puzzle(entry: str, language: str) -> Puzzle:
        return Puzzle(
            id=f"{entry}-{language}",
            entry=entry,
            category="mind_game",
            language=language,
            title="t",
            surface="s",
            bottom="b",
            key_clues=("c",),
        )

    both = [puzzle(e, lang) for e in ("a", "b") for lang in ("en", "zh")]
    assert census(both) == "4 instances: 2 puzzles x en, zh"
    assert census([*both, puzzle("c", "zh")]) == "5 instances of 3 puzzles: 2 en, 3 zh"
    assert census([]) == "0 instances: 0 puzzles x -"


def test_import_report_of_turtlebench_with_and_without_clues() -> None:
    refused = import_report(TURTLEBENCH)
    assert refused.to_json()["instances"] == 0 and len(refused.errors) == 2
    assert all("stories.json#" in e for e in refused.to_json()["errors"])
    allowed = import_report(TURTLEBENCH, language="en", allow_no_clues=True)
    assert allowed.to_json() == {
        "instances": 2,
        "puzzles": 2,
        "languages": ["en"],
        "categories": {UNCATEGORIZED: 2},
        "errors": [],
        "warnings": [],
        "warning_kinds": {},
    }


def test_import_report_of_the_shipped_corpus_directory() -> None:
    from forkingpaths.benchmarks.turtlesoup.puzzles import CORPUS_DIR

    data = import_report(CORPUS_DIR).to_json()
    assert (data["instances"], data["puzzles"], data["errors"]) == (120, 60, [])
    assert data["languages"] == ["en", "zh"]
    assert set(data["categories"].values()) == {20}


# ---- write_corpus -> load_corpus ----


def same_but_source(loaded: list[Puzzle], original: list[Puzzle]) -> bool:
    return [dataclasses.replace(p, source="") for p in loaded] == [
        dataclasses.replace(p, source="") for p in original
    ]


def test_round_trip_of_the_shipped_corpus(tmp_path: Path) -> None:
    puzzles, _ = load_corpus()
    out = write_corpus(puzzles, tmp_path / "out" / "corpus.yaml")
    loaded, errors = load_corpus(out)
    assert errors == []
    assert same_but_source(loaded, puzzles)
    assert {p.source for p in loaded} == {str(out)}


def test_round_trip_of_a_release_import(tmp_path: Path) -> None:
    puzzles, _ = load_corpus(RELEASE)
    out = write_corpus(puzzles, tmp_path / "release.yaml")
    loaded, errors = load_corpus(out)
    assert errors == []
    # The writer groups each entry's languages together, so compare in id order.
    assert same_but_source(sorted(loaded, key=lambda p: p.id), sorted(puzzles, key=lambda p: p.id))
    assert "冻住的钥匙" in out.read_text("utf-8")  # Chinese kept readable, not escaped


def test_round_trip_of_single_language_and_clue_less_stories(tmp_path: Path) -> None:
    puzzles, _ = load_corpus(TURTLEBENCH, allow_no_clues=True)
    out = write_corpus(puzzles, tmp_path / "tb.yaml")
    refused, errors = load_corpus(out)
    assert refused == [] and [e.field for e in errors] == ["en.key_clues", "en.key_clues"]
    loaded, errors = load_corpus(out, allow_no_clues=True)
    assert errors == []
    assert same_but_source(loaded, puzzles)
    assert all(p.category == UNCATEGORIZED for p in loaded)


def test_write_corpus_refuses_conflicting_puzzles(tmp_path: Path) -> None:
    puzzles, _ = load_corpus(RELEASE)
    with pytest.raises(ConfigError, match="given twice"):
        write_corpus([puzzles[0], puzzles[0]], tmp_path / "x.yaml")
    moved = dataclasses.replace(
        puzzles[0], id="supernatural-01-zh", language="zh", category="original"
    )
    with pytest.raises(ConfigError, match="has category 'original'"):
        write_corpus([puzzles[0], moved], tmp_path / "x.yaml")
