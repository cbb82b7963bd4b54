"""The turtlesoup world view: dialogue rows, per-position frames, Mosaic state, summary scores."""

from __future__ import annotations

import json
import re

import pytest
from tests.benchmarks.turtlesoup.players import Asker, scripted

from forkingpaths.benchmarks.turtlesoup.agents.mosaic import make_mosaic
from forkingpaths.benchmarks.turtlesoup.benchmark import TurtleSoupBenchmark
from forkingpaths.core.records import EpisodeRecord, ModelCallRecord, StepRecord

PUZZLE = "crime_thriller-01-en"
HOSTILE = ("<script>alert(1)</script>", '" onmouseover="x', "javascript:alert(1)")


def new_record(agent: str, instance_id: str = PUZZLE) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t", benchmark="turtlesoup-v1", split="all", instance_id=instance_id, seed=0,
        agent=agent,
    )  # fmt: skip


async def play(bench: TurtleSoupBenchmark, agent: object, name: str, instance_id: str = PUZZLE):
    instance = bench.instance(instance_id)
    record = new_record(name, instance_id)
    roles = {"responder": scripted("turtlesoup-responder"), "judge": scripted("turtlesoup-judge")}
    await bench.run_episode(instance, agent, record, roles)  # type: ignore[arg-type]
    return record


@pytest.fixture(scope="module")
def gold_summary() -> str:
    puzzle = TurtleSoupBenchmark().corpus()[PUZZLE]
    return json.dumps(
        {
            "logic": list(puzzle.logic_points),
            "details": list(puzzle.key_details),
            "conclusion": puzzle.bottom,
        }
    )


async def test_dialogue_rows_marks_and_frames_follow_the_steps(gold_summary: str) -> None:
    bench = TurtleSoupBenchmark(max_turns=6)
    questions = [
        "Was the tag a deliberate signal meant for Bruno?",
        "",  # refused: uses a turn
        "Was Bruno secretly involved in crime with stolen goods?",
        "Was the tag a deliberate signal meant for Bruno?",  # repeated
        "Did the missing tag mean his partners had been arrested?",
        "Was it raining?",
    ]
    record = await play(bench, Asker(questions, gold_summary), "asker")
    view = bench.world_view(record)
    assert view is not None and view["kind"] == "turtlesoup"
    steps, frames, turns = record.steps, view["frames"], view["turns"]
    assert len(frames) == len(steps) + 1 == len(turns) + 1
    assert view["puzzle"]["surface"] == record.initial_info["surface"]
    assert [t["kind"] for t in turns] == ["question", "invalid", *["question"] * 4, "summary"]
    assert turns[1]["reason"] == "empty question" and turns[3]["repeated"]
    # Each row is its step's info; frame p is the state after step p-1.
    for p in range(1, len(frames)):
        info = steps[p - 1].info
        assert turns[p - 1]["key_clue"] == bool(info.get("key_clue"))
        assert turns[p - 1]["answer"] == info.get("answer")
        if "turn" in info:
            assert frames[p]["turn"] == info["turn"]
    assert frames[0] == {
        "turn": 0, "key_clues": 0, "repeated": 0, "invalid": 0, "phase": "ask",
    }  # fmt: skip
    assert frames[-1]["phase"] == "done" and frames[-2]["phase"] == "summarize"
    assert frames[-1]["invalid"] == 1 and frames[-1]["repeated"] == 1
    # Key clues hit only grow, counted once per distinct question as in the outcome.
    hits = [f["key_clues"] for f in frames]
    assert hits == sorted(hits) and hits[-1] == record.outcome["key_clues_hit"] > 0
    # A baseline-like agent keeps no Mosaic state.
    assert view["beliefs"] is None and "genre" not in frames[-1]
    json.dumps(view)


async def test_summary_lines_up_gold_points_with_their_scores(gold_summary: str) -> None:
    bench = TurtleSoupBenchmark(max_turns=2)
    record = await play(bench, Asker(["Was it raining?"], gold_summary), "asker")
    summary = bench.world_view(record)["summary"]  # type: ignore[index]
    ev = summary["evaluation"]
    stored = record.outcome["evaluation"]
    assert [p["point"] for p in ev["logic"]] == stored["gold_logic"]
    assert [p["point"] for p in ev["details"]] == stored["gold_details"]
    pairs = zip(ev["logic"] + ev["details"], stored["logic"] + stored["details"], strict=True)
    for point, raw in pairs:
        assert (point["score"], point["calibrated"]) == (raw["score"], raw["calibrated"])
        band = point["band"]
        if point["score"] >= 0.8:
            assert band == "full" and point["calibrated"] == 1.0
        elif point["score"] < 0.5:
            assert band == "void" and point["calibrated"] == 0.0
        else:
            assert band == "partial"
        if point["best_match"] is not None:
            predicted = summary["predicted"]["logic" if point in ev["logic"] else "details"]
            assert point["matched"] == predicted[point["best_match"]]
    assert any(p["band"] == "full" for p in ev["logic"] + ev["details"])
    metrics = bench.episode_metrics(record)
    for name in ("logic_accuracy", "detail_fidelity", "conclusion_match", "overall"):
        assert ev["metrics"][name] == pytest.approx(metrics[name])
    assert summary["thresholds"] == {"validity": 0.5, "high_confidence": 0.8}


async def test_mosaic_belief_and_genre_replay_the_agent() -> None:
    bench = TurtleSoupBenchmark(max_turns=12)
    agent = make_mosaic(model=scripted("turtlesoup-questioner"))
    record = await play(bench, agent, "mosaic")
    view = bench.world_view(record)
    assert view is not None
    frames, beliefs = view["frames"], view["beliefs"]
    assert len(frames) == len(record.steps) + 1
    assert frames[0]["belief"] is None and frames[0]["genre"] is None
    assert frames[0]["confidence"] == 0.5
    # The genre and confidence a decision's thought states are the frame after that step.
    stated = re.compile(r"genre: (.+?) \(c=([0-9.]+)\)")
    checked = 0
    for step in record.steps:
        match = stated.match(step.thought)
        if match:
            frame = frames[step.index + 1]
            name = frame["genre_name"] or "unknown"
            assert (name, f"{frame['confidence']:.2f}") == match.groups()
            checked += 1
        votes = [c for c in step.calls if c.purpose == "genre"]
        assert (frames[step.index + 1]["check"] is not None) == bool(votes)
    assert checked == len(record.steps) - 1
    # A belief index only moves forward, and the final belief is the summary the agent gave.
    indices = [f["belief"] for f in frames if f["belief"] is not None]
    assert indices == sorted(indices) and beliefs
    final = beliefs[frames[-1]["belief"]]
    assert {k: final[k] for k in ("logic", "details", "conclusion")} == json.loads(
        record.steps[-1].action
    )
    # The blacklist only grows: a ruled-out question stays ruled out at later positions.
    ruled = [t for t in view["turns"] if t["ruled_out_at"] is not None]
    assert all(t["ruled_out_at"] > t["step"] for t in ruled)
    json.dumps(view)


async def test_hostile_text_comes_back_as_plain_strings() -> None:
    bench = TurtleSoupBenchmark(max_turns=3)
    summary = json.dumps({"logic": [HOSTILE[0]], "details": [HOSTILE[1]], "conclusion": HOSTILE[2]})
    record = await play(bench, Asker(list(HOSTILE), summary), "asker")
    view = bench.world_view(record)
    assert view is not None
    assert [t["question"] for t in view["turns"][:3]] == list(HOSTILE)
    predicted = view["summary"]["predicted"]
    assert predicted["logic"] == [HOSTILE[0]] and predicted["details"] == [HOSTILE[1]]
    assert predicted["conclusion"] == HOSTILE[2]
    assert json.loads(json.dumps(view)) == view


def test_errored_record_without_steps_gives_a_valid_view() -> None:
    bench = TurtleSoupBenchmark()
    record = new_record("mosaic")
    record.status, record.error = "error", "model down"
    view = bench.world_view(record)
    assert view is not None
    assert view["turns"] == [] and len(view["frames"]) == 1 and view["summary"] is None
    assert view["puzzle"]["surface"]  # from the corpus when the record has no initial_info
    json.dumps(view)


def test_old_or_odd_records_do_not_raise() -> None:
    bench = TurtleSoupBenchmark()
    garbage = ModelCallRecord(model="m", purpose="belief", response="{not json")
    genre = ModelCallRecord(model="m", purpose="genre", response="no idea")
    steps = [
        StepRecord(index=0, observation="", action="Q?", feedback="", info={}, calls=[garbage]),
        StepRecord(index=1, observation="", action="x", feedback="", calls=[genre, genre]),
    ]
    record = new_record("mosaic", "no-such-puzzle")
    record.steps = steps
    record.outcome = {"summary": "free text", "evaluation": {"puzzle_id": 3}}
    view = bench.world_view(record)
    assert view is not None and len(view["frames"]) == 3
    assert view["beliefs"] == [] and view["frames"][2]["check"]["winner"] is None
    assert view["puzzle"]["bottom"] is None
    assert view["summary"]["evaluation"] is None and view["summary"]["evaluation_error"]
    json.dumps(view)
