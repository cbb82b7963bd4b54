"""Figure 3b of Agent-ExpVer: held-out A.Score and Suc.Rate per learning round."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from forkingpaths.benchmarks.eeb.expver.records import RoundRecord


def plot_learning_curve(rounds: Sequence[RoundRecord], path: str | Path, *, title: str) -> Path:
    """Figure 3b: held-out A.Score and Suc.Rate per learning round. The solid line is the policy
    evaluated that round, the dashed one the policy kept; reverted rounds are marked x."""
    # matplotlib is heavy, so it loads only when a curve is drawn; the object API keeps no pyplot
    # global state and needs no display.
    from matplotlib.figure import Figure

    xs = [r.round for r in rounds]
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (label, evaluated, kept) in zip(
        axes,
        (
            ("A.Score", [r.eval_score for r in rounds], [r.kept_score for r in rounds]),
            (
                "Suc.Rate (%)",
                [100 * r.eval_success for r in rounds],
                [100 * r.kept_success for r in rounds],
            ),
        ),
        strict=True,
    ):
        ax.plot(xs, evaluated, marker="o", color="#1f77b4", label="evaluated policy")
        ax.plot(xs, kept, linestyle="--", color="#2ca02c", label="kept policy")
        bad = [(x, y) for x, y, r in zip(xs, evaluated, rounds, strict=True) if r.reverted]
        if bad:
            bx, by = zip(*bad, strict=True)
            ax.scatter(bx, by, marker="x", color="#d62728", s=60, zorder=3, label="reverted")
        ax.set_xlabel("learning round")
        ax.set_ylabel(label)
        ax.set_xticks(xs)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
