"""World views of escape-v1 and aut-v1 for the run viewer: attempt lanes, paths, runs of uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.escape.judge import CRITERIA
from forkingpaths.benchmarks.escape.metrics import (
    counted_paths,
    divergence_momentum,
    episode_facts,
    is_judged,
    path_facts,
    path_table,
)
from forkingpaths.core.records import EpisodeRecord, StepRecord

if TYPE_CHECKING:
    from forkingpaths.benchmarks.escape.aut import AUTBenchmark
    from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark
    from forkingpaths.benchmarks.escape.metadata import ScenarioMeta
    from forkingpaths.benchmarks.escape.schema import Scenario

SHOWN_ACTION_CHARS = 200
"""Raw action text kept for a step the env could not read (as the env's own history keeps it):
a model may append pages to an action, and the lanes show one line."""


# ---- escape-v1 ----


def escape_world_view(bench: EscapeBenchmark, record: EpisodeRecord) -> dict[str, Any]:
    """The episode as the viewer draws it: one lane per attempt with its steps, the forbidden
    finish actions each attempt started with, the gold paths (found ones from the steps'
    `path`), meaningless-step streaks, the judge's scores per judged step, and per position
    (0 after reset, p after p steps) the scene, the bag and the paths found so far."""
    scenario, meta = _escape_scenario(bench, record.instance_id)
    attempts = max(
        bench.config.attempts,
        len(record.outcome.get("attempts", [])),
        1 + max((_int(s.info.get("attempt"), 0) for s in record.steps), default=-1),
    )
    steps = [_escape_step(s) for s in record.steps]
    _mark_streaks(steps)

    # Which attempt found which path, read from the steps so an errored episode shows them too.
    found_in: dict[str, int] = {}
    found_at: dict[str, int] = {}
    for step in steps:
        if step["path"] is not None and step["path"] not in found_in:
            found_in[step["path"]] = step["attempt"]
            found_at[step["path"]] = step["index"]
    lanes = []
    for attempt in range(attempts):
        indices = [s["index"] for s in steps if s["attempt"] == attempt]
        outcome = _attempt_outcome(record, attempt)
        lanes.append(
            {
                "attempt": attempt,
                "steps": indices,
                # The env forbids the finish actions of every path found in an earlier attempt.
                "forbidden": _forbidden_before(meta, found_in, attempt),
                "paths": [p for p, a in found_in.items() if a == attempt],
                "stop": outcome.get("stop"),
                "played": bool(indices),
                "streaks": _streaks(steps, indices),
            }
        )

    paths_of = path_facts(record)
    found, total = counted_paths(paths_of, include_extra=bench.config.extra_paths)
    table = path_table([paths_of])
    paths = []
    if meta is not None:
        for spec in meta.paths:
            paths.append(
                {
                    "id": spec.id,
                    "type": spec.type,
                    "kind": spec.kind,
                    "phase": spec.phase,
                    "mechanism": spec.mechanism,
                    "finish": spec.finish,
                    "extra": spec.extra,
                    "mark": table.get(spec.id, "O" if spec.id in found_in else "X"),
                    "attempt": found_in.get(spec.id),
                    "position": None if spec.id not in found_at else found_at[spec.id] + 1,
                }
            )

    frames = [_escape_frame(record.initial_info, None, [], 0)]
    so_far: list[str] = []
    for step in steps:
        if step["path"] is not None and step["path"] not in so_far:
            so_far = [*so_far, step["path"]]
        frames.append(_escape_frame(record.steps[step["index"]].info, step, so_far, step["streak"]))

    try:
        momentum = divergence_momentum([episode_facts(record)])
    except (KeyError, TypeError, ValueError):  # a verdict of an older record's shape
        momentum = {c: None for c in CRITERIA} | {"judged_steps": None, "judge_missing": None}
    return {
        "kind": "escape",
        "scenario": record.instance_id,
        "title": meta.title if meta is not None else record.instance_id,
        "objective": _str(record.initial_info.get("objective"))
        or (scenario.objective if scenario is not None else ""),
        "attempts": attempts,
        "meaningless_limit": bench.config.meaningless_limit,
        "criteria": list(CRITERIA),
        "paths": paths,
        "paths_found": len(found),
        "paths_total": len(total),
        "escapes": record.outcome.get("escapes"),
        "momentum": {c: momentum[c] for c in CRITERIA},
        "judged_steps": momentum["judged_steps"],
        "judge_missing": momentum["judge_missing"],
        "scenes": _scene_graph(scenario),
        "tools": _tool_descriptions(scenario, record),
        "lanes": lanes,
        "steps": steps,
        "frames": frames,
        "status": record.status,
        "error": record.error,
    }


def _escape_scenario(
    bench: EscapeBenchmark, instance_id: str
) -> tuple[Scenario | None, ScenarioMeta | None]:
    """The scenario and its path metadata, or Nones when the instance is not found or does not
    load (a record of a scenario file that has since moved)."""
    try:
        return bench.load(bench.instance(instance_id))
    except Exception:  # the view shows what the record alone holds
        return None, None


def _escape_step(step: StepRecord) -> dict[str, Any]:
    info = step.info
    canonical = info.get("canonical")
    action = canonical if isinstance(canonical, str) and canonical and step.valid else step.action
    if len(action) > SHOWN_ACTION_CHARS:
        action = action[:SHOWN_ACTION_CHARS] + "..."
    path = info.get("path")
    return {
        "index": step.index,
        "attempt": _int(info.get("attempt"), 0),
        "t": _int(info.get("t"), step.index + 1),
        "action": action,
        "kind": _str(info.get("kind")),
        "valid": bool(info.get("valid", step.valid)),
        "success": bool(info.get("success", False)),
        "changed": bool(info.get("changed", False)),
        "meaningless": bool(info.get("meaningless", False)),
        "forbidden": bool(info.get("forbidden", False)),
        "checkpoint": bool(info.get("checkpoint", False)),
        "game_end": bool(info.get("game_end", False)),
        "path": path if isinstance(path, str) else None,
        "stop": _str(info.get("stop")),
        "response": _str(info.get("response")) or "",
        "judged": is_judged(step),
        "judge": _verdict(info.get("judge")),
        "streak": 0,
    }


def _verdict(judge: Any) -> dict[str, Any] | None:
    """The judge's scores (`{"scores": {criterion: value}}`) or why there are none
    (`{"missing": reason}`); None when no judge scored the step."""
    if not isinstance(judge, Mapping):
        return None
    if "missing" in judge:
        return {"missing": str(judge["missing"])}
    scores = {c: _number(judge.get(c)) for c in CRITERIA}
    return {"scores": scores}


def _mark_streaks(steps: list[dict[str, Any]]) -> None:
    """Each step's `streak`: the consecutive meaningless steps of its attempt ending with it
    (0 for a meaningful one), what the env counts against `meaningless_limit`."""
    run, attempt = 0, None
    for step in steps:
        if step["attempt"] != attempt:
            run, attempt = 0, step["attempt"]
        run = run + 1 if step["meaningless"] else 0
        step["streak"] = run


def _streaks(steps: list[dict[str, Any]], indices: list[int]) -> list[dict[str, int]]:
    """The runs of meaningless steps of one attempt: first and last step index, length."""
    out: list[dict[str, int]] = []
    for index in indices:
        if steps[index]["streak"] == 1:
            out.append({"first": index, "last": index, "length": 1})
        elif steps[index]["streak"] > 1 and out:
            out[-1]["last"] = index
            out[-1]["length"] = steps[index]["streak"]
    return out


def _forbidden_before(
    meta: ScenarioMeta | None, found_in: Mapping[str, int], attempt: int
) -> list[str]:
    if meta is None:
        return []
    out: list[str] = []
    for path_id, found in found_in.items():
        if found < attempt:
            out += [p.finish for p in meta.paths if p.id == path_id and p.finish not in out]
    return out


def _attempt_outcome(record: EpisodeRecord, attempt: int) -> dict[str, Any]:
    for entry in record.outcome.get("attempts", []):
        if isinstance(entry, Mapping) and entry.get("attempt") == attempt:
            return dict(entry)
    return {}


def _escape_frame(
    info: Mapping[str, Any], step: dict[str, Any] | None, found: list[str], streak: int
) -> dict[str, Any]:
    bag = info.get("bag", [])
    names = [b.get("name", "") if isinstance(b, Mapping) else str(b) for b in bag]
    return {
        "attempt": step["attempt"] if step is not None else _int(info.get("attempt"), 0),
        "t": step["t"] if step is not None else 0,
        "scene": _str(info.get("scene")),
        "bag": names,
        "found": found,
        "streak": streak,
    }


def _scene_graph(scenario: Scenario | None) -> list[dict[str, Any]]:
    if scenario is None:
        return []
    return [
        {
            "name": scene.name,
            "desc": scene.desc,
            "moves": sorted({dest for _, dest in scenario.neighbours[scene.index]}),
        }
        for scene in scenario.scenes
    ]


def _tool_descriptions(scenario: Scenario | None, record: EpisodeRecord) -> dict[str, str]:
    """What each tool looks like, for the bag's tooltips: its first state in the scenario, or
    as the record's observations show it."""
    out: dict[str, str] = {}
    if scenario is not None:
        for tool in scenario.tools:
            if tool.states:
                out.setdefault(tool.name, tool.states[0].desc)
    for entry in record.initial_info.get("bag", []):
        if isinstance(entry, Mapping) and "name" in entry:
            out.setdefault(str(entry["name"]), str(entry.get("desc", "")))
    return out


# ---- aut-v1 ----


def aut_world_view(bench: AUTBenchmark, record: EpisodeRecord) -> dict[str, Any]:
    """The object and its runs (one per step): each run's uses with the judge's originality and
    elaboration per use, its fluency, and whether the judge's rating is missing; per position
    the runs answered so far and their uses."""
    try:
        metrics = bench.episode_metrics(record)
    except (KeyError, TypeError, ValueError):  # ratings of an older record's shape
        metrics = {}
    by_run = {row["run"]: row for row in metrics.get("by_run", [])}
    initial = record.initial_info
    runs = []
    frames = [{"runs": 0, "uses": 0, "rated": 0}]
    uses_so_far = rated_so_far = 0
    for step in record.steps:
        info = step.info
        run = _int(info.get("run"), step.index)
        uses = [str(u) for u in info.get("uses", []) if isinstance(u, str)]
        judge = info.get("judge")
        scores: list[Any] = []
        judged = "none"
        missing = None
        if isinstance(judge, Mapping):
            if "missing" in judge:
                judged, missing = "missing", str(judge["missing"])
            elif isinstance(judge.get("scores"), list):
                judged, scores = "rated", judge["scores"]
        listed = []
        for i, use in enumerate(uses):
            score = scores[i] if i < len(scores) and isinstance(scores[i], Mapping) else {}
            listed.append(
                {"text": use, **{c: _number(score.get(c)) for c in ("originality", "elaboration")}}
            )
        row = by_run.get(run, {})
        runs.append(
            {
                "index": step.index,
                "run": run,
                "valid": bool(info.get("valid", step.valid)),
                "error": _str(info.get("error")),
                "action": step.action if info.get("error") else None,
                "uses": listed,
                "fluency": len(uses),
                "judge": judged,
                "missing": missing,
                "originality": row.get("originality"),
                "elaboration": row.get("elaboration"),
            }
        )
        uses_so_far += len(uses)
        rated_so_far += sum(1 for u in listed if u["originality"] is not None)
        frames.append({"runs": len(runs), "uses": uses_so_far, "rated": rated_so_far})
    return {
        "kind": "aut",
        "object": _str(initial.get("object")) or record.instance_id,
        "object_id": _str(initial.get("object_id")) or record.instance_id,
        "description": _str(initial.get("description")) or "",
        "planned_runs": _int(initial.get("runs"), bench.config.runs),
        "runs": runs,
        "fluency": metrics.get("fluency"),
        "originality": metrics.get("originality"),
        "elaboration": metrics.get("elaboration"),
        "judged": bool(metrics.get("judged")),
        "judge_missing": metrics.get("judge_missing", 0),
        "frames": frames,
        "status": record.status,
        "error": record.error,
    }


# ---- helpers ----


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, int | float) else None
