"""Explore construction (§3.3, Algorithm 2; App. K, L): stack negative constraints level by
level, the solver refining the base solution with sandbox, checker and judge feedback (Eq. 1)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.creativebench import pipeline_prompts as prompts
from forkingpaths.benchmarks.creativebench.constraints import (
    JudgeResult,
    check_constraints,
    judge_constraints,
)
from forkingpaths.benchmarks.creativebench.construction.harness import error_text, has_passed
from forkingpaths.benchmarks.creativebench.construction.replies import (
    ask,
    first_code,
    read_constraint,
)
from forkingpaths.benchmarks.creativebench.construction.sources import (
    ExploreSeed,
    default_explore_seeds,
    seeds_from_tasks,
)
from forkingpaths.benchmarks.creativebench.construction.workdir import (
    LoggedModel,
    PipelineDir,
    PipelineReport,
    build_model,
    check_count,
    run_all,
)
from forkingpaths.benchmarks.creativebench.sandbox import Sandbox
from forkingpaths.benchmarks.creativebench.tasks import Constraint, ExploreTask, load_explore
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.factory import check_model_access, close_models
from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)


def constraint_row(constraint: Constraint) -> dict[str, Any]:
    """The release form of one constraint (`check` only when it has rules)."""
    row: dict[str, Any] = {
        "constraint": constraint.constraint,
        "blocked_technique": constraint.blocked_technique,
        "expected_impact": constraint.expected_impact,
        "verification_hint": constraint.verification_hint,
    }
    if constraint.check:
        row["check"] = {key: list(names) for key, names in constraint.check.items()}
    return row


def constraint_from_row(row: Mapping[str, Any]) -> Constraint:
    check = {key: tuple(names) for key, names in (row.get("check") or {}).items()}
    return Constraint(
        constraint=row["constraint"],
        blocked_technique=row["blocked_technique"],
        expected_impact=row["expected_impact"],
        verification_hint=row["verification_hint"],
        check=check,
    )


def explore_task(
    seed: ExploreSeed, level: int, constraints: Sequence[Constraint], solution: str
) -> ExploreTask:
    """The ExploreTask of `seed` at `level` under `constraints`, with `solution` as reference."""
    return ExploreTask(
        id=f"{seed.problem_id}-L{level}",
        problem_id=seed.problem_id,
        level=level,
        language=seed.language,
        difficulty=seed.difficulty,
        question=seed.question,
        function_signature=seed.function_signature,
        constraints=tuple(c.constraint for c in constraints),
        constraints_detail=tuple(constraints),
        test_code=seed.test_code,
        reference_solution=solution,
        domain=seed.domain,
    )


def explore_row(task: ExploreTask) -> dict[str, Any]:
    """The release row of an ExploreTask."""
    return {
        "id": task.id,
        "problem_id": task.problem_id,
        "level": task.level,
        "language": task.language,
        "difficulty": task.difficulty,
        "question": task.question,
        "function_signature": task.function_signature,
        "constraints": list(task.constraints),
        "constraints_detail": [constraint_row(c) for c in task.constraints_detail],
        "test_code": task.test_code,
        "reference_solution": task.reference_solution,
        "domain": task.domain,
    }


def _constraint_lines(constraints: Sequence[Constraint]) -> str:
    return (
        "\n".join(
            prompts.CONSTRAINT_LINE.substitute(
                number=number, constraint=c.constraint, blocked_technique=c.blocked_technique
            )
            for number, c in enumerate(constraints, start=1)
        )
        or prompts.NONE_YET
    )


class _ExploreBuilder:
    """Algorithm 2 for one directory: the level loop of each seed, committed level by level."""

    def __init__(
        self,
        generator: ChatModel,
        solver: ChatModel,
        judge: ChatModel,
        sandbox: Sandbox,
        directory: PipelineDir,
        *,
        max_levels: int,
        attempts: int,
    ) -> None:
        self.generator, self.solver, self.judge = generator, solver, judge
        self.sandbox, self.dir = sandbox, directory
        self.max_levels, self.attempts = max_levels, attempts

    def _finish(self, seed: ExploreSeed, reason: str, levels: int, **detail: Any) -> None:
        log.info("%s: done after level %d (%s)", seed.problem_id, levels - 1, reason)
        self.dir.commit(
            {
                "item": seed.problem_id,
                "status": "done",
                "reason": reason,
                "levels": levels,
                "detail": detail,
            }
        )

    def _keep(self, task: ExploreTask, **detail: Any) -> None:
        log.info("%s: level %d kept", task.problem_id, task.level)
        self.dir.commit(
            {
                "item": task.id,
                "problem_id": task.problem_id,
                "level": task.level,
                "status": "kept",
                "detail": detail,
            },
            explore_row(task),
        )

    async def run(self, seed: ExploreSeed) -> None:
        rows = sorted(
            (r for r in self.dir.rows if r.get("problem_id") == seed.problem_id),
            key=lambda r: r["level"],
        )
        if not rows:
            result = await self.sandbox.run(seed.base_solution, seed.test_code)
            if not has_passed(result):
                self._finish(
                    seed, "base_failed", 0, verdict=str(result.verdict), error=error_text(result)
                )
                return
            self._keep(explore_task(seed, 0, (), seed.base_solution))
            constraints: list[Constraint] = []
            current = seed.base_solution
        else:
            constraints = [constraint_from_row(c) for c in rows[-1]["constraints_detail"]]
            current = rows[-1]["reference_solution"]
        for level in range(len(constraints) + 1, self.max_levels + 1):
            item = f"{seed.problem_id}-L{level}"
            new = await self._propose(item, seed, constraints, current)
            if new is None:
                self._finish(seed, "constraint_unreadable", level)
                return
            stacked = [*constraints, new]
            solution, feedback = await self._refine(item, seed, level, stacked)
            if solution is None:
                self._finish(
                    seed, "unsolved_level", level, constraint=new.constraint, feedback=feedback
                )
                return
            self._keep(explore_task(seed, level, stacked, solution), attempts=len(feedback) + 1)
            constraints, current = stacked, solution
        self._finish(seed, "max_levels", self.max_levels + 1)

    # The generator analyses the current solution and adds one negative constraint.
    async def _propose(
        self, item: str, seed: ExploreSeed, constraints: list[Constraint], current: str
    ) -> Constraint | None:
        messages = [
            Message(role="system", content=prompts.CONSTRAIN_SYSTEM),
            Message(
                role="user",
                content=prompts.CONSTRAIN_USER.substitute(
                    question=seed.question,
                    signature=seed.function_signature,
                    language=seed.language,
                    code=current.strip("\n"),
                    constraints=_constraint_lines(constraints),
                ),
            ),
        ]
        new, reason = await ask(
            self.generator,
            messages,
            lambda text: read_constraint(text, constraints),
            directory=self.dir,
            item=item,
            purpose="constrain",
        )
        if new is None:
            log.warning("%s: no usable constraint (%s)", item, reason)
        return new

    # Eq. 1: refine from the base solution with sandbox, static and judge feedback.
    async def _refine(
        self, item: str, seed: ExploreSeed, level: int, stacked: list[Constraint]
    ) -> tuple[str | None, list[str]]:
        current = seed.base_solution
        feedback: list[str] = []
        judge = LoggedModel(self.judge, self.dir, item, "constraint-judge")
        for attempt in range(1, self.attempts + 1):
            shown_attempt = (
                prompts.ATTEMPT_BLOCK.substitute(language=seed.language, code=current.strip("\n"))
                if attempt > 1
                else prompts.NONE_YET
            )
            history = "\n".join(
                prompts.FEEDBACK_LINE.substitute(attempt=n, feedback=f)
                for n, f in enumerate(feedback, start=1)
            )
            messages = [
                Message(role="system", content=prompts.REFINE_SYSTEM),
                Message(
                    role="user",
                    content=prompts.REFINE_USER.substitute(
                        question=seed.question,
                        signature=seed.function_signature,
                        constraints=_constraint_lines(stacked),
                        language=seed.language,
                        reference=seed.base_solution.strip("\n"),
                        attempt=shown_attempt,
                        feedback=history or prompts.NONE_YET,
                    ),
                ),
            ]
            completion = await self.solver.complete(messages, ModelParams())
            self.dir.record_call(item, completion, "refine")
            code = first_code(completion.text, seed.language)
            if code is None:
                feedback.append(prompts.FEEDBACK_NO_CODE)
                continue
            problems: list[str] = []
            result = await self.sandbox.run(code, seed.test_code)
            if not has_passed(result):
                problems.append(
                    prompts.FEEDBACK_SANDBOX.substitute(
                        verdict=str(result.verdict), detail=error_text(result)
                    )
                )
            violations = check_constraints(code, stacked)
            if violations:
                problems.append(
                    prompts.FEEDBACK_STATIC.substitute(
                        violations="; ".join(
                            f"line {v.line}: {v.detail}" if v.line else v.detail for v in violations
                        )
                    )
                )
            task = explore_task(seed, level, stacked, seed.base_solution)
            judged = await judge_constraints(judge, task, code)
            problems += _judge_feedback(judged)
            if not problems:
                return code, feedback
            feedback.append(" | ".join(problems))
            current = code
        return None, feedback


def _judge_feedback(judged: JudgeResult) -> list[str]:
    """Feedback lines of a judge verdict: none when compliant."""
    if judged.compliant is True:
        return []
    if judged.compliant is None:
        return [prompts.FEEDBACK_UNJUDGED]
    return [prompts.FEEDBACK_JUDGE.substitute(reasons=judged.reasons or "(no reason given)")]


async def build_explore(
    generator: ChatModel,
    solver: ChatModel,
    judge: ChatModel,
    sandbox: Sandbox,
    seeds: list[ExploreSeed] | None,
    out_dir: Path,
    *,
    max_levels: int = 7,
    attempts: int = 3,
    concurrency: int = 4,
) -> PipelineReport:
    """Algorithm 2: constraint stacking by self-play, seed by seed.

    Level 0 is the base solution verified against the tests. Each further level: the generator
    reads the current solution and adds ONE negative constraint (stacked on the earlier ones);
    the solver adapts the base solution up to `attempts` times, each attempt run in the sandbox,
    checked by the static checker and by the judge, with their feedback (Eq. 1). A level is kept
    when an attempt passes all three; the loop stops at the first unsolved level or after
    `max_levels` constraints. Rows go to `out_dir/explore.jsonl` with the passing solution as
    `reference_solution`; `seeds=None` uses the built-in Explore data's level-0 rows. Re-running
    on the same directory continues each seed from its last kept level.
    """
    check_count("max_levels", max_levels, 1)
    check_count("attempts", attempts, 1)
    check_count("concurrency", concurrency, 1)
    seeds = default_explore_seeds() if seeds is None else list(seeds)
    ids = Counter(s.problem_id for s in seeds)
    repeated = sorted(pid for pid, count in ids.items() if count > 1)
    if repeated:
        raise ConfigError(f"seeds: problem ids must be unique, repeated: {', '.join(repeated)}")
    directory = PipelineDir(
        out_dir,
        "explore",
        {
            "pipeline": "explore",
            "generator": generator.name,
            "solver": solver.name,
            "judge": judge.name,
            "max_levels": max_levels,
            "attempts": attempts,
        },
    )
    directory.open()
    done = {e["item"] for e in directory.state if e.get("status") == "done"}
    todo = [s for s in seeds if s.problem_id not in done]
    resumed = len(seeds) - len(todo)
    if resumed:
        log.info("explore: %d of %d seeds already done, skipped", resumed, len(seeds))
    builder = _ExploreBuilder(
        generator, solver, judge, sandbox, directory, max_levels=max_levels, attempts=attempts
    )
    semaphore = asyncio.Semaphore(concurrency)

    async def one(seed: ExploreSeed) -> None:
        async with semaphore:
            await builder.run(seed)

    await run_all([one(seed) for seed in todo])
    report = directory.report(resumed)
    log.info("explore: %d levels kept, seeds stopped %s", report.kept, report.stopped)
    return report


async def run_explore_pipeline(
    generator: str,
    out_dir: Path,
    *,
    solver: str | None = None,
    judge: str | None = None,
    seeds: Path | None = None,
    problems: Sequence[str] | None = None,
    max_levels: int = 7,
    attempts: int = 3,
    generator_options: ModelOptions | None = None,
    solver_options: ModelOptions | None = None,
    judge_options: ModelOptions | None = None,
    runtime: ModelRuntime | None = None,
    sandbox_options: Mapping[str, Any] | None = None,
    concurrency: int = 4,
) -> PipelineReport:
    """`build_explore` from model ids; a role without a model id (`solver`, `judge`) uses the
    generator's model; each model id gets its own options.

    `seeds`: an Explore JSONL (`load_explore`; any bad row refuses the run) whose level-0 rows
    are the seeds, else the built-in data; `problems` keeps only those problem ids.
    """
    if seeds is not None:
        tasks, errors = load_explore(seeds)
        if errors:
            raise InvalidFile("; ".join(str(e) for e in errors))
        chosen = seeds_from_tasks(tasks)
    else:
        chosen = default_explore_seeds()
    if problems is not None:
        wanted = set(problems)
        unknown = sorted(wanted - {s.problem_id for s in chosen})
        if unknown:
            raise ConfigError(
                f"problems: unknown problem ids {', '.join(unknown)}; available:"
                f" {', '.join(sorted(s.problem_id for s in chosen))}"
            )
        chosen = [s for s in chosen if s.problem_id in wanted]
    # Refuse every unusable model id before any client is opened.
    roles = [(generator, generator_options), (solver, solver_options), (judge, judge_options)]
    for model_id, options in roles:
        if model_id is not None:
            check_model_access(model_id, options)
    runtime = runtime or ModelRuntime()
    generator_model = build_model(generator, generator_options, runtime)
    solver_model = (
        build_model(solver, solver_options, runtime) if solver is not None else generator_model
    )
    judge_model = (
        build_model(judge, judge_options, runtime) if judge is not None else generator_model
    )
    try:
        async with Sandbox(**dict(sandbox_options or {})) as sandbox:
            return await build_explore(
                generator_model,
                solver_model,
                judge_model,
                sandbox,
                chosen,
                out_dir,
                max_levels=max_levels,
                attempts=attempts,
                concurrency=concurrency,
            )
    finally:
        await close_models([generator_model, solver_model, judge_model])
