"""Scripted model `creative-solver`: answers CreativeBench solver and evolution prompts offline.

It is a deterministic stand-in for a model, so that offline runs score real programs. To a
solver prompt of a built-in task (found by the task's question and, for an Explore level, the
constraints the prompt lists) it answers that task's reference solution in a fenced block,
except on one draw in four (`MISS_ONE_IN` of the hash of the task id and the request's seed, so
trials differ) where it answers a stub: the task's signature with a body that raises
NotImplementedError, a program that parses and earns RUNTIME_ERROR. A prompt of no built-in
task (a `tasks` file of the user's) always gets the stub. It never echoes a code block of the
prompt: a Combo question shows its signature as a bare `def` header in a block, which is no
program. To an island mutation or a GEPA reflection prompt it answers the shown instruction
with one more hint sentence, chosen by a hash of the prompt, so an evolution run changes its
prompts deterministically. A constraint-judge request (the judge role defaults to the agent's
model) it answers as `scripted/constraint-judge` does. It keeps no conversation state
(ScriptedPolicy contract).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from forkingpaths.benchmarks.creativebench import constraint_judge_prompts as judge_prompts
from forkingpaths.benchmarks.creativebench import evolve_prompts
from forkingpaths.benchmarks.creativebench.agents import solver_prompts
from forkingpaths.benchmarks.creativebench.judge_scripted import ConstraintJudgePolicy
from forkingpaths.benchmarks.creativebench.tasks import load_combo, load_explore
from forkingpaths.core.chat import Message, ModelParams

STUB_MESSAGE = "scripted/creative-solver is a stand-in and solves nothing"
"""What the stub raises (the sandbox's detail shows it)."""

APPROACH = "Approach: none; this is a scripted stand-in, not a solution."
"""The line after a stub's code block (the Explore answer format asks for one)."""

REFERENCE_APPROACH = "Approach: the task's reference solution, answered by a scripted stand-in."
"""The line after a reference solution's code block."""

MISS_ONE_IN = 4
"""One draw in this many (by the hash of task id and seed) answers the stub instead of the
reference solution: offline tables then show Pass@1 below 100% and a spread over trials."""

MUTATION_HINTS = (
    "Before writing code, name the approach most programmers would use, then set it aside and "
    "build the solution on a different idea.",
    "Prefer a representation of the data that the obvious solution does not use, such as "
    "arithmetic on indices, a lookup table or a recursive decomposition.",
    "Check the chosen approach against the examples and edge cases by hand before answering, "
    "so originality never costs correctness.",
    "When a standard library call would do the work in one line, consider writing the "
    "mechanism yourself in an uncommon way.",
    "Combine ideas from two unrelated areas of programming when the task allows it.",
    "Keep the code short and readable, so the unusual idea is easy to verify.",
)
"""Sentences the scripted mutator adds to an instruction, one per answer."""

_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(", re.MULTILINE)


def _last_user(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def _between(text: str, start: str, end: str) -> str | None:
    _, found, rest = text.partition(start)
    if not found:
        return None
    inner, closed, _ = rest.partition(end)
    return inner.strip() if closed else None


@dataclass(frozen=True)
class KnownTask:
    """A built-in task as the scripted solver recognises it in a prompt."""

    id: str
    question: str
    constraints: tuple[str, ...]
    """The stacked constraint texts of an Explore level (none for Combo and level 0)."""
    reference: str


def builtin_tasks() -> list[KnownTask]:
    """The shipped Combo and Explore tasks with their reference solutions."""
    combo, _ = load_combo()
    explore, _ = load_explore()
    known = [KnownTask(t.id, t.question.strip(), (), t.canonical_solution) for t in combo]
    for t in explore:
        constraints = tuple(c.strip() for c in t.constraints)
        known.append(KnownTask(t.id, t.question.strip(), constraints, t.reference_solution))
    return known


def find_task(prompt: str, known: Sequence[KnownTask]) -> KnownTask | None:
    """The task a solver prompt states: the longest question the prompt holds, then, among
    that question's levels, the one with the most constraints, all listed in the prompt (an
    Explore level stacks the constraints of the levels below it)."""
    matching = [t for t in known if t.question and t.question in prompt]
    if not matching:
        return None
    longest = max(len(t.question) for t in matching)
    levels = [
        t
        for t in matching
        if len(t.question) == longest and all(c in prompt for c in t.constraints)
    ]
    return max(levels, key=lambda t: len(t.constraints), default=None)


def misses(task_id: str, seed: int | None) -> bool:
    """Whether this draw answers the stub: one (task, seed) pair in MISS_ONE_IN."""
    digest = hashlib.sha256(f"{task_id}:{seed}".encode()).digest()
    return digest[0] % MISS_ONE_IN == 0


class CreativeSolverPolicy:
    """`scripted/creative-solver`: reference solutions (or stubs) for solver prompts,
    hint-appending rewrites for evolution prompts (see the module docstring)."""

    def __init__(self) -> None:
        # Read once per model; the tasks are small (tens of rows) and never change.
        self.known: tuple[KnownTask, ...] = tuple(builtin_tasks())

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        text = _last_user(messages)
        if text.startswith((evolve_prompts.MUTATION_HEADING, evolve_prompts.REFLECTION_HEADING)):
            return self.rewrite(text)
        if text.startswith(judge_prompts.JUDGE_HEADING):
            return ConstraintJudgePolicy().respond(messages, params)
        return self.solve(text, params.seed)

    def solve(self, prompt: str, seed: int | None = None) -> str:
        """A fenced block: the task's reference solution, or on a missed draw (and for a task
        it does not know) a NotImplementedError stub with the task's signature."""
        task = find_task(prompt, self.known)
        if task is not None and not misses(task.id, seed):
            return f"```python\n{task.reference.rstrip()}\n```\n{REFERENCE_APPROACH}"
        return f"```python\n{stub_for(prompt)}\n```\n{APPROACH}"

    def rewrite(self, prompt: str) -> str:
        """The shown instruction plus the first hint (from a hash offset) it does not hold."""
        current = _between(prompt, evolve_prompts.CURRENT_OPEN, evolve_prompts.CURRENT_CLOSE) or ""
        start = hashlib.sha256(prompt.encode()).digest()[0] % len(MUTATION_HINTS)
        hints = MUTATION_HINTS[start:] + MUTATION_HINTS[:start]
        fresh = next((h for h in hints if h not in current), "")
        new = f"{current}\n{fresh}".strip()
        return f"{evolve_prompts.NEW_OPEN}\n{new}\n{evolve_prompts.NEW_CLOSE}"


def stub_for(prompt: str) -> str:
    """A stub whose body raises NotImplementedError: with the signature the prompt gives (the
    Explore signature section first, else the first `def` header anywhere that parses), else a
    module that raises on import."""
    _, _, after = prompt.partition(solver_prompts.SIGNATURE_HEADING)
    for source in (after, prompt) if after else (prompt,):
        header = _first_def(source)
        if header is not None:
            return f'{header}\n    raise NotImplementedError("{STUB_MESSAGE}")'
    return f'raise NotImplementedError("{STUB_MESSAGE}")'


def _first_def(text: str) -> str | None:
    """The first `def name(...)` header in `text` that parses, ending in a colon."""
    for match in _DEF.finditer(text):
        lines = text[match.start() :].splitlines()[:12]
        # A header may span several lines; grow it until it parses as a function.
        for count in range(1, len(lines) + 1):
            header = "\n".join(lines[:count]).strip().rstrip(":").rstrip() + ":"
            try:
                ast.parse(header + "\n    pass")
            except SyntaxError:
                continue
            return header
    return None
