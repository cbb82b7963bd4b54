"""The creativebench-v1 protocol as an env: a program per task, run in the sandbox and scored."""

from __future__ import annotations

import ast
import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, cast
from weakref import WeakKeyDictionary

from forkingpaths.benchmarks.creativebench import constraints, metrics, novelty
from forkingpaths.benchmarks.creativebench.novelty import (
    AstTfidfEmbeddings,
    EmbeddingBackend,
    NoveltyScore,
    make_embedding_backend,
)
from forkingpaths.benchmarks.creativebench.sandbox import (
    DEFAULT_MEMORY_MB,
    ExecResult,
    Limits,
    Sandbox,
    Verdict,
    sandbox_python,
)
from forkingpaths.benchmarks.creativebench.tasks import ComboTask, ExploreTask
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord

log = logging.getLogger(__name__)

SUBSETS = ("combo", "explore")
"""The two kinds of task (§3.2 Combo, §3.3 Explore)."""

DEFAULT_EMBEDDING = "ast-tfidf-calibrated"
"""Novelty's embedding backend by default (offline, on CodeXEmbed's scale; `novelty.py`)."""

DEFAULT_TIMEOUT_S = 10.0
"""Sandbox seconds per execution (wall and CPU) by default."""

NOVELTY_CODE_LIMIT = 200_000
"""Bytes (UTF-8) of a solution scored for novelty: a longer one is scored on its first
NOVELTY_CODE_LIMIT bytes and its row flagged `novelty_truncated` (canonicalisation and
embedding of megabytes of generated code would hold a worker for long)."""

NO_JUDGE = "none"
"""The judge name recorded when no judge model was used (the static checker decided alone)."""


class Services:
    """What a CreativeBenchmark owns across its episodes and lends to every env it builds: the
    sandbox pool (workers start on the first execution) and the novelty embedding backend.
    `aclose` releases them; a later episode opens them again.

    A pool's workers talk through pipes of the event loop that started them, so each running
    loop gets its own pool (the runner has one loop; Gymnasium's adapter drives each env on a
    loop of its own), as the chat and embedding clients keep one connection pool per loop."""

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        workers: int | None = None,
        embedding: str = DEFAULT_EMBEDDING,
        embedding_base_url: str | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        python: str | None = None,
    ) -> None:
        self.timeout = timeout
        """Sandbox seconds per execution."""
        self.memory_mb = memory_mb
        """Sandbox address-space limit per execution (MB)."""
        self._python = python
        """The interpreter programs run under (None: `sandbox.sandbox_python()`, resolved once
        the first episode starts)."""
        self.workers = workers
        """Sandbox pool size (None: one per core)."""
        self.embedding = embedding
        """The embedding backend's spec (`novelty.make_embedding_backend`)."""
        self.embedding_base_url = embedding_base_url
        self._sandboxes: WeakKeyDictionary[asyncio.AbstractEventLoop, Sandbox] = WeakKeyDictionary()
        self._backend: EmbeddingBackend | None = None
        self._backend_ready = False
        self._warned_own_judge = False

    def sandbox(self) -> Sandbox:
        """The pool the programs of the episodes on the running event loop run in."""
        loop = asyncio.get_running_loop()
        sandbox = self._sandboxes.get(loop)
        if sandbox is None:
            limits = Limits(wall_s=self.timeout, cpu_s=self.timeout, memory_mb=self.memory_mb)
            sandbox = self._sandboxes[loop] = Sandbox(
                workers=self.workers, limits=limits, python=self.python
            )
        return sandbox

    @property
    def python(self) -> str:
        """The sandbox interpreter (the option, else $FORKINGPATHS_SANDBOX_PYTHON, else
        .sandbox-venv, else this interpreter), as every episode record names it."""
        if self._python is None:
            self._python = sandbox_python()
        return self._python

    def embedding_backend(self) -> EmbeddingBackend | None:
        """The backend of Eq. 3's embedding term (None: the 4-gram term alone)."""
        if not self._backend_ready:
            options = {"base_url": self.embedding_base_url} if self.embedding_base_url else {}
            self._backend = make_embedding_backend(self.embedding, **options)
            self._backend_ready = True
        return self._backend

    def notice_own_judge(self, judge: str) -> None:
        """Say once per benchmark that the constraint judge is the solver's own model."""
        if not self._warned_own_judge:
            self._warned_own_judge = True
            log.warning(
                "creativebench: the constraint judge is the solver's own model %s; it judges "
                "its own answers (pass --role judge=MODEL for an independent judge)",
                judge,
            )

    async def aclose(self) -> None:
        """Stop the running loop's sandbox workers and close the embedding backend's client,
        if any. (A pool of another loop is dropped: its workers end when its pipes close.)"""
        sandboxes, self._sandboxes = self._sandboxes, WeakKeyDictionary()
        sandbox = sandboxes.get(asyncio.get_running_loop())
        if sandbox is not None:
            await sandbox.aclose()
        close = getattr(self._backend, "aclose", None)
        if close is not None:
            await close()


class CreativeEnv(Env):
    """One CreativeBench instance (creativebench.txt): solve the task, the sandbox judges.

    ## Description

    A Combo episode (§3.2) is one problem: the program must pass its full tests and its demo
    tests; its Novelty is the mean N(program, source) over the task's k source solutions
    (Eq. 5). An Explore episode (§3.3) is one base problem with all its levels in order, level 0
    unconstrained and each later level adding one negative constraint: the program of a level
    must pass the tests and respect every stacked constraint; its Novelty is N(program, the
    episode's own level-0 program) (Eq. 4), against the reference level-0 solution, flagged
    `reference-level0`, when the episode's failed, and against the lowest level's reference,
    flagged `reference-lowest-level`, for an imported problem without a level 0. N(u, v) =
    (1 - cos(e_u, e_v)) + (1 - Jaccard of character 4-grams) (Eq. 3, `novelty.py`).

    Quality (§4.2) = pass@1 (sandbox verdict PASSED) and, for levels >= 1, no constraint broken
    (`metrics.quality`): a finding of an explicit `check` rule of the static checker is final;
    a finding of a rule inferred from a constraint's prose is advisory, shown to the judge as a
    hint and never zeroing Quality alone. The `judge` role model (App. B.1) decides what the
    static checker cannot see, once the program passed with no final finding; its calls come
    back in `Step.calls`. Without a judge the static checker decides alone.

    ## Action Space

    One program per step: the solver's answer, as Python source. An answer holding no Python
    the parser accepts (empty, prose, code that does not parse or compile) is executed all the
    same (it earns its verdict) and marked `info["valid"] = False`.

    ## Observation Space

    `text` is the task statement (Explore: with its constraints, one per line); `data` holds
    `subset` and `task` (the task as a dict, `docs/dev/creativebench.md` §1), what a solver
    builds its prompt from. The reset observation also carries `initial_info`, what the
    episode's record keeps: `subset`, `embedding`, `judge` (its name, or "none") and
    `judge_is_solver`. After the last task: the verdict text, and `data` with the episode's
    `outcome` (Combo: `passed`; Explore: `levels`, `passed_levels`).

    ## Rewards

    0 for every step: scores are per-row Quality and Novelty in `info`, combined over rows and
    trials by the benchmark (Creativity, Eq. 2).

    ## Starting State

    The Combo problem, or the Explore level 0. The reset options may name the solver's model
    (`solver_model`): a judge of the same name is recorded as `judge_is_solver` (and logged
    once per benchmark).

    ## Episode End

    Terminated after the last task's program is scored (Combo: one step; Explore: one step
    per level).

    ## Arguments

    `subset` ("combo" or "explore"), `tasks` (the Combo problem; the Explore levels in order),
    `services` (the benchmark's sandbox pool, timeout and embedding backend), `judge` (the
    constraint judge, used for Explore only).

    ## Version History

    - v1: Combo and Explore, sandbox verdicts, Eq. 2-5, static checker plus LLM judge with
      advisory inferred rules. Within v1 (scores unchanged): the protocol moved from the
      benchmark into this env, so a record's last step is `terminated`, a step's `info` holds
      no sandbox timing, and an answer with no Python the parser accepts (an empty one too)
      is an invalid step. An Explore step's feedback stays its verdict (`Step.feedback`); the
      next level is the next observation.
    """

    def __init__(
        self,
        subset: str,
        tasks: Sequence[ComboTask] | Sequence[ExploreTask],
        services: Services,
        judge: ChatModel | None = None,
    ) -> None:
        if subset not in SUBSETS:
            raise ConfigError(f"subset: expected one of {', '.join(SUBSETS)}, got {shown(subset)}")
        kind = ComboTask if subset == "combo" else ExploreTask
        if not tasks or not all(isinstance(t, kind) for t in tasks):
            raise ConfigError(
                f"tasks: a {subset} episode plays {kind.__name__}s, got {shown(tasks)}"
            )
        if subset == "combo" and len(tasks) != 1:
            raise ConfigError(f"tasks: a combo episode plays one task, got {len(tasks)}")
        self.subset = subset
        self.tasks = tuple(tasks)
        self.services = services
        # Only Explore levels are judged: a Combo episode records no judge.
        self.judge = judge if subset == "explore" else None
        self._index = 0
        self._baseline: str | None = None
        self._qualities: list[float] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        solver = (options or {}).get("solver_model")
        own = self.judge is not None and solver is not None and self.judge.name == solver
        if own and self.judge is not None:
            self.services.notice_own_judge(self.judge.name)
        self._index, self._baseline, self._qualities = 0, None, []
        first = task_view(self.subset, self.tasks[0])
        # The record keeps what the metrics read, not the task (the instance names it).
        initial_info = {
            "subset": self.subset,
            "embedding": self.services.embedding,
            "sandbox_python": self.services.python,
            "judge": self.judge.name if self.judge is not None else NO_JUDGE,
            "judge_is_solver": own,
        }
        return Observation(render_task(first), {**first, "initial_info": initial_info})

    async def astep(self, action: str) -> Step:
        task = self.tasks[self._index]
        calls: list[ModelCallRecord] = []
        if isinstance(task, ComboTask):
            info = await self._score_combo(task, action)
        else:
            info, calls = await self._score_level(task, action)
        self._qualities.append(info["quality"])
        self._index += 1
        info["valid"] = not info["no_code"] and info["verdict"] != Verdict.SYNTAX_ERROR
        feedback = f"{info['verdict']}: {info.get('detail', '')}".strip(": ")
        if self._index < len(self.tasks):
            view = task_view(self.subset, self.tasks[self._index])
            shown = Observation(render_task(view), view)
            return Step(shown, 0.0, False, False, info, calls, feedback=feedback)
        ending = Observation(feedback, {"subset": self.subset, "outcome": self._outcome()})
        return Step(ending, 0.0, True, False, info, calls)

    def _outcome(self) -> dict[str, Any]:
        """The episode's end state (`EpisodeRecord.outcome`)."""
        if self.subset == "combo":
            return {"subset": "combo", "passed": self._qualities == [1.0]}
        return {
            "subset": "explore",
            "levels": len(self.tasks),
            "passed_levels": sum(q == 1.0 for q in self._qualities),
        }

    async def _score_combo(self, task: ComboTask, code: str) -> dict[str, Any]:
        """A Combo row: full tests, then demo tests when the task has them."""
        runs = [await self._run(code, task.full_test_func)]
        if task.demo_test_func.strip():
            runs.append(await self._run(code, task.demo_test_func))
        passed = all(r.verdict == Verdict.PASSED for r in runs)
        info: dict[str, Any] = {
            "verdict": str(runs[0].verdict),
            "demo_verdict": str(runs[1].verdict) if len(runs) > 1 else None,
            "isolation": runs[0].isolation,
            "detail": runs[0].detail or (runs[1].detail if len(runs) > 1 else ""),
            "no_code": await asyncio.to_thread(no_code, code),
            "quality": metrics.quality(passed, [], None),
        }
        if task.source_solutions:
            info.update(await self._novelty(code, task.source_solutions))
        else:
            info["novelty"] = None  # paper rows without sources: no combinatorial novelty
        return info

    async def _score_level(
        self, task: ExploreTask, code: str
    ) -> tuple[dict[str, Any], list[ModelCallRecord]]:
        """An Explore row: tests, static checker, judge, novelty against the baseline."""
        result = await self._run(code, task.test_code)
        passed = result.verdict == Verdict.PASSED
        empty, violations = await asyncio.to_thread(static_check, code, task)
        final, advisory = constraints.split_violations(violations)
        info: dict[str, Any] = {
            "level": task.level,
            "verdict": str(result.verdict),
            "isolation": result.isolation,
            "detail": result.detail,
            "no_code": empty,
            "violations": [v.to_json() for v in final],
        }
        if advisory:
            info["advisory_violations"] = [v.to_json() for v in advisory]
        calls: list[ModelCallRecord] = []
        compliant: bool | None = None
        if task.level and passed and not final and self.judge is not None:
            verdict = await constraints.judge_constraints(self.judge, task, code, hints=advisory)
            calls = list(verdict.calls)
            compliant = verdict.compliant
            info["judge"] = {"compliant": verdict.compliant, "reasons": verdict.reasons}
        info["quality"] = metrics.quality(passed, final, compliant)
        if task.level == 0:
            self._baseline = code if passed else None
            info["baseline_solution"] = True
            return info, calls
        lowest = cast(ExploreTask, self.tasks[0])
        if self._baseline is not None:
            base, label = self._baseline, "run-level0"
        elif lowest.level == 0:
            base, label = lowest.reference_solution, "reference-level0"
        else:  # an imported problem without a level-0 row
            base, label = lowest.reference_solution, "reference-lowest-level"
        info.update(await self._novelty(code, [base]))
        info["baseline"] = label
        return info, calls

    async def _run(self, code: str, tests: str) -> ExecResult:
        return await self.services.sandbox().run(code, tests, timeout=self.services.timeout)

    async def _novelty(self, code: str, bases: Sequence[str]) -> dict[str, Any]:
        """Novelty fields of a row: Eq. 4 (one base) or Eq. 5 (the k sources), scored on at most
        NOVELTY_CODE_LIMIT bytes of the solution, off the event loop (`score_novelty`)."""
        scored, truncated = cap_code(code)
        score = await score_novelty(scored, bases, self.services.embedding_backend())
        info: dict[str, Any] = {
            "ngram_distance": score.ngram_distance,
            "embedding_distance": score.embedding_distance,
            "novelty": score.novelty,
        }
        if truncated:
            info["novelty_truncated"] = True
        return info


def task_view(subset: str, task: ComboTask | ExploreTask) -> dict[str, Any]:
    """What a solver is shown of a task: `{"subset", "task"}` with the task as plain data."""
    return {"subset": subset, "task": _plain(task)}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def render_task(view: Mapping[str, Any]) -> str:
    """The text of a task: its statement, and an Explore level's constraints, one per line."""
    task = view["task"]
    lines = [task["question"]]
    if view["subset"] == "explore" and task.get("constraints"):
        lines += ["", "Constraints:", *[f"- {c}" for c in task["constraints"]]]
    return "\n".join(lines)


def no_code(code: str) -> bool:
    """Whether an answer holds no Python the parser accepts: empty, prose without a code block,
    or code that does not parse (also when it nests too deeply for the parser)."""
    if not code.strip():
        return True
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return False


def static_check(code: str, task: ExploreTask) -> tuple[bool, list[constraints.Violation]]:
    """(no_code, violations) of one Explore answer: the CPU part of scoring a level, run in a
    worker thread. Level 0 has no constraint to check."""
    violations = constraints.check_constraints(code, task.constraints_detail) if task.level else []
    return no_code(code), violations


def cap_code(code: str, limit: int = NOVELTY_CODE_LIMIT) -> tuple[str, bool]:
    """(the first `limit` UTF-8 bytes of `code`, whether it was cut); a character split by the
    cut is dropped."""
    if len(code) * 4 <= limit:
        return code, False
    data = code.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return code, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def _novelty_in_thread(
    code: str, bases: Sequence[str], backend: EmbeddingBackend | None
) -> NoveltyScore:
    if len(bases) == 1:
        return asyncio.run(novelty.explore_novelty(code, bases[0], backend))
    return asyncio.run(novelty.combo_novelty(code, bases, backend))


async def score_novelty(
    code: str, bases: Sequence[str], backend: EmbeddingBackend | None
) -> NoveltyScore:
    """`novelty.explore_novelty` (one base, Eq. 4) or `novelty.combo_novelty` (the k sources,
    Eq. 5), with the CPU work off the event loop, so one large answer does not stall the other
    episodes: without a backend or with the in-process `ast-tfidf` one, the whole computation
    (canonicalisation, 4-grams, AST features) runs in a worker thread; with a backend that
    does its own I/O (`openai-compat/`, whose HTTP client belongs to this loop) or threading
    (`sentence-transformers/`), the 4-gram term runs in a worker thread and the embeddings are
    awaited here, each pair in one call as `novelty.novelty` does, the terms added as Eq. 3
    adds them."""
    if backend is None or isinstance(backend, AstTfidfEmbeddings):
        return await asyncio.to_thread(_novelty_in_thread, code, list(bases), backend)
    lexical = await asyncio.to_thread(_novelty_in_thread, code, list(bases), None)
    distances = await asyncio.gather(*(novelty.embedding_distance(code, b, backend) for b in bases))
    semantic = sum(distances) / len(distances)
    return NoveltyScore(
        ngram_distance=lexical.ngram_distance,
        embedding_distance=semantic,
        novelty=semantic + lexical.novelty,
    )
