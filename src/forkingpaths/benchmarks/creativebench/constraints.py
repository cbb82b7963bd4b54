"""Constraint compliance of Explore solutions: a static AST checker and the LLM judge (App. B.1).

The static checker (`check_constraints`) enforces each `Constraint.check` rule set (docs §1):

- `calls`: a call to the name (`sorted(...)`), a method call of that name (`xs.sort()`), or the
  name passed as a value (`key=max`); a function or variable the solution defines itself under
  that name is not the forbidden one. Dotted rules match the dotted call (`math.floor`,
  `str.join(sep, xs)`); for a builtin type (`str.join`, `list.sort`) any method call of that
  name counts (`", ".join(xs)`) unless its receiver is an imported module (`os.path.join`).
- `imports`: `import m`, `import m.sub`, `from m import x`, `__import__("m")`,
  `importlib.import_module("m")`.
- `nodes`: any syntax node of that `ast` class (`For`, `While`, `ListComp`, `Lambda`...), plus
  `Recursion`: a function whose body calls it by name (or as `self.`/`cls.` method).
- `operators`: `ast` operator classes in binary, augmented (`x %= 2`), unary, comparison and
  boolean operations (`Mod`, `FloorDiv`, `Pow`, `BitAnd`, `USub`, `In`, `And`...).
- `names`: a name, attribute or imported name (`bisect_left`).

Type annotations are not checked (`list[int]` in a signature is no subscript). One finding is
reported per construct, and per rule and line.

Rows without `check` (the paper's release) get rules inferred from their `blocked_technique`
text by `KEYWORD_RULES`, a small table of unambiguous phrases, plus explicit mentions in it:
calls written as code (`sorted()`, `.sort()`, `str.join()`), `built-in <function>` and
`<stdlib module> module`/`library` or `import <module>`. Only when the blocked technique yields
no rule is the table applied to the `verification_hint` (hints often name the allowed
alternatives, so they are read last and never for explicit calls). A phrase bans only the
construct it names: "dictionary comprehension" bans `DictComp`, not every dict.

Final and advisory findings: a violation of an explicit `check` rule is final (the solution's
Quality is 0). A violation of an *inferred* rule is advisory (`Violation.inferred`): reading
rules off prose can misfire, so such a finding never zeroes Quality on its own; it is shown to
the judge as a hint (`judge_constraints(..., hints=...)`), and the judge's verdict decides.
Without a judge an advisory finding is recorded and nothing more.

What the checker cannot see (a hand-written binary search, "no direct formula") is the judge's:
`judge_constraints` asks an LLM with the rubric of `constraint_judge_prompts`, retries
unreadable replies with a corrective turn, and reports `compliant=None` (unjudged) when none
could be read.

Recursion and "no loops": a constraint that forbids loops (`For`, `While`, comprehensions) does
not forbid recursion; only a constraint that names recursion does (`nodes: Recursion`). The
judge's rubric agrees ("what a constraint does not forbid is allowed"), and so do the built-in
references (docs/dev/creativebench.md §3).
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from forkingpaths.benchmarks.creativebench import constraint_judge_prompts as prompts
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord

if TYPE_CHECKING:
    # For annotations only: `tasks` validates its rows with this module's `validate_rules`.
    from forkingpaths.benchmarks.creativebench.tasks import ExploreTask

RULE_KINDS = ("calls", "imports", "nodes", "operators", "names")
"""Keys a `Constraint.check` mapping may hold."""

RECURSION = "Recursion"
"""The pseudo node class of `nodes` rules: a function that calls itself."""

JUDGE_PARAMS = ModelParams(temperature=0.0)
"""Judge sampling: greedy, set explicitly so a run's --temperature does not reach the judge."""

Rules = Mapping[str, tuple[str, ...]]
"""A rule set: kind (`RULE_KINDS`) -> forbidden names."""


class ConstraintLike(Protocol):
    """What the checker reads of a `tasks.Constraint`."""

    @property
    def constraint(self) -> str: ...
    @property
    def blocked_technique(self) -> str: ...
    @property
    def verification_hint(self) -> str: ...
    @property
    def check(self) -> Mapping[str, Sequence[str]]: ...


@dataclass(frozen=True)
class Violation:
    """One use of a forbidden construct found by the static checker."""

    rule: str
    """`<kind>:<name>`: `calls:sorted`, `nodes:For`, `nodes:Recursion`, `imports:bisect`..."""
    detail: str
    """What was found, and the constraint (1-based, level order) it breaks."""
    line: int | None
    """Line of the code where it was found (None when the node has no position)."""
    inferred: bool = False
    """True when the rule was inferred from the constraint's prose (no `check`): an advisory
    finding, a hint for the judge; False for an explicit `check` rule (final)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "detail": self.detail,
            "line": self.line,
            "inferred": self.inferred,
        }


# ---- inferring rules from the constraint text ----


@dataclass(frozen=True)
class KeywordRule:
    """A phrase of a blocked-technique text and the rules it stands for."""

    pattern: re.Pattern[str]
    """Matched against the lower-cased text."""
    rules: Rules
    """What a match adds."""


def _rule(pattern: str, **rules: tuple[str, ...]) -> KeywordRule:
    return KeywordRule(re.compile(pattern), MappingProxyType(rules))


_ANY_LOOP = ("AsyncFor", "For", "While")
_BITWISE = ("BitAnd", "BitOr", "BitXor", "Invert", "LShift", "RShift")
_COMPREHENSIONS = ("DictComp", "GeneratorExp", "ListComp", "SetComp")

KEYWORD_RULES: tuple[KeywordRule, ...] = (
    _rule(r"(?<!topological )\bsort(s|ed|ing)?\b", calls=("sort", "sorted")),
    _rule(r"\bfor[- ]loops?\b", nodes=("AsyncFor", "For")),
    _rule(r"\bwhile[- ]loops?\b", nodes=("While",)),
    # "nested loops" forbids only the nesting, which no node class expresses: left to the judge.
    _rule(
        r"(?<!for )(?<!for-)(?<!while )(?<!while-)(?<!nested )\b(loops?|looping)\b", nodes=_ANY_LOOP
    ),
    _rule(r"(?<!non-)(?<!non)\brecursi(on|ve|vely)\b", nodes=(RECURSION,)),
    _rule(r"\bdict(ionary)?[- ]comprehensions?\b", nodes=("DictComp",)),
    # A dict named only as the subject of a comprehension is not a ban on dicts.
    _rule(
        r"\b(dictionar(y|ies)|hash ?maps?|dicts?)\b(?![- ]comprehension)",
        nodes=("Dict", "DictComp"),
        calls=("OrderedDict", "defaultdict", "dict"),
    ),
    _rule(r"\blist[- ]comprehensions?\b", nodes=("ListComp",)),
    _rule(r"\bset[- ]comprehensions?\b", nodes=("SetComp",)),
    _rule(r"\bgenerator expressions?\b", nodes=("GeneratorExp",)),
    _rule(
        r"(?<!list )(?<!dict )(?<!dictionary )(?<!set )(?<!-)\bcomprehensions?\b",
        nodes=_COMPREHENSIONS,
    ),
    _rule(r"\blambdas?\b", nodes=("Lambda",)),
    _rule(r"\bbinary search\b|\bbisect", imports=("bisect",)),
    _rule(r"\bheaps?\b|\bheapq\b|\bpriority queues?\b", imports=("heapq",)),
    _rule(r"\bregex(es)?\b|\bregular expressions?\b", imports=("re", "regex")),
    _rule(r"\bmodul(o|us)\b|%\s*operator", operators=("Mod",)),
    _rule(r"\bfloor division\b|//", operators=("FloorDiv",)),
    _rule(r"\bexponentiation\b|\bpower operator\b|\*\*", operators=("Pow",)),
    _rule(r"\bbitwise\b|\bbit manipulation\b|\bbit shift", operators=_BITWISE),
    _rule(r"\bf-?strings?\b", nodes=("JoinedStr",)),
    _rule(r"\bternary\b|\bconditional expressions?\b", nodes=("IfExp",)),
    _rule(r"\btry\s*/\s*except\b|\bexception handling\b", nodes=("Try", "TryStar")),
    _rule(r"\bslic(e|es|ing)\b", nodes=("Slice",)),
)
"""Phrases of a blocked technique (lower case) -> rules; all matching rows add up.

sort/sorting -> calls sorted, sort (not "topological sort") | for loop -> For, AsyncFor |
while loop -> While | loop(s)/looping (not "nested") -> For, AsyncFor, While |
recursion/recursive (not "non-recursive") -> Recursion | dict comprehension -> DictComp |
dictionary/dict/hash map (not followed by "comprehension") -> Dict, DictComp, calls dict,
defaultdict, OrderedDict |
list/set comprehension, generator expression -> ListComp/SetComp/GeneratorExp |
comprehension -> all four | lambda -> Lambda | binary search/bisect -> import bisect |
heap/priority queue -> import heapq | regex/regular expression -> import re, regex |
modulo -> Mod | floor division, // -> FloorDiv | exponentiation, ** -> Pow |
bitwise/bit manipulation/bit shift -> the bitwise operators | f-string -> JoinedStr |
ternary/conditional expression -> IfExp | try/except, exception handling -> Try |
slice/slicing -> Slice.
"""

_CODE_CALL = re.compile(r"(?<![\w.])(\.?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")
_BUILTIN_MENTION = re.compile(r"\bbuilt-?in (?:function )?[`'\"]?([a-z_]\w*)")
_MODULE_MENTION = re.compile(
    r"\b([a-z_][\w.]*)[`'\"]? (?:module|library|package)\b|\bimport(?:ing|s)? [`'\"]?([a-z_][\w.]*)"
)


def _merge(into: dict[str, set[str]], rules: Mapping[str, Iterable[str]]) -> None:
    for kind, names in rules.items():
        into.setdefault(kind, set()).update(names)


def _table_rules(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for row in KEYWORD_RULES:
        if row.pattern.search(text):
            _merge(found, row.rules)
    return found


def _explicit_rules(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for match in _CODE_CALL.finditer(text):
        _merge(found, {"calls": [match.group(1).lstrip(".")]})
    for match in _BUILTIN_MENTION.finditer(text.lower()):
        name = match.group(1)
        if callable(getattr(builtins, name, None)):
            _merge(found, {"calls": [name]})
    for match in _MODULE_MENTION.finditer(text.lower()):
        module = match.group(1) or match.group(2)
        if module and module.split(".")[0] in sys.stdlib_module_names:
            _merge(found, {"imports": [module]})
    return found


def infer_rules(blocked_technique: str, verification_hint: str = "") -> dict[str, tuple[str, ...]]:
    """Rules for a constraint without `check`, read off its texts (see `KEYWORD_RULES`): the
    explicit mentions and table phrases of `blocked_technique`, else the table phrases of
    `verification_hint`; {} when neither names anything the checker can see.

    >>> infer_rules("Built-in sorting (sorted() or list.sort())")
    {'calls': ('list.sort', 'sort', 'sorted')}
    >>> infer_rules("Binary search over the answer")
    {'imports': ('bisect',)}
    """
    found = _explicit_rules(blocked_technique)
    _merge(found, _table_rules(blocked_technique.lower()))
    if not found:
        found = _table_rules(verification_hint.lower())
    return {kind: tuple(sorted(found[kind])) for kind in RULE_KINDS if found.get(kind)}


def rules_of(constraint: ConstraintLike) -> dict[str, tuple[str, ...]]:
    """The rules the checker applies for `constraint`: its `check`, else the inferred ones."""
    if constraint.check:
        return {kind: tuple(names) for kind, names in constraint.check.items()}
    return infer_rules(constraint.blocked_technique, constraint.verification_hint)


_OPERATOR_BASES = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def validate_rules(rules: Mapping[str, Sequence[str]], where: str = "check") -> None:
    """Refuse a rule set the checker would silently never match: an unknown kind, a name that
    is not a string, an unknown `ast` node or operator class. `where` prefixes the message."""
    for kind, names in rules.items():
        if kind not in RULE_KINDS:
            raise ConfigError(
                f"{where}: unknown rule kind {kind!r}; allowed: {', '.join(RULE_KINDS)}"
            )
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise ConfigError(
                f"{where}.{kind}: expected a list of non-empty strings, got {shown(names)}"
            )
        for name in names:
            cls = getattr(ast, name, None)
            is_node = isinstance(cls, type) and issubclass(cls, ast.AST)
            if kind == "nodes" and name != RECURSION and not is_node:
                raise ConfigError(
                    f"{where}.nodes: {name!r} is not an ast node class (For, While, ListComp,"
                    f" Lambda...) nor {RECURSION!r}"
                )
            if kind == "operators" and not (
                isinstance(cls, type) and issubclass(cls, _OPERATOR_BASES)
            ):
                raise ConfigError(
                    f"{where}.operators: {name!r} is not an ast operator class (Mod, FloorDiv,"
                    " Pow, BitAnd, USub, Eq, In, And...)"
                )


# ---- the static checker ----

_OPERATOR_SYMBOLS = MappingProxyType(
    {
        "Add": "+", "Sub": "-", "Mult": "*", "MatMult": "@", "Div": "/", "Mod": "%", "Pow": "**",
        "LShift": "<<", "RShift": ">>", "BitOr": "|", "BitXor": "^", "BitAnd": "&",
        "FloorDiv": "//", "Invert": "~", "Not": "not", "UAdd": "+", "USub": "-", "Eq": "==",
        "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "Is": "is",
        "IsNot": "is not", "In": "in", "NotIn": "not in", "And": "and", "Or": "or",
    }
)  # fmt: skip

_BUILTIN_TYPES = frozenset(
    {"str", "list", "dict", "set", "tuple", "int", "float", "bytes", "frozenset", "bytearray"}
)


def _dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [node.returns] if node.returns is not None else []
    return []


@dataclass
class _Facts:
    """What the checker needs of one parsed solution, gathered in a single walk.

    Type annotations are left out of `nodes`: `list[int]` in a signature is no subscript and
    `-> int` no use of int(); they never run as the solution's logic.
    """

    tree: ast.Module
    nodes: list[ast.AST] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    parents: dict[int, ast.AST] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: ast.Module) -> _Facts:
        facts = cls(tree)
        skipped = {id(n) for a in ast.walk(tree) for n in _annotations(a)}
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            facts.nodes.append(node)
            children = [c for c in ast.iter_child_nodes(node) if id(c) not in skipped]
            stack.extend(reversed(children))
            for child in ast.iter_child_nodes(node):
                facts.parents[id(child)] = node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                facts.defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                facts.defined.add(node.id)
            elif isinstance(node, ast.arg):
                facts.defined.add(node.arg)
            elif isinstance(node, ast.alias):
                facts.imported.add(node.asname or node.name.split(".")[0])
        return facts

    def line(self, node: ast.AST) -> int | None:
        current: ast.AST | None = node
        while current is not None:
            lineno = getattr(current, "lineno", None)
            if isinstance(lineno, int):
                return lineno
            current = self.parents.get(id(current))
        return None


def _call_hits(facts: _Facts, name: str) -> Iterable[tuple[ast.AST, str]]:
    dotted = "." in name
    owner, _, method = name.rpartition(".")
    for node in facts.nodes:
        if isinstance(node, ast.Call):
            func = node.func
            path = _dotted(func)
            if dotted:
                if path is not None and (path == name or path.endswith("." + name)):
                    yield node, f"{path}()"
                elif (
                    owner in _BUILTIN_TYPES
                    and isinstance(func, ast.Attribute)
                    and func.attr == method
                    and not (
                        isinstance(root := _root(func.value), ast.Name)
                        and root.id in facts.imported
                    )
                ):
                    yield node, f".{method}() ({name})"
            elif isinstance(func, ast.Name) and func.id == name:
                if name not in facts.defined:
                    yield node, f"{name}()"
            elif isinstance(func, ast.Attribute) and func.attr == name:
                yield node, f".{name}()"
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            parent = facts.parents.get(id(node))
            called = isinstance(parent, ast.Call) and parent.func is node
            if not dotted and not called and node.id == name and name not in facts.defined:
                yield node, f"{name} passed as a value"
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and dotted:
            parent = facts.parents.get(id(node))
            called = isinstance(parent, ast.Call) and parent.func is node
            path = _dotted(node)
            if not called and path is not None and (path == name or path.endswith("." + name)):
                yield node, f"{path} passed as a value"


def _module_matches(module: str, forbidden: str) -> bool:
    return module == forbidden or module.startswith(forbidden + ".")


def _import_hits(facts: _Facts, module: str) -> Iterable[tuple[ast.AST, str]]:
    for node in facts.nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _module_matches(alias.name, module):
                    yield node, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _module_matches(node.module, module):
                yield node, f"from {node.module} import ..."
        elif isinstance(node, ast.Call) and node.args:
            path = _dotted(node.func)
            first = node.args[0]
            dynamic = path in ("__import__", "importlib.import_module", "import_module")
            if (
                dynamic
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _module_matches(first.value, module)
            ):
                yield node, f"{path}({first.value!r})"


def _calls_itself(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    for node in ast.walk(function):
        if node is function or not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == function.name:
            return node
        if (
            isinstance(func, ast.Attribute)
            and func.attr == function.name
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return node
    return None


def _node_hits(facts: _Facts, name: str) -> Iterable[tuple[ast.AST, str]]:
    if name == RECURSION:
        for node in facts.nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                call = _calls_itself(node)
                if call is not None:
                    yield call, f"recursive function {node.name}()"
        return
    cls = getattr(ast, name)
    for node in facts.nodes:
        if isinstance(node, cls):
            yield node, f"{name} construct"


def _operator_hits(facts: _Facts, name: str) -> Iterable[tuple[ast.AST, str]]:
    cls = getattr(ast, name)
    symbol = _OPERATOR_SYMBOLS.get(name, name)
    for node in facts.nodes:
        if isinstance(node, ast.BinOp | ast.AugAssign | ast.UnaryOp | ast.BoolOp):
            ops = [node.op]
        elif isinstance(node, ast.Compare):
            ops = list(node.ops)
        else:
            continue
        if any(isinstance(op, cls) for op in ops):
            augmented = "=" if isinstance(node, ast.AugAssign) else ""
            yield node, f"operator {symbol}{augmented} ({name})"


def _name_hits(facts: _Facts, name: str) -> Iterable[tuple[ast.AST, str]]:
    for node in facts.nodes:
        if isinstance(node, ast.Name) and node.id == name:
            yield node, f"name {name}"
        elif isinstance(node, ast.Attribute) and node.attr == name:
            yield node, f"attribute .{name}"
        elif isinstance(node, ast.ImportFrom) and any(
            name in (a.name, a.asname) for a in node.names
        ):
            yield node, f"imported name {name}"


_FINDERS = MappingProxyType(
    {
        "calls": _call_hits,
        "imports": _import_hits,
        "nodes": _node_hits,
        "operators": _operator_hits,
        "names": _name_hits,
    }
)


def _hits(facts: _Facts, rules: Rules) -> list[tuple[str, str, int | None]]:
    # One report per construct (`sort` and `list.sort` both match `xs.sort()`) and per rule and
    # line (three `sorted` calls on one line are one finding).
    found: dict[tuple[str, int | None], str] = {}
    seen: set[int] = set()
    for kind in RULE_KINDS:
        for name in rules.get(kind, ()):
            for node, what in _FINDERS[kind](facts, name):
                key = (f"{kind}:{name}", facts.line(node))
                if id(node) not in seen and key not in found:
                    found[key] = what
                seen.add(id(node))
    return [(rule, what, line) for (rule, line), what in found.items()]


def check_rules(code: str, rules: Mapping[str, Sequence[str]]) -> list[tuple[str, str, int | None]]:
    """(rule, what was found, line) for every use of what `rules` forbids, one per rule and
    line; [] when the code does not parse (that is the sandbox's SYNTAX_ERROR, not a violation).
    Raises ConfigError for a malformed rule set (`validate_rules`)."""
    validate_rules(rules)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    frozen = {kind: tuple(names) for kind, names in rules.items()}
    return sorted(_hits(_Facts.of(tree), frozen), key=lambda h: (h[2] or 0, h[0]))


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_constraints(code: str, constraints: Sequence[ConstraintLike]) -> list[Violation]:
    """Static check of `code` against the stacked constraints of a level (`rules_of` each):
    every forbidden construct found, sorted by line; a finding of a rule inferred from the
    constraint's prose is marked `inferred` (advisory, see the module docstring). [] for code
    that does not parse (or nests too deeply for the parser) or for a level without
    constraints. Raises ConfigError naming the constraint for a malformed `check`."""
    rule_sets = []
    for number, constraint in enumerate(constraints, start=1):
        rules = rules_of(constraint)
        validate_rules(rules, f"constraint {number} ({_short(constraint.constraint, 40)!r}): check")
        rule_sets.append((number, constraint, rules, not constraint.check))
    if not any(rules for _, _, rules, _ in rule_sets):
        return []
    try:
        facts = _Facts.of(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    violations: list[Violation] = []
    for number, constraint, rules, inferred in rule_sets:
        for rule, what, line in _hits(facts, rules):
            detail = f"{what}: breaks constraint {number} ({_short(constraint.constraint)})"
            violations.append(Violation(rule=rule, detail=detail, line=line, inferred=inferred))
    return sorted(violations, key=lambda v: (v.line or 0, v.rule))


def split_violations(violations: Iterable[Violation]) -> tuple[list[Violation], list[Violation]]:
    """(final, advisory): findings of explicit `check` rules, which zero Quality, and findings
    of inferred rules, which only inform the judge."""
    final: list[Violation] = []
    advisory: list[Violation] = []
    for violation in violations:
        (advisory if violation.inferred else final).append(violation)
    return final, advisory


# ---- the LLM judge ----


@dataclass(frozen=True)
class JudgeResult:
    """The constraint-compliance judge's verdict on one solution."""

    compliant: bool | None
    """True/False as the judge said; None when no reply could be read (unjudged)."""
    reasons: str
    """The violations it named, its explanation, or why it stayed unjudged."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every judge call (`purpose="constraint-judge"`), retries included."""
    violations: tuple[str, ...] = ()
    """The violations as the judge listed them, one string each."""

    @property
    def judged(self) -> bool:
        return self.compliant is not None

    def to_json(self) -> dict[str, Any]:
        """The record form (calls are stored with the step that made them)."""
        return {
            "compliant": self.compliant,
            "reasons": self.reasons,
            "violations": list(self.violations),
        }


_FENCED = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in `text`, in order: fenced blocks first, then any starting at a `{`."""
    found: list[dict[str, Any]] = []
    for block in _FENCED.findall(text):
        try:
            value = json.loads(block.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index >= 0:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        index = text.find("{", end)
    return found


def _violation_text(item: Any) -> str:
    if isinstance(item, Mapping):
        parts = [f"{k}: {v}" for k, v in item.items() if v not in (None, "")]
        return "; ".join(parts) or "(empty)"
    return str(item)


Verdict = tuple[bool, tuple[str, ...], str]
"""(compliant, violations, explanation) read from a judge reply."""


def read_verdict(text: str) -> tuple[Verdict | None, str]:
    """(verdict, "") from a judge reply, or (None, why not).

    The first JSON object (fenced or not) with a `compliant` key (any case) is the verdict:
    `compliant` must be a JSON boolean (never a string, never coerced), `violations` (or
    `violations_found`) a list of strings or objects, absent meaning none; a reply that says
    compliant while listing violations contradicts itself and is refused.
    """
    for obj in json_objects(text):
        lowered = {str(k).strip().lower(): v for k, v in obj.items()}
        if "compliant" not in lowered:
            continue
        compliant = lowered["compliant"]
        if not isinstance(compliant, bool):
            return None, f'"compliant" must be true or false, got {shown(compliant)}'
        raw = lowered.get("violations", lowered.get("violations_found", []))
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            return None, f'"violations" must be a list, got {shown(raw)}'
        violations = tuple(_violation_text(v) for v in raw)
        if compliant and violations:
            return None, '"compliant" is true but violations are listed'
        explanation = next(
            (
                str(lowered[k]).strip()
                for k in ("reasoning", "reason", "alternative", "alternative_technique_used")
                if isinstance(lowered.get(k), str) and lowered[k].strip()
            ),
            "",
        )
        return (compliant, violations, explanation), ""
    return None, 'no JSON object with a "compliant" key'


def _fence_for(code: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def _field(value: object) -> str:
    text = " ".join(str(value or "").split())
    return text or prompts.NOT_GIVEN


STATIC_HINTS = Template(
    """### Static checker hints
A pattern checker that reads the constraint texts flagged the spots below. It matches words, \
not meaning, so it can be wrong: confirm each one against the constraint's instruction, or \
dismiss it.
$hints"""
)
"""Advisory findings shown to the judge after the constraints (`judge_constraints(hints=)`):
one `HINT_LINE` each. Kept here, beside the checker that produces them, since the rubric of
`constraint_judge_prompts` does not change with them."""

HINT_LINE = Template("- line $line: $detail")
"""One advisory finding (`Violation.detail` names the constraint it concerns)."""


def _hints_text(hints: Sequence[Violation | str]) -> str:
    lines = []
    for hint in hints:
        if isinstance(hint, Violation):
            where = "?" if hint.line is None else str(hint.line)
            lines.append(HINT_LINE.substitute(line=where, detail=" ".join(hint.detail.split())))
        else:
            lines.append(f"- {' '.join(str(hint).split())}")
    return STATIC_HINTS.substitute(hints="\n".join(lines))


def render_judge_messages(
    task: ExploreTask, code: str, hints: Sequence[Violation | str] = ()
) -> list[Message]:
    """The judge request for one solution: the rubric as system turn; the level's stacked
    constraints (instruction, blocked technique, verification hint), any advisory `hints` of
    the static checker (`STATIC_HINTS`) and the code as user turn."""
    details = list(task.constraints_detail)
    blocks = []
    texts = list(task.constraints) or [d.constraint for d in details]
    for index, text in enumerate(texts):
        detail = details[index] if index < len(details) else None
        blocks.append(
            prompts.CONSTRAINT_BLOCK.substitute(
                number=index + 1,
                constraint=_field(text or (detail.constraint if detail else "")),
                blocked_technique=_field(detail.blocked_technique if detail else ""),
                verification_hint=_field(detail.verification_hint if detail else ""),
            )
        )
    if hints:
        blocks.append(_hints_text(hints))
    fence = _fence_for(code)
    user = prompts.JUDGE_USER.substitute(
        constraints="\n\n".join(blocks),
        count=len(texts),
        language=(task.language or "python").lower(),
        code=code.rstrip("\n"),
        fence=fence,
    )
    return [
        Message(role="system", content=prompts.JUDGE_SYSTEM),
        Message(role="user", content=user),
    ]


async def judge_constraints(
    judge: ChatModel,
    task: ExploreTask,
    code: str,
    *,
    retries: int = 2,
    hints: Sequence[Violation | str] = (),
) -> JudgeResult:
    """Ask `judge` (at temperature 0) whether `code` complies with every constraint of `task`;
    `hints` (the static checker's advisory findings) are shown to it to confirm or dismiss.

    A reply `read_verdict` refuses is answered with a corrective user turn and asked again, at
    most `retries` times; after that the result is unjudged (`compliant=None`, `reasons` saying
    why). A level without constraints is compliant without a call. Model outages raise
    `ModelError` as from any model call.
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries: expected an integer >= 0, got {retries!r}")
    if not task.constraints and not task.constraints_detail:
        return JudgeResult(compliant=True, reasons="no constraints at this level")
    conversation = render_judge_messages(task, code, hints)
    calls: list[ModelCallRecord] = []
    reason = "no reply"
    for _ in range(retries + 1):
        completion = await judge.complete(conversation, JUDGE_PARAMS)
        calls.append(ModelCallRecord.from_completion(completion, purpose="constraint-judge"))
        verdict, reason = read_verdict(completion.text)
        if verdict is not None:
            compliant, violations, explanation = verdict
            if compliant:
                reasons = explanation or "compliant"
            else:
                reasons = "; ".join(violations) or explanation or "non-compliant (no details given)"
            return JudgeResult(compliant, reasons, calls, violations)
        conversation = [
            *conversation,
            Message(role="assistant", content=completion.text),
            Message(role="user", content=prompts.CORRECTIVE.substitute(reason=reason)),
        ]
    return JudgeResult(None, f"unjudged: {reason} (after {len(calls)} attempts)", calls)
