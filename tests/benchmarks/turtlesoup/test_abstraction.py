"""App. D.3's abstraction rule for gold points: the validator, its import warnings and the
`turtlesoup check` command."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.doubles import run_cli

from forkingpaths.benchmarks.turtlesoup.abstraction import check_gold_points, meets_rule, names_in
from forkingpaths.benchmarks.turtlesoup.importers import import_report
from forkingpaths.benchmarks.turtlesoup.puzzles import Puzzle

BOTTOM = (
    "Every evening Odile rang the bell of the lighthouse at Brest. The new automatic lamp "
    "failed on its first night, and the town saw it still needed her."
)


def puzzle(logic: tuple[str, ...], details: tuple[str, ...], language: str = "en") -> Puzzle:
    return Puzzle(
        id=f"a-{language}",
        entry="a",
        category="clever_logic",
        language=language,
        title="The Keeper",
        surface="The lamp went dark, and Odile was glad.",
        bottom=BOTTOM,
        key_clues=("The lamp was automatic.",),
        logic_points=logic,
        key_details=details,
    )


GOOD_LOGIC = ("A machine replaced a person's work.", "Its failure proved the person was needed.")
DETAILS = ("Odile rang the bell.", "The lamp was automatic.", "It failed on its first night.")


def test_names_are_capitalised_words_past_a_sentence_start() -> None:
    assert names_in(puzzle(GOOD_LOGIC, DETAILS)) == {"Odile", "Brest"}
    zh = Puzzle(
        id="a-zh",
        entry="a",
        category="clever_logic",
        language="zh",
        title="守塔人",
        surface="灯灭了，布鲁诺和王先生却很高兴。",
        bottom="小时候的事。",
        key_clues=("灯是自动的。",),
    )
    assert names_in(zh) == {"布鲁诺", "王先生"}


def test_a_puzzle_meets_the_rule_or_each_breach_is_named() -> None:
    assert check_gold_points(puzzle(GOOD_LOGIC, DETAILS)) == []
    assert meets_rule(puzzle(GOOD_LOGIC, DETAILS)) is True
    assert meets_rule(puzzle((), ())) is None  # no gold points: the judge extracts them
    bad = puzzle(("Odile was replaced in Brest.",), DETAILS[:2])
    assert [(b.field, b.message) for b in check_gold_points(bad)] == [
        ("logic_points", "1 points; App. D.3 allows 2 to 5"),
        ("key_details", "2 points; App. D.3 allows 3 to 8"),
        (
            "logic_points",
            "point 1 names Brest, Odile; App. D.3's logic points avoid names, places and times",
        ),
    ]
    assert meets_rule(puzzle(GOOD_LOGIC * 3, DETAILS)) is False  # 6 logic points


def write_entry(path: Path, logic: list[str]) -> Path:
    block = {
        "title": "The Keeper",
        "surface": "The lamp went dark, and Odile was glad.",
        "bottom": BOTTOM,
        "key_clues": ["The lamp was automatic."],
        "logic_points": logic,
        "key_details": list(DETAILS),
    }
    entries = [{"id": "clever_logic-01", "category": "clever_logic", "en": block}]
    path.write_text(yaml.safe_dump(entries), "utf-8")
    return path


def test_import_warns_of_each_breach_by_puzzle_and_field(tmp_path: Path) -> None:
    file = write_entry(tmp_path / "ours.yaml", ["Odile lost her job.", "A machine failed."])
    report = import_report(file)
    assert len(report.puzzles) == 1 and report.errors == []
    assert [str(w) for w in report.warnings] == [
        f"{file}#0: en.logic_points: clever_logic-01-en: point 1 names Odile; App. D.3's logic "
        "points avoid names, places and times"
    ]
    assert report.warning_kinds() == {"abstraction": 1}


def test_check_command_counts_and_exits_1_on_a_breach(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_entry(tmp_path / "good.yaml", list(GOOD_LOGIC))
    code, out, _ = run_cli(["turtlesoup", "check", str(good)], capsys)
    assert code == 0
    assert out.strip() == (
        "1 instance: 1 puzzle x en; 1 of 1 instances with gold points meet App. D.3's rule "
        "(0 of 1 carry none: the judge extracts them)"
    )
    bad = write_entry(tmp_path / "bad.yaml", ["Odile lost her job.", "A machine failed."])
    code, out, _ = run_cli(["turtlesoup", "check", str(bad)], capsys)
    assert code == 1
    assert out.splitlines()[0] == (
        "clever_logic-01-en: logic_points: point 1 names Odile; App. D.3's logic points avoid "
        "names, places and times"
    )
    code, out, err = run_cli(["turtlesoup", "check", str(tmp_path / "nowhere")], capsys)
    assert code != 0 and "no such file or directory" in out + err


def test_accented_names_first_names_and_years_are_caught() -> None:
    story = Puzzle(
        id="b-en",
        entry="b",
        category="crime_thriller",
        language="en",
        title="The Run",
        surface="Tomás said he was asleep. When Élodie called, nobody answered.",
        bottom="Helga Hofer saw the map. The run was logged in 1953, when Tomás drove.",
        key_clues=("The app kept running.",),
        logic_points=(
            "Tomás forgot the app.",
            "When the map was shared, Helga knew.",
            "The letter came back to 1953年.",
        ),
        key_details=DETAILS,
    )
    # "When" opens a sentence before a name and is no first name; "Helga" is one.
    assert names_in(story) == {"Tomás", "Élodie", "Helga", "Hofer"}
    assert [b.message.split(";")[0] for b in check_gold_points(story)] == [
        "point 1 names Tomás",
        "point 2 names Helga",
        "point 3 names the year 1953",
    ]


def test_the_shipped_corpus_meets_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["turtlesoup", "check"], capsys)
    assert code == 0, out
    assert out.strip() == (
        "120 instances: 60 puzzles x en, zh; 120 of 120 instances with gold points meet "
        "App. D.3's rule (0 of 120 carry none: the judge extracts them)"
    )
