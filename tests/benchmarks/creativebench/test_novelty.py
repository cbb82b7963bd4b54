"""Novelty (§4.2, Eq. 3-5): the 4-gram term by hand, canonicalization, the embedding backends
(ast-tfidf offline, openai-compat against a tiny local /v1/embeddings server) and the case study
of App. G."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from aiohttp import web

from forkingpaths.benchmarks.creativebench.metrics import (
    grow_comments,
    reformat_code,
    rename_identifiers,
)
from forkingpaths.benchmarks.creativebench.novelty import (
    AstTfidfEmbeddings,
    NoveltyScore,
    OpenAICompatEmbeddings,
    canonicalize,
    char4grams,
    code_features,
    combo_novelty,
    cosine_distance,
    explore_novelty,
    identifier_subtokens,
    make_embedding_backend,
    ngram_distance,
    novelty,
)
from forkingpaths.core.errors import ConfigError, MissingAPIKey, ModelError, NameNotFound
from forkingpaths.models.runtime import ModelRuntime

BASE = '''def count_runs(values):
    """How many maximal runs of equal neighbours the list holds."""
    if not values:
        return 0
    runs = 1
    for left, right in zip(values, values[1:]):
        if left != right:
            runs += 1
    return runs
'''

SAME_BASE_VARIANTS = {
    "comments": '''# Count runs of equal neighbours.
def count_runs(values):
    """Different docstring, same code."""
    if not values:  # nothing to count
        return 0
    runs = 1
    # every change of value starts a new run
    for left, right in zip(values, values[1:]):
        if left != right:
            runs += 1  # one more
    return runs
''',
    "two-space indent": """def count_runs(values):
  if not values:
    return 0
  runs = 1
  for left, right in zip(values, values[1:]):
    if left != right:
      runs += 1
  return runs
""",
    "tabs and spacing": (
        "def count_runs( values ):\n"
        "\tif not values :\n"
        "\t\treturn 0\n"
        "\truns=1\n"
        "\tfor left,right in zip( values,values[ 1: ] ):\n"
        "\t\tif left!=right:\n"
        "\t\t\truns+=1\n"
        "\treturn runs\n"
    ),
    "wrapped lines": """def count_runs(values):


    if not values:
        return 0
    runs = 1
    for left, right in zip(
        values,
        values[1:]
    ):
        if left != \
                right:
            runs += 1
    return runs
""",
}


# ---- the 4-gram term ----


def test_char4grams_of_a_short_string_by_hand() -> None:
    assert char4grams("abcdef") == {"abcd", "bcde", "cdef"}
    # Shorter than one gram: the text is its own gram; nothing is no gram.
    assert char4grams("ab") == {"ab"}
    assert char4grams("") == set()
    assert char4grams("   # only a comment\n") == set()


def test_ngram_distance_is_one_minus_jaccard_by_hand() -> None:
    # {abcd, bcde, cdef} vs {abcd, bcdx, cdxy}: 1 shared of 5 distinct.
    assert ngram_distance("abcdef", "abcdxy") == pytest.approx(1 - 1 / 5)
    # "total=1" vs "total=2": tota, otal, tal= shared; al=1, al=2 not: 1 - 3/5.
    assert ngram_distance("total = 1", "total=2") == pytest.approx(0.4)
    assert ngram_distance("x = 1", "x = 1") == 0.0
    assert ngram_distance("abcd", "wxyz") == 1.0


def test_two_empty_solutions_are_at_distance_zero_and_one_empty_at_one() -> None:
    assert ngram_distance("", "") == 0.0
    assert ngram_distance("# just a comment", "") == 0.0
    assert ngram_distance("", "return 1") == 1.0


@pytest.mark.parametrize("variant", sorted(SAME_BASE_VARIANTS))
def test_comments_docstrings_indentation_and_spacing_do_not_change_g4(variant: str) -> None:
    assert char4grams(SAME_BASE_VARIANTS[variant]) == char4grams(BASE)
    assert ngram_distance(SAME_BASE_VARIANTS[variant], BASE) == 0.0


def test_canonical_form_layout() -> None:
    assert canonicalize(BASE).splitlines() == [
        "def count_runs(values):",
        "    if not values:",
        "        return 0",
        "    runs=1",
        "    for left,right in zip(values,values[1:]):",
        "        if left!=right:",
        "            runs+=1",
        "    return runs",
    ]


def test_canonicalization_keeps_strings_and_non_docstring_string_statements() -> None:
    code = 'def f():\n    x = 1\n    "a note, not a docstring"\n    return "a  #  b"\n'
    canonical = canonicalize(code)
    assert '"a note, not a docstring"' in canonical
    assert '"a  #  b"' in canonical  # a # inside a string is no comment
    # A class docstring goes; a module starting with code keeps that code.
    assert canonicalize('class A:\n    """Doc."""\n    size = 2\n') == "class A:\n    size=2"


def test_code_that_does_not_tokenize_falls_back_to_the_regex_pass() -> None:
    broken = "def f(:\n  x = [1,   2  # half a list\n    # a comment line\n"
    assert canonicalize(broken) == "def f(:\n    x=[1,2"
    other_language = "int main() {\n    return 0; // C\n}\n"
    assert canonicalize(other_language).startswith("int main(){")


# ---- embedding backends ----


def test_identifier_subtokens_split_snake_and_camel_case() -> None:
    assert identifier_subtokens("maxHTTPRetries_count2") == ["max", "http", "retries", "count", "2"]
    assert identifier_subtokens("__init__") == ["init"]
    assert identifier_subtokens("x") == ["x"]


def test_code_features_hold_node_ngrams_and_identifier_subtokens() -> None:
    features = code_features("total_sum = 1")
    assert features["t1:Assign"] == 1
    assert features["t2:Module>Assign"] == 1
    assert features["t3:Assign>Name>Constant"] == 1
    assert features["id:total"] == features["id:sum"] == 1
    assert not any("Store" in f or "Load" in f for f in features)
    # Text that does not parse still yields identifier sub-tokens.
    assert code_features("for for (") == {}
    assert code_features("int mainLoop(") == {"id:int": 1, "id:main": 1, "id:loop": 1}


def test_ast_tfidf_weights_by_hand() -> None:
    # "a" and "b" have the same 6 node features and one identifier each, none shared: the
    # structure cosine is 1, the identifier cosine 0, so cos = 0.75 * 1 + 0.25 * 0.
    vectors = AstTfidfEmbeddings(dim=2**20).vectors(["a", "b"])
    assert np.count_nonzero(vectors[0]) == 7
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.75, abs=1e-12)
    # Identifiers only: a (in both texts, idf 1) and b (in one, idf ln(3/2) + 1).
    only_names = AstTfidfEmbeddings(dim=2**20, identifier_weight=1.0).vectors(["a", "a + b"])
    idf_b = math.log(3 / 2) + 1
    assert float(only_names[0] @ only_names[1]) == pytest.approx(1 / math.sqrt(1 + idf_b**2))
    only_structure = AstTfidfEmbeddings(identifier_weight=0.0).vectors(["a", "b"])
    assert float(only_structure[0] @ only_structure[1]) == pytest.approx(1.0)


def test_ast_tfidf_term_frequency_is_sublinear() -> None:
    # One text alone: idf is 1 everywhere. Pre-order of "x; x; x": Module, then Expr, Name three
    # times; counts of its 1-, 2- and 3-grams: 1, 3, 3 | 1, 3, 2 | 1, 2, 2.
    vector = AstTfidfEmbeddings(dim=2**20, identifier_weight=0.0).vectors(["x; x; x"])[0]
    tf = np.array([1 + math.log(c) for c in (1, 3, 3, 1, 3, 2, 1, 2, 2)])
    assert sorted(vector[vector > 0]) == pytest.approx(sorted(tf / np.linalg.norm(tf)))


async def test_ast_tfidf_is_deterministic_and_identical_code_has_cosine_one() -> None:
    a, b = AstTfidfEmbeddings(), AstTfidfEmbeddings()
    first = await a.embed([BASE, SAME_BASE_VARIANTS["wrapped lines"], "print(1)"])
    second = await b.embed([BASE, SAME_BASE_VARIANTS["wrapped lines"], "print(1)"])
    assert first == second
    assert 1 - cosine_distance(first[0], first[0]) == pytest.approx(1.0, abs=1e-12)
    # Layout and comments do not reach the syntax tree: same vector.
    assert cosine_distance(first[0], first[1]) == pytest.approx(0.0, abs=1e-12)
    assert cosine_distance(first[0], first[2]) > 0.5


def test_ast_tfidf_vectors_are_the_same_in_another_process() -> None:
    # Hashing must not depend on PYTHONHASHSEED (str hashes are salted per process).
    script = (
        "import json; from forkingpaths.benchmarks.creativebench.novelty import "
        "AstTfidfEmbeddings as A; v = A(dim=256).vectors([open(0).read()])[0]; "
        "print(json.dumps([i for i, x in enumerate(v) if x > 0]))"
    )
    here = AstTfidfEmbeddings(dim=256).vectors([BASE])[0]
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            input=BASE,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )
        assert json.loads(out.stdout) == [i for i, x in enumerate(here) if x > 0]


def test_cosine_distance_edge_cases() -> None:
    assert cosine_distance([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert cosine_distance([0.0, 0.0], [1.0, 0.0]) == 1.0
    assert cosine_distance([1.0, 0.0], [-1.0, 0.0]) == 2.0
    assert cosine_distance([1.0, 1.0], [2.0, 2.0]) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ConfigError, match="different sizes"):
        cosine_distance([1.0], [1.0, 2.0])


def test_make_embedding_backend_specs_and_refusals() -> None:
    assert make_embedding_backend("none") is None
    backend = make_embedding_backend("ast-tfidf", dim=512, base_url=None)
    assert repr(backend) == "AstTfidfEmbeddings(dim=512, smoothing=1.0, identifier_weight=0.25)"
    assert backend is not None and backend.name == "ast-tfidf"
    with pytest.raises(NameNotFound, match="Did you mean 'ast-tfidf'"):
        make_embedding_backend("ast-tfdf")
    with pytest.raises(ConfigError, match="takes dim, smoothing, identifier_weight; got base_url"):
        make_embedding_backend("ast-tfidf", base_url="http://localhost:1/v1")
    with pytest.raises(ConfigError, match="dim"):
        make_embedding_backend("ast-tfidf", dim=3)
    with pytest.raises(ConfigError, match="--base-url"):
        make_embedding_backend("openai-compat/emb")
    with pytest.raises(NameNotFound):
        make_embedding_backend("openai-compat/")


def test_sentence_transformers_needs_the_package_and_a_local_model(tmp_path: Any) -> None:
    missing = str(tmp_path / "no-such-model")
    if importlib.util.find_spec("sentence_transformers") is None:
        with pytest.raises(ConfigError, match="not installed"):
            make_embedding_backend(f"sentence-transformers/{missing}")
    else:
        with pytest.raises(ConfigError, match="not on this machine"):
            make_embedding_backend(f"sentence-transformers/{missing}")


# ---- openai-compat against a tiny /v1/embeddings server ----


@dataclass
class EmbeddingServer:
    """Serves /v1/embeddings: a 4-number vector per input, data in reverse order (clients must
    sort by index); fails the first `failures` requests with 500."""

    failures: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    @staticmethod
    def vector(text: str) -> list[float]:
        return [float(len(text)), float(text.count("a")), float(text.count("(")), 1.0]

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        if self.failures > 0:
            self.failures -= 1
            return web.json_response({"error": {"message": "busy"}}, status=500)
        data = [
            {"object": "embedding", "index": i, "embedding": self.vector(text)}
            for i, text in enumerate(body["input"])
        ]
        return web.json_response(
            {
                "object": "list",
                "model": body["model"],
                "data": data[::-1],
                "usage": {"prompt_tokens": 3, "total_tokens": 3},
            }
        )


@pytest.fixture
async def server() -> AsyncIterator[EmbeddingServer]:
    state = EmbeddingServer()
    app = web.Application()
    app.router.add_post("/v1/embeddings", state.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    state.base_url = f"http://{host}:{port}/v1"
    try:
        yield state
    finally:
        await runner.cleanup()


def quick_runtime(retries: int = 3) -> ModelRuntime:
    return ModelRuntime(cache=False, max_retries=retries, retry_base_delay_s=0.0, jitter_seed=0)


async def test_openai_compat_posts_model_and_input_and_orders_by_index(
    server: EmbeddingServer,
) -> None:
    backend = make_embedding_backend(
        "openai-compat/code-embedder", base_url=server.base_url, runtime=quick_runtime()
    )
    assert repr(backend) == (
        f"OpenAICompatEmbeddings('code-embedder', base_url={server.base_url!r})"
    )
    assert backend is not None and backend.name == "openai-compat/code-embedder"
    texts = ["def a(): pass", "", "x = (1)"]
    vectors = await backend.embed(texts)
    await backend.aclose()
    # The blank text is not sent (OpenAI refuses empty input) and gets a zero vector.
    assert server.bodies == [
        {
            "model": "code-embedder",
            "input": ["def a(): pass", "x = (1)"],
            "encoding_format": "float",
        }
    ]
    assert vectors == [
        EmbeddingServer.vector(texts[0]),
        [0.0] * 4,
        EmbeddingServer.vector(texts[2]),
    ]
    assert server.headers[0]["Authorization"] == "Bearer EMPTY"


async def test_openai_compat_batches_and_uses_the_named_key(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CB_EMBED_KEY", "sk-test")
    backend = OpenAICompatEmbeddings(
        "m", base_url=server.base_url, api_key_env="CB_EMBED_KEY", batch_size=2,
        runtime=quick_runtime(),
    )  # fmt: skip
    texts = [f"v{i} = {i}" for i in range(5)]
    vectors = await backend.embed(texts)
    await backend.aclose()
    assert sorted(len(b["input"]) for b in server.bodies) == [1, 2, 2]
    assert vectors == [EmbeddingServer.vector(t) for t in texts]
    assert {h["Authorization"] for h in server.headers} == {"Bearer sk-test"}
    monkeypatch.delenv("CB_EMBED_KEY")
    with pytest.raises(MissingAPIKey, match="CB_EMBED_KEY"):
        OpenAICompatEmbeddings("m", base_url=server.base_url, api_key_env="CB_EMBED_KEY")


async def test_openai_compat_retries_server_errors_then_gives_up(server: EmbeddingServer) -> None:
    server.failures = 2
    backend = OpenAICompatEmbeddings("m", base_url=server.base_url, runtime=quick_runtime(3))
    assert await backend.embed(["abc"]) == [EmbeddingServer.vector("abc")]
    assert len(server.bodies) == 3
    server.failures = 10
    failing = OpenAICompatEmbeddings("m", base_url=server.base_url, runtime=quick_runtime(1))
    with pytest.raises(ModelError, match="after 2 attempt"):
        await failing.embed(["abc"])
    await backend.aclose()
    await failing.aclose()


async def test_novelty_through_the_openai_compat_backend(server: EmbeddingServer) -> None:
    backend = OpenAICompatEmbeddings("m", base_url=server.base_url, runtime=quick_runtime())
    a, b = "f(a)", "g(aa)"
    score = await novelty(a, b, backend)
    await backend.aclose()
    expected = cosine_distance(EmbeddingServer.vector(a), EmbeddingServer.vector(b))
    assert score.embedding_distance == pytest.approx(expected)
    assert score.novelty == pytest.approx(expected + ngram_distance(a, b))


# ---- Eq. 3-5 ----


async def test_novelty_sums_the_two_terms_and_drops_the_embedding_without_backend() -> None:
    other = "def count_runs(values):\n    return len({*values})\n"
    plain = await novelty(BASE, other, None)
    assert plain == NoveltyScore(
        ngram_distance=ngram_distance(BASE, other), embedding_distance=None,
        novelty=ngram_distance(BASE, other),
    )  # fmt: skip
    both = await novelty(BASE, other, AstTfidfEmbeddings())
    assert both.embedding_distance is not None and 0 < both.embedding_distance <= 1
    assert both.novelty == pytest.approx(both.embedding_distance + both.ngram_distance)
    assert 0 <= both.novelty <= 3
    assert (await novelty(BASE, BASE, AstTfidfEmbeddings())).novelty == pytest.approx(0, abs=1e-12)
    assert both.to_json()["novelty"] == both.novelty


async def test_explore_novelty_is_eq3_against_level0() -> None:
    constrained = "def count_runs(values):\n    return sum(1 for i, v in enumerate(values))\n"
    backend = AstTfidfEmbeddings()
    assert await explore_novelty(constrained, BASE, backend) == await novelty(
        constrained, BASE, backend
    )


async def test_combo_novelty_is_the_mean_over_sources_by_hand() -> None:
    solution = "abcdef"
    sources = ["abcdef", "abcdxy"]  # distances 0 and 0.8
    score = await combo_novelty(solution, sources, None)
    assert score.ngram_distance == pytest.approx(0.4)
    assert score.novelty == pytest.approx(0.4)
    assert score.embedding_distance is None
    backend = AstTfidfEmbeddings()
    pair = [await novelty(BASE, s, backend) for s in (BASE, SAME_BASE_VARIANTS["comments"], "x=1")]
    mean = await combo_novelty(BASE, [BASE, SAME_BASE_VARIANTS["comments"], "x=1"], backend)
    assert mean.novelty == pytest.approx(sum(p.novelty for p in pair) / 3)
    assert mean.embedding_distance == pytest.approx(
        sum(p.embedding_distance or 0.0 for p in pair) / 3
    )
    with pytest.raises(ConfigError, match="source solutions"):
        await combo_novelty(BASE, [], backend)
    with pytest.raises(ConfigError, match="source solutions"):
        await combo_novelty(BASE, "abc", backend)


# ---- App. G: a restructured search scores above a surface rewrite ----

BISECTION = """def max_batches(per_batch, stock, unit_cost, budget):
    def cost(n):
        return sum(
            max(0, n * need - have) * price
            for need, have, price in zip(per_batch, stock, unit_cost)
        )

    if not any(per_batch):
        return 10**18
    low, high = 0, max(stock) + budget + 1
    while low < high:
        mid = (low + high + 1) // 2
        if cost(mid) <= budget:
            low = mid
        else:
            high = mid - 1
    return low
"""

STEP_DOWN = """def max_batches(per_batch, stock, unit_cost, budget):
    if not any(per_batch):
        return 10**18
    free = min(have // need for need, have in zip(per_batch, stock) if need)
    full_price = sum(need * price for need, price in zip(per_batch, unit_cost))
    n = free + budget // max(full_price, 1)

    def over_budget(count):
        spent = 0
        for need, have, price in zip(per_batch, stock, unit_cost):
            spent += max(0, count * need - have) * price
        return spent > budget

    step = 10**12
    while step:
        while n > 0 and over_budget(n):
            n -= step if n >= step else n
        step //= 10
    return n
"""


async def test_case_study_restructuring_beats_a_surface_rewrite() -> None:
    backend = AstTfidfEmbeddings()
    touched_up = grow_comments(reformat_code(rename_identifiers(BISECTION, limit=2)), 0.5)
    assert touched_up != BISECTION
    restructured = await explore_novelty(STEP_DOWN, BISECTION, backend)
    surface = await explore_novelty(touched_up, BISECTION, backend)
    assert restructured.embedding_distance is not None and surface.embedding_distance is not None
    assert restructured.embedding_distance > 2 * surface.embedding_distance
    assert restructured.novelty > surface.novelty
