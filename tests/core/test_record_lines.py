"""The on-disk form of an episode (record schema 3): no text written twice, every line alone
gives its record back exactly; lines of earlier versions still read."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from forkingpaths.core.records import (
    RECORD_SCHEMA_VERSION,
    EpisodeRecord,
    ModelCallRecord,
    RunSpec,
    StepRecord,
    compact_record,
)
from forkingpaths.runner.rundir import RunDirectory, load_records, parse_record

MODEL = "scripted/griddag-frontier"


def _line(record: EpisodeRecord) -> str:
    return json.dumps(compact_record(record.model_dump(mode="json")), ensure_ascii=False)


def _episode(texts: list[str], **step_fields: object) -> EpisodeRecord:
    """An episode whose initial observation is texts[0], then observation and feedback of each
    step in turn."""
    steps = [
        StepRecord(
            index=i,
            observation=texts[1 + 2 * i],
            action="up",
            feedback=texts[2 + 2 * i],
            **step_fields,  # type: ignore[arg-type]
        )
        for i in range((len(texts) - 1) // 2)
    ]
    return EpisodeRecord(
        run_id="r",
        benchmark="griddag-v1",
        split="main",
        instance_id="low-easy-s0",
        seed=1,
        agent="react",
        model=MODEL,
        initial_observation=texts[0],
        steps=steps,
    )


# Texts that repeat, grow and change a little: what the edits are for.
_LINES = st.sampled_from(
    [
        "You are at [1, 2].\n",
        "Q: is it red?\nA: No\n",
        "- On the desk, there is a pistol.\n",
        "é中🦀\n",
        "\n",
        "x",
    ]
)
_TEXT = st.lists(_LINES, max_size=12).map("".join)


@st.composite
def _texts(draw: st.DrawFn) -> list[str]:
    texts = [draw(_TEXT)]
    for _ in range(draw(st.integers(0, 8)) * 2):
        kind = draw(st.sampled_from(["same", "earlier", "grown", "changed", "moved", "new"]))
        if kind == "same":
            texts.append(texts[-1])
        elif kind == "earlier":
            texts.append(texts[-2] if len(texts) > 1 else texts[-1])
        elif kind == "grown":
            texts.append(texts[-1] + draw(_TEXT))
        elif kind == "changed":
            base, at = texts[-1], draw(st.integers(0, len(texts[-1])))
            texts.append(base[:at] + draw(_TEXT) + base[at + draw(st.integers(0, 3)) :])
        elif kind == "moved":
            # Lines dropped, kept and reordered: what copies of whole lines are for.
            lines = texts[-draw(st.integers(1, min(2, len(texts))))].splitlines(keepends=True)
            order = draw(st.permutations(range(len(lines))))
            kept = [lines[i] for i in order[: draw(st.integers(0, len(lines)))]]
            texts.append(draw(_TEXT) + "".join(kept) + draw(_TEXT))
        else:
            texts.append(draw(_TEXT))
    return texts


@given(
    texts=_texts(),
    reward=st.sampled_from([0.0, -0.0, 1.5, float("nan")]),
    valid=st.booleans(),
    call_model=st.sampled_from([MODEL, "scripted/escape-judge"]),
)
@settings(max_examples=300, deadline=None)
def test_a_line_reads_back_as_the_record_it_was(
    texts: list[str], reward: float, valid: bool, call_model: str
) -> None:
    record = _episode(
        texts,
        reward=reward,
        valid=valid,
        calls=[ModelCallRecord(model=call_model, response="up", latency_s=0.25)],
    )
    back = parse_record(_line(record))
    # Equal dumps: NaN and -0.0 included, which == on the records would not tell.
    assert back.model_dump_json() == record.model_dump_json()


def test_no_text_is_written_twice_in_a_line() -> None:
    dialogue = ["Surface: a man orders soup.\n"]
    for i in range(30):
        dialogue.append(f"{dialogue[-1]}Q{i}: did he drink it before question {i}?\nA{i}: No\n")
    texts = [dialogue[0]]
    for grown in dialogue[1:]:
        texts += [texts[-1], grown]  # each observation repeats the last step's feedback
    record = _episode(texts)
    data = json.loads(_line(record))
    assert data["schema_version"] == RECORD_SCHEMA_VERSION == 3
    assert all("observation" not in step for step in data["steps"])
    # Each feedback adds one question to the dialogue: written as an edit of the text before.
    assert all(step["feedback_edit"][0] == 1 for step in data["steps"])
    assert len(_line(record)) < 3 * len(dialogue[-1])
    assert len(record.model_dump_json()) > 10 * len(dialogue[-1])
    # A step's fields at their defaults, and a call's model when it is the episode's, are left out.
    assert set(data["steps"][0]) == {"index", "action", "feedback_edit"}


def test_a_room_redrawn_below_a_moving_history_copies_its_lines() -> None:
    # Escape's observation: the last moves, then the step number, then the whole room again.
    room = "".join(f"- In the corner, there is item {i}: a long description.\n" for i in range(40))

    def screen(step: int) -> str:
        history = "".join(f"[Step {k}] click(item {k})\n" for k in range(max(0, step - 5), step))
        return f"Recent history:\n{history}\nNext move: [Step {step}]\n{room}Tools in bag: none"

    texts = [screen(0)]
    for step in range(1, 30):
        texts += [texts[-1], screen(step)]
    record = _episode(texts)
    data = json.loads(_line(record))
    middles = [step["feedback_edit"][2] for step in data["steps"]]
    # While the history grows the room is the edit's tail; once it moves on, the lines it keeps
    # are copied from the middle of the text before.
    assert all(isinstance(m, str) and len(m) < 50 for m in middles[:5])
    assert all(isinstance(m, list) and any(isinstance(p, list) for p in m) for m in middles[5:])
    assert len(_line(record)) < len(record.model_dump_json()) / 10
    assert parse_record(_line(record)) == record


def test_a_call_of_another_model_keeps_its_model() -> None:
    record = _episode(
        ["a", "a", "b"],
        calls=[ModelCallRecord(model=MODEL), ModelCallRecord(model="scripted/escape-judge")],
    )
    (step,) = json.loads(_line(record))["steps"]
    assert [call.get("model") for call in step["calls"]] == [None, "scripted/escape-judge"]
    assert parse_record(_line(record)) == record


# Written literally: lines exactly as forkingpaths wrote them before record schema 3.
V2_LINE = (
    '{"schema_version":2,"run_id":"r","benchmark":"griddag-v1","split":"main",'
    '"instance_id":"low-easy-s0","trial":0,"seed":1,"agent":"react","agent_options":{},'
    '"model":"scripted/griddag-frontier","status":"ok","error":null,'
    '"initial_observation":"OBSERVATION: You are at [1, 1].","initial_info":{},"steps":['
    '{"index":0,"observation":"OBSERVATION: You are at [1, 1].","thought":"","action":"up",'
    '"feedback":"OBSERVATION: You are at [1, 2].","reward":0.0,"valid":true,"terminated":false,'
    '"truncated":false,"info":{"position":[1,2]},"calls":[{"model":"scripted/griddag-frontier",'
    '"prompt_tokens":452,"completion_tokens":5,"reasoning_tokens":0,"latency_s":0.001,'
    '"cost_usd":0.0,"cached":false,"attempts":1,"response":"{\\"action\\":\\"up\\"}",'
    '"purpose":"act","messages":[],"messages_ref":null,"params":{},"finish_reason":"stop"}]}],'
    '"outcome":{"success":true},"metrics":{"success":true},"usage":{"prompt_tokens":452,'
    '"completion_tokens":5,"reasoning_tokens":0,"cached_prompt_tokens":0},"cost_usd":0.0,'
    '"n_calls":1,"n_cached":0,"started_at":"2026-11-27T15:02:06.138+00:00",'
    '"finished_at":"2026-11-27T15:02:06.140+00:00","duration_s":0.002,"agent_state":{}}'
)
V1_LINE = (
    '{"schema_version":1,"run_id":"r","benchmark":"griddag-v1","split":"main",'
    '"instance_id":"low-easy-s0","trial":1,"seed":2,"agent":"frontier","model":null,'
    '"initial_observation":"start","steps":[{"index":0,"observation":"start","thought":"",'
    '"action":"up","feedback":"moved","reward":0.0,"valid":true,"terminated":true,'
    '"truncated":false,"info":{},"calls":[]}],"outcome":{},"metrics":{}}'
)
# A schema 3 line as this version writes it: the format pinned, not only its round trip.
# Its start time is written, as every line's is: a missing one would read as the clock's now.
V3_LINE = (
    '{"schema_version":3,"run_id":"r","benchmark":"griddag-v1","split":"main",'
    '"instance_id":"low-easy-s0","trial":2,"seed":3,"agent":"react",'
    '"model":"scripted/griddag-frontier","initial_observation":"You are at [1, 1]. 0 steps.",'
    '"steps":[{"index":0,"action":"up","feedback_edit":[1,15,"2]. 1",7]},'
    '{"index":1,"observation":"changed","action":"down","feedback_edit":[2,0,"",27],'
    '"calls":[{"response":"down"}]}],"started_at":"2026-11-27T10:00:00.000+00:00"}'
)


def test_lines_of_every_version_read_in_one_file(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "episodes.jsonl").write_text("\n".join([V2_LINE, V1_LINE, V3_LINE]) + "\n")
    old, older, new = load_records(run)
    assert old.schema_version == 2
    assert old.steps[0].observation == "OBSERVATION: You are at [1, 1]."
    assert old.steps[0].feedback == "OBSERVATION: You are at [1, 2]."
    assert old.steps[0].calls[0].model == MODEL and old.steps[0].calls[0].latency_s == 0.001
    assert (older.schema_version, older.steps[0].feedback) == (1, "moved")
    assert new.schema_version == 3
    assert [(s.observation, s.feedback) for s in new.steps] == [
        ("You are at [1, 1]. 0 steps.", "You are at [1, 2]. 1 steps."),
        ("changed", "You are at [1, 2]. 1 steps."),
    ]
    assert new.steps[1].calls[0].model == MODEL and new.steps[1].calls[0].attempts == 1
    # Written again by this version, each reads back the same, as a schema 3 record.
    for record in (old, older, new):
        again = parse_record(_line(record))
        assert again == record.model_copy(update={"schema_version": 3})


def test_a_resumed_old_run_appends_schema_3_lines_beside_its_old_ones(tmp_path: Path) -> None:
    spec = RunSpec(benchmark="griddag-v1", split="main", agent="react", model=MODEL)
    run = RunDirectory(tmp_path / "r")
    run.open(spec)
    run.episodes_path.write_text(V2_LINE + "\n")
    again = RunDirectory(run.path)
    again.open(spec)
    new = _episode(["a", "a", "b", "b", "c"]).model_copy(update={"trial": 5})
    again.append(new)
    versions = [json.loads(line)["schema_version"] for line in run.episodes_path.open()]
    assert versions == [2, 3]
    assert [r.schema_version for r in again.iter_records()] == [2, 3]
    assert load_records(run.path)[1] == new


@pytest.mark.parametrize(
    ("field", "edit"),
    [
        ("feedback", [3, 0, "", 0]),
        ("feedback", [1, 0, "", 999]),
        ("observation", [2, 0, "x", 0]),  # before step 0's observation there is one text
        ("feedback", [1, -1, "", 0]),
        ("feedback", "text"),
        ("feedback", [1, 0, 5, 0]),
        ("feedback", [1, 0, [[0, 99]], 0]),  # a copy past the end of the text it edits
        ("feedback", [1, 0, [[0, 1, 2]], 0]),
        ("feedback", [1, 0, ["a", 3], 0]),
    ],
)
def test_an_edit_that_does_not_fit_is_refused(
    field: str, edit: object, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = json.loads(V3_LINE)
    data["steps"][0][f"{field}_edit"] = edit
    with pytest.raises(ValueError, match=rf"steps\[0\]\.{field}_edit"):
        parse_record(json.dumps(data))
    # A run directory skips such a line with a warning, as it skips any unreadable line.
    run = tmp_path / "r"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps(data) + "\n" + V2_LINE + "\n")
    with caplog.at_level(logging.WARNING):
        assert [r.schema_version for r in load_records(run, transcripts=False)] == [2]
    assert "skipped an unreadable record" in caplog.text


def test_a_schema_2_line_without_its_texts_is_not_filled_in() -> None:
    # Only a schema 3 line may leave a text out: in an older one that is damage, not a repeat.
    data = json.loads(V2_LINE)
    del data["steps"][0]["observation"]
    with pytest.raises(ValidationError, match="observation"):
        parse_record(json.dumps(data))


def test_a_schema_3_line_read_without_expanding_it_is_refused_not_misread() -> None:
    # A reader that validates a line itself, past parse_record, gets an error: a text or a
    # call's model it needs is missing. It never gets a record with other texts.
    with pytest.raises(ValidationError, match="observation"):
        EpisodeRecord.model_validate_json(V3_LINE)


def test_a_line_with_its_fields_in_another_order_still_reads() -> None:
    data = json.loads(V3_LINE)
    reordered = {"run_id": data.pop("run_id"), **data}
    assert parse_record(json.dumps(reordered)) == parse_record(V3_LINE)
