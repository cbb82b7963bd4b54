"""The test harness of construction: the outputs of a reference solution on generated inputs,
assert-based test functions built from them, and what a failed sandbox run says."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

from forkingpaths.benchmarks.creativebench.construction.replies import drop_main_guard
from forkingpaths.benchmarks.creativebench.sandbox import ExecResult, Verdict

MAX_RESULT_CHARS = 2000
"""Longest repr of one expected output written into a test (longer ones are not test cases)."""
ERROR_CHARS = 3000
"""Tail of a sandbox error shown to the repair and refine requests."""

_OUTPUT_MARKER = "@@creativebench-outputs@@"


@dataclass(frozen=True)
class IOCase:
    """One call of the entry function and the repr of what the reference returned."""

    args: tuple[Any, ...]
    expected: str
    approximate: bool = False
    """The result holds floats: compared with a tolerance."""


_APPROX_HELPER = """    import math

    def approx_equal(actual, expected):
        if isinstance(expected, float) or isinstance(actual, float):
            if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
                return False
            return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
        if isinstance(expected, (list, tuple)):
            return (
                type(actual) is type(expected)
                and len(actual) == len(expected)
                and all(approx_equal(a, e) for a, e in zip(actual, expected))
            )
        if isinstance(expected, dict):
            return (
                isinstance(actual, dict)
                and actual.keys() == expected.keys()
                and all(approx_equal(actual[k], expected[k]) for k in expected)
            )
        return actual == expected

"""


def build_test_function(entry: str, cases: Sequence[IOCase]) -> str:
    """An assert-based `test()` over `cases`, called under `if __name__ == "__main__"`.

    Exact equality, except for results holding floats, compared with a 1e-9 tolerance (the
    helper is nested in `test()` so it cannot clash with a solution's names).
    """
    lines = ["def test():"]
    if any(case.approximate for case in cases):
        lines.append(_APPROX_HELPER.rstrip("\n"))
        lines.append("")
    for case in cases:
        call = f"{entry}({', '.join(repr(a) for a in case.args)})"
        if case.approximate:
            lines.append(f"    assert approx_equal({call}, {case.expected})")
        else:
            lines.append(f"    assert {call} == {case.expected}")
    lines += ["", "", 'if __name__ == "__main__":', "    test()", ""]
    return "\n".join(lines)


_HARNESS = Template("""

import ast as _cb_ast
import contextlib as _cb_contextlib
import io as _cb_io
import json as _cb_json
import sys as _cb_sys


def _cb_has_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_cb_has_float(v) for v in value)
    if isinstance(value, dict):
        return any(_cb_has_float(k) or _cb_has_float(v) for k, v in value.items())
    return False


def _cb_outcomes(function, inputs):
    outcomes = []
    for args in inputs:
        sink = _cb_io.StringIO()
        try:
            with _cb_contextlib.redirect_stdout(sink):
                value = function(*args)
        except Exception as exc:
            outcomes.append({"ok": False, "error": type(exc).__name__ + ": " + str(exc)[:200]})
            continue
        text = repr(value)
        try:
            literal = _cb_ast.literal_eval(text) == value
        except Exception:
            literal = False
        if not literal:
            outcomes.append({"ok": False, "error": "result has no literal form: " + text[:80]})
        elif len(text) > $limit:
            outcomes.append({"ok": False, "error": "result too long for a test"})
        else:
            outcomes.append({"ok": True, "repr": text, "float": _cb_has_float(value)})
    return outcomes


if __name__ == "__main__":
    _cb_result = _cb_outcomes($entry, _cb_json.loads($inputs))
    _cb_sys.stdout.write("\\n" + $marker + _cb_json.dumps(_cb_result) + "\\n")
""")


def output_harness(entry: str, inputs: Sequence[Sequence[Any]]) -> str:
    """Test-side code that calls `entry` on each argument list and prints one marker line:
    per input `{"ok", "repr", "float"}` or `{"ok": false, "error"}` (the solution's own prints
    are swallowed so they cannot corrupt the line)."""
    return _HARNESS.substitute(
        entry=entry,
        inputs=repr(json.dumps([list(a) for a in inputs])),
        marker=repr(_OUTPUT_MARKER),
        limit=MAX_RESULT_CHARS,
    )


def read_outputs(stdout: str, count: int) -> list[dict[str, Any]] | None:
    """The harness's per-input outcomes from its stdout, None when the line is absent or
    does not hold `count` outcomes."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(_OUTPUT_MARKER):
            try:
                value = json.loads(line[len(_OUTPUT_MARKER) :])
            except ValueError:
                return None
            if isinstance(value, list) and len(value) == count:
                return value
            return None
    return None


def has_passed(result: ExecResult) -> bool:
    """Whether a sandbox run passed."""
    return result.verdict == Verdict.PASSED


def error_text(result: ExecResult) -> str:
    """What a failed run says: the sandbox's detail, then the stderr tail (cut to ERROR_CHARS)."""
    parts = [p.strip() for p in (result.detail, result.stderr_tail) if p and p.strip()]
    text = "\n".join(dict.fromkeys(parts)) or f"no output (verdict {result.verdict})"
    return text if len(text) <= ERROR_CHARS else "..." + text[-ERROR_CHARS:]


def demo_program(demo: str) -> str:
    """The demo block with a call of `demo_testing()` under the main guard."""
    return drop_main_guard(demo).rstrip() + '\n\n\nif __name__ == "__main__":\n    demo_testing()\n'
