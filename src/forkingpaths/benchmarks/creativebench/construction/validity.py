"""Human instance-validity labels (§3.5, App. D.1.3): reading them and filtering built rows.

The study's export (`forkingpaths study`, admin: annotate/export?kind=validity&format=jsonl) is
JSONL, one label per line::

    {"file": "build/combo.jsonl", "id": "combo-s0-0003", "valid": false,
     "reason": "the test expects 3 where the statement asks for 4", "annotator": "a1"}

`file` names the built instances file (`combo.jsonl`/`explore.jsonl`) relative to the runs
folder, `id` the row's id. An instance is kept when more of its annotators said yes than no; a tie
drops it (the reviewers could not agree that the instance is right). Instances nobody labelled
are kept: the labels filter, they do not sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from forkingpaths.core.errors import InvalidFile, shown
from forkingpaths.core.jsonl import read_json_objects

VALIDITY_FIELDS = ("file", "id", "valid", "reason", "annotator")
"""The fields of one label line, in the order the export writes them."""
REASON_CHARS = 2000
"""Longest reason accepted."""

T = TypeVar("T")


@dataclass(frozen=True)
class ValidityLabel:
    """One annotator's yes/no on one built instance."""

    file: str
    id: str
    valid: bool
    reason: str
    annotator: str
    line: int = 0
    """1-based line in the labels file."""


def load_validity(path: str | Path) -> list[ValidityLabel]:
    """The labels of a JSONL file; any line that is not a label is one InvalidFile naming
    `file:line`, the field and the value. One annotator labelling one instance twice is
    refused."""
    path = Path(path)
    labels: list[ValidityLabel] = []
    seen: dict[tuple[str, str, str], int] = {}
    for lineno, row in read_json_objects(path, "validity labels"):
        where = f"{path}:{lineno}"
        for name in ("file", "id", "annotator"):
            value = row.get(name)
            if not isinstance(value, str) or not value:
                raise InvalidFile(f"{where}: field {name!r}: got {shown(value)}; expected text")
        if not isinstance(row.get("valid"), bool):
            raise InvalidFile(
                f"{where}: field 'valid': got {shown(row.get('valid'))}; expected true or false"
            )
        reason = row.get("reason", "")
        if not isinstance(reason, str) or len(reason) > REASON_CHARS:
            raise InvalidFile(f"{where}: field 'reason': expected text (<= {REASON_CHARS})")
        key = (row["file"], row["id"], row["annotator"])
        if key in seen:
            raise InvalidFile(
                f"{where}: annotator {row['annotator']!r} already labelled {row['id']!r} of "
                f"{row['file']!r} on line {seen[key]}"
            )
        seen[key] = lineno
        labels.append(
            ValidityLabel(row["file"], row["id"], row["valid"], reason, row["annotator"], lineno)
        )
    return labels


def verdicts(labels: Iterable[ValidityLabel], file: str | None = None) -> dict[str, bool]:
    """Instance id -> valid by majority (a tie is not valid), of `file`'s labels when given."""
    votes: dict[str, list[bool]] = {}
    for label in labels:
        if file is None or label.file == file:
            votes.setdefault(label.id, []).append(label.valid)
    return {task_id: 2 * sum(v) > len(v) for task_id, v in votes.items()}


def validity_rate(labels: Iterable[ValidityLabel], file: str | None = None) -> float | None:
    """Share of labelled instances judged valid (the paper's 89.1%); None without labels."""
    judged = verdicts(labels, file)
    return sum(judged.values()) / len(judged) if judged else None


def keep_valid(
    rows: Sequence[T], labels: Iterable[ValidityLabel], file: str | None = None
) -> tuple[list[T], list[T]]:
    """(kept, dropped): the rows (task objects or row dicts, by `id`) the labels of `file` (all
    labels when None) do not find invalid, and those they do."""
    judged = verdicts(labels, file)
    kept: list[T] = []
    dropped: list[T] = []
    for row in rows:
        task_id = _row_id(row)
        (dropped if judged.get(task_id) is False else kept).append(row)
    return kept, dropped


def _row_id(row: Any) -> str:
    return str(row.get("id") if isinstance(row, dict) else getattr(row, "id", ""))
