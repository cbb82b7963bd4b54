"""Evolutionary baselines (§4.1, App. E.3): island search and GEPA over the solver instruction.

The paper applies AlphaEvolve (through OpenEvolve) and GEPA to the solver *prompt*, not to
programs, because evolving a program per task is too costly at benchmark scale. Both searches
here do the same: a candidate is the instruction part of the solver prompt
(`agents.solver_prompts`), its fitness is the mean creativity (Quality x Novelty, §4.2) of the
solutions it yields on a training split, computed by the `evaluate` coroutine the caller
supplies, and the best instruction is written as JSON
`{"prompt", "method", "score", "history", ...}` for the `prompt` solver to read.

`evaluate(prompt)` returns the fitness, or the per-task creativity list aligned with `tasks`
(its mean is the fitness; GEPA's per-instance Pareto front uses the list). Each distinct prompt
is evaluated once per search. Mutation and reflection calls go to `model` (the `mutator` role
of `creativebench evolve --role mutator=M`, the solver's model when not given); every call is
kept as a ModelCallRecord (`purpose="mutate"` or `"reflect"`).

What the island search is NOT (it is a compact stand-in for OpenEvolve, not a port). OpenEvolve
has, and `island_search` lacks:
- an archive: OpenEvolve keeps a MAP-Elites grid of feature cells plus an elite archive across
  islands; here each island is a plain list truncated to its best `population` members;
- elite / explore / exploit ratios (`elite_selection_ratio`, `exploration_ratio`,
  `exploitation_ratio`) choosing where a parent and its inspirations come from; here a parent
  is a tournament of two within its island, and its context is the island's other members;
- deduplication beyond exact text: OpenEvolve rejects near-duplicates by code similarity; here
  only a child identical to a member (or empty) is dropped;
- diff evolution: OpenEvolve asks for SEARCH/REPLACE diffs of the parent (`diff_based_evolution`);
  here the model rewrites the whole instruction every time.
Migration (a ring, every `migration_interval` generations) and elitism per island are the parts
it shares with OpenEvolve.

Budgets default to laptop scale (the paper's: OpenEvolve with 5 islands, population 1000,
10000 iterations; GEPA with 150 metric calls).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

from forkingpaths.benchmarks.creativebench import evolve_prompts as prompts
from forkingpaths.benchmarks.creativebench.agents.solver import (
    default_instruction,
    extract_code,
    task_subset,
    task_value,
)
from forkingpaths.core.chat import ChatModel, Message, ModelParams
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelCallRecord

Evaluate = Callable[[str], Awaitable[float | Sequence[float]]]
"""Scores one instruction on the training tasks: the mean creativity, or one value per task."""

CREATIVITY_MAX = 3.0
"""Upper bound of per-task creativity (Quality <= 1, Novelty <= 3; §4.2); GEPA's default
`perfect_score` (see `gepa_search`)."""

MUTATION_PARAMS = ModelParams(temperature=0.7)
"""Mutation sampling: OpenEvolve's default temperature, so children of one parent differ."""

GEPA_BUDGET = 30
"""Default GEPA metric-call budget (per-task scores read; the paper used 150)."""

GEPA_COMPONENT = "instruction"
"""The one text component GEPA evolves."""

TOURNAMENT = 2
"""Parents are picked by tournament among this many island members drawn at random."""

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Candidate:
    """One instruction of an island search with its fitness."""

    id: str
    prompt: str
    score: float
    island: int
    generation: int
    parent: str | None = None


@dataclass
class EvolutionResult:
    """The outcome of a search: the best instruction, its fitness, and how it was found."""

    prompt: str
    """The best instruction found (the seed when nothing beat it)."""
    method: str
    """`island` or `gepa`."""
    score: float
    """Its fitness on the training tasks."""
    history: list[dict[str, Any]]
    """Events in order: evaluations, migrations, per-generation bests (see each search)."""
    seed_prompt: str = ""
    """The instruction the search started from."""
    seed_score: float = 0.0
    """Its fitness."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The search's parameters."""
    calls: list[ModelCallRecord] = field(default_factory=list)
    """Every mutation or reflection call."""

    def to_json(self) -> dict[str, Any]:
        """The prompt file's content (`solver.read_prompt_file` reads `prompt`)."""
        return {
            "prompt": self.prompt,
            "method": self.method,
            "score": self.score,
            "seed_prompt": self.seed_prompt,
            "seed_score": self.seed_score,
            "settings": self.settings,
            "usage": {
                "calls": len(self.calls),
                "prompt_tokens": sum(c.prompt_tokens for c in self.calls),
                "completion_tokens": sum(c.completion_tokens for c in self.calls),
                "cost_usd": sum(c.cost_usd for c in self.calls),
            },
            "history": self.history,
            "calls": [c.model_dump(mode="json") for c in self.calls],
        }

    def write(self, path: str | Path) -> Path:
        """Write `to_json()` to `path` (atomically: a reader never sees half a file)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        partial.replace(target)
        return target


# ---- shared pieces ----


class _Fitness:
    """Evaluates each distinct prompt once (concurrent requests for one prompt share the
    evaluation) and checks what `evaluate` returned; `on_new` hears of each new prompt."""

    def __init__(
        self,
        evaluate: Evaluate,
        n_tasks: int,
        on_new: Callable[[str, list[float]], None] | None = None,
    ) -> None:
        self.evaluate = evaluate
        self.n_tasks = n_tasks
        self.on_new = on_new
        self.per_task: dict[str, list[float]] = {}
        self._pending: dict[str, asyncio.Future[Any]] = {}

    async def __call__(self, prompt: str) -> float:
        scores = await self.scores(prompt)
        return sum(scores) / len(scores)

    async def scores(self, prompt: str) -> list[float]:
        """Per-task scores of `prompt` (a fitness alone counts for every task)."""
        if prompt in self.per_task:
            return self.per_task[prompt]
        pending = self._pending.get(prompt)
        if pending is None:
            pending = self._pending[prompt] = asyncio.ensure_future(self.evaluate(prompt))
        value = await asyncio.shield(pending)
        if prompt not in self.per_task:
            self.per_task[prompt] = self._check(value)
            del self._pending[prompt]
            if self.on_new is not None:
                self.on_new(prompt, self.per_task[prompt])
        return self.per_task[prompt]

    def _check(self, value: Any) -> list[float]:
        if isinstance(value, int | float) and not isinstance(value, bool):
            values = [float(value)] * self.n_tasks
        elif isinstance(value, Sequence) and not isinstance(value, str):
            values = [float(v) for v in value]
            if len(values) != self.n_tasks:
                raise ConfigError(
                    f"evaluate: returned {len(values)} per-task scores for {self.n_tasks} tasks; "
                    "return one float or one score per task"
                )
        else:
            raise ConfigError(
                f"evaluate: expected a float or a list of per-task floats, got {shown(value)}"
            )
        if not all(math.isfinite(v) for v in values):
            raise ConfigError(f"evaluate: returned a non-finite score: {shown(values)}")
        return values


def _check_tasks(tasks: Sequence[Any]) -> list[Any]:
    listed = list(tasks)
    if not listed:
        raise ConfigError("tasks: the training split is empty; give at least one task")
    return listed


def _check_count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name}: expected an integer >= {minimum}, got {shown(value)}")
    return value


def _seed_prompt(tasks: list[Any], seed_prompt: str | None) -> str:
    if seed_prompt is not None and seed_prompt.strip():
        return seed_prompt.strip()
    return default_instruction(task_subset(tasks[0]))


def task_summary(task: Any, limit: int = prompts.TASK_CHARS) -> str:
    """One line on a training task: its question (cut to `limit`) and any constraints."""
    question = " ".join(str(task_value(task, "question", "")).split())
    if len(question) > limit:
        question = question[: limit - 3] + "..."
    constraints = [str(c) for c in task_value(task, "constraints", ()) or ()]
    if constraints:
        question += prompts.CONSTRAINTS_LINE.substitute(constraints="; ".join(constraints))
    return question


def _context(tasks: list[Any]) -> str:
    return prompts.CONTEXT.substitute(subset_text=prompts.SUBSET_TEXT[task_subset(tasks[0])])


def read_instruction(reply: str) -> str:
    """The instruction of a mutation or reflection reply: the text between the
    `<new_instruction>` tags, else the first fenced block, else the whole reply ("" if none)."""
    _, found, rest = reply.partition(prompts.NEW_OPEN)
    if found:
        inner, _, _ = rest.partition(prompts.NEW_CLOSE)
        return inner.strip()
    return extract_code(reply).strip()


def _score_text(score: float) -> str:
    return f"{score:.3f}"


# ---- island search (AlphaEvolve / OpenEvolve style) ----


async def island_search(
    model: ChatModel,
    tasks: Sequence[Any],
    evaluate: Evaluate,
    *,
    islands: int = 2,
    population: int = 4,
    generations: int = 3,
    migration_interval: int = 2,
    seed: int = 0,
    seed_prompt: str | None = None,
    params: ModelParams | None = None,
    out: str | Path | None = None,
) -> EvolutionResult:
    """Island-model evolution of the solver instruction, compactly after AlphaEvolve/OpenEvolve.

    Every island starts from `seed_prompt` (the subset's default instruction when None). Each
    generation, each island breeds `population` children: a parent is picked by a tournament of
    two, and the model rewrites it, shown its fitness, the island's other members with theirs
    and a sample of the tasks. A child identical to a member, or an empty rewrite, is dropped.
    The island then keeps its best `population` members among old and new (elitism: an
    island's best never gets worse). Every `migration_interval` generations each island's best
    is copied to the next island of the ring, where it stays if it ranks among the best
    `population` there. `seed` drives every random choice (a private RNG).

    History events: `evaluated` (generation, island, candidate, parent, score, prompt),
    `dropped` (why), `migrated` (from, to, candidate, kept), `generation` (best score so far
    and each island's best).
    """
    tasks = _check_tasks(tasks)
    _check_count("islands", islands, 1)
    _check_count("population", population, 1)
    _check_count("generations", generations, 0)
    _check_count("migration_interval", migration_interval, 1)
    rng = random.Random(seed)
    fitness = _Fitness(evaluate, len(tasks))
    params = params or MUTATION_PARAMS
    start = _seed_prompt(tasks, seed_prompt)
    history: list[dict[str, Any]] = []
    calls: list[ModelCallRecord] = []
    counter = iter(range(1, 1 << 62))

    seed_score = await fitness(start)
    root = Candidate("c0", start, seed_score, island=0, generation=0)
    history.append(_evaluated(root))
    pools = [[Candidate(root.id, start, seed_score, i, 0)] for i in range(islands)]
    best = root
    sample = _task_sample(tasks, rng)
    context = _context(tasks)

    for generation in range(1, generations + 1):
        # Breed every island's children at once: mutations, then evaluations, run concurrently.
        plans: list[tuple[int, Candidate, list[Message]]] = []
        for index, pool in enumerate(pools):
            for _ in range(population):
                parent = _tournament(pool, rng)
                plans.append((index, parent, _mutation_messages(parent, pool, sample, context)))
        replies = await asyncio.gather(
            *(
                model.complete(messages, params.model_copy(update={"seed": rng.randrange(2**31)}))
                for _, _, messages in plans
            )
        )
        children: list[tuple[int, Candidate, str]] = []
        for (index, parent, _), reply in zip(plans, replies, strict=True):
            calls.append(ModelCallRecord.from_completion(reply, purpose="mutate"))
            text = read_instruction(reply.text)
            known = {c.prompt for c in pools[index]} | {t for i, _, t in children if i == index}
            if not text or text in known:
                history.append(
                    {
                        "event": "dropped",
                        "generation": generation,
                        "island": index,
                        "parent": parent.id,
                        "reason": "empty rewrite" if not text else "duplicate of a member",
                    }
                )
                continue
            children.append((index, parent, text))
        scores = await asyncio.gather(*(fitness(text) for _, _, text in children))
        for (index, parent, text), score in zip(children, scores, strict=True):
            child = Candidate(f"c{next(counter)}", text, score, index, generation, parent.id)
            history.append(_evaluated(child))
            pools[index].append(child)
            if child.score > best.score:
                best = child
        pools = [_survivors(pool, population) for pool in pools]
        if islands > 1 and generation % migration_interval == 0:
            pools = _migrate(pools, population, generation, history)
        history.append(
            {
                "event": "generation",
                "generation": generation,
                "best_score": best.score,
                "island_best": [pool[0].score for pool in pools],
            }
        )

    result = EvolutionResult(
        prompt=best.prompt,
        method="island",
        score=best.score,
        history=history,
        seed_prompt=start,
        seed_score=seed_score,
        settings={
            "islands": islands,
            "population": population,
            "generations": generations,
            "migration_interval": migration_interval,
            "seed": seed,
            "tasks": len(tasks),
            "model": model.name,
        },
        calls=calls,
    )
    if out is not None:
        result.write(out)
    return result


def _evaluated(candidate: Candidate) -> dict[str, Any]:
    return {
        "event": "evaluated",
        "generation": candidate.generation,
        "island": candidate.island,
        "candidate": candidate.id,
        "parent": candidate.parent,
        "score": candidate.score,
        "prompt": candidate.prompt,
    }


def _task_sample(tasks: list[Any], rng: random.Random, size: int = 3) -> list[Any]:
    """A few training tasks shown to the mutator (fixed for the run, so prompts stay
    comparable across generations)."""
    return tasks if len(tasks) <= size else rng.sample(tasks, size)


def _tournament(pool: list[Candidate], rng: random.Random) -> Candidate:
    drawn = [pool[rng.randrange(len(pool))] for _ in range(min(TOURNAMENT, len(pool)))]
    return max(drawn, key=lambda c: c.score)


def _ranked(pool: list[Candidate]) -> list[Candidate]:
    # Ties keep the older candidate first (stable sort on insertion order).
    return sorted(pool, key=lambda c: -c.score)


def _survivors(pool: list[Candidate], population: int) -> list[Candidate]:
    return _ranked(pool)[:population]


def _migrate(
    pools: list[list[Candidate]], population: int, generation: int, history: list[dict[str, Any]]
) -> list[list[Candidate]]:
    """Ring migration: island i's best joins island i+1 (bests taken before anyone moves)."""
    bests = [pool[0] for pool in pools]
    moved = [list(pool) for pool in pools]
    for index, migrant in enumerate(bests):
        target = (index + 1) % len(pools)
        if any(c.prompt == migrant.prompt for c in moved[target]):
            kept = True  # already there
        else:
            moved[target] = _survivors(
                [
                    *moved[target],
                    Candidate(
                        migrant.id,
                        migrant.prompt,
                        migrant.score,
                        target,
                        generation,
                        migrant.parent,
                    ),
                ],
                population,
            )
            kept = any(c.prompt == migrant.prompt for c in moved[target])
        history.append(
            {
                "event": "migrated",
                "generation": generation,
                "from": index,
                "to": target,
                "candidate": migrant.id,
                "kept": kept,
            }
        )
    return moved


def _mutation_messages(
    parent: Candidate, pool: list[Candidate], sample: list[Any], context: str
) -> list[Message]:
    others = [c for c in _ranked(pool) if c.prompt != parent.prompt][:3]
    other_lines = "\n".join(
        prompts.OTHER_LINE.substitute(
            score=_score_text(c.score), text=_clip(" ".join(c.prompt.split()), prompts.OTHER_CHARS)
        )
        for c in others
    )
    task_lines = "\n".join(
        prompts.TASK_LINE.substitute(task_id=task_value(t, "id", "?"), summary=task_summary(t))
        for t in sample
    )
    text = prompts.MUTATION_PROMPT.substitute(
        context=context,
        score=_score_text(parent.score),
        parent=parent.prompt,
        others=other_lines or prompts.NO_OTHERS,
        tasks=task_lines,
    )
    return [Message(role="user", content=text)]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- GEPA ----


async def gepa_search(
    model: ChatModel,
    tasks: Sequence[Any],
    evaluate: Evaluate,
    *,
    budget: int = GEPA_BUDGET,
    minibatch: int = 3,
    seed: int = 0,
    seed_prompt: str | None = None,
    perfect_score: float = CREATIVITY_MAX,
    params: ModelParams | None = None,
    out: str | Path | None = None,
) -> EvolutionResult:
    """GEPA (reflective prompt evolution with an instance-level Pareto front) through the
    `gepa` package's `gepa.optimize`, with the paper's settings (App. E.3): Pareto candidate
    selection over per-task fronts, epoch-shuffled minibatches of `minibatch` tasks, skipping
    minibatches already at `perfect_score`, round-robin components, no merge, no evaluation
    cache, a metric-call budget (`budget`, counted in per-task scores as gepa counts them).

    `perfect_score`: App. E.3 sets `perfect_score=1.0`, gepa's default for metrics in [0, 1].
    Our fitness is Creativity, in [0, 3] (§4.2), so 1.0 would be a third of the scale: every
    minibatch whose tasks all reach creativity 1 (a correct answer of novelty 1) would be skipped
    as if it could not improve. The default is therefore Creativity's maximum, 3.0, the value
    with gepa's meaning ("cannot do better"); pass `perfect_score=1.0` (`creativebench evolve
    --perfect-score 1`) to reproduce the paper's setting literally.

    GEPA runs in a worker thread; its evaluations and reflections are scheduled back onto the
    caller's event loop. The reflection is ours: the model sees the candidate instruction and
    the per-task scores of its minibatch (`evolve_prompts.REFLECTION_PROMPT`). The training
    tasks serve as GEPA's validation set too (no separate split, as gepa does by default).

    History events: `evaluated` (candidate index in evaluation order, score, prompt), then one
    `gepa` event with gepa's candidate list, parents, aggregate scores, per-task front and
    metric calls.
    """
    try:
        import gepa  # deferred: an optional extra (`pip install gepa`)
    except ImportError:
        raise ConfigError(
            "gepa_search needs the `gepa` package, which is not installed: "
            "pip install gepa (or use island_search, which needs nothing extra)"
        ) from None

    tasks = _check_tasks(tasks)
    _check_count("budget", budget, 1)
    _check_count("minibatch", minibatch, 1)
    start = _seed_prompt(tasks, seed_prompt)
    bridge = _GepaBridge(
        asyncio.get_running_loop(), model, tasks, _Fitness(evaluate, len(tasks)), params
    )
    indices = list(range(len(tasks)))
    try:
        outcome = await asyncio.to_thread(
            gepa.optimize,
            seed_candidate={GEPA_COMPONENT: start},
            trainset=indices,
            valset=indices,
            adapter=bridge,
            custom_candidate_proposer=bridge.propose,
            candidate_selection_strategy="pareto",
            frontier_type="instance",
            batch_sampler="epoch_shuffled",
            reflection_minibatch_size=min(minibatch, len(tasks)),
            skip_perfect_score=True,
            perfect_score=perfect_score,
            module_selector="round_robin",
            use_merge=False,
            cache_evaluation=False,
            max_metric_calls=budget,
            stop_callbacks=bridge.stopped,
            logger=bridge,
            display_progress_bar=False,
            raise_on_exception=True,
            seed=seed,
        )
    except asyncio.CancelledError:
        bridge.stop.set()  # the worker thread ends at gepa's next stop check
        raise
    best_candidate = outcome.best_candidate
    prompt = (
        best_candidate[GEPA_COMPONENT] if isinstance(best_candidate, dict) else str(best_candidate)
    )
    bridge.history.append(
        {
            "event": "gepa",
            "candidates": [c[GEPA_COMPONENT] for c in outcome.candidates],
            "parents": outcome.parents,
            "scores": list(outcome.val_aggregate_scores),
            "best": outcome.best_idx,
            "front": {
                str(task_value(tasks[i], "id", i)): sorted(front)
                for i, front in sorted(outcome.per_val_instance_best_candidates.items())
            },
            "metric_calls": outcome.total_metric_calls,
        }
    )
    result = EvolutionResult(
        prompt=prompt,
        method="gepa",
        score=await bridge.fitness(prompt),
        history=bridge.history,
        seed_prompt=start,
        seed_score=await bridge.fitness(start),
        settings={
            "budget": budget,
            "minibatch": minibatch,
            "seed": seed,
            "perfect_score": perfect_score,
            "tasks": len(tasks),
            "model": model.name,
            "gepa": _gepa_version(),
        },
        calls=bridge.calls,
    )
    if out is not None:
        result.write(out)
    return result


class _GepaBridge:
    """gepa's adapter, proposer, stopper and logger in one: gepa calls it from its worker
    thread, and it runs our coroutines (evaluation, reflection) on the caller's event loop.

    Data instances are task indices; the one component is `GEPA_COMPONENT`.
    """

    propose_new_texts = None
    """Proposals come through `propose` (gepa's custom_candidate_proposer)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        model: ChatModel,
        tasks: list[Any],
        fitness: _Fitness,
        params: ModelParams | None,
    ) -> None:
        self.loop = loop
        self.model = model
        self.tasks = tasks
        self.fitness = fitness
        self.params = params or MUTATION_PARAMS
        self.context = _context(tasks)
        self.history: list[dict[str, Any]] = []
        self.calls: list[ModelCallRecord] = []
        self.stop = threading.Event()
        fitness.on_new = self.evaluated

    def evaluated(self, prompt: str, values: list[float]) -> None:
        """History event for a newly evaluated candidate (numbered in evaluation order)."""
        self.history.append(
            {
                "event": "evaluated",
                "candidate": len(self.fitness.per_task) - 1,
                "score": sum(values) / len(values),
                "prompt": prompt,
            }
        )

    def on_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` on the caller's loop and wait for it (from gepa's thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    # -- GEPAAdapter --

    def evaluate(
        self, batch: list[int], candidate: dict[str, str], capture_traces: bool = False
    ) -> Any:
        from gepa.core.adapter import EvaluationBatch  # deferred: the optional gepa extra

        values = self.on_loop(self.fitness.scores(candidate[GEPA_COMPONENT]))
        traces = [{"task": i, "score": values[i]} for i in batch] if capture_traces else None
        return EvaluationBatch(
            outputs=list(batch), scores=[values[i] for i in batch], trajectories=traces
        )

    def make_reflective_dataset(
        self, candidate: dict[str, str], eval_batch: Any, components_to_update: list[str]
    ) -> dict[str, list[dict[str, Any]]]:
        records = [
            {
                "task_id": str(task_value(self.tasks[t["task"]], "id", t["task"])),
                "summary": task_summary(self.tasks[t["task"]]),
                "score": t["score"],
                "feedback": _feedback(t["score"]),
            }
            for t in eval_batch.trajectories or []
        ]
        return {name: records for name in components_to_update}

    # -- proposer, stopper, logger --

    def propose(
        self,
        candidate: dict[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        return {
            name: self.on_loop(self.reflect(candidate[name], reflective_dataset.get(name, [])))
            for name in components_to_update
        }

    def stopped(self, state: Any) -> bool:
        return self.stop.is_set()

    def log(self, message: str) -> None:
        logger.debug("gepa: %s", message)

    # -- coroutines run on the caller's loop --

    async def reflect(self, current: str, records: Sequence[Mapping[str, Any]]) -> str:
        mean = sum(float(r["score"]) for r in records) / len(records) if records else 0.0
        text = prompts.REFLECTION_PROMPT.substitute(
            context=self.context,
            score=_score_text(mean),
            parent=current,
            records="\n\n".join(
                prompts.RECORD.substitute(
                    number=i,
                    task_id=r["task_id"],
                    summary=r["summary"],
                    score=_score_text(float(r["score"])),
                    feedback=r["feedback"],
                )
                for i, r in enumerate(records, 1)
            ),
        )
        completion = await self.model.complete([Message(role="user", content=text)], self.params)
        self.calls.append(ModelCallRecord.from_completion(completion, purpose="reflect"))
        # An empty rewrite keeps the current text: gepa then sees no gain and moves on.
        return read_instruction(completion.text) or current


def _feedback(score: float) -> str:
    if score <= 0:
        verdict = prompts.VERDICT_ZERO
    elif score < 1.0:
        verdict = prompts.VERDICT_LOW
    else:
        verdict = prompts.VERDICT_GOOD
    return prompts.FEEDBACK_SCORE.substitute(score=_score_text(score), verdict=verdict)


def _gepa_version() -> str | None:
    try:
        return version("gepa")
    except PackageNotFoundError:
        return None
