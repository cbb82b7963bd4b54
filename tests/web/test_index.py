"""A run's byte-offset indexes agree with `load_records` on every run, with the run's index file
and without it, follow a run while it writes, and survive torn and superseded lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from forkingpaths.core.records import EpisodeRecord, StepRecord
from forkingpaths.runner.index import EpisodeIndex, TextIndex
from forkingpaths.runner.rundir import INDEX_FILE, RunDirectory, episode_summary, load_records
from forkingpaths.runner.transcripts import TEXTS_FILE


def _runs(runs_dir: Path) -> list[Path]:
    return sorted(p for p in runs_dir.iterdir() if (p / "episodes.jsonl").exists())


def _chain(messages: dict[str, list], ref: str | None) -> list[tuple[str, str]]:
    out = []
    while ref is not None:
        parent, role, text = messages[ref]
        out.append((role, text))
        ref = parent
    return out[::-1]


@pytest.mark.parametrize("with_index", [True, False])
def test_every_episode_and_message_matches_load_records(
    quick_runs: Path, tmp_path: Path, with_index: bool
) -> None:
    for run in _runs(quick_runs):
        copy = tmp_path / run.name
        shutil.copytree(run, copy)
        assert (copy / INDEX_FILE).exists(), "the runner writes the index beside the records"
        if not with_index:
            (copy / INDEX_FILE).unlink()
        records = load_records(copy)
        index, texts = EpisodeIndex(copy), TextIndex(copy)
        entries = index.entries()
        assert [(e["instance_id"], e["trial"]) for e in entries] == [r.key for r in records]
        for number, full in enumerate(records):
            record = index.read(number)
            assert entries[number]["steps"] == len(full.steps)
            assert entries[number]["metrics"].keys() <= full.metrics.keys()
            refs = [c.messages_ref for s in record.steps for c in s.calls if c.messages_ref]
            messages = texts.messages(refs)
            for step, full_step in zip(record.steps, full.steps, strict=True):
                for call, full_call in zip(step.calls, full_step.calls, strict=True):
                    expected = [(m.role, m.content) for m in full_call.messages]
                    assert _chain(messages, call.messages_ref) == expected
            # Attached in place, the messages are the whole load's.
            texts.attach(record)
            assert record == full
        # Without summaries (an export reading every record): the same places, nothing more.
        lean = EpisodeIndex(copy, summaries=False)
        assert [{k: e[k] for k in ("offset", "length", "n")} for e in entries] == [
            {k: e[k] for k in ("offset", "length", "n")} for e in lean.entries()
        ]
        assert {key for e in lean.entries() for key in e} <= {
            "offset",
            "length",
            "instance_id",
            "trial",
            "n",
        }
        assert [lean.read(n) for n in range(lean.count())] == [
            index.read(n) for n in range(index.count())
        ]


def _record(instance: str, trial: int = 0, status: str = "ok", steps: int = 1) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="r",
        benchmark="griddag-v1",
        split="main",
        instance_id=instance,
        trial=trial,
        seed=1,
        agent="frontier",
        status=status,  # type: ignore[arg-type]
        error="model down" if status == "error" else None,
        steps=[
            StepRecord(index=i, observation="o", action="up", feedback="f") for i in range(steps)
        ],
        metrics={"success": status == "ok", "steps": steps, "note": "x" * 500, "deep": {"a": 1}},
    )


def test_a_retried_episode_takes_its_first_place_and_the_list_follows_a_writing_run(
    tmp_path: Path,
) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    index = EpisodeIndex(run.path)
    assert index.entries() == []
    run.append(_record("a", status="error"))
    run.append(_record("b"))
    assert [(e["instance_id"], e["status"]) for e in index.entries()] == [
        ("a", "error"),
        ("b", "ok"),
    ]
    run.append(_record("a", steps=3))  # the retry
    entries = index.entries()
    assert [(e["n"], e["instance_id"], e["status"], e["steps"]) for e in entries] == [
        (0, "a", "ok", 3),
        (1, "b", "ok", 1),
    ]
    assert index.read(0).status == "ok" and len(index.read(0).steps) == 3
    # Summaries keep scalars, cut long text and leave nested values to the record.
    assert entries[1]["metrics"]["note"].endswith("…") and len(entries[1]["metrics"]["note"]) < 200
    assert "deep" not in entries[1]["metrics"]


def test_an_index_that_disagrees_with_the_records_is_not_trusted(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    for name in ("a", "b", "c"):
        run.append(_record(name))
    # A stale index (written for another file) points at the wrong bytes: the records win.
    lines = (run.path / INDEX_FILE).read_text().splitlines()
    wrong = json.loads(lines[1])
    wrong["offset"] += 7
    (run.path / INDEX_FILE).write_text("\n".join([lines[0], json.dumps(wrong), lines[2]]) + "\n")
    assert [e["instance_id"] for e in EpisodeIndex(run.path).entries()] == ["a", "b", "c"]
    # A torn last record (a killed writer) is not listed until it is whole.
    with (run.path / "episodes.jsonl").open("a") as fh:
        fh.write('{"instance_id": "d", "tri')
    assert [e["instance_id"] for e in EpisodeIndex(run.path).entries()] == ["a", "b", "c"]


def test_a_run_written_again_is_indexed_afresh(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    index = EpisodeIndex(run.path)
    for name in ("a", "b"):
        run.append(_record(name))
    assert len(index.entries()) == 2
    (run.path / "episodes.jsonl").unlink()
    (run.path / INDEX_FILE).unlink()
    run.append(_record("z"))
    assert [e["instance_id"] for e in index.entries()] == ["z"]


def test_text_index_finds_lines_written_in_any_layout(tmp_path: Path) -> None:
    store = tmp_path / TEXTS_FILE
    lines = [
        {"id": "AAAAAAAAAAAAAA", "text": "hello "},
        {"text": "world", "id": "BBBBBBBBBBBBBB"},  # keys in another order: parsed
        {"id": "CCCCCCCCCCCCCC", "parent": None, "role": "user", "chunks": ["AAAAAAAAAAAAAA"]},
        {"id": "DDDDDDDDDDDDDD", "parent": "CCCCCCCCCCCCCC", "role": "assistant", "chunks": []},
    ]
    store.write_text(
        "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines) + "not json\n",
        encoding="utf-8",
    )
    texts = TextIndex(tmp_path)
    messages = texts.messages(["DDDDDDDDDDDDDD"])
    assert _chain(messages, "DDDDDDDDDDDDDD") == [("user", "hello "), ("assistant", "")]
    assert texts.get("BBBBBBBBBBBBBB")["text"] == "world"
    # Lines appended later are found without rebuilding from the start.
    with store.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "EEEEEEEEEEEEEE", "text": "later"}) + "\n")
    assert texts.get("EEEEEEEEEEEEEE")["text"] == "later"
    with pytest.raises(KeyError):
        texts.get("ZZZZZZZZZZZZZZ")


def test_a_look_between_a_record_and_its_index_line_keeps_the_index(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record("a"))
    index = EpisodeIndex(run.path)
    assert len(index.entries()) == 1
    # The runner wrote a record; the viewer looks before its index line is written.
    data = _record("b").model_dump(mode="json")
    line = json.dumps(data, separators=(",", ":")) + "\n"
    offset = (run.path / "episodes.jsonl").stat().st_size
    with (run.path / "episodes.jsonl").open("a") as fh:
        fh.write(line)
    assert [e["instance_id"] for e in index.entries()] == ["a", "b"]
    entry = {"offset": offset, "length": len(line.encode()), **episode_summary(data)}
    with (run.path / INDEX_FILE).open("a") as fh:
        fh.write(json.dumps(entry) + "\n")
    run.append(_record("c"))
    assert [e["instance_id"] for e in index.entries()] == ["a", "b", "c"]
    assert index._trust_index, "the index file is still read"


def test_a_malformed_line_is_skipped_and_the_rest_still_listed(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    run.append(_record("a"))
    with (run.path / "episodes.jsonl").open("a") as fh:
        fh.write('{"instance_id": "x", "steps": 5}\n')
        fh.write('{"instance_id": 7, "trial": "one"}\n')
        fh.write("[1, 2]\n")
    (run.path / INDEX_FILE).unlink()
    run.append(_record("b"))
    index = EpisodeIndex(run.path)
    assert [e["instance_id"] for e in index.entries()] == ["a", "b"]
    assert index.read(1).instance_id == "b"
    assert [r.instance_id for r in load_records(run.path, transcripts=False)] == ["a", "b"]
