"""All text the CreativeBench solvers show a model: the Combo and Explore evaluation prompts.

The wording is ours; the content follows the paper. Combo (App. M, Table 20): an expert solver
told to reason step by step silently (read the whole specification, pin down the signature,
return structure and exact literals, split into subproblems, weigh edge cases, pick an
efficient algorithm, simulate it on an example) and to answer with exactly one code block
holding no explanations, comments or tests, and nothing around it ("Do not include any
explanations, comments, tests, or extra text outside the code block").

Explore: the paper's App. N (Table 21) is the compliance verifier, which
`constraints.judge_constraints` owns. Level 0 is the baseline every constrained level's novelty
is measured against, and App. A defines it as the model's default behaviour: it gets a plain
prompt (`EXPLORE_BASELINE_INSTRUCTION`, `EXPLORE_BASELINE_PROMPT`: the content of the paper's
baseline prompt, Table 19's `generate_baseline_solution`: an expert programmer, the exact
signature, one code block and no extra text), with no word of creativity or of avoiding the
usual route. Constrained levels (>= 1) get what the paper's constraint-guided generation prompt
gives the model (App. K, Table 16): the problem, the exact signature, the stacked constraints,
the call to find another route while staying correct, the interface requirements, and the
answer format (one code block, then an `Approach:` line). The feedback-from-previous-attempts
section of Table 16 belongs to dataset construction and is left out of evaluation.

Each prompt is an *instruction* (what an evolved prompt replaces, see `evolve.py`) followed by
the task and the answer format, which stay fixed so that code extraction keeps working whatever
the instruction says. The templates hold no fenced block; a task's question may (the Combo
questions show the signature in one).
"""

from __future__ import annotations

from string import Template

COMBO_INSTRUCTION = """You are a seasoned competitive programmer and software engineer. Solve the \
programming problem below so that it is correct and holds up on every input it may receive.

Reason step by step before you write any code, but keep that reasoning to yourself:
- Read the whole specification, including every input and output format and every example.
- Pin down the function signature you must provide, the structure of what it returns, and any \
field names or literal strings that have to match character for character.
- Break the work into its subproblems (reading the input, validating it, the core logic, \
shaping the output).
- Think through the edge cases (empty inputs, extreme values, malformed or borderline inputs) \
and decide how your code treats each one.
- Choose an algorithm and data structures that are correct and fast enough for the limits the \
problem states.
- Trace your algorithm by hand on at least one non-trivial example to confirm it works.

Write the final code only once that reasoning has convinced you of your plan."""
"""Default Combo instruction (App. M content); an evolved prompt replaces it."""

COMBO_PROMPT = Template(
    """$instruction

## Problem
$question

## Answer format
Reply with exactly one Markdown code block tagged $language and nothing else. Put no \
explanations, no comments and no tests in the code, and no text before or after the block. The \
code must implement the complete solution the problem describes."""
)
"""Combo solver prompt: the instruction, the problem, the answer format."""

EXPLORE_INSTRUCTION = """This task measures exploratory creativity: the ability to find a sound \
solution by an unusual route when the familiar ones are ruled out. The constraints below block \
the techniques most programmers would reach for first, so the usual solution is off the table \
and you have to search the space of solutions for another one.

How to approach it:
1. Treat the constraints as an invitation to invent, not as an obstacle to work around.
2. Look beyond your first idea: unusual techniques, mathematical properties of the problem, \
lesser-used language features, algorithmic tricks you seldom need.
3. Stay correct: an original solution that fails the tests is worth nothing."""
"""Default Explore instruction (App. K Table 16 content); an evolved prompt replaces it."""

EXPLORE_BASELINE_INSTRUCTION = """You are an expert $language programmer. Solve the problem \
below using exactly the given function signature."""
"""Explore level-0 instruction (Table 19's baseline prompt): the model's default behaviour, so
no evolved instruction replaces it. `$language` is filled in."""

SIGNATURE_HEADING = "## Required function signature"
"""Heading of the signature section (the scripted solver reads the signature below it)."""

EXPLORE_PROMPT = Template(
    """$instruction

## Problem
$question

"""
    + SIGNATURE_HEADING
    + """
Your solution must use exactly this signature:
$signature

## Constraints
$constraints

## Requirements
- Language: $language.
- Your solution must pass every test of the problem.
- Keep the function name of the problem exactly as it is given.
- Keep the function signatures, the class structure and the return types exactly as the \
problem defines them.
- Include every function and method the problem requires; leave none of them out.
- Show your creativity in how you solve the problem, within this interface.

## Answer format
One Markdown code block tagged $language holding your whole solution, followed by one line \
that starts with "Approach:" and says in one or two sentences which alternative strategy you \
used."""
)
"""Explore solver prompt: the instruction, the problem, signature, constraints, requirements and
the answer format."""

EXPLORE_BASELINE_PROMPT = Template(
    """$instruction

## Problem
$question

"""
    + SIGNATURE_HEADING
    + """
$signature

## Answer format
Reply with exactly one Markdown code block tagged $language holding the implementation, and no \
text before or after it."""
)
"""Explore level-0 (baseline) prompt: the plain instruction, the problem, the signature and the
answer format; no constraints, no call for creativity, no `Approach:` line."""

CONSTRAINTS_INTRO = "Solve the problem while respecting every one of these constraints:"
CONSTRAINT_LINE = Template("$number. $text")
NO_CONSTRAINTS = "None at this level: solve the problem in whatever way you judge best."
"""The constraints block: an intro line and numbered constraints, or the level-0 line."""

NO_SIGNATURE = "(as the problem states it)"
"""Shown when a task gives no separate signature."""
