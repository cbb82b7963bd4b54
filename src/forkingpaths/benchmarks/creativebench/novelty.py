"""Novelty of a solution against baselines (§4.2, Eq. 3-5): char 4-gram distance plus embeddings.

`novelty(u, v)` is Eq. 3: the cosine distance of two embeddings plus the Jaccard distance of the
distinct character 4-grams of the two solutions, so it lies in [0, 3] (cosine distance in [0, 2],
4-gram distance in [0, 1]); without an embedding backend it is the 4-gram term alone.
`explore_novelty` (Eq. 4) compares a constrained solution with the level-0 one;
`combo_novelty` (Eq. 5) averages over the source solutions.

The 4-gram term is computed on `canonicalize(code)` (App. F): comments and docstrings dropped,
whitespace and indentation normalised, so reformatting and comment edits move it little.

Embedding backends (`make_embedding_backend`):

- `none`: no embedding term.
- `ast-tfidf` (offline default): TF-IDF over hashed features of the syntax tree (node-type
  n-grams, n = 1..3, over a pre-order walk) and of identifier sub-tokens (a quarter of the
  cosine); no weights to download. It stands in for the paper's CodeXEmbed: like it, it ignores
  formatting, comments and docstrings, and renaming moves only its identifier quarter; unlike it,
  it sees the shape of the code, not its meaning.
- `ast-tfidf-calibrated` (the benchmark's default): `ast-tfidf` with its cosine distance mapped
  onto CodeXEmbed's scale by `CALIBRATION` (a monotone power map, d -> a * d**p, capped at 2).
  Raw ast-tfidf distances run about five times CodeXEmbed's: on the 54 pairs of consecutive-level
  reference solutions of our 16 built-in Explore problems (different solutions of one task)
  they have mean 0.4416, median 0.4539, 75th percentile 0.5814, against the paper's cross-model
  baseline of mean 0.0813, median 0.0728, 75th percentile 0.1000 (App. F, Table 5), which
  roughly doubled Explore novelty (embedding term plus 4-gram term). The map is fitted so the
  median and 75th percentile land exactly on Table 5's (a = 0.20042, p = 1.28215); the mean
  then lands at 0.0727 (Table 5: 0.0813), and a single-variable rename at 0.0027 (Table 4:
  0.0008). Formatting and comment edits stay at 0 (Table 4: 0.0045 and 0.0075): the stand-in
  never sees them. Ranks are unchanged (the map is increasing).
- `openai-compat/<model>`: any `/v1/embeddings` endpoint (vLLM, TEI, OpenAI) through the `openai`
  SDK, with the project's retry policy.
- `sentence-transformers/<name or path>`: a local sentence-transformers model (CodeXEmbed's
  `Salesforce/SFR-Embedding-Code-400M_R`, say), only when the package is installed and the model
  is on disk; nothing is downloaded.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import io
import keyword
import math
import os
import random
import re
import tokenize
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from forkingpaths.core.errors import ConfigError, ModelError, NameNotFound, shown
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.endpoints import checked_base_url, openai_compat_api_key
from forkingpaths.models.limits import RequestLimits
from forkingpaths.models.retry import Verdict, call_with_retries
from forkingpaths.models.runtime import ModelRuntime

NGRAM = 4
"""Character n-gram length of the lexical term (the paper's G_4)."""

INDENT_UNIT = "    "
"""Indentation of one block level in the canonical form."""

EMBEDDING_SPECS = (
    "none",
    "ast-tfidf",
    "ast-tfidf-calibrated",
    "openai-compat/<model>",
    "sentence-transformers/<name or path>",
)
"""The forms `make_embedding_backend` accepts."""

CALIBRATED = "ast-tfidf-calibrated"
"""The spec of the calibrated stand-in (module docstring)."""

CALIBRATION = (0.20042, 1.28215)
"""(a, p) of `ast-tfidf-calibrated`'s map d -> min(2, a * d**p), fitted on the 54 consecutive-level
reference pairs of the built-in Explore set to Table 5's median 0.0728 and 75th percentile 0.1000
(tests/benchmarks/creativebench/test_calibration.py recomputes the fit and its figures)."""

_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_SKIPPED = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER})
_TOKENIZE_ERRORS = (tokenize.TokenError, SyntaxError)  # IndentationError is a SyntaxError


# ---- canonical form and the 4-gram term ----


def canonicalize(code: str) -> str:
    """The canonical surface form of `code` the 4-gram term is computed on.

    Tokenize-based: comments and docstrings (a statement made only of string literals that opens
    the module, a class or a function) are dropped, blank lines go, a statement spread over
    several lines (brackets, backslashes) becomes one line, each line is indented by
    `INDENT_UNIT` per block level, and tokens are joined with no space unless two word characters
    would touch. String contents are kept as written. Code that does not tokenize (unbalanced
    brackets, inconsistent dedents, another language) falls back to a regex pass: comment lines
    and trailing `#` comments without quotes after them are dropped, runs of spaces collapse,
    spaces next to punctuation go, and indentation is renumbered by depth.

    >>> canonicalize("def f( x ):   # twice\\n        return x*2\\n")
    'def f(x):\\n    return x*2'
    """
    try:
        return _canonical_from_tokens(code)
    except _TOKENIZE_ERRORS:
        return _canonical_from_regex(code)


def _logical_lines(code: str) -> list[tuple[int, list[tokenize.TokenInfo]]]:
    """(block depth, tokens) per logical line, comments and blank lines left out."""
    lines: list[tuple[int, list[tokenize.TokenInfo]]] = []
    depth = 0
    current: list[tokenize.TokenInfo] = []
    start_depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.INDENT:
            depth += 1
        elif tok.type == tokenize.DEDENT:
            depth -= 1
        elif tok.type == tokenize.NEWLINE:
            if current:
                lines.append((start_depth, current))
            current = []
        elif tok.type not in _SKIPPED:
            if not current:
                start_depth = depth
            current.append(tok)
    if current:
        lines.append((start_depth, current))
    return lines


def _is_header(tokens: list[tokenize.TokenInfo]) -> bool:
    words = [t.string for t in tokens[:2] if t.type == tokenize.NAME]
    return bool(words) and (
        words[0] in ("def", "class") or (words[0] == "async" and words[1:] == ["def"])
    )


def _canonical_from_tokens(code: str) -> str:
    lines = _logical_lines(code)
    out: list[str] = []
    for index, (depth, tokens) in enumerate(lines):
        if all(t.type == tokenize.STRING for t in tokens):
            opens_module = index == 0
            opens_block = (
                index > 0 and _is_header(lines[index - 1][1]) and depth > lines[index - 1][0]
            )
            if opens_module or opens_block:
                continue
        out.append(INDENT_UNIT * depth + _join_tight(tokens))
    return "\n".join(out)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _join_tight(tokens: Sequence[tokenize.TokenInfo]) -> str:
    parts: list[str] = []
    previous = ""
    fstring_depth = 0
    for tok in tokens:
        text = tok.string
        if (
            previous
            and fstring_depth == 0
            and _is_word_char(previous[-1])
            and text
            and _is_word_char(text[0])
        ):
            parts.append(" ")
        if tok.type == _FSTRING_START:
            fstring_depth += 1
        elif tok.type == _FSTRING_END:
            fstring_depth -= 1
        parts.append(text)
        previous = text or previous
    return "".join(parts)


_TRAILING_COMMENT = re.compile(r"\s*#[^'\"\n]*$")
_SPACE_RUN = re.compile(r"[ \t]+")
_SPACE_BY_PUNCT = re.compile(r" ?([^\w\s]) ?")


def _canonical_from_regex(code: str) -> str:
    out: list[str] = []
    widths = [0]
    for raw in code.expandtabs(8).splitlines():
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        width = len(raw) - len(raw.lstrip())
        while width < widths[-1]:
            widths.pop()
        if width > widths[-1]:
            widths.append(width)
        body = _TRAILING_COMMENT.sub("", body)
        body = _SPACE_BY_PUNCT.sub(r"\1", _SPACE_RUN.sub(" ", body))
        if body:
            out.append(INDENT_UNIT * (len(widths) - 1) + body)
    return "\n".join(out)


def _grams(text: str) -> set[str]:
    if len(text) < NGRAM:
        # A text shorter than one gram is its own single gram, so two different tiny solutions
        # are not "identical" merely because neither has a 4-gram.
        return {text} if text else set()
    return {text[i : i + NGRAM] for i in range(len(text) - NGRAM + 1)}


def char4grams(code: str) -> set[str]:
    """The distinct character 4-grams of `canonicalize(code)` (G_4 of Eq. 3); a non-empty
    canonical form shorter than 4 characters is one gram by itself.

    >>> sorted(char4grams("x = 10"))
    ['x=10']
    """
    return _grams(canonicalize(code))


def jaccard_distance(a: set[str], b: set[str]) -> float:
    """1 - |a ∩ b| / |a ∪ b|; two empty sets are identical (0.0)."""
    union = len(a | b)
    if union == 0:
        return 0.0
    return 1.0 - len(a & b) / union


def ngram_distance(a: str, b: str, *, canonical: bool = True) -> float:
    """The 4-gram term of Eq. 3: 1 - Jaccard of the char 4-grams of two solutions, in [0, 1].

    `canonical=False` skips canonicalization (App. F's raw-n-gram ablation).

    >>> ngram_distance("abcde", "abcdf")
    0.6666666666666667
    >>> ngram_distance("x = 1  # one", "x=1")
    0.0
    """
    if canonical:
        return jaccard_distance(char4grams(a), char4grams(b))
    return jaccard_distance(_grams(a), _grams(b))


def cosine_distance(u: Sequence[float], v: Sequence[float]) -> float:
    """1 - cos(u, v), in [0, 2]. A zero vector (an empty text) is at distance 0 from another
    zero vector and 1 from anything else."""
    x = np.asarray(u, dtype=np.float64)
    y = np.asarray(v, dtype=np.float64)
    if x.shape != y.shape:
        raise ConfigError(
            f"embeddings of different sizes cannot be compared: {x.shape} and {y.shape}"
        )
    nx, ny = float(np.linalg.norm(x)), float(np.linalg.norm(y))
    if nx == 0.0 or ny == 0.0:
        return 0.0 if nx == ny else 1.0
    cos = float(np.dot(x, y)) / (nx * ny)
    return max(0.0, 1.0 - min(1.0, max(-1.0, cos)))


# ---- embedding backends ----


@runtime_checkable
class EmbeddingBackend(Protocol):
    """Turns texts into vectors for the embedding term of Eq. 3.

    `embed` returns one vector per text, in order, all of one size. Server outages raise
    `ModelError` after the retries, as model calls do.
    """

    name: str
    """The spec it was built from (`ast-tfidf`, `openai-compat/<model>`...)."""

    async def embed(self, texts: list[str]) -> list[list[float]]: ...


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def identifier_subtokens(name: str) -> list[str]:
    """Lower-case sub-tokens of an identifier, split at underscores and camel-case humps.

    >>> identifier_subtokens("maxHTTPRetries_count2")
    ['max', 'http', 'retries', 'count', '2']
    """
    out: list[str] = []
    for part in name.split("_"):
        out += [piece.lower() for piece in _CAMEL.findall(part)] or ([part.lower()] if part else [])
    return out


def _identifiers_of(node: ast.AST) -> list[str]:
    """Identifiers a node introduces or uses (names, definitions, parameters, attributes)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.alias):
        return [part for part in (node.name, node.asname) if part]
    return []


def _docstring_of(node: ast.AST) -> ast.stmt | None:
    """The docstring statement opening a module, class or function body, if any."""
    if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    first = node.body[0] if node.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def code_features(code: str) -> Counter[str]:
    """The ast-tfidf features of one text, with their counts.

    `t1:For`, `t2:For>Name`, `t3:...`: node-type n-grams (n = 1..3) over a pre-order walk of the
    syntax tree (docstrings and expression contexts such as Load/Store left out: the first are
    comments, the second double every name);
    `id:max`...: identifier sub-tokens. Text that does not parse contributes identifier
    sub-tokens of its words only.
    """
    features: Counter[str] = Counter()
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        for word in _IDENTIFIER.findall(code):
            if not keyword.iskeyword(word):
                features.update(f"id:{t}" for t in identifier_subtokens(word))
        return features
    order: list[str] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        order.append(type(node).__name__)
        for name in _identifiers_of(node):
            features.update(f"id:{t}" for t in identifier_subtokens(name))
        docstring = _docstring_of(node)
        children = [
            c
            for c in ast.iter_child_nodes(node)
            if c is not docstring and not isinstance(c, ast.expr_context)
        ]
        stack.extend(reversed(children))
    for n in (1, 2, 3):
        features.update(f"t{n}:" + ">".join(order[i : i + n]) for i in range(len(order) - n + 1))
    return features


class AstTfidfEmbeddings:
    """`ast-tfidf`: the offline embedding backend (no weights, numpy only, deterministic).

    Two blocks of `dim // 2` hashed buckets each (CRC-32, so the same in every process): the
    structure block holds the node-type n-grams of `code_features`, the identifier block its
    identifier sub-tokens. In each block term frequency is sublinear, 1 + ln(count), and inverse
    document frequency is computed over the texts of one `embed` call:
    idf = ln((n + s) / (df + s)) + 1, with n the number of texts, df the number holding the
    bucket and s = `smoothing` (1 by default: as if one extra text held every feature, so no idf
    is infinite and a feature every text shares still weighs 1). Each block is scaled to unit
    length, then weighted by sqrt(1 - w) and sqrt(w), w = `identifier_weight`, so that for two
    texts with both kinds of features cos = (1 - w) cos_structure + w cos_identifiers. The
    default w = 0.25 keeps the cosine mostly structural, as a code embedding should be (App. F:
    renaming barely moves it), while names still count. Rows are finally scaled to unit length
    (a text with one kind of feature only), ready for the cosine; a featureless text is a zero
    row. A text alone (n = 1) gets plain sublinear TF; `novelty` embeds its two solutions in one
    call, so features only one of them has weigh more than shared ones.
    """

    def __init__(
        self,
        *,
        dim: int = 4096,
        smoothing: float = 1.0,
        identifier_weight: float = 0.25,
        calibrated: bool = False,
    ) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 16:
            raise ConfigError(f"ast-tfidf dim: expected an integer >= 16, got {dim!r}")
        if not (isinstance(smoothing, int | float) and math.isfinite(smoothing) and smoothing > 0):
            raise ConfigError(f"ast-tfidf smoothing: expected a number > 0, got {smoothing!r}")
        weight = identifier_weight
        if not (isinstance(weight, int | float) and 0.0 <= weight <= 1.0):
            raise ConfigError(f"ast-tfidf identifier_weight: expected 0..1, got {weight!r}")
        self.name = CALIBRATED if calibrated else "ast-tfidf"
        self.calibrated = calibrated
        """Map cosine distances onto CodeXEmbed's scale (`CALIBRATION`)."""
        self.dim = dim
        self.smoothing = float(smoothing)
        self.identifier_weight = float(weight)

    def _block(self, features: list[Counter[str]]) -> np.ndarray:
        size = self.dim // 2
        counts = np.zeros((len(features), size), dtype=np.float64)
        for row, found in enumerate(features):
            if not found:
                continue
            buckets = np.fromiter(
                (zlib.crc32(f.encode()) % size for f in found), dtype=np.int64, count=len(found)
            )
            weights = np.fromiter(found.values(), dtype=np.float64, count=len(found))
            np.add.at(counts[row], buckets, weights)
        present = counts > 0
        tf = np.zeros_like(counts)
        tf[present] = 1.0 + np.log(counts[present])
        df = present.sum(axis=0)
        idf = np.log((len(features) + self.smoothing) / (df + self.smoothing)) + 1.0
        return _unit_rows(tf * idf)

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text (an all-zero row for a featureless text); the first
        `dim // 2` columns are the structure block, the next the identifier block."""
        structure: list[Counter[str]] = []
        identifiers: list[Counter[str]] = []
        for text in texts:
            features = code_features(text)
            identifiers.append(Counter({f: c for f, c in features.items() if f.startswith("id:")}))
            structure.append(features - identifiers[-1])
        joined = np.hstack(
            [
                math.sqrt(1.0 - self.identifier_weight) * self._block(structure),
                math.sqrt(self.identifier_weight) * self._block(identifiers),
            ]
        )
        return _unit_rows(joined)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return self.vectors(texts).tolist()

    def distance(self, raw: float) -> float:
        """The cosine distance as novelty uses it: raw, or mapped by `CALIBRATION`."""
        if not self.calibrated:
            return raw
        a, p = CALIBRATION
        return min(2.0, a * max(raw, 0.0) ** p)

    def __repr__(self) -> str:
        mapped = ", calibrated=True" if self.calibrated else ""
        return (
            f"AstTfidfEmbeddings(dim={self.dim}, smoothing={self.smoothing},"
            f" identifier_weight={self.identifier_weight}{mapped})"
        )


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class OpenAICompatEmbeddings:
    """`openai-compat/<model>`: POST {base_url}/embeddings with `{"model", "input": [...]}`.

    Sent through the chat models' thin HTTP client (`models.http_json`), with the project's
    `RetryPolicy` from `runtime` and the chat models' error classification, under the runtime's
    concurrency and rate limits. Texts go in batches of `batch_size`. Blank texts are
    not sent (OpenAI refuses empty input) and get a zero vector. The key comes from the
    environment variable `api_key_env` names (required when named); without one, the placeholder
    key local servers accept is sent.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key_env: str | None = None,
        runtime: ModelRuntime | None = None,
        batch_size: int = 64,
    ) -> None:
        if not model.strip():
            raise ConfigError("openai-compat embeddings need a model name: openai-compat/<model>")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"embedding batch_size: expected an integer >= 1, got {batch_size!r}")
        self.name = f"openai-compat/{model}"
        self.model = model
        self.base_url = checked_base_url(base_url, required=True)
        self.batch_size = batch_size
        self._api_key = openai_compat_api_key(
            ModelOptions(base_url=self.base_url, api_key_env=api_key_env)
        )
        runtime = runtime if runtime is not None else ModelRuntime(cache=False)
        self._retry_policy = runtime.retry_policy()
        self._rng = random.Random(runtime.jitter_seed)
        self._limits = RequestLimits(runtime.concurrency, runtime.requests_per_minute)
        # Deferred: aiohttp's client takes ~0.1 s to import; only this backend needs it.
        from forkingpaths.models.http_json import JSONEndpoint

        self._endpoint = JSONEndpoint(
            self.base_url or "", api_key=self._api_key, timeout_s=runtime.request_timeout_s
        )

    async def _send(self, batch: list[str]) -> list[list[float]]:
        from forkingpaths.models.http_json import MalformedResponse

        response = await self._endpoint.post(
            "/embeddings", {"model": self.model, "input": batch, "encoding_format": "float"}
        )
        data = response.get("data") if isinstance(response, dict) else None
        if not isinstance(data, list) or len(data) != len(batch):
            count = len(data) if isinstance(data, list) else "no"
            raise MalformedResponse(f"{count} embeddings returned for {len(batch)} inputs")
        items = [item if isinstance(item, dict) else {} for item in data]
        ordered = sorted(items, key=lambda item: _int_or_zero(item.get("index")))
        vectors = [_floats(item.get("embedding")) for item in ordered]
        if not vectors[0] or any(len(v) != len(vectors[0]) for v in vectors):
            raise MalformedResponse("embeddings are empty or of different sizes")
        return vectors

    def _classify(self, err: Exception) -> Verdict | None:
        from forkingpaths.models.openai_compat import classify_http_error

        return classify_http_error(err)

    async def _send_with_retries(self, batch: list[str]) -> list[list[float]]:
        async def attempt() -> list[list[float]]:
            async with self._limits.slot():
                return await self._send(batch)

        vectors, _ = await call_with_retries(
            attempt,
            policy=self._retry_policy,
            classify=self._classify,
            rng=self._rng,
            model=self.name,
        )
        return vectors

    async def embed(self, texts: list[str]) -> list[list[float]]:
        sent = [i for i, text in enumerate(texts) if text.strip()]
        batches = [sent[i : i + self.batch_size] for i in range(0, len(sent), self.batch_size)]
        results = await asyncio.gather(
            *(self._send_with_retries([texts[i] for i in batch]) for batch in batches)
        )
        vectors: dict[int, list[float]] = {}
        for batch, batch_vectors in zip(batches, results, strict=True):
            vectors.update(zip(batch, batch_vectors, strict=True))
        sizes = {len(v) for v in vectors.values()}
        if len(sizes) > 1:
            raise ModelError(f"{self.name} returned embeddings of different sizes: {sorted(sizes)}")
        size = sizes.pop() if sizes else 1
        return [vectors.get(i, [0.0] * size) for i in range(len(texts))]

    async def aclose(self) -> None:
        """Close the HTTP client (it reopens on demand)."""
        await self._endpoint.aclose()

    def __repr__(self) -> str:
        return f"OpenAICompatEmbeddings({self.model!r}, base_url={self.base_url!r})"


def _int_or_zero(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _floats(value: object) -> list[float]:
    """An embedding as floats; anything else is empty (and refused as malformed by the caller)."""
    if not isinstance(value, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in value
    ):
        return []
    return [float(x) for x in value]


SENTENCE_TRANSFORMERS_MISSING = (
    "embedding backend {spec!r} needs the sentence-transformers package, which is not installed"
    " (pip install sentence-transformers), or use ast-tfidf or openai-compat/<model>"
)


def local_model_path(name: str) -> Path | None:
    """Where model `name` lies on disk: `name` itself when it is a directory, else its newest
    snapshot in the Hugging Face hub cache ($HF_HUB_CACHE, $HF_HOME/hub or
    ~/.cache/huggingface/hub); None when it is in neither place."""
    direct = Path(name).expanduser()
    if direct.is_dir():
        return direct
    hub = os.environ.get("HF_HUB_CACHE")
    home = Path(os.environ.get("HF_HOME", "~/.cache/huggingface")).expanduser()
    cache = Path(hub).expanduser() if hub else home / "hub"
    snapshots = cache / f"models--{name.replace('/', '--')}" / "snapshots"
    if not snapshots.is_dir():
        return None
    found = [p for p in snapshots.iterdir() if p.is_dir() and any(p.iterdir())]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


class SentenceTransformerEmbeddings:
    """`sentence-transformers/<name or path>`: a local sentence-transformers model, loaded from
    disk only (never downloaded); embeddings L2-normalised. Encoding runs in a worker thread so
    the event loop keeps serving other episodes."""

    def __init__(self, name: str, *, device: str | None = None, batch_size: int = 32) -> None:
        spec = f"sentence-transformers/{name}"
        if importlib.util.find_spec("sentence_transformers") is None:
            raise ConfigError(SENTENCE_TRANSFORMERS_MISSING.format(spec=spec))
        path = local_model_path(name)
        if path is None:
            raise ConfigError(
                f"embedding backend {spec!r}: model {name!r} is not on this machine (neither a"
                " directory nor in the Hugging Face cache); download it first (huggingface-cli"
                " download ...) or give its local path; nothing is fetched at run time"
            )
        # Deferred: sentence-transformers is an optional extra that imports torch.
        from sentence_transformers import SentenceTransformer

        self.name = spec
        self.path = path
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(path), device=device, local_files_only=True)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        array = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(array, dtype=np.float64).tolist()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return await asyncio.to_thread(self._encode, texts)


def _options(spec: str, given: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    # None means "not given", so a caller can pass the same keywords whatever the spec.
    present = {k: v for k, v in given.items() if v is not None}
    unknown = sorted(set(present) - set(allowed))
    if unknown:
        raise ConfigError(
            f"embedding backend {spec!r} takes {', '.join(allowed) or 'no options'};"
            f" got {', '.join(unknown)}"
        )
    return present


def make_embedding_backend(spec: str, **kw: Any) -> EmbeddingBackend | None:
    """The backend `spec` names (see `EMBEDDING_SPECS`); None for `none`.

    Options: `ast-tfidf`: dim, smoothing, identifier_weight. `openai-compat/<model>`: base_url
    (required), api_key_env, runtime (a `ModelRuntime`: retries, timeout, limits), batch_size.
    `sentence-transformers/<name or path>`: device, batch_size. Options set to None count as not
    given; others a backend does not take are refused.
    """
    if spec == "none":
        return None
    if spec in ("ast-tfidf", CALIBRATED):
        options = _options(spec, kw, ("dim", "smoothing", "identifier_weight"))
        return AstTfidfEmbeddings(**options, calibrated=spec == CALIBRATED)
    provider, slash, name = spec.partition("/")
    if slash and name.strip():
        if provider == "openai-compat":
            allowed = ("base_url", "api_key_env", "runtime", "batch_size")
            options = _options(spec, kw, allowed)
            options.setdefault("base_url", None)
            return OpenAICompatEmbeddings(name, **options)
        if provider == "sentence-transformers":
            options = _options(spec, kw, ("device", "batch_size"))
            return SentenceTransformerEmbeddings(name, **options)
    raise NameNotFound("embedding backend", spec, list(EMBEDDING_SPECS))


# ---- novelty ----


@dataclass(frozen=True)
class NoveltyScore:
    """Eq. 3 for one pair (or Eq. 5's mean over the sources), with its two terms."""

    ngram_distance: float
    """1 - Jaccard of canonical char 4-grams, in [0, 1]."""
    embedding_distance: float | None
    """1 - cosine of the embeddings, in [0, 2]; None without a backend."""
    novelty: float
    """embedding_distance + ngram_distance (the n-gram term alone without a backend)."""

    def to_json(self) -> dict[str, float | None]:
        return {
            "ngram_distance": self.ngram_distance,
            "embedding_distance": self.embedding_distance,
            "novelty": self.novelty,
        }


async def embedding_distance(a: str, b: str, backend: EmbeddingBackend) -> float:
    """1 - cos of the embeddings of `a` and `b`, embedded in one call (through the backend's
    `distance` map when it has one: `ast-tfidf-calibrated`)."""
    vectors = await backend.embed([a, b])
    if len(vectors) != 2:
        raise ModelError(
            f"embedding backend {backend.name!r} returned {len(vectors)} vectors for 2"
        )
    raw = cosine_distance(vectors[0], vectors[1])
    mapped = getattr(backend, "distance", None)
    return float(mapped(raw)) if callable(mapped) else raw


async def novelty(a: str, b: str, backend: EmbeddingBackend | None) -> NoveltyScore:
    """N(a, b) of Eq. 3: embedding distance + 4-gram distance (4-gram alone when `backend` is
    None)."""
    lexical = ngram_distance(a, b)
    if backend is None:
        return NoveltyScore(ngram_distance=lexical, embedding_distance=None, novelty=lexical)
    semantic = await embedding_distance(a, b, backend)
    return NoveltyScore(
        ngram_distance=lexical, embedding_distance=semantic, novelty=semantic + lexical
    )


async def explore_novelty(
    solution: str, level0: str, backend: EmbeddingBackend | None
) -> NoveltyScore:
    """Eq. 4: a constrained solution against the level-0 (unconstrained) solution."""
    return await novelty(solution, level0, backend)


async def combo_novelty(
    solution: str, sources: Sequence[str], backend: EmbeddingBackend | None
) -> NoveltyScore:
    """Eq. 5: the mean of N(solution, source) over the k source solutions (each term averaged
    too). Pairs are scored one by one, so the result is the mean of Eq. 3 whatever the backend
    (ast-tfidf's idf depends on the texts embedded together)."""
    if isinstance(sources, str) or not sources:
        raise ConfigError(
            "combo novelty needs the source solutions (a non-empty list of code strings),"
            f" got {shown(sources)}"
        )
    scores = await asyncio.gather(*(novelty(solution, s, backend) for s in sources))
    k = len(scores)
    embedded = [s.embedding_distance for s in scores if s.embedding_distance is not None]
    return NoveltyScore(
        ngram_distance=sum(s.ngram_distance for s in scores) / k,
        embedding_distance=sum(embedded) / k if backend is not None else None,
        novelty=sum(s.novelty for s in scores) / k,
    )
