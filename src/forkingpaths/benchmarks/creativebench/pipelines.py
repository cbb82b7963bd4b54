"""CreativeBench construction pipelines: Combo (Algorithm 1) and Explore (Algorithm 2)."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import logging
import math
import random
import re
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field

from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.benchmarks.creativebench.tasks import (
    CHECK_KEYS,
    Constraint,
    ExploreTask,
    RowError,
    load_combo,
    load_explore,
)
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile, SpecMismatch, shown
from forkingpaths.core.records import ModelCallRecord, ModelOptions
from forkingpaths.models.text import json_values

if TYPE_CHECKING:
    from forkingpaths.benchmarks.creativebench.constraints import JudgeResult
    from forkingpaths.benchmarks.creativebench.novelty import EmbeddingBackend
    from forkingpaths.benchmarks.creativebench.sandbox import ExecResult, Sandbox
    from forkingpaths.core.chat import ChatModel, Completion
    from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)

T = TypeVar("T")

CONFIG_FILE = "pipeline.json"
"""The settings a pipeline directory was built with; a re-run with other settings is refused."""
STATE_FILE = "state.jsonl"
"""One line per finished item (Combo: a fusion; Explore: a level or a seed); resume reads it."""
CALLS_FILE = "calls.jsonl"
"""One line per model call: the item, then the ModelCallRecord fields."""
REPORT_FILE = "report.json"
COMBO_ROWS = "combo.jsonl"
EXPLORE_ROWS = "explore.jsonl"
"""Kept rows, in the release format of `tasks.py` (contract §1)."""

PARSE_RETRIES = 2
"""Corrective turns after a reply the pipeline cannot read (the request is asked 1 + this)."""
DIFFICULTY_TEMPERATURE = 0.8
"""Sampling temperature of the difficulty check's solve attempts (the paper samples five
answers and does not say at what temperature; 0.8 keeps samples different)."""
MIN_CASES = 3
"""Fewest test cases a Combo item needs: the demo test shows the first three."""
DEMO_CASES = 3
MAX_INPUTS = 20
"""Argument lists kept from the input-generation reply (the prompt asks for 8 to 12)."""
INPUTS_WANTED = "8 to 12"
MAX_RESULT_CHARS = 2000
"""Longest repr of one expected output written into a test (longer ones are not test cases)."""
ERROR_CHARS = 3000
"""Tail of a sandbox error shown to the repair and refine requests."""
WORD_DIMENSIONS = 4096

_OUTPUT_MARKER = "@@creativebench-outputs@@"
_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_ENTRY_LINE = re.compile(r"entry[\s_-]*point[\s*_`]*:[\s*_`]*([A-Za-z_]\w*)", re.IGNORECASE)
_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL | re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_]+")
_PYTHON_TAGS = ("python", "py", "python3", "")


# ---- inputs and results ----


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


class PipelineReport(BaseModel):
    """What a pipeline directory holds after a run (cumulative over resumed runs)."""

    pipeline: Literal["combo", "explore"]
    """Which pipeline built the directory."""
    kept: int = 0
    """Rows written (Explore: levels, level 0 included)."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Reason -> items dropped for it (Explore: seeds whose loop ended on a failure)."""
    flagged: int = 0
    """Kept rows carrying a diversity flag (Combo)."""
    calls: int = 0
    """Model calls logged in calls.jsonl."""
    finished: int = 0
    """Items finished (Combo: fusions tried; Explore: seeds done)."""
    resumed: int = 0
    """Items found finished when this run started, and skipped."""
    stopped: dict[str, int] = Field(default_factory=dict)
    """Explore: seeds by why their level loop ended (`max_levels` included)."""


# ---- source components ----


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


# ---- reading replies ----


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language tag in lower case, code) of every fenced block of `text`, in order."""
    return [(tag.lower(), code.strip("\n")) for tag, code in _FENCE.findall(text)]


def first_code(text: str, language: str = "python") -> str | None:
    """The first fenced block tagged `language` (or untagged), else the first block, else None."""
    blocks = code_blocks(text)
    wanted = _PYTHON_TAGS if language == "python" else (language.lower(), "")
    for tag, code in blocks:
        if tag in wanted and code.strip():
            return code
    return blocks[0][1] if blocks and blocks[0][1].strip() else None


def top_level_functions(code: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """Name -> node of the module-level functions, None when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def strip_main_guard(code: str) -> str:
    """`code` without its module-level `if __name__ == "__main__":` blocks (unchanged when it
    does not parse): a reference solution must not run anything when tests are appended."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    lines = code.splitlines()
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, ast.If) and _is_main_test(node.test)
    ]
    for start, end in reversed(spans):
        del lines[start - 1 : end]
    return "\n".join(lines).rstrip() + "\n" if spans else code


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return isinstance(test.ops[0], ast.Eq) and len(names) == 1 and len(consts) == 1


@dataclass(frozen=True)
class Fusion:
    """A fused solution as the fusion (or repair) request returned it."""

    entry: str
    """Name of the entry function the tests call."""
    solution: str
    demo: str
    """Defines `demo_testing()`, which runs the entry function on a few inputs."""


def read_fusion(text: str) -> tuple[Fusion | None, str]:
    """(Fusion, "") from a fusion or repair reply, else (None, why not).

    The solution is the first Python block that does not define `demo_testing`, the demo the
    first that does. The entry point is the `Entry point: NAME` line, or the only public
    top-level function; when the solution parses it must define the entry point at top level
    (a solution that does not parse is accepted here: the sandbox reports it and repair fixes it).
    """
    blocks = [code for tag, code in code_blocks(text) if tag in _PYTHON_TAGS and code.strip()]
    demos = [b for b in blocks if re.search(r"^\s*def\s+demo_testing\s*\(", b, re.MULTILINE)]
    solutions = [b for b in blocks if b not in demos]
    if not solutions:
        return None, "no ```python block with the fused solution"
    if not demos:
        return None, "no ```python block defining demo_testing()"
    solution = strip_main_guard(solutions[0])
    functions = top_level_functions(solution)
    match = _ENTRY_LINE.search(text)
    if match:
        entry = match.group(1)
    elif functions is not None:
        public = [name for name in functions if not name.startswith("_")]
        if len(public) != 1:
            return None, "no `Entry point: <name>` line naming the entry function"
        entry = public[0]
    else:
        return None, "no `Entry point: <name>` line naming the entry function"
    if functions is not None and entry not in functions:
        return None, f"the entry point {entry!r} is not a top-level function of the solution"
    return Fusion(entry=entry, solution=solution, demo=demos[0]), ""


def entry_arity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int | None]:
    """(fewest, most) positional arguments the function accepts (most None with *args)."""
    positional = [*node.args.posonlyargs, *node.args.args]
    required = len(positional) - len(node.args.defaults)
    return required, None if node.args.vararg is not None else len(positional)


def entry_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """`def name(params) -> returns` of a function node."""
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"def {node.name}({ast.unparse(node.args)}){returns}"


def read_inputs(text: str, arity: tuple[int, int | None]) -> tuple[list[list[Any]] | None, str]:
    """(argument lists, "") from an input-generation reply, else (None, why not).

    Accepts the first JSON array of arrays; each must fit the entry function's arity; at most
    MAX_INPUTS are kept, at least MIN_CASES needed; repeated argument lists are kept once.
    """
    low, high = arity
    for value in json_values(text):
        if not (isinstance(value, list) and value and all(isinstance(v, list) for v in value)):
            continue
        for number, args in enumerate(value, start=1):
            if len(args) < low or (high is not None and len(args) > high):
                most = "any number of" if high is None else f"at most {high}"
                return None, (
                    f"argument list {number} has {len(args)} values; the entry function takes"
                    f" at least {low} and {most} positional arguments"
                )
        unique: list[list[Any]] = []
        keys: set[str] = set()
        for args in value:
            key = json.dumps(args, sort_keys=True)
            if key not in keys:
                keys.add(key)
                unique.append(args)
        if len(unique) < MIN_CASES:
            return None, f"only {len(unique)} distinct argument lists; write {INPUTS_WANTED}"
        return unique[:MAX_INPUTS], ""
    return None, "no JSON array of argument arrays"


def read_question(text: str, entry: str) -> tuple[str | None, str]:
    """(statement, "") from a problem-synthesis reply, else (None, why not)."""
    match = _QUESTION.search(text)
    if match is None or not match.group(1).strip():
        return None, "no non-empty <question>...</question> block"
    question = match.group(1).strip()
    if entry not in question:
        return None, f"the statement does not name the entry function `{entry}`"
    return question, ""


def read_audit(text: str) -> tuple[dict[str, tuple[bool, str]] | None, str]:
    """(rule id -> (passed, reason), "") from an audit reply, else (None, why not).

    The verdicts sit under `"rules"` (or at the top level of the object); each is
    `{"pass": bool, "reason": str}` or a bare boolean; every rule of AUDIT_RULES is needed.
    """
    reason = "no JSON object with a verdict per rule"
    for value in json_values(text):
        if not isinstance(value, dict):
            continue
        rules = value.get("rules", value)
        if not isinstance(rules, dict):
            continue
        verdicts: dict[str, tuple[bool, str]] = {}
        missing: list[str] = []
        for rule in prompts.AUDIT_RULES:
            entry = rules.get(rule)
            if isinstance(entry, bool):
                verdicts[rule] = (entry, "")
            elif isinstance(entry, dict) and isinstance(entry.get("pass"), bool):
                verdicts[rule] = (entry["pass"], str(entry.get("reason", "")))
            else:
                missing.append(rule)
        if not missing:
            return verdicts, ""
        if len(missing) < len(prompts.AUDIT_RULES):
            reason = f"no boolean verdict for {', '.join(missing)}"
    return None, reason


def read_constraint(text: str, existing: Sequence[Constraint]) -> tuple[Constraint | None, str]:
    """(Constraint, "") from a constraint-generation reply, else (None, why not).

    Needs the four text fields; `check` is optional and limited to CHECK_KEYS with lists of
    strings. A constraint that repeats one in force (same text or same blocked technique) is
    refused.
    """
    fields_ = ("constraint", "blocked_technique", "expected_impact", "verification_hint")
    for value in json_values(text):
        if not isinstance(value, dict) or "constraint" not in value:
            continue
        for key in fields_:
            if not isinstance(value.get(key), str) or not value[key].strip():
                return None, f"`{key}` must be a non-empty string, got {shown(value.get(key))}"
        check, problem = _read_check(value.get("check"))
        if problem:
            return None, problem
        new = Constraint(
            constraint=value["constraint"].strip(),
            blocked_technique=value["blocked_technique"].strip(),
            expected_impact=value["expected_impact"].strip(),
            verification_hint=value["verification_hint"].strip(),
            check=check,
        )
        for number, old in enumerate(existing, start=1):
            same_text = _norm(old.constraint) == _norm(new.constraint)
            if same_text or _norm(old.blocked_technique) == _norm(new.blocked_technique):
                return None, f"constraint {number} in force already blocks that; block another"
        return new, ""
    return None, "no JSON object with a `constraint` field"


def _read_check(value: Any) -> tuple[dict[str, tuple[str, ...]], str]:
    """Rules of a generated `check` (empty lists dropped), or ({}, why they are refused): the
    static checker's own validation, so a rule it could never match is sent back."""
    from forkingpaths.benchmarks.creativebench.constraints import validate_rules

    if value is None:
        return {}, ""
    if not isinstance(value, dict):
        return {}, f"`check` must be an object, got {shown(value)}"
    for key, names in value.items():
        if key not in CHECK_KEYS:
            return {}, f"`check` key {key!r} is not one of {', '.join(CHECK_KEYS)}"
        if not isinstance(names, list):
            return {}, f"`check.{key}` must be a list of names, got {shown(names)}"
    try:
        validate_rules(value)
    except ConfigError as exc:
        return {}, str(exc)
    return {key: tuple(names) for key, names in value.items() if names}, ""


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


# ---- test functions built from (inputs, outputs) ----


@dataclass(frozen=True)
class IOCase:
    """One call of the entry function and the repr of what the reference returned."""

    args: tuple[Any, ...]
    expected: str
    approximate: bool = False
    """The result holds floats: compared with a tolerance."""


_APPROX_HELPER = """    import math

    def approx_equal(actual, expected):
        if isinstance(expected, float) or isinstance(actual, float):
            if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
                return False
            return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
        if isinstance(expected, (list, tuple)):
            return (
                type(actual) is type(expected)
                and len(actual) == len(expected)
                and all(approx_equal(a, e) for a, e in zip(actual, expected))
            )
        if isinstance(expected, dict):
            return (
                isinstance(actual, dict)
                and actual.keys() == expected.keys()
                and all(approx_equal(actual[k], expected[k]) for k in expected)
            )
        return actual == expected

"""


def build_test_function(entry: str, cases: Sequence[IOCase]) -> str:
    """An assert-based `test()` over `cases`, called under `if __name__ == "__main__"`.

    Exact equality, except for results holding floats, compared with a 1e-9 tolerance (the
    helper is nested in `test()` so it cannot clash with a solution's names).
    """
    lines = ["def test():"]
    if any(case.approximate for case in cases):
        lines.append(_APPROX_HELPER.rstrip("\n"))
        lines.append("")
    for case in cases:
        call = f"{entry}({', '.join(repr(a) for a in case.args)})"
        if case.approximate:
            lines.append(f"    assert approx_equal({call}, {case.expected})")
        else:
            lines.append(f"    assert {call} == {case.expected}")
    lines += ["", "", 'if __name__ == "__main__":', "    test()", ""]
    return "\n".join(lines)


_HARNESS = Template("""

import ast as _cb_ast
import contextlib as _cb_contextlib
import io as _cb_io
import json as _cb_json
import sys as _cb_sys


def _cb_has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_cb_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_cb_has_float(k) or _cb_has_float(v) for k, v in value.items())
    return False


def _cb_outcomes(function, inputs):
    outcomes = []
    for args in inputs:
        sink = _cb_io.StringIO()
        try:
            with _cb_contextlib.redirect_stdout(sink):
                value = function(*args)
        except Exception as exc:
            outcomes.append({"ok": False, "error": type(exc).__name__ + ": " + str(exc)[:200]})
            continue
        text = repr(value)
        try:
            literal = _cb_ast.literal_eval(text) == value
        except Exception:
            literal = False
        if not literal:
            outcomes.append({"ok": False, "error": "result has no literal form: " + text[:80]})
        elif len(text) > $limit:
            outcomes.append({"ok": False, "error": "result too long for a test"})
        else:
            outcomes.append({"ok": True, "repr": text, "float": _cb_has_float(value)})
    return outcomes


if __name__ == "__main__":
    _cb_result = _cb_outcomes($entry, _cb_json.loads($inputs))
    _cb_sys.stdout.write("\\n" + $marker + _cb_json.dumps(_cb_result) + "\\n")
""")


def output_harness(entry: str, inputs: Sequence[Sequence[Any]]) -> str:
    """Test-side code that calls `entry` on each argument list and prints one marker line:
    per input `{"ok", "repr", "float"}` or `{"ok": false, "error"}` (the solution's own prints
    are swallowed so they cannot corrupt the line)."""
    return _HARNESS.substitute(
        entry=entry,
        inputs=repr(json.dumps([list(a) for a in inputs])),
        marker=repr(_OUTPUT_MARKER),
        limit=MAX_RESULT_CHARS,
    )


def read_outputs(stdout: str, count: int) -> list[dict[str, Any]] | None:
    """The harness's per-input outcomes from its stdout, None when the line is absent or
    does not hold `count` outcomes."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(_OUTPUT_MARKER):
            try:
                value = json.loads(line[len(_OUTPUT_MARKER) :])
            except ValueError:
                return None
            if isinstance(value, list) and len(value) == count:
                return value
            return None
    return None


# ---- the pipeline directory ----


class PipelineDir:
    """A pipeline's output directory: settings, state, rows, call log and report.

    Resume protocol: a row is appended to the rows file before its state line, so a crash
    between the two leaves a row that no state line commits; opening the directory removes such
    rows and any torn last line, and the item is built again.
    """

    def __init__(
        self, out_dir: Path, pipeline: Literal["combo", "explore"], config: Mapping[str, Any]
    ) -> None:
        self.path = Path(out_dir)
        self.pipeline: Literal["combo", "explore"] = pipeline
        self.config = dict(config)
        self.rows_path = self.path / (COMBO_ROWS if pipeline == "combo" else EXPLORE_ROWS)
        self.state: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []

    def open(self) -> None:
        """Create the directory or check its settings, then load state and committed rows."""
        self.path.mkdir(parents=True, exist_ok=True)
        config_path = self.path / CONFIG_FILE
        if config_path.exists():
            try:
                stored = json.loads(config_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise InvalidFile(f"{config_path}: not JSON ({exc})") from exc
            differing = sorted(
                key
                for key in set(stored) | set(self.config)
                if stored.get(key) != self.config.get(key)
            )
            if differing:
                changes = "; ".join(
                    f"{k}: {shown(stored.get(k))} -> {shown(self.config.get(k))}" for k in differing
                )
                raise SpecMismatch(
                    f"{self.path} holds a {stored.get('pipeline', '?')} pipeline built with other"
                    f" settings ({changes}); use another output directory or the same settings"
                )
        else:
            config_path.write_text(json.dumps(self.config, indent=2) + "\n", encoding="utf-8")
        self.state = _read_jsonl(self.path / STATE_FILE)
        committed = {e["item"] for e in self.state if e.get("status") == "kept"}
        rows = _read_jsonl(self.rows_path)
        self.rows = [r for r in rows if r.get("id") in committed]
        if len(self.rows) != len(rows):
            log.warning(
                "%s: removing %d rows no state line commits (interrupted run)",
                self.rows_path,
                len(rows) - len(self.rows),
            )
            _write_jsonl(self.rows_path, self.rows)

    def commit(self, entry: Mapping[str, Any], row: Mapping[str, Any] | None = None) -> None:
        """Append `row` (when given) to the rows file, then `entry` to the state file."""
        if row is not None:
            _append_jsonl(self.rows_path, row)
            self.rows.append(dict(row))
        _append_jsonl(self.path / STATE_FILE, entry)
        self.state.append(dict(entry))

    def record_call(self, item: str, completion: Completion, purpose: str) -> None:
        """Append one model call to calls.jsonl."""
        record = ModelCallRecord.from_completion(completion, purpose=purpose)
        _append_jsonl(self.path / CALLS_FILE, {"item": item, **record.model_dump(mode="json")})

    def report(self, resumed: int) -> PipelineReport:
        """The report of the directory as it stands, also written to report.json."""
        calls_path = self.path / CALLS_FILE
        calls = 0
        if calls_path.exists():
            with calls_path.open(encoding="utf-8") as handle:
                calls = sum(1 for line in handle if line.strip())
        kept = sum(1 for e in self.state if e.get("status") == "kept")
        flagged = sum(1 for e in self.state if e.get("status") == "kept" and e.get("flag"))
        if self.pipeline == "combo":
            finished = [e for e in self.state if e.get("status") in ("kept", "dropped")]
            dropped = Counter(e["reason"] for e in finished if e["status"] == "dropped")
            stopped: Counter[str] = Counter()
        else:
            finished = [e for e in self.state if e.get("status") == "done"]
            stopped = Counter(e["reason"] for e in finished)
            dropped = Counter(e["reason"] for e in finished if e["reason"] != "max_levels")
        report = PipelineReport(
            pipeline=self.pipeline,
            kept=kept,
            dropped=dict(sorted(dropped.items())),
            flagged=flagged,
            calls=calls,
            finished=len(finished),
            resumed=resumed,
            stopped=dict(sorted(stopped.items())),
        )
        (self.path / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n")
        return report


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Objects of a JSONL file ([] when absent); a torn last line is cut off the file."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            if number == len(lines):  # no newline after it: the write was cut short
                log.warning("%s:%d: cutting off an incomplete last line", path, number)
                path.write_text("\n".join(lines[:-1]) + ("\n" if len(lines) > 1 else ""))
                break
            raise InvalidFile(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise InvalidFile(f"{path}:{number}: expected a JSON object, got {shown(value)}")
        out.append(value)
    return out


def _append_jsonl(path: Path, value: Mapping[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(value, ensure_ascii=False) + "\n")


def _write_jsonl(path: Path, values: Sequence[Mapping[str, Any]]) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(
        "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8"
    )
    temporary.replace(path)


class LoggedModel:
    """A ChatModel that logs every call it makes to a PipelineDir (for callees such as
    `judge_constraints` that call a model themselves)."""

    def __init__(self, model: ChatModel, directory: PipelineDir, item: str, purpose: str) -> None:
        self.name = model.name
        self._model, self._directory, self._item, self._purpose = model, directory, item, purpose

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        completion = await self._model.complete(messages, params)
        self._directory.record_call(self._item, completion, self._purpose)
        return completion


async def ask(
    model: ChatModel,
    messages: list[Message],
    read: Callable[[str], tuple[T | None, str]],
    *,
    directory: PipelineDir,
    item: str,
    purpose: str,
    params: ModelParams | None = None,
    retries: int = PARSE_RETRIES,
) -> tuple[T | None, str]:
    """Ask until `read` accepts a reply (1 + `retries` calls, a corrective turn after each
    refusal); (value, "") or (None, the last reason). Every call is logged."""
    conversation = list(messages)
    reason = "no reply"
    for _ in range(retries + 1):
        completion = await model.complete(conversation, params or ModelParams())
        directory.record_call(item, completion, purpose)
        value, reason = read(completion.text)
        if value is not None:
            return value, ""
        conversation += [
            Message(role="assistant", content=completion.text),
            Message(role="user", content=prompts.CORRECTIVE.substitute(reason=reason)),
        ]
    return None, reason


def _passed(result: ExecResult) -> bool:
    from forkingpaths.benchmarks.creativebench.sandbox import Verdict

    return result.verdict == Verdict.PASSED


def error_text(result: ExecResult) -> str:
    """What a failed run says: the sandbox's detail, then the stderr tail (cut to ERROR_CHARS)."""
    parts = [p.strip() for p in (result.detail, result.stderr_tail) if p and p.strip()]
    text = "\n".join(dict.fromkeys(parts)) or f"no output (verdict {result.verdict})"
    return text if len(text) <= ERROR_CHARS else "..." + text[-ERROR_CHARS:]


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name}: expected an integer >= {minimum}, got {shown(value)}")


# ---- diversity ----


class WordCountEmbedding:
    """Offline text embedding for the diversity check: hashed word counts, log-scaled.

    Used when no embedding backend is given (the paper embeds problem statements with
    text-embedding-3-small); it sees shared wording, not shared meaning.
    """

    name = "word-counts"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for text in texts:
            vector = [0.0] * WORD_DIMENSIONS
            for word, count in Counter(_WORD.findall(text.lower())).items():
                vector[zlib.crc32(word.encode()) % WORD_DIMENSIONS] += 1.0 + math.log(count)
            vectors.append(vector)
        return vectors


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0 when either vector is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


# ---- Combo (Algorithm 1) ----


@dataclass
class _Outcome:
    """How one Combo item ended before the diversity check."""

    status: Literal["candidate", "dropped"]
    reason: str | None = None
    row: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)


class _Dropped(Exception):
    """Ends an item early with a reason for the report."""

    def __init__(self, reason: str, /, **detail: Any) -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def combo_item_id(seed: int, index: int) -> str:
    """Id of the `index`-th fusion (0-based) of a run with `seed`."""
    return f"fused-{seed}-{index:04d}"


def pick_components(
    components: Sequence[SourceComponent], k: int, seed: int, index: int
) -> list[SourceComponent]:
    """k components from k distinct domains for item `index`: the same for the same seed and
    index whatever else the run did."""
    rng = random.Random(f"creativebench-combo:{seed}:{index}")
    by_domain: dict[str, list[SourceComponent]] = {}
    for component in sorted(components, key=lambda c: c.id):
        by_domain.setdefault(component.domain, []).append(component)
    domains = rng.sample(sorted(by_domain), k)
    return [rng.choice(by_domain[d]) for d in domains]


def difficulty_label(solved: int, samples: int) -> str:
    """ "hard" when no sample solved it, "medium" up to half, "easy" above (our labels)."""
    if samples == 0:
        return ""
    if solved == 0:
        return "hard"
    return "medium" if solved * 2 <= samples else "easy"


class _ComboBuilder:
    """Algorithm 1 for one directory: builds items, checks diversity, commits in index order."""

    def __init__(
        self,
        model: ChatModel,
        sandbox: Sandbox,
        components: Sequence[SourceComponent],
        directory: PipelineDir,
        *,
        k: int,
        repair_attempts: int,
        difficulty_samples: int,
        diversity_threshold: float,
        embedding: EmbeddingBackend,
        seed: int,
    ) -> None:
        self.model, self.sandbox, self.components, self.dir = model, sandbox, components, directory
        self.k, self.repair_attempts = k, repair_attempts
        self.difficulty_samples, self.threshold = difficulty_samples, diversity_threshold
        self.embedding, self.seed = embedding, seed
        self._kept_vectors: list[tuple[str, list[float]]] | None = None

    async def build(self, index: int) -> _Outcome:
        item = combo_item_id(self.seed, index)
        chosen = pick_components(self.components, self.k, self.seed, index)
        try:
            return await self._build(item, chosen)
        except _Dropped as dropped:
            return _Outcome("dropped", dropped.reason, detail=dropped.detail)

    async def _build(self, item: str, chosen: list[SourceComponent]) -> _Outcome:
        log.info("%s: fusing %s", item, ", ".join(f"{c.id} ({c.domain})" for c in chosen))
        fusion, repairs = await self._fuse(item, chosen)
        functions = top_level_functions(fusion.solution) or {}
        node = functions.get(fusion.entry)
        if node is None:
            raise _Dropped("entry_point_missing", entry=fusion.entry)
        cases, unusable = await self._cases(item, fusion, node)
        demo_test = build_test_function(fusion.entry, cases[:DEMO_CASES])
        full_test = build_test_function(fusion.entry, cases)
        for tests in (demo_test, full_test):
            result = await self.sandbox.run(fusion.solution, tests)
            if not _passed(result):
                raise _Dropped("reference_fails_tests", error=error_text(result))
        question = await self._question(item, fusion, demo_test, full_test)
        solved = await self._difficulty(item, question, full_test)
        if self.difficulty_samples and solved == self.difficulty_samples:
            raise _Dropped("too_easy", solved=solved, samples=self.difficulty_samples)
        await self._audit(item, question, fusion.solution, demo_test, full_test)
        row = {
            "id": item,
            "question": question,
            "canonical_solution": fusion.solution,
            "demo_test_func": demo_test,
            "full_test_func": full_test,
            "language": "python",
            "difficulty": difficulty_label(solved, self.difficulty_samples),
            "source_solutions": [c.code for c in chosen],
            "domains": [c.domain for c in chosen],
        }
        detail = {
            "components": [c.id for c in chosen],
            "entry_point": fusion.entry,
            "repairs": repairs,
            "cases": len(cases),
            "unusable_inputs": unusable,
            "solved": solved,
            "samples": self.difficulty_samples,
        }
        return _Outcome("candidate", row=row, detail=detail)

    # Step 1: solution fusion, verified in the sandbox, repaired with the error fed back.
    async def _fuse(self, item: str, chosen: list[SourceComponent]) -> tuple[Fusion, int]:
        blocks = "\n\n".join(
            prompts.COMPONENT_BLOCK.substitute(
                number=number,
                domain=c.domain,
                description=c.description or "(no description)",
                code=c.code.strip("\n"),
            )
            for number, c in enumerate(chosen, start=1)
        )
        messages = [
            Message(role="system", content=prompts.FUSE_SYSTEM),
            Message(
                role="user",
                content=prompts.FUSE_USER.substitute(count=len(chosen), components=blocks),
            ),
        ]
        fusion, reason = await ask(
            self.model, messages, read_fusion, directory=self.dir, item=item, purpose="fuse"
        )
        if fusion is None:
            raise _Dropped("fusion_unreadable", reason=reason)
        domains = " and ".join(c.domain for c in chosen)
        repairs = 0
        while True:
            result = await self.sandbox.run(fusion.solution, _demo_program(fusion.demo))
            if _passed(result):
                return fusion, repairs
            if repairs == self.repair_attempts:
                raise _Dropped(
                    "fusion_failed", verdict=str(result.verdict), error=error_text(result)
                )
            repairs += 1
            log.info("%s: fused code failed (%s); repair %d", item, result.verdict, repairs)
            messages = [
                Message(role="system", content=prompts.REPAIR_SYSTEM),
                Message(
                    role="user",
                    content=prompts.REPAIR_USER.substitute(
                        domains=domains,
                        code=fusion.solution.strip("\n"),
                        demo=fusion.demo.strip("\n"),
                        verdict=str(result.verdict),
                        error=error_text(result),
                        entry=fusion.entry,
                    ),
                ),
            ]
            repaired, reason = await ask(
                self.model, messages, read_fusion, directory=self.dir, item=item, purpose="repair"
            )
            if repaired is None:
                raise _Dropped("fusion_unreadable", reason=reason)
            fusion = repaired

    # Step 2: inputs from the model, outputs from the sandbox, run twice to catch randomness.
    async def _cases(
        self, item: str, fusion: Fusion, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[list[IOCase], int]:
        if isinstance(node, ast.AsyncFunctionDef):
            raise _Dropped("entry_point_async", entry=fusion.entry)
        messages = [
            Message(role="system", content=prompts.INPUTS_SYSTEM),
            Message(
                role="user",
                content=prompts.INPUTS_USER.substitute(
                    code=fusion.solution.strip("\n"),
                    signature=entry_signature(node),
                    entry=fusion.entry,
                    wanted=INPUTS_WANTED,
                ),
            ),
        ]
        arity = entry_arity(node)
        inputs, reason = await ask(
            self.model,
            messages,
            lambda text: read_inputs(text, arity),
            directory=self.dir,
            item=item,
            purpose="inputs",
        )
        if inputs is None:
            raise _Dropped("inputs_unreadable", reason=reason)
        harness = output_harness(fusion.entry, inputs)
        runs = []
        for _ in range(2):
            result = await self.sandbox.run(fusion.solution, harness)
            outcomes = read_outputs(result.stdout_tail, len(inputs)) if _passed(result) else None
            if outcomes is None:
                raise _Dropped(
                    "outputs_failed", verdict=str(result.verdict), error=error_text(result)
                )
            runs.append(outcomes)
        cases: list[IOCase] = []
        for args, first, second in zip(inputs, runs[0], runs[1], strict=True):
            if first.get("ok") and first == second:
                cases.append(IOCase(tuple(args), first["repr"], bool(first.get("float"))))
        unusable = len(inputs) - len(cases)
        if len(cases) < MIN_CASES:
            raise _Dropped("too_few_cases", cases=len(cases), inputs=len(inputs))
        return cases, unusable

    # Step 3: the problem statement, reverse-engineered from solution and tests.
    async def _question(self, item: str, fusion: Fusion, demo_test: str, full_test: str) -> str:
        messages = [
            Message(role="system", content=prompts.QUESTION_SYSTEM),
            Message(
                role="user",
                content=prompts.QUESTION_USER.substitute(
                    code=fusion.solution.strip("\n"),
                    demo_test=demo_test.strip("\n"),
                    full_test=full_test.strip("\n"),
                    entry=fusion.entry,
                ),
            ),
        ]
        question, reason = await ask(
            self.model,
            messages,
            lambda text: read_question(text, fusion.entry),
            directory=self.dir,
            item=item,
            purpose="question",
        )
        if question is None:
            raise _Dropped("question_unreadable", reason=reason)
        return question

    # Step 4a: difficulty, `difficulty_samples` sampled solutions run against the full tests.
    async def _difficulty(self, item: str, question: str, full_test: str) -> int:
        if not self.difficulty_samples:
            return 0
        messages = [
            Message(role="system", content=prompts.SOLVE_SYSTEM),
            Message(role="user", content=prompts.SOLVE_USER.substitute(question=question)),
        ]

        async def sample(number: int) -> bool:
            params = ModelParams(temperature=DIFFICULTY_TEMPERATURE, seed=number)
            completion = await self.model.complete(messages, params)
            self.dir.record_call(item, completion, "difficulty")
            code = first_code(completion.text)
            if code is None:
                return False
            return _passed(await self.sandbox.run(code, full_test))

        results = await asyncio.gather(*(sample(n) for n in range(self.difficulty_samples)))
        return sum(results)

    # Step 4b: quality audit, the seven rules of App. D.1.1, any failure drops the item.
    async def _audit(
        self, item: str, question: str, solution: str, demo_test: str, full_test: str
    ) -> None:
        rules = "\n".join(
            prompts.AUDIT_RULE_LINE.substitute(rule=rule, text=text)
            for rule, text in prompts.AUDIT_RULES.items()
        )
        messages = [
            Message(role="system", content=prompts.AUDIT_SYSTEM),
            Message(
                role="user",
                content=prompts.AUDIT_USER.substitute(
                    question=question,
                    code=solution.strip("\n"),
                    demo_test=demo_test.strip("\n"),
                    full_test=full_test.strip("\n"),
                    rules=rules,
                ),
            ),
        ]
        verdicts, reason = await ask(
            self.model, messages, read_audit, directory=self.dir, item=item, purpose="audit"
        )
        if verdicts is None:
            raise _Dropped("audit_unreadable", reason=reason)
        failed = {rule: why for rule, (ok, why) in verdicts.items() if not ok}
        if failed:
            for rule, why in failed.items():
                log.warning("%s: quality audit failed %s: %s", item, rule, why or "(no reason)")
            raise _Dropped("quality_audit", failed_rules=failed)

    # Step 4c: diversity, against the questions kept before this item.
    async def diversity_flag(self, item: str, question: str) -> dict[str, Any] | None:
        if self._kept_vectors is None:
            kept = [(r["id"], r["question"]) for r in self.dir.rows]
            vectors = await self.embedding.embed([q for _, q in kept]) if kept else []
            self._kept_vectors = [(i, v) for (i, _), v in zip(kept, vectors, strict=True)]
        [vector] = await self.embedding.embed([question])
        best: tuple[float, str] | None = None
        for other, kept_vector in self._kept_vectors:
            similarity = cosine(vector, kept_vector)
            if best is None or similarity > best[0]:
                best = (similarity, other)
        self._kept_vectors.append((item, vector))
        if best is not None and best[0] > self.threshold:
            log.warning("%s: question %.3f similar to %s (flagged)", item, best[0], best[1])
            return {"similar_to": best[1], "cosine": round(best[0], 4)}
        return None

    async def commit(self, index: int, outcome: _Outcome) -> None:
        item = combo_item_id(self.seed, index)
        entry: dict[str, Any] = {"item": item, "index": index}
        if outcome.status == "dropped" or outcome.row is None:
            log.info("%s: dropped (%s)", item, outcome.reason)
            self.dir.commit(
                {**entry, "status": "dropped", "reason": outcome.reason, "detail": outcome.detail}
            )
            return
        row = dict(outcome.row)
        flag = await self.diversity_flag(item, row["question"])
        if flag is not None:
            row["diversity_flag"] = flag
        log.info("%s: kept%s", item, " (flagged)" if flag else "")
        self.dir.commit(
            {**entry, "status": "kept", "reason": None, "flag": flag, "detail": outcome.detail},
            row,
        )


def _demo_program(demo: str) -> str:
    """The demo block with a call of `demo_testing()` under the main guard."""
    return (
        strip_main_guard(demo).rstrip() + '\n\n\nif __name__ == "__main__":\n    demo_testing()\n'
    )


async def _ordered(
    indices: Sequence[int],
    build: Callable[[int], Awaitable[T]],
    commit: Callable[[int, T], Awaitable[None]],
    concurrency: int,
) -> None:
    """Build items `concurrency` at a time and commit each after the one before it, so what
    depends on earlier items (the diversity check) sees them in index order. The first
    exception cancels the rest (finished items stay committed)."""
    semaphore = asyncio.Semaphore(concurrency)
    done = {index: asyncio.Event() for index in indices}
    previous = dict(zip(indices[1:], indices[:-1], strict=True))

    async def one(index: int) -> None:
        async with semaphore:
            outcome = await build(index)
        if index in previous:
            await done[previous[index]].wait()
        await commit(index, outcome)
        # Set only on success: after a failure the task group cancels the waiting items, and
        # none may commit past the gap.
        done[index].set()

    await _run_all([one(index) for index in indices])


async def _run_all(coroutines: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run `coroutines` concurrently; the first failure cancels the others and is raised as
    itself (not wrapped in an ExceptionGroup), so a ModelError reaches the caller as one."""
    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(coroutine)
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None


async def build_combo(
    model: ChatModel,
    sandbox: Sandbox,
    components: list[SourceComponent] | None,
    out_dir: Path,
    *,
    n: int,
    k: int = 2,
    repair_attempts: int = 2,
    difficulty_samples: int = 5,
    diversity_threshold: float = 0.85,
    embedding: EmbeddingBackend | None = None,
    seed: int = 0,
    concurrency: int = 4,
) -> PipelineReport:
    """Algorithm 1: `n` fusion attempts of `k` components from different domains.

    Each item: fusion (model) -> sandbox run of its demo, repaired with the error up to
    `repair_attempts` times -> argument lists (model) -> outputs (reference run twice in the
    sandbox; inputs that raise, print no literal or differ between runs are not cases) ->
    demo test (first 3 cases) and full test built by us -> problem statement (model) ->
    filters: difficulty (`difficulty_samples` sampled solutions; all passing drops it; 0 turns
    the check off), quality audit (seven rules; any failure drops it), diversity (cosine of
    question embeddings > `diversity_threshold` with an earlier kept row: kept with a
    `diversity_flag`). Rows go to `out_dir/combo.jsonl`; `components=None` uses the built-in
    Combo data's source solutions; `embedding=None` uses WordCountEmbedding. Re-running on the
    same directory skips finished items (`n` may grow; other settings must match).
    """
    _check_int("n", n, 0)
    _check_int("k", k, 2)
    _check_int("repair_attempts", repair_attempts, 0)
    _check_int("difficulty_samples", difficulty_samples, 0)
    _check_int("concurrency", concurrency, 1)
    if isinstance(diversity_threshold, bool) or not (
        isinstance(diversity_threshold, int | float) and 0 < diversity_threshold <= 1
    ):
        raise ConfigError(
            f"diversity_threshold: expected a cosine in (0, 1], got {shown(diversity_threshold)}"
        )
    components = default_components() if components is None else list(components)
    domains = {c.domain for c in components}
    if len(domains) < k:
        raise ConfigError(
            f"k={k} needs components from at least {k} domains; got {len(components)}"
            f" components from {len(domains)} ({', '.join(sorted(domains)) or 'none'})"
        )
    backend: EmbeddingBackend = embedding if embedding is not None else WordCountEmbedding()
    digest = hashlib.sha256(
        json.dumps(sorted((c.id, c.domain, c.code, c.description) for c in components)).encode()
    ).hexdigest()
    directory = PipelineDir(
        out_dir,
        "combo",
        {
            "pipeline": "combo",
            "model": model.name,
            "k": k,
            "repair_attempts": repair_attempts,
            "difficulty_samples": difficulty_samples,
            "diversity_threshold": diversity_threshold,
            "embedding": backend.name,
            "seed": seed,
            "components": digest,
        },
    )
    directory.open()
    finished = {e["index"] for e in directory.state if e.get("status") in ("kept", "dropped")}
    todo = [i for i in range(n) if i not in finished]
    resumed = n - len(todo)
    if resumed:
        log.info("combo: %d of %d items already finished, skipped", resumed, n)
    builder = _ComboBuilder(
        model,
        sandbox,
        components,
        directory,
        k=k,
        repair_attempts=repair_attempts,
        difficulty_samples=difficulty_samples,
        diversity_threshold=diversity_threshold,
        embedding=backend,
        seed=seed,
    )
    await _ordered(todo, builder.build, builder.commit, concurrency)
    report = directory.report(resumed)
    log.info("combo: kept %d, dropped %s, flagged %d", report.kept, report.dropped, report.flagged)
    return report


# ---- Explore (Algorithm 2) ----


def constraint_row(constraint: Constraint) -> dict[str, Any]:
    """The release form of one constraint (`check` only when it has rules)."""
    row: dict[str, Any] = {
        "constraint": constraint.constraint,
        "blocked_technique": constraint.blocked_technique,
        "expected_impact": constraint.expected_impact,
        "verification_hint": constraint.verification_hint,
    }
    if constraint.check:
        row["check"] = {key: list(names) for key, names in constraint.check.items()}
    return row


def constraint_from_row(row: Mapping[str, Any]) -> Constraint:
    check = {key: tuple(names) for key, names in (row.get("check") or {}).items()}
    return Constraint(
        constraint=row["constraint"],
        blocked_technique=row["blocked_technique"],
        expected_impact=row["expected_impact"],
        verification_hint=row["verification_hint"],
        check=check,
    )


def explore_task(
    seed: ExploreSeed, level: int, constraints: Sequence[Constraint], solution: str
) -> ExploreTask:
    """The ExploreTask of `seed` at `level` under `constraints`, with `solution` as reference."""
    return ExploreTask(
        id=f"{seed.problem_id}-L{level}",
        problem_id=seed.problem_id,
        level=level,
        language=seed.language,
        difficulty=seed.difficulty,
        question=seed.question,
        function_signature=seed.function_signature,
        constraints=tuple(c.constraint for c in constraints),
        constraints_detail=tuple(constraints),
        test_code=seed.test_code,
        reference_solution=solution,
        domain=seed.domain,
    )


def explore_row(task: ExploreTask) -> dict[str, Any]:
    """The release row of an ExploreTask."""
    return {
        "id": task.id,
        "problem_id": task.problem_id,
        "level": task.level,
        "language": task.language,
        "difficulty": task.difficulty,
        "question": task.question,
        "function_signature": task.function_signature,
        "constraints": list(task.constraints),
        "constraints_detail": [constraint_row(c) for c in task.constraints_detail],
        "test_code": task.test_code,
        "reference_solution": task.reference_solution,
        "domain": task.domain,
    }


def _constraint_lines(constraints: Sequence[Constraint]) -> str:
    return (
        "\n".join(
            prompts.CONSTRAINT_LINE.substitute(
                number=number, constraint=c.constraint, blocked_technique=c.blocked_technique
            )
            for number, c in enumerate(constraints, start=1)
        )
        or prompts.NONE_YET
    )


class _ExploreBuilder:
    """Algorithm 2 for one directory: the level loop of each seed, committed level by level."""

    def __init__(
        self,
        generator: ChatModel,
        solver: ChatModel,
        judge: ChatModel,
        sandbox: Sandbox,
        directory: PipelineDir,
        *,
        max_levels: int,
        attempts: int,
    ) -> None:
        self.generator, self.solver, self.judge = generator, solver, judge
        self.sandbox, self.dir = sandbox, directory
        self.max_levels, self.attempts = max_levels, attempts

    def _finish(self, seed: ExploreSeed, reason: str, levels: int, **detail: Any) -> None:
        log.info("%s: done after level %d (%s)", seed.problem_id, levels - 1, reason)
        self.dir.commit(
            {
                "item": seed.problem_id,
                "status": "done",
                "reason": reason,
                "levels": levels,
                "detail": detail,
            }
        )

    def _keep(self, task: ExploreTask, **detail: Any) -> None:
        log.info("%s: level %d kept", task.problem_id, task.level)
        self.dir.commit(
            {
                "item": task.id,
                "problem_id": task.problem_id,
                "level": task.level,
                "status": "kept",
                "detail": detail,
            },
            explore_row(task),
        )

    async def run(self, seed: ExploreSeed) -> None:
        rows = sorted(
            (r for r in self.dir.rows if r.get("problem_id") == seed.problem_id),
            key=lambda r: r["level"],
        )
        if not rows:
            result = await self.sandbox.run(seed.base_solution, seed.test_code)
            if not _passed(result):
                self._finish(
                    seed, "base_failed", 0, verdict=str(result.verdict), error=error_text(result)
                )
                return
            self._keep(explore_task(seed, 0, (), seed.base_solution))
            constraints: list[Constraint] = []
            current = seed.base_solution
        else:
            constraints = [constraint_from_row(c) for c in rows[-1]["constraints_detail"]]
            current = rows[-1]["reference_solution"]
        for level in range(len(constraints) + 1, self.max_levels + 1):
            item = f"{seed.problem_id}-L{level}"
            new = await self._propose(item, seed, constraints, current)
            if new is None:
                self._finish(seed, "constraint_unreadable", level)
                return
            stacked = [*constraints, new]
            solution, feedback = await self._refine(item, seed, level, stacked)
            if solution is None:
                self._finish(
                    seed, "unsolved_level", level, constraint=new.constraint, feedback=feedback
                )
                return
            self._keep(explore_task(seed, level, stacked, solution), attempts=len(feedback) + 1)
            constraints, current = stacked, solution
        self._finish(seed, "max_levels", self.max_levels + 1)

    # The generator analyses the current solution and adds one negative constraint.
    async def _propose(
        self, item: str, seed: ExploreSeed, constraints: list[Constraint], current: str
    ) -> Constraint | None:
        messages = [
            Message(role="system", content=prompts.CONSTRAIN_SYSTEM),
            Message(
                role="user",
                content=prompts.CONSTRAIN_USER.substitute(
                    question=seed.question,
                    signature=seed.function_signature,
                    language=seed.language,
                    code=current.strip("\n"),
                    constraints=_constraint_lines(constraints),
                ),
            ),
        ]
        new, reason = await ask(
            self.generator,
            messages,
            lambda text: read_constraint(text, constraints),
            directory=self.dir,
            item=item,
            purpose="constrain",
        )
        if new is None:
            log.warning("%s: no usable constraint (%s)", item, reason)
        return new

    # Eq. 1: refine from the base solution with sandbox, static and judge feedback.
    async def _refine(
        self, item: str, seed: ExploreSeed, level: int, stacked: list[Constraint]
    ) -> tuple[str | None, list[str]]:
        from forkingpaths.benchmarks.creativebench.constraints import (
            check_constraints,
            judge_constraints,
        )

        current = seed.base_solution
        feedback: list[str] = []
        judge = LoggedModel(self.judge, self.dir, item, "constraint-judge")
        for attempt in range(1, self.attempts + 1):
            shown_attempt = (
                prompts.ATTEMPT_BLOCK.substitute(language=seed.language, code=current.strip("\n"))
                if attempt > 1
                else prompts.NONE_YET
            )
            history = "\n".join(
                prompts.FEEDBACK_LINE.substitute(attempt=n, feedback=f)
                for n, f in enumerate(feedback, start=1)
            )
            messages = [
                Message(role="system", content=prompts.REFINE_SYSTEM),
                Message(
                    role="user",
                    content=prompts.REFINE_USER.substitute(
                        question=seed.question,
                        signature=seed.function_signature,
                        constraints=_constraint_lines(stacked),
                        language=seed.language,
                        reference=seed.base_solution.strip("\n"),
                        attempt=shown_attempt,
                        feedback=history or prompts.NONE_YET,
                    ),
                ),
            ]
            completion = await self.solver.complete(messages, ModelParams())
            self.dir.record_call(item, completion, "refine")
            code = first_code(completion.text, seed.language)
            if code is None:
                feedback.append(prompts.FEEDBACK_NO_CODE)
                continue
            problems: list[str] = []
            result = await self.sandbox.run(code, seed.test_code)
            if not _passed(result):
                problems.append(
                    prompts.FEEDBACK_SANDBOX.substitute(
                        verdict=str(result.verdict), detail=error_text(result)
                    )
                )
            violations = check_constraints(code, stacked)
            if violations:
                problems.append(
                    prompts.FEEDBACK_STATIC.substitute(
                        violations="; ".join(
                            f"line {v.line}: {v.detail}" if v.line else v.detail for v in violations
                        )
                    )
                )
            task = explore_task(seed, level, stacked, seed.base_solution)
            judged = await judge_constraints(judge, task, code)
            problems += _judge_feedback(judged)
            if not problems:
                return code, feedback
            feedback.append(" | ".join(problems))
            current = code
        return None, feedback


def _judge_feedback(judged: JudgeResult) -> list[str]:
    """Feedback lines of a judge verdict: none when compliant."""
    if judged.compliant is True:
        return []
    if judged.compliant is None:
        return [prompts.FEEDBACK_UNJUDGED]
    return [prompts.FEEDBACK_JUDGE.substitute(reasons=judged.reasons or "(no reason given)")]


async def build_explore(
    generator: ChatModel,
    solver: ChatModel,
    judge: ChatModel,
    sandbox: Sandbox,
    seeds: list[ExploreSeed] | None,
    out_dir: Path,
    *,
    max_levels: int = 7,
    attempts: int = 3,
    concurrency: int = 4,
) -> PipelineReport:
    """Algorithm 2: constraint stacking by self-play, seed by seed.

    Level 0 is the base solution verified against the tests. Each further level: the generator
    reads the current solution and adds ONE negative constraint (stacked on the earlier ones);
    the solver adapts the base solution up to `attempts` times, each attempt run in the sandbox,
    checked by the static checker and by the judge, with their feedback (Eq. 1). A level is kept
    when an attempt passes all three; the loop stops at the first unsolved level or after
    `max_levels` constraints. Rows go to `out_dir/explore.jsonl` with the passing solution as
    `reference_solution`; `seeds=None` uses the built-in Explore data's level-0 rows. Re-running
    on the same directory continues each seed from its last kept level.
    """
    _check_int("max_levels", max_levels, 1)
    _check_int("attempts", attempts, 1)
    _check_int("concurrency", concurrency, 1)
    seeds = default_explore_seeds() if seeds is None else list(seeds)
    ids = Counter(s.problem_id for s in seeds)
    repeated = sorted(pid for pid, count in ids.items() if count > 1)
    if repeated:
        raise ConfigError(f"seeds: problem ids must be unique, repeated: {', '.join(repeated)}")
    directory = PipelineDir(
        out_dir,
        "explore",
        {
            "pipeline": "explore",
            "generator": generator.name,
            "solver": solver.name,
            "judge": judge.name,
            "max_levels": max_levels,
            "attempts": attempts,
        },
    )
    directory.open()
    done = {e["item"] for e in directory.state if e.get("status") == "done"}
    todo = [s for s in seeds if s.problem_id not in done]
    resumed = len(seeds) - len(todo)
    if resumed:
        log.info("explore: %d of %d seeds already done, skipped", resumed, len(seeds))
    builder = _ExploreBuilder(
        generator, solver, judge, sandbox, directory, max_levels=max_levels, attempts=attempts
    )
    semaphore = asyncio.Semaphore(concurrency)

    async def one(seed: ExploreSeed) -> None:
        async with semaphore:
            await builder.run(seed)

    await _run_all([one(seed) for seed in todo])
    report = directory.report(resumed)
    log.info("explore: %d levels kept, seeds stopped %s", report.kept, report.stopped)
    return report


# ---- command-line entry points (wired into the CLI elsewhere) ----


def _build_model(model_id: str, options: ModelOptions | None, runtime: ModelRuntime) -> ChatModel:
    from forkingpaths.models.factory import RunParamsModel, check_model_access, make_model

    options = options if options is not None else ModelOptions()
    check_model_access(model_id, options)
    return RunParamsModel(make_model(model_id, options, runtime), options.params)


async def _close(models: Sequence[ChatModel]) -> None:
    """Close each distinct model that holds resources (HTTP clients)."""
    for model in {id(m): m for m in models}.values():
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


async def run_combo_pipeline(
    model: str,
    out_dir: Path,
    *,
    n: int,
    k: int = 2,
    repair_attempts: int = 2,
    difficulty_samples: int = 5,
    diversity_threshold: float = 0.85,
    embedding: str = "none",
    embedding_options: Mapping[str, Any] | None = None,
    components: Path | None = None,
    seed: int = 0,
    model_options: ModelOptions | None = None,
    runtime: ModelRuntime | None = None,
    sandbox_options: Mapping[str, Any] | None = None,
    concurrency: int = 4,
) -> PipelineReport:
    """`build_combo` from a model id (`openai/gpt-4.1`, `scripted/creativebench-pipeline`...).

    `components`: a JSONL of `{"id", "domain", "code", "description"?}` (`load_components`;
    any bad row refuses the run), else the built-in Combo data's source solutions.
    `embedding`: a `make_embedding_backend` spec for the diversity check ("none": word counts)
    with `embedding_options` as its keyword arguments. `sandbox_options` go to `Sandbox(...)`.
    """
    from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
    from forkingpaths.models.runtime import ModelRuntime

    chosen: list[SourceComponent] | None = None
    if components is not None:
        chosen, errors = load_components(components)
        if errors:
            raise InvalidFile("; ".join(str(e) for e in errors))
    backend = None
    if embedding != "none":
        from forkingpaths.benchmarks.creativebench.novelty import make_embedding_backend

        backend = make_embedding_backend(embedding, **dict(embedding_options or {}))
    chat = _build_model(model, model_options, runtime or ModelRuntime())
    try:
        async with Sandbox(**dict(sandbox_options or {})) as sandbox:
            return await build_combo(
                chat,
                sandbox,
                chosen,
                out_dir,
                n=n,
                k=k,
                repair_attempts=repair_attempts,
                difficulty_samples=difficulty_samples,
                diversity_threshold=diversity_threshold,
                embedding=backend,
                seed=seed,
                concurrency=concurrency,
            )
    finally:
        await _close([chat])
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()


async def run_explore_pipeline(
    generator: str,
    out_dir: Path,
    *,
    solver: str | None = None,
    judge: str | None = None,
    seeds: Path | None = None,
    problems: Sequence[str] | None = None,
    max_levels: int = 7,
    attempts: int = 3,
    generator_options: ModelOptions | None = None,
    solver_options: ModelOptions | None = None,
    judge_options: ModelOptions | None = None,
    runtime: ModelRuntime | None = None,
    sandbox_options: Mapping[str, Any] | None = None,
    concurrency: int = 4,
) -> PipelineReport:
    """`build_explore` from model ids; a role without a model id (`solver`, `judge`) uses the
    generator's model; each model id gets its own options.

    `seeds`: an Explore JSONL (`load_explore`; any bad row refuses the run) whose level-0 rows
    are the seeds, else the built-in data; `problems` keeps only those problem ids.
    """
    from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
    from forkingpaths.models.runtime import ModelRuntime

    if seeds is not None:
        tasks, errors = load_explore(seeds)
        if errors:
            raise InvalidFile("; ".join(str(e) for e in errors))
        chosen = seeds_from_tasks(tasks)
    else:
        chosen = default_explore_seeds()
    if problems is not None:
        wanted = set(problems)
        unknown = sorted(wanted - {s.problem_id for s in chosen})
        if unknown:
            raise ConfigError(
                f"problems: unknown problem ids {', '.join(unknown)}; available:"
                f" {', '.join(sorted(s.problem_id for s in chosen))}"
            )
        chosen = [s for s in chosen if s.problem_id in wanted]
    from forkingpaths.models.factory import check_model_access

    # Refuse every unusable model id before any client is opened.
    roles = [(generator, generator_options), (solver, solver_options), (judge, judge_options)]
    for model_id, options in roles:
        if model_id is not None:
            check_model_access(model_id, options)
    runtime = runtime or ModelRuntime()
    generator_model = _build_model(generator, generator_options, runtime)
    solver_model = (
        _build_model(solver, solver_options, runtime) if solver is not None else generator_model
    )
    judge_model = (
        _build_model(judge, judge_options, runtime) if judge is not None else generator_model
    )
    try:
        async with Sandbox(**dict(sandbox_options or {})) as sandbox:
            return await build_explore(
                generator_model,
                solver_model,
                judge_model,
                sandbox,
                chosen,
                out_dir,
                max_levels=max_levels,
                attempts=attempts,
                concurrency=concurrency,
            )
    finally:
        await _close([generator_model, solver_model, judge_model])
