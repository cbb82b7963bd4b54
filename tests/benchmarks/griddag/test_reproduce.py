"""explore-exploit reproductions end to end offline (scripted stand-ins); the figures' numbers."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from forkingpaths.benchmarks.griddag import figures, plots
from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark
from forkingpaths.benchmarks.griddag.reproduce import OFFLINE_NOTE, _example
from forkingpaths.core.errors import ConfigError
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
    with pytest.raises(ConfigError, match="has no model 'GPT-5'") as info:
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
    prompt_sets = [
        "default",
        "default-exploration",
        "default-exploitation",
        "default-balance",
        "reasoning",
        "reasoning-exploration",
        "reasoning-exploitation",
        "reasoning-balance",
    ]
    # Each row says whether its point is in the fit; the fit row names the points it uses.
    assert list(ours) == [
        *prompt_sets,
        "all prompt sets (pooled, not in fit)",
        "frontier (reference, not in fit)",
        "random (reference, not in fit)",
        "least-squares fit (8 prompt sets)",
    ]
    assert [ours[k]["success_rate"] for k in prompt_sets] == [
        83.3333, 66.6667, 66.6667, 100.0, 100.0, 100.0, 100.0, 83.3333,
    ]  # fmt: skip
    assert [ours[k]["exploitation_error"] for k in prompt_sets] == [
        0.213175, 0.191361, 0.107639, 0.097475, 0.170455, 0.081349, 0.083807, 0.107416,
    ]  # fmt: skip
    assert ours["all prompt sets (pooled, not in fit)"] == {
        "success_rate": 87.5,
        "exploitation_error": 0.133893,
    }
    assert ours["frontier (reference, not in fit)"] == {
        "success_rate": 100.0,
        "exploitation_error": 0.0,
    }
    assert ours["random (reference, not in fit)"] == {
        "success_rate": 0.0,
        "exploitation_error": 0.445106,
    }
    fit = table.rows[-1]
    # R² over the 8 prompt sets alone (the pool and the random reference would make it 0.659).
    assert (fit.ours, fit.published) == ({"r2": 0.185679}, {"r2": 0.006})
    xs = [math.log(ours[k]["exploitation_error"] or 0.0) for k in prompt_sets]
    assert figures.r_squared(xs, [ours[k]["success_rate"] or 0.0 for k in prompt_sets]) == 0.185679
    # Not comparable with the paper's R² over 13 models: no difference is printed.
    assert table.columns[2].key == "r2" and table.columns[2].difference is False
    assert "so our R² is not comparable with the paper's" in table.notes[1]
    assert out.result.notes[:3] == [
        OFFLINE_NOTE,
        "R² over 8 point(s), one per prompt set of the model: " + ", ".join(prompt_sets),
        "drawn but not fitted: all prompt sets (the prompt sets' episodes pooled, so it would "
        "count them twice) and the frontier and random references (agents without a model; "
        "the paper fits language models only)",
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
    assert (
        "(b) instance low-easy-s0: the first where every run of the model succeeded (the "
        "reference's path drawn beside them, not a criterion)"
    ) in out.result.notes
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


def test_figure1b_fits_the_model_configurations_only(tmp_path: Path) -> None:
    points = [
        figures.ScatterPoint("a", 1.0, 0.05),
        figures.ScatterPoint("b", 0.9, 0.1),
        figures.ScatterPoint("c", 0.1, 0.3),
        figures.ScatterPoint("d", 1.0, 0.0),
        figures.ScatterPoint("pool", 0.75, 0.15, kind="pooled"),
        figures.ScatterPoint("random", 0.0, 0.9, kind="reference"),
    ]
    fit = figures.log_fit(points)
    assert fit is not None
    # a, b, c only: d has no log, the pool and the reference are drawn, not fitted.
    assert [p.label for p in fit.points] == ["a", "b", "c"]
    assert fit.r2 == 0.91705
    assert (round(fit.slope, 6), round(fit.intercept, 6)) == (-0.522844, -0.466561)
    fig = figures.success_vs_log_exploitation_figure(points, fit, 0.006)
    ax = fig.axes[0]
    assert ax.get_title().endswith(
        "R² ours over 3 prompt sets of one model: 0.917; paper over 13 LMs: 0.006 (not comparable)"
    )
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "a",
        "b",
        "c",
        "d (error 0)",
        "pool (pooled, not in fit)",
        "random (reference, not in fit)",
        "fit over 3 prompt sets",
    ]
    # The line spans the fitted points' log errors (ln 0.05 .. ln 0.3) but would pass 100%
    # success at ln 0.05 (1.0997): it starts where it crosses 1, x = (1 - b) / m.
    (line,) = [ln for ln in ax.lines if ln.get_label() == "fit over 3 prompt sets"]
    assert list(line.get_xdata()) == pytest.approx([-2.804969, math.log(0.3)], abs=1e-6)
    assert list(line.get_ydata()) == pytest.approx([1.0, 0.162929], abs=1e-6)
    undefined = figures.ScatterPoint("frontier", 1.0, None, kind="reference")
    fig = figures.success_vs_log_exploitation_figure([*points, undefined], fit, 0.006)
    assert "not drawn (exploitation error undefined): frontier" in [
        t.get_text() for t in fig.axes[0].texts
    ]
    fig.savefig(tmp_path / "f.png")
    assert png_size(tmp_path / "f.png")[0] > 0


def test_log_fit_needs_three_varying_configurations() -> None:
    two = [figures.ScatterPoint("a", 0.9, 0.05), figures.ScatterPoint("b", 0.6, 0.1)]
    # Pool and references never make up the missing third point.
    extra = [
        figures.ScatterPoint("pool", 0.75, 0.07, kind="pooled"),
        figures.ScatterPoint("random", 0.0, 0.9, kind="reference"),
    ]
    assert figures.log_fit([*two, *extra]) is None
    flat = [figures.ScatterPoint(x, 1.0, e) for x, e in (("a", 0.1), ("b", 0.2), ("c", 0.3))]
    assert figures.log_fit(flat) is None
    fig = figures.success_vs_log_exploitation_figure([*two, *extra], None, None)
    assert len(fig.axes[0].lines) == 0
    assert "0.006" not in fig.axes[0].get_title()


def test_clipped_line_stays_in_the_box() -> None:
    # y = 2x over x in [0, 1], box y in [0, 1]: cut at x = 0.5.
    assert plots.clipped_line(2.0, 0.0, (0.0, 1.0), (0.0, 1.0)) == ((0.0, 0.0), (0.5, 1.0))
    # Falling line: y = 1.5 - x leaves through the top at x = 0.5.
    assert plots.clipped_line(-1.0, 1.5, (0.0, 1.0), (0.0, 1.0)) == ((0.5, 1.0), (1.0, 0.5))
    # Inside all along: unchanged.
    assert plots.clipped_line(0.5, 0.25, (0.0, 1.0), (0.0, 1.0)) == ((0.0, 0.25), (1.0, 0.75))
    # Flat inside, flat outside, sloped but missing the box.
    assert plots.clipped_line(0.0, 0.5, (-1.0, 1.0), (0.0, 1.0)) == ((-1.0, 0.5), (1.0, 0.5))
    assert plots.clipped_line(0.0, 1.5, (-1.0, 1.0), (0.0, 1.0)) is None
    assert plots.clipped_line(1.0, 5.0, (0.0, 1.0), (0.0, 1.0)) is None


def test_figure4_example_is_chosen_by_the_model_runs_only() -> None:
    bench = GridDagBenchmark()

    def record(success: bool) -> SimpleNamespace:
        return SimpleNamespace(
            metrics={"success": success}, initial_info={"position": [0, 0]}, steps=[]
        )

    ids = ("low-easy-s0", "low-easy-s1")
    by_run = {
        "default": {ids[0]: record(True), ids[1]: record(True)},
        # The reference failing the first instance does not move the example off it.
        "frontier (reference)": {ids[0]: record(False), ids[1]: record(True)},
    }
    example = _example(bench, by_run, {"default"})  # type: ignore[arg-type]
    assert example is not None and example[2] == ids[0]
    assert set(example[1]) == {"default", "frontier (reference)"}
    # Had the reference been a criterion, the example would be the second instance.
    both = _example(bench, by_run, {"default", "frontier (reference)"})  # type: ignore[arg-type]
    assert both is not None and both[2] == ids[1]


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
