"""Predicts a run's model calls, tokens and cost before running it, by a dry run offline."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forkingpaths.core.chat import Usage
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunSpec
from forkingpaths.core.registry import make_benchmark, scripted_policy_entry
from forkingpaths.models.factory import parse_model_id
from forkingpaths.models.pricing import PriceTable
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel, load_policy
from forkingpaths.models.usage import UsageMeter
from forkingpaths.runner.episode import EpisodeRunner
from forkingpaths.runner.run import plan_jobs


@dataclass
class Estimate:
    """Expected and upper-bound figures of a planned run."""

    title: str
    rows: list[list[Any]]
    notes: list[str] = field(default_factory=list)
    expected_cost_usd: float = 0.0
    upper_cost_usd: float = 0.0
    expected_calls: int = 0
    upper_calls: int = 0
    assumed_completion_tokens: int | None = None
    """Completion tokens per agent call taken from the stand-in (None: the user's figure)."""


def estimate_run(
    benchmark_name: str,
    *,
    agent: str,
    model: str,
    split: str | None = None,
    instances: list[str] | None = None,
    trials: int = 1,
    agent_options: dict[str, Any] | None = None,
    completion_tokens: int | None = None,
    prices_path: Path | None = None,
    benchmark_options: dict[str, Any] | None = None,
    roles: Mapping[str, tuple[str, str]] | None = None,
) -> Estimate:
    """Dry-run every planned episode with the benchmark's scripted stand-in policy (the same
    prompts the real model would receive), then price the tokens as `model`.

    Expected figures assume the model behaves like the stand-in (a competent agent); the upper
    bound assumes every episode runs to its step cap, with the prompt growing per call as the
    dry run measured (never below what the dry run itself used). `roles` maps a protocol role to
    (the model it is priced as, the scripted model standing in for it): a judge's calls are
    priced as the judge's model.
    """
    if completion_tokens is not None and completion_tokens < 0:
        raise ConfigError(f"--completion-tokens must be >= 0, got {completion_tokens}")
    if trials < 1:
        raise ConfigError(f"--trials must be >= 1, got {trials}")
    bench = make_benchmark(benchmark_name, **(benchmark_options or {}))
    provider, name = parse_model_id(model)
    if provider == "scripted":
        scripted_policy_entry(name)  # an unknown policy is refused, naming the known ones
    # Before the dry run: a price file that cannot be read is refused at once.
    prices = PriceTable.load(prices_path)
    spec = RunSpec(
        benchmark=bench.id,
        split=split or bench.default_split,
        instances=instances,
        trials=trials,
        agent=agent,
        agent_options=agent_options or {},
        model=model,
        benchmark_options=benchmark_options or {},
    )
    if not bench.agent_spec(agent).needs_model:
        raise ConfigError(f"agent {agent!r} uses no model: its runs cost nothing to estimate")
    policy_name = bench.estimate_policy or next(iter(bench.scripted_policies), None)
    if policy_name is None:
        raise ConfigError(f"{bench.name} has no scripted policy to dry-run estimates with")
    jobs = plan_jobs(spec, bench)
    meter = UsageMeter()
    stand_in = ScriptedModel(
        model, load_policy(policy_name), ModelRuntime(cache=False, meter=meter)
    )
    # A role's stand-in answers under a name of its own, so its calls are told from the agent's
    # even when the judge is the agent's model; each is priced as the model it stands for.
    priced_as = {model: model}
    role_models = {}
    for role, (price_model, stand_in_id) in (roles or {}).items():
        name = f"{price_model} (as {role})"
        priced_as[name] = price_model
        role_models[role] = ScriptedModel(
            name,
            load_policy(parse_model_id(stand_in_id)[1]),
            ModelRuntime(cache=False, meter=meter),
        )
    runner = EpisodeRunner("estimate", spec, bench, stand_in, meter, roles=role_models)

    async def dry_run() -> list[EpisodeRecord]:
        gate = asyncio.Semaphore(8)

        async def one(job: Any) -> EpisodeRecord:
            async with gate:
                return await runner(job)

        try:
            return await asyncio.gather(*(one(job) for job in jobs))
        finally:
            await bench.aclose()

    records = asyncio.run(dry_run())
    calls = [c for r in records for s in r.steps for c in s.calls]
    agent_calls = [c for c in calls if c.model == model]
    n_calls = len(calls)
    per_call_out = completion_tokens
    if per_call_out is None:
        per_call_out = (
            round(sum(c.completion_tokens for c in agent_calls) / len(agent_calls))
            if agent_calls
            else 0
        )

    def completion_of(c: Any) -> int:
        # The agent's replies are assumed `per_call_out` long; a role's as its stand-in's.
        return per_call_out if c.model == model else c.completion_tokens

    prompt = sum(c.prompt_tokens for c in calls)
    completion = sum(completion_of(c) for c in calls)
    expected_cost = sum(
        prices.price(
            priced_as.get(c.model, c.model),
            Usage(prompt_tokens=c.prompt_tokens, completion_tokens=completion_of(c)),
        )
        for c in calls
    )

    # Upper bound: every episode runs to its cap; prompt tokens of call k grow as first + slope*k.
    # An episode's bound is never below what its dry run used (a prompt that shrinks, a history
    # cut short, several calls per step), and role calls scale with the episode's steps.
    upper_calls, upper_prompt, upper_completion, upper_cost = 0, 0, 0, 0.0
    for job, record in zip(jobs, records, strict=True):
        scale = max(1.0, bench.max_steps(job.instance) / max(1, len(record.steps)))
        by_model: dict[str, list[Any]] = {}
        for step in record.steps:
            for c in step.calls:
                by_model.setdefault(c.model, []).append(c)
        for name, model_calls in by_model.items():
            tokens = [c.prompt_tokens for c in model_calls]
            n = max(len(tokens), math.ceil(len(tokens) * scale))
            first = tokens[0]
            slope = (tokens[-1] - first) / (len(tokens) - 1) if len(tokens) > 1 else 0.0
            bound_prompt = max(sum(tokens), int(n * first + slope * n * (n - 1) / 2))
            out = per_call_out if name == model else max(c.completion_tokens for c in model_calls)
            upper_calls += n
            upper_prompt += bound_prompt
            upper_completion += out * n
            upper_cost += prices.price(
                priced_as.get(name, name),
                Usage(prompt_tokens=bound_prompt, completion_tokens=out * n),
            )
    rows = [
        ["episodes", len(jobs), len(jobs)],
        ["model calls", n_calls, upper_calls],
        ["prompt tokens", prompt, upper_prompt],
        ["completion tokens", completion, upper_completion],
        ["cost (USD)", round(expected_cost, 4), round(upper_cost, 4)],
    ]
    notes = [
        f"dry run with scripted/{policy_name} standing in for {model}; token counts are "
        "estimates (4 characters per token)",
    ]
    if not prices.is_priced(model):
        notes.append(f"{model} is not in the price table: cost shows 0 (add it with --prices)")
    if completion_tokens is None:
        notes.append(
            f"completion tokens per call assumed {per_call_out} (the stand-in's); reasoning "
            "models write far more: pass --completion-tokens"
        )
    return Estimate(
        f"Estimate: {bench.id} {spec.split} agent={agent} model={model}",
        rows,
        notes,
        expected_cost,
        upper_cost,
        n_calls,
        upper_calls,
        per_call_out if completion_tokens is None else None,
    )
