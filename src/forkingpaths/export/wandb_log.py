"""Logs runs to Weights & Biases as they go: a history row per episode, metrics.json, a table."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from forkingpaths.core.benchmark import ScoredEpisode
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, RunSpec
from forkingpaths.core.registry import make_benchmark
from forkingpaths.runner.episode import plan_jobs
from forkingpaths.runner.run import RunResult
from forkingpaths.runner.rundir import RunDirectory
from forkingpaths.runner.scoring import score_run

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'forkingpaths[wandb]'"

TABLE_KEY = "episodes"
"""The key of the per-episode table (a row per recorded episode) in the W&B run."""

_ERROR_CHARS = 300
"""An episode's error is cut to its first line, at most this long, in the table."""

# metrics.json fields the run's config already holds (the spec), or that are not scalars.
_NOT_SUMMARY = frozenset(
    {"schema_version", "run_id", "benchmark", "split", "agent", "agent_options", "model", "errors"}
)


def _import_wandb() -> Any:
    try:
        import wandb
    except ImportError as exc:  # an optional extra
        raise ConfigError(f"--wandb needs the wandb package: {INSTALL_HINT}") from exc
    return wandb


def _number(value: Any) -> int | float | None:
    """A per-episode metric as W&B charts it: bools as 0/1, None for what is not a number."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    return None


def _flatten(values: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Nested dicts as `prefix/a/b` keys; lists are left out (W&B's summary charts none)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}/{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name))
        elif value is None or isinstance(value, bool | int | float | str):
            out[name] = value
    return out


def _tokens(record: EpisodeRecord) -> int:
    return record.usage.prompt_tokens + record.usage.completion_tokens


def _error_line(record: EpisodeRecord | ScoredEpisode) -> str:
    lines = (record.error or "").strip().splitlines()
    return lines[0][:_ERROR_CHARS] if lines else ""


class WandbLogger:
    """Logs each run it watches as one W&B run, named by the run id, with the spec as config.

    A `RunObserver` of `execute_run` (`observers=[WandbLogger(project)]`); one logger serves
    runs one after another (a suite), one W&B run each. While a run goes, every recorded
    episode is a history row (x axis `episode`): `episode/*` (instance, trial, status, steps,
    calls, cost, tokens, duration), `metric/*` (its numeric metrics) and `total/*` (running
    totals, episodes of earlier invocations of a resumed run included). At the end the scalars
    of metrics.json go to the summary as `run/*` and a table `episodes` holds a row per episode.

    W&B's own files go under `wandb_dir` (else $WANDB_DIR, else the run directory, so the W&B
    record of a run sits with it: `wandb sync RUN_DIR/wandb/offline-run-*` uploads an offline
    one).
    A run that cannot start in W&B (not logged in, no such entity) is refused before its first
    episode; a W&B failure later only warns, so it never stops a run that is spending money.
    """

    def __init__(self, project: str, *, wandb_dir: str | os.PathLike[str] | None = None) -> None:
        if not project.strip():
            raise ConfigError("--wandb: the project name is empty; pass --wandb PROJECT")
        self.project = project
        self.wandb_dir = wandb_dir
        # Imported now, so a missing extra is refused before any run directory is touched.
        self._wandb = _import_wandb()
        self._run: Any = None
        self._index = 0
        self._totals: dict[str, float] = {}

    @property
    def run(self) -> Any:
        """The W&B run of the run being watched (None between runs)."""
        return self._run

    def run_started(
        self, run_dir: RunDirectory, spec: RunSpec, recorded: Iterable[EpisodeRecord] = ()
    ) -> None:
        """Start the W&B run; `recorded`: what earlier invocations of this run recorded."""
        if self._run is not None:  # a run that died without run_finished: close it first
            self.run_finished(None)
        wandb_dir = self.wandb_dir or os.environ.get("WANDB_DIR") or run_dir.path
        config = {"run_id": run_dir.run_id, "run_dir": str(run_dir.path)}
        config.update(spec.model_dump(mode="json"))
        try:
            self._run = self._wandb.init(
                project=self.project,
                name=run_dir.run_id,
                config=config,
                dir=str(wandb_dir),
                # One W&B run per forkingpaths run, even when a process starts several.
                reinit="create_new",
                # The progress display redraws the terminal; W&B's copy of it would be noise.
                settings=self._wandb.Settings(console="off"),
            )
        except Exception as exc:  # wandb raises several types (UsageError, CommError, ...)
            raise ConfigError(
                f"--wandb {self.project}: W&B could not start a run ({exc}); log in with "
                "`wandb login`, or set WANDB_MODE=offline to log locally"
            ) from exc
        self._run.define_metric("episode")
        for prefix in ("episode/*", "metric/*", "total/*"):
            self._run.define_metric(prefix, step_metric="episode")
        self._index = 0
        self._totals = {"episodes": 0, "errored": 0, "cost_usd": 0.0, "tokens": 0, "calls": 0}
        for record in recorded:
            self._count(record)

    def _count(self, record: EpisodeRecord) -> None:
        self._index += 1
        self._totals["episodes"] += 1
        self._totals["errored"] += int(record.status == "error")
        self._totals["cost_usd"] += record.cost_usd
        self._totals["tokens"] += _tokens(record)
        self._totals["calls"] += record.n_calls

    def episode_recorded(self, record: EpisodeRecord) -> None:
        """Log one recorded episode as a history row."""
        if self._run is None:
            return
        index = self._index
        self._count(record)
        row: dict[str, Any] = {
            "episode": index,
            "episode/instance_id": record.instance_id,
            "episode/trial": record.trial,
            "episode/status": record.status,
            "episode/errored": int(record.status == "error"),
            "episode/steps": len(record.steps),
            "episode/calls": record.n_calls,
            "episode/cost_usd": record.cost_usd,
            "episode/prompt_tokens": record.usage.prompt_tokens,
            "episode/completion_tokens": record.usage.completion_tokens,
            "episode/tokens": _tokens(record),
            "episode/duration_s": record.duration_s,
        }
        for name, value in record.metrics.items():
            number = _number(value)
            if number is not None:
                row[f"metric/{name}"] = number
        row.update({f"total/{name}": value for name, value in self._totals.items()})
        try:
            self._run.log(row)
        except Exception as exc:  # W&B down: the run goes on, unlogged
            self._give_up(exc)

    def run_finished(self, result: RunResult | None) -> None:
        """Log metrics.json as the summary and the episode table, then finish the W&B run;
        `result` None: the run stopped on an exception (marked failed in W&B)."""
        if self._run is None:
            return
        run, self._run = self._run, None
        try:
            if result is None:
                run.finish(exit_code=1)
                return
            run.summary.update(
                {k: v for k, v in _flatten(result.metrics, "run").items() if _summary_key(k)}
            )
            run.log({TABLE_KEY: self._table(result.episodes)})
            run.finish()
        except Exception as exc:
            self._give_up(exc)

    def _table(self, records: list[ScoredEpisode]) -> Any:
        names: dict[str, None] = {}  # metric columns in order of first appearance
        for record in records:
            for name, value in record.metrics.items():
                if _number(value) is not None:
                    names.setdefault(name)
        columns = [
            "instance_id",
            "trial",
            "seed",
            "status",
            "error",
            "steps",
            "calls",
            "cost_usd",
            "prompt_tokens",
            "completion_tokens",
            "duration_s",
            *names,
        ]
        rows = [
            [
                r.instance_id,
                r.trial,
                r.seed,
                r.status,
                _error_line(r),
                r.n_steps,
                r.n_calls,
                r.cost_usd,
                r.prompt_tokens,
                r.completion_tokens,
                r.duration_s,
                *(_number(r.metrics.get(name)) for name in names),
            ]
            for r in records
        ]
        # A benchmark may give one metric an int in one episode and a float in another.
        return self._wandb.Table(columns=columns, data=rows, allow_mixed_types=True)

    def _give_up(self, exc: Exception) -> None:
        log.warning("W&B logging stopped for this run: %s", exc)
        if self._run is not None:
            run, self._run = self._run, None
            try:
                run.finish(exit_code=1)
            except Exception:  # already broken; the warning above says so
                log.debug("W&B run did not finish", exc_info=True)


def _summary_key(key: str) -> bool:
    return key.split("/")[1] not in _NOT_SUMMARY


def log_run_to_wandb(
    run_dir: str | os.PathLike[str],
    project: str,
    *,
    wandb_dir: str | os.PathLike[str] | None = None,
) -> None:
    """Log a run directory to W&B after the fact, as `--wandb` would have while it ran (its
    latest record per episode, in record order; metrics.json as it is on disk)."""
    logger = WandbLogger(project, wandb_dir=wandb_dir)
    directory = RunDirectory(Path(run_dir))
    header = directory.read_header()
    metrics = directory.read_metrics().model_dump()
    benchmark = make_benchmark(header.spec.benchmark, **header.spec.benchmark_options)
    jobs = plan_jobs(header.spec, benchmark)
    # One pass for the rows of the episode table, one to log each record: never all in memory.
    scored = score_run(directory, benchmark, jobs)
    logger.run_started(directory, header.spec)
    for record in scored.records():
        logger.episode_recorded(record)
    planned = metrics["episodes"]["planned"]
    episodes = len(scored.episodes)
    logger.run_finished(RunResult(directory, metrics, episodes, 0, planned, scored=scored))
