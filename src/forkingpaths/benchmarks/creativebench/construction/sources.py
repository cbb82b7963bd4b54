"""Construction inputs: the Combo pipeline's source components and the Explore pipeline's seeds."""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.creativebench.tasks import (
    ExploreTask,
    RowError,
    load_combo,
    load_explore,
)
from forkingpaths.core.errors import InvalidFile, shown

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceComponent:
    """One seed solution the Combo pipeline fuses with others from different domains."""

    id: str
    domain: str
    """One of the paper's domain tags (`tasks.DOMAINS`) or any label; fusions pick k distinct."""
    code: str
    description: str = ""
    """What the code does, in a sentence (shown to the fusion request when given)."""


@dataclass(frozen=True)
class ExploreSeed:
    """A base problem of the Explore pipeline: the problem, its base solution and its tests."""

    problem_id: str
    question: str
    function_signature: str
    base_solution: str
    test_code: str
    """Defines `test()` and calls it under `if __name__ == "__main__"`."""
    language: str = "python"
    difficulty: str = ""
    domain: str = ""

    @classmethod
    def from_task(cls, task: ExploreTask) -> ExploreSeed:
        """The seed of a level-0 task: its reference solution is the base solution."""
        return cls(
            problem_id=task.problem_id,
            question=task.question,
            function_signature=task.function_signature,
            base_solution=task.reference_solution,
            test_code=task.test_code,
            language=task.language,
            difficulty=task.difficulty,
            domain=task.domain,
        )


def default_components() -> list[SourceComponent]:
    """The source solutions of the built-in Combo data, one component per (solution, domain)."""
    tasks, errors = load_combo()
    for error in errors:
        log.warning("built-in Combo data: %s", error)
    return components_from_combo(tasks)


def components_from_combo(tasks: Sequence[Any]) -> list[SourceComponent]:
    """Components from Combo tasks whose `source_solutions` and `domains` pair up one to one;
    the same code met twice is kept once."""
    out: list[SourceComponent] = []
    seen: set[str] = set()
    for task in tasks:
        sources, domains = tuple(task.source_solutions), tuple(task.domains)
        if not sources:
            continue
        if len(sources) != len(domains):
            log.warning(
                "Combo task %s: %d source solutions but %d domains; its sources are not used",
                task.id,
                len(sources),
                len(domains),
            )
            continue
        for index, (code, domain) in enumerate(zip(sources, domains, strict=True)):
            if code in seen:
                continue
            seen.add(code)
            out.append(
                SourceComponent(
                    id=f"{task.id}-src{index + 1}",
                    domain=domain,
                    code=code,
                    description=describe_code(code),
                )
            )
    return out


def describe_code(code: str) -> str:
    """The first line of the code's first docstring (module, then functions), or ""."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in [tree, *tree.body]:
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            doc = ast.get_docstring(node)
            if doc:
                return doc.strip().splitlines()[0]
    return ""


def load_components(path: Path) -> tuple[list[SourceComponent], list[RowError]]:
    """Components from a JSONL file of `{"id", "domain", "code", "description"?}` objects.

    A bad row is refused by line with the field named; the rest loads.
    """
    components: list[SourceComponent] = []
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidFile(f"{name}: cannot read the components file: {exc}") from exc
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            errors.append(RowError(name, line_no, "", f"not JSON ({exc})"))
            continue
        if not isinstance(row, dict):
            errors.append(RowError(name, line_no, "", f"expected an object, got {shown(row)}"))
            continue
        problem = _component_problem(row)
        if problem is not None:
            errors.append(RowError(name, line_no, *problem))
            continue
        if row["id"] in seen:
            message = f"duplicate id {shown(row['id'])} (first on line {seen[row['id']]})"
            errors.append(RowError(name, line_no, "id", message))
            continue
        seen[row["id"]] = line_no
        components.append(
            SourceComponent(
                id=row["id"],
                domain=row["domain"],
                code=row["code"],
                description=row.get("description") or describe_code(row["code"]),
            )
        )
    return components, errors


def _component_problem(row: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, message) of the first thing wrong with a component row, None when it is fine."""
    for key in ("id", "domain", "code"):
        value = row.get(key)
        if not isinstance(value, str) or not value.strip():
            return key, f"expected a non-empty string, got {shown(value)}"
    description = row.get("description", "")
    if not isinstance(description, str):
        return "description", f"expected a string, got {shown(description)}"
    return None


def default_explore_seeds() -> list[ExploreSeed]:
    """The level-0 problems of the built-in Explore data."""
    tasks, errors = load_explore()
    for error in errors:
        log.warning("built-in Explore data: %s", error)
    return seeds_from_tasks(tasks)


def seeds_from_tasks(tasks: Sequence[ExploreTask]) -> list[ExploreSeed]:
    """One seed per base problem, from its level-0 row (problems without one are skipped)."""
    seeds = [ExploreSeed.from_task(t) for t in tasks if t.level == 0]
    missing = sorted({t.problem_id for t in tasks} - {s.problem_id for s in seeds})
    if missing:
        log.warning("Explore problems without a level-0 row are skipped: %s", ", ".join(missing))
    return seeds
