"""The paper's Figures 1(b), 4, 5 and 20 drawn from runs' records, and the numbers they plot."""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from forkingpaths.benchmarks.griddag.plots import clipped_line, draw_map, new_figure
from forkingpaths.benchmarks.griddag.world import Cell, World

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PROGRESS_BINS = 10
"""Figure 4(a): episode progress t/T in ten bins of 10%."""
HIGHLIGHT = "#d62728"
PLAIN = "#9ecae1"
RUN_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
MARKERS = ("o", "s", "^", "v", "P", "X", "*", "<", ">", "h")
LINESTYLES = ("-", "--", ":", "-.")
REFERENCE_COLOUR = "#7f7f7f"
"""Reference agents (no model) are grey wherever they are drawn beside a model's runs."""
REFERENCE_MARKERS = ("X", "P")
POINT_MARKERS = ("o", "s", "^", "v", "*", "<", ">", "h", "d", "p")
"""Figure 1(b)'s markers of a model's points: none of them a reference agent's."""


# ---- numbers ----


def exploration_steps(positions: Sequence[Cell]) -> list[bool]:
    """Per step t (p(t) -> p(t+1)): whether it enters a cell never stood on before, i.e. an
    unobserved cell of Eq. 2 (Figure 4's exploration steps)."""
    seen = {positions[0]} if positions else set()
    out = []
    for cell in positions[1:]:
        out.append(cell not in seen)
        seen.add(cell)
    return out


def exploration_fraction_by_progress(
    trajectories: Sequence[Sequence[Cell]], bins: int = PROGRESS_BINS
) -> list[float | None]:
    """Figure 4(a): the share of exploration steps among all steps whose episode progress
    (t + 1/2) / T falls in each bin, pooled over episodes (None for a bin no step falls in)."""
    explored = [0] * bins
    total = [0] * bins
    for positions in trajectories:
        flags = exploration_steps(positions)
        steps = len(flags)
        for t, flag in enumerate(flags):
            b = min(int((t + 0.5) / steps * bins), bins - 1)
            total[b] += 1
            explored[b] += flag
    return [round(e / n, 6) if n else None for e, n in zip(explored, total, strict=True)]


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """Slope and intercept of the least-squares line of ys on xs (None under two points or a
    flat x)."""
    if len(xs) < 2 or np.ptp(np.asarray(xs, dtype=float)) == 0:
        return None
    slope, intercept = np.polyfit(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), 1)
    return float(slope), float(intercept)


def r_squared(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """R² of the least-squares line of ys on xs (None under three points or a flat x or y)."""
    line = least_squares(xs, ys)
    if len(xs) < 3 or line is None:
        return None
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if np.ptp(y) == 0:
        return None
    slope, intercept = line
    ss_res = float(((y - (slope * x + intercept)) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return round(1 - ss_res / ss_tot, 6)


def mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 6) if present else None


PointKind = Literal["config", "pooled", "reference"]


@dataclass(frozen=True)
class ScatterPoint:
    """One point of Figure 1(b): a run (or a pool of runs) of one agent."""

    label: str
    success_rate: float | None
    """Fraction of successful episodes."""
    error: float | None
    """The mean per-episode exploitation error."""
    kind: PointKind = "config"
    """`config`: one configuration (prompt set) of the model, a point of the fit; `pooled`: the
    model over all its configurations; `reference`: an agent without a model. The paper fits one
    point per model, so a pool (an average of fitted points) or a reference agent (no model)
    would weigh in twice or stand for a model that is not there: both are drawn, not fitted."""

    @property
    def placed(self) -> bool:
        """Whether it has a place on the figure (log 0 aside): both numbers known."""
        return self.error is not None and self.success_rate is not None

    @property
    def in_fit(self) -> bool:
        return self.kind == "config" and self.placed and (self.error or 0.0) > 0


@dataclass(frozen=True)
class LogFit:
    """The least-squares line of success rate on log exploitation error, and its R²."""

    slope: float
    intercept: float
    r2: float
    points: tuple[ScatterPoint, ...]


def log_fit(points: Sequence[ScatterPoint]) -> LogFit | None:
    """The fit over the points that enter it (`ScatterPoint.in_fit`); None under three of them
    or where their error or success does not vary."""
    fit = tuple(p for p in points if p.in_fit)
    xs = [math.log(p.error or 0.0) for p in fit]
    ys = [p.success_rate or 0.0 for p in fit]
    r2 = r_squared(xs, ys)
    line = least_squares(xs, ys)
    if r2 is None or line is None:
        return None
    return LogFit(line[0], line[1], r2, fit)


# ---- figures ----


def success_vs_log_exploitation_figure(
    points: Sequence[ScatterPoint], fit: LogFit | None, published_r2: float | None
) -> Figure:
    """Figure 1(b): success rate against log exploitation error, one point per run, with the
    least-squares line over the model's configurations (`fit`), clipped to the success range
    and the fitted points' span. The pool and the reference agents are drawn in black and grey,
    marked "not in fit". log 0 has no place on the axis: a zero-error point is drawn hollow at
    the left edge."""
    fig = new_figure(figsize=(8.4, 4.6), layout="constrained")
    ax = fig.subplots()
    usable = [p for p in points if p.placed]
    logs = [math.log(p.error) for p in usable if p.error]
    floor = (min(logs) - 1.0) if logs else math.log(1e-3)
    configs = [p for p in usable if p.kind == "config"]
    palette = _palette(len(configs))
    references = 0
    for p in usable:
        x = math.log(p.error) if p.error else floor
        if p.kind == "config":
            i = configs.index(p)
            colour, marker, size, label = palette[i], POINT_MARKERS[i % 10], 40, p.label
        elif p.kind == "pooled":
            colour, marker, size, label = "black", "D", 110, f"{p.label} (pooled, not in fit)"
        else:
            colour, marker, size = REFERENCE_COLOUR, REFERENCE_MARKERS[references % 2], 70
            label = f"{p.label} (reference, not in fit)"
            references += 1
        ax.scatter(
            [x],
            [p.success_rate],
            s=size,
            marker=marker,
            # Hollow: error 0 (no log); the pool is hollow too, so the points it averages show.
            facecolors=colour if p.error and p.kind != "pooled" else "none",
            edgecolors=colour,
            linewidths=1.6 if p.kind == "pooled" else 1.2,
            zorder=3,
            label=label + ("" if p.error else " (error 0)"),
        )
    if fit is not None:
        span = [math.log(p.error or 0.0) for p in fit.points]
        ends = clipped_line(fit.slope, fit.intercept, (min(span), max(span)), (0.0, 1.0))
        if ends is not None:
            (x0, y0), (x1, y1) = ends
            ax.plot(
                [x0, x1],
                [y0, y1],
                linestyle="--",
                color="grey",
                label=f"fit over {len(span)} prompt sets",
            )
    if len(usable) > len(logs):
        ax.axvline(floor, color="#bbbbbb", linewidth=0.8, linestyle=":")
        ax.text(floor, 0.02, " error 0", fontsize=7, color="grey", rotation=90, va="bottom")
    missing = [p.label for p in points if not p.placed]
    if missing:
        # A run with no exploitation step to judge has no error to place (the table says so).
        ax.text(
            0.99,
            0.01,
            "not drawn (exploitation error undefined): " + ", ".join(missing),
            ha="right",
            transform=ax.transAxes,
            fontsize=7,
            color="grey",
        )
    n = len(fit.points) if fit else len([p for p in usable if p.in_fit])
    ours = "n/a (under 3 varying points)" if fit is None else f"{fit.r2:.3f}"
    paper = "" if published_r2 is None else f"; paper over 13 LMs: {published_r2:.3f}"
    ax.set_title(
        f"Success rate vs. exploitation error\nR² ours over {n} prompt sets of one model: "
        f"{ours}{paper} (not comparable)",
        fontsize=9,
    )
    ax.set_xlabel("log exploitation error")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.05, 1.1)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def _palette(n: int) -> list[Any]:
    """n colours for a model's points, grey left out: grey marks the reference agents."""
    from matplotlib import colormaps  # heavy: deferred to the first figure, as in plots.py

    cmap, greys = (colormaps["tab20"], {14, 15}) if n > 9 else (colormaps["tab10"], {7})
    colours = [cmap(i) for i in range(cmap.N) if i not in greys]
    return [colours[i % len(colours)] for i in range(n)]


def exploration_fraction_figure(
    curves: Mapping[str, Sequence[float | None]],
    example: tuple[World, Mapping[str, Sequence[Cell]], str] | None,
    references: Collection[str] = (),
) -> Figure:
    """Figure 4: (a) exploration fraction against episode progress, one curve per run, the
    reference agents' (`references`: labels) in grey; (b) the runs' paths on one map, cells
    first entered marked."""
    n_maps = len(example[1]) if example else 0
    fig = new_figure(figsize=(5.2 + 3.6 * n_maps, 4.2), layout="constrained")
    axes = fig.subplots(1, 1 + n_maps, width_ratios=[1.4] + [1] * n_maps, squeeze=False)[0]
    ax = axes[0]
    for i, (label, fractions) in enumerate(curves.items()):
        xs = [(b + 0.5) / len(fractions) for b, f in enumerate(fractions) if f is not None]
        ys = [f for f in fractions if f is not None]
        # Runs that behave alike draw the same curve: styles keep each one visible beneath.
        ax.plot(
            xs,
            ys,
            marker=MARKERS[i % len(MARKERS)],
            markersize=7 - 1.5 * (i % 3),
            linestyle=LINESTYLES[i % len(LINESTYLES)],
            linewidth=2.2 - 0.6 * (i % 3),
            label=label,
            color=REFERENCE_COLOUR if label in references else RUN_COLOURS[i % len(RUN_COLOURS)],
            alpha=0.85,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("episode progress (t / T)")
    ax.set_ylabel("fraction of exploration steps")
    ax.set_title("(a) Exploration fraction vs. progress", fontsize=9)
    ax.legend(fontsize=7)
    if example:
        world, paths, instance_id = example
        for ax_map, (label, positions) in zip(axes[1:], paths.items(), strict=True):
            flags = exploration_steps(positions)
            new_cells = [c for c, f in zip(positions[1:], flags, strict=True) if f]
            title = f"(b) {label}: {instance_id}, {len(flags)} steps"
            draw_map(
                ax_map,
                world,
                positions,
                new_cells,
                title,
                marked_label="first entered",
                marked_size=7,
            )
    return fig


def prompt_bars_figure(
    rows: Sequence[tuple[str, float | None, float | None, float | None]],
) -> Figure:
    """Figure 5: exploration error, exploitation error and success rate per prompt variant, the
    best bar of each panel highlighted (lowest error, highest success)."""
    fig = new_figure(figsize=(11, 3.8), layout="constrained")
    panels = fig.subplots(1, 3)
    names = [r[0] for r in rows]
    specs = (
        ("(a) Exploration error", 1, min),
        ("(b) Exploitation error", 2, min),
        ("(c) Success rate", 3, max),
    )
    for ax, (title, col, best) in zip(panels, specs, strict=True):
        values = [r[col] for r in rows]
        present = [v for v in values if v is not None]
        top = best(present) if present else None
        colours = [HIGHLIGHT if v is not None and v == top else PLAIN for v in values]
        heights = [v if v is not None else 0.0 for v in values]
        ax.bar(names, heights, color=colours, edgecolor="#555555")
        for i, v in enumerate(values):
            label = "n/a" if v is None else f"{v:.3f}"
            # The best value's label is highlighted too: a best bar of height 0 is invisible.
            colour = "black" if colours[i] == PLAIN else HIGHLIGHT
            ax.text(i, heights[i], label, ha="center", va="bottom", fontsize=8, color=colour)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(0, max([*present, 0.05]) * 1.2)
        ax.tick_params(axis="x", labelsize=8)
    return fig


def errors_by_level_figure(
    panels: Sequence[tuple[str, Sequence[tuple[str, float | None, float | None, int]]]],
) -> Figure:
    """Figure 20: mean exploration and exploitation error per level of a map knob, one panel per
    knob (rows: level, exploration error, exploitation error, episodes)."""
    fig = new_figure(figsize=(10, 4), layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, rows) in zip(axes, panels, strict=True):
        _grouped_bars(ax, rows)
        ax.set_title(title, fontsize=10)
    return fig


def _grouped_bars(ax: Axes, rows: Sequence[tuple[str, float | None, float | None, int]]) -> None:
    x = np.arange(len(rows))
    width = 0.38
    explore = [r[1] if r[1] is not None else 0.0 for r in rows]
    exploit = [r[2] if r[2] is not None else 0.0 for r in rows]
    ax.bar(x - width / 2, explore, width, label="exploration error", color="#1f77b4")
    ax.bar(x + width / 2, exploit, width, label="exploitation error", color="#ff7f0e")
    for i, r in enumerate(rows):
        for dx, value in ((-width / 2, r[1]), (width / 2, r[2])):
            label = "n/a" if value is None else f"{value:.3f}"
            ax.text(i + dx, value or 0.0, label, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [f"{r[0]}\n({r[3]} episodes)" for r in rows], fontsize=8)
    ax.set_ylabel("error")
    ax.set_ylim(0, max([*explore, *exploit, 0.05]) * 1.25)
    ax.legend(fontsize=7)
