"""griddag figures: per-episode trajectory (map, path, error flags; App. F) and Figure 1 scatter."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from forkingpaths.benchmarks.griddag.metric import TrajectoryScore, score_trajectory
from forkingpaths.benchmarks.griddag.world import World
from forkingpaths.core.benchmark import PlotArtifact, RecordReader, ScoredEpisode

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    # Annotation only: the benchmark imports this module to draw its report figures.
    from forkingpaths.benchmarks.griddag.benchmark import GridDagBenchmark

MAX_TRAJECTORY_FIGURES = 9
CASE_COLOURS = {1: "#1f77b4", 2: "#d62728", 3: "#ff7f0e", 4: "#9467bd"}
CASE_LABELS = {
    1: "case 1 (explore)",
    2: "case 2 (goal pending)",
    3: "case 3 (exploit)",
    4: "case 4 (either)",
}


def new_figure(**kwargs: Any) -> Figure:
    # The object-oriented API keeps figures off pyplot's global state (and needs no display).
    # matplotlib is heavy to import: deferred to the first figure, so scoring and running
    # episodes never load it.
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def trajectory_figure(
    world: World, positions: Sequence[tuple[int, int]], score: TrajectoryScore, title: str
) -> Figure:
    """Map with obstacles, nodes, start and the path (errors marked), plus err(t) over time."""
    fig = new_figure(figsize=(10, 4.6), layout="constrained")
    ax_map, ax_err = fig.subplots(1, 2, width_ratios=[1, 1.4])
    err_cells = [s.position for s in score.steps if s.err]
    draw_map(ax_map, world, positions, err_cells, title)

    ts = [s.t for s in score.steps]
    for case, colour in CASE_COLOURS.items():
        pts = [(s.t, s.err) for s in score.steps if s.case == case]
        if pts:
            ax_err.scatter(*zip(*pts, strict=True), s=8, color=colour, label=CASE_LABELS[case])
    cumulative, total = [], 0
    for s in score.steps:
        total += s.err
        cumulative.append(total)
    ax_twin = ax_err.twinx()
    ax_twin.plot(ts, cumulative, color="black", linewidth=1, label="cumulative errors")
    ax_twin.set_ylabel("cumulative errors", fontsize=8)
    ax_err.set_yticks([0, 1])
    ax_err.set_ylim(-0.2, 1.2)
    ax_err.set_xlabel("timestep t")
    ax_err.set_ylabel("err(t)")
    explore = _fmt(score.exploration_error)
    exploit = _fmt(score.exploitation_error)
    ax_err.set_title(
        f"success={score.success}  exploration error={explore}  exploitation error={exploit}",
        fontsize=9,
    )
    ax_err.legend(loc="center right", fontsize=7)
    return fig


def draw_map(
    ax: Axes,
    world: World,
    positions: Sequence[tuple[int, int]],
    marked: Sequence[tuple[int, int]],
    title: str,
    *,
    marked_label: str = "error",
    marked_size: float = 14,
) -> None:
    """The map (cells, obstacles, nodes, start) with a path and marked cells on it."""
    xs = [c[0] for c in world.cells]
    ys = [c[1] for c in world.cells]
    x0, x1, y0, y1 = min(xs) - 1, max(xs) + 1, min(ys) - 1, max(ys) + 1
    ax.set_facecolor("#444444")
    for x, y in world.cells:
        ax.add_patch(_rect(x, y, "#f5f5f0"))
    for node in world.nodes.values():
        colour = "#2ca02c" if node.name == world.goal else "#8fbcd4"
        ax.add_patch(_rect(node.pos[0], node.pos[1], colour))
        ax.text(node.pos[0], node.pos[1], node.name, ha="center", va="center", fontsize=6)
    ax.plot(*zip(*lane_positions(positions), strict=True), color="#6a3d9a", lw=1.2, alpha=0.8)
    sx, sy = world.start
    ax.plot([sx], [sy], marker="s", color="black", markersize=6, label="start")
    if marked:
        ax.scatter(
            *zip(*marked, strict=True), color="red", s=marked_size, zorder=3, label=marked_label
        )
    ax.set_xlim(x0 + 0.5, x1 - 0.5)
    ax.set_ylim(y0 + 0.5, y1 - 0.5)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    # Below the map: inside, the legend would hide the cells of a small map.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=7, frameon=False)
    ax.set_title(title, fontsize=9)


LANE_SHIFT = 0.11
"""How far (in cells) each revisit of a cell is drawn from the previous one, diagonally."""
MAX_LANES = 3


def lane_positions(positions: Sequence[tuple[int, int]]) -> list[tuple[float, float]]:
    """The path's points as drawn: the k-th revisit of a cell shifted k lanes diagonally (at
    most MAX_LANES), so that going back and forth shows as parallel lines instead of drawing
    over itself and looking like the shortest path."""
    visits: dict[tuple[int, int], int] = {}
    out = []
    for cell in positions:
        k = visits.get(cell, 0)
        visits[cell] = k + 1
        shift = LANE_SHIFT * min(k, MAX_LANES)
        out.append((cell[0] + shift, cell[1] + shift))
    return out


def _rect(x: int, y: int, colour: str) -> Any:
    from matplotlib.patches import Rectangle  # heavy: deferred like `new_figure`'s import

    return Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=colour, edgecolor="#cccccc", lw=0.3)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def clipped_line(
    slope: float, intercept: float, xs: tuple[float, float], ys: tuple[float, float]
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The ends of the part of y = slope * x + intercept inside the box xs x ys (None where the
    line misses the box): a fitted line stays over the points it fits and inside the range a
    success rate can take, instead of running off the axes."""
    lo, hi = xs
    if slope != 0:
        # x where the line crosses the box's bottom and top, in increasing order.
        a, b = sorted(((ys[0] - intercept) / slope, (ys[1] - intercept) / slope))
        lo, hi = max(lo, a), min(hi, b)
    elif not ys[0] <= intercept <= ys[1]:
        return None
    if lo > hi:
        return None
    return (lo, slope * lo + intercept), (hi, slope * hi + intercept)


def success_vs_log_error_figure(
    points: Sequence[tuple[str, float, float | None]], title: str
) -> Figure:
    """Figure 1(a): success rate against log exploration error, one point per label, with the
    least-squares line and R^2 when there are at least three points."""
    fig = new_figure(figsize=(5.5, 4.2), layout="constrained")
    ax = fig.subplots()
    usable = [(lbl, s, math.log(e)) for lbl, s, e in points if e is not None and e > 0]
    for label, success, log_err in usable:
        ax.scatter([log_err], [success], s=24)
        ax.annotate(
            label, (log_err, success), fontsize=7, xytext=(3, 3), textcoords="offset points"
        )
    if len(usable) >= 3:
        x = np.array([u[2] for u in usable])
        y = np.array([u[1] for u in usable])
        if np.ptp(x) > 0:
            slope, intercept = np.polyfit(x, y, 1)
            pred = slope * x + intercept
            ss_res = float(((y - pred) ** 2).sum())
            ss_tot = float(((y - y.mean()) ** 2).sum())
            r2 = 1 - ss_res / ss_tot if ss_tot > 0 else float("nan")
            ends = clipped_line(slope, intercept, (float(x.min()), float(x.max())), (0.0, 1.0))
            if ends is not None:
                (x0, y0), (x1, y1) = ends
                ax.plot([x0, x1], [y0, y1], linestyle="--", color="grey")
            title += f"  (R² = {r2:.3f})"
    skipped = len(points) - len(usable)
    if skipped:
        ax.text(
            0.01,
            0.01,
            f"{skipped} point(s) with zero error not shown on log axis",
            transform=ax.transAxes,
            fontsize=7,
            color="grey",
        )
    ax.set_xlabel("log exploration error")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=9)
    return fig


def has_log_error(points: Sequence[tuple[str, Any, Any]]) -> bool:
    """Whether a success-vs-log-error figure would show anything: log(0) has no point, so runs
    that made no exploration error (a reference agent's) leave it empty."""
    return any(error is not None and error > 0 for _, _, error in points)


def write_report_plots(
    bench: GridDagBenchmark,
    episodes: Sequence[ScoredEpisode],
    out_dir: Path,
    records: RecordReader,
) -> list[PlotArtifact]:
    """Figure 1(a) over the run's configurations, and the trajectories of its first episodes
    (only their records are read back)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    artifacts: list[PlotArtifact] = []
    summary = bench.aggregate(list(episodes))
    points = [
        (group, g["success_rate"], g["exploration_error"])
        for group, g in summary["by_group"].items()
    ]
    if has_log_error(points):
        fig = success_vs_log_error_figure(
            points, "Success vs log exploration error, per configuration"
        )
        path = out_dir / "success_vs_log_exploration_error.png"
        fig.savefig(path, dpi=110)
        artifacts.append(
            PlotArtifact(
                "Success vs log exploration error", path, "one point per configuration (Fig. 1a)"
            )
        )
    for record in records(episodes[:MAX_TRAJECTORY_FIGURES]):
        world = bench.world(bench.instance(record.instance_id))
        positions = bench.trajectory(record)
        score = score_trajectory(world, positions)
        fig = trajectory_figure(
            world, positions, score, f"{record.instance_id} (trial {record.trial})"
        )
        path = out_dir / f"trajectory_{record.instance_id}_t{record.trial}.png"
        fig.savefig(path, dpi=100)
        artifacts.append(
            PlotArtifact(f"Trajectory {record.instance_id}", path, "path and err(t) by case")
        )
    return artifacts


def write_compare_plots(summaries: Sequence[dict[str, Any]], out_dir: Path) -> list[PlotArtifact]:
    out_dir.mkdir(parents=True, exist_ok=True)
    points = []
    for s in summaries:
        options = ",".join(f"{k}={v}" for k, v in (s.get("agent_options") or {}).items())
        label = f"{s['agent']}{'(' + options + ')' if options else ''} {s['model'] or ''}".strip()
        m = s["metrics"]
        points.append((label, m.get("success_rate"), m.get("exploration_error")))
    if not has_log_error(points):
        return []
    fig = success_vs_log_error_figure(points, "Success vs log exploration error, per run")
    path = out_dir / "griddag_success_vs_log_exploration_error.png"
    fig.savefig(path, dpi=110)
    return [
        PlotArtifact(
            "griddag: success vs log exploration error", path, "one point per run (Fig. 1a)"
        )
    ]
