"""Reads the tables, links and figures of a report page (for the report tests)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


@dataclass
class Page:
    """A report page as the tests read it."""

    tables: dict[str, list[list[str]]] = field(default_factory=dict)
    """Each section's title -> its rows (the header first), cells as text."""
    links: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Each section's title -> its links (text, href)."""
    images: list[str] = field(default_factory=list)
    """The figures' src, in order."""
    text: str = ""
    """The page's text outside tables."""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.page = Page()
        self.section = ""
        self.in_h2 = False
        self.cell: list[str] | None = None
        self.href: str | None = None
        self.link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self.in_h2, self.section = True, ""
        elif tag == "tr":
            self.page.tables.setdefault(self.section, []).append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "a":
            self.href, self.link_text = dict(attrs).get("href") or "", []
        elif tag == "img":
            self.page.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self.in_h2 = False
        elif tag in ("td", "th") and self.cell is not None:
            self.page.tables[self.section][-1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "a" and self.href is not None:
            self.page.links.setdefault(self.section, []).append(
                ("".join(self.link_text), self.href)
            )
            self.href = None

    def handle_data(self, data: str) -> None:
        if self.in_h2:
            self.section += data.strip()
        elif self.cell is not None:
            self.cell.append(data)
        else:
            self.page.text += data
        if self.href is not None:
            self.link_text.append(data)


def read_page(path: Path) -> Page:
    reader = _Reader()
    reader.feed(path.read_text(encoding="utf-8"))
    return reader.page


def column(table: list[list[str]], name: str) -> list[str]:
    """A table's column by its header, without the header."""
    index = table[0].index(name)
    return [row[index] for row in table[1:]]
