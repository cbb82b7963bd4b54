"""turtlesoup:table2 and turtlesoup:table3 end to end offline (scripted questioner, responder and
judge), and the human baseline file behind Table 2's Reduce column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forkingpaths.benchmarks.turtlesoup.human_baseline import load_human_baseline
from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES
from forkingpaths.benchmarks.turtlesoup.reproduce import table3_instances
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.reproduce import load_published
from forkingpaths.runner.reproduce import find_reproduction, run_reproduction

PUBLISHED = Path(__file__).parents[3] / "src/forkingpaths/benchmarks/turtlesoup/data"
PAPER_HUMANS = PUBLISHED / "human_baseline_paper.yaml"
FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = FIXTURES / "release_sample"
"""Our sample in the release's format: en/ and zh/ Original_Data.json (2 stories) and
Clever_Logic.json (1 story)."""
SHIPPED_NOTE = "Puzzles played: the shipped corpus (ours, 60 puzzles x en, zh)"


def spec_of(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "spec.json").read_text("utf-8"))["spec"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    return path


# ---- the human baseline file ----


def test_paper_human_baseline_gives_table2s_reduce() -> None:
    human = load_human_baseline(PAPER_HUMANS)
    assert human.categories == {
        "crime_thriller": 69.88,
        "mind_game": 73.05,
        "supernatural": 75.06,
        "constant_change": 72.12,
        "clever_logic": 73.33,
        "original": 67.87,
    }
    # Table 2's worked cells: claude-3.7-sonnet Ch, deepseek-r1 En.
    assert round(human.reduce("crime_thriller", 54.54) or 0, 2) == -15.34
    assert round(human.reduce("original", 29.76) or 0, 2) == -38.11
    assert human.reduce("original", None) is None
    published = load_published(PUBLISHED / "published" / "table2.yaml")
    for row in published.rows:
        if row.model == "Human Baseline":
            continue
        for category in CATEGORIES:
            # Every printed Reduce is the printed score minus the human score, to the cent.
            score, reduce = row.values[category], row.values[f"{category}_reduce"]
            assert score is not None and reduce is not None
            assert abs(score - human.categories[category] - reduce) < 0.011, (row, category)


def test_per_puzzle_human_scores_average_players_then_puzzles(tmp_path: Path) -> None:
    path = write(
        tmp_path / "humans.json",
        json.dumps(
            {"puzzles": {"mind_game-01-zh": [60, 80], "mind_game-02": 40, "Orig. Data-3": 90}}
        ),
    )
    human = load_human_baseline(path)
    assert human.categories == {"mind_game": 55.0, "original": 90.0}
    assert human.puzzles == {"mind_game": 2, "original": 1}
    assert human.reduce("mind_game", 50.0) == -5.0
    assert human.reduce("supernatural", 50.0) is None


def test_aggregate_names_may_be_table2s_column_heads(tmp_path: Path) -> None:
    path = write(tmp_path / "h.yaml", "categories:\n  Crime Thrill.: 70\n  Clev. Logic: 73.5\n")
    assert load_human_baseline(path).categories == {"crime_thriller": 70.0, "clever_logic": 73.5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "expected a mapping with exactly one of categories"),
        ("categories: {a: 1}\npuzzles: {b: 2}", "expected a mapping with exactly one of"),
        ("categories: {}", "categories: expected a non-empty mapping"),
        ("categories: {romance: 50}", "categories.romance: unknown category"),
        ("categories: {mind_game: 150}", "categories.mind_game: got 150; allowed: a number"),
        ("categories: {mind_game: yes}", "categories.mind_game: got true"),
        ("categories: {mind_game: 1, Mind Game: 2}", "category mind_game given twice"),
        ("puzzles: {lighthouse: 50}", "puzzles.lighthouse: not a puzzle id"),
        ("puzzles: {mind_game-01-zh: []}", "puzzles.mind_game-01-zh: an empty list"),
        ("puzzles: {mind_game-01-zh: [50, -1]}", "puzzles.mind_game-01-zh: got -1"),
        ("categories: [", "not a human baseline file"),
    ],
)
def test_bad_human_baseline_files_are_one_line_naming_key_and_value(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "h.yaml", text)
    with pytest.raises(InvalidFile) as caught:
        load_human_baseline(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(path))


# ---- the reproductions ----


def test_both_tables_are_listed_with_their_published_numbers() -> None:
    table2 = find_reproduction("turtlesoup:table2")
    assert table2.benchmark == "turtlesoup"
    assert "human_baseline" in table2.reproduction.optional_inputs
    assert table2.published is not None and len(table2.published.rows) == 13
    table3 = find_reproduction("turtlesoup:table3")
    assert table3.published is not None
    assert [r.method for r in table3.published.rows] == [
        "Mosaic-Agent",
        "w/o Deliberation",
        "w/o Meta-Cog.",
        "w/o Pruning",
        "w/o Key Clue",
        "w/o All agents",
    ]
    assert table3_instances() == tuple(f"original-{i:02d}-zh" for i in range(1, 11))


def test_table2_offline_sets_our_scores_against_a_per_puzzle_human_baseline(
    tmp_path: Path,
) -> None:
    humans = write(
        tmp_path / "humans.yaml",
        "puzzles:\n  clever_logic-01-zh: [60, 80]\n  clever_logic-02-zh: 50\n",
    )
    outcome = run_reproduction(
        "turtlesoup:table2",
        model="scripted",
        inputs={"human_baseline": humans},
        limit=2,
        runs_dir=tmp_path / "runs",
    )
    (table,) = outcome.result.tables
    rows = {row.label: row for row in table.rows}
    assert list(rows) == ["Ch", "En", "Human Baseline"]
    # --limit 2 plays clever_logic-01 in both languages (the corpus's first entry).
    assert {k: v for k, v in rows["Ch"].ours.items() if v is not None} == {
        "clever_logic": pytest.approx(1.6),
        "clever_logic_reduce": pytest.approx(-58.4),
    }
    assert {k: v for k, v in rows["En"].ours.items() if v is not None} == {
        "clever_logic": pytest.approx(4.0),
        "clever_logic_reduce": pytest.approx(-56.0),
    }
    assert rows["Human Baseline"].ours["clever_logic"] == 60.0
    # The published columns are the YAML's: claude-3.7-sonnet's rows by default.
    assert table.published_model == "claude-3.7-sonnet"
    assert rows["Ch"].published["crime_thriller"] == 54.54
    assert rows["Ch"].published["original_reduce"] == -11.05
    assert rows["En"].published["mind_game_reduce"] == -42.42
    assert rows["Human Baseline"].published["supernatural"] == 75.06
    assert "Human baseline averaged over puzzles: clever_logic 2" in table.notes
    assert f"Human baseline: {humans}" in table.notes
    assert SHIPPED_NOTE in table.notes
    assert spec_of(outcome.runs["mosaic"])["benchmark_options"] == {}
    written = json.loads((outcome.out_dir / "reproduction.json").read_text("utf-8"))
    assert written["inputs"] == {"human_baseline": str(humans)}
    assert (outcome.out_dir / "report.html").is_file()


def test_table2_compares_with_the_model_asked_for(tmp_path: Path) -> None:
    outcome = run_reproduction(
        "turtlesoup:table2",
        model="scripted",
        compare_to="deepseek-r1",
        inputs={"human_baseline": PAPER_HUMANS},
        limit=1,
        runs_dir=tmp_path / "runs",
    )
    (table,) = outcome.result.tables
    assert table.published_model == "deepseek-r1"
    assert table.rows[0].published["original"] == 57.14
    assert table.rows[0].ours["clever_logic_reduce"] is None  # no Chinese story played


def test_table2_measures_reduce_against_the_papers_human_row_by_default(tmp_path: Path) -> None:
    outcome = run_reproduction("turtlesoup:table2", model="scripted", limit=1, runs_dir=tmp_path)
    (table,) = outcome.result.tables
    human = next(row for row in table.rows if row.label == "Human Baseline")
    assert set(human.ours.values()) == {None}, "the paper's row is not ours to measure"
    paper = load_human_baseline(PAPER_HUMANS)
    for row in table.rows[:2]:
        for category, score in paper.categories.items():
            ours = row.ours[category]
            assert row.ours[f"{category}_reduce"] == (
                None if ours is None else pytest.approx(ours - score)
            )
    assert f"Human baseline: the paper's human row, {PAPER_HUMANS}" in table.notes
    # Every note reads as a sentence of its own once the renderer ends it with a period.
    assert not any(".;" in note or note.endswith(";") for note in table.notes)
    assert all(note.lstrip("'")[0].isupper() for note in table.notes)
    assert not any("needs --input human_baseline" in note for note in table.notes)


def test_table3_offline_runs_mosaic_and_its_five_ablations(tmp_path: Path) -> None:
    outcome = run_reproduction(
        "turtlesoup:table3", model="scripted", limit=2, runs_dir=tmp_path / "runs"
    )
    (table,) = outcome.result.tables
    assert table.published_model == "deepseek-r1"
    ours = {row.label: row.ours for row in table.rows}
    scores = {label: (v["conclusion_match"], v["overall"]) for label, v in ours.items()}
    assert scores == {
        "Mosaic-Agent": (5.0, 2.0),
        "w/o Deliberation": (5.0, 2.0),
        "w/o Meta-Cog.": (5.0, 2.0),
        "w/o Pruning": (4.5, pytest.approx(1.8)),
        "w/o Key Clue": (5.0, 2.0),
        "w/o All agents": (5.5, pytest.approx(2.2)),
    }
    assert all(v["logic_accuracy"] == 0.0 == v["detail_fidelity"] for v in ours.values())
    published = {row.label: row.published for row in table.rows}
    assert published["Mosaic-Agent"] == {
        "logic_accuracy": 54.72,
        "detail_fidelity": 56.68,
        "conclusion_match": 59.45,
        "overall": 57.14,
    }
    assert published["w/o All agents"]["overall"] == 46.24
    assert table.notes[-1] == SHIPPED_NOTE
    assert set(outcome.runs) == {
        "mosaic",
        "no_deliberation",
        "no_metacognition",
        "no_pruning",
        "no_key_clue",
        "baseline",
    }


# ---- the paper's release as input ----


def test_both_tables_take_the_puzzles_as_an_optional_input() -> None:
    for key in ("turtlesoup:table2", "turtlesoup:table3"):
        reproduction = find_reproduction(key).reproduction
        assert "puzzles" in reproduction.optional_inputs
    assert table3_instances(SAMPLE) == ("original-01-zh", "original-02-zh")


def test_table2_plays_the_release_given_as_input(tmp_path: Path) -> None:
    outcome = run_reproduction(
        "turtlesoup:table2",
        model="scripted",
        inputs={"puzzles": SAMPLE, "human_baseline": PAPER_HUMANS},
        limit=4,
        runs_dir=tmp_path / "runs",
    )
    spec = spec_of(outcome.runs["mosaic"])
    assert spec["benchmark_options"] == {"puzzles": str(SAMPLE.resolve())}
    # --limit takes one instance of each category x language in turn (the release's order:
    # en/ before zh/, categories by file name, stories by position).
    assert spec["instances"] == [
        "clever_logic-01-en",
        "original-01-en",
        "clever_logic-01-zh",
        "original-01-zh",
    ]
    (table,) = outcome.result.tables
    rows = {row.label: row for row in table.rows}
    assert {k: v for k, v in rows["Ch"].ours.items() if v is not None} == {
        "clever_logic": pytest.approx(4.8),
        "clever_logic_reduce": pytest.approx(-68.53),
        "original": pytest.approx(1.6),
        "original_reduce": pytest.approx(-66.27),
    }
    assert {k: v for k, v in rows["En"].ours.items() if v is not None} == {
        "clever_logic": pytest.approx(7.6),
        "clever_logic_reduce": pytest.approx(-65.73),
        "original": pytest.approx(6.4),
        "original_reduce": pytest.approx(-61.47),
    }
    assert f"Puzzles played: {SAMPLE.resolve()}" in table.notes and SHIPPED_NOTE not in table.notes
    written = json.loads((outcome.out_dir / "reproduction.json").read_text("utf-8"))
    assert written["inputs"]["puzzles"] == str(SAMPLE)


def test_table3_plays_the_chinese_original_stories_of_the_release(tmp_path: Path) -> None:
    outcome = run_reproduction(
        "turtlesoup:table3", model="scripted", inputs={"puzzles": SAMPLE}, runs_dir=tmp_path
    )
    for run_dir in outcome.runs.values():
        spec = spec_of(run_dir)
        assert spec["instances"] == ["original-01-zh", "original-02-zh"]
        assert spec["benchmark_options"] == {"puzzles": str(SAMPLE.resolve())}
    (table,) = outcome.result.tables
    assert {
        row.label: (row.ours["conclusion_match"], row.ours["overall"]) for row in table.rows
    } == {
        label: (4.5, pytest.approx(1.8))
        for label in (
            "Mosaic-Agent",
            "w/o Deliberation",
            "w/o Meta-Cog.",
            "w/o Pruning",
            "w/o Key Clue",
            "w/o All agents",
        )
    }
    assert table.notes[-1] == f"Puzzles played: {SAMPLE.resolve()}"


def test_table3_refuses_puzzles_without_chinese_original_stories(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        run_reproduction(
            "turtlesoup:table3",
            model="scripted",
            inputs={"puzzles": FIXTURES / "release"},
            runs_dir=tmp_path,
        )
    assert str(caught.value) == (
        f"--input puzzles={(FIXTURES / 'release').resolve()}: no Chinese Original story (Table 3 "
        "plays them; the release keeps them in zh/Original_Data.json)"
    )
