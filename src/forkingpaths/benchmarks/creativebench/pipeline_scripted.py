"""Scripted stand-ins that answer every construction-pipeline request deterministically."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from forkingpaths.benchmarks.creativebench import constraint_judge_prompts
from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError

BROKEN_MARKER = "_build_fusion_table"
"""The undefined name a `broken_first` fusion calls; a repair request fixes it only when its
sandbox error names it (so tests can see the error reach the repair request)."""

UNRECOGNISED = "scripted pipeline policy: this request is not one of the construction prompts"

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[^\n]*\n(.*?)```", re.DOTALL)
_BLOCKS = re.compile(r"\(blocks: (.+)\)\s*$", re.MULTILINE)
_JUDGE_BLOCKED = re.compile(r"^Blocked technique:\s*(.+?)\s*$", re.MULTILINE)
_JUDGE_NUMBER = re.compile(r"^### Constraint (\d+)\s*$", re.MULTILINE)


# ---- Combo: a catalogue of fused programs (ours), one picked per fusion request ----


@dataclass(frozen=True)
class FusedProgram:
    """A working two-domain fusion the stand-in answers with, whatever the components were."""

    key: str
    domains: tuple[str, str]
    entry: str
    summary: str
    """The problem statement's body (names `entry`)."""
    solution: str
    inputs: str
    """A JSON array of argument lists (text, so the catalogue stays immutable)."""
    demo: str


_SCHEDULE = '''import heapq


def schedule_tasks(tasks, durations):
    """Order tasks for one worker: prerequisites first, shortest ready task next."""
    for needs in tasks.values():
        for need in needs:
            if need not in tasks:
                return []
    waiting = {name: len(set(needs)) for name, needs in tasks.items()}
    followers = {name: [] for name in tasks}
    for name, needs in tasks.items():
        for need in set(needs):
            followers[need].append(name)
    # FUSION POINT: the dependency graph decides which tasks may enter the priority queue;
    # a different edge set changes the queue's contents and therefore the whole timeline.
    ready = [(durations.get(name, 1), name) for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    clock = 0
    plan = []
    while ready:
        length, name = heapq.heappop(ready)
        plan.append([name, clock, clock + length])
        clock += length
        # FUSION POINT: finishing a task (queue order) releases graph edges, so durations
        # feed back into the traversal order of the graph.
        for follower in sorted(followers[name]):
            waiting[follower] -= 1
            if waiting[follower] == 0:
                heapq.heappush(ready, (durations.get(follower, 1), follower))
    return plan if len(plan) == len(tasks) else []
'''

_LOG_RATES = '''LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def parse_log_line(line):
    """(level, module) of a `LEVEL module: message` line, None when malformed."""
    head, sep, _ = line.partition(":")
    parts = head.split()
    if not sep or len(parts) != 2 or parts[0].upper() not in LEVELS:
        return None
    return parts[0].upper(), parts[1]


def log_error_rates(lines):
    """Per-module error statistics of a list of log lines."""
    modules = {}
    skipped = 0
    for line in lines:
        parsed = parse_log_line(line)
        if parsed is None:
            skipped += 1
            continue
        level, module = parsed
        # FUSION POINT: the parser's module field chooses the statistics bucket; a change in
        # how lines are split would regroup every rate below.
        stats = modules.setdefault(module, {"total": 0, "errors": 0})
        stats["total"] += 1
        if level == "ERROR":
            stats["errors"] += 1
    worst = None
    for module in sorted(modules):
        stats = modules[module]
        # FUSION POINT: rates come from the parsed counts and pick the module to report.
        stats["rate"] = round(stats["errors"] / stats["total"], 3)
        if worst is None or stats["rate"] > modules[worst]["rate"]:
            worst = module
    return {"modules": modules, "skipped": skipped, "worst": worst}
'''

_LRU = '''from collections import OrderedDict

DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalize_url(url):
    """Canonical form of an http(s) URL, None when it is not one."""
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in DEFAULT_PORTS or not rest:
        return None
    rest = rest.split("#", 1)[0]
    host, slash, path = rest.partition("/")
    host = host.lower()
    name, colon, port = host.partition(":")
    if colon and port == DEFAULT_PORTS[scheme]:
        host = name
    if not name:
        return None
    return scheme + "://" + host + "/" + path


def cache_report(urls, capacity):
    """Hits and misses of an LRU cache of `capacity` entries over normalised URLs."""
    cache = OrderedDict()
    hits = misses = invalid = 0
    for url in urls:
        key = normalize_url(url)
        if key is None:
            invalid += 1
            continue
        # FUSION POINT: normalisation decides which requests share a cache slot; without it
        # equivalent URLs would evict each other and the hit count would fall.
        if key in cache:
            hits += 1
            cache.move_to_end(key)
            continue
        misses += 1
        if capacity > 0:
            cache[key] = True
            if len(cache) > capacity:
                cache.popitem(last=False)
    return {"hits": hits, "misses": misses, "invalid": invalid, "cached": list(reversed(cache))}
'''

_KNN = '''def clean_points(points):
    """The valid `[x, y, label]` points and how many were ignored."""
    valid = []
    ignored = 0
    for point in points:
        ok = isinstance(point, list) and len(point) == 3 and isinstance(point[2], str)
        if ok:
            ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in point[:2])
        if ok:
            valid.append(point)
        else:
            ignored += 1
    return valid, ignored


def knn_vote(points, queries, k):
    """Majority label of the k nearest valid points for each query."""
    valid, ignored = clean_points(points)
    labels = []
    for qx, qy in queries:
        if not valid or k < 1:
            labels.append(None)
            continue
        # FUSION POINT: validation decides which points may vote; one malformed point
        # changes the neighbourhood and can flip the label.
        order = sorted(
            range(len(valid)),
            key=lambda i: ((valid[i][0] - qx) ** 2 + (valid[i][1] - qy) ** 2, i),
        )
        votes = {}
        for i in order[:k]:
            votes[valid[i][2]] = votes.get(valid[i][2], 0) + 1
        top = max(votes.values())
        labels.append(min(label for label, count in votes.items() if count == top))
    return {"labels": labels, "ignored": ignored}
'''

CATALOGUE: tuple[FusedProgram, ...] = (
    FusedProgram(
        key="schedule",
        domains=("Algorithms & Problem Solving", "Data Structures & Collections"),
        entry="schedule_tasks",
        summary=(
            "Write a Python function `schedule_tasks(tasks, durations)` that plans tasks for a "
            "single worker. `tasks` maps each task name to the list of task names that must "
            "finish before it starts; `durations` maps task names to positive integer "
            "durations (a task missing from `durations` takes 1). Starting at time 0, the "
            "worker repeatedly starts, among the tasks whose prerequisites have all finished, "
            "the one with the shortest duration (ties: the alphabetically smallest name) and "
            "runs it to completion. Return a list of `[name, start, finish]` lists in the "
            "order the tasks run. If a prerequisite is not itself a task, or the tasks cannot "
            "all run because of a cycle, return an empty list."
        ),
        solution=_SCHEDULE,
        inputs=(
            "["
            '[{"a": [], "b": ["a"], "c": ["a"]}, {"a": 2, "b": 3, "c": 1}], '
            '[{"x": [], "y": []}, {"x": 5, "y": 5}], '
            '[{"build": ["fetch"], "fetch": [], "test": ["build"]}, {"build": 4}], '
            "[{}, {}], "
            '[{"a": ["b"], "b": ["a"]}, {"a": 1, "b": 1}], '
            '[{"a": ["missing"]}, {"a": 1}], '
            '[{"solo": []}, {"solo": 7}], '
            '[{"a": [], "b": [], "c": ["a", "b"], "d": ["c"]}, {"a": 3, "b": 1, "c": 2, "d": 1}], '
            '[{"a": ["a"]}, {"a": 1}], '
            '[{"p": [], "q": ["p", "p"], "r": ["q"]}, {"p": 1, "q": 1, "r": 1}]'
            "]"
        ),
        demo=(
            "def demo_testing():\n"
            '    print(schedule_tasks({"a": [], "b": ["a"]}, {"a": 2, "b": 1}))\n'
            '    print(schedule_tasks({"x": ["y"], "y": ["x"]}, {}))\n'
        ),
    ),
    FusedProgram(
        key="log-rates",
        domains=("File & I/O Operations", "Data Science & Analytics"),
        entry="log_error_rates",
        summary=(
            "Write a Python function `log_error_rates(lines)` that summarises log lines of the "
            "form `LEVEL module: message`, where LEVEL is DEBUG, INFO, WARNING or ERROR (any "
            "letter case) and module is one word. A line is malformed when it has no colon, "
            "when the part before the first colon is not exactly two words, or when the first "
            "word is not a known level; malformed lines are counted and otherwise ignored. "
            "Return a dict with `modules` (module -> `{'total': lines, 'errors': ERROR lines, "
            "'rate': errors / total rounded to 3 decimals}`), `skipped` (malformed lines) and "
            "`worst` (the module with the highest rate, the alphabetically smallest on ties, "
            "None when there is no valid line)."
        ),
        solution=_LOG_RATES,
        inputs=(
            "["
            '[["ERROR db: timeout", "INFO db: ok", "INFO web: started"]], '
            '[["warning cache: slow", "error cache: miss", "ERROR cache: miss"]], '
            '[["nonsense", "INFO api: up", "TRACE api: deep"]], '
            "[[]], "
            '[["no colon here"]], '
            '[["ERROR a: x", "ERROR b: y"]], '
            '[["INFO two words: extra", "INFO one: fine"]], '
            '[["DEBUG core: a", "DEBUG core: b", "ERROR core: c"]], '
            '[["ERROR x: a:b:c", "info X: y"]]'
            "]"
        ),
        demo=(
            "def demo_testing():\n"
            '    print(log_error_rates(["ERROR db: down", "INFO db: up"]))\n'
            '    print(log_error_rates(["garbage"]))\n'
        ),
    ),
    FusedProgram(
        key="lru-urls",
        domains=("Network Programming & Communication", "Data Structures & Collections"),
        entry="cache_report",
        summary=(
            "Write a Python function `cache_report(urls, capacity)` that replays requests "
            "through a least-recently-used cache holding at most `capacity` entries (0 means "
            "nothing is stored). Each URL is first normalised: the scheme must be http or "
            "https (any case) followed by `://` and a non-empty host, otherwise the URL is "
            "invalid and skipped; scheme and host are lower-cased, a `#fragment` is dropped, "
            "the port is removed when it is the scheme's default (80 for http, 443 for "
            "https), and the path keeps its case, with an empty path becoming `/`. A request "
            "whose normalised URL is cached is a hit and becomes the most recently used; "
            "otherwise it is a miss and is stored, evicting the least recently used entry when "
            "the cache is over capacity. Return `{'hits', 'misses', 'invalid', 'cached'}` where "
            "`cached` lists the cached URLs from most to least recently used."
        ),
        solution=_LRU,
        inputs=(
            "["
            '[["http://A.com/x", "http://a.com:80/x", "https://a.com/x"], 2], '
            '[["https://b.org", "https://b.org/#top", "ftp://b.org/"], 1], '
            '[["http://h/1", "http://h/2", "http://h/1", "http://h/3", "http://h/2"], 2], '
            "[[], 3], "
            '[["http://x.com/a"], 0], '
            '[["not a url", "http://", "https://ok.net/P"], 5], '
            '[["http://a.com:8080/", "http://a.com/", "HTTP://A.COM:80"], 3], '
            '[["https://s.io:443/a", "https://s.io/a", "https://s.io/A"], 1]'
            "]"
        ),
        demo=(
            "def demo_testing():\n"
            '    print(cache_report(["http://a.com/", "http://A.com:80/"], 1))\n'
            '    print(cache_report(["ftp://x"], 2))\n'
        ),
    ),
    FusedProgram(
        key="knn",
        domains=("Machine Learning & AI", "Error Handling & Debugging"),
        entry="knn_vote",
        summary=(
            "Write a Python function `knn_vote(points, queries, k)` that labels each query "
            "point `[x, y]` by a vote of its k nearest training points. `points` is a list "
            "whose valid entries are lists `[x, y, label]` with numeric (not boolean) "
            "coordinates and a string label; every other entry is ignored and counted. "
            "Distance is Euclidean; among equally distant points the one earlier in the "
            "valid list is nearer. The label is the one most frequent among the k nearest "
            "(all valid points when fewer than k), the alphabetically smallest on ties. When "
            "there are no valid points or k < 1, the label is None. Return `{'labels': [one "
            "per query], 'ignored': number of invalid entries}`."
        ),
        solution=_KNN,
        inputs=(
            "["
            '[[[0, 0, "a"], [1, 0, "a"], [5, 5, "b"]], [[0, 1], [5, 4]], 2], '
            '[[[0, 0, "x"], [2, 0, "y"]], [[1, 0]], 2], '
            '[[[0, 0, "a"], "bad", [1, true, "b"], [3, 3]], [[0, 0]], 1], '
            "[[], [[0, 0]], 3], "
            '[[[0, 0, "a"]], [[9, 9]], 0], '
            '[[[1, 1, "q"], [1, 1, "p"], [4, 4, "p"]], [[1, 1], [3, 3]], 1], '
            '[[[0.5, 0.5, "m"], [2.5, 2.5, "n"]], [[1.4, 1.4], [1.6, 1.6]], 1], '
            '[[[0, 0, "a"], [0, 1, "b"], [1, 0, "b"]], [[0, 0]], 5]'
            "]"
        ),
        demo=(
            "def demo_testing():\n"
            '    print(knn_vote([[0, 0, "a"], [4, 4, "b"]], [[1, 1]], 1))\n'
            "    print(knn_vote([], [[0, 0]], 2))\n"
        ),
    ),
)
"""The stand-in's fusions (ours): each combines two domains in one working function."""


def catalogue_program(key: str) -> FusedProgram:
    for program in CATALOGUE:
        if program.key == key:
            return program
    raise ConfigError(
        f"program: no catalogue program {key!r}; have {', '.join(p.key for p in CATALOGUE)}"
    )


def _program_in(text: str) -> FusedProgram | None:
    """The catalogue program whose entry function `text` names (first found)."""
    for program in CATALOGUE:
        if re.search(rf"\b{re.escape(program.entry)}\b", text):
            return program
    return None


# ---- Explore: a ladder of techniques the stand-in blocks and, for some, works around ----


def _called(tree: ast.AST, names: Sequence[str]) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
        for node in ast.walk(tree)
    )


def _uses_sorting(tree: ast.AST) -> bool:
    return _called(tree, ("sorted",)) or any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "sort"
        for node in ast.walk(tree)
    )


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
    )


def _uses_modulo(tree: ast.AST) -> bool:
    return any(
        (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and not _is_text(node.left))
        or (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Mod))
        for node in ast.walk(tree)
    )


def _uses(*kinds: type[ast.AST]) -> Callable[[ast.AST], bool]:
    return lambda tree: any(isinstance(node, kinds) for node in ast.walk(tree))


def _uses_recursion(tree: ast.AST) -> bool:
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            name = function.name
            if any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
                for n in ast.walk(function)
            ):
                return True
    return False


_ORDER_HELPER = """def _cb_order(items, key=None, reverse=False):
    result = list(items)
    index = 1
    while index < len(result):
        current = result[index]
        current_key = current if key is None else key(current)
        position = index - 1
        while position >= 0:
            other = result[position]
            other_key = other if key is None else key(other)
            if (other_key < current_key) if reverse else (current_key < other_key):
                result[position + 1] = other
                position -= 1
            else:
                break
        result[position + 1] = current
        index += 1
    return result
"""

_EXTREME_HELPER = """def _cb_extreme(largest, *args, key=None, **options):
    items = list(args[0]) if len(args) == 1 else list(args)
    if not items:
        if "default" in options:
            return options["default"]
        raise ValueError("empty sequence has no extreme value")
    best = items[0]
    best_key = best if key is None else key(best)
    index = 1
    while index < len(items):
        value = items[index]
        value_key = value if key is None else key(value)
        if (best_key < value_key) if largest else (value_key < best_key):
            best, best_key = value, value_key
        index += 1
    return best
"""

_TOTAL_HELPER = """def _cb_total(items, start=0):
    total = start
    values = list(items)
    index = 0
    while index < len(values):
        total = total + values[index]
        index += 1
    return total
"""

_REMAINDER_HELPER = """def _cb_remainder(a, b):
    return a - (a // b) * b
"""


def _call(name: str, args: list[ast.expr], keywords: list[ast.keyword] | None = None) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=keywords or [])


class _Rewrite(ast.NodeTransformer):
    """Rewrites the uses of one technique; `helper` is the code it needs at module level."""

    helper = ""


class _NoSorting(_Rewrite):
    helper = _ORDER_HELPER

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "sorted":
            node.func = ast.Name(id="_cb_order", ctx=ast.Load())
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        self.generic_visit(node)
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "sort"
            and not call.args
        ):
            target = ast.Subscript(value=call.func.value, slice=ast.Slice(), ctx=ast.Store())
            return ast.Assign(
                targets=[target],
                value=_call("_cb_order", [call.func.value], call.keywords),
                lineno=node.lineno,
            )
        return node


class _NoExtremes(_Rewrite):
    helper = _EXTREME_HELPER

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("max", "min"):
            flag = ast.Constant(value=node.func.id == "max")
            return _call("_cb_extreme", [flag, *node.args], node.keywords)
        return node


class _NoSum(_Rewrite):
    helper = _TOTAL_HELPER

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "sum":
            return _call("_cb_total", node.args, node.keywords)
        return node


class _NoModulo(_Rewrite):
    helper = _REMAINDER_HELPER

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod) and not _is_text(node.left):
            return _call("_cb_remainder", [node.left, node.right])
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod) and isinstance(node.target, ast.Name):
            value = _call(
                "_cb_remainder", [ast.Name(id=node.target.id, ctx=ast.Load()), node.value]
            )
            return ast.Assign(
                targets=[ast.Name(id=node.target.id, ctx=ast.Store())],
                value=value,
                lineno=node.lineno,
            )
        return node


class _NoComprehensions(_Rewrite):
    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        self.generic_visit(node)
        return _call("list", [ast.GeneratorExp(elt=node.elt, generators=node.generators)])

    def visit_SetComp(self, node: ast.SetComp) -> ast.AST:
        self.generic_visit(node)
        return _call("set", [ast.GeneratorExp(elt=node.elt, generators=node.generators)])

    def visit_DictComp(self, node: ast.DictComp) -> ast.AST:
        self.generic_visit(node)
        pair = ast.Tuple(elts=[node.key, node.value], ctx=ast.Load())
        return _call("dict", [ast.GeneratorExp(elt=pair, generators=node.generators)])


class _NoForLoops(_Rewrite):
    """`for T in I: B` becomes an explicit iterator drained by `while True` (for-else loops
    are left alone: the stand-in gives up on them)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def visit_For(self, node: ast.For) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if node.orelse:
            return node
        self.count += 1
        name = f"_cb_iterator_{self.count}"
        setup = ast.Assign(
            targets=[ast.Name(id=name, ctx=ast.Store())],
            value=_call("iter", [node.iter]),
            lineno=node.lineno,
        )
        step = ast.Try(
            body=[
                ast.Assign(
                    targets=[node.target],
                    value=_call("next", [ast.Name(id=name, ctx=ast.Load())]),
                    lineno=node.lineno,
                )
            ],
            handlers=[
                ast.ExceptHandler(
                    type=ast.Name(id="StopIteration", ctx=ast.Load()), name=None, body=[ast.Break()]
                )
            ],
            orelse=[],
            finalbody=[],
        )
        loop = ast.While(test=ast.Constant(value=True), body=[step, *node.body], orelse=[])
        return [setup, loop]


@dataclass(frozen=True)
class Technique:
    """One rung of the stand-in's constraint ladder."""

    name: str
    """The `blocked_technique` text (how the judge stand-in recognises it)."""
    constraint: str
    expected_impact: str
    verification_hint: str
    check: Mapping[str, tuple[str, ...]]
    """Static-checker rules (Constraint.check) that catch the technique."""
    detect: Callable[[ast.AST], bool]
    rewrite: Callable[[], _Rewrite] | None
    """How the solver stand-in works around it (None: it cannot)."""


LADDER: tuple[Technique, ...] = (
    Technique(
        "built-in sorting",
        "Do not use sorted() or list.sort().",
        "The solver has to order items itself, for example by insertion or selection.",
        "A call of sorted or of a .sort method.",
        MappingProxyType({"calls": ("sorted", "sort")}),
        _uses_sorting,
        _NoSorting,
    ),
    Technique(
        "built-in max and min",
        "Do not use the built-in functions max() or min().",
        "Extremes must be tracked by hand while scanning.",
        "A call of max or min.",
        MappingProxyType({"calls": ("max", "min")}),
        lambda tree: _called(tree, ("max", "min")),
        _NoExtremes,
    ),
    Technique(
        "built-in sum",
        "Do not use the built-in function sum().",
        "Totals must be accumulated explicitly or derived another way.",
        "A call of sum.",
        MappingProxyType({"calls": ("sum",)}),
        lambda tree: _called(tree, ("sum",)),
        _NoSum,
    ),
    Technique(
        "modulo operator",
        "Do not use the % operator for arithmetic.",
        "Remainders and periodicity must come from other arithmetic.",
        "A % between numbers, or %=.",
        MappingProxyType({"operators": ("Mod",)}),
        _uses_modulo,
        _NoModulo,
    ),
    Technique(
        "comprehensions",
        "Do not use list, set or dict comprehensions.",
        "Collections must be built with generators, map/filter or explicit accumulation.",
        "A [... for ...], {... for ...} or {k: v for ...} expression.",
        MappingProxyType({"nodes": ("ListComp", "SetComp", "DictComp")}),
        _uses(ast.ListComp, ast.SetComp, ast.DictComp),
        _NoComprehensions,
    ),
    Technique(
        "for loops",
        "Do not use for loops (comprehensions are not for loops).",
        "Iteration must use while loops, recursion or higher-order functions.",
        "A for statement.",
        MappingProxyType({"nodes": ("For",)}),
        _uses(ast.For, ast.AsyncFor),
        _NoForLoops,
    ),
    Technique(
        "while loops",
        "Do not use while loops.",
        "Repetition must come from recursion, generators or library functions.",
        "A while statement.",
        MappingProxyType({"nodes": ("While",)}),
        _uses(ast.While),
        None,
    ),
    Technique(
        "recursion",
        "Do not write functions that call themselves.",
        "Repeated work must be iterative or closed-form.",
        "A function whose body calls the function's own name.",
        MappingProxyType({"nodes": ("Recursion",)}),
        _uses_recursion,
        None,
    ),
)
"""The generator stand-in blocks the first technique the current solution uses (in this
order); the solver stand-in rewrites the ones it can, so a seed climbs until it meets one it
cannot work around."""

_BY_NAME = MappingProxyType({t.name: t for t in LADDER})


def technique(name: str) -> Technique | None:
    return _BY_NAME.get(name.strip())


def apply_workarounds(code: str, blocked: Sequence[str]) -> str:
    """`code` with every blocked ladder technique it can work around rewritten (unknown or
    unavoidable techniques are left in place), helpers added after the docstring and
    `__future__` imports; unchanged when it does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    helpers: list[str] = []
    for rung in LADDER:
        if rung.name in blocked and rung.rewrite is not None and rung.detect(tree):
            rewrite = rung.rewrite()
            tree = ast.fix_missing_locations(rewrite.visit(tree))
            if rewrite.helper:
                helpers.append(rewrite.helper)
    if helpers:
        position = 0
        for index, node in enumerate(tree.body):
            is_doc = index == 0 and isinstance(node, ast.Expr) and _is_text(node.value)
            is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
            if is_doc or is_future:
                position = index + 1
        for helper in reversed(helpers):
            tree.body[position:position] = ast.parse(helper).body
        tree = ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


# ---- the policy ----


def _sections(text: str) -> dict[str, str]:
    """`## heading` -> content (heading line without its trailing details)."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            if current is not None:
                out[current] = "\n".join(lines).strip()
            current, lines = line.strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip()
    return out


def _first_code(text: str) -> str:
    match = _FENCE.search(text)
    return match.group(1) if match else ""


def _request(messages: list[Message]) -> str:
    """The request itself: the first user turn (later user turns are corrective)."""
    for message in messages:
        if message.role == "user":
            return message.content
    return ""


def _fence(code: str) -> str:
    return "```python\n" + code.rstrip("\n") + "\n```"


class PipelinePolicy:
    """Answers the Combo and Explore construction requests and the constraint judge.

    It is no generator: fusions come from CATALOGUE (picked by a hash of the components, or
    `program`), test inputs from the program's list, statements from its summary and the demo
    test, the difficulty solver answers the program (or a stub returning None), the auditor
    passes every rule but `fail_rules`; Explore constraints climb LADDER, the solver rewrites
    the base solution around what it can (`apply_workarounds`), and the judge checks the
    ladder techniques it recognises. Options make each filter's failure path reachable:
    `broken_first` (the first fusion calls an undefined helper; repair fixes it only when the
    error names it), `solve` ("sometimes": the samples with an even seed solve it; "always";
    "never"), `fail_rules` (audit rule ids to fail).
    """

    def __init__(
        self,
        *,
        program: str | None = None,
        broken_first: bool = False,
        solve: Literal["sometimes", "always", "never"] = "sometimes",
        fail_rules: Sequence[str] = (),
    ) -> None:
        if program is not None:
            catalogue_program(program)
        unknown = sorted(set(fail_rules) - set(prompts.AUDIT_RULES))
        if unknown:
            raise ConfigError(
                f"fail_rules: unknown rule ids {unknown}; allowed: {list(prompts.AUDIT_RULES)}"
            )
        if solve not in ("sometimes", "always", "never"):
            raise ConfigError(f"solve: expected sometimes, always or never, got {solve!r}")
        self.program, self.broken_first, self.solve = program, broken_first, solve
        self.fail_rules = tuple(fail_rules)

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        request = _request(messages)
        heading = request.splitlines()[0].strip() if request else ""
        handlers: dict[str, Callable[[str, ModelParams], str]] = {
            prompts.FUSE_HEADING: self._fuse,
            prompts.REPAIR_HEADING: self._repair,
            prompts.INPUTS_HEADING: self._inputs,
            prompts.QUESTION_HEADING: self._question,
            prompts.SOLVE_HEADING: self._solve,
            prompts.AUDIT_HEADING: self._audit,
            prompts.CONSTRAIN_HEADING: self._constrain,
            prompts.REFINE_HEADING: self._refine,
            constraint_judge_prompts.JUDGE_HEADING: self._judge,
        }
        handler = handlers.get(heading)
        return handler(request, params) if handler else UNRECOGNISED

    # ---- Combo ----

    def _pick(self, request: str) -> FusedProgram:
        if self.program is not None:
            return catalogue_program(self.program)
        components = request.split(prompts.SECTION_ANSWER, 1)[0]
        digest = hashlib.sha256(components.encode()).digest()
        return CATALOGUE[digest[0] % len(CATALOGUE)]

    @staticmethod
    def _fusion_reply(program: FusedProgram, solution: str) -> str:
        why = (
            f"The new problem needs both {program.domains[0]} and {program.domains[1]}: "
            "the first part's output decides how the second part runs, so neither source "
            "solution alone produces the result."
        )
        return (
            f"{why}\n\nEntry point: {program.entry}\n\n{_fence(solution)}\n\n"
            f"{_fence(program.demo)}\n"
        )

    def _fuse(self, request: str, params: ModelParams) -> str:
        program = self._pick(request)
        solution = program.solution
        if self.broken_first:
            solution = solution + f"\n\nFUSION_TABLE = {BROKEN_MARKER}()\n"
        return self._fusion_reply(program, solution)

    def _repair(self, request: str, params: ModelParams) -> str:
        sections = _sections(request)
        program = _program_in(sections.get(prompts.SECTION_SOLUTION, "")) or self._pick(request)
        error = sections.get(prompts.SECTION_ERROR, "")
        solution = _first_code(sections.get(prompts.SECTION_SOLUTION, "")) or program.solution
        if BROKEN_MARKER in error:
            solution = program.solution
        return self._fusion_reply(program, solution)

    def _inputs(self, request: str, params: ModelParams) -> str:
        program = _program_in(_sections(request).get(prompts.SECTION_ENTRY, ""))
        if program is None:
            return "```json\n[]\n```"
        return "```json\n" + program.inputs + "\n```"

    def _question(self, request: str, params: ModelParams) -> str:
        sections = _sections(request)
        program = _program_in(sections.get(prompts.SECTION_SOLUTION, ""))
        if program is None:
            return "<question></question>"
        demo = _first_code(sections.get(prompts.SECTION_DEMO_TEST, ""))
        examples = "\n".join(
            line.strip() for line in demo.splitlines() if line.strip().startswith("assert ")
        )
        tolerance = (
            " Floating-point values are compared with a tolerance of 1e-9 (`approx_equal`)."
            if "approx_equal(" in examples
            else ""
        )
        return (
            f"<question>\n{program.summary}\n\nThe solution must be written in Python."
            f"{tolerance}\n\nExample usage:\n```python\n{examples}\n```\n</question>"
        )

    def _solve(self, request: str, params: ModelParams) -> str:
        program = _program_in(_sections(request).get(prompts.SECTION_PROBLEM, ""))
        if program is None:
            return "I cannot solve this."
        solves = self.solve == "always" or (
            self.solve == "sometimes" and (params.seed is None or params.seed % 2 == 0)
        )
        if solves:
            return _fence(program.solution)
        return _fence(f"def {program.entry}(*args):\n    return None\n")

    def _audit(self, request: str, params: ModelParams) -> str:
        rules = {
            rule: {
                "pass": rule not in self.fail_rules,
                "reason": (
                    "scripted auditor: configured to fail this rule"
                    if rule in self.fail_rules
                    else "no problem found"
                ),
            }
            for rule in prompts.AUDIT_RULES
        }
        summary = "fails " + ", ".join(self.fail_rules) if self.fail_rules else "consistent"
        return "```json\n" + json.dumps({"rules": rules, "summary": summary}) + "\n```"

    # ---- Explore ----

    def _constrain(self, request: str, params: ModelParams) -> str:
        sections = _sections(request)
        blocked = {
            m.strip() for m in _BLOCKS.findall(sections.get(prompts.SECTION_CONSTRAINTS, ""))
        }
        code = _first_code(sections.get(prompts.SECTION_CURRENT, ""))
        try:
            tree: ast.AST | None = ast.parse(code)
        except SyntaxError:
            tree = None
        open_rungs = [t for t in LADDER if t.name not in blocked]
        if not open_rungs:
            return "Every technique I know is blocked already."
        used = [t for t in open_rungs if tree is not None and t.detect(tree)]
        rung = (used or open_rungs)[0]
        answer = {
            "constraint": rung.constraint,
            "blocked_technique": rung.name,
            "expected_impact": rung.expected_impact,
            "verification_hint": rung.verification_hint,
            "check": {key: list(names) for key, names in rung.check.items()},
        }
        return "```json\n" + json.dumps(answer, indent=1) + "\n```"

    def _refine(self, request: str, params: ModelParams) -> str:
        sections = _sections(request)
        blocked = [
            m.strip() for m in _BLOCKS.findall(sections.get(prompts.SECTION_CONSTRAINTS, ""))
        ]
        reference = _first_code(sections.get(prompts.SECTION_REFERENCE, ""))
        code = apply_workarounds(reference, blocked)
        return f"{_fence(code)}\nApproach: rewrote the blocked constructs with explicit helpers."

    def _judge(self, request: str, params: ModelParams) -> str:
        sections = _sections(request)
        code = _first_code(sections.get(constraint_judge_prompts.SECTION_CODE, ""))
        listing = sections.get(constraint_judge_prompts.SECTION_CONSTRAINTS, "")
        numbers = [int(n) for n in _JUDGE_NUMBER.findall(listing)]
        names = _JUDGE_BLOCKED.findall(listing)
        try:
            tree: ast.AST | None = ast.parse(code)
        except SyntaxError:
            tree = None
        violations = []
        for number, name in zip(numbers, names, strict=False):
            rung = technique(name)
            if rung is not None and tree is not None and rung.detect(tree):
                violations.append(
                    {"constraint": number, "where": rung.verification_hint, "why": rung.name}
                )
        verdict = {
            "compliant": not violations,
            "violations": violations,
            "alternative": "" if violations else "explicit helpers",
        }
        return json.dumps(verdict)
