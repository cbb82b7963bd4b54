"""Human annotation in the study: Metric 2 ratings, instance validity, and the exports that feed
`escape agreement` (Table 10), the construction filters (App. D.1.3) and Table 2's Reduce.

Items are string keys an admin assigns (`StudyStore.assignments`):

- metric2: `RUNKEY|instance|trial|attempt|t`, one judged step of an escape run under the runs
  folder (RUNKEY is the viewer's run key; attempt 0-based and t 1-based as `agreement.py` counts
  them). The annotator sees what the judge saw (objective, scene, bag, recent history, Thought,
  Action, response; `JudgeItem`), never the judge's scores, and rates originality, elaboration
  and groundedness 1-5.
- validity: `FILE#id`, one row of a built CreativeBench instances file (`combo.jsonl` or
  `explore.jsonl`, FILE relative to the runs folder); yes/no with a reason. The annotator sees the
  problem statement, the tests and the reference solution, as the paper's reviewers did (§3.5).

One rating per (kind, item, annotator): rating again replaces one's own. Nobody reads another
annotator's ratings through these routes; only an admin exports them.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from forkingpaths.benchmarks.creativebench.construction.validity import (
    REASON_CHARS,
    VALIDITY_FIELDS,
)
from forkingpaths.benchmarks.creativebench.tasks import (
    ComboTask,
    ExploreTask,
    detect_kind,
    load_combo,
    load_explore,
)
from forkingpaths.benchmarks.escape.judge import (
    CRITERIA,
    HISTORY_SHOWN,
    SCORE_RANGE,
    judge_item_from_step,
)
from forkingpaths.benchmarks.escape.judge_prompts import JUDGE_SYSTEM
from forkingpaths.core.errors import ConfigError, ForkingPathsError, shown
from forkingpaths.core.records import EpisodeRecord
from forkingpaths.runner.rundir import load_records
from forkingpaths.web.accounts import STORE, StudyStore, User, require
from forkingpaths.web.admin_routes import register_assign_check
from forkingpaths.web.data import NotFound, Viewer, run_dirs
from forkingpaths.web.server import VIEWER

COMPONENT = "annotate"
"""This module's name in `schema_versions`."""

MIGRATIONS: list[str] = [
    """
    CREATE TABLE annotation_ratings (
        kind TEXT NOT NULL,
        item TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        annotator TEXT NOT NULL,
        value TEXT NOT NULL,
        rated_at TEXT NOT NULL,
        PRIMARY KEY (kind, item, user_id)
    );
    CREATE INDEX annotation_ratings_by_user ON annotation_ratings (user_id, kind);
    """,
]
"""SQL scripts of the ratings table, applied in order by `StudyStore.migrate`."""

KINDS = ("metric2", "validity")
"""What an annotator rates here (a TurtleSoup summary is written in play and scored there)."""
EXPORT_KINDS = (*KINDS, "turtlesoup")
HUMAN_TURTLESOUP = "human-turtlesoup-*"
"""Run folders, under the runs folder, of people playing TurtleSoup."""


class BadRating(ForkingPathsError):
    """A rating or item the server refuses (HTTP 400); the message names the field."""


class NotAssigned(ForkingPathsError):
    """An item not in the person's queue (HTTP 403)."""


def migrate(store: StudyStore) -> None:
    """Create or upgrade this module's tables."""
    store.migrate(COMPONENT, MIGRATIONS)


# ---- the rubric the judge reads ----


def rubric() -> list[dict[str, Any]]:
    """Each criterion with its one-line definition and its 1-5 anchors, read from the judge's
    own system prompt so the annotators and the judge share one wording."""
    lines = JUDGE_SYSTEM.splitlines()
    out = []
    for criterion in CRITERIA:
        head = f"{criterion.capitalize()}:"
        start = next(i for i, line in enumerate(lines) if line.startswith(head))
        anchors = {}
        for line in lines[start + 1 :]:
            match = re.match(r"^\s+(\d) = (.*)$", line)
            if not match:
                break
            anchors[match[1]] = match[2].strip()
        definition = lines[start].removeprefix(head).strip()
        out.append({"criterion": criterion, "definition": definition, "anchors": anchors})
    return out


# ---- metric2 items ----


@dataclass(frozen=True)
class StepKey:
    """One judged step: the run key, then agreement.py's (instance_id, trial, attempt, step)."""

    run: str
    instance_id: str
    trial: int
    attempt: int
    t: int

    def __str__(self) -> str:
        return f"{self.run}|{self.instance_id}|{self.trial}|{self.attempt}|{self.t}"

    @classmethod
    def parse(cls, item: str) -> StepKey:
        parts = str(item).rsplit("|", 4)
        numbers = parts[2:]
        if len(parts) != 5 or not all(re.fullmatch(r"[0-9]+", p) for p in numbers):
            raise BadRating(
                f"item: got {shown(item)}; expected RUNKEY|instance|trial|attempt|t (whole numbers)"
            )
        if not parts[0] or not parts[1] or int(parts[4]) < 1:
            raise BadRating(f"item: got {shown(item)}; run and instance are needed, t >= 1")
        return cls(parts[0], parts[1], int(parts[2]), int(parts[3]), int(parts[4]))


def _judged(step_info: Mapping[str, Any]) -> bool:
    judge = step_info.get("judge")
    return (
        isinstance(judge, Mapping)
        and "missing" not in judge
        and "attempt" in step_info
        and "t" in step_info
    )


def _escape_run(viewer: Viewer, run: str) -> Any:
    entry = viewer.run(run)
    bench = viewer.benchmark(entry.header())
    if bench.name != "escape":
        raise BadRating(f"run: {run!r} is a {bench.name} run; Metric 2 rates escape runs")
    return entry


def metric2_items(viewer: Viewer, run: str) -> list[str]:
    """The item keys of every step of an escape run the judge scored (a step whose judge score
    is missing has nothing to compare with and is left out), in record order."""
    entry = _escape_run(viewer, run)
    keys = []
    for number in range(entry.episodes.count()):
        record = entry.episodes.read(number)
        for step in record.steps:
            if _judged(step.info):
                key = StepKey(
                    run,
                    record.instance_id,
                    record.trial,
                    int(step.info["attempt"]),
                    int(step.info["t"]),
                )
                keys.append(str(key))
    return keys


def judge_context(record: EpisodeRecord, key: StepKey) -> dict[str, Any]:
    """What the judge was shown for the step (`judge_item_from_step`, the history cut to the
    `HISTORY_SHOWN` steps its prompt keeps): no score, no gold path, nothing else of the step."""
    for step in record.steps:
        info = step.info
        if info.get("attempt") == key.attempt and info.get("t") == key.t and _judged(info):
            item = judge_item_from_step(step, str(record.initial_info.get("objective", "")))
            return {
                "objective": item.objective,
                "scene": item.scene_context,
                "bag": list(item.bag),
                "history": [
                    {
                        "step": h.get("step", "?"),
                        "action": str(h.get("action", "")),
                        "response": " ".join(str(h.get("response", "")).split()),
                    }
                    for h in item.history[-HISTORY_SHOWN:]
                ],
                "thought": item.thought,
                "action": item.action,
                "response": item.response,
            }
    raise NotFound(f"item: {key} is no judged step of run {key.run!r}")


def metric2_payload(viewer: Viewer, item: str) -> dict[str, Any]:
    """An annotator's view of a metric2 item: the judge's context and the rubric (blind)."""
    key = StepKey.parse(item)
    entry = _escape_run(viewer, key.run)
    number = entry.episodes.find(key.instance_id, key.trial)
    if number is None:
        raise NotFound(f"item: run {key.run!r} has no episode {key.instance_id!r} #{key.trial}")
    context = judge_context(entry.episodes.read(number), key)
    return {"kind": "metric2", "item": item, "context": context, "rubric": rubric()}


# ---- validity items ----


def _instances_file(runs_dir: Path, file: str) -> Path:
    """A built instances file named relative to the runs folder (never a path outside it)."""
    root = Path(runs_dir).resolve()
    if not file or Path(file).is_absolute():
        raise BadRating(f"file: got {shown(file)}; expected a .jsonl path under the runs folder")
    path = (root / file).resolve()
    if not path.is_relative_to(root) or path.suffix != ".jsonl" or not path.is_file():
        raise NotFound(f"file: no instances file {file!r} under the runs folder")
    return path


def _tasks(runs_dir: Path, file: str) -> dict[str, ExploreTask | ComboTask]:
    path = _instances_file(runs_dir, file)
    kind = detect_kind(path)
    tasks = load_explore(path)[0] if kind == "explore" else load_combo(path)[0]
    return {t.id: t for t in tasks}


def validity_items(runs_dir: Path, file: str) -> list[str]:
    """`FILE#id` of every instance of a built instances file, in file order."""
    return [f"{file}#{task_id}" for task_id in _tasks(runs_dir, file)]


def validity_payload(runs_dir: Path, item: str) -> dict[str, Any]:
    """What a reviewer sees of an instance (§3.5): statement, tests, reference solution."""
    file, sep, task_id = str(item).rpartition("#")
    if not sep or not file or not task_id:
        raise BadRating(f"item: got {shown(item)}; expected FILE#id")
    task = _tasks(runs_dir, file).get(task_id)
    if task is None:
        raise NotFound(f"item: {file!r} has no instance {task_id!r}")
    if isinstance(task, ExploreTask):
        instance = {
            "pipeline": "explore",
            "id": task.id,
            "question": task.question,
            "function_signature": task.function_signature,
            "constraints": list(task.constraints),
            "tests": task.test_code,
            "reference_solution": task.reference_solution,
        }
    else:
        instance = {
            "pipeline": "combo",
            "id": task.id,
            "question": task.question,
            "demo_tests": task.demo_test_func,
            "tests": task.full_test_func,
            "reference_solution": task.canonical_solution,
        }
    return {"kind": "validity", "item": item, "instance": instance}


def payload(viewer: Viewer, kind: str, item: str) -> dict[str, Any]:
    if kind == "metric2":
        return metric2_payload(viewer, item)
    return validity_payload(viewer.runs_dir, item)


# ---- ratings ----


def _kind(kind: Any) -> str:
    if kind not in KINDS:
        raise BadRating(f"kind: got {shown(kind)}; allowed: {', '.join(KINDS)}")
    return str(kind)


def check_value(kind: str, value: Any) -> dict[str, Any]:
    """The rating as stored, or BadRating naming the field at fault."""
    if not isinstance(value, dict):
        raise BadRating(f"value: got {shown(value)}; expected an object")
    if kind == "metric2":
        out: dict[str, Any] = {}
        for criterion in CRITERIA:
            score = value.get(criterion)
            if isinstance(score, bool) or not isinstance(score, int) or score not in SCORE_RANGE:
                raise BadRating(f"value.{criterion}: got {shown(score)}; allowed: 1-5")
            out[criterion] = score
        return out
    valid = value.get("valid")
    if not isinstance(valid, bool):
        raise BadRating(f"value.valid: got {shown(valid)}; allowed: true or false")
    reason = value.get("reason", "")
    if not isinstance(reason, str) or len(reason) > REASON_CHARS:
        raise BadRating(f"value.reason: expected text of at most {REASON_CHARS} characters")
    if not valid and not reason.strip():
        raise BadRating("value.reason: say why the instance is not valid")
    return {"valid": valid, "reason": reason.strip()}


def _assignment(store: StudyStore, user: User, kind: str, item: str) -> Any:
    for assignment in store.assignments(user.name, kind):
        if assignment.item == item:
            return assignment
    raise NotAssigned(f"item: {item!r} is not in your {kind} queue")


def rate(store: StudyStore, user: User, kind: str, item: str, value: Any) -> dict[str, Any]:
    """Store `user`'s rating of an item assigned to them (replacing their earlier one) and mark
    the assignment done; returns the rating as stored."""
    kind = _kind(kind)
    if not isinstance(item, str) or not item:
        raise BadRating(f"item: got {shown(item)}; expected an item key")
    stored = check_value(kind, value)
    assignment = _assignment(store, user, kind, item)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with store.connect() as db:
        db.execute(
            "INSERT INTO annotation_ratings (kind, item, user_id, annotator, value, rated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, item, user_id) DO UPDATE SET "
            "annotator = excluded.annotator, value = excluded.value, rated_at = excluded.rated_at",
            (kind, item, user.id, user.name, json.dumps(stored), now),
        )
    if not assignment.done:
        store.mark_done(assignment.id)
    return stored


def my_ratings(store: StudyStore, user: User, kind: str) -> dict[str, dict[str, Any]]:
    """Item -> the user's own rating of that kind (nobody else's)."""
    with store.connect() as db:
        rows = db.execute(
            "SELECT item, value FROM annotation_ratings WHERE user_id = ? AND kind = ?",
            (user.id, kind),
        ).fetchall()
    return {row[0]: json.loads(row[1]) for row in rows}


def _all_ratings(store: StudyStore, kind: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(item, annotator, value) of every rating of a kind, oldest first (exports only)."""
    with store.connect() as db:
        rows = db.execute(
            "SELECT item, annotator, value FROM annotation_ratings WHERE kind = ? "
            "ORDER BY rated_at, item, annotator",
            (kind,),
        ).fetchall()
    return [(row[0], row[1], json.loads(row[2])) for row in rows]


def progress(store: StudyStore, user: User) -> dict[str, Any]:
    """Per kind: items assigned to the user, those they rated, and each item's state."""
    out = {}
    for kind in KINDS:
        mine = my_ratings(store, user, kind)
        items = [
            {"item": a.item, "rated": a.item in mine} for a in store.assignments(user.name, kind)
        ]
        rated = sum(i["rated"] for i in items)
        out[kind] = {"assigned": len(items), "rated": rated, "items": items}
    return out


def next_item(viewer: Viewer, store: StudyStore, user: User, kind: str) -> dict[str, Any]:
    """The user's first assigned item of `kind` they have not rated, with what they may see of
    it; items that cannot be shown (a run deleted) are skipped and named."""
    kind = _kind(kind)
    mine = my_ratings(store, user, kind)
    skipped = []
    assignments = store.assignments(user.name, kind)
    for assignment in assignments:
        if assignment.done or assignment.item in mine:
            continue
        try:
            shown_item = payload(viewer, kind, assignment.item)
        except ForkingPathsError as exc:
            skipped.append({"item": assignment.item, "error": str(exc)})
            continue
        return {
            **shown_item,
            "progress": {"assigned": len(assignments), "rated": len(mine)},
            "skipped": skipped,
        }
    return {
        "kind": kind,
        "item": None,
        "progress": {"assigned": len(assignments), "rated": len(mine)},
        "skipped": skipped,
    }


def item_for(viewer: Viewer, store: StudyStore, user: User, kind: str, item: str) -> dict:
    """An item of the user's queue with their own earlier rating (to rate it again)."""
    kind = _kind(kind)
    _assignment(store, user, kind, item)
    return {**payload(viewer, kind, item), "mine": my_ratings(store, user, kind).get(item)}


# ---- exports ----


def export_metric2(store: StudyStore, run: str | None = None) -> list[dict[str, Any]]:
    """Every Metric 2 rating (of `run` only, when given) as `escape agreement` reads them: one
    line per annotator and step, `annotator` the user's name. Ratings of several runs are
    refused without `run`: agreement pairs them with one run's records by instance, trial,
    attempt and step, which several runs share."""
    rows = []
    runs = set()
    for item, annotator, value in _all_ratings(store, "metric2"):
        key = StepKey.parse(item)
        if run is not None and key.run != run:
            continue
        runs.add(key.run)
        rows.append(
            {
                "instance_id": key.instance_id,
                "trial": key.trial,
                "attempt": key.attempt,
                "step": key.t,
                **{c: value[c] for c in CRITERIA},
                "annotator": annotator,
                "run": key.run,
            }
        )
    if len(runs) > 1:
        raise BadRating(
            f"run: the ratings cover {len(runs)} runs ({', '.join(sorted(runs))}); export one"
        )
    return rows


def export_validity(store: StudyStore, file: str | None = None) -> list[dict[str, Any]]:
    """Every validity label (of `file` only, when given) in the form
    `construction.validity.load_validity` reads: file, id, valid, reason, annotator."""
    rows = []
    for item, annotator, value in _all_ratings(store, "validity"):
        item_file, _, task_id = item.rpartition("#")
        if file is not None and item_file != file:
            continue
        row = {"file": item_file, "id": task_id, **value, "annotator": annotator}
        rows.append({k: row[k] for k in VALIDITY_FIELDS})
    return rows


def _player(record: EpisodeRecord, run_dir: Path) -> str:
    """Who played: the record's `player` option or state, else the run folder's name."""
    for source in (record.agent_options, record.agent_state):
        name = source.get("player") if isinstance(source, Mapping) else None
        if isinstance(name, str) and name:
            return name
    return run_dir.name


def export_turtlesoup_baseline(runs_dir: Path) -> dict[str, Any]:
    """The per-puzzle human baseline file (`human_baseline.py`) of the people's TurtleSoup runs
    (`RUNS_DIR/human-turtlesoup-*/`): puzzle id -> each player's Overall (%), a player's
    episodes of one puzzle averaged. Episodes without an Overall score are left out."""
    scores: dict[str, dict[str, list[float]]] = {}
    root = Path(runs_dir)
    for folder in sorted(root.glob(HUMAN_TURTLESOUP)):
        for run_dir in run_dirs(folder):
            for record in load_records(run_dir, transcripts=False):
                overall = record.metrics.get("overall")
                if not record.benchmark.startswith("turtlesoup") or record.status != "ok":
                    continue
                if isinstance(overall, bool) or not isinstance(overall, int | float):
                    continue
                players = scores.setdefault(record.instance_id, {})
                players.setdefault(_player(record, run_dir), []).append(float(overall))
    if not scores:
        raise NotFound(f"no scored TurtleSoup episode in {root / HUMAN_TURTLESOUP}")
    puzzles = {}
    for puzzle, players in sorted(scores.items()):
        means = [round(statistics.fmean(players[p]), 4) for p in sorted(players)]
        puzzles[puzzle] = means[0] if len(means) == 1 else means
    return {"puzzles": puzzles}


# ---- routes ----


def check_items(viewer: Viewer, kind: str, items: list[str]) -> None:
    """Refuse, when they are assigned, items that do not exist: a Metric 2 key that is no
    judged step of its run, a validity key that is no instance of its file."""
    judged: dict[str, set[str]] = {}
    for item in items:
        try:
            if kind == "metric2":
                run = str(item).split("|", 1)[0]
                if run not in judged:
                    judged[run] = set(metric2_items(viewer, run))
                if item not in judged[run]:
                    raise ConfigError(f"no judged step of run {run!r}")
            else:
                validity_payload(viewer.runs_dir, item)
        except ForkingPathsError as exc:
            raise ConfigError(
                f"items: {shown(item)}: {exc}; list the items on the annotation page"
            ) from None


def add_routes(app: web.Application) -> None:
    """The annotation routes under /api/study/annotate/ (the app holds the StudyStore)."""
    for kind in ("metric2", "validity"):
        register_assign_check(
            app, kind, lambda _benchmark, items, kind=kind: check_items(app[VIEWER], kind, items)
        )
    app.on_startup.append(_migrate)
    app.router.add_get("/api/study/annotate/next", _next)
    app.router.add_get("/api/study/annotate/item", _item)
    app.router.add_post("/api/study/annotate/rate", _rate)
    app.router.add_get("/api/study/annotate/progress", _progress)
    app.router.add_get("/api/study/annotate/items", _items)
    app.router.add_get("/api/study/annotate/export", _export)


async def _migrate(app: web.Application) -> None:
    migrate(app[STORE])


def _json(payload: Any, status: int = 200) -> web.Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return web.Response(
        text=body,
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _query(request: web.Request, name: str) -> str:
    value = request.query.get(name)
    if not value:
        raise BadRating(f"{name}: missing; give ?{name}=...")
    return value


async def _next(request: web.Request) -> web.StreamResponse:
    user = await require(request, "annotator")
    kind = _kind(request.query.get("kind"))
    app = request.app
    data = await asyncio.to_thread(next_item, app[VIEWER], app[STORE], user, kind)
    return _json(data)


async def _item(request: web.Request) -> web.StreamResponse:
    user = await require(request, "annotator")
    kind, item = _query(request, "kind"), _query(request, "item")
    app = request.app
    try:
        data = await asyncio.to_thread(item_for, app[VIEWER], app[STORE], user, kind, item)
    except NotAssigned as exc:
        return _json({"error": str(exc)}, 403)
    return _json(data)


async def _rate(request: web.Request) -> web.StreamResponse:
    user = await require(request, "annotator")
    try:
        body = await request.json()
    except ValueError:
        return _json({"error": "body: expected a JSON object {kind, item, value}"}, 400)
    if not isinstance(body, dict):
        return _json({"error": "body: expected a JSON object {kind, item, value}"}, 400)
    store = request.app[STORE]
    args = (store, user, body.get("kind"), body.get("item"), body.get("value"))
    try:
        stored = await asyncio.to_thread(rate, *args)
    except NotAssigned as exc:
        return _json({"error": str(exc)}, 403)
    done = await asyncio.to_thread(progress, store, user)
    return _json({"ok": True, "value": stored, "progress": done[body["kind"]]})


async def _progress(request: web.Request) -> web.StreamResponse:
    user = await require(request, "annotator")
    return _json(await asyncio.to_thread(progress, request.app[STORE], user))


async def _items(request: web.Request) -> web.StreamResponse:
    await require(request, "admin")
    kind = _kind(request.query.get("kind"))
    viewer = request.app[VIEWER]
    if kind == "metric2":
        items = await asyncio.to_thread(metric2_items, viewer, _query(request, "run"))
    else:
        file = _query(request, "file")
        items = await asyncio.to_thread(validity_items, viewer.runs_dir, file)
    return _json({"kind": kind, "items": items})


async def _export(request: web.Request) -> web.StreamResponse:
    """An admin's export: `format=jsonl` gives the file itself (metric2, validity), else JSON."""
    await require(request, "admin")
    kind = request.query.get("kind")
    if kind not in EXPORT_KINDS:
        raise BadRating(f"kind: got {shown(kind)}; allowed: {', '.join(EXPORT_KINDS)}")
    app = request.app
    if kind == "turtlesoup":
        baseline = await asyncio.to_thread(export_turtlesoup_baseline, app[VIEWER].runs_dir)
        return _json(baseline)
    if kind == "metric2":
        rows = await asyncio.to_thread(export_metric2, app[STORE], request.query.get("run"))
    else:
        rows = await asyncio.to_thread(export_validity, app[STORE], request.query.get("file"))
    if request.query.get("format") == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        return web.Response(
            text=text,
            content_type="application/x-ndjson",
            headers={
                "Cache-Control": "no-store",
                "Content-Disposition": f'attachment; filename="{kind}.jsonl"',
            },
        )
    return _json({"kind": kind, "rows": rows})
