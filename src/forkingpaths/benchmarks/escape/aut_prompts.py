"""All text the Alternate Uses Test transfer shows a model: task, ReDNA's two calls, judge (§5.3,
App. D.6).

The wording is ours. The structure follows App. D.6: Base answers the task in one call; ReDNA's
Diverge call sees only the object, and its Narrowing call brings back the creativity criterion and
the uses given in earlier runs (the non-interactive analogue of failure memory). The judge rates
Originality and Elaboration on a 1-5 scale in the tradition of Guilford's test.
"""

from __future__ import annotations

from string import Template

TASK_HEADING = "# Alternate Uses Test"
DIVERGE_HEADING = "# Alternate uses: brainstorm"
NARROW_HEADING = "# Alternate uses: select and elaborate"
JUDGE_HEADING = "# Alternate Uses Test: rate each use"
"""First lines of the four requests (the scripted models recognise them by these)."""

OBJECT_LINE = Template("Object: $name ($description)")
"""How every request names the object; the scripted models read the name back from it."""

TASK = Template(
    TASK_HEADING
    + """

$object_line

Think of uses for this object other than the one it is made for: unusual, original uses that \
few people would think of. For each use, write one or two sentences that say how the object \
would be used and why it works.

Answer with a JSON list of strings, one use per string, and nothing else."""
)
"""The Base agent's request, also the observation text of every run. Fields: object_line."""

DIVERGE = Template(
    DIVERGE_HEADING
    + """

$object_line

List as many different things this object could be used for as you can think of: ordinary and \
odd, practical and playful, alone or combined with other things. Do not judge or filter the ideas \
yet; a few words per idea is enough.

Answer with a JSON list of strings, one idea per string, and nothing else."""
)
"""ReDNA's Diverge call: conditioned on the object only. Fields: object_line."""

NARROW = Template(
    NARROW_HEADING
    + """

$object_line

Candidate uses brainstormed for this object:
$candidates

Uses already given in earlier runs (do not repeat them or close variants of them):
$memory

Keep the candidates that are most creative: a use is creative when it departs far from what the \
object is made for, and when it is worked out, saying how the object would be used and why it \
works. Drop ordinary uses and repeats of earlier runs; you may sharpen, combine or extend \
candidates. Elaborate each use you keep into one or two sentences.

Answer with a JSON list of strings, one elaborated use per string, and nothing else."""
)
"""ReDNA's Narrowing call. Fields: object_line, candidates (LIST_LINE lines or NOTHING),
memory (LIST_LINE lines or NOTHING)."""

LIST_LINE = Template("- $text")
NOTHING = "(none)"

JUDGE_SYSTEM = """You rate answers to the Alternate Uses Test, in which a person lists unusual \
uses for a common object. Rate every use on two criteria, each a whole number from 1 to 5.

Originality: how far the use departs from what the object is made for and from the uses most \
people would give.
  1 = the object's ordinary use, or an obvious one almost everyone gives.
  2 = a common alternative use.
  3 = a less common use that still exploits an obvious property of the object.
  4 = an unusual use that exploits a property people rarely think of.
  5 = a surprising, clever use that reinterprets the object altogether.

Elaboration: how fully the use is worked out.
  1 = a word or two, no detail.
  2 = a short phrase naming the use.
  3 = says how the object would be used.
  4 = says how and why it works, with a concrete detail.
  5 = a vivid, specific account of how, why and in what situation it works.

Rate each use on its own merits, consistently across uses. Answer with one JSON list holding one \
object per use, in the order given, for example:
[{"use": 1, "originality": 3, "elaboration": 2}, {"use": 2, "originality": 5, "elaboration": 4}]"""
"""System turn of the AUT judge: rubric, anchors and answer format."""

JUDGE_USER = Template(
    JUDGE_HEADING
    + """

$object_line

Uses to rate:
$uses

Rate all $count uses (originality and elaboration, whole numbers 1-5) and answer with one JSON \
list of $count objects."""
)
"""Fields: object_line, uses (USE_LINE lines), count."""

USE_LINE = Template("$number. $text")

JUDGE_CORRECTIVE = Template(
    """Your answer could not be read as ratings ($reason). Reply with one JSON list only, holding \
$count objects in the order of the uses, each with "originality" and "elaboration" as whole \
numbers from 1 to 5."""
)
"""User turn after a reply that is not a rating. Fields: reason, count."""
