"""The `local` suite: every LLM agent on a real local model (SmolLM2-135M-Instruct by default)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from forkingpaths.core.chat import ModelParams
from forkingpaths.core.records import ModelOptions, RoleModel, RunSpec

LOCAL_MODEL = "local/smollm2-135m"
"""The suite's model: every agent and every role model (responder, judge)."""

MAX_TOKENS = 192
"""Completion cap of every call: a 135M model's replies run on; the budgets below, not this
cap, keep the suite short, and every agent still sends its real prompts."""


@dataclass(frozen=True)
class LocalRun:
    """One run of the suite: a benchmark's LLM agent on two instances, with shortened budgets
    (steps, turns, attempts) so the whole suite stays under 20 minutes on two cores."""

    benchmark: str
    agent: str
    instances: tuple[str, ...]
    split: str
    agent_options: dict[str, Any] = field(default_factory=dict)
    benchmark_options: dict[str, Any] = field(default_factory=dict)
    roles: tuple[str, ...] = ()
    """Model roles the protocol calls: played by the same local model."""


_GRIDDAG = ("low-easy-s0", "low-easy-s1")
# The prompt solver reads an instruction file; the package ships a hand-written seed one.
_SEED_PROMPT = str(
    files("forkingpaths.benchmarks.creativebench").joinpath("data/prompts/seed-instruction.json")
)
_ESCAPE = {"attempts": 1, "max_steps": 4}
_EEB = {"max_steps": 4}
_TURTLESOUP = {"max_turns": 2}

LOCAL_RUNS: tuple[LocalRun, ...] = (
    # griddag: the ReAct agent with each of the four prompts, both modes, with and without the
    # harness (App. C.2-C.3); the map's own hidden budget is shortened with budget_alpha.
    *(
        LocalRun("griddag", "react", _GRIDDAG, "main", {"prompt": p}, {"budget_alpha": 1})
        for p in ("base", "exploration", "exploitation", "balance")
    ),
    LocalRun("griddag", "react", _GRIDDAG, "main", {"mode": "reasoning"}, {"budget_alpha": 1}),
    LocalRun("griddag", "react", _GRIDDAG, "main", {"harness": True}, {"budget_alpha": 1}),
    # escape: every LLM agent, with the Metric 2 judge; AUT's two agents with theirs.
    *(
        LocalRun(
            "escape",
            agent,
            ("zombie_lab", "house_heist"),
            "mutate",
            {},
            _ESCAPE,
            ("judge",),
        )
        for agent in ("base", "self-refine", "escapeagent", "redna", "r-only")
    ),
    *(
        LocalRun("aut", agent, ("brick", "paperclip"), "objects", {}, {"runs": 1}, ("judge",))
        for agent in ("base", "redna")
    ),
    # eeb: the base agent on both games.
    LocalRun("eeb", "base", ("maze-l1-000", "match2-easy-000"), "test", {}, _EEB),
    # turtlesoup: Mosaic-Agent, each ablation, and the baseline; responder and judge local.
    *(
        LocalRun(
            "turtlesoup",
            agent,
            ("clever_logic-01-en", "clever_logic-02-en"),
            "all",
            options,
            _TURTLESOUP,
            ("responder", "judge"),
        )
        for agent, options in (
            ("mosaic", {}),
            ("mosaic", {"deliberation": False}),
            ("mosaic", {"metacognition": False}),
            ("mosaic", {"pruning": False}),
            ("mosaic", {"key_clues": False}),
            ("baseline", {}),
        )
    ),
    # creativebench: both LLM solvers with the constraint judge, on a Combo and an Explore task.
    *(
        LocalRun(
            "creativebench", agent, ("combo-01", "second-largest"), "all", options, {}, ("judge",)
        )
        for agent, options in (("vanilla", {}), ("prompt", {"prompt_file": _SEED_PROMPT}))
    ),
)


def local_specs(model: str = LOCAL_MODEL) -> list[RunSpec]:
    """The suite's RunSpecs, every agent and role on `model`."""
    options = ModelOptions(params=ModelParams(max_tokens=MAX_TOKENS))
    return [
        RunSpec(
            benchmark=run.benchmark,
            split=run.split,
            instances=list(run.instances),
            agent=run.agent,
            agent_options=dict(run.agent_options),
            model=model,
            model_options=options,
            benchmark_options=dict(run.benchmark_options),
            roles={role: RoleModel(model=model, options=options) for role in run.roles},
        )
        for run in LOCAL_RUNS
    ]
