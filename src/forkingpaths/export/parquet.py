"""Parquet tables of a run directory (episodes, steps, model calls) for pandas and `datasets`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from forkingpaths.core.errors import ConfigError, ForkingPathsError, InvalidFile
from forkingpaths.core.records import EpisodeRecord, RunHeader
from forkingpaths.runner.index import EpisodeIndex, TextIndex
from forkingpaths.runner.rundir import EPISODES_FILE, RunDirectory, describe_os_error

PARQUET_SCHEMA_VERSION = 1
"""Version of the tables' columns below (docs/export-parquet.md). Bumped when a column is
renamed, removed or changes type; adding a column keeps it. Written into every file's metadata
under `forkingpaths.schema_version`."""

INSTALL_HINT = "pip install 'forkingpaths[parquet]'"

Column = tuple[str, str, bool, str]
"""(name, Arrow type, nullable, description): one column of a table, documented where it is
defined, so the files, their metadata and docs/export-parquet.md cannot drift apart."""

EPISODE_COLUMNS: tuple[Column, ...] = (
    ("run_id", "string", False, "The run the episode belongs to."),
    ("benchmark", "string", False, "Benchmark id with version (`griddag-v1`)."),
    ("split", "string", False, "Split of the instance."),
    ("instance_id", "string", False, "Instance id, unique within the benchmark."),
    ("trial", "int64", False, "Repetition index of the instance within the run."),
    ("seed", "int64", False, "Seed the environment was reset with."),
    ("agent", "string", False, "Agent name."),
    ("agent_options_json", "string", False, "Options the agent was built with (JSON object)."),
    ("model", "string", True, "The agent's model id (null for agents that use none)."),
    ("status", "string", False, "`ok`, or `error` when the episode could not finish."),
    ("error", "string", True, "What went wrong (null unless status is `error`)."),
    ("n_steps", "int64", False, "Steps recorded (an errored episode keeps those it played)."),
    ("n_calls", "int64", False, "Model calls over all steps, every role's included."),
    ("n_cached", "int64", False, "Calls served from the response cache."),
    ("prompt_tokens", "int64", False, "Input tokens over all calls."),
    ("completion_tokens", "int64", False, "Output tokens over all calls."),
    ("reasoning_tokens", "int64", False, "Reasoning tokens over all calls, where reported."),
    ("cost_usd", "float64", False, "Priced cost over all calls."),
    ("duration_s", "float64", False, "Wall time of the episode."),
    ("started_at", "timestamp", True, "When the episode started (UTC)."),
    ("finished_at", "timestamp", True, "When the episode finished (UTC; null if unrecorded)."),
    ("initial_observation", "string", False, "Text of the observation returned by reset."),
    ("outcome_json", "string", False, "Benchmark-specific end state (JSON object)."),
    ("metrics_json", "string", False, "Every per-episode metric, nested ones included (JSON)."),
)
"""Then one typed column per scalar metric, `metric_<name>` (see `metric_columns`)."""

STEP_COLUMNS: tuple[Column, ...] = (
    ("run_id", "string", False, "The run."),
    ("instance_id", "string", False, "The episode's instance."),
    ("trial", "int64", False, "The episode's trial."),
    ("step", "int64", False, "0-based step number within the episode."),
    ("observation", "string", False, "The observation text the agent acted on."),
    ("thought", "string", False, "The agent's reasoning (empty if it gave none)."),
    ("action", "string", False, "The action string sent to the environment."),
    ("feedback", "string", False, "The observation text the environment returned."),
    ("reward", "float64", False, "Reward of this step."),
    ("valid", "bool", False, "False when the environment could not parse or execute the action."),
    ("terminated", "bool", False, "The game ended with this step."),
    ("truncated", "bool", False, "A limit ended the episode with this step."),
    ("n_calls", "int64", False, "Model calls made during this step."),
    ("info_json", "string", False, "Environment info the benchmark's metrics read (JSON object)."),
)

CALL_COLUMNS: tuple[Column, ...] = (
    ("run_id", "string", False, "The run."),
    ("instance_id", "string", False, "The episode's instance."),
    ("trial", "int64", False, "The episode's trial."),
    ("step", "int64", False, "The step the call was made in."),
    ("call", "int64", False, "0-based index of the call within its step."),
    ("purpose", "string", False, "What the call was for (`act`, `judge`, a responder...)."),
    ("model", "string", False, "`provider/model` id the call went to."),
    ("messages", "messages", False, "The exact messages sent, in order, with their roles."),
    ("params_json", "string", True, "Sampling parameters sent, those not at their defaults."),
    ("response", "string", False, "The raw text the model returned."),
    ("finish_reason", "string", True, "Why generation stopped, as the API said."),
    ("prompt_tokens", "int64", False, "Input tokens."),
    ("completion_tokens", "int64", False, "Output tokens."),
    ("reasoning_tokens", "int64", False, "Reasoning tokens, where reported."),
    ("latency_s", "float64", False, "Wall time including retries."),
    ("cost_usd", "float64", False, "Priced cost."),
    ("cached", "bool", False, "Served from the local response cache."),
    ("attempts", "int64", False, "HTTP attempts (1 + retries)."),
)

TABLES = ("episodes", "steps", "calls")
"""The files an export writes, `<table>.parquet`, beside a dataset card (README.md)."""

METRIC_PREFIX = "metric_"
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""Metric names that become columns: identifiers, so SQL, pandas and Spark take them unquoted.
Any other name stays in `metrics_json` only."""

_ROW_GROUP_ROWS = 50_000
_ROW_GROUP_TEXT_BYTES = 64 * 2**20
"""A row group closes at this many rows or this much text: a reader holds one row group at a
time, and the Hugging Face viewer refuses row groups over ~286 MiB in memory."""
_ZSTD_LEVEL = 9
"""Measured on a 100-episode escape run: a quarter smaller than level 3 for the steps table (a
tenth for calls), in the same export time, which reading the records dominates."""
_STATISTICS = {"run_id", "instance_id", "trial", "step", "call", "status", "purpose", "model"}
"""Columns with min/max statistics (for filtering); long text columns gain nothing from them."""
_HUB_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def export_parquet(run_dir: Path, out: Path | None = None) -> dict[str, Path]:
    """Write a run directory's episodes, steps and model calls as three Parquet tables (zstd,
    explicit schemas: see the *_COLUMNS above) plus a dataset card into `out` (default:
    `RUN_DIR/../<run-id>-parquet/`); return the tables' paths by name. Each episode is its
    latest record (a retried error is superseded), in file order; rows join on (run_id,
    instance_id, trial[, step]). Files are written whole and then renamed into place, so a
    reader never sees half a table."""
    pa, pq = _pyarrow()
    run = RunDirectory(Path(run_dir))
    header = run.read_header()
    if not run.episodes_path.exists():
        raise InvalidFile(f"{run.path}: not a run directory (no {EPISODES_FILE})")
    out_dir = Path(out) if out is not None else run.path.parent / f"{run.run_id}-parquet"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"--out {out_dir}: cannot be created ({describe_os_error(exc, out_dir)}); "
            "pass --out a folder you can write to"
        ) from exc
    # Records are read one at a time, by their offsets: a first pass (no messages) finds the
    # metric columns, a second writes the three tables side by side, a row group at a time, so
    # memory does not grow with the run.
    episodes = EpisodeIndex(run.path, summaries=False)
    count = episodes.count()
    metrics = metric_columns(episodes.read(n) for n in range(count))
    schemas = {
        "episodes": _schema(pa, "episodes", (*EPISODE_COLUMNS, *metrics), run.run_id),
        "steps": _schema(pa, "steps", STEP_COLUMNS, run.run_id),
        "calls": _schema(pa, "calls", CALL_COLUMNS, run.run_id),
    }
    paths = {name: out_dir / f"{name}.parquet" for name in TABLES}
    texts = TextIndex(run.path)
    with ExitStack() as stack:
        writers = {
            name: stack.enter_context(_table_writer(pa, pq, paths[name], schemas[name]))
            for name in TABLES
        }
        for number in range(count):
            record = episodes.read(number)
            texts.attach(record)
            writers["episodes"].add(*_episode_row(record, metrics))
            for row, text_bytes in _step_rows(record):
                writers["steps"].add(row, text_bytes)
            for row, text_bytes in _call_rows(record):
                writers["calls"].add(row, text_bytes)
    _write_text(out_dir / "README.md", dataset_card(header, count))
    return paths


def metric_columns(records: Iterable[EpisodeRecord]) -> list[Column]:
    """One column per metric whose every value is a number, a bool or null, in order of first
    appearance: `bool` where all are bools, `int64` where all are integers (a bool counts as
    0/1), else `float64` (null throughout included). A metric an episode lacks is null there
    (errored episodes have none)."""
    kinds: dict[str, set[str]] = {}
    for record in records:
        for name, value in record.metrics.items():
            kinds.setdefault(name, set()).add(_kind(value))
    columns: list[Column] = []
    for name, seen in kinds.items():
        seen.discard("null")
        if "other" in seen or not _METRIC_NAME.fullmatch(name):
            continue
        # A metric null in every episode (an error rate with nothing to err on) is most often
        # a ratio: float64 keeps its column, so runs of one benchmark share a schema.
        if seen == {"bool"}:
            arrow = "bool"
        elif seen and seen <= {"bool", "int"}:
            arrow = "int64"
        else:
            arrow = "float64"
        columns.append((METRIC_PREFIX + name, arrow, True, f"Per-episode metric `{name}`."))
    return columns


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        # Past int64 a value is kept as a float rather than refused by Arrow.
        return "int" if -(2**63) <= value < 2**63 else "float"
    if isinstance(value, float):
        return "float"
    return "other"


def _episode_row(r: EpisodeRecord, metrics: list[Column]) -> tuple[dict[str, Any], int]:
    row: dict[str, Any] = {
        "run_id": r.run_id,
        "benchmark": r.benchmark,
        "split": r.split,
        "instance_id": r.instance_id,
        "trial": r.trial,
        "seed": r.seed,
        "agent": r.agent,
        "agent_options_json": _json(r.agent_options),
        "model": r.model,
        "status": r.status,
        "error": r.error,
        "n_steps": len(r.steps),
        "n_calls": r.n_calls,
        "n_cached": r.n_cached,
        "prompt_tokens": r.usage.prompt_tokens,
        "completion_tokens": r.usage.completion_tokens,
        "reasoning_tokens": r.usage.reasoning_tokens,
        "cost_usd": r.cost_usd,
        "duration_s": r.duration_s,
        "started_at": _timestamp(r.started_at),
        "finished_at": _timestamp(r.finished_at),
        "initial_observation": r.initial_observation,
        "outcome_json": _json(r.outcome),
        "metrics_json": _json(r.metrics),
    }
    for name, arrow, _, _ in metrics:
        value = r.metrics.get(name[len(METRIC_PREFIX) :])
        if value is not None and arrow != "bool":
            value = int(value) if arrow == "int64" else float(value)
        row[name] = value
    return row, len(r.initial_observation) + len(row["outcome_json"]) + len(row["metrics_json"])


def _step_rows(r: EpisodeRecord) -> Iterator[tuple[dict[str, Any], int]]:
    for s in r.steps:
        row = {
            "run_id": r.run_id,
            "instance_id": r.instance_id,
            "trial": r.trial,
            "step": s.index,
            "observation": s.observation,
            "thought": s.thought,
            "action": s.action,
            "feedback": s.feedback,
            "reward": s.reward,
            "valid": s.valid,
            "terminated": s.terminated,
            "truncated": s.truncated,
            "n_calls": len(s.calls),
            "info_json": _json(s.info),
        }
        text = (s.observation, s.thought, s.action, s.feedback, row["info_json"])
        yield row, sum(map(len, text))


def _call_rows(r: EpisodeRecord) -> Iterator[tuple[dict[str, Any], int]]:
    for s in r.steps:
        for i, c in enumerate(s.calls):
            messages = [{"role": m.role, "content": m.content} for m in c.messages]
            params = c.model_dump(mode="json", include={"params"})["params"]
            row = {
                "run_id": r.run_id,
                "instance_id": r.instance_id,
                "trial": r.trial,
                "step": s.index,
                "call": i,
                "purpose": c.purpose,
                "model": c.model,
                "messages": messages,
                "params_json": None if params is None else _json(params),
                "response": c.response,
                "finish_reason": c.finish_reason,
                "prompt_tokens": c.prompt_tokens,
                "completion_tokens": c.completion_tokens,
                "reasoning_tokens": c.reasoning_tokens,
                "latency_s": c.latency_s,
                "cost_usd": c.cost_usd,
                "cached": c.cached,
                "attempts": c.attempts,
            }
            yield row, len(c.response) + sum(len(m["content"]) for m in messages)


def _json(value: Any) -> str:
    # Compact and unescaped, as episodes.jsonl writes it; NaN stays NaN, as Python reads it.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _timestamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(f"the Parquet export needs pyarrow: {INSTALL_HINT}") from None
    return pyarrow, pyarrow.parquet


def arrow_schema(table: str, metrics: Iterable[Column] = ()) -> Any:
    """The pyarrow schema of one exported table (`episodes` with the given metric columns)."""
    pa, _ = _pyarrow()
    columns = {
        "episodes": (*EPISODE_COLUMNS, *metrics),
        "steps": STEP_COLUMNS,
        "calls": CALL_COLUMNS,
    }
    if table not in columns:
        raise ConfigError(f"table {table!r}: not an exported table; allowed: {', '.join(TABLES)}")
    return _schema(pa, table, columns[table], None)


def _schema(pa: Any, table: str, columns: Iterable[Column], run_id: str | None) -> Any:
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("ms", tz="UTC"),
        "messages": pa.list_(
            pa.struct(
                [
                    pa.field("role", pa.string(), nullable=False),
                    pa.field("content", pa.string(), nullable=False),
                ]
            )
        ),
    }
    fields = [
        pa.field(name, types[arrow], nullable=nullable, metadata={"description": text})
        for name, arrow, nullable, text in columns
    ]
    metadata = {
        "forkingpaths.schema_version": str(PARQUET_SCHEMA_VERSION),
        "forkingpaths.table": table,
    }
    if run_id is not None:
        metadata["forkingpaths.run_id"] = run_id
    return pa.schema(fields, metadata=metadata)


class _TableWriter:
    """Rows of one table, buffered by column and written a row group at a time."""

    def __init__(self, pa: Any, writer: Any, schema: Any) -> None:
        self._pa, self._writer, self._schema = pa, writer, schema
        self._columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        self._rows = self._text_bytes = 0

    def add(self, row: dict[str, Any], text_bytes: int) -> None:
        for name, column in self._columns.items():
            column.append(row[name])
        self._rows += 1
        self._text_bytes += text_bytes
        if self._rows >= _ROW_GROUP_ROWS or self._text_bytes >= _ROW_GROUP_TEXT_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self._rows:
            return
        batch = self._pa.Table.from_pydict(self._columns, schema=self._schema)
        self._writer.write_table(batch, row_group_size=self._rows)
        self._columns = {name: [] for name in self._columns}
        self._rows = self._text_bytes = 0


@contextmanager
def _table_writer(pa: Any, pq: Any, path: Path, schema: Any) -> Iterator[_TableWriter]:
    tmp = path.with_name(path.name + ".tmp")
    try:
        writer = pq.ParquetWriter(
            tmp,
            schema,
            compression="zstd",
            compression_level=_ZSTD_LEVEL,
            write_statistics=[name for name in schema.names if name in _STATISTICS],
        )
        try:
            table = _TableWriter(pa, writer, schema)
            yield table
            table.flush()
        finally:
            writer.close()
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(
            f"{path} cannot be written: {describe_os_error(exc, path)}; "
            "pass --out a folder you can write to"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"{path} cannot be written: {describe_os_error(exc, path)}") from exc


def dataset_card(header: RunHeader, episodes: int) -> str:
    """The export's README.md: a Hugging Face dataset card whose `configs` name each table, so
    `load_dataset(REPO_OR_DIR, "steps")` loads one table (their columns differ, so one config
    over all three files would not load)."""
    configs = "".join(
        f"- config_name: {name}\n  data_files: {name}.parquet\n"
        + ("  default: true\n" if name == "episodes" else "")
        for name in TABLES
    )
    spec = json.dumps(header.spec.model_dump(mode="json"), ensure_ascii=False, indent=2)
    # A fence longer than any run of backticks in the spec, so no value can end it early.
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", spec)), default=0))
    return (
        f"---\nconfigs:\n{configs}tags:\n- forkingpaths\n- agents\n---\n\n"
        "# forkingpaths run export\n\n"
        f"{episodes} episodes of one forkingpaths run as three Parquet tables (schema version "
        f"{PARQUET_SCHEMA_VERSION}): `episodes`, `steps` and `calls` (every model call with the "
        "exact messages sent). Rows join on `run_id`, `instance_id`, `trial` and `step`; the "
        "columns are documented in forkingpaths' docs/export-parquet.md and in each file's "
        "field metadata.\n\n"
        '```python\nfrom datasets import load_dataset\n\nsteps = load_dataset("REPO", "steps")\n'
        "```\n\nThe run's spec (re-run it with `forkingpaths run`):\n\n"
        f"{fence}json\n{spec}\n{fence}\n"
    )


def push_to_hub(out_dir: Path, repo: str) -> None:
    """Upload an export (`export_parquet`'s folder) to the Hugging Face Hub as the dataset
    `repo` (OWNER/NAME), created private if it does not exist: records hold every prompt and
    reply, so publishing is the owner's explicit step. Needs huggingface_hub and HF_TOKEN;
    either missing is a ConfigError before anything is sent."""
    out_dir = Path(out_dir)
    for name in TABLES:
        if not (out_dir / f"{name}.parquet").is_file():
            raise ConfigError(
                f"{out_dir}: not a Parquet export (no {name}.parquet); write one with "
                "`forkingpaths export parquet RUN` first"
            )
    if not _HUB_REPO.fullmatch(repo):
        raise ConfigError(f"--push-to-hub {repo!r}: not a Hub dataset id; allowed: OWNER/NAME")
    try:
        import huggingface_hub
    except ImportError:
        raise ConfigError(f"--push-to-hub needs huggingface_hub: {INSTALL_HINT}") from None
    token = os.environ.get("HF_TOKEN")
    if not token:
        raise ConfigError(
            "--push-to-hub needs a Hugging Face write token in HF_TOKEN "
            "(https://huggingface.co/settings/tokens)"
        )
    api = huggingface_hub.HfApi(token=token)
    try:
        api.create_repo(repo, repo_type="dataset", private=True, exist_ok=True)
        api.upload_folder(
            folder_path=str(out_dir),
            repo_id=repo,
            repo_type="dataset",
            allow_patterns=[*(f"{name}.parquet" for name in TABLES), "README.md"],
            commit_message=f"forkingpaths export of {out_dir.name}",
        )
    except OSError as exc:  # the Hub's HTTP errors are OSErrors, as are network failures
        raise ForkingPathsError(f"--push-to-hub {repo}: upload failed: {exc}") from exc


__all__ = [
    "CALL_COLUMNS",
    "EPISODE_COLUMNS",
    "PARQUET_SCHEMA_VERSION",
    "STEP_COLUMNS",
    "TABLES",
    "arrow_schema",
    "dataset_card",
    "export_parquet",
    "metric_columns",
    "push_to_hub",
]
