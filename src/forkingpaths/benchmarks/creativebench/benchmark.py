"""The creativebench-v1 benchmark: generate, execute in the sandbox, score quality x novelty."""

from __future__ import annotations

import copy
import logging
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, fields, is_dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from forkingpaths.core.benchmark import AgentSpec, Benchmark, Instance, QuickConfig
from forkingpaths.core.env import Env, Observation, Step
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, StepRecord

if TYPE_CHECKING:
    from forkingpaths.benchmarks.creativebench.novelty import EmbeddingBackend
    from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
    from forkingpaths.benchmarks.creativebench.tasks import ComboTask, ExploreTask
    from forkingpaths.core.agent import Agent
    from forkingpaths.models.base import ChatModel

log = logging.getLogger(__name__)

_PKG = "forkingpaths.benchmarks.creativebench"
SUBSETS = ("combo", "explore")
DEFAULT_EMBEDDING = "ast-tfidf"
DEFAULT_TIMEOUT_S = 10.0


class CreativeBenchmark(Benchmark):
    """CreativeBench (creativebench.txt): code creativity as Quality x Novelty.

    Splits: `combo` (one episode per Combo problem: the solution must pass the demo and full
    tests; novelty = mean N(solution, source) over the k source solutions, Eq. 5) and `explore`
    (one episode per base problem, all its levels in order: each level's solution must pass the
    tests and respect every stacked constraint; novelty = N(solution, the same run's level-0
    solution), Eq. 4 — the reference level-0 solution stands in, flagged, when the run's own
    failed); `all` = both. N(u, v) = (1 - cos(e_u, e_v)) + (1 - Jaccard of character 4-grams)
    (Eq. 3) with the `embedding` backend (default `ast-tfidf`, offline; `none` keeps the 4-gram
    term alone; `openai-compat/<model>` with `embedding_base_url` for CodeXEmbed on vLLM/TEI).
    Quality = pass@1 (sandbox verdict PASSED) and, for Explore levels >= 1, no constraint
    violated: the static AST checker first, then the `judge` role (App. B.1) for what it cannot
    see. Creativity = mean of Quality x Novelty (Eq. 2). Level 0 rows count for Pass@1 but not for
    Novelty or Creativity (they are the baseline). Options: `tasks` (a JSONL file in the paper's
    release format replacing the built-in set of that subset), `embedding`,
    `embedding_base_url`, `timeout` (sandbox seconds per execution, default 10), `workers`
    (sandbox pool size).
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
    scripted_policies = MappingProxyType(
        {
            "creative-solver": f"{_PKG}.agents.scripted:CreativeSolverPolicy",
            "constraint-judge": f"{_PKG}.judge_scripted:ConstraintJudgePolicy",
            "creativebench-pipeline": f"{_PKG}.pipeline_scripted:PipelinePolicy",
        }
    )
    estimate_policy = "creative-solver"
    model_roles = MappingProxyType(
        {"judge": "constraint-compliance judge for Explore levels (App. B.1)"}
    )
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

    def make_env(self, instance: Instance) -> Env:
        """A text view of the task (for the contract and Gymnasium): one action = one program,
        checked only for being Python; execution and scoring belong to `run_episode`."""
        return _TaskEnv(self._task_view(instance))

    def max_steps(self, instance: Instance) -> int:
        return int(instance.params.get("levels", 1))

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
        judge = roles.get("judge")
        record.initial_info = {
            "subset": instance.params["subset"],
            "embedding": str(self.options.get("embedding", DEFAULT_EMBEDDING)),
            "judge": getattr(judge, "name", None),
        }
        if instance.params["subset"] == "combo":
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

    async def _combo_episode(self, task: ComboTask, agent: Agent, record: EpisodeRecord) -> None:
        from forkingpaths.benchmarks.creativebench.novelty import combo_novelty

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
            "quality": 1.0 if passed else 0.0,
        }
        if task.source_solutions:
            score = await combo_novelty(code, task.source_solutions, self.embedding_backend())
            info.update(_novelty_info(score))
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
            check_constraints,
            judge_constraints,
        )
        from forkingpaths.benchmarks.creativebench.novelty import explore_novelty

        sandbox = await self.sandbox()
        baseline: str | None = None
        for index, task in enumerate(levels):
            view = {"subset": "explore", "task": _as_dict(task)}
            observation, decision = await self._solve(agent, view, record)
            code = decision.action
            result = await sandbox.run(code, task.test_code, timeout=self.timeout)
            passed = result.verdict == "PASSED"
            violations = check_constraints(code, task.constraints_detail) if task.level else []
            info: dict[str, Any] = {
                "level": task.level,
                "verdict": result.verdict,
                "isolation": result.isolation,
                "detail": result.detail,
                "duration_s": result.duration_s,
                "violations": [asdict(v) for v in violations],
            }
            calls = list(decision.calls)
            compliant: bool | None = True
            if task.level and passed and not violations and judge is not None:
                verdict = await judge_constraints(judge, task, code)
                calls += verdict.calls
                compliant = verdict.compliant
                info["judge"] = {"compliant": verdict.compliant, "reasons": verdict.reasons}
            info["quality"] = 1.0 if passed and not violations and compliant is not False else 0.0
            if task.level == 0:
                baseline = code if passed else None
                info["baseline_solution"] = True
            else:
                reference = baseline is None
                base = levels[0].reference_solution if reference else baseline
                score = await explore_novelty(code, base, self.embedding_backend())
                info.update(_novelty_info(score))
                info["baseline"] = "reference-level0" if reference else "run-level0"
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
        scored = [r for r in rows if r["novelty"] is not None]
        return {
            "subset": record.initial_info.get("subset"),
            "pass_at_1": statistics.fmean(r["quality"] for r in rows) if rows else None,
            "novelty": statistics.fmean(r["novelty"] for r in scored) if scored else None,
            "creativity": statistics.fmean(r["quality"] * r["novelty"] for r in scored)
            if scored
            else None,
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


def _rows(record: EpisodeRecord) -> list[dict[str, Any]]:
    """Per-row quality/novelty: Combo one row; Explore one per level (level 0: no novelty)."""
    return [
        {
            "quality": float(s.info.get("quality", 0.0)),
            "novelty": s.info.get("novelty"),
            "verdict": s.info.get("verdict"),
        }
        for s in record.steps
        if "verdict" in s.info
    ]


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for value in values:
        out[str(value)] += 1
    return out


def _subset_summary(records: list[EpisodeRecord]) -> dict[str, Any]:
    """Table 3 cells for one subset: row means; with several trials, mean and std over trials."""
    by_trial: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_trial[record.trial] += _rows(record)

    def cells(rows: list[dict[str, Any]]) -> dict[str, float | None]:
        scored = [r for r in rows if r["novelty"] is not None]
        return {
            "pass_at_1": statistics.fmean(r["quality"] for r in rows) if rows else None,
            "novelty": statistics.fmean(r["novelty"] for r in scored) if scored else None,
            "creativity": statistics.fmean(r["quality"] * r["novelty"] for r in scored)
            if scored
            else None,
        }

    per_trial = [cells(rows) for _, rows in sorted(by_trial.items())]
    out: dict[str, Any] = {}
    for key in ("pass_at_1", "novelty", "creativity"):
        values = [c[key] for c in per_trial if c[key] is not None]
        out[key] = statistics.fmean(values) if values else None
        if len(values) > 1:
            out[f"{key}_std"] = statistics.stdev(values)
    out["rows"] = sum(len(rows) for rows in by_trial.values())
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
        record = EpisodeRecord(
            run_id="evolve",
            benchmark=benchmark.id,
            split=instance.split,
            instance_id=instance.id,
            seed=0,
            agent="prompt",
        )
        roles = {"judge": judge} if judge is not None else {}
        await benchmark.run_episode(instance, agent, record, roles)
        creativity = benchmark.episode_metrics(record)["creativity"]
        scores.append(float(creativity or 0.0))
    return scores
