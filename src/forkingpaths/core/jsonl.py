"""Append-only JSONL files that survive a killed writer: append and flush, cut a torn last line."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import InvalidFile, shown

log = logging.getLogger(__name__)


def append_jsonl(path: Path, value: Mapping[str, Any] | str, *, fsync: bool = False) -> None:
    """Append one object (or an already serialised line) and flush it, so a reader or a killed
    process never sees half of it; `fsync` also waits for the disk (a run's records)."""
    line = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(line.rstrip("\n") + "\n")
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())


def repair_tail(path: Path) -> bool:
    """Cut a torn last line (no newline after it: its write was cut short); True if one was."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return False
        handle.truncate(data.rfind(b"\n") + 1)
    log.warning("%s: cut off a torn last line (a killed writer)", path)
    return True


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The objects of a JSONL file ([] when absent), after cutting a torn last line; any other
    unreadable line is refused with its number."""
    path = Path(path)
    if not path.exists():
        return []
    repair_tail(path)
    out: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise InvalidFile(f"{path}:{number}: not JSON ({exc})") from exc
            if not isinstance(value, dict):
                raise InvalidFile(f"{path}:{number}: expected a JSON object, got {shown(value)}")
            out.append(value)
    return out


def read_json_objects(path: str | Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(line number, object)` of a JSONL file a person gave (labels, ratings, a batch),
    blank lines skipped. Unlike `read_jsonl` nothing is repaired: a file that is missing or
    unreadable (named as `what`), or a line that is not a JSON object, is an InvalidFile naming
    `file:line` and what was there."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidFile(f"{what}: no file {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidFile(f"{what}: cannot read {str(path)!r}: {exc}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise InvalidFile(f"{path}:{number}: not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise InvalidFile(f"{path}:{number}: expected a JSON object, got {shown(value)}")
        yield number, value


def write_jsonl(path: Path, values: Iterable[Mapping[str, Any]]) -> None:
    """Replace a JSONL file atomically (a rewrite after dropping uncommitted lines)."""
    path = Path(path)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(
        "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8"
    )
    os.replace(temporary, path)
