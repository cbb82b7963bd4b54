"""The resumable work directory of a construction pipeline: settings, state, rows, call log and
report (JSONL through `core.jsonl`), the models it is built with, and its items built
concurrently."""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from forkingpaths.core.chat import ChatModel, Completion, Message, ModelParams
from forkingpaths.core.errors import ConfigError, InvalidFile, SpecMismatch, shown
from forkingpaths.core.jsonl import append_jsonl, read_jsonl, write_jsonl
from forkingpaths.core.records import ModelCallRecord, ModelOptions
from forkingpaths.models.factory import RunParamsModel, check_model_access, make_model
from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)

CONFIG_FILE = "pipeline.json"
"""The settings a pipeline directory was built with; a re-run with other settings is refused."""
STATE_FILE = "state.jsonl"
"""One line per finished item (Combo: a fusion; Explore: a level or a seed); resume reads it."""
CALLS_FILE = "calls.jsonl"
"""One line per model call: the item, then the ModelCallRecord fields."""
REPORT_FILE = "report.json"
COMBO_ROWS = "combo.jsonl"
EXPLORE_ROWS = "explore.jsonl"
"""Kept rows, in the release format of `tasks.py` (contract §1)."""


class PipelineReport(BaseModel):
    """What a pipeline directory holds after a run (cumulative over resumed runs)."""

    pipeline: Literal["combo", "explore"]
    """Which pipeline built the directory."""
    kept: int = 0
    """Rows written (Explore: levels, level 0 included)."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Reason -> items dropped for it (Explore: seeds whose loop ended on a failure)."""
    flagged: int = 0
    """Kept rows carrying a diversity flag (Combo)."""
    calls: int = 0
    """Model calls logged in calls.jsonl."""
    finished: int = 0
    """Items finished (Combo: fusions tried; Explore: seeds done)."""
    resumed: int = 0
    """Items found finished when this run started, and skipped."""
    stopped: dict[str, int] = Field(default_factory=dict)
    """Explore: seeds by why their level loop ended (`max_levels` included)."""


class PipelineDir:
    """A pipeline's output directory: settings, state, rows, call log and report.

    Resume protocol: a row is appended to the rows file before its state line, so a crash
    between the two leaves a row that no state line commits; opening the directory removes such
    rows and any torn last line, and the item is built again.
    """

    def __init__(
        self, out_dir: Path, pipeline: Literal["combo", "explore"], config: Mapping[str, Any]
    ) -> None:
        self.path = Path(out_dir)
        self.pipeline: Literal["combo", "explore"] = pipeline
        self.config = dict(config)
        self.rows_path = self.path / (COMBO_ROWS if pipeline == "combo" else EXPLORE_ROWS)
        self.state: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []

    def open(self) -> None:
        """Create the directory or check its settings, then load state and committed rows."""
        self.path.mkdir(parents=True, exist_ok=True)
        config_path = self.path / CONFIG_FILE
        if config_path.exists():
            try:
                stored = json.loads(config_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise InvalidFile(f"{config_path}: not JSON ({exc})") from exc
            differing = sorted(
                key
                for key in set(stored) | set(self.config)
                if stored.get(key) != self.config.get(key)
            )
            if differing:
                changes = "; ".join(
                    f"{k}: {shown(stored.get(k))} -> {shown(self.config.get(k))}" for k in differing
                )
                raise SpecMismatch(
                    f"{self.path} holds a {stored.get('pipeline', '?')} pipeline built with other"
                    f" settings ({changes}); use another output directory or the same settings"
                )
        else:
            config_path.write_text(json.dumps(self.config, indent=2) + "\n", encoding="utf-8")
        self.state = read_jsonl(self.path / STATE_FILE)
        committed = {e["item"] for e in self.state if e.get("status") == "kept"}
        rows = read_jsonl(self.rows_path)
        self.rows = [r for r in rows if r.get("id") in committed]
        if len(self.rows) != len(rows):
            log.warning(
                "%s: removing %d rows no state line commits (interrupted run)",
                self.rows_path,
                len(rows) - len(self.rows),
            )
            write_jsonl(self.rows_path, self.rows)

    def commit(self, entry: Mapping[str, Any], row: Mapping[str, Any] | None = None) -> None:
        """Append `row` (when given) to the rows file, then `entry` to the state file."""
        if row is not None:
            append_jsonl(self.rows_path, row)
            self.rows.append(dict(row))
        append_jsonl(self.path / STATE_FILE, entry)
        self.state.append(dict(entry))

    def record_call(self, item: str, completion: Completion, purpose: str) -> None:
        """Append one model call to calls.jsonl."""
        record = ModelCallRecord.from_completion(completion, purpose=purpose)
        append_jsonl(self.path / CALLS_FILE, {"item": item, **record.model_dump(mode="json")})

    def report(self, resumed: int) -> PipelineReport:
        """The report of the directory as it stands, also written to report.json."""
        calls_path = self.path / CALLS_FILE
        calls = 0
        if calls_path.exists():
            with calls_path.open(encoding="utf-8") as handle:
                calls = sum(1 for line in handle if line.strip())
        kept = sum(1 for e in self.state if e.get("status") == "kept")
        flagged = sum(1 for e in self.state if e.get("status") == "kept" and e.get("flag"))
        if self.pipeline == "combo":
            finished = [e for e in self.state if e.get("status") in ("kept", "dropped")]
            dropped = Counter(e["reason"] for e in finished if e["status"] == "dropped")
            stopped: Counter[str] = Counter()
        else:
            finished = [e for e in self.state if e.get("status") == "done"]
            stopped = Counter(e["reason"] for e in finished)
            dropped = Counter(e["reason"] for e in finished if e["reason"] != "max_levels")
        report = PipelineReport(
            pipeline=self.pipeline,
            kept=kept,
            dropped=dict(sorted(dropped.items())),
            flagged=flagged,
            calls=calls,
            finished=len(finished),
            resumed=resumed,
            stopped=dict(sorted(stopped.items())),
        )
        (self.path / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n")
        return report


class LoggedModel:
    """A ChatModel that logs every call it makes to a PipelineDir (for callees such as
    `judge_constraints` that call a model themselves)."""

    def __init__(self, model: ChatModel, directory: PipelineDir, item: str, purpose: str) -> None:
        self.name = model.name
        self._model, self._directory, self._item, self._purpose = model, directory, item, purpose

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        completion = await self._model.complete(messages, params)
        self._directory.record_call(self._item, completion, self._purpose)
        return completion


def check_count(name: str, value: Any, minimum: int) -> None:
    """Refuse a count setting below `minimum` (or not an integer), naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{name}: expected an integer >= {minimum}, got {shown(value)}")


async def run_all(coroutines: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run `coroutines` concurrently; the first failure cancels the others and is raised as
    itself (not wrapped in an ExceptionGroup), so a ModelError reaches the caller as one."""
    try:
        async with asyncio.TaskGroup() as group:
            for coroutine in coroutines:
                group.create_task(coroutine)
    except BaseExceptionGroup as failures:
        raise failures.exceptions[0] from None


def build_model(model_id: str, options: ModelOptions | None, runtime: ModelRuntime) -> ChatModel:
    """The chat model of a model id with the run's sampling parameters (access checked)."""
    options = options if options is not None else ModelOptions()
    check_model_access(model_id, options)
    return RunParamsModel(make_model(model_id, options, runtime), options.params)
