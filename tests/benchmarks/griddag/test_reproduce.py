"""explore-exploit reproductions end to end offline (scripted stand-ins); the figures' numbers."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest

from forkingpaths.benchmarks.griddag import figures, plots
from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.benchmarks.griddag.reproduce import OFFLINE_NOTE
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.reproduce import ReproContext, ResultTable, load_published
from forkingpaths.runner.reproduce import (
    ReproOutcome,
    find_reproduction,
    plan_specs,
    run_reproduction,
)

PUBLISHED = Path(GridDagBenchmark().published_dir())
KEYS = ("table2", "table3", "figure1b", "figure4", "figure5", "figure20")


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One directory for the module: reproductions that share a run (the base prompt's) reuse it.
    return tmp_path_factory.mktemp("runs")


def reproduce(key: str, runs_dir: Path, limit: int = 6, **kwargs: object) -> ReproOutcome:
    """Offline, on the first `limit` instances: six are the low-exploration maps of the easy and
    medium DAGs, where the noisy stand-in fails some episodes."""
    return run_reproduction(
        f"explore-exploit:{key}", model="scripted", limit=limit, runs_dir=runs_dir, **kwargs
    )


def rows(table: ResultTable) -> dict[str, dict[str, float | None]]:
    return {r.label: r.ours for r in table.rows}


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_every_item_is_listed_with_its_published_file() -> None:
    listed = GridDagBenchmark().reproductions()
    assert [r.key for r in listed] == [f"explore-exploit:{k}" for k in KEYS]
    assert [r.kind for r in listed] == ["table", "table"] + ["figure"] * 4
    for repro in listed:
        if repro.published:
            assert load_published(PUBLISHED / repro.published).paper == "explore-exploit"


def test_protocols_follow_appendix_c2() -> None:
    ctx = ReproContext(model="openai/gpt-4.1")
    table2 = plan_specs(find_reproduction("explore-exploit:table2"), ctx)
    assert {k: s.agent_options for k, s in table2.items()} == {
        "react-default-base": {"prompt": "base", "mode": "default", "harness": False},
        "react-default-base-harness": {"prompt": "base", "mode": "default", "harness": True},
    }
    assert {s.split for s in table2.values()} == {"main"}
    assert {s.model_options.params.temperature for s in table2.values()} == {0.0}
    table3 = plan_specs(find_reproduction("explore-exploit:table3"), ctx)
    symbolic = table3["react-default-base-symbolic"].instances or []
    assert len(symbolic) == 20 and all("-symbolic-" in i for i in symbolic)
    assert len(table3["react-default-base-semantic"].instances or []) == 20
    figure1b = plan_specs(find_reproduction("explore-exploit:figure1b"), ctx)
    assert len(figure1b) == 10  # 8 prompt sets (App. C.2) + frontier + random
    assert figure1b["random"].model is None and figure1b["frontier"].model is None


def test_offline_runs_play_the_noisy_frontier_stand_in() -> None:
    offline = plan_specs(find_reproduction("explore-exploit:figure4"), ReproContext("scripted"))
    assert offline["react-default-base"].model == "scripted/griddag-noisy"
    assert offline["frontier"].model is None
    assert OFFLINE_NOTE == (
        "offline stand-in: a frontier agent with 30% random moves (scripted/griddag-noisy), "
        "not a language model"
    )


def test_table2_offline(runs_dir: Path) -> None:
    out = reproduce("table2", runs_dir)
    (table,) = out.result.tables
    assert rows(table) == {
        "Baseline": {
            "success_rate": 83.3333,
            "exploration_error": 0.135726,
            "exploitation_error": 0.213175,
            "steps_success": 21.4,
        },
        "+ Harness Engineering": {
            "success_rate": 66.6667,
            "exploration_error": 0.053554,
            "exploitation_error": 0.101143,
            "steps_success": 16.5,
        },
    }
    assert out.result.notes[0] == OFFLINE_NOTE
    assert table.published_model == "Gemini 3.1 Flash Lite"
    assert table.rows[0].published == {
        "success_rate": 51.9,
        "exploration_error": 0.172,
        "exploitation_error": 0.135,
        "steps_success": 94.3,
    }
    gpt = reproduce("table2", runs_dir, compare_to="GPT-4.1").result.tables[0]
    assert [r.published["success_rate"] for r in gpt.rows] == [63.0, 92.6]
    assert gpt.rows[1].difference("steps_success") == pytest.approx(16.5 - 66.1)


def test_unknown_compare_to_is_refused_in_one_line(runs_dir: Path) -> None:
    with pytest.raises(InvalidFile, match="has no model 'GPT-5'") as info:
        reproduce("table2", runs_dir, compare_to="GPT-5")
    assert "\n" not in str(info.value)


def test_table3_offline(runs_dir: Path) -> None:
    (table,) = reproduce("table3", runs_dir).result.tables
    assert rows(table) == {
        "Semantic ✗": {
            "success_rate": 100.0,
            "exploration_error": 0.111534,
            "exploitation_error": 0.213518,
            "steps_success": 96.0,
        },
        "Semantic ✓": {
            "success_rate": 100.0,
            "exploration_error": 0.048008,
            "exploitation_error": 0.15,
            "steps_success": 84.666667,
        },
    }
    assert [r.published["exploitation_error"] for r in table.rows] == [0.091, 0.015]


def test_figure1b_offline(runs_dir: Path) -> None:
    out = reproduce("figure1b", runs_dir)
    ((_, path),) = out.result.figures
    assert path == out.out_dir / "figure1b.png" and png_size(path) == (924, 506)
    (table,) = out.result.tables
    ours = rows(table)
    assert [ours[k]["success_rate"] for k in ours if k != "least-squares fit"] == [
        83.3333, 66.6667, 66.6667, 100.0, 100.0, 100.0, 100.0, 83.3333, 87.5, 100.0, 0.0,
    ]  # fmt: skip
    assert ours["default"] == {"success_rate": 83.3333, "exploitation_error": 0.213175}
    assert ours["all prompt sets"] == {"success_rate": 87.5, "exploitation_error": 0.133893}
    assert ours["frontier (reference)"] == {"success_rate": 100.0, "exploitation_error": 0.0}
    assert ours["random (reference)"] == {"success_rate": 0.0, "exploitation_error": 0.445106}
    fit = table.rows[-1]
    assert (fit.label, fit.ours, fit.published) == (
        "least-squares fit",
        {"r2": 0.659083},
        {"r2": 0.006},
    )
    # Every point but the frontier's (error 0) is in the fit: 8 prompt sets, the pool, random.
    assert out.result.notes[:2] == [
        OFFLINE_NOTE,
        "R² over the 10 point(s) of positive exploitation error; a point of error 0 is drawn "
        "hollow at the left edge and left out of the fit",
    ]


def test_figure4_offline(runs_dir: Path) -> None:
    out = reproduce("figure4", runs_dir)
    summary, bins = out.result.tables
    assert rows(summary) == {
        "default": {"success_rate": 83.333333, "early": 0.589091, "late": 0.123931},
        "reasoning": {"success_rate": 100.0, "early": 0.63359, "late": 0.174276},
        "frontier (reference)": {"success_rate": 100.0, "early": 0.858333, "late": 0.202222},
    }
    # Every run explores less as the episode goes on; the frontier most early on.
    assert list(rows(bins)["default"].values()) == [
        0.909091, 0.7, 0.636364, 0.1, 0.6, 0.230769, 0.111111, 0.083333, 0.111111, 0.083333,
    ]  # fmt: skip
    assert "(b) instance low-easy-s0: the first where every run succeeded" in out.result.notes
    assert png_size(out.result.figures[0][1]) == (1760, 462)


def test_figure5_offline(runs_dir: Path) -> None:
    out = reproduce("figure5", runs_dir)
    (table,) = out.result.tables
    assert rows(table) == {
        "base": {
            "exploration_error": 0.135726,
            "exploitation_error": 0.213175,
            "success_rate": 83.3333,
        },
        "exploration": {
            "exploration_error": 0.079569,
            "exploitation_error": 0.191361,
            "success_rate": 66.6667,
        },
        "exploitation": {
            "exploration_error": 0.068681,
            "exploitation_error": 0.107639,
            "success_rate": 66.6667,
        },
        "balance": {
            "exploration_error": 0.066667,
            "exploitation_error": 0.097475,
            "success_rate": 100.0,
        },
    }
    assert out.result.notes[1:4] == [
        "exploration_error: the paper highlights exploration; ours best: balance",
        "exploitation_error: the paper highlights exploitation; ours best: balance",
        "success_rate: the paper highlights exploration; ours best: balance",
    ]
    assert png_size(out.result.figures[0][1]) == (1210, 418)


def test_figure20_offline(runs_dir: Path) -> None:
    # Nine instances: the low-exploration maps of all three DAG sizes.
    out = reproduce("figure20", runs_dir, limit=9)
    demand, size = out.result.tables
    assert rows(demand)["low"] == {
        "exploration_error": 0.111104,
        "exploitation_error": 0.184168,
        "episodes": 9.0,
    }
    assert rows(demand)["high"] == {
        "exploration_error": None,
        "exploitation_error": None,
        "episodes": 0.0,
    }
    assert rows(size) == {
        "small (4 nodes)": {
            "exploration_error": 0.167749,
            "exploitation_error": 0.257576,
            "episodes": 3.0,
        },
        "medium (6 nodes)": {
            "exploration_error": 0.103704,
            "exploitation_error": 0.183575,
            "episodes": 3.0,
        },
        "large (8 nodes)": {
            "exploration_error": 0.061858,
            "exploitation_error": 0.135823,
            "episodes": 3.0,
        },
    }
    assert "exploration error with DAG size: ours falls" in out.result.notes
    assert "exploration error with exploration demand: ours too few levels measured" in (
        out.result.notes
    )
    assert png_size(out.result.figures[0][1]) == (1100, 440)


# ---- the numbers the figures plot ----


def test_exploration_steps_mark_cells_entered_for_the_first_time() -> None:
    path = [(0, 0), (1, 0), (0, 0), (0, 1), (0, 0)]
    assert figures.exploration_steps(path) == [True, False, True, False]
    # Progress of step t is (t + 1/2) / T: with T = 4 and two bins, steps 0-1 | 2-3.
    assert figures.exploration_fraction_by_progress([path], bins=2) == [0.5, 0.5]
    assert figures.exploration_fraction_by_progress([path[:2], path], bins=4) == [
        1.0,
        0.0,
        1.0,
        0.0,
    ]
    assert figures.exploration_fraction_by_progress([], bins=2) == [None, None]


def test_r_squared_exact_and_degenerate() -> None:
    assert figures.r_squared([0.0, 1.0, 2.0], [1.0, 3.0, 5.0]) == 1.0
    # y = 0, 1, 0 on x = 0, 1, 2: the fitted line is flat, so it explains nothing.
    assert figures.r_squared([0.0, 1.0, 2.0], [0.0, 1.0, 0.0]) == 0.0
    assert figures.r_squared([0.0, 1.0], [0.0, 1.0]) is None
    assert figures.r_squared([1.0, 1.0, 1.0], [0.0, 1.0, 0.0]) is None


def test_figure1b_draws_the_fit_over_positive_errors(tmp_path: Path) -> None:
    points = [
        figures.ScatterPoint("a", 0.9, 0.05),
        figures.ScatterPoint("b", 0.6, 0.1),
        figures.ScatterPoint("c", 0.2, 0.3),
        figures.ScatterPoint("d", 1.0, 0.0),
    ]
    fit = [p for p in points if p.error]
    r2 = figures.r_squared([math.log(p.error) for p in fit], [p.success_rate for p in fit])
    assert r2 == 0.997734
    fig = figures.success_vs_log_exploitation_figure(points, r2, 0.006)
    ax = fig.axes[0]
    assert "R² ours: 0.998; paper: 0.006" in ax.get_title()
    assert [t.get_text() for t in ax.get_legend().get_texts()][-2:] == ["d (error 0)", "fit"]
    undefined = figures.ScatterPoint("random (reference)", 0.0, None)
    fig = figures.success_vs_log_exploitation_figure([*points, undefined], r2, 0.006)
    assert "not drawn (exploitation error undefined): random (reference)" in [
        t.get_text() for t in fig.axes[0].texts
    ]
    fig.savefig(tmp_path / "f.png")
    assert png_size(tmp_path / "f.png")[0] > 0


def test_figure5_best_label_is_highlighted_even_at_height_zero() -> None:
    fig = figures.prompt_bars_figure([("base", 0.1, 0.2, 0.8), ("exploration", 0.05, 0.0, 1.0)])
    exploitation = fig.axes[1]
    assert [(t.get_text(), t.get_color()) for t in exploitation.texts] == [
        ("0.200", "black"),
        ("0.000", figures.HIGHLIGHT),
    ]


def test_map_paths_draw_each_revisit_of_a_cell_one_lane_over() -> None:
    path = [(0, 0), (1, 0), (0, 0), (1, 0), (0, 0), (0, 0), (0, 0), (0, 0)]
    lanes = plots.lane_positions(path)
    assert lanes[:3] == [(0.0, 0.0), (1.0, 0.0), (0.11, 0.11)]
    # At most MAX_LANES lanes: the fourth and later revisits share the last one.
    assert lanes[-3:] == [(0.33, 0.33)] * 3
