"""Scores (§4.2, App. E.1, App. F): quality, creativity, mean/std, the paired t-test against
closed forms of the Student t distribution, and the robustness of novelty under superficial
edits."""

from __future__ import annotations

import ast
import io
import math
import tokenize
from typing import Any

import pytest

from forkingpaths.benchmarks.creativebench.metrics import (
    EDITS,
    creativity,
    grow_comments,
    mean_std,
    paired_confidence_interval,
    paired_t_test,
    quality,
    reformat_code,
    regularized_incomplete_beta,
    rename_identifiers,
    robustness_report,
    student_t_cdf,
    student_t_quantile,
    summarize_robustness,
)
from forkingpaths.benchmarks.creativebench.novelty import AstTfidfEmbeddings
from forkingpaths.core.errors import ConfigError

# ---- quality and creativity ----


@pytest.mark.parametrize(
    ("passed", "violations", "judged", "expected"),
    [
        (True, [], True, 1.0),
        (True, [], None, 1.0),  # no judge, or unjudged after retries
        (True, [], False, 0.0),
        (True, ["calls:sorted"], True, 0.0),
        (False, [], True, 0.0),
        (False, [], None, 0.0),
    ],
)
def test_quality(passed: bool, violations: list[str], judged: bool | None, expected: float) -> None:
    assert quality(passed, violations, judged) == expected


def test_creativity_is_the_mean_of_products() -> None:
    # Eq. 2 by hand: (1 * 0.5 + 0 * 2.0 + 1 * 0.25 + 1 * 1.25) / 4.
    assert creativity([1.0, 0.0, 1.0, 1.0], [0.5, 2.0, 0.25, 1.25]) == pytest.approx(0.5)
    assert creativity([], []) == 0.0
    with pytest.raises(ConfigError, match="2 qualities, 1 novelties"):
        creativity([1.0, 1.0], [0.5])
    with pytest.raises(ConfigError, match=r"novelties\[1\]: expected a finite number, got null"):
        creativity([1.0, 1.0], [0.5, None])  # type: ignore[list-item]


def test_mean_std_uses_the_sample_deviation() -> None:
    mean, std = mean_std([2, 4, 4, 4, 5, 5, 7, 9])
    assert mean == 5.0
    assert std == pytest.approx(math.sqrt(32 / 7))
    assert mean_std([3.5]) == (3.5, 0.0)
    assert mean_std([]) == (0.0, 0.0)


# ---- Student t and the paired test ----


def test_incomplete_beta_matches_the_binomial_identity() -> None:
    # For whole a, b: I_x(a, b) = P(Binomial(a + b - 1, x) >= a).
    for a, b, x in [(1, 1, 0.3), (2, 3, 0.4), (5, 2, 0.9), (7, 7, 0.5), (3, 9, 0.05)]:
        n = a + b - 1
        expected = sum(math.comb(n, k) * x**k * (1 - x) ** (n - k) for k in range(a, n + 1))
        assert regularized_incomplete_beta(a, b, x) == pytest.approx(expected, abs=1e-13)
    assert regularized_incomplete_beta(2.5, 0.5, 0.0) == 0.0
    assert regularized_incomplete_beta(2.5, 0.5, 1.0) == 1.0
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        regularized_incomplete_beta(1, 1, 1.5)


def test_paired_t_test_by_hand() -> None:
    # d = a - b = [-1, -1, -1, -1, -2]: mean -1.2, sd sqrt(0.2), se 0.2, t = -6, df = 4.
    # Two-sided p = I_x(2, 1/2) with x = df / (df + t^2) = 0.1; for b = 1/2 the integral has
    # the closed form 1 - 3/2 s + 1/2 s^3 with s = sqrt(1 - x).
    result = paired_t_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 7])
    s = math.sqrt(0.9)
    assert result["t"] == pytest.approx(-6.0, abs=1e-12)
    assert result["df"] == 4
    assert result["n"] == 5
    assert result["mean_diff"] == pytest.approx(-1.2)
    assert result["p"] == pytest.approx(1 - 1.5 * s + 0.5 * s**3, abs=1e-6)
    assert result["p"] == pytest.approx(0.0038825370469604, abs=1e-12)


def test_paired_t_test_against_closed_forms_for_one_and_two_degrees() -> None:
    # df = 1 (Cauchy): p = 1 - (2 / pi) atan|t|. d = [1, 3]: t = 2 / (sqrt(2) / sqrt(2)) = 2.
    one = paired_t_test([1, 3], [0, 0])
    assert one["t"] == pytest.approx(2.0)
    assert one["p"] == pytest.approx(1 - 2 / math.pi * math.atan(2.0), abs=1e-12)
    # df = 2: p = 1 - |t| / sqrt(2 + t^2). d = [1, 2, 4]: t = sqrt(7).
    two = paired_t_test([1, 2, 4], [0, 0, 0])
    assert two["t"] == pytest.approx(math.sqrt(7))
    assert two["p"] == pytest.approx(1 - math.sqrt(7) / 3, abs=1e-12)


def test_paired_t_test_degenerate_and_invalid_samples() -> None:
    same = paired_t_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (same["t"], same["p"], same["mean_diff"]) == (0.0, 1.0, 0.0)
    shifted = paired_t_test([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    assert shifted["t"] == math.inf and shifted["p"] == 0.0
    with pytest.raises(ConfigError, match="equal length: 2 and 3"):
        paired_t_test([1, 2], [1, 2, 3])
    with pytest.raises(ConfigError, match="at least 2 pairs"):
        paired_t_test([1], [2])
    with pytest.raises(ConfigError, match=r"a\[1\]: expected a finite number, got NaN"):
        paired_t_test([1, math.nan], [1, 2])


def test_student_t_cdf_and_quantiles() -> None:
    assert student_t_cdf(0.0, 5) == 0.5
    assert student_t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy: 1/2 + atan(1) / pi
    assert student_t_cdf(-1.0, 1) == pytest.approx(0.25)
    assert student_t_quantile(0.975, 9) == pytest.approx(2.2621571627982, abs=1e-6)
    assert student_t_quantile(0.975, 2) == pytest.approx(4.302652729911275, abs=1e-6)
    assert student_t_quantile(0.025, 2) == pytest.approx(-4.302652729911275, abs=1e-6)
    for q in (0.6, 0.9, 0.999):
        assert student_t_cdf(student_t_quantile(q, 4), 4) == pytest.approx(q, abs=1e-10)


def test_paired_confidence_interval() -> None:
    # d = [1, 2, 4]: mean 7/3, sd sqrt(7/3), half width t(0.975, 2) * sd / sqrt(3).
    low, high = paired_confidence_interval([1, 2, 4], [0, 0, 0])
    half = 4.302652729911275 * math.sqrt(7 / 3) / math.sqrt(3)
    assert (low, high) == pytest.approx((7 / 3 - half, 7 / 3 + half), abs=1e-6)
    with pytest.raises(ConfigError, match="confidence level"):
        paired_confidence_interval([1, 2], [0, 0], level=1.0)


# ---- App. F: robustness of novelty under superficial edits ----

INVENTORY = '''"""Stock keeping for a small shop."""

from dataclasses import dataclass, field


@dataclass
class Shelf:
    capacity: int
    items: dict[str, int] = field(default_factory=dict)

    def free_space(self) -> int:
        return self.capacity - sum(self.items.values())

    def store(self, name: str, count: int) -> int:
        """Store up to `count` units; return how many did not fit."""
        room = self.free_space()
        placed = min(room, count)
        if placed:
            self.items[name] = self.items.get(name, 0) + placed
        return count - placed


def restock(shelves: list[Shelf], deliveries: list[tuple[str, int]]) -> dict[str, int]:
    # Fill the emptiest shelves first so that the load stays even.
    left_over: dict[str, int] = {}
    for name, count in deliveries:
        for shelf in sorted(shelves, key=lambda s: -s.free_space()):
            count = shelf.store(name, count)
            if count == 0:
                break
        if count:
            left_over[name] = left_over.get(name, 0) + count
    report = ", ".join(f"{k}={v}" for k, v in sorted(left_over.items()))
    print(f"left over: {report or 'nothing'}")
    return left_over
'''

PATHS = """from collections import deque


def shortest_hops(edges, start, goal):
    neighbours = {}
    for a, b in edges:
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    seen = {start}
    queue = deque([(start, 0)])
    while queue:
        node, hops = queue.popleft()
        if node == goal:
            return hops
        for nxt in neighbours.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, hops + 1))
    return -1


def all_hops(edges, start):
    nodes = {n for edge in edges for n in edge}
    return {n: shortest_hops(edges, start, n) for n in sorted(nodes)}
"""

SAMPLES = [INVENTORY, PATHS]


def top_level_names(code: str) -> list[str]:
    tree = ast.parse(code)
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]


def names_in(code: str) -> list[str]:
    return [
        t.string
        for t in tokenize.generate_tokens(io.StringIO(code).readline)
        if t.type == tokenize.NAME
    ]


def call_in(code: str, call: str, names: dict[str, str]) -> Any:
    """Run our own sample `code` and evaluate `call` in it, its names renamed by `names`."""
    namespace: dict[str, Any] = {"__name__": "sample"}
    exec(compile(code, "<sample>", "exec", dont_inherit=True), namespace)
    for old, new in names.items():
        call = call.replace(old, new)
    return eval(call, namespace)


def test_rename_keeps_behaviour_and_touches_only_own_names() -> None:
    for sample, call in [
        (PATHS, "all_hops([(1, 2), (2, 3), (3, 4), (1, 5)], 1)"),
        (INVENTORY, "restock([Shelf(5), Shelf(3)], [('nuts', 4), ('bolts', 6), ('pins', 2)])"),
    ]:
        renamed = rename_identifiers(sample)
        mapping = dict(zip(top_level_names(sample), top_level_names(renamed), strict=True))
        assert all(old != new for old, new in mapping.items())
        assert call_in(renamed, call, mapping) == call_in(sample, call, {})
    renamed = rename_identifiers(PATHS)
    assert "deque" in renamed and ".popleft()" in renamed and ".setdefault(" in renamed
    assert "neighbours" not in renamed and "hops" not in renamed


def test_rename_leaves_attributes_keywords_and_fstring_names_alone() -> None:
    renamed = rename_identifiers(INVENTORY)
    # Fields are reached as attributes and keywords: a rename would break callers.
    assert "capacity: int" in renamed and ".items.get(" in renamed and ".capacity -" in renamed
    assert "default_factory" in renamed
    # Names used inside f-strings are one token before Python 3.12: left alone.
    assert "{report or 'nothing'}" in renamed and "report =" in renamed
    assert "for k, v in" in renamed
    assert "self.capacity" in renamed  # self and cls are conventions, not choices
    light = rename_identifiers(INVENTORY, limit=1)
    pairs = zip(names_in(INVENTORY), names_in(light), strict=True)
    assert {(old, new) for old, new in pairs if old != new} == {("name", "value")}
    assert rename_identifiers("def broken(:\n") == "def broken(:\n"


@pytest.mark.parametrize("sample", SAMPLES, ids=["inventory", "paths"])
@pytest.mark.parametrize("edit", ["reformat", "comments-1x", "comments-2x", "comments-4x"])
def test_layout_and_comment_edits_keep_the_syntax_tree(sample: str, edit: str) -> None:
    edited = EDITS[edit](sample)
    assert edited != sample
    assert ast.dump(ast.parse(edited)) == ast.dump(ast.parse(sample))


def test_reformat_changes_indentation_spacing_and_line_breaks() -> None:
    edited = reformat_code(PATHS)
    assert "\n  neighbours = { }" in edited  # two-space blocks, spaces between tokens
    assert "deque ( [ ( start ,\n" in edited  # a break after a comma inside brackets
    assert reformat_code("x = (1,\n") == "x = (1,\n"  # does not tokenize: unchanged


def test_comment_growth_adds_about_factor_times_the_length() -> None:
    for factor in (1.0, 2.0, 4.0):
        grown = grow_comments(PATHS, factor)
        added = len(grown) - len(PATHS)
        assert factor * len(PATHS) <= added <= factor * len(PATHS) * 1.2
    assert grow_comments(PATHS, 0) == PATHS
    top = grow_comments("x = (1,", 1.0)  # does not tokenize: comments go on top
    assert top.endswith("x = (1,") and top.startswith("# ")
    with pytest.raises(ConfigError, match="factor"):
        grow_comments(PATHS, -1)


async def test_robustness_report_directions_with_ast_tfidf() -> None:
    rows = await robustness_report(SAMPLES, AstTfidfEmbeddings())
    assert len(rows) == len(SAMPLES) * len(EDITS)
    assert set(rows[0]) == {
        "sample", "edit", "chars", "edited_chars", "changed", "embedding_distance",
        "ngram_distance", "raw_ngram_distance", "novelty",
    }  # fmt: skip
    by = {(r["sample"], r["edit"]): r for r in rows}
    for index in range(len(SAMPLES)):
        rename = by[index, "rename-all"]
        # Renaming rewrites the text but not the structure: the n-gram term moves more.
        assert rename["ngram_distance"] > rename["embedding_distance"] > 0
        light = by[index, "rename-one"]
        assert 0 < light["novelty"] < rename["novelty"]
        # Canonicalization and the syntax tree make layout and comments invisible...
        for edit in ("reformat", "comments-1x", "comments-2x", "comments-4x"):
            row = by[index, edit]
            assert row["changed"]
            assert row["ngram_distance"] == 0.0
            assert row["embedding_distance"] == pytest.approx(0.0, abs=1e-12)
            # ...which the raw 4-grams (App. F's ablation) are not.
            assert row["raw_ngram_distance"] > 0.1
        assert by[index, "comments-4x"]["edited_chars"] > 4 * by[index, "comments-4x"]["chars"]


async def test_robustness_report_without_backend_and_summary() -> None:
    rows = await robustness_report([PATHS], None)
    assert all(r["embedding_distance"] is None for r in rows)
    assert all(r["novelty"] == r["ngram_distance"] for r in rows)
    summary = summarize_robustness(rows)
    assert list(summary) == list(EDITS)
    assert summary["reformat"]["embedding_distance"] is None
    assert summary["reformat"]["ngram_distance"] == 0.0
    assert summary["rename-all"]["novelty"] == rows[1]["novelty"]
