"""Combo construction (§3.2, Algorithm 1; App. D, J): fuse solutions from different domains,
verify and repair in the sandbox, build tests, write the statement, filter."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import logging
import math
import random
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.benchmarks.creativebench.construction.harness import (
    IOCase,
    build_test_function,
    demo_program,
    error_text,
    has_passed,
    output_harness,
    read_outputs,
)
from forkingpaths.benchmarks.creativebench.construction.replies import (
    INPUTS_WANTED,
    MIN_CASES,
    Fusion,
    ask,
    entry_arity,
    entry_signature,
    first_code,
    read_audit,
    read_fusion,
    read_inputs,
    read_question,
    top_level_functions,
    words,
)
from forkingpaths.benchmarks.creativebench.construction.sources import (
    SourceComponent,
    default_components,
    load_components,
)
from forkingpaths.benchmarks.creativebench.construction.workdir import (
    PipelineDir,
    PipelineReport,
    build_model,
    check_count,
    run_all,
)
from forkingpaths.benchmarks.creativebench.novelty import EmbeddingBackend, make_embedding_backend
from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile, shown
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import close_models
from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)

T = TypeVar("T")

DIFFICULTY_TEMPERATURE = 0.8
"""Sampling temperature of the difficulty check's solve attempts (the paper samples five
answers and does not say at what temperature; 0.8 keeps samples different)."""
DEMO_CASES = 3
WORD_DIMENSIONS = 4096


class WordCountEmbedding:
    """Offline text embedding for the diversity check: hashed word counts, log-scaled.

    Used when no embedding backend is given (the paper embeds problem statements with
    text-embedding-3-small); it sees shared wording, not shared meaning.
    """

    name = "word-counts"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for text in texts:
            vector = [0.0] * WORD_DIMENSIONS
            for word, count in Counter(words(text)).items():
                vector[zlib.crc32(word.encode()) % WORD_DIMENSIONS] += 1.0 + math.log(count)
            vectors.append(vector)
        return vectors


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0 when either vector is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@dataclass
class _Outcome:
    """How one Combo item ended before the diversity check."""

    status: Literal["candidate", "dropped"]
    reason: str | None = None
    row: dict[str, Any] | None = None
    detail: dict[str, Any] = field(default_factory=dict)


class _Dropped(Exception):
    """Ends an item early with a reason for the report."""

    def __init__(self, reason: str, /, **detail: Any) -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def combo_item_id(seed: int, index: int) -> str:
    """Id of the `index`-th fusion (0-based) of a run with `seed`."""
    return f"fused-{seed}-{index:04d}"


def pick_components(
    components: Sequence[SourceComponent], k: int, seed: int, index: int
) -> list[SourceComponent]:
    """k components from k distinct domains for item `index`: the same for the same seed and
    index whatever else the run did."""
    rng = random.Random(f"creativebench-combo:{seed}:{index}")
    by_domain: dict[str, list[SourceComponent]] = {}
    for component in sorted(components, key=lambda c: c.id):
        by_domain.setdefault(component.domain, []).append(component)
    domains = rng.sample(sorted(by_domain), k)
    return [rng.choice(by_domain[d]) for d in domains]


def difficulty_label(solved: int, samples: int) -> str:
    """ "hard" when no sample solved it, "medium" up to half, "easy" above (our labels)."""
    if samples == 0:
        return ""
    if solved == 0:
        return "hard"
    return "medium" if solved * 2 <= samples else "easy"


class _ComboBuilder:
    """Algorithm 1 for one directory: builds items, checks diversity, commits in index order."""

    def __init__(
        self,
        model: ChatModel,
        sandbox: Sandbox,
        components: Sequence[SourceComponent],
        directory: PipelineDir,
        *,
        k: int,
        repair_attempts: int,
        difficulty_samples: int,
        diversity_threshold: float,
        embedding: EmbeddingBackend,
        seed: int,
    ) -> None:
        self.model, self.sandbox, self.components, self.dir = model, sandbox, components, directory
        self.k, self.repair_attempts = k, repair_attempts
        self.difficulty_samples, self.threshold = difficulty_samples, diversity_threshold
        self.embedding, self.seed = embedding, seed
        self._kept_vectors: list[tuple[str, list[float]]] | None = None

    async def build(self, index: int) -> _Outcome:
        item = combo_item_id(self.seed, index)
        chosen = pick_components(self.components, self.k, self.seed, index)
        try:
            return await self._build(item, chosen)
        except _Dropped as dropped:
            return _Outcome("dropped", dropped.reason, detail=dropped.detail)

    async def _build(self, item: str, chosen: list[SourceComponent]) -> _Outcome:
        log.info("%s: fusing %s", item, ", ".join(f"{c.id} ({c.domain})" for c in chosen))
        fusion, repairs = await self._fuse(item, chosen)
        functions = top_level_functions(fusion.solution) or {}
        node = functions.get(fusion.entry)
        if node is None:
            raise _Dropped("entry_point_missing", entry=fusion.entry)
        cases, unusable = await self._cases(item, fusion, node)
        demo_test = build_test_function(fusion.entry, cases[:DEMO_CASES])
        full_test = build_test_function(fusion.entry, cases)
        for tests in (demo_test, full_test):
            result = await self.sandbox.run(fusion.solution, tests)
            if not has_passed(result):
                raise _Dropped("reference_fails_tests", error=error_text(result))
        question = await self._question(item, fusion, demo_test, full_test)
        solved = await self._difficulty(item, question, full_test)
        if self.difficulty_samples and solved == self.difficulty_samples:
            raise _Dropped("too_easy", solved=solved, samples=self.difficulty_samples)
        await self._audit(item, question, fusion.solution, demo_test, full_test)
        row = {
            "id": item,
            "question": question,
            "canonical_solution": fusion.solution,
            "demo_test_func": demo_test,
            "full_test_func": full_test,
            "language": "python",
            "difficulty": difficulty_label(solved, self.difficulty_samples),
            "source_solutions": [c.code for c in chosen],
            "domains": [c.domain for c in chosen],
        }
        detail = {
            "components": [c.id for c in chosen],
            "entry_point": fusion.entry,
            "repairs": repairs,
            "cases": len(cases),
            "unusable_inputs": unusable,
            "solved": solved,
            "samples": self.difficulty_samples,
        }
        return _Outcome("candidate", row=row, detail=detail)

    # Step 1: solution fusion, verified in the sandbox, repaired with the error fed back.
    async def _fuse(self, item: str, chosen: list[SourceComponent]) -> tuple[Fusion, int]:
        blocks = "\n\n".join(
            prompts.COMPONENT_BLOCK.substitute(
                number=number,
                domain=c.domain,
                description=c.description or "(no description)",
                code=c.code.strip("\n"),
            )
            for number, c in enumerate(chosen, start=1)
        )
        messages = [
            Message(role="system", content=prompts.FUSE_SYSTEM),
            Message(
                role="user",
                content=prompts.FUSE_USER.substitute(count=len(chosen), components=blocks),
            ),
        ]
        fusion, reason = await ask(
            self.model, messages, read_fusion, directory=self.dir, item=item, purpose="fuse"
        )
        if fusion is None:
            raise _Dropped("fusion_unreadable", reason=reason)
        domains = " and ".join(c.domain for c in chosen)
        repairs = 0
        while True:
            result = await self.sandbox.run(fusion.solution, demo_program(fusion.demo))
            if has_passed(result):
                return fusion, repairs
            if repairs == self.repair_attempts:
                raise _Dropped(
                    "fusion_failed", verdict=str(result.verdict), error=error_text(result)
                )
            repairs += 1
            log.info("%s: fused code failed (%s); repair %d", item, result.verdict, repairs)
            messages = [
                Message(role="system", content=prompts.REPAIR_SYSTEM),
                Message(
                    role="user",
                    content=prompts.REPAIR_USER.substitute(
                        domains=domains,
                        code=fusion.solution.strip("\n"),
                        demo=fusion.demo.strip("\n"),
                        verdict=str(result.verdict),
                        error=error_text(result),
                        entry=fusion.entry,
                    ),
                ),
            ]
            repaired, reason = await ask(
                self.model, messages, read_fusion, directory=self.dir, item=item, purpose="repair"
            )
            if repaired is None:
                raise _Dropped("fusion_unreadable", reason=reason)
            fusion = repaired

    # Step 2: inputs from the model, outputs from the sandbox, run twice to catch randomness.
    async def _cases(
        self, item: str, fusion: Fusion, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> tuple[list[IOCase], int]:
        if isinstance(node, ast.AsyncFunctionDef):
            raise _Dropped("entry_point_async", entry=fusion.entry)
        messages = [
            Message(role="system", content=prompts.INPUTS_SYSTEM),
            Message(
                role="user",
                content=prompts.INPUTS_USER.substitute(
                    code=fusion.solution.strip("\n"),
                    signature=entry_signature(node),
                    entry=fusion.entry,
                    wanted=INPUTS_WANTED,
                ),
            ),
        ]
        arity = entry_arity(node)
        inputs, reason = await ask(
            self.model,
            messages,
            lambda text: read_inputs(text, arity),
            directory=self.dir,
            item=item,
            purpose="inputs",
        )
        if inputs is None:
            raise _Dropped("inputs_unreadable", reason=reason)
        harness = output_harness(fusion.entry, inputs)
        runs = []
        for _ in range(2):
            result = await self.sandbox.run(fusion.solution, harness)
            outcomes = read_outputs(result.stdout_tail, len(inputs)) if has_passed(result) else None
            if outcomes is None:
                raise _Dropped(
                    "outputs_failed", verdict=str(result.verdict), error=error_text(result)
                )
            runs.append(outcomes)
        cases: list[IOCase] = []
        for args, first, second in zip(inputs, runs[0], runs[1], strict=True):
            if first.get("ok") and first == second:
                cases.append(IOCase(tuple(args), first["repr"], bool(first.get("float"))))
        unusable = len(inputs) - len(cases)
        if len(cases) < MIN_CASES:
            raise _Dropped("too_few_cases", cases=len(cases), inputs=len(inputs))
        return cases, unusable

    # Step 3: the problem statement, reverse-engineered from solution and tests.
    async def _question(self, item: str, fusion: Fusion, demo_test: str, full_test: str) -> str:
        messages = [
            Message(role="system", content=prompts.QUESTION_SYSTEM),
            Message(
                role="user",
                content=prompts.QUESTION_USER.substitute(
                    code=fusion.solution.strip("\n"),
                    demo_test=demo_test.strip("\n"),
                    full_test=full_test.strip("\n"),
                    entry=fusion.entry,
                ),
            ),
        ]
        question, reason = await ask(
            self.model,
            messages,
            lambda text: read_question(text, fusion.entry),
            directory=self.dir,
            item=item,
            purpose="question",
        )
        if question is None:
            raise _Dropped("question_unreadable", reason=reason)
        return question

    # Step 4a: difficulty, `difficulty_samples` sampled solutions run against the full tests.
    async def _difficulty(self, item: str, question: str, full_test: str) -> int:
        if not self.difficulty_samples:
            return 0
        messages = [
            Message(role="system", content=prompts.SOLVE_SYSTEM),
            Message(role="user", content=prompts.SOLVE_USER.substitute(question=question)),
        ]

        async def sample(number: int) -> bool:
            params = ModelParams(temperature=DIFFICULTY_TEMPERATURE, seed=number)
            completion = await self.model.complete(messages, params)
            self.dir.record_call(item, completion, "difficulty")
            code = first_code(completion.text)
            if code is None:
                return False
            return has_passed(await self.sandbox.run(code, full_test))

        results = await asyncio.gather(*(sample(n) for n in range(self.difficulty_samples)))
        return sum(results)

    # Step 4b: quality audit, the seven rules of App. D.1.1, any failure drops the item.
    async def _audit(
        self, item: str, question: str, solution: str, demo_test: str, full_test: str
    ) -> None:
        rules = "\n".join(
            prompts.AUDIT_RULE_LINE.substitute(rule=rule, text=text)
            for rule, text in prompts.AUDIT_RULES.items()
        )
        messages = [
            Message(role="system", content=prompts.AUDIT_SYSTEM),
            Message(
                role="user",
                content=prompts.AUDIT_USER.substitute(
                    question=question,
                    code=solution.strip("\n"),
                    demo_test=demo_test.strip("\n"),
                    full_test=full_test.strip("\n"),
                    rules=rules,
                ),
            ),
        ]
        verdicts, reason = await ask(
            self.model, messages, read_audit, directory=self.dir, item=item, purpose="audit"
        )
        if verdicts is None:
            raise _Dropped("audit_unreadable", reason=reason)
        failed = {rule: why for rule, (ok, why) in verdicts.items() if not ok}
        if failed:
            for rule, why in failed.items():
                log.warning("%s: quality audit failed %s: %s", item, rule, why or "(no reason)")
            raise _Dropped("quality_audit", failed_rules=failed)

    # Step 4c: diversity, against the questions kept before this item.
    async def diversity_flag(self, item: str, question: str) -> dict[str, Any] | None:
        if self._kept_vectors is None:
            kept = [(r["id"], r["question"]) for r in self.dir.rows]
            vectors = await self.embedding.embed([q for _, q in kept]) if kept else []
            self._kept_vectors = [(i, v) for (i, _), v in zip(kept, vectors, strict=True)]
        [vector] = await self.embedding.embed([question])
        best: tuple[float, str] | None = None
        for other, kept_vector in self._kept_vectors:
            similarity = cosine(vector, kept_vector)
            if best is None or similarity > best[0]:
                best = (similarity, other)
        self._kept_vectors.append((item, vector))
        if best is not None and best[0] > self.threshold:
            log.warning("%s: question %.3f similar to %s (flagged)", item, best[0], best[1])
            return {"similar_to": best[1], "cosine": round(best[0], 4)}
        return None

    async def commit(self, index: int, outcome: _Outcome) -> None:
        item = combo_item_id(self.seed, index)
        entry: dict[str, Any] = {"item": item, "index": index}
        if outcome.status == "dropped" or outcome.row is None:
            log.info("%s: dropped (%s)", item, outcome.reason)
            self.dir.commit(
                {**entry, "status": "dropped", "reason": outcome.reason, "detail": outcome.detail}
            )
            return
        row = dict(outcome.row)
        flag = await self.diversity_flag(item, row["question"])
        if flag is not None:
            row["diversity_flag"] = flag
        log.info("%s: kept%s", item, " (flagged)" if flag else "")
        self.dir.commit(
            {**entry, "status": "kept", "reason": None, "flag": flag, "detail": outcome.detail},
            row,
        )


async def _ordered(
    indices: Sequence[int],
    build: Callable[[int], Awaitable[T]],
    commit: Callable[[int, T], Awaitable[None]],
    concurrency: int,
) -> None:
    """Build items `concurrency` at a time and commit each after the one before it, so what
    depends on earlier items (the diversity check) sees them in index order. The first
    exception cancels the rest (finished items stay committed)."""
    semaphore = asyncio.Semaphore(concurrency)
    done = {index: asyncio.Event() for index in indices}
    previous = dict(zip(indices[1:], indices[:-1], strict=True))

    async def one(index: int) -> None:
        async with semaphore:
            outcome = await build(index)
        if index in previous:
            await done[previous[index]].wait()
        await commit(index, outcome)
        # Set only on success: after a failure the task group cancels the waiting items, and
        # none may commit past the gap.
        done[index].set()

    await run_all([one(index) for index in indices])


async def build_combo(
    model: ChatModel,
    sandbox: Sandbox,
    components: list[SourceComponent] | None,
    out_dir: Path,
    *,
    n: int,
    k: int = 2,
    repair_attempts: int = 2,
    difficulty_samples: int = 5,
    diversity_threshold: float = 0.85,
    embedding: EmbeddingBackend | None = None,
    seed: int = 0,
    concurrency: int = 4,
) -> PipelineReport:
    """Algorithm 1: `n` fusion attempts of `k` components from different domains.

    Each item: fusion (model) -> sandbox run of its demo, repaired with the error up to
    `repair_attempts` times -> argument lists (model) -> outputs (reference run twice in the
    sandbox; inputs that raise, print no literal or differ between runs are not cases) ->
    demo test (first 3 cases) and full test built by us -> problem statement (model) ->
    filters: difficulty (`difficulty_samples` sampled solutions; all passing drops it; 0 turns
    the check off), quality audit (seven rules; any failure drops it), diversity (cosine of
    question embeddings > `diversity_threshold` with an earlier kept row: kept with a
    `diversity_flag`). Rows go to `out_dir/combo.jsonl`; `components=None` uses the built-in
    Combo data's source solutions; `embedding=None` uses WordCountEmbedding. Re-running on the
    same directory skips finished items (`n` may grow; other settings must match).
    """
    check_count("n", n, 0)
    check_count("k", k, 2)
    check_count("repair_attempts", repair_attempts, 0)
    check_count("difficulty_samples", difficulty_samples, 0)
    check_count("concurrency", concurrency, 1)
    if isinstance(diversity_threshold, bool) or not (
        isinstance(diversity_threshold, int | float) and 0 < diversity_threshold <= 1
    ):
        raise ConfigError(
            f"diversity_threshold: expected a cosine in (0, 1], got {shown(diversity_threshold)}"
        )
    components = default_components() if components is None else list(components)
    domains = {c.domain for c in components}
    if len(domains) < k:
        raise ConfigError(
            f"k={k} needs components from at least {k} domains; got {len(components)}"
            f" components from {len(domains)} ({', '.join(sorted(domains)) or 'none'})"
        )
    backend: EmbeddingBackend = embedding if embedding is not None else WordCountEmbedding()
    digest = hashlib.sha256(
        json.dumps(sorted((c.id, c.domain, c.code, c.description) for c in components)).encode()
    ).hexdigest()
    directory = PipelineDir(
        out_dir,
        "combo",
        {
            "pipeline": "combo",
            "model": model.name,
            "k": k,
            "repair_attempts": repair_attempts,
            "difficulty_samples": difficulty_samples,
            "diversity_threshold": diversity_threshold,
            "embedding": backend.name,
            "seed": seed,
            "components": digest,
        },
    )
    directory.open()
    finished = {e["index"] for e in directory.state if e.get("status") in ("kept", "dropped")}
    todo = [i for i in range(n) if i not in finished]
    resumed = n - len(todo)
    if resumed:
        log.info("combo: %d of %d items already finished, skipped", resumed, n)
    builder = _ComboBuilder(
        model,
        sandbox,
        components,
        directory,
        k=k,
        repair_attempts=repair_attempts,
        difficulty_samples=difficulty_samples,
        diversity_threshold=diversity_threshold,
        embedding=backend,
        seed=seed,
    )
    await _ordered(todo, builder.build, builder.commit, concurrency)
    report = directory.report(resumed)
    log.info("combo: kept %d, dropped %s, flagged %d", report.kept, report.dropped, report.flagged)
    return report


async def run_combo_pipeline(
    model: str,
    out_dir: Path,
    *,
    n: int,
    k: int = 2,
    repair_attempts: int = 2,
    difficulty_samples: int = 5,
    diversity_threshold: float = 0.85,
    embedding: str = "none",
    embedding_options: Mapping[str, Any] | None = None,
    components: Path | None = None,
    seed: int = 0,
    model_options: ModelOptions | None = None,
    runtime: ModelRuntime | None = None,
    sandbox_options: Mapping[str, Any] | None = None,
    concurrency: int = 4,
) -> PipelineReport:
    """`build_combo` from a model id (`openai/gpt-4.1`, `scripted/creativebench-pipeline`...).

    `components`: a JSONL of `{"id", "domain", "code", "description"?}` (`load_components`;
    any bad row refuses the run), else the built-in Combo data's source solutions.
    `embedding`: a `make_embedding_backend` spec for the diversity check ("none": word counts)
    with `embedding_options` as its keyword arguments. `sandbox_options` go to `Sandbox(...)`.
    """
    chosen: list[SourceComponent] | None = None
    if components is not None:
        chosen, errors = load_components(components)
        if errors:
            raise InvalidFile("; ".join(str(e) for e in errors))
    backend = None
    if embedding != "none":
        backend = make_embedding_backend(embedding, **dict(embedding_options or {}))
    chat = build_model(model, model_options, runtime or ModelRuntime())
    try:
        async with Sandbox(**dict(sandbox_options or {})) as sandbox:
            return await build_combo(
                chat,
                sandbox,
                chosen,
                out_dir,
                n=n,
                k=k,
                repair_attempts=repair_attempts,
                difficulty_samples=difficulty_samples,
                diversity_threshold=diversity_threshold,
                embedding=backend,
                seed=seed,
                concurrency=concurrency,
            )
    finally:
        await close_models([chat])
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()
