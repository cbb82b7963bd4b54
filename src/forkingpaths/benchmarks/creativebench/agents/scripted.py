"""Scripted model `creative-solver`: answers CreativeBench solver and evolution prompts offline.

It is a deterministic stand-in for a model, not a solver: it cannot solve a task. To a solver
prompt it answers a fenced code block: the first code block the prompt holds, echoed (the
shipped prompts hold none), else a stub with the task's signature whose body raises
NotImplementedError, so runs go end to end and earn RUNTIME_ERROR verdicts. To an island
mutation or a GEPA reflection prompt it answers the shown instruction with one more hint
sentence, chosen by a hash of the prompt, so an evolution run changes its prompts
deterministically. It keeps no state (ScriptedPolicy contract).
"""

from __future__ import annotations

import ast
import hashlib
import re

from forkingpaths.benchmarks.creativebench import evolve_prompts
from forkingpaths.benchmarks.creativebench.agents import solver_prompts
from forkingpaths.core.chat import Message, ModelParams

STUB_MESSAGE = "scripted/creative-solver is a stand-in and solves nothing"
"""What the stub raises (the sandbox's detail shows it)."""

APPROACH = "Approach: none; this is a scripted stand-in, not a solution."
"""The line after the code block (the Explore answer format asks for one)."""

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

_FENCE = re.compile(r"^[ \t]*```[ \t]*[\w+#.-]*[ \t]*\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)
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


class CreativeSolverPolicy:
    """`scripted/creative-solver`: code stubs for solver prompts, hint-appending rewrites for
    evolution prompts (see the module docstring)."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        text = _last_user(messages)
        if text.startswith((evolve_prompts.MUTATION_HEADING, evolve_prompts.REFLECTION_HEADING)):
            return self.rewrite(text)
        return self.solve(text)

    def solve(self, prompt: str) -> str:
        """A fenced block: the prompt's first code block, else a NotImplementedError stub."""
        block = _FENCE.search(prompt)
        code = block.group(1).rstrip() if block else stub_for(prompt)
        return f"```python\n{code}\n```\n{APPROACH}"

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
