"""Table 2's Human Baseline (§4.5) from a file, and its Reduce column: a score minus the human
score of the same category, in percentage points.

The file (YAML or JSON) gives the human players' Overall score (0-100, the same Automated
Evaluation Protocol as the agents', §4.5) in one of two ways:

    # aggregate: category -> Overall (%), as Table 2's "Human Baseline" row prints them
    categories:
      crime_thriller: 69.88        # a category id or name: "Crime Thriller", "Orig. Data"...
      mind_game: 73.05

    # or per puzzle: puzzle id (or entry id) -> Overall (%), one number or one per player
    puzzles:
      crime_thriller-01-zh: 72.5
      crime_thriller-02-zh: [70.0, 81.0]   # players averaged first

A puzzle's category is the part of its id before `-NN` (`crime_thriller-01-zh`). Per puzzle,
a category's score is the mean over its puzzles of the players' mean. Humans played the 400
Chinese stories only (§4.5), so Table 2 sets both languages' rows against the same number.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES, category_id
from forkingpaths.core.errors import InvalidFile, shown

HUMAN_BASELINE_KEYS = ("categories", "puzzles")

_PUZZLE_ID = re.compile(r"^(?P<category>.+?)-\d+(?:-(?:en|zh))?$")


@dataclass(frozen=True)
class HumanBaseline:
    """Human Overall scores by category (percent), read from a file."""

    categories: dict[str, float]
    """Category id -> the human Overall score (%), in CATEGORIES order."""
    source: str
    """The file read."""
    puzzles: dict[str, int] = field(default_factory=dict)
    """Category id -> puzzles averaged (per-puzzle files; empty for aggregate ones)."""

    def reduce(self, category: str, score: float | None) -> float | None:
        """Table 2's Reduce: `score` minus the human score of `category` (None if either is
        missing)."""
        human = self.categories.get(category)
        if score is None or human is None:
            return None
        return score - human


def _score(value: Any, where: str) -> float:
    """One Overall score in percent, or an InvalidFile naming where it is and what is allowed."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        raise InvalidFile(f"{where}: got {shown(value)}; allowed: a number from 0 to 100 (%)")
    return float(value)


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidFile(f"{path}: cannot read the human baseline: {exc}") from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0]
        raise InvalidFile(f"{path}: not a human baseline file ({first})") from None


def load_human_baseline(path: Path) -> HumanBaseline:
    """The human baseline of a file in the module's format; any defect is one InvalidFile line
    naming the file, the key and the value."""
    path = Path(path)
    data = _read(path)
    keys = sorted(data) if isinstance(data, dict) else []
    if not isinstance(data, dict) or len(keys) != 1 or keys[0] not in HUMAN_BASELINE_KEYS:
        raise InvalidFile(
            f"{path}: expected a mapping with exactly one of categories (category -> Overall %) "
            f"or puzzles (puzzle id -> Overall % or a list, one per player); got {shown(data)}"
        )
    (kind,) = keys
    entries = data[kind]
    if not isinstance(entries, dict) or not entries:
        raise InvalidFile(f"{path}: {kind}: expected a non-empty mapping; got {shown(entries)}")
    allowed = ", ".join(CATEGORIES)
    if kind == "categories":
        scores: dict[str, float] = {}
        for name, value in entries.items():
            category = category_id(str(name))
            if category is None:
                message = f"unknown category; expected one of {allowed}"
                raise InvalidFile(f"{path}: categories.{name}: {message}")
            if category in scores:
                raise InvalidFile(f"{path}: categories.{name}: category {category} given twice")
            scores[category] = _score(value, f"{path}: categories.{name}")
        return HumanBaseline(
            categories={c: scores[c] for c in CATEGORIES if c in scores}, source=str(path)
        )
    by_category: dict[str, list[float]] = defaultdict(list)
    for puzzle_id, value in entries.items():
        where = f"{path}: puzzles.{puzzle_id}"
        match = _PUZZLE_ID.match(str(puzzle_id))
        category = category_id(match["category"]) if match else None
        if category is None:
            raise InvalidFile(
                f"{where}: not a puzzle id of a category (<category>-NN[-zh|-en], category one "
                f"of {allowed})"
            )
        players = value if isinstance(value, list) else [value]
        if not players:
            raise InvalidFile(f"{where}: an empty list; expected at least one player's score")
        scored = [_score(v, where) for v in players]
        by_category[category].append(statistics.fmean(scored))
    return HumanBaseline(
        categories={c: statistics.fmean(by_category[c]) for c in CATEGORIES if by_category[c]},
        source=str(path),
        puzzles={c: len(by_category[c]) for c in CATEGORIES if by_category[c]},
    )


def category_scores(by_group: Mapping[str, Any], language: str) -> dict[str, float | None]:
    """Overall (%) per category id of one language, from a run's `aggregate()["by_group"]`
    (None where the run has no scored episode of the category)."""
    out: dict[str, float | None] = {}
    for category in CATEGORIES:
        group = by_group.get(f"{category} / {language}") or {}
        value = group.get("overall")
        out[category] = float(value) if isinstance(value, int | float) else None
    return out
