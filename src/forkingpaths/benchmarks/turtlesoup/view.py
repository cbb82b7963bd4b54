"""The turtlesoup world view: dialogue, Mosaic-Agent's belief and genre, summary vs gold points."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from forkingpaths.benchmarks.turtlesoup.agents.genres import genre_by_id
from forkingpaths.benchmarks.turtlesoup.agents.mosaic import (
    MetaCognition,
    parse_aps,
    parse_belief,
    parse_genre,
    ruled_out,
)
from forkingpaths.benchmarks.turtlesoup.dialogue import question_key
from forkingpaths.benchmarks.turtlesoup.evaluation import (
    CONCLUSION_WEIGHT,
    DETAIL_WEIGHT,
    HIGH_CONFIDENCE_THRESHOLD,
    LOGIC_WEIGHT,
    VALIDITY_THRESHOLD,
    Evaluation,
    PointScore,
    metrics_from_evaluation,
    structured_summary,
)
from forkingpaths.benchmarks.turtlesoup.puzzles import CATEGORIES, Puzzle
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.records import EpisodeRecord, StepRecord

KIND = "turtlesoup"
MOSAIC = "mosaic"
_DEFAULT_ALPHA, _DEFAULT_THRESHOLD = 0.7, 0.1
"""`make_mosaic`'s defaults of `ema_alpha` and `switch_threshold`, for records whose
`agent_options` leave them out."""


def world_view(record: EpisodeRecord, puzzle: Puzzle | None) -> dict[str, Any]:
    """The view of one episode (see `TurtleSoupBenchmark.world_view`).

    `turns` has one row per step (question, refused question, "/solve" or the summary), with
    the position at which a Mosaic-Agent blacklist first rules it out. `frames[p]` is the state
    after the first p steps: turns used, distinct key clues hit, phase and, for Mosaic-Agent,
    its genre, confidence and indices into `beliefs` / `proposals` (stored once each).
    `summary` is the final summary against the gold points (None before the summary step).
    """
    info = record.initial_info
    steps = record.steps
    turns = [_turn_row(step) for step in steps]
    mosaic = _mosaic_frames(record, turns) if record.agent == MOSAIC else None
    frames = _frames(steps, mosaic)
    category = str(info.get("category") or (puzzle.category if puzzle else ""))
    return {
        "kind": KIND,
        "puzzle": {
            "id": record.instance_id,
            "title": puzzle.title if puzzle else "",
            "surface": str(info.get("surface") or (puzzle.surface if puzzle else "")),
            "category": category,
            "category_name": CATEGORIES.get(category, category),
            "language": str(info.get("language") or (puzzle.language if puzzle else "")),
            "bottom": puzzle.bottom if puzzle else None,
            "key_clue_library": list(puzzle.key_clues) if puzzle else [],
        },
        "responder": info.get("responder"),
        "judge": info.get("judge"),
        "key_clues_on": info.get("key_clues"),
        "agent": record.agent,
        "status": record.status,
        "error": record.error,
        "turns": turns,
        "frames": frames,
        "beliefs": mosaic["beliefs"] if mosaic else None,
        "proposals": mosaic["proposals"] if mosaic else None,
        "summary": _summary(record),
    }


# ---- the dialogue ----


def _turn_row(step: StepRecord) -> dict[str, Any]:
    """One step as a dialogue row; every field read with a default (old or errored records)."""
    info = step.info
    phase = info.get("phase")
    if phase == "summary":
        kind = "summary"
    elif phase == "solve":
        kind = "solve"
    elif "answer" in info:
        kind = "question"
    elif info.get("valid") is False or not step.valid:
        kind = "invalid"
    else:
        kind = "other"
    return {
        "step": step.index,
        "kind": kind,
        "turn": info.get("turn"),
        "question": step.action,
        "answer": info.get("answer"),
        "key_clue": bool(info.get("key_clue")),
        "repeated": bool(info.get("repeated")),
        "reason": info.get("reason"),
        "responder_failed": bool(info.get("responder_failed")),
        "feedback": step.feedback,
        "ruled_out_at": None,
    }


def _frames(steps: Sequence[StepRecord], mosaic: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """What the dialogue holds after the first p steps, for p = 0 .. len(steps)."""
    frames: list[dict[str, Any]] = []
    turn, clues, repeated, invalid = 0, set(), 0, 0
    phase = "ask"
    for position in range(len(steps) + 1):
        if position:
            step = steps[position - 1]
            info = step.info
            turn = info.get("turn", turn)
            if info.get("key_clue"):
                clues.add(question_key(step.action))
            repeated += bool(info.get("repeated"))
            invalid += "answer" not in info and (info.get("valid") is False or not step.valid)
            if info.get("phase") == "summary":
                phase = "done"
            elif info.get("phase") == "solve" or step.truncated:
                phase = "summarize"
        frame: dict[str, Any] = {
            "turn": turn,
            "key_clues": len(clues),
            "repeated": repeated,
            "invalid": invalid,
            "phase": phase,
        }
        if mosaic is not None:
            frame.update(mosaic["frames"][position])
        frames.append(frame)
    return frames


# ---- Mosaic-Agent's state, replayed from its recorded calls ----


def _mosaic_frames(record: EpisodeRecord, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Mosaic-Agent's Belief State, Analysis and Proposal Set, genre and confidence after each
    position, replayed from the raw replies of its `belief`, `aps` and `genre` calls with the
    agent's own parsers and update rule (an unreadable reply keeps the previous state, as in
    the agent). Also sets each turn's `ruled_out_at`: the position from which the blacklist
    (recomputed from the answered history, `ruled_out`) holds its question."""
    options = record.agent_options
    meta = MetaCognition(
        float(options.get("ema_alpha", _DEFAULT_ALPHA)),
        float(options.get("switch_threshold", _DEFAULT_THRESHOLD)),
    )
    beliefs: list[dict[str, Any]] = []
    proposals: list[list[dict[str, str]]] = []
    belief_index: int | None = None
    aps_index: int | None = None
    history: list[dict[str, Any]] = []
    clue_count = 0
    frames: list[dict[str, Any]] = [_mosaic_frame(meta, None, None, None)]
    for step in record.steps:
        votes: list[str | None] = []
        for call in step.calls:
            # Without deliberation the one "summary" call gives the final belief.
            if call.purpose in ("belief", "summary"):
                belief = parse_belief(call.response)
                if belief is not None:
                    beliefs.append({**belief.to_dict(), "step": step.index})
                    belief_index = len(beliefs) - 1
            elif call.purpose == "aps":
                aps = parse_aps(call.response)
                if aps:
                    proposals.append(
                        [
                            {"doubt": a.doubt, "analysis": a.analysis, "proposal": a.proposal}
                            for a in aps
                        ]
                    )
                    aps_index = len(proposals) - 1
            elif call.purpose == "genre":
                votes.append(parse_genre(call.response))
        check = None
        if votes:
            # The votes of one step are one check, made on the history the step was decided on.
            result = meta.update(votes, len(history), clue_count)
            check = {
                "votes": [_genre_name(v) for v in result.votes],
                "winner": _genre_name(result.winner),
                "share": result.share,
                "switched": result.switched,
            }
        info = step.info
        if "answer" in info:
            history.append(
                {
                    "question": step.action.strip(),
                    "answer": info["answer"],
                    "key_clue": bool(info.get("key_clue")),
                }
            )
            clue_count += bool(info.get("key_clue"))
            # The blacklist is built from consecutive pairs, so a new answer can only add the
            # pair it closes: each question gets the first position that rules it out.
            _mark_ruled_out(turns, ruled_out(history[-2:]), step.index + 1)
        frames.append(_mosaic_frame(meta, belief_index, aps_index, check))
    return {"beliefs": beliefs, "proposals": proposals, "frames": frames}


def _mosaic_frame(
    meta: MetaCognition, belief: int | None, aps: int | None, check: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "genre": meta.genre,
        "genre_name": _genre_name(meta.genre),
        "confidence": meta.confidence,
        "belief": belief,
        "aps": aps,
        "check": check,
    }


def _mark_ruled_out(turns: list[dict[str, Any]], banned: list[str], position: int) -> None:
    """Set `ruled_out_at` = position on the asked questions `banned` holds, unless set before."""
    if not banned:
        return
    for row in turns[:position]:
        if (
            row["ruled_out_at"] is None
            and row["kind"] == "question"
            and row["question"].strip() in banned
        ):
            row["ruled_out_at"] = position


def _genre_name(genre_id: str | None) -> str | None:
    if genre_id is None:
        return None
    try:
        return genre_by_id(genre_id).names["en"]
    except KeyError:
        return genre_id


# ---- the final summary against the gold points ----


def _summary(record: EpisodeRecord) -> dict[str, Any] | None:
    """The summary and its evaluation (§4.4): each gold point with its raw similarity, its
    calibrated score and its band (void below the Validity Threshold, full from the
    High-Confidence Threshold, partial between, or unscored) and the predicted point it matched.
    None when no summary was written."""
    outcome = record.outcome
    if "summary" not in outcome:
        return None
    text = str(outcome.get("summary") or "")
    out: dict[str, Any] = {
        "text": text,
        "thresholds": {
            "validity": VALIDITY_THRESHOLD,
            "high_confidence": HIGH_CONFIDENCE_THRESHOLD,
        },
        "weights": {
            "logic": LOGIC_WEIGHT,
            "detail": DETAIL_WEIGHT,
            "conclusion": CONCLUSION_WEIGHT,
        },
        "judge": outcome.get("judge"),
        "evaluation": None,
        "evaluation_error": None,
    }
    fields = structured_summary(text) if text else None
    if fields is not None:
        out["predicted"] = {"logic": fields[0], "details": fields[1], "conclusion": fields[2]}
    raw = outcome.get("evaluation")
    if raw is None:
        return out
    try:
        ev = Evaluation.from_dict(raw)
    except InvalidFile as exc:
        out["evaluation_error"] = str(exc)
        return out
    out["predicted"] = {"logic": ev.predicted_logic, "details": ev.predicted_details}
    if fields is not None:
        out["predicted"]["conclusion"] = fields[2]
    out["evaluation"] = {
        "summary_format": ev.summary_format,
        "extracted": ev.extracted,
        "logic": [_point(p, ev.predicted_logic) for p in ev.logic],
        "details": [_point(p, ev.predicted_details) for p in ev.details],
        "conclusion": ev.conclusion,
        "conclusion_reason": ev.conclusion_reason,
        "unextracted_points": ev.unextracted_points,
        "errors": list(ev.errors),
        "metrics": metrics_from_evaluation(ev),
    }
    return out


def _point(point: PointScore, predicted: Sequence[str]) -> dict[str, Any]:
    index = point.best_match
    matched = predicted[index] if index is not None and 0 <= index < len(predicted) else None
    return {
        "point": point.point,
        "score": point.score,
        "calibrated": point.calibrated,
        "band": _band(point.score),
        "best_match": index,
        "matched": matched,
        "reason": point.reason,
    }


def _band(score: float | None) -> str:
    """Where a raw similarity falls in the Two-Threshold Calibration."""
    if score is None:
        return "unscored"
    if score < VALIDITY_THRESHOLD:
        return "void"
    if score >= HIGH_CONFIDENCE_THRESHOLD:
        return "full"
    return "partial"
