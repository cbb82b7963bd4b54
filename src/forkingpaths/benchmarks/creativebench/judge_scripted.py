"""A scripted stand-in for the constraint-compliance judge, for offline runs and tests.

It is not a judge: it reads the constraints and the code back out of the request and answers
"non-compliant" only when the code shows a blocked technique by keyword, so the whole judge path
(prompt, parsing, records) runs without a model. Deterministic and stateless, as
`ScriptedPolicy` requires.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from forkingpaths.benchmarks.creativebench import constraint_judge_prompts as prompts
from forkingpaths.benchmarks.creativebench.constraints import check_rules, infer_rules
from forkingpaths.core.chat import Message, ModelParams

STOPWORDS = frozenset(
    {
        "the", "and", "any", "use", "uses", "using", "usage", "with", "without", "for", "from",
        "into", "other", "over", "via", "built", "builtin", "function", "functions", "method",
        "methods", "technique", "approach", "based", "direct", "standard", "all", "its", "their",
    }
)  # fmt: skip
"""Words of a blocked technique that say nothing about it (left out of its keyword)."""

_CONSTRAINT = re.compile(r"^### Constraint (\d+)\s*$", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class JudgedConstraint:
    """One constraint as the request shows it."""

    number: int
    constraint: str
    blocked_technique: str
    verification_hint: str


def _field_line(block: str, label: str) -> str:
    match = re.search(rf"^{re.escape(label)}:[ \t]*(.*)$", block, re.MULTILINE)
    value = match.group(1).strip() if match else ""
    return "" if value == prompts.NOT_GIVEN else value


def parse_request(text: str) -> tuple[list[JudgedConstraint], str] | None:
    """(constraints, code) of a judge user turn; None when `text` is not one."""
    if not text.startswith(prompts.JUDGE_HEADING):
        return None
    head, found, rest = text.partition("\n" + prompts.SECTION_CODE + "\n")
    if not found:
        return None
    fence = re.match(r"(`{3,})[^\n]*\n", rest)
    if fence is None:
        return None
    body = rest[fence.end() :]
    close = body.rfind("\n" + fence.group(1))
    code = body[:close] if close >= 0 else body
    starts = list(_CONSTRAINT.finditer(head))
    constraints = []
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(head)
        block = head[match.end() : end]
        instruction, blocked, hint = (_field_line(block, f) for f in prompts.CONSTRAINT_FIELDS)
        constraints.append(JudgedConstraint(int(match.group(1)), instruction, blocked, hint))
    return constraints, code


def technique_keyword(blocked_technique: str) -> str | None:
    """The blocked technique as one identifier-like keyword: its first two words of 3+ letters
    that are not `STOPWORDS`, joined ("binary search over the answer" -> "binarysearch"); None
    when fewer than two remain (one word alone, "sorting", is too common in names to mean the
    technique)."""
    words = [w for w in _WORD.findall(blocked_technique.lower()) if len(w) >= 3]
    words = [w for w in words if w not in STOPWORDS]
    return "".join(words[:2]) if len(words) >= 2 else None


def _identifiers(code: str) -> set[str]:
    return {w.lower().replace("_", "") for w in re.findall(r"[A-Za-z_]\w*", code)}


def find_blocked(constraint: JudgedConstraint, code: str) -> list[dict[str, object]]:
    """Violations the stand-in reports for one constraint: the static checker with the rules
    inferred from the constraint's texts, then an identifier containing the technique keyword
    (`def binary_search(...)` under "binary search")."""
    found: list[dict[str, object]] = [
        {"constraint": constraint.number, "where": f"line {line}", "why": what}
        for _, what, line in check_rules(
            code, infer_rules(constraint.blocked_technique, constraint.verification_hint)
        )
    ]
    key = technique_keyword(constraint.blocked_technique)
    if not found and key is not None:
        hits = sorted(name for name in _identifiers(code) if key in name)
        if hits:
            found.append(
                {
                    "constraint": constraint.number,
                    "where": hits[0],
                    "why": f"named after the blocked technique ({constraint.blocked_technique})",
                }
            )
    return found


class ConstraintJudgePolicy:
    """`scripted/constraint-judge`: answers judge requests as one JSON verdict, compliant
    unless `find_blocked` finds a blocked technique; any other request gets a JSON object
    without a verdict, which the judge retries and then records as unjudged."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        request = next(
            (
                parsed
                for m in messages
                if m.role == "user" and (parsed := parse_request(m.content)) is not None
            ),
            None,
        )
        if request is None:
            return json.dumps({"error": "scripted judge: not a constraint compliance request"})
        constraints, code = request
        violations = [v for c in constraints for v in find_blocked(c, code)]
        return json.dumps(
            {
                "compliant": not violations,
                "violations": violations,
                "alternative": "" if violations else "scripted stand-in: no blocked keyword found",
            }
        )
