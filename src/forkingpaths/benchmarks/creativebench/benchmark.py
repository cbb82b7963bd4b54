"""The creativebench-v1 benchmark: generate, execute in the sandbox, score quality x novelty."""

from __future__ import annotations

import ast
import asyncio
import copy
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, QuickConfig
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, StepRecord

if TYPE_CHECKING:
    from forkingpaths.benchmarks.creativebench.novelty import EmbeddingBackend, NoveltyScore
    from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
    from forkingpaths.benchmarks.creativebench.tasks import ComboTask, ExploreTask
    from forkingpaths.core.agent import Agent
    from forkingpaths.core.chat import ChatModel

log = logging.getLogger(__name__)

_PKG = "forkingpaths.benchmarks.creativebench"
SUBSETS = ("combo", "explore")
DEFAULT_EMBEDDING = "ast-tfidf"
DEFAULT_TIMEOUT_S = 10.0

PAPER_SEED = 42
"""Seed of trial 0 (App. B.2: three trials with seeds 42, 43, 44)."""

NOVELTY_CODE_LIMIT = 200_000
"""Bytes (UTF-8) of a solution scored for novelty: a longer one is scored on its first
NOVELTY_CODE_LIMIT bytes and its row flagged `novelty_truncated` (canonicalisation and
embedding of megabytes of generated code would hold a worker for long)."""

NO_JUDGE = "none"
"""The judge name recorded when no judge model was used (the static checker decided alone)."""


class CreativeBenchmark(Benchmark):
    """CreativeBench (creativebench.txt): code creativity as Quality x Novelty.

    Splits: `combo` (one episode per Combo problem: the solution must pass the demo and full
    tests; novelty = mean N(solution, source) over the k source solutions, Eq. 5) and `explore`
    (one episode per base problem, all its levels in order: each level's solution must pass the
    tests and respect every stacked constraint; novelty = N(solution, the same run's level-0
    solution), Eq. 4 -- the reference level-0 solution stands in, flagged `reference-level0`,
    when the run's own failed; an imported problem without a level-0 row uses its lowest
    level's reference, flagged `reference-lowest-level`); `all` = both. N(u, v) =
    (1 - cos(e_u, e_v)) + (1 - Jaccard of character 4-grams) (Eq. 3) with the `embedding`
    backend (default `ast-tfidf`, offline; `none` keeps the 4-gram term alone;
    `openai-compat/<model>` with `embedding_base_url` for CodeXEmbed on vLLM/TEI). Level 0 is the
    model's default behaviour: the solver gets a plain prompt there (App. A, Table 19).

    Quality = pass@1 (sandbox verdict PASSED) and, for Explore levels >= 1, no constraint
    violated: a violation of an explicit `check` rule is final; a finding of a rule the static
    checker inferred from the constraint's prose is advisory, shown to the judge as a hint and
    never zeroing Quality on its own. The `judge` role (App. B.1) decides what the static checker
    cannot see; it defaults to the agent's own model (a warning is logged once: pass
    `--role judge=MODEL` for an independent judge) and, with no model at all (the `reference`
    agent), the static checker decides alone. The metrics record the judge's name, or "none"
    (always for Combo episodes: they have no constraint to judge).
    Creativity = mean of Quality x Novelty (Eq. 2). Level 0 rows count for Pass@1 but not for
    Novelty or Creativity (they are the baseline).

    Metrics per subset (`combo_...`, `explore_...`): `pass_at_1`, `novelty`, `creativity` (with
    `_std` over trials), `novelty_passed` (novelty over the rows of Quality 1 only), `no_code`
    (rows whose answer holds no Python the parser accepts: empty, prose, broken code),
    `reference_baselines` (Explore rows whose novelty baseline is a reference solution), `rows`,
    `trials`; `judge` run-wide. `creativebench ttest RUN_A RUN_B` compares two runs per trial
    (App. E.1).

    Paper settings (App. B.2): temperature 0.1, top-p 1.0, three trials with seeds 42, 43, 44,
    the mean reported: `forkingpaths run creativebench --split all --agent vanilla --model M
    --temperature 0.1 --trials 3`. Trial t runs with seed 42 + t (+ `--seed`), the same for every
    instance, and the solver sends it with each request, so trials are independent draws and the
    response cache (keyed on the seed) never replays one trial into another.

    Options: `tasks` (a JSONL file in the paper's release format replacing the built-in set of
    that subset), `embedding`, `embedding_base_url`, `timeout` (sandbox seconds per execution,
    default 10), `workers` (sandbox pool size).

    Versions: v1 -- Combo and Explore subsets, sandbox verdicts, Eq. 2-5 metrics, static checker
    plus LLM judge; per-trial seeds 42 + t, plain level-0 prompt, advisory inferred rules,
    judge defaulting to the agent's model, `novelty_passed` / `no_code` / `reference_baselines`
    (review fixes within v1, before any published result).
    """

    id = "creativebench-v1"
    name = "creativebench"
    description = "CreativeBench: code creativity (quality x novelty) in a sandbox; Combo/Explore"
    splits = ("combo", "explore", "all")
    default_split = "combo"
    agents = MappingProxyType(
        {
            "vanilla": AgentSpec(
                f"{_PKG}.agents.solver:make_vanilla",
                needs_model=True,
                description="zero-shot solver with the evaluation prompts (App. M, N)",
            ),
            "prompt": AgentSpec(
                f"{_PKG}.agents.solver:make_prompt_solver",
                needs_model=True,
                description="solver with an evolved prompt file (-a prompt_file=evolved.json)",
            ),
            "reference": AgentSpec(
                f"{_PKG}.agents.solver:make_reference",
                needs_model=False,
                description="reference: answers each task's reference solution (sanity floor)",
            ),
        }
    )
    estimate_policy = "creative-solver"
    model_roles = MappingProxyType(
        {
            "judge": "constraint-compliance judge for Explore levels (App. B.1); default: the "
            "agent's own model"
        }
    )
    roles_default_to_agent = frozenset({"judge"})
    quick = (
        QuickConfig(split="all", agent="reference"),
        QuickConfig(
            split="all",
            agent="vanilla",
            model="scripted/creative-solver",
            roles=MappingProxyType({"judge": "scripted/constraint-judge"}),
        ),
    )
    headline_metrics = (
        "combo_pass_at_1",
        "combo_novelty",
        "combo_creativity",
        "explore_pass_at_1",
        "explore_novelty",
        "explore_creativity",
    )
    cli_entry_point = f"{_PKG}.cli:app"

    def __init__(self, **options: Any) -> None:
        allowed = {"tasks", "embedding", "embedding_base_url", "timeout", "workers"}
        unknown = set(options) - allowed
        if unknown:
            raise ConfigError(
                f"unknown creativebench option(s) {sorted(unknown)}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        timeout = options.get("timeout", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError(f"timeout: expected seconds > 0 (default 10), got {timeout!r}")
        workers = options.get("workers")
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ConfigError(f"workers: expected a positive integer, got {workers!r}")
        if options.get("tasks") is not None:
            path = Path(str(options["tasks"])).expanduser()
            if not path.exists():
                raise ConfigError(f"tasks: {str(path)!r} does not exist")
            options = {**options, "tasks": str(path.resolve())}
        super().__init__(**options)
        self.timeout = float(timeout)
        self._explore: dict[str, list[ExploreTask]] | None = None
        self._combo: dict[str, ComboTask] | None = None
        self._sandbox: Sandbox | None = None
        self._backend: EmbeddingBackend | None = None
        self._backend_ready = False
        self._warned_judge = False

    # ---- tasks ----

    def _load(self) -> None:
        if self._explore is not None:
            return
        from forkingpaths.benchmarks.creativebench.tasks import (
            explore_levels,
            load_combo,
            load_explore,
        )

        custom = self.options.get("tasks")
        explore, e_errors = load_explore(None)
        combo, c_errors = load_combo(None)
        if custom is not None:
            from forkingpaths.benchmarks.creativebench.tasks import import_report

            kind = import_report(Path(custom))["kind"]
            if kind == "explore":
                explore, e_errors = load_explore(Path(custom))
            else:
                combo, c_errors = load_combo(Path(custom))
        for error in [*e_errors, *c_errors]:
            log.warning("task row refused: %s", error)
        self._explore = explore_levels(explore)
        self._combo = {t.id: t for t in combo}

    def combo_tasks(self) -> list[ComboTask]:
        """The Combo tasks in use (built-in, or the `tasks` option's)."""
        self._load()
        assert self._combo is not None
        return list(self._combo.values())

    def explore_tasks(self) -> dict[str, list[ExploreTask]]:
        """The Explore levels in use, per base problem in level order."""
        self._load()
        assert self._explore is not None
        return dict(self._explore)

    def instances(self, split: str) -> list[Instance]:
        if split not in self.splits:
            return self.select_instances(split, None)
        self._load()
        assert self._explore is not None and self._combo is not None
        out: list[Instance] = []
        if split in ("combo", "all"):
            out += [
                Instance(id=t.id, split=split, params={"subset": "combo"})
                for t in self._combo.values()
            ]
        if split in ("explore", "all"):
            out += [
                Instance(
                    id=problem, split=split, params={"subset": "explore", "levels": len(levels)}
                )
                for problem, levels in self._explore.items()
            ]
        return out

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        """A text view of the task (for the contract and Gymnasium): one action = one program,
        checked only for being Python; execution and scoring belong to `run_episode`."""
        return _TaskEnv(self._task_view(instance))

    def max_steps(self, instance: Instance) -> int:
        return int(instance.params.get("levels", 1))

    def episode_seed(self, instance: Instance, trial: int, base_seed: int) -> int:
        """App. B.2's seeds: trial t of every instance runs with seed 42 + t (42, 43, 44 for
        three trials), shifted by the run's `--seed`."""
        return PAPER_SEED + base_seed + trial

    def _task_view(self, instance: Instance) -> dict[str, Any]:
        self._load()
        assert self._explore is not None and self._combo is not None
        if instance.params["subset"] == "combo":
            return {"subset": "combo", "task": _as_dict(self._combo[instance.id])}
        return {"subset": "explore", "task": _as_dict(self._explore[instance.id][0])}

    # ---- shared resources ----

    async def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from forkingpaths.benchmarks.creativebench.sandbox import Limits, Sandbox

            self._sandbox = Sandbox(
                workers=self.options.get("workers"),
                limits=Limits(wall_s=self.timeout, cpu_s=self.timeout),
            )
        return self._sandbox

    def embedding_backend(self) -> EmbeddingBackend | None:
        if not self._backend_ready:
            from forkingpaths.benchmarks.creativebench.novelty import make_embedding_backend

            spec = str(self.options.get("embedding", DEFAULT_EMBEDDING))
            kwargs = {}
            if self.options.get("embedding_base_url"):
                kwargs["base_url"] = self.options["embedding_base_url"]
            self._backend = make_embedding_backend(spec, **kwargs)
            self._backend_ready = True
        return self._backend

    async def aclose(self) -> None:
        if self._sandbox is not None:
            await self._sandbox.aclose()
            self._sandbox = None

    # ---- protocol ----

    async def run_episode(
        self,
        instance: Instance,
        agent: Agent,
        record: EpisodeRecord,
        roles: Mapping[str, ChatModel] = MappingProxyType({}),
    ) -> EpisodeRecord:
        self._load()
        assert self._explore is not None and self._combo is not None
        subset = instance.params["subset"]
        # Only Explore levels are judged: a Combo episode records no judge.
        judge = roles.get("judge") if subset == "explore" else None
        solver_model = getattr(agent, "model", None)
        own = judge is not None and (
            judge is solver_model or judge.name == getattr(solver_model, "name", None)
        )
        if own and not self._warned_judge:
            self._warned_judge = True
            log.warning(
                "creativebench: the constraint judge is the solver's own model %s; it judges "
                "its own answers (pass --role judge=MODEL for an independent judge)",
                judge.name if judge is not None else NO_JUDGE,
            )
        record.initial_info = {
            "subset": subset,
            "embedding": str(self.options.get("embedding", DEFAULT_EMBEDDING)),
            "judge": judge.name if judge is not None else NO_JUDGE,
            "judge_is_solver": own,
        }
        if subset == "combo":
            await self._combo_episode(self._combo[instance.id], agent, record)
        else:
            await self._explore_episode(self._explore[instance.id], agent, record, judge)
        return record

    async def _solve(self, agent: Agent, view: dict[str, Any], record: EpisodeRecord):  # type: ignore[no-untyped-def]
        observation = Observation(_render(view), view)
        if not record.initial_observation:
            record.initial_observation = observation.text
        decision = await agent.act(observation)
        return observation, decision

    async def _novelty(self, code: str, bases: Sequence[str]) -> dict[str, Any]:
        """Novelty fields of a row: Eq. 4 (one base) or Eq. 5 (the k sources), scored on at most
        NOVELTY_CODE_LIMIT bytes of the solution, off the event loop (`score_novelty`)."""
        scored, truncated = cap_code(code)
        score = await score_novelty(scored, bases, self.embedding_backend())
        info = _novelty_info(score)
        if truncated:
            info["novelty_truncated"] = True
        return info

    async def _combo_episode(self, task: ComboTask, agent: Agent, record: EpisodeRecord) -> None:
        from forkingpaths.benchmarks.creativebench.metrics import quality

        view = {"subset": "combo", "task": _as_dict(task)}
        observation, decision = await self._solve(agent, view, record)
        code = decision.action
        sandbox = await self.sandbox()
        runs = [await sandbox.run(code, task.full_test_func, timeout=self.timeout)]
        if task.demo_test_func.strip():
            runs.append(await sandbox.run(code, task.demo_test_func, timeout=self.timeout))
        passed = all(r.verdict == "PASSED" for r in runs)
        info: dict[str, Any] = {
            "verdict": runs[0].verdict,
            "demo_verdict": runs[1].verdict if len(runs) > 1 else None,
            "isolation": runs[0].isolation,
            "detail": runs[0].detail or (runs[1].detail if len(runs) > 1 else ""),
            "duration_s": sum(r.duration_s for r in runs),
            "no_code": await asyncio.to_thread(no_code, code),
            "quality": quality(passed, [], None),
        }
        if task.source_solutions:
            info.update(await self._novelty(code, task.source_solutions))
        else:
            info["novelty"] = None  # paper rows without sources: no combinatorial novelty
        record.steps.append(_step(0, observation, decision, info))
        record.outcome = {"subset": "combo", "passed": passed}

    async def _explore_episode(
        self,
        levels: list[ExploreTask],
        agent: Agent,
        record: EpisodeRecord,
        judge: ChatModel | None,
    ) -> None:
        from forkingpaths.benchmarks.creativebench.constraints import (
            judge_constraints,
            split_violations,
        )
        from forkingpaths.benchmarks.creativebench.metrics import quality

        sandbox = await self.sandbox()
        baseline: str | None = None
        lowest = levels[0]
        for index, task in enumerate(levels):
            view = {"subset": "explore", "task": _as_dict(task)}
            observation, decision = await self._solve(agent, view, record)
            code = decision.action
            result = await sandbox.run(code, task.test_code, timeout=self.timeout)
            passed = result.verdict == "PASSED"
            empty, violations = await asyncio.to_thread(_static_check, code, task)
            final, advisory = split_violations(violations)
            info: dict[str, Any] = {
                "level": task.level,
                "verdict": result.verdict,
                "isolation": result.isolation,
                "detail": result.detail,
                "duration_s": result.duration_s,
                "no_code": empty,
                "violations": [v.to_json() for v in final],
            }
            if advisory:
                info["advisory_violations"] = [v.to_json() for v in advisory]
            calls = list(decision.calls)
            compliant: bool | None = None
            if task.level and passed and not final and judge is not None:
                verdict = await judge_constraints(judge, task, code, hints=advisory)
                calls += verdict.calls
                compliant = verdict.compliant
                info["judge"] = {"compliant": verdict.compliant, "reasons": verdict.reasons}
            info["quality"] = quality(passed, final, compliant)
            if task.level == 0:
                baseline = code if passed else None
                info["baseline_solution"] = True
            else:
                if baseline is not None:
                    base, label = baseline, "run-level0"
                elif lowest.level == 0:
                    base, label = lowest.reference_solution, "reference-level0"
                else:  # an imported problem without a level-0 row
                    base, label = lowest.reference_solution, "reference-lowest-level"
                info.update(await self._novelty(code, [base]))
                info["baseline"] = label
            step = _step(index, observation, decision, info)
            step.calls = calls
            record.steps.append(step)
        record.outcome = {
            "subset": "explore",
            "levels": len(levels),
            "passed_levels": sum(s.info["quality"] == 1.0 for s in record.steps),
        }

    # ---- metrics ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        rows = _rows(record)
        return {
            "subset": record.initial_info.get("subset"),
            **_cells(rows),
            "judge": record.initial_info.get("judge") or NO_JUDGE,
            "rows": len(rows),
            "verdicts": dict(_count(r["verdict"] for r in rows)),
        }

    def aggregate(self, records: list[EpisodeRecord]) -> dict[str, Any]:
        ok = [r for r in records if r.status == "ok"]
        out: dict[str, Any] = {"episodes": len(records), "errored": len(records) - len(ok)}
        groups: dict[str, dict[str, Any]] = {}
        for subset in SUBSETS:
            subset_records = [r for r in ok if r.initial_info.get("subset") == subset]
            if not subset_records:
                continue
            summary = _subset_summary(subset_records)
            for key, value in summary.items():
                out[f"{subset}_{key}"] = value
            groups[subset] = summary
        isolation = {s.info.get("isolation") for r in ok for s in r.steps} - {None}
        out["isolation"] = ", ".join(sorted(isolation)) or None
        explore = [r for r in ok if r.initial_info.get("subset") == "explore"]
        judges = {str(r.initial_info.get("judge") or NO_JUDGE) for r in explore}
        out["judge"] = ", ".join(sorted(judges)) or NO_JUDGE  # the Explore judge(s)
        out["by_group"] = groups
        return out


# ---- helpers ----


class _TaskEnv(Env):
    """Shows a task; accepts one program and says whether it is Python (contract checks)."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.view = view

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        return Observation(_render(self.view), copy.deepcopy(self.view))

    def step(self, action: str) -> Step:
        import ast

        try:
            tree = ast.parse(action)
        except (SyntaxError, ValueError):
            tree = None
        # A solution defines what the tests call: a program without a def or class is not one.
        valid = tree is not None and any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for node in tree.body
        )
        feedback = "Program received." if valid else "Not a Python program defining a function."
        view = copy.deepcopy(self.view)  # each call returns its own data (Gymnasium's rule)
        return Step(Observation(feedback, view), 0.0, True, False, {"valid": valid})


def _as_dict(task: Any) -> dict[str, Any]:
    """A task as plain JSON-ready data (what the solver's observation carries)."""
    return _plain({f.name: getattr(task, f.name) for f in fields(task)})


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _render(view: dict[str, Any]) -> str:
    task = view["task"]
    lines = [task["question"]]
    if view["subset"] == "explore" and task.get("constraints"):
        lines += ["", "Constraints:", *[f"- {c}" for c in task["constraints"]]]
    return "\n".join(lines)


def _step(index: int, observation: Observation, decision: Any, info: dict[str, Any]) -> StepRecord:
    return StepRecord(
        index=index,
        observation=observation.text,
        thought=decision.thought,
        action=decision.action,
        feedback=f"{info['verdict']}: {info.get('detail', '')}".strip(": "),
        valid=info["verdict"] != "SYNTAX_ERROR",
        info=info,
        calls=list(decision.calls),
    )


def _novelty_info(score: Any) -> dict[str, Any]:
    return {
        "ngram_distance": score.ngram_distance,
        "embedding_distance": score.embedding_distance,
        "novelty": score.novelty,
    }


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


def _static_check(code: str, task: ExploreTask) -> tuple[bool, list[Any]]:
    """(no_code, violations) of one Explore answer: the CPU part of scoring a level, run in a
    worker thread. Level 0 has no constraint to check."""
    from forkingpaths.benchmarks.creativebench.constraints import check_constraints

    violations = check_constraints(code, task.constraints_detail) if task.level else []
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
    from forkingpaths.benchmarks.creativebench.novelty import combo_novelty, explore_novelty

    if len(bases) == 1:
        return asyncio.run(explore_novelty(code, bases[0], backend))
    return asyncio.run(combo_novelty(code, bases, backend))


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
    from forkingpaths.benchmarks.creativebench.novelty import (
        AstTfidfEmbeddings,
        NoveltyScore,
        embedding_distance,
    )

    if backend is None or isinstance(backend, AstTfidfEmbeddings):
        return await asyncio.to_thread(_novelty_in_thread, code, list(bases), backend)
    lexical = await asyncio.to_thread(_novelty_in_thread, code, list(bases), None)
    distances = await asyncio.gather(*(embedding_distance(code, b, backend) for b in bases))
    semantic = sum(distances) / len(distances)
    return NoveltyScore(
        ngram_distance=lexical.ngram_distance,
        embedding_distance=semantic,
        novelty=semantic + lexical.novelty,
    )


def _rows(record: EpisodeRecord) -> list[dict[str, Any]]:
    """Per-row quality/novelty: Combo one row; Explore one per level (level 0: no novelty)."""
    return [
        {
            "quality": float(s.info.get("quality", 0.0)),
            "novelty": s.info.get("novelty"),
            "verdict": s.info.get("verdict"),
            "no_code": bool(s.info.get("no_code", False)),
            "reference_baseline": str(s.info.get("baseline", "")).startswith("reference"),
        }
        for s in record.steps
        if "verdict" in s.info
    ]


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for value in values:
        out[str(value)] += 1
    return out


def _cells(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass@1, Novelty, Creativity (Eq. 2) and Novelty of the passed rows over some rows, with
    `metrics.quality`'s values and `metrics.creativity`; None where no row counts; and the
    `no_code` and `reference_baselines` counts."""
    from forkingpaths.benchmarks.creativebench.metrics import creativity, mean_std

    scored = [r for r in rows if r["novelty"] is not None]
    passed = [r for r in scored if r["quality"] == 1.0]
    return {
        "pass_at_1": mean_std([r["quality"] for r in rows])[0] if rows else None,
        "novelty": mean_std([r["novelty"] for r in scored])[0] if scored else None,
        "creativity": creativity([r["quality"] for r in scored], [r["novelty"] for r in scored])
        if scored
        else None,
        "novelty_passed": mean_std([r["novelty"] for r in passed])[0] if passed else None,
        "no_code": sum(r["no_code"] for r in rows),
        "reference_baselines": sum(r["reference_baseline"] for r in rows),
    }


TRIAL_METRICS = ("pass_at_1", "novelty", "creativity", "novelty_passed")
"""Per-trial cells averaged over trials (with a sample std when there are several)."""


def trial_cells(records: list[EpisodeRecord]) -> dict[int, dict[str, Any]]:
    """`_cells` of one subset's records per trial (the per-seed scores App. E.1 pairs)."""
    by_trial: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_trial[record.trial] += _rows(record)
    return {trial: _cells(rows) for trial, rows in sorted(by_trial.items())}


def _subset_summary(records: list[EpisodeRecord]) -> dict[str, Any]:
    """Table 3 cells for one subset: row means per trial; the mean over trials, and with
    several trials their sample standard deviation (`metrics.mean_std`)."""
    from forkingpaths.benchmarks.creativebench.metrics import mean_std

    per_trial = list(trial_cells(records).values())
    out: dict[str, Any] = {}
    for key in TRIAL_METRICS:
        values = [c[key] for c in per_trial if c[key] is not None]
        mean, std = mean_std(values)
        out[key] = mean if values else None
        if len(values) > 1:
            out[f"{key}_std"] = std
    out["no_code"] = sum(c["no_code"] for c in per_trial)
    out["reference_baselines"] = sum(c["reference_baselines"] for c in per_trial)
    out["rows"] = sum(len(_rows(r)) for r in records)
    out["trials"] = len(per_trial)
    return out


async def evaluate_prompt(
    benchmark: CreativeBenchmark,
    model: ChatModel,
    instances: list[Instance],
    instruction: str,
    judge: ChatModel | None = None,
) -> list[float]:
    """Fitness of a solver instruction for the evolutionary baselines: per training instance,
    the episode's creativity (mean Quality x Novelty; 0 when nothing was scored), computed with
    the benchmark's own protocol."""
    from forkingpaths.benchmarks.creativebench.agents.solver import CreativeSolver

    scores: list[float] = []
    for instance in instances:
        agent = CreativeSolver(model, instruction=instruction)
        seed = benchmark.episode_seed(instance, 0, 0)
        agent.reset(instance, seed)
        record = EpisodeRecord(
            run_id="evolve",
            benchmark=benchmark.id,
            split=instance.split,
            instance_id=instance.id,
            seed=seed,
            agent="prompt",
        )
        roles = {"judge": judge} if judge is not None else {}
        await benchmark.run_episode(instance, agent, record, roles)
        creativity = benchmark.episode_metrics(record)["creativity"]
        scores.append(float(creativity or 0.0))
    return scores
