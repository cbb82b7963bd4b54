"""`forkingpaths reproduce eeb:table4..7` end to end offline, and the Table 4 scoring fit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.benchmarks.eeb.test_learn_cli import release_tree

from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository
from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.reproduce import TABLE4_SCORE, TABLE7_RUNS, reproductions
from forkingpaths.benchmarks.eeb.scoring import fitted_kill_reward, table4_fit
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.reproduce import ReproContext, ResultTable, load_published
from forkingpaths.runner.reproduce import ReproOutcome, run_reproduction

PUBLISHED = Path(EEBBenchmark().published_dir())

# The scripted stand-in (scripted/eeb-reference) on the first two levels of each split:
# maze-l1-000/001 (9x9, no monsters) and match2-easy-000/001; deterministic.
MAZE = {"Suc.Rate": 100.0, "A.Score": 3225.0, "A.Steps": 40.0, "A.Gold": 100.0, "Rem.HP": 3.0}
MATCH2 = {"Suc.Rate": 100.0, "A.Score": 246.0, "Score/Step": 24.6, "Clear/Step": 4.65}


def ours(key: str, tmp_path: Path, **kwargs: object) -> list[dict[str, object]]:
    kwargs.setdefault("limit", 2)
    outcome = run_reproduction(key, model="scripted", runs_dir=tmp_path, **kwargs)
    (table,) = outcome.result.tables
    published = load_published(PUBLISHED / f"{key.split(':')[1]}.yaml")
    model = table.published_model or ""
    for row in table.rows:
        method = "" if key in ("eeb:table4", "eeb:table5") else row.label
        for column in published.columns:
            assert row.published[column.key] == published.value(model, method, column.key)
    return [{"label": row.label, "model": model, **row.ours} for row in table.rows]


def test_table4_maze_metrics_and_the_inferred_score(tmp_path: Path) -> None:
    (row,) = ours("eeb:table4", tmp_path, compare_to="gpt-4.1")
    assert row["model"] == "gpt-4.1" and row["label"] == "scripted"
    assert {k: row[k] for k in MAZE} == MAZE
    assert row["episodes"] == 2 and row["A.Kills"] == 0.0 and row["A.Barr"] == 0.0
    assert row["A.Explor"] == pytest.approx(94.4444, abs=1e-4)
    assert row["A.Score.table4"] == 3225.0, "no life lost, no kill: both rules agree"


def test_table4_sets_both_score_rules_against_the_printed_score(tmp_path: Path) -> None:
    outcome = run_reproduction("eeb:table4", model="scripted", limit=1, runs_dir=tmp_path,
                               compare_to="gpt-4.1")  # fmt: skip
    (table,) = outcome.result.tables
    (row,) = table.rows
    assert table.columns[-1] == TABLE4_SCORE
    # The paper prints one A.Score: both columns face it, each with its own difference.
    assert row.published["A.Score"] == row.published[TABLE4_SCORE.key] == 2562.33
    assert row.ours["A.Score"] == row.ours[TABLE4_SCORE.key] == 3050.0  # maze-l1-000: no kill
    assert row.difference(TABLE4_SCORE.key) == pytest.approx(3050.0 - 2562.33)
    assert not any("-ours" in note for note in table.notes), "no -ours row in this table"
    again = run_reproduction("eeb:table4", model="scripted", limit=1, runs_dir=tmp_path,
                             compare_to="gpt-4.1-ours")  # fmt: skip
    (table,) = again.result.tables
    assert table.rows[0].published[TABLE4_SCORE.key] == 2805.67
    assert table.notes[-1] == (
        "gpt-4.1-ours is the paper's gpt-4.1 with Agent-ExpVer truths; our row is the base "
        "agent without truths, so compare it with gpt-4.1, or reproduce eeb:table6, which "
        "plays both."
    )


@pytest.mark.parametrize("item", ["table4", "table5", "table6", "table7"])
def test_every_published_note_reads_as_a_sentence(item: str) -> None:
    notes = load_published(PUBLISHED / f"{item}.yaml").notes
    assert notes
    for note in notes:
        assert note[0].isupper() and note.endswith("."), note
        assert "-ours rows" not in note


def test_the_levels_input_plays_the_papers_own_levels(tmp_path: Path) -> None:
    """`--input levels=PATH` (the release's data/levels) for Tables 4, 5 and 7: every run
    plays the path's held-out levels (the maze_train file is left out), a note names them."""
    root = release_tree(tmp_path / "levels")
    mazes = ["maze-maze_eval-Level_1_1", "maze-maze_eval-Level_3_2"]
    boards = ["match2-match_game-easy-level01", "match2-match_game-hard-level01"]
    levels = {"levels": root}
    said = (
        f"Levels: the held-out levels of {root.resolve()} (--input levels) instead of the "
        "shipped ones, those in a folder named *train* left out: "
    )

    def played(outcome: ReproOutcome) -> dict[str, list[str]]:
        return {
            key: [
                json.loads(x)["instance_id"]
                for x in (path / "episodes.jsonl").read_text().splitlines()
            ]
            for key, path in outcome.runs.items()
        }

    t4 = run_reproduction("eeb:table4", model="scripted", inputs=levels, runs_dir=tmp_path / "r")
    assert played(t4) == {"base": mazes}
    (table,) = t4.result.tables
    assert table.notes[-1] == said + "each maze run played 2 mazes."
    # the L1 maze (7x7) and the L3 maze (11x11, one monster killed, no life lost)
    assert {k: table.rows[0].ours[k] for k in ("episodes", "Suc.Rate", "A.Score", "A.Kills")} == {
        "episodes": 2.0, "Suc.Rate": 100.0, "A.Score": 3365.0, "A.Kills": 0.5
    }  # fmt: skip
    assert table.rows[0].ours[TABLE4_SCORE.key] == 3365.0 + 500 * 0.5

    t5 = run_reproduction("eeb:table5", model="scripted", inputs=levels, runs_dir=tmp_path / "r")
    assert played(t5) == {"base": boards}
    (table,) = t5.result.tables
    assert table.notes[-1] == said + "each match-2 run played 2 match-2 boards."
    assert (table.rows[0].ours["episodes"], table.rows[0].ours["Suc.Rate"]) == (2.0, 50.0)

    t7 = run_reproduction("eeb:table7", model="scripted", inputs=levels, runs_dir=tmp_path / "r")
    assert played(t7) == {
        "maze-eeb": mazes,
        "maze-full-vision": mazes,
        "match2-eeb": boards,
        "match2-noprops": boards,
    }
    (table,) = t7.result.tables
    assert table.notes[-1] == said + (
        "each maze run played 2 mazes, each match-2 run played 2 match-2 boards."
    )
    recorded = json.loads((t7.out_dir / "reproduction.json").read_text())["inputs"]
    assert recorded == {"levels": str(root)}


def test_table6_learns_and_plays_on_the_levels_input(tmp_path: Path) -> None:
    root = release_tree(tmp_path / "levels")
    outcome = run_reproduction("eeb:table6", model="scripted", limit=1, runs_dir=tmp_path / "r",
                               inputs={"levels": root})  # fmt: skip
    out = outcome.out_dir
    maze = json.loads((out / "learning" / "maze_truths" / "expver_config.json").read_text())
    assert maze["train_levels"] == ["maze-maze_train-Level_1_1"]
    assert maze["eval_levels"] == ["maze-maze_eval-Level_1_1"]
    match2 = json.loads((out / "learning" / "match2_truths" / "expver_config.json").read_text())
    assert match2["train_levels"][0] == "match2-train-easy-9000", "the release has none: ours"
    easy_board = "match2-match_game-easy-level01"
    assert match2["eval_levels"] == [easy_board]
    for key, path in outcome.runs.items():
        (line,) = (path / "episodes.jsonl").read_text().splitlines()
        first = "maze-maze_eval-Level_1_1" if key.startswith("maze") else easy_board
        assert json.loads(line)["instance_id"] == first
    assert outcome.result.notes[1] == (
        f"Agent-ExpVer learned on the training levels of {root.resolve()} (those in a folder "
        "named *train*) and measured Delta on its held-out levels; a game the path has no "
        "training level of (the release has no match-2 training boards) learned on the "
        "package's own training levels."
    )
    assert (
        outcome.result.tables[0]
        .notes[-1]
        .endswith("each maze run played 1 maze, each match-2 run played 1 match-2 board.")
    )


def test_table5_match2_metrics(tmp_path: Path) -> None:
    (row,) = ours("eeb:table5", tmp_path, compare_to="claude-3-7-sonnet")
    assert row["model"] == "claude-3-7-sonnet"
    assert {k: row[k] for k in MATCH2} == MATCH2
    assert row["API Eff."] == 100.0 and row["R/M.S"] == pytest.approx(42.8105, abs=1e-4)


def test_table6_plays_the_learned_truths_as_ordinary_runs(tmp_path: Path) -> None:
    inputs = {
        name: TruthRepository(game, [f"A rule learned for {name}."]).save(tmp_path / f"{name}.json")
        for name, game in (
            ("maze_truths", "maze"),
            ("maze_truths_no_tw", "maze"),
            ("match2_truths", "match2"),
            ("match2_truths_no_tw", "match2"),
        )
    }
    rows = ours("eeb:table6", tmp_path / "runs", inputs=inputs, compare_to="qwen2.5-32b-instruct")
    assert [r["label"] for r in rows] == ["base", "W/o.TW", "ours"]
    for row in rows:  # the scripted policy ignores truths: three equal rows
        assert row["model"] == "qwen2.5-32b-instruct"
        assert (row["maze_success"], row["maze_score"], row["maze_steps"]) == (100.0, 3225.0, 40.0)
        assert (row["match2_success"], row["match2_score"]) == (100.0, 246.0)


TRUTH_NAMES = ("maze_truths", "maze_truths_no_tw", "match2_truths", "match2_truths_no_tw")


def test_table6_learns_its_truths_first_and_reuses_them(tmp_path: Path) -> None:
    outcome = run_reproduction("eeb:table6", model="scripted", limit=1, runs_dir=tmp_path)
    out = outcome.out_dir
    assert out == tmp_path / "reproduce-eeb-table6-scripted-limit1"
    (table,) = outcome.result.tables
    # maze-l1-000 and match2-easy-000 played by scripted/eeb-reference (it ignores truths)
    for row in table.rows:
        assert row.ours == {
            "maze_success": 100.0,
            "maze_score": 3050.0,
            "maze_steps": 44.0,
            "match2_success": 100.0,
            "match2_score": 246.0,
            "match2_rms": 41.1765,
        }
    assert outcome.result.notes[0] == (
        "Truths learned here by Agent-ExpVer, seed 0 (maze_truths, maze_truths_no_tw, "
        "match2_truths, match2_truths_no_tw; the learning runs are in learning/): the smallest "
        "budget under --limit: 1 round, 1 training level, Delta on 1 held-out level (without "
        "--limit: 5 rounds, 3 training levels per round, Delta on 9 held-out levels)."
    )
    recorded = json.loads((out / "reproduction.json").read_text())["inputs"]
    assert recorded == {}, "what the user gave (the rebuild command): the learned files are not"
    for name in TRUTH_NAMES:
        game = name.split("_")[0]
        assert TruthRepository.load(out / f"{name}.json").game == game
        spec = json.loads((out / "learning" / name / "expver_config.json").read_text())
        config = spec["config"]
        assert (config["rounds"], config["levels_per_round"], config["eval_levels"]) == (1, 1, 1)
        assert config["truthweaver"] is not name.endswith("_no_tw")
        assert spec["agent_model"] == "scripted/eeb-expver"
        assert spec["eval_levels"] == ["maze-l1-000" if game == "maze" else "match2-easy-000"]
        rounds = (out / "learning" / name / "expver_rounds.jsonl").read_text().splitlines()
        # round 0 (no truths) and round 1: its experience replays to the same score (the
        # scripted player ignores truths), so verification (Eq. 4) rejects it
        assert [json.loads(line)["experiences_verified"] for line in rounds] == [0, 0]
        assert json.loads(rounds[1])["experiences_proposed"] == 1

    def stamps() -> dict[str, int]:
        files = [out / f"{n}.json" for n in TRUTH_NAMES]
        files += [out / "learning" / n / "expver_episodes.jsonl" for n in TRUTH_NAMES]
        return {str(f): f.stat().st_mtime_ns for f in files}

    before = stamps()
    again = run_reproduction("eeb:table6", model="scripted", limit=1, runs_dir=tmp_path)
    assert stamps() == before, "the truths are reused: no learning runs again"
    assert [r.ours for r in again.result.tables[0].rows] == [r.ours for r in table.rows]

    # An interrupted learning (its files there, the truths file not yet) restarts cleanly.
    (out / "maze_truths.json").unlink()
    run_reproduction("eeb:table6", model="scripted", limit=1, runs_dir=tmp_path)
    rounds = (out / "learning" / "maze_truths" / "expver_rounds.jsonl").read_text()
    assert [json.loads(line)["round"] for line in rounds.splitlines()] == [0, 1]
    after = stamps()
    assert [k for k in after if after[k] != before[k]] == [
        str(out / "maze_truths.json"),
        str(out / "learning" / "maze_truths" / "expver_episodes.jsonl"),
    ]


def test_table6_learns_only_the_truths_not_given(tmp_path: Path) -> None:
    given = {
        name: TruthRepository("maze", ["Keep away from monsters."]).save(tmp_path / f"{name}.json")
        for name in ("maze_truths", "maze_truths_no_tw")
    }
    outcome = run_reproduction(
        "eeb:table6", model="scripted", limit=1, runs_dir=tmp_path / "runs", inputs=given
    )
    learned = sorted(p.name for p in (outcome.out_dir / "learning").iterdir())
    assert learned == ["match2_truths", "match2_truths_no_tw"]
    assert not (outcome.out_dir / "maze_truths.json").exists()
    recorded = json.loads((outcome.out_dir / "reproduction.json").read_text())["inputs"]
    assert recorded == {name: str(path) for name, path in given.items()}
    assert (outcome.out_dir / "match2_truths.json").exists()
    assert outcome.result.notes[0].startswith(
        "Truths learned here by Agent-ExpVer, seed 0 (match2_truths, match2_truths_no_tw; "
    )


def test_table7_ablations(tmp_path: Path) -> None:
    rows = ours("eeb:table7", tmp_path, compare_to="GPT-4.1")
    got = {r["label"]: (r["success"], r["score"], r["steps"]) for r in rows}
    assert got["EEB (Maze)"] == (100.0, 3225.0, 40.0)
    assert got["Full-Vision (Maze)"] == (100.0, 4305.0, 15.0)
    assert got["EEB (Match-2)"][:2] == (100.0, 246.0)
    assert got["NoProps (Match-2)"][:2] == (100.0, 358.0)


@dataclass
class View:
    """A finished run as `compute` reads it, made by hand."""

    key: str
    metrics: dict[str, Any]
    path: Path = Path(".")
    summary: dict[str, Any] = field(default_factory=dict)

    def records(self) -> Iterator[EpisodeRecord]:
        return iter(())


def compute(key: str, runs: dict[str, View], model: str) -> ResultTable:
    """One reproduction's table computed on hand-made runs for the user's `model`."""
    (repro,) = [r for r in reproductions() if r.key == key]
    published = load_published(PUBLISHED / str(repro.published))
    (table,) = repro.compute(runs, published, ReproContext(model=model)).tables
    return table


@pytest.mark.parametrize(
    ("model", "printed"),
    [
        ("openai/gpt-4.1-2025-04-14", "gpt-4.1"),  # a dated snapshot: the printed gpt-4.1
        ("openai/gpt-4o", "Human Baseline"),  # not gpt-4: no printed name it extends
        ("openai/gpt-4.1-mini", "gpt-4.1"),  # the longest printed name it extends at a '-'
        ("openai/gpt-4", "gpt-4"),
        ("x/qwen2.5-32b-instruct", "qwen2.5-32b-instruct"),
        ("scripted", "Human Baseline"),  # none: the table's first model
    ],
)
def test_tables_4_5_set_ours_against_the_model_the_id_names(model: str, printed: str) -> None:
    by_group = {"match2-all": {"episodes": 2, "Suc.Rate": 0.5, "A.Score": 10.0, "flag": True}}
    table = compute("eeb:table5", {"base": View("base", {"by_group": by_group})}, model)
    assert table.published_model == printed
    (row,) = table.rows
    assert row.label == model
    assert (row.ours["episodes"], row.ours["Suc.Rate"], row.ours["A.Score"]) == (2.0, 50.0, 10.0)
    assert "flag" not in row.ours, "not a number: no cell"
    table5 = load_published(PUBLISHED / "table5.yaml")
    assert row.published == table5.values_of(printed, "")


def test_table7_names_its_models_as_printed() -> None:
    """Table 7 prints `GPT-4.1` and `Qwen2.5`: a full model id extends them at a '-'."""
    maze = {"maze-all": {"episodes": 1, "Suc.Rate": 1.0, "A.Score": 5.0, "A.Steps": 9.0}}
    match2 = {"match2-all": {"episodes": 1, "Suc.Rate": 0.0, "A.Score": 3.0, "R/M.S": 0.25}}
    runs = {
        key: View(key, {"by_group": maze if split == "maze" else match2})
        for key, _, split, _ in TABLE7_RUNS
    }
    for model, printed in (("x/qwen2.5-32b-instruct", "Qwen2.5"), ("openai/gpt-4.1", "GPT-4.1")):
        table = compute("eeb:table7", runs, model)
        assert table.published_model == printed
        assert [(r.label, r.ours["steps"]) for r in table.rows] == [
            ("EEB (Maze)", 9.0), ("Full-Vision (Maze)", 9.0),
            ("EEB (Match-2)", 25.0), ("NoProps (Match-2)", 25.0),
        ]  # fmt: skip


@pytest.mark.parametrize("key", ["eeb:table4", "eeb:table5", "eeb:table6", "eeb:table7"])
def test_compute_without_its_published_table_is_refused(key: str) -> None:
    (repro,) = [r for r in reproductions() if r.key == key]
    with pytest.raises(ValueError, match=r"^eeb's tables are computed against their published"):
        repro.compute({}, None, ReproContext(model="scripted"))


def test_table4_scores_fit_the_inferred_rule_not_b1() -> None:
    fit = {row.model: row for row in table4_fit(load_published(PUBLISHED / "table4.yaml"))}
    assert len(fit) == 20
    gpt = fit["gpt-4.1"]
    # 10 * (0.8363 * 81 - 4) + 2500 * 0.7489 - 50 * 34.03 - 1000 * 1.02 + 2000 * 0.7333
    assert gpt.b1 == pytest.approx(1254.753)
    assert gpt.table4 == pytest.approx(1254.753 + 1020 + 500 * 0.47)
    models = [row for name, row in fit.items() if name != "Human Baseline"]
    assert min(r.b1_residual for r in models) > 1300, "B.1 lands far below every printed score"
    assert max(abs(r.table4_residual) for r in models) < 205
    assert fit["Human Baseline"].table4_residual == pytest.approx(-563.904)
    assert fitted_kill_reward(load_published(PUBLISHED / "table4.yaml")) == pytest.approx(
        504.658, abs=1e-3
    )
