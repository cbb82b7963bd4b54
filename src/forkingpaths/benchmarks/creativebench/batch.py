"""`creativebench exec --batch`: many (solution, tests) rows through one warm sandbox pool."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.jsonl import read_json_objects

ROW_FIELDS = {"solution", "tests", "id", "timeout"}
"""What a batch row may hold: `solution` and `tests` (strings, required), `id` (anything JSON,
echoed back) and `timeout` (seconds for this row)."""


@dataclass(frozen=True)
class BatchRow:
    """One line of a batch file."""

    line: int
    solution: str
    tests: str
    id: Any = None
    timeout: float | None = None


def read_batch(path: Path) -> list[BatchRow]:
    """Every row of a JSON-lines batch file, checked before anything runs: a bad row is an
    InvalidFile naming `file:line`, the field, the value and what is allowed."""
    rows = []
    for number, data in read_json_objects(path, "--batch"):
        where = f"{path}:{number}"
        unknown = sorted(set(data) - ROW_FIELDS)
        if unknown:
            raise InvalidFile(
                f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(sorted(ROW_FIELDS))}"
            )
        for field in ("solution", "tests"):
            value = data.get(field)
            if not isinstance(value, str):
                shown = "missing" if field not in data else f"{value!r}"[:60]
                raise InvalidFile(f"{where}: field {field!r}: expected a string, got {shown}")
        timeout = data.get("timeout")
        if timeout is not None and not (
            isinstance(timeout, int | float)
            and not isinstance(timeout, bool)
            and math.isfinite(timeout)
            and timeout > 0
        ):
            raise InvalidFile(
                f"{where}: field 'timeout': expected seconds > 0, got {timeout!r}"[:200]
            )
        rows.append(BatchRow(number, data["solution"], data["tests"], data.get("id"), timeout))
    if not rows:
        raise InvalidFile(f"--batch {str(path)!r}: no rows")
    return rows


async def exec_batch(
    rows: list[BatchRow],
    sandbox: Sandbox,
    emit: Callable[[dict[str, Any]], None],
    *,
    timeout: float | None = None,
) -> dict[str, int]:
    """Run every row in the sandbox, as many at once as it has workers, and `emit` each
    verdict (`{"line", "id", ...ExecResult.to_json()}`) in the file's order as soon as it and
    every row before it are done. Returns the count of each verdict."""
    window = 4 * sandbox.workers + 8  # bounded: a big file is never all in flight
    counts: dict[str, int] = {}
    pending: dict[int, asyncio.Task[dict[str, Any]]] = {}

    async def one(row: BatchRow) -> dict[str, Any]:
        result = await sandbox.run(row.solution, row.tests, timeout=row.timeout or timeout)
        return {"line": row.line, "id": row.id, **result.to_json()}

    feed: Iterator[tuple[int, BatchRow]] = iter(enumerate(rows))
    next_out = 0
    try:
        for index, row in feed:
            pending[index] = asyncio.create_task(one(row))
            if len(pending) < window:
                continue
            while next_out in pending and (len(pending) >= window or pending[next_out].done()):
                verdict = await pending.pop(next_out)
                counts[verdict["verdict"]] = counts.get(verdict["verdict"], 0) + 1
                emit(verdict)
                next_out += 1
        while next_out in pending:
            verdict = await pending.pop(next_out)
            counts[verdict["verdict"]] = counts.get(verdict["verdict"], 0) + 1
            emit(verdict)
            next_out += 1
    finally:
        for task in pending.values():
            task.cancel()
        await asyncio.gather(*pending.values(), return_exceptions=True)
    return counts
