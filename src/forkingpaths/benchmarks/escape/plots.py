"""escape figures: the per-path discovery table (Tables 18-19) as a scenario x path grid."""

from __future__ import annotations

from pathlib import Path

from forkingpaths.core.benchmark import PlotArtifact, ScoredEpisode

PATH_SLOTS = ("A", "B", "C1", "C2")


def path_table_plot(episodes: list[ScoredEpisode], out_dir: Path) -> PlotArtifact | None:
    """Filled cell = path discovered in the scenario (any run); rows in episode order."""
    # Deferred: matplotlib is heavy and only reports draw figures.
    from matplotlib.figure import Figure

    rows: dict[str, set[str]] = {}
    totals: dict[str, list[str]] = {}
    for episode in episodes:
        facts = episode.facts
        if episode.status != "ok" or not facts["paths_total"]:
            continue
        rows.setdefault(episode.instance_id, set()).update(facts["paths_found"])
        totals[episode.instance_id] = facts["paths_total"]
    if not rows:
        return None
    columns = [f"P{phase}_{slot}" for phase in (1, 2) for slot in PATH_SLOTS]
    fig = Figure(figsize=(7.5, 0.45 * len(rows) + 1.4))
    ax = fig.add_subplot()
    for y, scenario in enumerate(rows):
        for x, column in enumerate(columns):
            if column not in totals[scenario]:
                continue
            found = column in rows[scenario]
            ax.add_patch(_cell(x, y, "#2ca02c" if found else "#f2f2f2", "O" if found else "X", ax))
    ax.set_xlim(-0.5, len(columns) - 0.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xticks(range(len(columns)), columns, rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), list(rows))
    found_n = sum(len(v) for v in rows.values())
    total_n = sum(len(v) for v in totals.values())
    ax.set_title(f"Path discovery: {found_n} / {total_n}")
    fig.tight_layout()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "escape_paths.png"
    fig.savefig(path, dpi=110)
    return PlotArtifact(
        "Path discovery per scenario",
        path,
        "Tables 18-19: a green cell (O) is a gold path found in some attempt; grey (X) not.",
    )


def _cell(x: int, y: int, colour: str, label: str, ax: object):  # type: ignore[no-untyped-def]
    from matplotlib.patches import Rectangle  # deferred with Figure above: matplotlib is heavy

    ax.text(x, y, label, ha="center", va="center", fontsize=8)  # type: ignore[attr-defined]
    return Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, facecolor=colour, edgecolor="#999999")
