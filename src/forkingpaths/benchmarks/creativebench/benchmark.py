"""The creativebench-v1 benchmark: its tasks, options, env and the aggregates of Table 3."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from forkingpaths.benchmarks.creativebench.agents.solver import CreativeSolver
from forkingpaths.benchmarks.creativebench.averaging import (
    RELEASE_SCRIPT,
    Averaging,
    count,
    rows,
    subset_summary_of,
)
from forkingpaths.benchmarks.creativebench.averaging import cells as _cells
from forkingpaths.benchmarks.creativebench.env import (
    DEFAULT_EMBEDDING,
    DEFAULT_TIMEOUT_S,
    NO_JUDGE,
    SUBSETS,
    CreativeEnv,
    Services,
)
from forkingpaths.benchmarks.creativebench.reproduce import reproductions
from forkingpaths.benchmarks.creativebench.sandbox import DEFAULT_MEMORY_MB
from forkingpaths.benchmarks.creativebench.tasks import (
    ComboTask,
    ExploreTask,
    explore_levels,
    import_report,
    load_combo,
    load_explore,
)
from forkingpaths.benchmarks.creativebench.view import creative_world_view
from forkingpaths.core.agent import Agent
from forkingpaths.core.benchmark import (
    AgentSpec,
    Benchmark,
    Instance,
    MetricSpec,
    QuickConfig,
    ScoredEpisode,
)
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Env
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.core.reproduce import Reproduction

log = logging.getLogger(__name__)

_PKG = "forkingpaths.benchmarks.creativebench"

PAPER_SEED = 42
"""Seed of trial 0 (App. B.2: three trials with seeds 42, 43, 44)."""


class CreativeBenchOptions(BaseModel):
    """Options of creativebench-v1 (`--option`, `benchmark_options`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: Path | None = Field(
        default=None,
        description="a JSONL file of Explore or Combo rows (the paper's release format) "
        "replacing the built-in set of that subset",
    )
    """Read with `tasks.load_explore` / `load_combo`; stored as an absolute path."""
    embedding: str = Field(
        default=DEFAULT_EMBEDDING,
        description="novelty's embedding backend: none, ast-tfidf-calibrated (default), "
        "ast-tfidf (uncalibrated), openai-compat/MODEL or "
        "sentence-transformers/MODEL",
    )
    """`novelty.make_embedding_backend`'s spec; the paper's CodeXEmbed runs on vLLM or TEI
    as `openai-compat/<model>`."""
    embedding_base_url: str | None = Field(
        default=None, description="the endpoint of an openai-compat/ embedding backend"
    )
    """`/v1` URL of the embeddings server."""
    timeout: float = Field(
        default=DEFAULT_TIMEOUT_S,
        strict=True,
        gt=0,
        allow_inf_nan=False,
        description="sandbox seconds per execution (wall and CPU), > 0; default 10 (the paper's "
        "release asks its sandbox for 30)",
    )
    """Both limits of each run of a solution in the sandbox. Every release row's reference runs
    in under 3 s here, so 10 and 30 judge the release alike; `timeout=30` is the release's."""
    memory_mb: int = Field(
        default=DEFAULT_MEMORY_MB,
        strict=True,
        ge=64,
        description="sandbox address-space limit per execution in MB, >= 64; default 2048 (the "
        "release's problem_152 L4-L6 need about 1.3 GB)",
    )
    """The paper states no memory limit; its rows passed its sandbox, so ours must admit them."""
    sandbox_python: str | None = Field(
        default=None,
        description="the interpreter programs run under (default: $FORKINGPATHS_SANDBOX_PYTHON, "
        "else .sandbox-venv/bin/python, else forkingpaths' own)",
    )
    """Recorded in every episode (`sandbox_python`) and every exec verdict (`python`)."""
    workers: int | None = Field(
        default=None,
        strict=True,
        ge=1,
        description="sandbox pool size, a positive integer (default: one per core)",
    )
    """Warm sandbox workers; jobs of concurrent episodes run in parallel across them."""
    explore_averaging: Averaging = Field(
        default="paper",
        description="how Explore Novelty and Creativity average: paper (default; Eq. 4: "
        "constrained levels only, level 0 is the baseline) or release (the release's "
        f"{RELEASE_SCRIPT}:119,147-148: every row, level 0 counted with novelty 0)",
    )
    """Only scoring reads it (`averaging.rows`): `forkingpaths report RUN` re-scores a run under
    its spec's value. Pass@1 (every row) and Combo are the same under both."""

    @field_validator("sandbox_python")
    @classmethod
    def _interpreter(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = Path(value).expanduser()
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ValueError(f"{value!r} is not an executable file")
        return str(path.absolute())  # not resolved: a venv's python is a link to its base

    @field_validator("tasks")
    @classmethod
    def _existing_file(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        path = value.expanduser()
        if not path.exists():
            raise ValueError(f"{str(path)!r} does not exist")
        return path.resolve()


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
    Novelty or Creativity (they are the baseline; Eq. 4 defines novelty for constrained levels
    only); `explore_averaging=release` counts them with novelty 0 instead, as the release's
    evaluation/exploration/eval_explore.py does (lines 119, 147-148; `averaging`).

    Metrics per subset (`combo_...`, `explore_...`): `pass_at_1`, `novelty`, `creativity` (with
    `_std` over trials), `novelty_passed` (novelty over the rows of Quality 1 only), `no_code`
    (rows whose answer holds no Python the parser accepts: empty, prose, broken code),
    `reference_baselines` (Explore rows whose novelty baseline is a reference solution), `rows`,
    `trials`; `judge` and `explore_averaging` run-wide. `creativebench ttest RUN_A RUN_B`
    compares two runs per trial (App. E.1).

    Paper settings (App. B.2): temperature 0.1, top-p 1.0, three trials with seeds 42, 43, 44,
    the mean reported: `forkingpaths run creativebench --split all --agent vanilla --model M
    --temperature 0.1 --trials 3`. Trial t runs with seed 42 + t (+ `--seed`), the same for every
    instance, and the solver sends it with each request, so trials are independent draws and the
    response cache (keyed on the seed) never replays one trial into another.

    Options (`CreativeBenchOptions`): `tasks` (a JSONL file in the paper's release format
    replacing the built-in set of that subset), `embedding`, `embedding_base_url`, `timeout`
    (sandbox seconds per execution, default 10; the release's sandbox 30), `memory_mb` (default
    2048), `sandbox_python` (the interpreter programs run under), `workers` (sandbox pool size),
    `explore_averaging` (`paper`, default, or `release`: Explore Novelty/Creativity as the
    release's evaluation script averages them; scoring only, so `forkingpaths report RUN`
    applies it to recorded runs).

    The protocol of an episode is its env (`env.CreativeEnv`): the solver's answer is the
    action, the env runs it in the benchmark's sandbox pool (`env.Services`, released by
    `aclose`), checks the constraints and asks the judge role.

    Versions: v1 -- Combo and Explore subsets, sandbox verdicts, Eq. 2-5 metrics, static checker
    plus LLM judge; per-trial seeds 42 + t, plain level-0 prompt, advisory inferred rules,
    judge defaulting to the agent's model, `novelty_passed` / `no_code` / `reference_baselines`
    (review fixes within v1, before any published result); the protocol played as an env, an
    answer with no Python in it recorded as an invalid step.
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
            "evorepe": AgentSpec(
                f"{_PKG}.agents.steered:make_evorepe_solver",
                needs_model=True,
                description="solver on an hf/ model steered by an EvoRePE vector "
                "(-a evorepe_vector=v.pt [-a prompt_file=evolved.json]; the hf extra)",
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
            "agent's own model",
            "mutator": "mutation/reflection model of the evolutionary baselines (§4.1: "
            "`creativebench evolve --role mutator=M`, reproduction runs); default: the agent's "
            "own model",
        }
    )
    roles_default_to_agent = frozenset({"judge", "mutator"})
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
    metric_specs = MappingProxyType(
        {
            "episodes": MetricSpec("episodes", "none"),
            "errored": MetricSpec("errored episodes", "lower"),
            **{
                f"{subset}_{key}": MetricSpec(f"{title} {label}", direction)
                for subset, title in (("combo", "Combo"), ("explore", "Explore"))
                for key, label, direction in (
                    ("pass_at_1", "Pass@1", "higher"),
                    ("pass_at_1_std", "Pass@1, std over trials", "none"),
                    ("novelty", "Novelty", "higher"),
                    ("novelty_std", "Novelty, std over trials", "none"),
                    ("creativity", "Creativity", "higher"),
                    ("creativity_std", "Creativity, std over trials", "none"),
                    ("novelty_passed", "Novelty of passed rows", "higher"),
                    ("novelty_passed_std", "Novelty of passed rows, std over trials", "none"),
                    ("no_code", "rows without code", "lower"),
                    ("reference_baselines", "rows against a reference baseline", "none"),
                    ("rows", "rows", "none"),
                    ("trials", "trials", "none"),
                )
            },
            "isolation": MetricSpec("sandbox isolation", "none"),
            "judge": MetricSpec("constraint judge", "none"),
            "embedding": MetricSpec("novelty embedding", "none"),
            "explore_averaging": MetricSpec("Explore novelty averaging", "none"),
        }
    )
    Options = CreativeBenchOptions
    cli_entry_point = f"{_PKG}.cli:app"

    config: CreativeBenchOptions
    """The validated options (set by `Benchmark.__init__`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if self.config.tasks is not None:
            # The run's spec records the file by absolute path, so a resume from another
            # directory reads the same file.
            self.options["tasks"] = str(self.config.tasks)
        self.services = Services(
            timeout=self.config.timeout,
            workers=self.config.workers,
            embedding=self.config.embedding,
            embedding_base_url=self.config.embedding_base_url,
            memory_mb=self.config.memory_mb,
            python=self.config.sandbox_python,
        )
        """The sandbox pool and embedding backend every episode's env borrows."""
        self._explore: dict[str, list[ExploreTask]] | None = None
        self._combo: dict[str, ComboTask] | None = None

    def reproductions(self) -> list[Reproduction]:
        """Table 3 (`creativebench:table3`): the vanilla solver, and the evolutionary baselines
        from the evolved prompts the user gives, beside the published rows."""
        return reproductions(lambda split: [i.id for i in self.instances(split)])

    # ---- tasks ----

    def _tasks(self) -> tuple[dict[str, ComboTask], dict[str, list[ExploreTask]]]:
        """The Combo problems by id and the Explore levels by base problem (loaded once)."""
        if self._combo is None or self._explore is None:
            custom = self.config.tasks
            explore, e_errors = load_explore(None)
            combo, c_errors = load_combo(None)
            if custom is not None:
                if import_report(custom)["kind"] == "explore":
                    explore, e_errors = load_explore(custom)
                else:
                    combo, c_errors = load_combo(custom)
            for error in [*e_errors, *c_errors]:
                log.warning("task row refused: %s", error)
            self._explore = explore_levels(explore)
            self._combo = {t.id: t for t in combo}
        return self._combo, self._explore

    def combo_tasks(self) -> list[ComboTask]:
        """The Combo tasks in use (built-in, or the `tasks` option's)."""
        return list(self._tasks()[0].values())

    def explore_tasks(self) -> dict[str, list[ExploreTask]]:
        """The Explore levels in use, per base problem in level order."""
        return dict(self._tasks()[1])

    def instances(self, split: str) -> list[Instance]:
        if split not in self.splits:
            return self.select_instances(split, None)
        combo, explore = self._tasks()
        out: list[Instance] = []
        if split in ("combo", "all"):
            out += [
                Instance(id=t.id, split=split, params={"subset": "combo"}) for t in combo.values()
            ]
        if split in ("explore", "all"):
            out += [
                Instance(
                    id=problem, split=split, params={"subset": "explore", "levels": len(levels)}
                )
                for problem, levels in explore.items()
            ]
        return out

    def sample_instances(self, split: str, n: int) -> list[Instance]:
        """At most n instances for a smoke test (`reproduce --limit`): from a split holding both
        subsets (`all`), ceil(n/2) Combo then the rest Explore, at least one of each when
        n >= 2 (a subset short of its share leaves the rest to the other), so that both of
        Table 3's column groups get numbers; the first n otherwise."""
        pool = self.instances(split)
        combo = [i for i in pool if i.params["subset"] == "combo"]
        explore = [i for i in pool if i.params["subset"] == "explore"]
        n = max(n, 0)
        if not combo or not explore:
            return pool[:n]
        n_explore = min(len(explore), n - math.ceil(n / 2))
        n_combo = min(len(combo), n - n_explore)
        n_explore = min(len(explore), n - n_combo)
        return combo[:n_combo] + explore[:n_explore]

    # ---- protocol ----

    def make_env(
        self, instance: Instance, roles: Mapping[str, ChatModel] = MappingProxyType({})
    ) -> Env:
        """The instance's CreativeEnv, with the benchmark's services and the `judge` role."""
        combo, explore = self._tasks()
        subset = instance.params["subset"]
        tasks = [combo[instance.id]] if subset == "combo" else explore[instance.id]
        return CreativeEnv(subset, tasks, self.services, judge=roles.get("judge"))

    def reset_options(self, instance: Instance, agent: Agent) -> dict[str, Any] | None:
        """The solver's model name, so the env can tell a judge that is the solver's own."""
        return {"solver_model": getattr(getattr(agent, "model", None), "name", None)}

    def max_steps(self, instance: Instance) -> int:
        return int(instance.params.get("levels", 1))

    def episode_seed(self, instance: Instance, trial: int, base_seed: int) -> int:
        """App. B.2's seeds: trial t of every instance runs with seed 42 + t (42, 43, 44 for
        three trials), shifted by the run's `--seed`."""
        return PAPER_SEED + base_seed + trial

    async def aclose(self) -> None:
        await self.services.aclose()

    # ---- viewer ----

    def world_view(self, record: EpisodeRecord) -> dict[str, Any] | None:
        """The task, the program beside the solutions its novelty is measured against, the
        sandbox verdicts, each constraint's verdict and the novelty terms (`view.py`)."""
        combo, explore = self._tasks()
        return creative_world_view(record, combo, explore)

    # ---- metrics ----

    def episode_metrics(self, record: EpisodeRecord) -> dict[str, Any]:
        scored = rows(record, self.config.explore_averaging)
        return {
            "subset": record.initial_info.get("subset"),
            **_cells(scored),
            "judge": record.initial_info.get("judge") or NO_JUDGE,
            "rows": len(scored),
            "verdicts": dict(count(r["verdict"] for r in scored)),
        }

    def episode_facts(self, record: EpisodeRecord) -> dict[str, Any]:
        """The subset, judge and embedding backend of the episode, the sandbox isolations its
        steps ran under, and its scored rows under the benchmark's averaging (`rows`)."""
        info = record.initial_info
        return {
            "subset": info.get("subset"),
            "judge": info.get("judge"),
            "embedding": info.get("embedding"),
            "isolation": sorted({s.info.get("isolation") for s in record.steps} - {None}),
            "rows": rows(record, self.config.explore_averaging),
        }

    def aggregate(self, episodes: list[ScoredEpisode]) -> dict[str, Any]:
        ok = [e for e in episodes if e.status == "ok"]
        out: dict[str, Any] = {"episodes": len(episodes), "errored": len(episodes) - len(ok)}
        groups: dict[str, dict[str, Any]] = {}
        for subset in SUBSETS:
            subset_episodes = [
                (e.trial, e.facts["rows"]) for e in ok if e.facts["subset"] == subset
            ]
            if not subset_episodes:
                continue
            summary = subset_summary_of(subset_episodes)
            for key, value in summary.items():
                out[f"{subset}_{key}"] = value
            groups[subset] = summary
        isolation = {i for e in ok for i in e.facts["isolation"]}
        out["isolation"] = ", ".join(sorted(isolation)) or None
        explore = [e for e in ok if e.facts["subset"] == "explore"]
        judges = {str(e.facts["judge"] or NO_JUDGE) for e in explore}
        out["judge"] = ", ".join(sorted(judges)) or NO_JUDGE  # the Explore judge(s)
        # Novelty's scale depends on the backend: every metrics file names it.
        embeddings = {str(e.facts["embedding"] or "none") for e in episodes}
        out["embedding"] = ", ".join(sorted(embeddings)) or None
        out["explore_averaging"] = self.config.explore_averaging
        out["by_group"] = groups
        return out


# ---- prompt fitness ----


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
