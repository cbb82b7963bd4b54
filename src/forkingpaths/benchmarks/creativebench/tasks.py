"""CreativeBench task records (Explore levels, Combo problems), JSONL loaders, import report.

Formats (`docs/dev/creativebench.md` §1), one JSON object per line:

- Explore (§3.3): `problem_id`, `level` (0 = unconstrained), `question`, `function_signature`,
  `constraints` (the stacked constraint texts, exactly `level` of them), `constraints_detail`
  (one object per constraint: `constraint`, `blocked_technique`, `expected_impact`,
  `verification_hint`, and our optional `check` rules, whose names are validated as the
  checker reads them: `constraints_detail[1].check.nodes: 'Fro' is not an ast node class`),
  `test_code`, `reference_solution` (`canonical_solution` is read as its alias); optional `id`
  (default `<problem_id>-L<level>`), `language` (default python), `difficulty`, `domain`.
- Combo (§3.2): `question`, `canonical_solution`, `full_test_func`; optional `id` (default
  `combo-<line>`), `demo_test_func`, `language`, `difficulty`, `source_solutions`, `domains`.

A bad row is refused with its 1-based line and the field at fault (`RowError`), and the rest
load; a file that cannot be read at all raises `InvalidFile`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeVar

from forkingpaths.benchmarks.creativebench.constraints import validate_rules
from forkingpaths.core.errors import ConfigError, InvalidFile, shown

DATA_DIR = Path(__file__).parent / "data"
EXPLORE_FILE = DATA_DIR / "explore.jsonl"
"""The built-in Explore set: our own base problems, each with levels 0-3 or deeper."""
COMBO_FILE = DATA_DIR / "combo.jsonl"
"""The built-in Combo set."""

DOMAINS: tuple[str, ...] = (
    "Algorithms & Problem Solving",
    "Concurrency & Async Programming",
    "Data Structures & Collections",
    "Language Fundamentals",
    "Functions & Modules",
    "Web Development & Frameworks",
    "Systems Programming & Low-level Development",
    "Network Programming & Communication",
    "Data Science & Analytics",
    "File & I/O Operations",
    "Machine Learning & AI",
    "Database Operations & Persistence",
    "Error Handling & Debugging",
    "Others",
)
"""The paper's 14 domain tags, in the order of App. D ("Others" merges tags under 2%)."""

CHECK_KEYS: tuple[str, ...] = ("calls", "imports", "nodes", "operators", "names")
"""Keys a `Constraint.check` may hold (contract §1)."""

CONSTRAINT_FIELDS: tuple[str, ...] = (
    "constraint",
    "blocked_technique",
    "expected_impact",
    "verification_hint",
)
"""The four text fields of a paper-release `constraints_detail` item (App. K, Table 17)."""

EXPLORE_MARKERS = frozenset(
    {"problem_id", "level", "constraints", "constraints_detail", "test_code"}
)
"""Fields that make a row an Explore row (import_report's kind detection)."""
COMBO_MARKERS = frozenset({"canonical_solution", "full_test_func", "demo_test_func"})
"""Fields that make a row a Combo row (checked after the Explore ones)."""

TaskKind = Literal["explore", "combo"]
T = TypeVar("T", "ExploreTask", "ComboTask")


@dataclass(frozen=True)
class Constraint:
    """One negative constraint of an Explore level (§3.3): the instruction and what it blocks."""

    constraint: str
    """The instruction shown to the solver ("Do not use sorting ...")."""
    blocked_technique: str
    """The technique of the previous level's solution that this constraint rules out."""
    expected_impact: str
    """How the constraint should change the solution (the generator's intent)."""
    verification_hint: str
    """What a checker (the judge, App. B.1) should look for in the code."""
    check: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    """Our extension: machine-checkable rules, keyed by CHECK_KEYS: "calls" (forbidden call
    names, bare or as methods: "sorted", "sort", "max"), "imports" (forbidden modules), "nodes"
    (ast node class names: "For", "While", "ListComp", "Subscript", "Recursion" = a function
    calling itself), "operators" (ast operator class names: "Mod", "FloorDiv", "BitAnd") and
    "names" (forbidden attribute or global names: "bisect_left"). Empty: no static rules."""

    def __post_init__(self) -> None:
        # Freeze the rules (lists or tuples in, read-only tuples out) so tasks stay immutable.
        if not isinstance(self.check, Mapping):
            raise ConfigError(f"Constraint.check: expected a mapping; got {shown(self.check)}")
        rules: dict[str, tuple[str, ...]] = {}
        for key, names in self.check.items():
            if key not in CHECK_KEYS:
                raise ConfigError(
                    f"Constraint.check: unknown key {key!r}; allowed: {', '.join(CHECK_KEYS)}"
                )
            if not isinstance(names, list | tuple) or not all(
                isinstance(n, str) and n for n in names
            ):
                raise ConfigError(
                    f"Constraint.check[{key!r}]: expected a list of non-empty names; "
                    f"got {shown(names)}"
                )
            rules[key] = tuple(names)
        object.__setattr__(self, "check", MappingProxyType(rules))


@dataclass(frozen=True)
class ExploreTask:
    """One level of an Explore base problem: a paper release row plus our fields."""

    id: str
    """`<problem_id>-L<level>` unless the row names its own."""
    problem_id: str
    """The base problem this level belongs to."""
    level: int
    """0 = unconstrained; level k stacks k constraints."""
    language: str
    difficulty: str
    question: str
    function_signature: str
    constraints: tuple[str, ...]
    """The stacked constraint texts, in level order."""
    constraints_detail: tuple[Constraint, ...]
    """The stacked constraints, in level order (`constraints[i]` is the text of item i)."""
    test_code: str
    """Defines `test()` and calls it under `if __name__ == "__main__"`."""
    reference_solution: str
    """A solution that passes the tests and respects every constraint of this level."""
    domain: str = ""
    """One of DOMAINS for the built-in set; whatever the row says for imported rows."""


@dataclass(frozen=True)
class ComboTask:
    """One Combo problem (§3.2): a fused reference solution with its tests."""

    id: str
    """The row's id, else `combo-<line>`."""
    question: str
    canonical_solution: str
    demo_test_func: str
    """A short test shown with the question; may be ""."""
    full_test_func: str
    language: str
    difficulty: str
    source_solutions: tuple[str, ...] = ()
    """The k source solutions the task fused (ours; novelty is measured against them)."""
    domains: tuple[str, ...] = ()
    """The domain of each source solution."""


@dataclass(frozen=True)
class RowError:
    """One refused row: `FILE:LINE: FIELD: MESSAGE` (FIELD left out when empty)."""

    file: str
    line: int
    """1-based line of the row in its file."""
    field: str
    """The field at fault ("constraints_detail[1].check"), "row" for the whole row, or ""."""
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


# ---- reading rows ----


def _rows(path: Path) -> Iterator[tuple[int, Any, RowError | None]]:
    """(line, parsed value, refusal) per non-blank line; raises InvalidFile if unreadable."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidFile(f"{path}: no such file (expected a JSONL file of tasks)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidFile(f"{path}: cannot read as UTF-8 text: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problem = f"not valid JSON (column {exc.colno}: {exc.msg})"
            yield number, None, RowError(str(path), number, "row", problem)
            continue
        if not isinstance(value, dict):
            problem = f"expected a JSON object; got {shown(value)}"
            yield number, None, RowError(str(path), number, "row", problem)
            continue
        yield number, value, None


class _Fields:
    """Typed reads of one row's fields; every problem becomes a RowError naming the field."""

    def __init__(self, row: Mapping[str, Any], file: str, line: int) -> None:
        self.row, self.file, self.line = row, file, line
        self.errors: list[RowError] = []

    def refuse(self, name: str, message: str) -> None:
        self.errors.append(RowError(self.file, self.line, name, message))

    def refused(self, name: str) -> bool:
        """Whether field `name` (or a part of it, `name[2].check`) was already refused."""
        return any(
            e.field == name or e.field.startswith((f"{name}[", f"{name}.")) for e in self.errors
        )

    def text(self, name: str, *, default: str | None = None, non_empty: bool = False) -> str:
        """A string field; `default` None makes it required; `non_empty` refuses blank text."""
        value = self.row.get(name)
        if value is None:
            if default is None:
                self.refuse(name, "missing")
            return default or ""
        if not isinstance(value, str):
            self.refuse(name, f"expected a string; got {shown(value)}")
            return ""
        if non_empty and not value.strip():
            self.refuse(name, "empty")
        return value

    def identifier(self, name: str, *, required: bool) -> str | None:
        """An id-like field: a non-empty string, or an integer read as its decimal text."""
        value = self.row.get(name)
        if value is None:
            if required:
                self.refuse(name, "missing")
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str) or not value.strip():
            self.refuse(name, f"expected a non-empty string; got {shown(value)}")
            return None
        return value.strip()

    def level(self) -> int | None:
        value = self.row.get("level")
        if value is None:
            self.refuse("level", "missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.refuse("level", f"expected an integer >= 0; got {shown(value)}")
            return None
        return value

    def texts(self, name: str, *, required: bool, one_allowed: bool = False) -> tuple[str, ...]:
        """A list of non-empty strings (or, with `one_allowed`, a single string)."""
        value = self.row.get(name)
        if value is None:
            if required:
                self.refuse(name, "missing")
            return ()
        if one_allowed and isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.refuse(name, f"expected a list of strings; got {shown(value)}")
            return ()
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item.strip():
                self.refuse(f"{name}[{index}]", f"expected a non-empty string; got {shown(item)}")
                return ()
        return tuple(value)

    def constraints_detail(self) -> tuple[Constraint, ...]:
        value = self.row.get("constraints_detail")
        if value is None:
            self.refuse("constraints_detail", "missing")
            return ()
        if not isinstance(value, list):
            self.refuse("constraints_detail", f"expected a list of objects; got {shown(value)}")
            return ()
        details: list[Constraint] = []
        for index, item in enumerate(value):
            where = f"constraints_detail[{index}]"
            if not isinstance(item, dict):
                self.refuse(where, f"expected an object; got {shown(item)}")
                continue
            texts: dict[str, str] = {}
            for key in CONSTRAINT_FIELDS:
                text = item.get(key)
                if text is None:
                    self.refuse(f"{where}.{key}", "missing")
                elif not isinstance(text, str) or not text.strip():
                    self.refuse(f"{where}.{key}", f"expected non-empty text; got {shown(text)}")
                else:
                    texts[key] = text
            check = self._check(item.get("check"), f"{where}.check")
            if len(texts) == len(CONSTRAINT_FIELDS) and check is not None:
                details.append(Constraint(**texts, check=check))
        return tuple(details)

    def _check(self, value: Any, where: str) -> dict[str, tuple[str, ...]] | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.refuse(where, f"expected an object of rule lists; got {shown(value)}")
            return None
        rules: dict[str, tuple[str, ...]] = {}
        for key, names in value.items():
            if key not in CHECK_KEYS:
                allowed = ", ".join(CHECK_KEYS)
                self.refuse(f"{where}.{key}", f"unknown rule key; allowed: {allowed}")
                return None
            if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
                self.refuse(f"{where}.{key}", f"expected a list of names; got {shown(names)}")
                return None
            problem = _rule_problem(key, names)
            if problem:
                self.refuse(f"{where}.{key}", problem)
                return None
            rules[key] = tuple(names)
        return rules


def _rule_problem(kind: str, names: list[str]) -> str:
    """Why the checker would never match `names` under `kind` (an unknown ast node or operator
    class: "Fro", "Modulo"), as `constraints.validate_rules` says it; "" when they are fine."""
    prefix = f"{kind}.{kind}: "
    try:
        validate_rules({kind: tuple(names)}, kind)
    except ConfigError as exc:
        return str(exc).removeprefix(prefix).removeprefix(f"{kind}: ")
    return ""


def _explore_task(
    row: Mapping[str, Any], file: str, line: int
) -> tuple[ExploreTask | None, list[RowError]]:
    fields = _Fields(row, file, line)
    problem_id = fields.identifier("problem_id", required=True)
    level = fields.level()
    question = fields.text("question", non_empty=True)
    signature = fields.text("function_signature")
    constraints = fields.texts("constraints", required=True)
    details = fields.constraints_detail()
    test_code = fields.text("test_code", non_empty=True)
    # AutoCodeBench, the paper's seed set, names the reference `canonical_solution`.
    aliased = "reference_solution" not in row and "canonical_solution" in row
    reference = fields.text(
        "canonical_solution" if aliased else "reference_solution", non_empty=True
    )
    language = fields.text("language", default="python", non_empty=True)
    difficulty = fields.text("difficulty", default="")
    domain = fields.text("domain", default="")
    row_id = fields.identifier("id", required=False)
    if level is not None:
        for name, count in (
            ("constraints", len(constraints)),
            ("constraints_detail", len(details)),
        ):
            if count != level and not fields.refused(name):
                fields.refuse(
                    name,
                    f"holds {count} constraint(s) but level is {level}: level k stacks exactly "
                    "k constraints",
                )
    if fields.errors or problem_id is None or level is None:
        return None, fields.errors
    task = ExploreTask(
        id=row_id or f"{problem_id}-L{level}",
        problem_id=problem_id,
        level=level,
        language=language,
        difficulty=difficulty,
        question=question,
        function_signature=signature,
        constraints=constraints,
        constraints_detail=details,
        test_code=test_code,
        reference_solution=reference,
        domain=domain,
    )
    return task, []


def _combo_task(
    row: Mapping[str, Any], file: str, line: int
) -> tuple[ComboTask | None, list[RowError]]:
    fields = _Fields(row, file, line)
    row_id = fields.identifier("id", required=False)
    question = fields.text("question", non_empty=True)
    solution = fields.text("canonical_solution", non_empty=True)
    demo = fields.text("demo_test_func", default="")
    full = fields.text("full_test_func", non_empty=True)
    language = fields.text("language", default="python", non_empty=True)
    difficulty = fields.text("difficulty", default="")
    sources = fields.texts("source_solutions", required=False)
    domains = fields.texts("domains", required=False, one_allowed=True)
    if fields.errors:
        return None, fields.errors
    task = ComboTask(
        id=row_id or f"combo-{line}",
        question=question,
        canonical_solution=solution,
        demo_test_func=demo,
        full_test_func=full,
        language=language,
        difficulty=difficulty,
        source_solutions=sources,
        domains=domains,
    )
    return task, []


def _load(
    path: Path, build: Callable[[Mapping[str, Any], str, int], tuple[T | None, list[RowError]]]
) -> tuple[list[T], list[RowError]]:
    """Rows of `path` built by `build(row, file, line)`; duplicate ids refused after the first."""
    tasks: list[T] = []
    errors: list[RowError] = []
    first_line: dict[str, int] = {}
    for line, row, problem in _rows(path):
        if problem is not None:
            errors.append(problem)
            continue
        task, row_errors = build(row, str(path), line)
        if task is None:
            errors += row_errors
        elif task.id in first_line:
            message = f"duplicate id {task.id!r} (first at line {first_line[task.id]})"
            errors.append(RowError(str(path), line, "id", message))
        else:
            first_line[task.id] = line
            tasks.append(task)
    return tasks, errors


def load_explore(path: Path | None = None) -> tuple[list[ExploreTask], list[RowError]]:
    """The Explore tasks of a JSONL file (None: the built-in set) and the rows refused."""
    return _load(Path(path) if path is not None else EXPLORE_FILE, _explore_task)


def load_combo(path: Path | None = None) -> tuple[list[ComboTask], list[RowError]]:
    """The Combo tasks of a JSONL file (None: the built-in set) and the rows refused."""
    return _load(Path(path) if path is not None else COMBO_FILE, _combo_task)


def detect_kind(path: Path) -> TaskKind:
    """Explore or Combo, from the fields of the file's first row that is a JSON object."""
    path = Path(path)
    for line, row, _problem in _rows(path):
        if row is None:
            continue
        if EXPLORE_MARKERS & row.keys():
            return "explore"
        if COMBO_MARKERS & row.keys():
            return "combo"
        raise InvalidFile(
            f"{path}:{line}: cannot tell Explore from Combo rows: expected Explore fields "
            f"({', '.join(sorted(EXPLORE_MARKERS))}) or Combo fields "
            f"({', '.join(sorted(COMBO_MARKERS))}); got {', '.join(sorted(row)) or 'none'}"
        )
    raise InvalidFile(f"{path}: no JSON object rows; nothing to import")


def import_report(path: Path) -> dict[str, Any]:
    """`{"rows": N valid rows, "kind": "explore"|"combo", "errors": ["FILE:LINE: FIELD: ..."]}`."""
    kind = detect_kind(path)
    tasks, errors = load_explore(path) if kind == "explore" else load_combo(path)
    return {"rows": len(tasks), "kind": kind, "errors": [str(error) for error in errors]}


def explore_levels(tasks: Iterable[ExploreTask]) -> dict[str, list[ExploreTask]]:
    """Tasks grouped by base problem (in order of first appearance), each group by level."""
    groups: dict[str, list[ExploreTask]] = {}
    for task in tasks:
        groups.setdefault(task.problem_id, []).append(task)
    return {problem: sorted(levels, key=lambda t: t.level) for problem, levels in groups.items()}
