"""A reproduced table in the paper's layout: our number, the published one and the difference,
for the terminal and as an HTML page."""

from __future__ import annotations

import math
from pathlib import Path

from rich.markup import escape
from rich.table import Table as RichTable

from forkingpaths.core.benchmark import PlotArtifact
from forkingpaths.core.reproduce import PublishedColumn, ReproResult, ResultTable
from forkingpaths.report.html import render_page
from forkingpaths.report.tables import Table

MISSING = "–"
"""A number the paper does not print, or a run that did not measure it."""


def column_decimals(table: ResultTable, column: PublishedColumn) -> int:
    """Decimals the paper prints in a column (read off its published numbers; at least one,
    at most four), so our numbers read at the same precision."""
    if column.decimals is not None:
        return column.decimals
    most = 1
    for row in table.rows:
        value = row.published.get(column.key)
        if value is None or not math.isfinite(value):
            continue
        text = repr(float(value))
        if "e" not in text and "." in text:
            most = max(most, len(text.split(".")[1].rstrip("0")))
    return min(most, 4)


def _number(value: float | None, decimals: int, *, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return MISSING
    if signed and value != 0 and round(value, decimals) == 0:
        # A difference too small for the paper's precision is shown, not printed as +0.
        decimals += 2
    text = f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"
    return text.replace("-", "−")


def result_table(table: ResultTable) -> Table:
    """Rows as the paper's, each column as three: ours, the paper's, ours minus the paper's."""
    header = ["method"]
    groups: list[tuple[str, int]] = [("", 1)]
    for column in table.columns:
        arrow = {"higher": " ↑", "lower": " ↓"}.get(column.direction, "")
        header += ["ours", "paper", "Δ"] if column.difference else ["ours", "paper"]
        groups.append((f"{column.label}{arrow}", 3 if column.difference else 2))
    rows: list[list[str]] = []
    for row in table.rows:
        cells = [row.label]
        for column in table.columns:
            decimals = column_decimals(table, column)
            cells += [
                _number(row.ours.get(column.key), decimals),
                _number(row.published.get(column.key), decimals),
            ]
            if column.difference:
                cells.append(_number(row.difference(column.key), decimals, signed=True))
        rows.append(cells)
    against = f"Published numbers: {table.published_model}." if table.published_model else ""
    note = " ".join(as_sentence(part) for part in [against, *table.notes] if part)
    return Table(title=table.title, header=header, rows=rows, note=note, groups=groups)


def as_sentence(note: str) -> str:
    """A note as a sentence, so that notes run on as prose: a capital (unless it opens with a
    name such as `scripted/x` or `explore_averaging`) and a full stop."""
    note = note.strip()
    first = note.split(" ", 1)[0]
    if note[:1].islower() and not any(c in first for c in "/_-.=:"):
        note = note[0].upper() + note[1:]
    return note if note.endswith((".", "!", "?", ":")) else f"{note}."


def rich_result_table(table: ResultTable) -> RichTable:
    """The terminal form: one column per metric, each cell `ours / paper (Δ)`."""
    plain = result_table(table)
    # Notes quote flags and extras (`pip install -e '.[hf]'`): never read them as markup.
    caption = escape(plain.note) if plain.note else None
    out = RichTable(title=escape(table.title), caption=caption, title_justify="left")
    out.add_column("method")
    for column in table.columns:
        arrow = {"higher": " ↑", "lower": " ↓"}.get(column.direction, "")
        under = "ours / paper (Δ)" if column.difference else "ours / paper"
        out.add_column(f"{escape(column.label)}{arrow}\n{under}", justify="right")
    for cells in plain.rows:
        merged = [escape(cells[0])]
        i = 1
        for column in table.columns:
            ours, paper = cells[i : i + 2]
            delta = cells[i + 2] if column.difference else MISSING
            i += 3 if column.difference else 2
            merged.append(f"{ours} / {paper}" + (f" ({delta})" if delta != MISSING else ""))
        out.add_row(*merged)
    return out


def write_reproduction_page(
    title: str, out_dir: Path, result: ReproResult, rebuild: str, extra: list[Table]
) -> Path:
    """`report.html` of a reproduction: its tables, figures and notes, the runs behind it."""
    sections = [result_table(t) for t in result.tables] + extra
    if result.notes:
        rows = [[as_sentence(n)] for n in result.notes]
        sections.append(Table(title="Notes", header=["note"], rows=rows))
    plots = [PlotArtifact(title=caption, path=path) for caption, path in result.figures]
    html = render_page(title, out_dir, sections, plots, rebuild=rebuild, recomputed=False)
    path = out_dir / "report.html"
    path.write_text(html, encoding="utf-8")
    return path
