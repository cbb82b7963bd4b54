"""CreativeBench scores: quality, creativity (§4.2), paired t-test (E.1), novelty robustness (F).

- `quality`: pass@1 of one solution (Explore: and no constraint broken).
- `creativity`: Eq. 2, the mean over instances of Quality x Novelty.
- `mean_std`: mean and sample standard deviation (the paper's seeds {42, 43, 44}, App. B.2).
- `paired_t_test`: the two-sided paired t-test of App. E.1, with the Student t distribution
  computed here through the regularized incomplete beta function (no scipy).
- `robustness_report`: App. F's stress test: each sample's novelty against itself after
  superficial edits (`rename_identifiers`, `reformat_code`, `grow_comments`).
"""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import math
import statistics
import tokenize
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from forkingpaths.benchmarks.creativebench.novelty import EmbeddingBackend, ngram_distance, novelty
from forkingpaths.core.errors import ConfigError, shown

# ---- quality and creativity ----


def quality(passed: bool, violations: Sequence[object], judged: bool | None) -> float:
    """Quality of one solution (pass@1): 1.0 when it passed its tests, the static checker found
    no violation and the judge did not call it non-compliant (`judged` None, unjudged or no
    judge, counts as not refused); else 0.0. Combo solutions pass `violations=[]`,
    `judged=None`."""
    return 1.0 if passed and not violations and judged is not False else 0.0


def _finite(values: Iterable[object], name: str) -> list[float]:
    out: list[float] = []
    for index, value in enumerate(values):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ConfigError(f"{name}[{index}]: expected a finite number, got {shown(value)}")
        out.append(float(value))
    return out


def creativity(qualities: Sequence[float], novelties: Sequence[float]) -> float:
    """Eq. 2: the mean over instances of Quality_i x Novelty_i (0.0 for no instances).

    >>> creativity([1.0, 0.0, 1.0], [0.5, 2.0, 0.25])
    0.25
    """
    q = _finite(qualities, "qualities")
    n = _finite(novelties, "novelties")
    if len(q) != len(n):
        raise ConfigError(
            f"creativity needs one novelty per quality: got {len(q)} qualities, {len(n)} novelties"
        )
    return math.fsum(a * b for a, b in zip(q, n, strict=True)) / len(q) if q else 0.0


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """(mean, sample standard deviation) of `values`; the deviation of fewer than two values is
    0.0, and both are 0.0 for no values.

    >>> mean_std([1.0, 2.0, 3.0])
    (2.0, 1.0)
    """
    xs = _finite(values, "values")
    if not xs:
        return 0.0, 0.0
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


# ---- Student t through the regularized incomplete beta function ----

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 10_000


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b), evaluated by the modified Lentz method."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) = B(x; a, b) / B(a, b) for a, b > 0 and 0 <= x <= 1.

    The continued fraction converges fast for x < (a + 1) / (a + b + 2); above, the symmetry
    I_x(a, b) = 1 - I_{1-x}(b, a) is used instead.

    >>> round(regularized_incomplete_beta(2.0, 3.0, 0.4), 10)  # 1 - 0.6**4 - 4*0.4*0.6**3
    0.5248
    """
    if not (a > 0 and b > 0):
        raise ConfigError(f"incomplete beta: a and b must be > 0, got a={a}, b={b}")
    if not 0.0 <= x <= 1.0:
        raise ConfigError(f"incomplete beta: x must lie in [0, 1], got {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def student_t_two_sided(t: float, df: float) -> float:
    """Two-sided tail P(|T| >= |t|) of Student's t with `df` degrees of freedom:
    I_{df / (df + t^2)}(df / 2, 1 / 2)."""
    if not df > 0:
        raise ConfigError(f"degrees of freedom must be > 0, got {df}")
    if math.isinf(t):
        return 0.0
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = student_t_two_sided(t, df) / 2.0
    return 1.0 - tail if t >= 0 else tail


def student_t_quantile(q: float, df: float) -> float:
    """The t with P(T <= t) = q (bisection on `student_t_cdf`, to about 1e-12)."""
    if not 0.0 < q < 1.0:
        raise ConfigError(f"quantile level must lie strictly between 0 and 1, got {q}")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -student_t_quantile(1.0 - q, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < q:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if student_t_cdf(middle, df) < q:
            low = middle
        else:
            high = middle
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def _paired(a: Sequence[float], b: Sequence[float]) -> list[float]:
    xs, ys = _finite(a, "a"), _finite(b, "b")
    if len(xs) != len(ys):
        raise ConfigError(f"a paired test needs samples of equal length: {len(xs)} and {len(ys)}")
    if len(xs) < 2:
        raise ConfigError(f"a paired test needs at least 2 pairs, got {len(xs)}")
    return [x - y for x, y in zip(xs, ys, strict=True)]


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Two-sided paired t-test of App. E.1 on matched samples (per-seed scores of two systems).

    With d_i = a_i - b_i: t = mean(d) / (sd(d) / sqrt(n)), df = n - 1, p = P(|T_df| >= |t|).
    When every difference is the same, sd is 0: t is 0 and p is 1 for no difference, else t is
    infinite (its sign that of the difference) and p is 0. Returns `{"t", "df", "p",
    "mean_diff", "n"}`; mean_diff = mean(a) - mean(b).

    >>> result = paired_t_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 7])
    >>> result["t"], result["df"], round(result["p"], 8)
    (-6.0, 4, 0.00388254)
    """
    d = _paired(a, b)
    n = len(d)
    mean = statistics.fmean(d)
    sd = statistics.stdev(d)
    if sd == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    else:
        t = mean / (sd / math.sqrt(n))
    return {"t": t, "df": n - 1, "p": student_t_two_sided(t, n - 1), "mean_diff": mean, "n": n}


def paired_confidence_interval(
    a: Sequence[float], b: Sequence[float], level: float = 0.95
) -> tuple[float, float]:
    """The `level` confidence interval of mean(a - b) from the paired t distribution (App. E.1
    reports 95% intervals): mean ± t_{(1+level)/2, n-1} · sd / sqrt(n)."""
    if not 0.0 < level < 1.0:
        raise ConfigError(f"confidence level must lie strictly between 0 and 1, got {level}")
    d = _paired(a, b)
    n = len(d)
    mean = statistics.fmean(d)
    half = student_t_quantile((1.0 + level) / 2.0, n - 1) * statistics.stdev(d) / math.sqrt(n)
    return mean - half, mean + half


# ---- App. F: superficial edits ----

_NEW_NAMES = (
    "value", "item", "entry", "total", "result", "node", "acc", "temp", "part", "piece",
    "elem", "token", "unit", "field", "slot", "cell", "mark", "step",
)  # fmt: skip
"""Stems of the names `rename_identifiers` gives (plausible names, as a person would rename)."""

_COMMENT_WORDS = (
    "keep", "the", "running", "state", "in", "step", "with", "the", "input", "so", "each",
    "pass", "sees", "values", "already", "checked", "by", "earlier", "lines", "and", "no",
    "case", "is", "handled", "twice", "here",
)  # fmt: skip
"""Words of the comments `grow_comments` adds (neutral prose about nothing in particular)."""

_RESERVED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


def _tokens(code: str) -> list[tokenize.TokenInfo] | None:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None


def _offsets(code: str) -> list[int]:
    """Absolute offset of the start of each line, as tokenize numbers them (from 1)."""
    starts = [0, 0]
    for line in io.StringIO(code).readlines():
        starts.append(starts[-1] + len(line))
    return starts


def _renamable(tree: ast.Module) -> list[str]:
    """Names the code binds itself that can be renamed without changing behaviour: variables
    and parameters first, then functions and classes, each in order of appearance. Left out:
    builtins, keywords, dunders, `self` and `cls` (conventions, not choices), anything also
    used as an attribute or keyword-argument name
    (the rename would have to reach objects and callers it cannot see), imported module names
    and names inside f-strings (one token before Python 3.12)."""
    variables: list[tuple[int, int, str]] = []
    definitions: list[tuple[int, int, str]] = []
    excluded: set[str] = set(_RESERVED) | {"self", "cls"}
    for node in ast.walk(tree):
        position = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            variables.append((*position, node.id))
        elif isinstance(node, ast.arg):
            variables.append((*position, node.arg))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            variables.append((*position, node.name))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions.append((*position, node.name))
        elif isinstance(node, ast.Attribute):
            excluded.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            excluded.add(node.arg)
        elif isinstance(node, ast.alias):
            excluded.add(node.name.split(".")[0])
            if node.asname is None:
                excluded.add(node.name)
        elif isinstance(node, ast.JoinedStr):
            excluded.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    ordered: list[str] = []
    for _, _, name in sorted(variables) + sorted(definitions):
        dunder = name.startswith("__") and name.endswith("__")
        if name not in excluded and not dunder and name not in ordered:
            ordered.append(name)
    return ordered


def rename_identifiers(code: str, limit: int | None = None) -> str:
    """`code` with its own identifiers renamed consistently (`_renamable`, the first `limit`
    of them; None: all), attribute accesses, strings and comments untouched. The rename keeps
    behaviour; code that does not parse comes back unchanged.

    >>> print(rename_identifiers("def twice(n):\\n    out = n * 2\\n    return out\\n"), end="")
    def entry(value):
        item = value * 2
        return item
    """
    tokens = _tokens(code)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    if tokens is None:
        return code
    names = _renamable(tree)[:limit] if limit is not None else _renamable(tree)
    taken = {t.string for t in tokens if t.type == tokenize.NAME} | _RESERVED
    mapping: dict[str, str] = {}
    counter = 0
    for name in names:
        while True:
            stem = _NEW_NAMES[counter % len(_NEW_NAMES)]
            lap = counter // len(_NEW_NAMES)
            candidate = stem if lap == 0 else f"{stem}{lap + 1}"
            counter += 1
            if candidate not in taken:
                break
        taken.add(candidate)
        mapping[name] = candidate
    offsets = _offsets(code)
    pieces: list[str] = []
    cursor = 0
    previous = ""
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.string in mapping and previous != ".":
            start = offsets[tok.start[0]] + tok.start[1]
            pieces += [code[cursor:start], mapping[tok.string]]
            cursor = start + len(tok.string)
        if tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE):
            previous = tok.string
    pieces.append(code[cursor:])
    return "".join(pieces)


def _comment_lead(tokens: Sequence[tokenize.TokenInfo], index: int) -> int:
    """+1 when the comment line at `index` opens a block (tokenize emits the block's INDENT
    only with its first statement, after the comment), else 0."""
    for tok in tokens[index + 1 :]:
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            return 1 if tok.type == tokenize.INDENT else 0
    return 0


def reformat_code(code: str, indent: str = "  ") -> str:
    """`code` laid out differently with the same tokens: blocks indented by `indent` (two
    spaces unless told), one space between any two tokens on a line, a line break after each
    comma inside brackets (continuation lines indented two levels deeper). Comments are kept,
    string contents and backslash continuations untouched; the syntax tree is unchanged.
    Code that does not tokenize comes back unchanged."""
    tokens = _tokens(code)
    if tokens is None:
        return code
    offsets = _offsets(code)
    out: list[str] = []
    depth = brackets = fstrings = 0
    at_line_start = True
    previous: tokenize.TokenInfo | None = None
    for index, tok in enumerate(tokens):
        kind = tok.type
        if kind == tokenize.INDENT:
            depth += 1
            continue
        if kind == tokenize.DEDENT:
            depth -= 1
            continue
        if kind in (tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        start = offsets[tok.start[0]] + tok.start[1]
        end_before = offsets[previous.end[0]] + previous.end[1] if previous is not None else 0
        original_gap = code[end_before:start]
        if at_line_start:
            deeper = (
                2 if brackets else _comment_lead(tokens, index) if kind == tokenize.COMMENT else 0
            )
            gap = indent * (depth + deeper) if kind not in (tokenize.NL, tokenize.NEWLINE) else ""
        elif fstrings or "\n" in original_gap or "\\" in original_gap:
            gap = original_gap  # inside an f-string, or a backslash continuation: keep as written
        elif (
            previous is not None
            and previous.string == ","
            and brackets
            and kind not in (tokenize.NL, tokenize.COMMENT)
            and tok.string not in ")]}"
        ):
            gap = "\n" + indent * (depth + 2)
        elif kind in (tokenize.NEWLINE, tokenize.NL):
            gap = ""
        else:
            gap = " "
        out += [gap, tok.string]
        if kind == _FSTRING_START:
            fstrings += 1
        elif kind == _FSTRING_END:
            fstrings -= 1
        elif kind == tokenize.OP and not fstrings:
            brackets += tok.string in "([{"
            brackets -= tok.string in ")]}"
        at_line_start = kind in (tokenize.NEWLINE, tokenize.NL)
        previous = tok
    return "".join(out)


def _comment_text(length: int, offset: int) -> str:
    words: list[str] = []
    size = 0
    index = offset
    while size < length:
        word = _COMMENT_WORDS[index % len(_COMMENT_WORDS)]
        words.append(word)
        size += len(word) + 1
        index += 1
    return " ".join(words)


def grow_comments(code: str, factor: float) -> str:
    """`code` with comments added worth about `factor` x its length in characters: a trailing
    `# ...` on each line that ends a statement, the budget shared evenly. Code that does not
    tokenize gets the comments as a block of lines at the top instead."""
    if not (isinstance(factor, int | float) and math.isfinite(factor) and factor >= 0):
        raise ConfigError(f"comment growth factor: expected a number >= 0, got {shown(factor)}")
    budget = round(factor * len(code))
    if budget == 0:
        return code
    tokens = _tokens(code)
    rows = sorted({t.start[0] for t in tokens or [] if t.type == tokenize.NEWLINE and t.string})
    lines = io.StringIO(code).readlines()
    if not rows:
        block: list[str] = []
        while sum(len(line) for line in block) < budget:
            block.append("# " + _comment_text(70, len(block) * 7) + "\n")
        return "".join(block) + code
    share = max(1, math.ceil(budget / len(rows)) - 4)  # 4: the "  # " before each comment
    for number, row in enumerate(rows):
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        lines[row - 1] = f"{body}  # {_comment_text(share, number * 5)}{ending}"
    return "".join(lines)


EDITS: Mapping[str, Callable[[str], str]] = MappingProxyType(
    {
        "rename-one": lambda code: rename_identifiers(code, limit=1),
        "rename-all": rename_identifiers,
        "reformat": reformat_code,
        "comments-1x": lambda code: grow_comments(code, 1.0),
        "comments-2x": lambda code: grow_comments(code, 2.0),
        "comments-4x": lambda code: grow_comments(code, 4.0),
    }
)
"""App. F's superficial edits by name: a light rename (one variable), a consistent rename of
every own identifier, a reformat, and comment-only growth by 1x, 2x and 4x the code length."""


async def robustness_report(
    samples: list[str], backend: EmbeddingBackend | None
) -> list[dict[str, Any]]:
    """App. F: for each sample and each edit of `EDITS`, the novelty of the sample against its
    edited self, one row each: `sample` (index), `edit`, `chars` and `edited_chars` (lengths),
    `changed` (False when the edit found nothing to do), `embedding_distance` (None without a
    backend), `ngram_distance` (canonical, as in the metric), `raw_ngram_distance` (without
    canonicalization, App. F's ablation) and `novelty`. A robust metric keeps all of them near 0.
    """
    rows: list[dict[str, Any]] = []
    for index, code in enumerate(samples):
        for name, edit in EDITS.items():
            edited = edit(code)
            score = await novelty(code, edited, backend)
            rows.append(
                {
                    "sample": index,
                    "edit": name,
                    "chars": len(code),
                    "edited_chars": len(edited),
                    "changed": edited != code,
                    "embedding_distance": score.embedding_distance,
                    "ngram_distance": score.ngram_distance,
                    "raw_ngram_distance": ngram_distance(code, edited, canonical=False),
                    "novelty": score.novelty,
                }
            )
    return rows


def summarize_robustness(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per edit, the mean of each distance over the samples (None for a term never measured),
    like the paper's Tables 4 and 8."""
    keys = ("embedding_distance", "ngram_distance", "raw_ngram_distance", "novelty")
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(str(row["edit"]), []).append(row)
    summary: dict[str, dict[str, float | None]] = {}
    for edit, group in grouped.items():
        summary[edit] = {}
        for key in keys:
            values = [float(r[key]) for r in group if r.get(key) is not None]
            summary[edit][key] = statistics.fmean(values) if values else None
    return summary
