"""All text the construction pipelines show a model (Combo: §3.2, App. J; Explore: §3.3, K, L)."""

# The wording is ours; the content follows the paper's construction prompts. Combo: fuse
# source solutions from different domains into one solution of a new problem that needs all of
# them, with `# FUSION POINT:` comments, standard library only, deterministic and sandbox-safe
# (Tables 11-12); repair a fusion with the sandbox error fed back (Table 13); write test inputs
# (the paper asks for test calls; we ask for argument lists and compute outputs in the
# sandbox); reverse-engineer the statement from solution and tests (Table 14); audit a record
# against the seven rules of App. D.1.1 (Table 9's audit, one verdict per rule); the difficulty
# check's plain solve request (§3.4). Explore: propose one new negative constraint from the
# current solution (Table 17, one level at a time) and adapt the base solution under the
# stacked constraints with feedback (Table 16 with Table 19's reference block, Eq. 1).
# Every user turn starts with a heading line and keeps each input under a `## ` heading line,
# so that `pipeline_scripted` can read requests back.

from __future__ import annotations

from string import Template
from types import MappingProxyType

# ---- headings (the scripted policy recognises each request by its first line) ----

FUSE_HEADING = "# CreativeBench construction: fuse source solutions"
REPAIR_HEADING = "# CreativeBench construction: repair a fused solution"
INPUTS_HEADING = "# CreativeBench construction: write test inputs"
QUESTION_HEADING = "# CreativeBench construction: reverse-engineer the problem statement"
SOLVE_HEADING = "# CreativeBench construction: solve a problem (difficulty check)"
AUDIT_HEADING = "# CreativeBench construction: audit a record"
CONSTRAIN_HEADING = "# CreativeBench construction: propose the next negative constraint"
REFINE_HEADING = "# CreativeBench construction: solve under constraints"

SECTION_COMPONENT = "## Source solution"
"""Prefix of each component's heading: `## Source solution 1 (domain: ...)`."""
SECTION_SOLUTION = "## Solution"
SECTION_DEMO = "## Demo block"
SECTION_ERROR = "## Sandbox error"
SECTION_ENTRY = "## Entry function"
SECTION_DEMO_TEST = "## Demo test function"
SECTION_FULL_TEST = "## Full test function"
SECTION_QUESTION = "## Problem statement"
SECTION_RULES = "## Rules"
SECTION_PROBLEM = "## Problem"
SECTION_SIGNATURE = "## Required signature"
SECTION_CONSTRAINTS = "## Constraints in force"
SECTION_CURRENT = "## Current solution"
SECTION_REFERENCE = "## Reference solution (adapt it)"
SECTION_ATTEMPT = "## Your previous attempt"
SECTION_FEEDBACK = "## Feedback on earlier attempts"
SECTION_ANSWER = "## Your answer"

NONE_YET = "(none)"

# ---- Combo: solution fusion (Tables 11-12) ----

FUSE_SYSTEM = (
    "You are a programmer who builds new problems by combining code from different fields."
)

COMPONENT_BLOCK = Template(
    SECTION_COMPONENT + " $number (domain: $domain)\n$description\n```python\n$code\n```"
)
"""One source solution shown to the fusion request."""

FUSE_USER = Template(
    FUSE_HEADING
    + """

Below are $count working solutions, each from a different programming domain. Invent ONE new
problem that genuinely needs all of them, and write its solution in Python.

$components

"""
    + SECTION_ANSWER
    + """
How to fuse:
- The new problem must depend on every domain: the result of one part has to change how
  another part behaves. Mark each such place with a `# FUSION POINT:` comment that says what
  flows where and what would change if that input changed.
- Running the parts one after the other, or side by side, is not a fusion.
- Explain in two or three sentences, before the code, why no single source solution could
  solve the new problem on its own.

What the code must respect:
- Python standard library only; no files, network, subprocesses, clocks or randomness; no
  try/except; every call finishes quickly (polynomial time, small inputs).
- One top-level entry function solves the problem. Its arguments and its return value are
  plain data: numbers, strings, booleans, None, lists and dicts with string keys.
- Helper functions and classes are allowed; the entry function is what tests will call.
- No `if __name__ == "__main__":` block in the solution.

Reply with:
1. A line `Entry point: <name of the entry function>`.
2. A ```python block with the complete fused solution.
3. A ```python block that defines `demo_testing()`, which calls the entry function on two or
   three representative inputs and prints the results (no asserts needed).
"""
)

# ---- Combo: repair (Table 13) ----

REPAIR_SYSTEM = "You are a Python programmer who debugs code until it runs."

REPAIR_USER = Template(
    REPAIR_HEADING
    + """

This fused solution (combining $domains) failed when its demo block ran in the sandbox.

"""
    + SECTION_SOLUTION
    + """
```python
$code
```

"""
    + SECTION_DEMO
    + """
```python
$demo
```

"""
    + SECTION_ERROR
    + """
Verdict: $verdict
```
$error
```

"""
    + SECTION_ANSWER
    + """
Fix the cause of this error and nothing else:
- keep every `# FUSION POINT:` comment and the interaction it describes;
- keep the entry function `$entry`, its name, parameters and the kind of value it returns;
- keep the problem as complex as it was; no try/except, no randomness, no files or network,
  standard library only.

Reply in the same format: a line `Entry point: <name>`, a ```python block with the complete
fixed solution, then a ```python block defining `demo_testing()` (changed only if it caused the
error).
"""
)

# ---- Combo: test inputs (§3.2, Test Function Generation) ----

INPUTS_SYSTEM = "You are a software tester who writes thorough, valid test inputs."

INPUTS_USER = Template(
    INPUTS_HEADING
    + """

"""
    + SECTION_SOLUTION
    + """
```python
$code
```

"""
    + SECTION_ENTRY
    + """
$signature

"""
    + SECTION_ANSWER
    + """
Write $wanted calls of `$entry` as argument lists. The first three should be typical cases
that show what the function does (they become the examples of the problem statement); the
rest should reach the boundaries: empty or minimal inputs, the largest sizes that still run
instantly, ties, values on each side of every threshold in the code, and each branch at least
once. Do not write inputs that make the function raise an exception.

Each argument list holds the positional arguments in order, as JSON values (numbers, strings,
booleans, null, arrays, objects with string keys). Do not compute the expected results; the
sandbox runs the solution to obtain them.

Reply with one ```json block holding a JSON array of argument arrays, for example
[[3, "abc"], [0, ""]] for a function of two parameters.
"""
)

# ---- Combo: problem synthesis (Table 14) ----

QUESTION_SYSTEM = (
    "You are a programming teacher who writes clear, self-contained problem statements."
)

QUESTION_USER = Template(
    QUESTION_HEADING
    + """

A verified Python solution and the tests it passes follow. Work out which problem this code
solves and write that problem as a task for a programmer who sees neither the code nor the
full tests.

"""
    + SECTION_SOLUTION
    + """
```python
$code
```

"""
    + SECTION_DEMO_TEST
    + """
```python
$demo_test
```

"""
    + SECTION_FULL_TEST
    + """
```python
$full_test
```

"""
    + SECTION_ANSWER
    + """
The statement must:
1. say that the solution is to be written in Python;
2. describe the task plainly and exactly, without jargon taken from the code;
3. name exactly the functions or classes the tests call (here `$entry`), with their
   parameters, and no internal helper;
4. define the input (types, structure, value ranges) and the output (type and shape);
5. include the demo test's calls as the example, copied exactly;
6. not reveal how the solution works (no algorithm, no internal variables) and not show any
   test case beyond the demo test;
7. state every rule a correct solution needs, edge cases included, so that nothing has to be
   guessed.

Put the whole statement between <question> and </question>.
"""
)

# ---- Combo: difficulty check (§3.4) ----

SOLVE_SYSTEM = "You are an expert Python programmer."

SOLVE_USER = Template(
    SOLVE_HEADING
    + """

"""
    + SECTION_PROBLEM
    + """
$question

"""
    + SECTION_ANSWER
    + """
Solve the problem. Reply with one ```python block holding the complete solution, without tests
or explanations.
"""
)

# ---- Combo: quality audit (§3.4, App. D.1.1-D.1.2) ----

AUDIT_RULES = MappingProxyType(
    {
        "signature_consistency": (
            "The function and class names and the parameters the tests use are the ones the "
            "problem statement asks for."
        ),
        "randomness_handling": (
            "No expected value depends on randomness that is not seeded, on time, or on any "
            "other source that changes between runs."
        ),
        "objective_alignment": (
            "The tests check the behaviour the problem statement asks for, not some side "
            "behaviour of this particular solution."
        ),
        "numerical_precision": (
            "Floating-point results are compared with rounding or a tolerance where exact "
            "equality could fail on a correct solution."
        ),
        "exception_safety": (
            "No broad try/except in the tests or the solution swallows assertion failures or "
            "hides real errors."
        ),
        "requirement_hallucination": (
            "The tests demand nothing (format, order, exact wording, edge behaviour) that the "
            "problem statement does not state."
        ),
        "test_completeness": (
            "The tests cover the essential corner cases and boundaries of the problem, not "
            "only typical inputs."
        ),
    }
)
"""Rule id -> what it requires: the seven consistency rules of App. D.1.1, in order."""

AUDIT_SYSTEM = (
    "You are a strict auditor of code-generation benchmark records. You judge whether a "
    "problem statement, its reference solution and its assert-based tests fit together."
)

AUDIT_RULE_LINE = Template("- `$rule`: $text")

AUDIT_USER = Template(
    AUDIT_HEADING
    + """

The record below will be used to test programmers: they read the problem statement, write a
solution, and the full test function is run against it in a sandbox.

"""
    + SECTION_QUESTION
    + """
$question

"""
    + SECTION_SOLUTION
    + """
```python
$code
```

"""
    + SECTION_DEMO_TEST
    + """
```python
$demo_test
```

"""
    + SECTION_FULL_TEST
    + """
```python
$full_test
```

"""
    + SECTION_RULES
    + """
$rules

"""
    + SECTION_ANSWER
    + """
Judge the record against each rule separately. A rule fails only for a concrete problem you
can point to; say which line or case in the reason.

Reply with one ```json block:
{"rules": {"<rule id>": {"pass": true or false, "reason": "one sentence"}, ...},
 "summary": "one sentence"}
with an entry for every rule id listed above.
"""
)

# ---- Explore: constraint generation (Table 17, one constraint per level) ----

CONSTRAIN_SYSTEM = "You are an expert code analyst."

CONSTRAINT_LINE = Template("$number. $constraint (blocks: $blocked_technique)")
"""One stacked constraint as requests show it."""

CONSTRAIN_USER = Template(
    CONSTRAIN_HEADING
    + """

We build a benchmark of exploratory creativity: a problem is solved again and again, each time
under one more restriction that blocks the approach used so far, so that solvers must find
structurally different algorithms.

"""
    + SECTION_PROBLEM
    + """
$question

"""
    + SECTION_SIGNATURE
    + """
$signature

"""
    + SECTION_CURRENT
    + """
```$language
$code
```

"""
    + SECTION_CONSTRAINTS
    + """
$constraints

"""
    + SECTION_ANSWER
    + """
Find the technique the current solution depends on most (a built-in, a data structure, a
control-flow pattern, an operator, a library) that no constraint above blocks yet, and write
ONE new negative constraint that forbids it. The new constraint joins the ones above; all of
them will hold together. It must:
- block something the current solution really uses, so it has to change its approach;
- leave the problem solvable in $language with the standard library under all constraints;
- be checkable by reading the code, and not be dodged by renaming or wrapping.

Optionally add `check`, rules a static checker can apply, with any of the keys "calls"
(forbidden function or method names, e.g. "sorted", "sort", "max"), "imports" (forbidden
modules), "nodes" (forbidden Python ast node names, e.g. "For", "While", "ListComp",
"Lambda", or "Recursion" for a function calling itself), "operators" (ast operator names,
e.g. "Mod", "FloorDiv", "Pow"), "names" (forbidden attribute or global names); each a list of
strings.

Reply with one ```json block:
{"constraint": "the instruction a solver reads, starting with Do not",
 "blocked_technique": "short name of the technique",
 "expected_impact": "which other approaches the solver is pushed towards",
 "verification_hint": "what in the code shows a violation",
 "check": {"calls": ["..."]}}
"""
)

# ---- Explore: refinement under constraints (Table 16 + Table 19, Eq. 1) ----

REFINE_SYSTEM = "You are a creative problem solver."

FEEDBACK_LINE = Template("Attempt $attempt: $feedback")

REFINE_USER = Template(
    REFINE_HEADING
    + """

Common solutions to this problem are blocked on purpose. Find a different approach that still
solves it exactly.

"""
    + SECTION_PROBLEM
    + """
$question

"""
    + SECTION_SIGNATURE
    + """
$signature

"""
    + SECTION_CONSTRAINTS
    + """
$constraints

"""
    + SECTION_REFERENCE
    + """
```$language
$reference
```

"""
    + SECTION_ATTEMPT
    + """
$attempt

"""
    + SECTION_FEEDBACK
    + """
$feedback

"""
    + SECTION_ANSWER
    + """
Adapt the reference solution so that it obeys EVERY constraint above and still passes the
problem's tests:
- keep the exact function names, signatures, classes and return types the problem requires,
  and include every function the problem needs;
- a workaround that renames or wraps a blocked technique still breaks its constraint;
- where feedback is given, fix what it reports.

Reply with one ```$language block holding the complete solution, then one line
`Approach: <one or two sentences on the alternative you used>`.
"""
)

ATTEMPT_BLOCK = Template("```$language\n$code\n```")
"""The previous attempt, shown from the second attempt of a level on."""

FEEDBACK_SANDBOX = Template("the tests failed ($verdict): $detail")
FEEDBACK_STATIC = Template("the code breaks a constraint: $violations")
FEEDBACK_JUDGE = Template("the constraint judge found a violation: $reasons")
FEEDBACK_UNJUDGED = "the constraint judge could not decide whether the code complies"
FEEDBACK_NO_CODE = "the reply held no code block"

# ---- corrective turns after an unreadable reply ----

CORRECTIVE = Template(
    "I could not use that reply: $reason. Answer again, in exactly the format asked for."
)
