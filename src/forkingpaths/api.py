"""The Python entry points: run a benchmark and read a run back, as the CLI does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from forkingpaths.core.chat import ModelParams
from forkingpaths.core.records import (
    ModelOptions,
    RoleModel,
    RunOptions,
    RunSpec,
)
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.reproduce import ReproOutcome, run_reproduction
from forkingpaths.runner.run import RunResult, execute_run
from forkingpaths.runner.rundir import load_records
from forkingpaths.web.bundle import write_bundle
from forkingpaths.web.data import Viewer


def run(
    benchmark: str,
    *,
    agent: str,
    model: str | None = None,
    split: str | None = None,
    instances: list[str] | None = None,
    trials: int = 1,
    seed: int = 0,
    agent_options: dict[str, Any] | None = None,
    benchmark_options: dict[str, Any] | None = None,
    roles: dict[str, str | RoleModel] | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    params: ModelParams | None = None,
    options: RunOptions | None = None,
    runs_dir: str | Path = "runs",
    run_id: str | None = None,
    force_new: bool = False,
) -> RunResult:
    """Run (or resume) one benchmark, like `forkingpaths run`, and return its result.

    `roles` maps a benchmark's model roles (`judge`...) to model ids or `RoleModel`s.

    >>> result = run("griddag", agent="frontier", instances=["low-easy-s0"])  # doctest: +SKIP
    >>> result.metrics["metrics"]["success_rate"]  # doctest: +SKIP
    1.0
    """
    bench = make_benchmark(benchmark, **(benchmark_options or {}))
    spec = RunSpec(
        benchmark=bench.id,
        split=split or bench.default_split,
        instances=instances,
        trials=trials,
        seed=seed,
        agent=agent,
        agent_options=agent_options or {},
        model=model,
        model_options=ModelOptions(
            base_url=base_url, api_key_env=api_key_env, params=params or ModelParams()
        ),
        benchmark_options=bench.options,
        roles={
            role: ref if isinstance(ref, RoleModel) else RoleModel(model=ref)
            for role, ref in (roles or {}).items()
        },
    )
    return asyncio.run(
        execute_run(
            spec,
            options or RunOptions(progress=False),
            runs_dir=Path(runs_dir),
            run_id=run_id,
            force_new=force_new,
        )
    )


def reproduce(
    key: str,
    *,
    model: str | None,
    roles: dict[str, str | RoleModel] | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    compare_to: str | None = None,
    inputs: dict[str, str | Path] | None = None,
    limit: int | None = None,
    benchmark_options: dict[str, Any] | None = None,
    options: RunOptions | None = None,
    runs_dir: str | Path = "runs",
) -> ReproOutcome:
    """Reproduce a paper's table or figure, like `forkingpaths reproduce`: `model="scripted"`
    plays every run's offline stand-in.

    >>> outcome = reproduce("explore-exploit:table2", model="scripted")  # doctest: +SKIP
    >>> outcome.result.tables[0].rows[0].ours  # doctest: +SKIP
    """
    return run_reproduction(
        key,
        model=model,
        model_options=ModelOptions(base_url=base_url, api_key_env=api_key_env),
        roles={
            role: ref if isinstance(ref, RoleModel) else RoleModel(model=ref)
            for role, ref in (roles or {}).items()
        },
        compare_to=compare_to,
        inputs={name: Path(path) for name, path in (inputs or {}).items()},
        limit=limit,
        benchmark_options=benchmark_options,
        options=options or RunOptions(progress=False),
        runs_dir=Path(runs_dir),
    )


def viewer(runs_dir: str | Path = "runs") -> Viewer:
    """What `forkingpaths view` shows, as data: `.runs()`, `.run_page(key)`, `.episodes(key)`,
    `.episode(key, n)` (the record and the benchmark's world view), `.compare([keys])`.

    >>> viewer("runs").episode("griddag-main-frontier-nomodel-ab68a5", 0)["world"]  # doctest: +SKIP
    """
    return Viewer(Path(runs_dir))


def bundle(out: str | Path, runs: list[str | Path]) -> Path:
    """Write a static copy of runs (run directories or folders of runs) that opens from disk,
    like `forkingpaths view --bundle OUT RUN...`; returns its index.html."""
    return write_bundle(Path(out), [Path(r) for r in runs])


__all__ = ["bundle", "load_records", "reproduce", "run", "viewer"]
