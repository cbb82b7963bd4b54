"""A reproduced table in the paper's layout: our number, the published one and the difference,
for the terminal and as an HTML page."""

from __future__ import annotations

import math
from pathlib import Path

from rich.markup import escape
from rich.table import Table as RichTable

from forkingpaths.core.benchmark import PlotArtifact
from forkingpaths.core.reproduce import PublishedColumn, ReproResult, ResultRow, ResultTable
from forkingpaths.report.html import render_page
from forkingpaths.report.tables import ARROWS, Table

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


def _heading(column: PublishedColumn) -> str:
    """A column as the paper labels it, with the direction arrow the run reports use."""
    arrow = ARROWS.get(column.direction)
    return f"{column.label} {arrow}" if arrow else column.label


def _cells(table: ResultTable, row: ResultRow, column: PublishedColumn) -> list[str]:
    """One column of a row: ours, the paper's and (where the column shows it) the difference,
    at the decimals the paper prints."""
    decimals = column_decimals(table, column)
    cells = [
        _number(row.ours.get(column.key), decimals),
        _number(row.published.get(column.key), decimals),
    ]
    if column.difference:
        cells.append(_number(row.difference(column.key), decimals, signed=True))
    return cells


def result_table(table: ResultTable) -> Table:
    """Rows as the paper's, each column as three: ours, the paper's, ours minus the paper's."""
    header = ["method"]
    groups: list[tuple[str, int]] = [("", 1)]
    for column in table.columns:
        header += ["ours", "paper", "Δ"] if column.difference else ["ours", "paper"]
        groups.append((_heading(column), 3 if column.difference else 2))
    rows = [
        [row.label, *(cell for column in table.columns for cell in _cells(table, row, column))]
        for row in table.rows
    ]
    return Table(title=table.title, header=header, rows=rows, note=table_note(table), groups=groups)


def table_note(table: ResultTable) -> str:
    """The published model and the table's notes, as one paragraph of sentences."""
    against = f"Published numbers: {table.published_model}." if table.published_model else ""
    return " ".join(as_sentence(part) for part in [against, *table.notes] if part)


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
    note = table_note(table)
    # Notes quote flags and extras (`pip install -e '.[hf]'`): never read them as markup.
    out = RichTable(
        title=escape(table.title), caption=escape(note) if note else None, title_justify="left"
    )
    out.add_column("method")
    for column in table.columns:
        under = "ours / paper (Δ)" if column.difference else "ours / paper"
        out.add_column(f"{escape(_heading(column))}\n{under}", justify="right")
    for row in table.rows:
        merged = [escape(row.label)]
        for column in table.columns:
            ours, paper, *delta = _cells(table, row, column)
            shown = f" ({delta[0]})" if delta and delta[0] != MISSING else ""
            merged.append(f"{ours} / {paper}{shown}")
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
