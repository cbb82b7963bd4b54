"""The run directory: spec.json, append-only episodes.jsonl and texts.jsonl, metrics.json."""

from __future__ import annotations

import json
import logging
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from forkingpaths.core.errors import ConfigError, InvalidFile, SpecMismatch
from forkingpaths.core.jsonl import append_jsonl, repair_tail
from forkingpaths.core.records import (
    CALL_MESSAGES,
    RECORD_SCHEMA_VERSION,
    SCHEMA_VERSION,
    EpisodeRecord,
    RunHeader,
    RunMetrics,
    RunSpec,
    compact_record,
    expand_record,
)
from forkingpaths.runner.transcripts import TEXTS_FILE, TextStore

log = logging.getLogger(__name__)

SPEC_FILE = "spec.json"
EPISODES_FILE = "episodes.jsonl"
METRICS_FILE = "metrics.json"
REPORT_FILE = "report.html"
INDEX_FILE = "episodes.index.jsonl"
"""One line per line of episodes.jsonl: its byte offset and length and a summary of the episode
(`episode_summary`), so a viewer lists and opens episodes of any run without reading it whole.
Written after the record it describes; a reader trusts it only where it matches the records."""

_SUMMARY_TEXT_CHARS = 120
"""Longest string kept in a summary (an outcome's text, the first line of an error)."""

_KEY_PACKAGES = ("forkingpaths", "openai", "pydantic", "numpy", "aiohttp")


def collect_environment() -> dict[str, Any]:
    """Versions and revision recorded with every run so its results can be reproduced."""
    packages = {}
    for name in _KEY_PACKAGES:
        try:
            packages[name] = version(name)
        except PackageNotFoundError:
            packages[name] = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": packages,
        "git_revision": _git_revision(),
        "argv": sys.argv,
    }


def check_run_id(run_id: str) -> None:
    """Refuse a run id that is not a plain folder name: a run directory is always created
    inside the runs directory, never beside or above it."""
    if not run_id.strip():
        problem = "it is empty"
    elif "/" in run_id or "\\" in run_id:
        problem = "it contains a path separator"
    elif run_id.startswith("."):
        problem = "it starts with '.'"
    elif any(ord(ch) < 32 for ch in run_id):
        problem = "it contains a control character"
    else:
        return
    raise ConfigError(
        f"--run-id {run_id!r}: not a plain folder name ({problem}); a run id names one folder "
        "inside --runs-dir: no '/' or '\\', not empty, not starting with '.'"
    )


def describe_os_error(exc: OSError, path: Path) -> str:
    """What went wrong creating or writing `path`, naming the file or folder at fault: the
    first existing component that is a file where a folder is needed, else the error's own
    file name and reason."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        for part in reversed([path, *path.parents]):
            if part.exists() and not part.is_dir():
                return f"{part} is a file, not a folder"
    name = exc.filename if exc.filename is not None else path
    return f"{name}: {exc.strerror or exc}"


def _git_revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


class RunDirectory:
    """One run on disk. Episodes are appended one JSON line each and flushed, so a killed run
    loses at most the episodes in flight; a torn last line is dropped on the next open. The
    text of every model call's messages goes to the run's text store (`texts.jsonl`), once per
    distinct chunk, before the record that refers to it; a step's observation and feedback stay
    in the record's own line, each written once (`compact_record`)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.run_id = self.path.name
        self.texts = TextStore(self.path / TEXTS_FILE)

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES_FILE

    @property
    def metrics_path(self) -> Path:
        return self.path / METRICS_FILE

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_FILE

    def exists(self) -> bool:
        return (self.path / SPEC_FILE).exists()

    def read_header(self) -> RunHeader:
        spec_path = self.path / SPEC_FILE
        if not spec_path.exists():
            raise InvalidFile(f"{self.path}: not a run directory (no {SPEC_FILE})")
        try:
            header = RunHeader.model_validate_json(spec_path.read_text())
        except ValidationError as exc:
            raise InvalidFile(f"{spec_path}: {exc.errors()[0]['msg']}") from exc
        if header.schema_version > SCHEMA_VERSION:
            raise InvalidFile(
                f"{spec_path}: schema_version {header.schema_version} is newer than this "
                f"forkingpaths understands ({SCHEMA_VERSION}); upgrade forkingpaths"
            )
        return header

    def open(self, spec: RunSpec) -> RunHeader:
        """Create the directory for `spec`, or reopen it if it holds the same spec. A directory
        that cannot be created or written is a ConfigError naming the path and the problem."""
        try:
            return self._open(spec)
        except OSError as exc:
            raise ConfigError(
                f"run directory {self.path} cannot be written: {describe_os_error(exc, self.path)}"
                "; pass --runs-dir a folder you can write to"
            ) from exc

    def _open(self, spec: RunSpec) -> RunHeader:
        if self.exists():
            header = self.read_header()
            diff = header.spec.differing_fields(spec)
            if diff:
                raise SpecMismatch(
                    f"run directory {self.path} holds a different run; differing fields: "
                    f"{', '.join(diff)}. Re-run with the original options to resume, "
                    f"pass --force-new to start a new run, or choose another --run-id."
                )
            self._repair_tail()
            # Opened for appending now, so a read-only run directory is refused before any
            # episode is played rather than when its first record is written.
            with self.episodes_path.open("a", encoding="utf-8"):
                pass
            return header
        self.path.mkdir(parents=True, exist_ok=True)
        header = RunHeader(run_id=self.run_id, spec=spec, environment=collect_environment())
        _atomic_write(self.path / SPEC_FILE, header.model_dump_json(indent=2))
        self.episodes_path.touch()
        return header

    def _repair_tail(self) -> None:
        """Drop a torn final line left by a process killed mid-write."""
        repair_tail(self.episodes_path)
        repair_tail(self.texts.path)
        repair_tail(self.index_path)

    @property
    def index_path(self) -> Path:
        return self.path / INDEX_FILE

    def append(self, record: EpisodeRecord) -> None:
        """Write one finished episode (its message text into the text store first) in the
        compact form of its schema (`compact_record`: no text twice, yet the line alone gives
        the record back), then its line of the episode index."""
        # The messages are not dumped: every call resends its history, and copying it per call
        # was a third of the write. The store reads the frozen messages' own field dicts.
        data = record.model_dump(mode="json", exclude=CALL_MESSAGES)
        for step_data, step in zip(data["steps"], record.steps, strict=True):
            for call_data, call in zip(step_data["calls"], step.calls, strict=True):
                call_data["messages"] = [message.__dict__ for message in call.messages]
        self.texts.store(data)
        line = json.dumps(compact_record(data), ensure_ascii=False, separators=(",", ":")) + "\n"
        offset = self.episodes_path.stat().st_size if self.episodes_path.exists() else 0
        append_jsonl(self.episodes_path, line, fsync=True)
        entry = {"offset": offset, "length": len(line.encode()), **episode_summary(data)}
        append_jsonl(self.index_path, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))

    def iter_records(self) -> Iterator[EpisodeRecord]:
        """Every record in file order, message text not loaded (messages hold chunk ids); a
        torn or invalid line is skipped with a warning, a record of a newer schema refused."""
        if not self.episodes_path.exists():
            return
        with self.episodes_path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = parse_record(line)
                except InvalidFile as exc:
                    raise InvalidFile(f"{self.episodes_path}:{lineno}: {exc}") from None
                except ValueError:
                    log.warning("%s:%d: skipped an unreadable record", self.episodes_path, lineno)
                    continue
                yield record

    def latest_records(self, *, transcripts: bool = False) -> dict[tuple[str, int], EpisodeRecord]:
        """The last record per (instance, trial): a retried episode supersedes its error. With
        `transcripts` every call's messages carry their text."""
        latest: dict[tuple[str, int], EpisodeRecord] = {}
        for record in self.iter_records():
            latest[record.key] = record
        if transcripts:
            self.texts.resolve(latest.values())
        return latest

    def write_metrics(self, metrics: RunMetrics) -> None:
        # Python-mode dump: the benchmark's own values are written exactly as json writes them.
        _atomic_write(self.metrics_path, json.dumps(metrics.model_dump(), indent=2))

    def read_metrics(self) -> RunMetrics:
        """metrics.json, checked against its schema."""
        try:
            metrics = RunMetrics.model_validate_json(self.metrics_path.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as exc:
            raise InvalidFile(f"{self.metrics_path}: not a readable metrics.json ({exc})") from exc
        if metrics.schema_version > SCHEMA_VERSION:
            raise InvalidFile(
                f"{self.metrics_path}: schema_version {metrics.schema_version} is newer than this "
                f"forkingpaths understands ({SCHEMA_VERSION}); upgrade forkingpaths"
            )
        return metrics


class RecordWriter:
    """Appends a run's records from a thread of its own, in the order they are given.

    Each append waits for the disk twice (the text store, then the record: `fsync`); on the
    event loop that stalled every episode in flight, about 5 ms per episode (a third of the
    runner's time at zero model latency). A record handed over here is on disk once `close`
    returns; a killed process loses the ones still queued, which a resume plays again, as it
    does the episodes in flight. A failed append (a full disk) is raised by the next `append`
    or by `close`, and nothing after it is written.
    """

    def __init__(self, run_dir: RunDirectory) -> None:
        self.run_dir = run_dir
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="records")
        self._pending: list[Future[None]] = []
        self._failed: BaseException | None = None

    def append(self, record: EpisodeRecord) -> None:
        """Queue one finished episode for `RunDirectory.append`."""
        self._collect(wait=False)
        self._pending.append(self._thread.submit(self._write, record))

    def _write(self, record: EpisodeRecord) -> None:
        if self._failed is None:  # after a failure nothing more is written, in order
            try:
                self.run_dir.append(record)
            except BaseException as exc:
                self._failed = exc
                raise

    def _collect(self, *, wait: bool) -> None:
        still: list[Future[None]] = []
        for future in self._pending:
            if wait or future.done():
                future.exception()  # waits; the failure itself is kept in _failed
            else:
                still.append(future)
        self._pending = still
        if self._failed is not None:
            raise self._failed

    def close(self) -> None:
        """Wait until every queued record is written; raise the first failure."""
        try:
            self._collect(wait=True)
        finally:
            self._thread.shutdown(wait=True)


_FULL_LINES = ('{"schema_version":1,', '{"schema_version":2,')
"""How lines of the record schemas that write every field out start: they need no expanding."""


def parse_record(line: str | bytes) -> EpisodeRecord:
    """One line of episodes.jsonl as its record, whatever schema version wrote it. A line of
    schema 1 or 2 goes straight through pydantic's JSON validation, the fast path it always
    took; a later one (`compact_record`) is parsed, expanded (`expand_record`: what it left
    out put back) and validated. Raises ValueError (ValidationError included) for a line that
    is no record, InvalidFile for a record of a newer schema than this version reads."""
    full = _FULL_LINES if isinstance(line, str) else tuple(p.encode() for p in _FULL_LINES)
    if line.startswith(full):
        try:
            record = EpisodeRecord.model_validate_json(line)
        except ValidationError:
            pass  # unreadable: parsed below, to be refused the same way as any line
        else:
            return record
    data = json.loads(line)
    if isinstance(data, dict):
        _check_version(data.get("schema_version"))
    return EpisodeRecord.model_validate(expand_record(data))


def _check_version(version: Any) -> None:
    if isinstance(version, int) and version > RECORD_SCHEMA_VERSION:
        raise InvalidFile(
            f"record schema_version {version} is newer than this forkingpaths understands "
            f"({RECORD_SCHEMA_VERSION}); upgrade forkingpaths"
        )


def episode_summary(data: dict[str, Any]) -> dict[str, Any]:
    """What a list of a run's episodes shows of one (a dumped EpisodeRecord): its key, status,
    size, usage and scalar metrics and outcome; long text cut to a line."""
    usage = data.get("usage") or {}
    error = data.get("error")
    return {
        "instance_id": data.get("instance_id", ""),
        "trial": data.get("trial", 0),
        "split": data.get("split", ""),
        "seed": data.get("seed", 0),
        "status": data.get("status", "ok"),
        "error": _short_text(error) if error else None,
        "steps": len(data.get("steps") or ()),
        "calls": data.get("n_calls", 0),
        "tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
        "cost_usd": data.get("cost_usd", 0.0),
        "duration_s": data.get("duration_s", 0.0),
        "metrics": _scalars(data.get("metrics") or {}),
        "outcome": _scalars(data.get("outcome") or {}),
    }


def _scalars(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None or isinstance(value, bool | int | float):
            out[key] = value
        elif isinstance(value, str):
            out[key] = _short_text(value)
    return out


def _short_text(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= _SUMMARY_TEXT_CHARS else line[: _SUMMARY_TEXT_CHARS - 1] + "…"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def load_records(run_dir: str | Path, *, transcripts: bool = True) -> list[EpisodeRecord]:
    """The latest record of every episode of a run directory, in file order, every model call
    with the exact messages it sent (`transcripts=False` skips reading the text store).
    Records of schema 1 (before transcripts) load with calls that have no messages."""
    run = RunDirectory(Path(run_dir))
    if not run.episodes_path.exists():
        raise InvalidFile(f"{run.path}: not a run directory (no {EPISODES_FILE})")
    return list(run.latest_records(transcripts=transcripts).values())
