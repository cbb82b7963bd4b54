"""All text the constraint-compliance judge shows a model (CreativeBench-Explore, App. B.1).

The wording is ours; the content follows the paper's Table 10: the judge is told it checks code
for a creativity benchmark in which common approaches are blocked, sees the code and every
constraint of the level with its blocked technique and verification hint, looks for any use of a
blocked technique, including one that is merely renamed or wrapped, and answers one JSON object.
"""

from __future__ import annotations

from string import Template

JUDGE_HEADING = "# Constraint compliance check"
"""First line of every judge request (the scripted judge recognises its prompt by it)."""

SECTION_CONSTRAINTS = "## Constraints of this level"
SECTION_CODE = "## Code under review"
SECTION_ANSWER = "## Your answer"
"""Section headings of the user turn, in order; each sits on a line of its own."""

CONSTRAINT_FIELDS = ("Instruction", "Blocked technique", "Verification hint")
"""Labels of the three lines under each constraint title, in order."""

JUDGE_SYSTEM = """You audit code submitted to a benchmark of creative programming. In this \
benchmark a solver receives a problem together with a growing list of prohibitions: each one \
shuts off an approach that a programmer would normally reach for (a data structure, a library \
call, a control-flow pattern, an algorithm), so that the solver has to find another way. Your \
job is to decide whether one submitted solution respects every prohibition it was given. You do \
not judge whether the code is correct, fast or elegant; tests check correctness separately.

How to decide:
1. Take each constraint in turn. Its instruction says what is forbidden, the blocked technique \
names the approach it targets, and the verification hint says what to look for in the code.
2. Search the whole solution, helper functions and imports included, for any use of that \
technique.
3. Count disguised uses as uses: the forbidden call behind a wrapper or an alias, a forbidden \
module imported under another name, the same algorithm moved into a helper with an innocent \
name. A different mechanism that reaches the same result (another algorithm, another data \
structure, arithmetic instead of iteration) is allowed, unless the instruction forbids it too.
4. Read each instruction literally and do not invent prohibitions: what a constraint does not \
forbid is allowed.

The solution is compliant only when it breaks none of the constraints.

Reply with one JSON object and nothing else:
{"compliant": true or false,
 "violations": [{"constraint": <number>, "where": "<line or code excerpt>", \
"why": "<one sentence>"}],
 "alternative": "<when compliant: the approach used instead, in a few words>"}
"violations" is an empty list when the solution is compliant."""
"""System turn: the rubric and the answer format."""

CONSTRAINT_BLOCK = Template(
    """### Constraint $number
Instruction: $constraint
Blocked technique: $blocked_technique
Verification hint: $verification_hint"""
)
"""One constraint of the level; fields missing from the task read NOT_GIVEN."""

NOT_GIVEN = "(not given)"

JUDGE_USER = Template(
    JUDGE_HEADING
    + "\n\n"
    + SECTION_CONSTRAINTS
    + "\n$constraints\n\n"
    + SECTION_CODE
    + "\n$fence$language\n$code\n$fence\n\n"
    + SECTION_ANSWER
    + """
Does this code comply with all $count constraints above? Answer with one JSON object."""
)
"""Fields: constraints (CONSTRAINT_BLOCK blocks, blank-line separated), count, language, code,
fence (a backtick run longer than any inside the code)."""

CORRECTIVE = Template(
    """Your reply could not be read as a verdict ($reason). Reply with one JSON object only: \
{"compliant": true or false, "violations": [...]}, where "compliant" is a JSON boolean and \
"violations" lists each broken constraint (empty when compliant)."""
)
"""User turn sent after a reply that is not a verdict; `reason` says what was wrong."""
