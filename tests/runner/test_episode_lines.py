"""Real runs of every benchmark written in record schema 3 read back exactly as they were
recorded: through the run directory, the viewer's index by byte offset, and the text store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path

import pytest
from tests.web.runs import small_quick_specs

from forkingpaths.core.records import (
    EpisodeRecord,
    RunOptions,
    RunSpec,
    record_from_wire,
    record_to_wire,
)
from forkingpaths.runner.index import EpisodeIndex
from forkingpaths.runner.run import RunResult, execute_run
from forkingpaths.runner.rundir import RunDirectory, load_records

SPECS = small_quick_specs()


class _Recorded:
    """Keeps every record as the runner held it in memory when it appended it."""

    def __init__(self) -> None:
        self.records: list[EpisodeRecord] = []
        self.run_dir: RunDirectory | None = None

    def run_started(
        self, run_dir: RunDirectory, spec: RunSpec, recorded: Iterable[EpisodeRecord]
    ) -> None:
        self.run_dir = run_dir

    def episode_recorded(self, record: EpisodeRecord) -> None:
        self.records.append(record.model_copy(deep=True))

    def run_finished(self, result: RunResult | None) -> None:
        pass


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, _Recorded]:
    runs_dir = tmp_path_factory.mktemp("runs")
    out = {}
    for spec in SPECS:
        seen = _Recorded()
        options = RunOptions(progress=False, cache=False)
        asyncio.run(execute_run(spec, options, runs_dir=runs_dir, observers=[seen]))
        out[f"{spec.benchmark} {spec.agent}"] = seen
    return out


@pytest.mark.parametrize("name", [f"{s.benchmark} {s.agent}" for s in SPECS])
def test_a_run_reads_back_as_it_was_recorded(name: str, played: dict[str, _Recorded]) -> None:
    seen = played[name]
    assert seen.run_dir is not None and seen.records
    recorded = {r.key: r for r in seen.records}
    loaded = {r.key: r for r in load_records(seen.run_dir.path)}
    assert loaded.keys() == recorded.keys()
    for key, record in recorded.items():
        # Equal dumps: floats exactly as recorded (NaN, -0.0), every call's messages included.
        assert loaded[key].model_dump_json() == record.model_dump_json(), key
    # The viewer opens an episode by its byte offset: one line alone gives it back.
    index = EpisodeIndex(seen.run_dir.path)
    unloaded = {r.key: r for r in load_records(seen.run_dir.path, transcripts=False)}
    for number in range(index.count()):
        record = index.read(number)
        assert record == unloaded[record.key]
        assert [s.observation for s in record.steps] == [
            s.observation for s in recorded[record.key].steps
        ]


@pytest.mark.parametrize("name", [f"{s.benchmark} {s.agent}" for s in SPECS])
def test_a_record_sent_between_processes_arrives_as_it_was(
    name: str, played: dict[str, _Recorded]
) -> None:
    # What a Ray worker sends the driver: each distinct message once, whatever resent it.
    for record in played[name].records:
        wire = record_to_wire(record)
        arrived = record_from_wire(wire)
        assert arrived.model_dump_json() == record.model_dump_json(), record.key
        messages = {(m.role, m.content) for s in record.steps for c in s.calls for m in c.messages}
        assert len(json.loads(wire)["wire_messages"]) == len(messages)
        assert len(wire) <= len(record.model_dump_json())


def test_a_react_episode_on_the_wire_grows_with_its_length_not_its_square(
    played: dict[str, _Recorded],
) -> None:
    record = max(played["griddag-v1 react"].records, key=lambda r: len(r.steps))
    assert len(record.steps) >= 8
    # Every call resends the whole history: the full dump holds the system prompt once per
    # call, the wire once, and so for every message of the history.
    system = json.dumps(record.steps[0].calls[0].messages[0].content, ensure_ascii=False)
    assert record.model_dump_json().count(system) == record.n_calls >= 8
    assert record_to_wire(record).count(system) == 1
    assert len(record.model_dump_json()) > 3 * len(record_to_wire(record))


def _lines(run_dir: RunDirectory) -> list[dict[str, object]]:
    return [json.loads(line) for line in run_dir.episodes_path.read_text().splitlines()]


def test_griddag_writes_no_observation_it_already_holds(played: dict[str, _Recorded]) -> None:
    seen = next(v for k, v in played.items() if k.startswith("griddag") and "react" in k)
    assert seen.run_dir is not None
    lines = _lines(seen.run_dir)
    steps = [step for line in lines for step in line["steps"]]  # type: ignore[attr-defined]
    # Each step's observation is the text just before it (the last feedback, or the reset's).
    assert steps and not any("observation" in step for step in steps)
    full = sum(len(r.model_dump_json()) for r in load_records(seen.run_dir.path, transcripts=False))
    assert seen.run_dir.episodes_path.stat().st_size < 0.7 * full


def test_a_dialogue_is_not_written_again_each_turn(played: dict[str, _Recorded]) -> None:
    # TurtleSoup's observation is the whole dialogue so far: each step's is the last one's with
    # a question and its answer added, written as an edit of it.
    seen = next(v for k, v in played.items() if k.startswith("turtlesoup"))
    assert seen.run_dir is not None
    for line, record in zip(_lines(seen.run_dir), seen.run_dir.iter_records(), strict=True):
        written = [
            step.get("observation", step.get("observation_edit", ""))
            for step in line["steps"]  # type: ignore[attr-defined]
        ]
        assert (
            len(json.dumps(written, ensure_ascii=False))
            < sum(len(s.observation) for s in record.steps) / 5
        )


async def test_an_old_run_resumed_mixes_lines_and_reads_whole(tmp_path: Path) -> None:
    spec = RunSpec(
        benchmark="griddag-v1",
        split="main",
        instances=["low-easy-s0", "medium-easy-s0", "high-easy-s0"],
        agent="react",
        model="scripted/griddag-frontier",
    )
    options = RunOptions(progress=False, cache=False)
    first = await execute_run(spec, options, runs_dir=tmp_path / "a")
    run_dir = first.run_dir
    expected = {r.key: r for r in load_records(run_dir.path)}
    # The run as the previous version wrote it, killed after its first two episodes: every
    # field of a line written out, schema 2, and no episode index yet.
    old = list(run_dir.iter_records())[:2]
    lines = []
    for record in old:
        data = record.model_dump(mode="json")
        data["schema_version"] = 2
        lines.append(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    run_dir.episodes_path.write_text("".join(lines))
    run_dir.index_path.unlink()
    again = await execute_run(spec, options, runs_dir=tmp_path / "a")
    assert again.run_dir.path == run_dir.path
    versions = [json.loads(line)["schema_version"] for line in run_dir.episodes_path.open()]
    assert versions == [2, 2, 3]
    loaded = {r.key: r for r in load_records(run_dir.path)}
    assert loaded.keys() == expected.keys()
    for key, record in expected.items():
        mine = loaded[key].model_copy(update={"schema_version": record.schema_version})
        assert _without_times(mine) == _without_times(record), key
    assert json.loads(run_dir.metrics_path.read_text())["metrics"] == first.metrics["metrics"]
    index = EpisodeIndex(run_dir.path)
    assert sorted(index.read(n).key for n in range(index.count())) == sorted(expected)


def _without_times(record: EpisodeRecord) -> str:
    """The record's JSON without its wall-clock times (a replayed episode takes its own)."""
    data = record.model_dump(mode="json", exclude={"started_at", "finished_at", "duration_s"})
    for step in data["steps"]:
        for call in step["calls"]:
            del call["latency_s"]
    return json.dumps(data)
