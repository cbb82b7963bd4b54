"""Reading the construction models' replies: code blocks, fusions, inputs, statements, audits,
constraints; `ask` repeats a request with a corrective turn until its reply can be read."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.benchmarks.creativebench.constraints import validate_rules
from forkingpaths.benchmarks.creativebench.construction.workdir import PipelineDir
from forkingpaths.benchmarks.creativebench.tasks import CHECK_KEYS, Constraint
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.models.text import json_values

T = TypeVar("T")

PARSE_RETRIES = 2
"""Corrective turns after a reply the pipeline cannot read (the request is asked 1 + this)."""
MIN_CASES = 3
"""Fewest test cases a Combo item needs: the demo test shows the first three."""
MAX_INPUTS = 20
"""Argument lists kept from the input-generation reply (the prompt asks for 8 to 12)."""
INPUTS_WANTED = "8 to 12"

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_ENTRY_LINE = re.compile(r"entry[\s_-]*point[\s*_`]*:[\s*_`]*([A-Za-z_]\w*)", re.IGNORECASE)
_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL | re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9_]+")
_PYTHON_TAGS = ("python", "py", "python3", "")


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


def drop_main_guard(code: str) -> str:
    """`code` without its module-level `if __name__ == "__main__":` blocks (unchanged when it
    does not parse): a reference solution must not run anything when tests are appended. The
    lines go (what a row stores); `sandbox.strip_main_guard` blanks them for one run instead."""
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
    solution = drop_main_guard(solutions[0])
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


def words(text: str) -> list[str]:
    """The lower-case words of a text (what constraints and questions are compared by)."""
    return _WORD.findall(text.lower())


def _norm(text: str) -> str:
    return " ".join(words(text))


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
