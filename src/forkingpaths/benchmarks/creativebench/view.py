"""The viewer's world of a creativebench episode: task, program, tests, constraints, novelty."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from forkingpaths.benchmarks.creativebench.tasks import ComboTask, ExploreTask
from forkingpaths.core.records import EpisodeRecord, StepRecord

KIND = "creativebench"
"""The `kind` the JS half (`web/view.js`) dispatches on."""

_CONSTRAINT_NUMBER = re.compile(r"breaks constraint (\d+) \(")
"""How `constraints.check_constraints` names the (1-based) constraint a finding breaks."""

_ROW_FIELDS = (
    "verdict",
    "demo_verdict",
    "isolation",
    "detail",
    "no_code",
    "quality",
    "ngram_distance",
    "embedding_distance",
    "novelty",
    "novelty_truncated",
    "baseline",
    "baseline_solution",
)
"""Scalar `step.info` fields a frame copies as they were recorded (absent ones stay absent)."""


def creative_world_view(
    record: EpisodeRecord,
    combo: Mapping[str, ComboTask],
    explore: Mapping[str, Sequence[ExploreTask]],
) -> dict[str, Any]:
    """The world view of one episode: the static task data (`tasks`, and the Combo sources or
    the Explore references the novelty is measured against) and one frame per position, frame
    p (p >= 1) holding what step p-1's program earned, as `step.info` recorded it."""
    subset = record.initial_info.get("subset")
    if subset not in ("combo", "explore"):
        # An errored record may lack the reset info: the task set that holds the id decides.
        subset = (
            "combo"
            if record.instance_id in combo
            else "explore"
            if record.instance_id in explore
            else None
        )
    view: dict[str, Any] = {
        "kind": KIND,
        "subset": subset,
        "instance_id": record.instance_id,
        "status": record.status,
        "error": record.error,
        "embedding": record.initial_info.get("embedding"),
        "judge": record.initial_info.get("judge"),
        "judge_is_solver": record.initial_info.get("judge_is_solver"),
        "initial_observation": record.initial_observation,
        "metrics": _episode_scores(record.metrics),
        "outcome": dict(record.outcome),
    }
    if subset == "combo":
        task = combo.get(record.instance_id)
        view["tasks"] = [_combo_task(task)] if task is not None else []
    elif subset == "explore":
        view["tasks"] = [_explore_task(t) for t in explore.get(record.instance_id, ())]
    else:
        view["tasks"] = []
    view["task_found"] = bool(view["tasks"])
    frames: list[dict[str, Any]] = [{"position": 0, "task": 0, "answered": 0, "passed": 0}]
    passed = 0
    for index, step in enumerate(record.steps):
        frame = _frame(index, step, subset, view["tasks"], record.steps)
        passed += frame.get("quality") == 1.0
        frame["answered"] = index + 1
        frame["passed"] = passed
        frames.append(frame)
    view["frames"] = frames
    return view


def _episode_scores(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The episode's Pass@1, Novelty and Creativity (`benchmark.episode_metrics`), if scored."""
    keys = ("pass_at_1", "novelty", "creativity", "novelty_passed", "rows", "verdicts")
    return {k: metrics[k] for k in keys if k in metrics}


def _combo_task(task: ComboTask) -> dict[str, Any]:
    return {
        "id": task.id,
        "level": None,
        "question": task.question,
        "function_signature": "",
        "constraints": [],
        "reference_solution": task.canonical_solution,
        "source_solutions": list(task.source_solutions),
        "domains": list(task.domains),
        "tests": [
            {"name": "full tests", "field": "full_test_func", "code": task.full_test_func},
            *(
                [{"name": "demo tests", "field": "demo_test_func", "code": task.demo_test_func}]
                if task.demo_test_func.strip()
                else []
            ),
        ],
    }


def _explore_task(task: ExploreTask) -> dict[str, Any]:
    return {
        "id": task.id,
        "level": task.level,
        "question": task.question,
        "function_signature": task.function_signature,
        "constraints": [
            {
                "number": number,
                "constraint": item.constraint,
                "blocked_technique": item.blocked_technique,
                "verification_hint": item.verification_hint,
                # Explicit rules make a static finding final; without them the checker infers
                # rules from the prose and its findings are only advisory.
                "check": {key: list(names) for key, names in item.check.items()},
            }
            for number, item in enumerate(task.constraints_detail, start=1)
        ],
        "reference_solution": task.reference_solution,
        "source_solutions": [],
        "domains": [task.domain] if task.domain else [],
        "tests": [{"name": "tests", "field": "test_code", "code": task.test_code}],
    }


def _frame(
    index: int,
    step: StepRecord,
    subset: str | None,
    tasks: Sequence[Mapping[str, Any]],
    steps: Sequence[StepRecord],
) -> dict[str, Any]:
    """Frame index+1: step `index`'s program and what the sandbox, checker and judge said."""
    info = step.info if isinstance(step.info, Mapping) else {}
    frame: dict[str, Any] = {
        "position": index + 1,
        "task": _task_index(index, info.get("level"), tasks),
        "level": info.get("level"),
        "code": step.action,
        "valid": step.valid,
        "feedback": step.feedback,
    }
    frame.update({key: info[key] for key in _ROW_FIELDS if key in info})
    judge = info.get("judge")
    if isinstance(judge, Mapping):
        frame["judge"] = {"compliant": judge.get("compliant"), "reasons": judge.get("reasons")}
    final = _findings(info.get("violations"))
    advisory = _findings(info.get("advisory_violations"))
    frame["violations"] = final
    frame["advisory_violations"] = advisory
    task = tasks[frame["task"]] if frame["task"] is not None else None
    if subset == "explore":
        frame["constraint_verdicts"] = _constraint_verdicts(task, final, advisory)
    frame["novelty_base"] = _novelty_base(subset, index, info, steps, tasks)
    return frame


def _task_index(index: int, level: Any, tasks: Sequence[Mapping[str, Any]]) -> int | None:
    """The task step `index` answered: the env plays the levels in order, so the index, unless
    the recorded level names another task of the list."""
    if isinstance(level, int) and not isinstance(level, bool):
        for i, task in enumerate(tasks):
            if task.get("level") == level:
                return i
    if index < len(tasks):
        return index
    return None


def _findings(value: Any) -> list[dict[str, Any]]:
    """Static checker findings as recorded (`Violation.to_json`), each with the 1-based number
    of the constraint it breaks, read from its detail (None when the detail names none)."""
    out: list[dict[str, Any]] = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, Mapping):
            continue
        detail = str(item.get("detail", ""))
        match = _CONSTRAINT_NUMBER.search(detail)
        out.append(
            {
                "rule": item.get("rule"),
                "detail": detail,
                "line": item.get("line"),
                "inferred": bool(item.get("inferred", False)),
                "constraint": int(match.group(1)) if match else None,
            }
        )
    return out


def _constraint_verdicts(
    task: Mapping[str, Any] | None,
    final: Sequence[Mapping[str, Any]],
    advisory: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Per stacked constraint of the level: the static checker's verdict ("violated": a final
    finding, which zeroes Quality; "advisory": only findings of inferred rules, a hint for the
    judge; "clear": no finding). The judge's verdict covers all constraints at once."""
    out: list[dict[str, Any]] = []
    for item in task.get("constraints", []) if task is not None else []:
        number = item["number"]
        hits = [f for f in final if f["constraint"] == number]
        hints = [f for f in advisory if f["constraint"] == number]
        verdict = "violated" if hits else "advisory" if hints else "clear"
        out.append({"number": number, "static": verdict, "findings": hits + hints})
    return out


def _novelty_base(
    subset: str | None,
    index: int,
    info: Mapping[str, Any],
    steps: Sequence[StepRecord],
    tasks: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """What step `index`'s novelty was measured against, as the JS finds its code: `position`
    (the frame whose program it was: the run's own level-0 answer, Eq. 4), `task` + `source`
    (a Combo task's k source solutions, Eq. 5) or `task` + `reference` (a reference solution:
    Explore's stand-in baseline, or the level's own reference where no novelty was scored)."""
    if subset == "combo":
        if tasks and tasks[0]["source_solutions"]:
            return {"kind": "sources", "task": 0, "count": len(tasks[0]["source_solutions"])}
        return {"kind": "reference", "task": 0 if tasks else None, "scored": False}
    if info.get("baseline_solution") or "novelty" not in info:
        # Level 0 is the baseline itself (Eq. 4 scores constrained levels only); it is shown
        # beside its own reference solution.
        own = _task_index(index, info.get("level"), tasks)
        return {"kind": "reference", "task": own, "scored": False}
    label = info.get("baseline")
    if label is None:
        # Records from before the label: the run's level 0 was the base when it passed.
        first = steps[0].info if steps and isinstance(steps[0].info, Mapping) else {}
        label = "run-level0" if first.get("verdict") == "PASSED" else "reference-level0"
    if label == "run-level0" and index > 0:
        return {"kind": "run", "label": label, "position": 1, "scored": True}
    return {"kind": "reference", "label": label, "task": 0 if tasks else None, "scored": True}
