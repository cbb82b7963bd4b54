"""Constraint compliance (App. B.1): each static rule kind with a positive and a negative
example, rules inferred from the constraint text, the built-in references, and the LLM judge
(prompt, parsing, retries, unjudged) with scripted models."""

from __future__ import annotations

import json

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.creativebench import constraint_judge_prompts as prompts
from forkingpaths.benchmarks.creativebench.constraints import (
    JUDGE_PARAMS,
    RECURSION,
    JudgeResult,
    Violation,
    check_constraints,
    check_rules,
    infer_rules,
    judge_constraints,
    read_verdict,
    render_judge_messages,
    rules_of,
    split_violations,
)
from forkingpaths.benchmarks.creativebench.judge_scripted import (
    ConstraintJudgePolicy,
    parse_request,
    technique_keyword,
)
from forkingpaths.benchmarks.creativebench.tasks import Constraint, ExploreTask, load_explore
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel


def constraint(
    check: dict[str, tuple[str, ...]] | None = None,
    *,
    text: str = "Do not use the forbidden thing.",
    blocked: str = "the forbidden thing",
    hint: str = "",
) -> Constraint:
    return Constraint(
        constraint=text,
        blocked_technique=blocked,
        expected_impact="Another approach.",
        verification_hint=hint,
        check=check or {},
    )


def rules_hit(code: str, **check: tuple[str, ...]) -> list[str]:
    return [v.rule for v in check_constraints(code, [constraint(check)])]


# ---- each static rule: a positive and a negative example ----

CASES = [
    # (rules, code that breaks them, code that does not)
    ({"calls": ("sorted",)}, "ys = sorted(xs)", "ys = list(reversed(xs))"),
    ({"calls": ("sort",)}, "xs.sort()", "xs.reverse()"),
    ({"calls": ("max",)}, "best = functools.reduce(max, xs)", "best = xs[0]"),
    ({"calls": ("str.join",)}, 'text = ", ".join(parts)', "import os\np = os.path.join(a, b)"),
    ({"calls": ("math.floor",)}, "import math\ny = math.floor(x)", "y = int(x // 1)"),
    ({"imports": ("bisect",)}, "from bisect import bisect_left", "bisect_count = 3"),
    ({"imports": ("bisect",)}, "import bisect as b", "import bisectx"),
    ({"imports": ("os",)}, "import os.path", "import posixpath"),
    ({"imports": ("heapq",)}, "h = __import__('heapq')", "h = __import__('queue')"),
    ({"nodes": ("For",)}, "for x in xs:\n    print(x)", "ys = [x for x in xs]"),
    ({"nodes": ("ListComp",)}, "ys = [x for x in xs]", "ys = list(x for x in xs)"),
    ({"nodes": ("Lambda",)}, "key = lambda p: p[0]", "def key(p):\n    return p[0]"),
    (
        {"nodes": (RECURSION,)},
        "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)",
        "def fact(n):\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n"
        "    return out",
    ),
    (
        {"nodes": (RECURSION,)},
        "class T:\n    def size(self, node):\n        return 1 + self.size(node.left)",
        "class T:\n    def size(self, node):\n        return node.left.size()",
    ),
    ({"operators": ("Mod",)}, "odd = n % 2", 'label = "100%"'),
    ({"operators": ("Mod",)}, "n %= 7", "n -= 7"),
    ({"operators": ("FloorDiv",)}, "half = n // 2", "half = n / 2"),
    ({"operators": ("USub",)}, "neg = -x", "neg = 0 - x"),
    ({"operators": ("In",)}, "found = x in xs", "found = xs.count(x) > 0"),
    ({"names": ("bisect_left",)}, "from bisect import bisect_left as bl", "bl = 1"),
    ({"names": ("bisect_left",)}, "i = bisect.bisect_left(xs, x)", "i = bisect_leftmost(xs, x)"),
]


@pytest.mark.parametrize(("rules", "bad", "good"), CASES, ids=[repr(c[0]) for c in CASES])
def test_each_rule_catches_its_use_and_spares_the_rest(
    rules: dict[str, tuple[str, ...]], bad: str, good: str
) -> None:
    assert check_rules(bad, rules), bad
    assert check_rules(good, rules) == [], good


def test_a_function_the_solution_defines_itself_is_not_the_forbidden_builtin() -> None:
    own = "def sorted(xs):\n    return xs\n\nys = sorted([3, 1])\nzs = sorted\n"
    assert rules_hit(own, calls=("sorted",)) == []
    # A method of that name is still flagged: the receiver may well be a list.
    assert rules_hit("def sort(xs):\n    return xs\n\nxs.sort()\n", calls=("sort",)) == [
        "calls:sort"
    ]


def test_type_annotations_are_not_the_solutions_logic() -> None:
    code = "def f(xs: list[int], k: int = 0) -> dict[str, int]:\n    total: int = len(xs)\n"
    assert rules_hit(code, nodes=("Subscript",), calls=("int", "dict")) == []
    assert rules_hit("def f(xs: list[int]):\n    return xs[0]\n", nodes=("Subscript",)) == [
        "nodes:Subscript"
    ]


def test_violations_name_rule_line_and_constraint() -> None:
    code = "import heapq\n\n\ndef top(xs):\n    xs.sort()\n    return sorted(xs)[-1]\n"
    loops = constraint({"nodes": ("For",)}, text="No loops.")
    sorting = constraint({"calls": ("sorted", "sort"), "imports": ("heapq",)}, text="No sorting.")
    violations = check_constraints(code, [loops, sorting])
    assert [(v.rule, v.line) for v in violations] == [
        ("imports:heapq", 1),
        ("calls:sort", 5),
        ("calls:sorted", 6),
    ]
    assert violations[1] == Violation(
        rule="calls:sort", detail=".sort(): breaks constraint 2 (No sorting.)", line=5
    )
    assert violations[0].to_json() == {
        "rule": "imports:heapq",
        "detail": "import heapq: breaks constraint 2 (No sorting.)",
        "line": 1,
        "inferred": False,
    }


def test_one_finding_per_construct_and_per_rule_and_line() -> None:
    rules = {"calls": ("list.sort", "sort")}
    assert [r for r, _, _ in check_rules("xs.sort()", rules)] == ["calls:list.sort"]
    assert len(check_rules("a = sorted(x) + sorted(y)", {"calls": ("sorted",)})) == 1


def test_unparsable_code_and_levels_without_constraints_give_no_violation() -> None:
    assert check_constraints("def f(:\n", [constraint({"nodes": ("For",)})]) == []
    assert check_constraints("for x in y: pass", []) == []


def test_malformed_rules_are_refused_naming_the_constraint() -> None:
    with pytest.raises(ConfigError, match=r"constraint 1 .*'Fro' is not an ast node class"):
        check_constraints("x = 1", [constraint({"nodes": ("Fro",)})])
    with pytest.raises(ConfigError, match="'Modulo' is not an ast operator class"):
        check_rules("x = 1", {"operators": ("Modulo",)})
    with pytest.raises(ConfigError, match="unknown rule kind 'loops'"):
        check_rules("x = 1", {"loops": ("For",)})


# ---- rules inferred from the texts of release rows ----

INFERRED = [
    ("Sorting the list first", {"calls": ("sort", "sorted")}),
    ("topological sort of the graph", {}),
    ("for loops", {"nodes": ("AsyncFor", "For")}),
    ("while-loop polling", {"nodes": ("While",)}),
    ("explicit loops", {"nodes": ("AsyncFor", "For", "While")}),
    ("nested loops over pairs", {}),
    ("recursive depth-first search", {"nodes": (RECURSION,)}),
    ("a non-recursive stack walk", {}),
    ("dictionary lookups", {"calls": ("OrderedDict", "defaultdict", "dict"),
                            "nodes": ("Dict", "DictComp")}),
    ("dict comprehension", {"nodes": ("DictComp",)}),
    ("dictionary comprehension", {"nodes": ("DictComp",)}),
    ("dictionary comprehensions", {"nodes": ("DictComp",)}),
    ("a dict-comprehension", {"nodes": ("DictComp",)}),
    ("list-comprehension", {"nodes": ("ListComp",)}),
    ("hash maps", {"calls": ("OrderedDict", "defaultdict", "dict"),
                   "nodes": ("Dict", "DictComp")}),
    ("binary search on the answer", {"imports": ("bisect",)}),
    ("a priority queue", {"imports": ("heapq",)}),
    ("the built-in sum function", {"calls": ("sum",)}),
    ("the itertools module", {"imports": ("itertools",)}),
    ("importing math", {"imports": ("math",)}),
    ("a math formula", {}),
    ("sorted() and list.sort()", {"calls": ("list.sort", "sort", "sorted")}),
    ("modulo arithmetic", {"operators": ("Mod",)}),
    ("bitwise tricks", {"operators": ("BitAnd", "BitOr", "BitXor", "Invert", "LShift", "RShift")}),
    ("f-string formatting", {"nodes": ("JoinedStr",)}),
    ("a clever closed form", {}),
]  # fmt: skip


@pytest.mark.parametrize(("blocked", "expected"), INFERRED, ids=[b for b, _ in INFERRED])
def test_keyword_rules_read_off_the_blocked_technique(
    blocked: str, expected: dict[str, tuple[str, ...]]
) -> None:
    assert infer_rules(blocked) == expected


def test_the_hint_is_read_only_when_the_technique_names_nothing() -> None:
    assert infer_rules("the obvious scan", "look for while loops") == {"nodes": ("While",)}
    # Hints name allowed alternatives too: ignored once the technique gave rules.
    assert infer_rules("sorting", "recursion is fine instead") == {"calls": ("sort", "sorted")}
    # Explicit calls are read from the technique only, never from the hint.
    assert infer_rules("the obvious scan", "use reduce() instead") == {}


def test_rows_without_check_use_inferred_rules() -> None:
    no_binary_search = constraint(
        text="Do not use binary search.", blocked="Binary search over the count"
    )
    assert rules_of(no_binary_search) == {"imports": ("bisect",)}
    assert check_constraints("import bisect\n", [no_binary_search])[0].rule == "imports:bisect"
    assert check_constraints("n = 10\nwhile n > 0:\n    n -= 3\n", [no_binary_search]) == []
    explicit = constraint({"names": ("x",)}, blocked="Binary search")
    assert rules_of(explicit) == {"names": ("x",)}


def test_a_dictionary_comprehension_ban_leaves_other_dicts_alone() -> None:
    """Regression: "dictionary comprehension" used to ban every dict (Dict, dict())."""
    no_dict_comp = constraint(
        text="Do not build the table with a dictionary comprehension.",
        blocked="Dictionary comprehension building the lookup table",
    )
    literal = (
        "def f(xs):\n    table = {}\n    for x in xs:\n        table[x] = 1\n"
        "    return dict(table)\n"
    )
    assert check_constraints(literal, [no_dict_comp]) == []
    (found,) = check_constraints("def f(xs):\n    return {x: 1 for x in xs}\n", [no_dict_comp])
    assert found.rule == "nodes:DictComp" and found.inferred


def test_inferred_findings_are_advisory_explicit_ones_final() -> None:
    inferred = constraint(text="Do not sort.", blocked="sorting the list")
    explicit = constraint({"nodes": ("For",)}, text="No for loops.")
    code = "def f(xs):\n    for x in xs:\n        pass\n    return sorted(xs)\n"
    found = check_constraints(code, [inferred, explicit])
    final, advisory = split_violations(found)
    assert [v.rule for v in final] == ["nodes:For"] and not final[0].inferred
    assert [v.rule for v in advisory] == ["calls:sorted"] and advisory[0].inferred
    assert advisory[0].to_json()["inferred"] is True


def test_judge_prompt_carries_the_advisory_hints() -> None:
    hint = Violation("calls:sorted", "sorted(): breaks constraint 1 (Do not sort.)", 4, True)
    _, user = render_judge_messages(task_with(NO_SORT, NO_BISECT), SORTING, [hint])
    assert "### Static checker hints" in user.content
    assert "- line 4: sorted(): breaks constraint 1 (Do not sort.)" in user.content
    assert "all 2 constraints" in user.content  # the hints are not a constraint
    constraints, code = parse_request(user.content) or ([], "")
    assert [c.number for c in constraints] == [1, 2] and code == SORTING.rstrip("\n")
    _, plain = render_judge_messages(task_with(NO_SORT, NO_BISECT), SORTING)
    assert "Static checker hints" not in plain.content


async def test_judge_constraints_passes_hints_to_the_model() -> None:
    fake = FakeChatModel([json.dumps({"compliant": True, "violations": []})])
    await judge_constraints(fake, task_with(NO_SORT), CLEAN, hints=["line 2: uses sorted()"])
    assert "- line 2: uses sorted()" in fake.requests[0][0][1].content


LOOP_NODES = {"For", "While"}


def test_no_loops_allows_recursion_unless_the_constraint_names_it() -> None:
    """Our rule (docs/dev/creativebench.md §3): recursion may replace loops unless recursion is
    itself forbidden. Inferred rules agree, and so does every built-in reference."""
    recursive = "def total(xs):\n    return xs[0] + total(xs[1:]) if xs else 0\n"
    no_loops = constraint(text="Use no loops.", blocked="explicit loops over the list")
    assert check_constraints(recursive, [no_loops]) == []
    no_recursion = constraint(text="No recursion.", blocked="recursive decomposition")
    assert [v.rule for v in check_constraints(recursive, [no_recursion])] == ["nodes:Recursion"]
    tasks, _ = load_explore()
    recursive_no_loop_levels = []
    for task in tasks:
        nodes = {n for c in task.constraints_detail for n in c.check.get("nodes", ())}
        uses_recursion = bool(check_rules(task.reference_solution, {"nodes": (RECURSION,)}))
        if RECURSION in nodes:
            assert not uses_recursion, task.id
        elif nodes >= LOOP_NODES and uses_recursion:
            recursive_no_loop_levels.append(task.id)
        for item in task.constraints_detail:
            if set(item.check.get("nodes", ())) >= LOOP_NODES and "ecursi" not in item.constraint:
                inferred = infer_rules(item.blocked_technique, item.verification_hint)
                assert RECURSION not in inferred.get("nodes", ()), task.id
    assert recursive_no_loop_levels  # the rule is exercised by the built-in data


def test_built_in_reference_solutions_comply_with_their_level() -> None:
    tasks, errors = load_explore()
    assert not errors and tasks
    for task in tasks:
        assert check_constraints(task.reference_solution, task.constraints_detail) == [], task.id


# ---- the judge ----


def task_with(*constraints: Constraint, level: int | None = None) -> ExploreTask:
    return ExploreTask(
        id="kits-L1",
        problem_id="kits",
        level=len(constraints) if level is None else level,
        language="python",
        difficulty="medium",
        question="Assemble as many kits as possible.",
        function_signature="def max_kits(need, stock):",
        constraints=tuple(c.constraint for c in constraints),
        constraints_detail=tuple(constraints),
        test_code="def test():\n    pass\n",
        reference_solution="def max_kits(need, stock):\n    return 0\n",
    )


NO_SORT = constraint(
    text="Do not sort anything.", blocked="sorting with sorted()", hint="Flag sorted( and .sort("
)
NO_BISECT = constraint(
    text="Do not use binary search.", blocked="binary search over the answer", hint=""
)
CLEAN = "def max_kits(need, stock):\n    return min(s // n for n, s in zip(need, stock) if n)\n"
SORTING = "def max_kits(need, stock):\n    return sorted(stock)[0] // max(need)\n"


def scripted(policy: object) -> ScriptedModel:
    return ScriptedModel("scripted/test", policy, ModelRuntime(cache=False))  # type: ignore[arg-type]


def test_judge_prompt_shows_every_constraint_and_the_code() -> None:
    code = "def f():\n    return '```'\n"
    system, user = render_judge_messages(task_with(NO_SORT, NO_BISECT), code)
    assert system == Message(role="system", content=prompts.JUDGE_SYSTEM)
    assert user.content.startswith(prompts.JUDGE_HEADING)
    assert "### Constraint 1\nInstruction: Do not sort anything." in user.content
    assert "Blocked technique: binary search over the answer" in user.content
    assert f"Verification hint: {prompts.NOT_GIVEN}" in user.content
    assert "all 2 constraints" in user.content
    # The fence outgrows any backtick run in the code, so the code cannot close it.
    assert "````python\n" + code.rstrip("\n") + "\n````" in user.content
    constraints, shown_code = parse_request(user.content) or ([], "")
    assert shown_code == code.rstrip("\n")
    assert [(c.number, c.blocked_technique, c.verification_hint) for c in constraints] == [
        (1, "sorting with sorted()", "Flag sorted( and .sort("),
        (2, "binary search over the answer", ""),
    ]


async def test_scripted_judge_compliant_and_not() -> None:
    judge = scripted(ConstraintJudgePolicy())
    task = task_with(NO_SORT, NO_BISECT)
    ok = await judge_constraints(judge, task, CLEAN)
    assert ok.compliant is True and ok.judged and ok.violations == ()
    assert [c.purpose for c in ok.calls] == ["constraint-judge"]
    bad = await judge_constraints(judge, task, SORTING)
    assert bad.compliant is False
    assert "sorted()" in bad.reasons and "constraint: 1" in bad.reasons
    named = "def binary_search_kits(need, stock):\n    return 0\n"
    flagged = await judge_constraints(judge, task, named)
    assert flagged.compliant is False and "binarysearch" in flagged.reasons
    assert flagged.to_json() == {
        "compliant": False,
        "reasons": flagged.reasons,
        "violations": list(flagged.violations),
    }


async def test_judge_is_asked_greedily_and_level0_needs_no_call() -> None:
    fake = FakeChatModel([json.dumps({"compliant": True, "violations": []})])
    result = await judge_constraints(fake, task_with(NO_SORT), CLEAN)
    assert result == JudgeResult(True, "compliant", result.calls, ())
    assert fake.requests[0][1] == JUDGE_PARAMS == ModelParams(temperature=0.0)
    level0 = await judge_constraints(fake, task_with(level=0), SORTING)
    assert level0.compliant is True and level0.calls == []
    assert len(fake.requests) == 1


async def test_judge_retries_an_unreadable_reply_with_a_corrective_turn() -> None:
    fake = FakeChatModel(
        [
            "Looks fine to me.",
            '```json\n{"compliant": false, "violations": ["sorted() on line 2"]}\n```',
        ]
    )
    result = await judge_constraints(fake, task_with(NO_SORT), SORTING)
    assert result.compliant is False and result.reasons == "sorted() on line 2"
    assert len(result.calls) == 2
    second = fake.requests[1][0]
    assert second[-2] == Message(role="assistant", content="Looks fine to me.")
    assert second[-1].content.startswith("Your reply could not be read as a verdict")


async def test_garbage_judge_leaves_the_solution_unjudged_after_retries() -> None:
    result = await judge_constraints(scripted(GarbagePolicy()), task_with(NO_SORT), CLEAN)
    assert result.compliant is None and not result.judged
    assert len(result.calls) == 3
    assert result.reasons.startswith("unjudged: no JSON object")
    assert "after 3 attempts" in result.reasons
    fewer = await judge_constraints(scripted(GarbagePolicy()), task_with(NO_SORT), CLEAN, retries=0)
    assert len(fewer.calls) == 1
    with pytest.raises(ConfigError, match="retries"):
        await judge_constraints(scripted(GarbagePolicy()), task_with(NO_SORT), CLEAN, retries=-1)


async def test_scripted_judge_answers_other_requests_without_a_verdict() -> None:
    policy = ConstraintJudgePolicy()
    answer = policy.respond([Message(role="user", content="hello")], ModelParams())
    assert read_verdict(answer)[0] is None


@pytest.mark.parametrize(
    ("reply", "verdict", "reason"),
    [
        ('{"compliant": true, "violations": []}', (True, (), ""), ""),
        ('Verdict: {"Compliant": false}', (False, (), ""), ""),
        (
            '{"compliant": false, "violations_found": [{"line_or_section": "4", "specific_code":'
            ' "xs.sort()"}], "reasoning": "sorts"}',
            (False, ("line_or_section: 4; specific_code: xs.sort()",), "sorts"),
            "",
        ),
        ('{"compliant": "false"}', None, '"compliant" must be true or false, got "false"'),
        ('{"compliant": true, "violations": ["x"]}', None, "violations are listed"),
        ('{"compliant": false, "violations": "line 3"}', None, '"violations" must be a list'),
        ('{"verdict": "ok"} no verdict here', None, 'no JSON object with a "compliant" key'),
    ],
)
def test_read_verdict(reply: str, verdict: object, reason: str) -> None:
    found, why = read_verdict(reply)
    assert found == verdict
    assert reason in why


def test_technique_keyword() -> None:
    assert technique_keyword("Binary search over the answer") == "binarysearch"
    assert technique_keyword("binary search") == "binarysearch"
    assert technique_keyword("sorting") is None
    assert technique_keyword("use of the built-in function") is None
