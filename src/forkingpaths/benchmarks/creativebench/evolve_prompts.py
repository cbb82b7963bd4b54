"""All text the evolutionary baselines show a model: island mutation and GEPA reflection.

Our wording. Both prompts show the instruction being evolved, its fitness (mean creativity,
Quality x Novelty, on the training tasks, §4.2) and a sample of those tasks, and ask for one
rewritten instruction between `<new_instruction>` tags. The island mutation prompt also shows
the other members of the parent's island with their scores (the "inspirations" of
AlphaEvolve/OpenEvolve prompts); the GEPA reflection prompt shows per-task feedback on a
minibatch, as GEPA's reflective mutation does (§4.1, App. E.3).
"""

from __future__ import annotations

from string import Template

MUTATION_HEADING = "# Evolve a solver instruction: island search"
"""First line of every island mutation request (the scripted policy recognises it)."""

REFLECTION_HEADING = "# Evolve a solver instruction: reflective update"
"""First line of every GEPA reflection request (the scripted policy recognises it)."""

CURRENT_OPEN, CURRENT_CLOSE = "<current_instruction>", "</current_instruction>"
NEW_OPEN, NEW_CLOSE = "<new_instruction>", "</new_instruction>"
"""Tags around the instruction shown and the instruction asked for."""

SUBSET_TEXT = {
    "combo": "combinatorial creativity: each task fuses code from several domains into one "
    "problem, and a solution is more novel the further it departs from the source solutions "
    "it could have been stitched from",
    "explore": "exploratory creativity: each task forbids the techniques most programmers "
    "would use, level by level, and a solution is more novel the further it departs from the "
    "unconstrained solution of the same problem; a solution that uses a forbidden technique "
    "fails",
}
"""What the benchmark measures, per subset."""

CONTEXT = Template(
    """You are tuning the instruction that a code-generation model reads before each task of \
a creativity benchmark for code. The benchmark measures $subset_text. Every solution is run \
against hidden tests and scored as quality times novelty: quality is 1 when it passes and 0 \
when it does not, novelty (0 to 3) grows with the distance of its code from the usual solution. \
A failing solution scores 0 however original it is; a correct but ordinary one scores little.

The instruction comes first in the model's prompt. The task itself, its required signature, \
any constraints and the answer format are appended after it automatically, so the instruction \
must not restate them or ask for a different output format. The fitness of an instruction is \
the mean score of its solutions over the training tasks (0 to 3, higher is better)."""
)

MUTATION_PROMPT = Template(
    MUTATION_HEADING
    + """

$context

## The instruction to improve (fitness $score)
"""
    + CURRENT_OPEN
    + """
$parent
"""
    + CURRENT_CLOSE
    + """

## Other instructions on this island, best first
$others

## Some of the training tasks
$tasks

## What to do
Write one new instruction that should earn a higher fitness. Keep what the better instructions \
above seem to get right, and change something that matters: how the model should search for \
an unusual approach, how it should check that the approach still passes the tests, or what it \
should avoid. Keep it self-contained and under 400 words.

Answer with the new instruction between """
    + NEW_OPEN
    + " and "
    + NEW_CLOSE
    + """ and nothing else."""
)
"""Island mutation request: the parent, its island, a sample of the training tasks."""

OTHER_LINE = Template("- fitness $score: $text")
NO_OTHERS = "(none yet)"
"""One other island member (cut to `OTHER_CHARS`), or the line for an island of one."""

REFLECTION_PROMPT = Template(
    REFLECTION_HEADING
    + """

$context

## The current instruction (fitness on this minibatch $score)
"""
    + CURRENT_OPEN
    + """
$parent
"""
    + CURRENT_CLOSE
    + """

## How it did on a minibatch of training tasks
$records

## What to do
Study the tasks and their scores. Work out what kept the scores low (failed tests, solutions \
too close to the usual approach, constraints broken) and what the instruction could tell the \
model so that its solutions become both correct and more original on tasks like these. Then \
write the improved instruction, self-contained and under 400 words.

Answer with the improved instruction between """
    + NEW_OPEN
    + " and "
    + NEW_CLOSE
    + """ and nothing else."""
)
"""GEPA reflection request: the candidate and per-task feedback from its minibatch."""

RECORD = Template(
    """### Task $number ($task_id)
$summary
Score: $score
Feedback: $feedback"""
)
"""One task of the reflection minibatch."""

TASK_LINE = Template("- $task_id: $summary")
"""One training task in the mutation prompt (summary cut to `TASK_CHARS`)."""

CONSTRAINTS_LINE = Template(" (constraints: $constraints)")
"""Appended to an Explore task's summary."""

FEEDBACK_SCORE = Template("creativity $score of at most 3 (quality x novelty); $verdict")
VERDICT_ZERO = "the solution failed its tests or broke a constraint, or was judged not novel."
VERDICT_LOW = "correct but close to the usual solution: push for a more distinct approach."
VERDICT_GOOD = "a good score: keep what worked here."
"""Per-task feedback lines of the reflection minibatch."""

OTHER_CHARS = 600
TASK_CHARS = 300
"""How much of an island member and of a task question the prompts show."""
