"""Tasks (contract §1): the built-in Explore set is sound level by level, release rows load, and
every bad row is refused by line and field while the rest load."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.creativebench.tasks import (
    CHECK_KEYS,
    DOMAINS,
    EXPLORE_FILE,
    ComboTask,
    Constraint,
    ExploreTask,
    RowError,
    detect_kind,
    explore_levels,
    import_report,
    load_combo,
    load_explore,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE_EXPLORE = FIXTURES / "release_explore.jsonl"
RELEASE_COMBO = FIXTURES / "release_combo.jsonl"


def write_rows(path: Path, rows: Sequence[object]) -> Path:
    """One line per row: strings are written as they are (to plant broken JSON), else JSON."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def release_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RELEASE_EXPLORE.read_text("utf-8").splitlines()]


def combo_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RELEASE_COMBO.read_text("utf-8").splitlines()]


# ---- a small static checker of Constraint.check rules (contract §1 semantics) ----


def _strip_annotations(tree: ast.AST) -> None:
    # The required signature carries annotations such as list[int]; they are not the solver's
    # technique, so a "no subscripts" rule must not see them.
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)


def _call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _recursive_functions(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            calls = (n for n in ast.walk(node) if isinstance(n, ast.Call))
            if any(isinstance(c.func, ast.Name) and c.func.id == node.name for c in calls):
                found.append(node.name)
    return found


def violations(code: str, check: Mapping[str, Sequence[str]]) -> list[str]:
    """What in `code` breaks `check`: "call sorted", "node For", "import heapq", ..."""
    tree = ast.parse(code)
    _strip_annotations(tree)
    calls, imports = set(check.get("calls", ())), set(check.get("imports", ()))
    nodes, operators = set(check.get("nodes", ())), set(check.get("operators", ()))
    names = set(check.get("names", ()))
    found: list[str] = []
    for node in ast.walk(tree):
        kind = type(node).__name__
        if kind in nodes:
            found.append(f"node {kind}")
        if isinstance(node, ast.Call) and _call_name(node) in calls:
            found.append(f"call {_call_name(node)}")
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            found += [f"name {a.name}" for a in node.names if a.name in names]
        found += [f"import {m}" for m in modules if m in imports or m.split(".")[0] in imports]
        operator = getattr(node, "op", None)
        if operator is not None and type(operator).__name__ in operators:
            found.append(f"operator {type(operator).__name__}")
        if isinstance(node, ast.Name) and node.id in names:
            found.append(f"name {node.id}")
        if isinstance(node, ast.Attribute) and node.attr in names:
            found.append(f"name {node.attr}")
    if "Recursion" in nodes:
        found += [f"recursion {name}" for name in _recursive_functions(tree)]
    return found


def test_checker_reads_rules_as_the_contract_says() -> None:
    code = (
        "import heapq\nfrom math import gcd\n"
        "def f(xs: list[int]) -> int:\n"
        "    ys = sorted(xs)\n    xs.sort()\n    return f(ys[1:]) % 2 + (3 >> 1)\n"
    )
    assert violations(code, {"calls": ("sort",)}) == ["call sort"]
    assert violations(code, {"imports": ("heapq",)}) == ["import heapq"]
    assert violations(code, {"names": ("gcd",)}) == ["name gcd"]
    assert violations(code, {"operators": ("Mod",)}) == ["operator Mod"]
    assert violations(code, {"nodes": ("Recursion",)}) == ["recursion f"]
    assert violations(code, {"nodes": ("Slice",)}) == ["node Slice"]
    # Only the slice's subscript counts: the annotations list[int] are not looked at.
    assert violations(code, {"nodes": ("Subscript",)}) == ["node Subscript"]
    assert violations("def g(n):\n    return n\n", {"nodes": ("Recursion", "For")}) == []


# ---- the built-in Explore set ----


@pytest.fixture(scope="module")
def builtin() -> list[ExploreTask]:
    tasks, errors = load_explore()
    assert errors == []
    return tasks


def test_builtin_set_size_and_levels(builtin: list[ExploreTask]) -> None:
    problems = explore_levels(builtin)
    assert len(problems) >= 12
    assert len(builtin) >= 50
    for problem_id, levels in problems.items():
        assert [t.level for t in levels] == list(range(len(levels))), problem_id
        assert len(levels) >= 4, problem_id
        assert [t.id for t in levels] == [f"{problem_id}-L{t.level}" for t in levels]
    assert any(len(levels) >= 5 for levels in problems.values())
    assert len({t.domain for t in builtin}) >= 8


def test_builtin_rows_are_well_formed(builtin: list[ExploreTask]) -> None:
    for task in builtin:
        assert task.language == "python"
        assert task.domain in DOMAINS
        assert task.difficulty in ("easy", "medium", "hard")
        name = re.match(r"def (\w+)\(", task.function_signature)
        assert name, task.id
        assert f"def {name.group(1)}(" in task.reference_solution, task.id
        assert f"{name.group(1)}(" in task.test_code, task.id
        assert "def test():" in task.test_code
        assert 'if __name__ == "__main__":\n    test()' in task.test_code
        body = task.test_code.split("def test():", 1)[1]
        assert 5 <= body.count("assert ") <= 10, task.id
        assert task.constraints == tuple(c.constraint for c in task.constraints_detail)
        for constraint in task.constraints_detail:
            assert constraint.check, f"{task.id}: every built-in constraint is machine-checkable"
            assert set(constraint.check) <= set(CHECK_KEYS)


def test_builtin_levels_stack_their_constraints(builtin: list[ExploreTask]) -> None:
    for levels in explore_levels(builtin).values():
        base = levels[0]
        assert base.constraints == () and base.constraints_detail == ()
        for lower, upper in pairwise(levels):
            assert upper.constraints_detail[:-1] == lower.constraints_detail, upper.id
            assert (upper.question, upper.function_signature, upper.test_code) == (
                base.question,
                base.function_signature,
                base.test_code,
            )
            assert upper.reference_solution != lower.reference_solution
            newest = upper.constraints_detail[-1].constraint
            assert newest not in lower.constraints, f"{upper.id} repeats a constraint"


def test_builtin_references_respect_their_levels(builtin: list[ExploreTask]) -> None:
    for levels in explore_levels(builtin).values():
        for task in levels:
            for number, constraint in enumerate(task.constraints_detail, start=1):
                broken = violations(task.reference_solution, constraint.check)
                assert broken == [], f"{task.id} breaks its constraint {number}: {broken}"


def test_newest_constraint_blocks_the_previous_reference(builtin: list[ExploreTask]) -> None:
    for levels in explore_levels(builtin).values():
        for lower, upper in pairwise(levels):
            newest = upper.constraints_detail[-1]
            assert violations(lower.reference_solution, newest.check), (
                f"{upper.id}: the L{lower.level} reference already satisfies "
                f"{newest.constraint!r}, so the constraint blocks nothing"
            )


def _run(program: str) -> subprocess.CompletedProcess[str]:
    # -S leaves site-packages out: the built-in set must need the standard library only.
    return subprocess.run(
        [sys.executable, "-S", "-c", program], capture_output=True, text=True, timeout=120
    )


def test_every_builtin_reference_passes_its_tests(builtin: list[ExploreTask]) -> None:
    programs = [t.reference_solution + "\n\n" + t.test_code for t in builtin]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(_run, programs))
    failed = [
        (t.id, r.stderr[-600:]) for t, r in zip(builtin, results, strict=True) if r.returncode
    ]
    assert failed == []


def test_tests_reject_a_wrong_solution(builtin: list[ExploreTask]) -> None:
    # A solution that returns None everywhere must fail every problem's tests.
    for levels in explore_levels(builtin).values():
        task = levels[0]
        stub = task.function_signature.split("->")[0].rstrip(" :") + ":\n    return None\n"
        result = _run(stub + "\n\n" + task.test_code)
        assert result.returncode != 0, task.problem_id
        assert "AssertionError" in result.stderr, task.problem_id


def test_builtin_set_agrees_with_the_static_checker(builtin: list[ExploreTask]) -> None:
    constraints = pytest.importorskip("forkingpaths.benchmarks.creativebench.constraints")
    for levels in explore_levels(builtin).values():
        for lower, upper in pairwise(levels):
            found = constraints.check_constraints(
                upper.reference_solution, upper.constraints_detail
            )
            assert list(found) == [], f"{upper.id}: {found}"
            newest = upper.constraints_detail[-1:]
            assert constraints.check_constraints(lower.reference_solution, newest), upper.id


def test_builtin_references_pass_in_the_sandbox(builtin: list[ExploreTask]) -> None:
    sandbox = pytest.importorskip("forkingpaths.benchmarks.creativebench.sandbox")
    for levels in explore_levels(builtin).values():
        task = levels[-1]  # the most constrained reference of each problem
        result = sandbox.run_once(task.reference_solution, task.test_code)
        assert result.verdict.name == "PASSED", f"{task.id}: {result.detail}"


# ---- the paper's release format ----


def test_release_explore_rows_load_unchanged() -> None:
    tasks, errors = load_explore(RELEASE_EXPLORE)
    assert errors == []
    assert [t.id for t in tasks] == ["7-L0", "7-L1", "7-L2"]
    assert {t.problem_id for t in tasks} == {"7"}
    top = tasks[-1]
    assert top.constraints == (
        "Slicing the list is not allowed.",
        "The modulo operator may not be used.",
    )
    assert top.constraints_detail[1].blocked_technique == "index % size boundary test"
    assert all(not c.check for c in top.constraints_detail)
    assert top.domain == "" and top.language == "python"
    assert import_report(RELEASE_EXPLORE) == {"rows": 3, "kind": "explore", "errors": []}


def test_release_combo_rows_load_unchanged() -> None:
    tasks, errors = load_combo(RELEASE_COMBO)
    assert errors == []
    assert [t.id for t in tasks] == ["combo-1", "combo-2"]
    assert tasks[1].demo_test_func == ""
    assert tasks[0].source_solutions == () and tasks[0].domains == ()
    assert import_report(RELEASE_COMBO) == {"rows": 2, "kind": "combo", "errors": []}


def test_combo_optional_fields(tmp_path: Path) -> None:
    rows = combo_rows()
    rows[0] |= {
        "id": "fused-1",
        "demo_test_func": None,
        "source_solutions": ["def a():\n    return 1\n", "def b():\n    return 2\n"],
        "domains": ["Algorithms & Problem Solving", "File & I/O Operations"],
    }
    rows[1] |= {"domains": "Data Science & Analytics"}
    tasks, errors = load_combo(write_rows(tmp_path / "c.jsonl", rows))
    assert errors == []
    assert tasks[0] == ComboTask(
        id="fused-1",
        question=rows[0]["question"],
        canonical_solution=rows[0]["canonical_solution"],
        demo_test_func="",
        full_test_func=rows[0]["full_test_func"],
        language="python",
        difficulty="medium",
        source_solutions=tuple(rows[0]["source_solutions"]),
        domains=("Algorithms & Problem Solving", "File & I/O Operations"),
    )
    assert tasks[1].domains == ("Data Science & Analytics",)


def test_explore_alias_and_our_fields(tmp_path: Path) -> None:
    rows = release_rows()
    rows[0]["canonical_solution"] = rows[0].pop("reference_solution")
    rows[1] |= {"id": "chunks-one", "domain": "Data Science & Analytics", "problem_id": "chunks"}
    rows[2]["constraints_detail"][0]["check"] = {"nodes": ["Slice"]}
    tasks, errors = load_explore(write_rows(tmp_path / "e.jsonl", rows))
    assert errors == []
    assert tasks[0].reference_solution.startswith("def chunk_sums")
    assert (tasks[1].id, tasks[1].problem_id, tasks[1].domain) == (
        "chunks-one",
        "chunks",
        "Data Science & Analytics",
    )
    assert tasks[2].constraints_detail[0].check == {"nodes": ("Slice",)}


# ---- refusals ----


def _set(key: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(row: dict[str, Any]) -> None:
        row[key] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda row: row.pop(key)


def _detail(index: int, key: str, value: object = None) -> Callable[[dict[str, Any]], None]:
    def change(row: dict[str, Any]) -> None:
        if value is None:
            row["constraints_detail"][index].pop(key)
        else:
            row["constraints_detail"][index][key] = value

    return change


BAD_EXPLORE = {
    "missing question": (_drop("question"), "question", "missing"),
    "missing problem_id": (_drop("problem_id"), "problem_id", "missing"),
    "missing test_code": (_drop("test_code"), "test_code", "missing"),
    "missing reference": (_drop("reference_solution"), "reference_solution", "missing"),
    "missing constraints": (_drop("constraints"), "constraints", "missing"),
    "missing level": (_drop("level"), "level", "missing"),
    "level as text": (_set("level", "2"), "level", 'expected an integer >= 0; got "2"'),
    "negative level": (_set("level", -1), "level", "expected an integer >= 0; got -1"),
    "level as bool": (_set("level", True), "level", "got true"),
    "level as float": (_set("level", 2.0), "level", "got 2.0"),
    "question not text": (_set("question", ["a"]), "question", "expected a string"),
    "constraints not a list": (_set("constraints", "No slicing."), "constraints", "list"),
    "constraint not text": (_set("constraints", ["No slicing.", 3]), "constraints[1]", "got 3"),
    "too few constraints": (
        _set("constraints", ["Slicing the list is not allowed."]),
        "constraints",
        "holds 1 constraint(s) but level is 2",
    ),
    "too many details": (
        lambda row: row["constraints_detail"].append(dict(row["constraints_detail"][0])),
        "constraints_detail",
        "holds 3 constraint(s) but level is 2",
    ),
    "detail without hint": (
        _detail(1, "verification_hint"),
        "constraints_detail[1].verification_hint",
        "missing",
    ),
    "detail with blank technique": (
        _detail(0, "blocked_technique", "  "),
        "constraints_detail[0].blocked_technique",
        "expected non-empty text",
    ),
    "detail not an object": (
        lambda row: row["constraints_detail"].__setitem__(0, "no slicing"),
        "constraints_detail[0]",
        "expected an object",
    ),
    "unknown check key": (
        _detail(0, "check", {"loops": ["For"]}),
        "constraints_detail[0].check.loops",
        "unknown rule key; allowed: calls, imports, nodes, operators, names",
    ),
    "check rule not a list": (
        _detail(0, "check", {"calls": "sorted"}),
        "constraints_detail[0].check.calls",
        "expected a list of names",
    ),
    "check node class unknown": (
        _detail(1, "check", {"calls": ["sorted"], "nodes": ["Fro"]}),
        "constraints_detail[1].check.nodes",
        "'Fro' is not an ast node class",
    ),
    "check operator class unknown": (
        _detail(0, "check", {"operators": ["Modulo"]}),
        "constraints_detail[0].check.operators",
        "'Modulo' is not an ast operator class",
    ),
    "empty test code": (_set("test_code", "  \n"), "test_code", "empty"),
    "empty reference": (_set("reference_solution", ""), "reference_solution", "empty"),
    "id not text": (_set("id", {"n": 1}), "id", "expected a non-empty string"),
}


@pytest.mark.parametrize("case", BAD_EXPLORE, ids=list(BAD_EXPLORE))
def test_bad_explore_row_refused_by_line_and_field(case: str, tmp_path: Path) -> None:
    change, field, message = BAD_EXPLORE[case]
    rows = release_rows()  # levels 0, 1, 2: the bad one is level 2, on line 3
    change(rows[2])
    path = write_rows(tmp_path / "bad.jsonl", rows)
    tasks, errors = load_explore(path)
    assert [t.id for t in tasks] == ["7-L0", "7-L1"]
    assert [(e.line, e.field) for e in errors] == [(3, field)]
    assert message in errors[0].message
    assert str(errors[0]) == f"{path}:3: {field}: {errors[0].message}"


def test_not_json_and_not_objects_refused_while_the_rest_load(tmp_path: Path) -> None:
    good = release_rows()
    path = write_rows(
        tmp_path / "mixed.jsonl", [good[0], "{not json", "", "[1, 2]", good[1], "42", good[2]]
    )
    tasks, errors = load_explore(path)
    assert [t.level for t in tasks] == [0, 1, 2]
    assert [(e.line, e.field) for e in errors] == [(2, "row"), (4, "row"), (6, "row")]
    assert errors[0].message.startswith("not valid JSON (column 2:")
    assert errors[1].message == "expected a JSON object; got [1, 2]"


def test_duplicate_ids_refused_after_the_first(tmp_path: Path) -> None:
    rows = release_rows()
    explicit = dict(rows[1], id="7-L0")  # clashes with the derived id of line 1
    path = write_rows(tmp_path / "dup.jsonl", [rows[0], explicit, rows[2], rows[2]])
    tasks, errors = load_explore(path)
    assert [t.id for t in tasks] == ["7-L0", "7-L2"]
    assert [str(e) for e in errors] == [
        f"{path}:2: id: duplicate id '7-L0' (first at line 1)",
        f"{path}:4: id: duplicate id '7-L2' (first at line 3)",
    ]


def test_every_bad_field_of_a_row_is_named(tmp_path: Path) -> None:
    row = release_rows()[1]
    del row["question"]
    row["test_code"] = ""
    row["constraints_detail"][0].pop("expected_impact")
    tasks, errors = load_explore(write_rows(tmp_path / "x.jsonl", [row]))
    assert tasks == []
    assert [e.field for e in errors] == [
        "question",
        "constraints_detail[0].expected_impact",
        "test_code",
    ]


BAD_COMBO = {
    "missing full tests": (_drop("full_test_func"), "full_test_func", "missing"),
    "empty full tests": (_set("full_test_func", " "), "full_test_func", "empty"),
    "missing solution": (_drop("canonical_solution"), "canonical_solution", "missing"),
    "missing question": (_drop("question"), "question", "missing"),
    "demo tests not text": (_set("demo_test_func", 5), "demo_test_func", "expected a string"),
    "sources not a list": (_set("source_solutions", {"a": 1}), "source_solutions", "list"),
    "empty source": (_set("source_solutions", ["x = 1", ""]), "source_solutions[1]", "non-empty"),
    "domains not text": (_set("domains", [1]), "domains[0]", "got 1"),
}


@pytest.mark.parametrize("case", BAD_COMBO, ids=list(BAD_COMBO))
def test_bad_combo_row_refused_by_line_and_field(case: str, tmp_path: Path) -> None:
    change, field, message = BAD_COMBO[case]
    rows = combo_rows()
    change(rows[1])
    path = write_rows(tmp_path / "bad.jsonl", rows)
    tasks, errors = load_combo(path)
    assert [t.id for t in tasks] == ["combo-1"]
    assert [(e.line, e.field) for e in errors] == [(2, field)]
    assert message in errors[0].message
    assert import_report(path)["errors"] == [str(errors[0])]


def test_combo_duplicate_ids(tmp_path: Path) -> None:
    rows = combo_rows()
    path = write_rows(tmp_path / "dup.jsonl", [dict(rows[0], id="combo-2"), rows[1]])
    tasks, errors = load_combo(path)
    assert [t.id for t in tasks] == ["combo-2"]
    assert [(e.line, e.field) for e in errors] == [(2, "id")]


# ---- import report and kind detection ----


def test_import_refuses_check_names_the_checker_would_never_match(tmp_path: Path) -> None:
    rows = release_rows()
    rows[1]["constraints_detail"][0]["check"] = {"nodes": ["Slice", "Fro"]}
    rows[2]["constraints_detail"][0]["check"] = {"nodes": ["Slice", "Recursion"]}
    path = write_rows(tmp_path / "rules.jsonl", rows)
    report = import_report(path)
    assert report["rows"] == 2
    assert report["errors"] == [
        f"{path}:2: constraints_detail[0].check.nodes: 'Fro' is not an ast node class (For, "
        "While, ListComp, Lambda...) nor 'Recursion'"
    ]


def test_import_report_counts_valid_rows_and_lists_errors(tmp_path: Path) -> None:
    rows = release_rows()
    rows[1]["level"] = -3
    path = write_rows(tmp_path / "r.jsonl", ["oops", *rows])
    report = import_report(path)
    assert report["kind"] == "explore"  # from the first row that is an object (line 2)
    assert report["rows"] == 2
    assert report["errors"] == [
        f"{path}:1: row: not valid JSON (column 1: Expecting value)",
        f"{path}:3: level: expected an integer >= 0; got -3",
    ]
    json.dumps(report)


def test_kind_detection_and_unusable_files(tmp_path: Path) -> None:
    assert detect_kind(RELEASE_EXPLORE) == "explore"
    assert detect_kind(RELEASE_COMBO) == "combo"
    with pytest.raises(InvalidFile, match="no JSON object rows"):
        import_report(write_rows(tmp_path / "empty.jsonl", [""]))
    with pytest.raises(InvalidFile, match=r"cannot tell Explore from Combo rows.*got name, x"):
        import_report(write_rows(tmp_path / "other.jsonl", [{"name": 1, "x": 2}]))
    with pytest.raises(InvalidFile, match="no such file"):
        load_explore(tmp_path / "absent.jsonl")
    with pytest.raises(InvalidFile, match="no such file"):
        load_combo(tmp_path / "absent.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"question": "caf\xe9"}\n')
    with pytest.raises(InvalidFile, match="UTF-8"):
        load_combo(tmp_path / "latin1.jsonl")


def test_default_paths_are_the_builtin_files() -> None:
    assert EXPLORE_FILE.name == "explore.jsonl" and EXPLORE_FILE.parent.name == "data"
    assert load_explore(None)[0] == load_explore(EXPLORE_FILE)[0]


# ---- records ----


def test_explore_levels_groups_in_first_seen_order_and_sorts_levels() -> None:
    tasks, _ = load_explore(RELEASE_EXPLORE)
    other = [dataclasses.replace(t, id=f"9-L{t.level}", problem_id="9") for t in tasks]
    mixed = [other[2], tasks[1], other[0], tasks[2], tasks[0], other[1]]
    grouped = explore_levels(mixed)
    assert list(grouped) == ["9", "7"]
    assert [t.id for t in grouped["7"]] == ["7-L0", "7-L1", "7-L2"]
    assert [t.level for t in grouped["9"]] == [0, 1, 2]
    assert explore_levels([]) == {}


def test_constraint_check_is_frozen_and_validated() -> None:
    constraint = Constraint("No loops.", "loops", "recursion", "look for for", {"nodes": ["For"]})
    assert constraint.check == {"nodes": ("For",)}
    with pytest.raises(TypeError):
        constraint.check["calls"] = ("max",)  # type: ignore[index]
    assert Constraint("a", "b", "c", "d").check == {}
    with pytest.raises(ConfigError, match="unknown key 'loops'; allowed: calls, imports"):
        Constraint("a", "b", "c", "d", {"loops": ("For",)})
    with pytest.raises(ConfigError, match="expected a list of non-empty names"):
        Constraint("a", "b", "c", "d", {"calls": "sorted"})
    tasks, _ = load_explore(EXPLORE_FILE)
    assert len({hash(t) for t in tasks}) == len(tasks)


def test_domains_are_the_papers_fourteen_tags_in_order() -> None:
    assert len(DOMAINS) == 14 == len(set(DOMAINS))
    assert DOMAINS[0] == "Algorithms & Problem Solving"
    assert DOMAINS[5] == "Web Development & Frameworks"
    assert DOMAINS[-2:] == ("Error Handling & Debugging", "Others")


def test_row_error_text() -> None:
    assert str(RowError("f.jsonl", 4, "level", "missing")) == "f.jsonl:4: level: missing"
    assert str(RowError("f.jsonl", 4, "", "not JSON")) == "f.jsonl:4: not JSON"
