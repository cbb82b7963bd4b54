"""Each task file row's reference solution run against its own tests: does the release pass here?"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.creativebench.sandbox import ExecResult, Sandbox, Verdict
from forkingpaths.benchmarks.creativebench.tasks import (
    ComboTask,
    detect_kind,
    load_combo,
    load_explore,
)


@dataclass(frozen=True)
class ReferenceCheck:
    """One row's verdicts: Explore runs `test_code`; Combo runs `full_test_func`, then
    `demo_test_func` when the row has one (both must pass, as for a solver's answer)."""

    row: str
    results: tuple[ExecResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.verdict == Verdict.PASSED for r in self.results)

    def to_json(self) -> dict[str, Any]:
        failed = next((r for r in self.results if r.verdict != Verdict.PASSED), None)
        shown = failed or self.results[0]
        return {
            "row": self.row,
            "verdict": str(shown.verdict),
            "duration_s": round(max(r.duration_s for r in self.results), 3),
            "detail": (shown.detail or shown.stderr_tail)[-300:],
        }


async def check_references(path: Path, sandbox: Sandbox) -> dict[str, Any]:
    """`{"kind", "rows", "passed", "failed": [row json...], "refused": [errors], "python",
    "isolation", "memory_mb", "timeout_s"}` for the file's valid rows (refused rows are
    listed, not run)."""
    kind = detect_kind(path)
    jobs: list[tuple[str, str, tuple[str, ...]]] = []
    if kind == "explore":
        explore, errors = load_explore(path)
        jobs = [(t.id, t.reference_solution, (t.test_code,)) for t in explore]
    else:
        combo, errors = load_combo(path)
        jobs = [(t.id, t.canonical_solution, _combo_tests(t)) for t in combo]

    async def one(row: str, code: str, tests: tuple[str, ...]) -> ReferenceCheck:
        results = [await sandbox.run(code, test) for test in tests]
        return ReferenceCheck(row, tuple(results))

    checks = await asyncio.gather(*(one(*job) for job in jobs))
    return {
        "kind": kind,
        "rows": len(checks),
        "passed": sum(c.passed for c in checks),
        "failed": [c.to_json() for c in checks if not c.passed],
        "refused": [str(e) for e in errors],
        "python": sandbox.python,
        "isolation": sandbox.isolation,
        "memory_mb": sandbox.limits.memory_mb,
        "timeout_s": sandbox.limits.wall_s,
    }


def _combo_tests(task: ComboTask) -> tuple[str, ...]:
    if task.demo_test_func.strip():
        return (task.full_test_func, task.demo_test_func)
    return (task.full_test_func,)
