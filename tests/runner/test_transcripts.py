"""Complete transcripts: every call's exact request in the records, its text stored once per run,
replayable; old run directories still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.records import (
    RECORD_SCHEMA_VERSION,
    EpisodeRecord,
    ModelCallRecord,
    ModelOptions,
    RunOptions,
    RunSpec,
    StepRecord,
)
from forkingpaths.models.factory import make_model
from forkingpaths.models.mockserver import MockServer
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RunDirectory, load_records
from forkingpaths.runner.transcripts import TEXTS_FILE, split_chunks

INSTANCES = ["low-easy-s0", "medium-easy-s0"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))


@given(st.text(alphabet=st.sampled_from("ab\n é中"), max_size=400))
def test_chunks_join_back_to_the_text(text: str) -> None:
    chunks = split_chunks(text)
    assert "".join(chunks) == text
    assert all(chunks) or chunks == [""]


def test_an_edited_prompt_shares_its_unchanged_chunks() -> None:
    lines = [f"Q{i}: is the answer {i * 7}?\nA{i}: No\n" for i in range(60)]
    before = "".join(lines)
    after = "".join([*lines[:30], "Q99: inserted?\nA99: Yes\n", *lines[30:]])
    shared = set(split_chunks(before)) & set(split_chunks(after))
    # Only the chunks around the insertion differ.
    assert len(set(split_chunks(after)) - shared) <= 3


async def test_records_keep_the_exact_request_through_the_openai_client(tmp_path: Path) -> None:
    async with MockServer() as server:
        spec = RunSpec(
            benchmark="griddag",
            split="main",
            instances=INSTANCES,
            agent="react",
            model="openai-compat/griddag-frontier",
            model_options=ModelOptions(base_url=server.base_url, params=ModelParams(seed=7)),
        )
        result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
        records = load_records(result.run_dir.path)
        model = make_model("openai-compat/griddag-frontier", spec.model_options)
        calls = [call for record in records for step in record.steps for call in step.calls]
        assert len(calls) == sum(len(r.steps) for r in records) > 10
        for call in calls[:: max(1, len(calls) // 12)]:
            request = call.request()
            assert request.messages[0].role == "system"
            assert request.messages[-1].role == "user"
            assert request.params.seed == 7 and call.finish_reason == "stop"
            # Replaying the recorded request gives the recorded reply: it is the request sent.
            replay = await model.complete(request.messages, request.params)
            assert replay.text == call.response
        await model.aclose()  # type: ignore[attr-defined]
    first_call = records[0].steps[0].calls[0]
    history = records[0].steps[3].calls[0].messages
    # A later call repeats the earlier messages of the episode: the same text, stored once.
    assert history[: len(first_call.messages)] == first_call.messages


async def test_shared_history_is_stored_once_per_run(tmp_path: Path) -> None:
    spec = RunSpec(
        benchmark="griddag",
        split="main",
        instances=INSTANCES,
        agent="react",
        model="scripted/griddag-frontier",
    )
    result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
    path = result.run_dir.path
    lines = [json.loads(line) for line in (path / TEXTS_FILE).read_text().splitlines()]
    messages = [line for line in lines if "role" in line]
    records = load_records(path)
    sent = sum(len(c.messages) for r in records for s in r.steps for c in s.calls)
    distinct = {
        (m.role, m.content) for r in records for s in r.steps for c in s.calls for m in c.messages
    }
    # Each call resends the whole history, yet the store holds each message of each chain once:
    # the system prompt shared by the episodes, then per step the observation and the reply
    # (the last reply is never sent back), not a copy per call.
    assert sent > 3 * len(messages)
    assert len(messages) == 1 + sum(2 * len(r.steps) - 1 for r in records)
    assert len({line["text"] for line in lines if "text" in line}) == len(
        [line for line in lines if "text" in line]
    )
    assert len(distinct) <= len(messages)
    on_disk = [json.loads(line) for line in (path / "episodes.jsonl").read_text().splitlines()]
    call = on_disk[0]["steps"][2]["calls"][0]
    # On disk the messages are left out (at their default, []): the reference stands for them.
    assert "messages" not in call and call["messages_ref"]


def _v1_line(run_id: str) -> str:
    """An episodes.jsonl line as forkingpaths wrote it before transcripts (schema 1)."""
    record = EpisodeRecord(
        run_id=run_id,
        benchmark="griddag-v1",
        split="main",
        instance_id="low-easy-s0",
        seed=3,
        agent="react",
        model="scripted/griddag-frontier",
        steps=[
            StepRecord(
                index=0,
                observation="o",
                action="up",
                feedback="f",
                calls=[ModelCallRecord(model="scripted/griddag-frontier", response="up")],
            )
        ],
    ).model_dump(mode="json")
    record["schema_version"] = 1
    for step in record["steps"]:
        for call in step["calls"]:
            for field in ("messages", "messages_ref", "params", "finish_reason"):
                del call[field]
    return json.dumps(record)


def test_a_run_from_before_transcripts_still_loads(tmp_path: Path) -> None:
    run = tmp_path / "old-run"
    run.mkdir()
    (run / "episodes.jsonl").write_text(_v1_line("old-run") + "\n")
    (record,) = load_records(run)
    call = record.steps[0].calls[0]
    assert record.schema_version == 1 and call.response == "up"
    assert call.messages == [] and call.params is None


def test_a_record_from_a_newer_forkingpaths_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "new-run"
    run.mkdir()
    line = json.loads(_v1_line("new-run"))
    line["schema_version"] = RECORD_SCHEMA_VERSION + 1
    (run / "episodes.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InvalidFile, match="newer than this forkingpaths understands"):
        load_records(run)


def test_a_missing_run_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidFile, match="not a run directory"):
        load_records(tmp_path / "nowhere")


def _call(messages: list[Message]) -> ModelCallRecord:
    return ModelCallRecord(model="scripted/echo", response="ok", messages=messages)


def _record(calls: list[ModelCallRecord], instance: str = "a") -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r",
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        seed=0,
        agent="react",
        steps=[
            StepRecord(index=0, observation="o", action="x", feedback="f", calls=calls),
        ],
    )


def test_calls_that_extend_diverge_from_or_repeat_a_history_read_back_whole(
    tmp_path: Path,
) -> None:
    # The store skips a call's messages that repeat the previous call's: a history grown by a
    # turn, one cut back to another branch, one equal in value but rebuilt as new objects.
    system, first = Message(role="system", content="rules"), Message(role="user", content="u1")
    reply, second = Message(role="assistant", content="a1"), Message(role="user", content="u2")
    rebuilt = [Message(role=m.role, content=m.content) for m in (system, first, reply, second)]
    histories = [
        [system, first],
        [system, first, reply, second],  # extends the one before
        [system, Message(role="user", content="judge this")],  # another role's call between
        [*rebuilt, Message(role="assistant", content="a2")],  # equal values, new objects
        [system],  # shorter than the one before
        [],
    ]
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record([_call(list(history)) for history in histories]))
    (record,) = load_records(run.path)
    assert [call.messages for call in record.steps[0].calls] == histories


def test_a_torn_text_line_is_cut_and_the_store_goes_on(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record([_call([Message(role="user", content="first\nsecond\n")])]))
    with run.texts.path.open("a") as handle:
        handle.write('{"id": "deadbeef", "te')  # a writer killed mid-line
    again = RunDirectory(run.path)
    again.append(_record([_call([Message(role="user", content="third")])], "b"))
    records = load_records(run.path)
    assert [r.steps[0].calls[0].messages[0].content for r in records] == [
        "first\nsecond\n",
        "third",
    ]
    assert all(line.endswith("}") for line in run.texts.path.read_text().splitlines())


def test_a_record_whose_text_is_missing_is_named(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record([_call([Message(role="system", content="rules")])]))
    run.texts.path.write_text("")
    with pytest.raises(InvalidFile, match="episode a trial 0 refers to"):
        load_records(run.path)


def test_an_unloaded_call_cannot_be_replayed(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record([_call([Message(role="user", content="hi")])]))
    (record,) = load_records(run.path, transcripts=False)
    with pytest.raises(ValueError, match="load_records"):
        record.steps[0].calls[0].request()
