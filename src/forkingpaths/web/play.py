"""Human play in the browser: the web agent, journaled play sessions, `/api/study/play` routes."""

from __future__ import annotations

import asyncio
import copy
import logging
import secrets
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from forkingpaths.core.agent import Decision
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.env import Env, Observation, Step, Wrapper
from forkingpaths.core.errors import ConfigError, ForkingPathsError
from forkingpaths.core.records import EpisodeRecord, RoleModel, RunOptions, RunSpec, utc_now
from forkingpaths.core.registry import benchmark_class, benchmark_names, make_benchmark
from forkingpaths.models.factory import close_models
from forkingpaths.models.usage import UsageMeter
from forkingpaths.runner.episode import EpisodeContext, EpisodeJob, EpisodeRunner
from forkingpaths.runner.rundir import RunDirectory, check_run_id
from forkingpaths.runner.scoring import finalize_run
from forkingpaths.web.accounts import STORE, StudyStore, json_error, require
from forkingpaths.web.admin_routes import register_assign_check

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# The state a play page receives (GET /api/study/play/state, and every start/act answer):
#
#   {
#     "session": "3f2a...",            # the play session's id (hex)
#     "benchmark": "griddag",          # short name
#     "instance": "low-easy-s0",
#     "trial": 0,                      # trial of this instance in RUNS_DIR/human-<b>-<user>/
#     "step": 3,                       # steps taken so far (len(history))
#     "observation": {
#       "text": "...",                 # EXACTLY the text an agent reads now (the last one once
#                                      # done: what the final step answered)
#       "data": {...}                  # the env's Observation.data, keys of OBSERVATION_FIELDS
#     },                               # only (what the text already shows; never gold paths,
#                                      # solutions, key points, budgets, outcomes)
#     "history": [{"action": "up", "thought": "", "feedback": "...", "valid": true}, ...],
#     "trail": [{...}, ...],           # for benchmarks in TRAIL_FIELDS: every observation's data
#                                      # so far (reset first), those keys only; else []
#     "waiting": true,                 # the env waits for this person's next action
#     "done": false,                   # the episode ended (recorded in the run directory)
#     "status": "running",             # "running" | "done" | "error"
#     "metrics": null,                 # once done: the episode's scalar metrics (numbers, yes/no,
#                                      # short text; tables and lists left out)
#     "error": null                    # one line when the episode failed (a role model down...)
#   }
#
# POST /api/study/play/act {session, action, thought?} sends `action` as the agent's action
# string (exactly what an LLM agent would reply) and answers the state after the env replied.
# POST /api/study/play/start {benchmark, instance} starts or resumes; answers the state.
# ---------------------------------------------------------------------------------------------

OBSERVATION_FIELDS: Mapping[str, frozenset[str]] = {
    # griddag's data["outcome"] carries the hidden step budget: left out.
    "griddag": frozenset({"position", "available", "steps", "node", "valid", "event"}),
    "eeb": frozenset(
        {
            # maze: the known map (fog as the agent sees it) and the counters its text shows
            "level",
            "size",
            "map",
            "position",
            "start",
            "goal",
            "lives",
            "score",
            "steps",
            "max_steps",
            "items",
            "key_required",
            "coins_left",
            "coins_collected",
            "coins_total",
            "monsters_visible",
            "explored",
            "cells",
            "kills",
            "barriers",
            "full_vision",
            "success",
            "done",
            "last_action",
            "valid",
            "events",
            # match-2: `groups` (every legal move, a reference agent's aid) is not in the text
            "board",
            "steps_used",
            "steps_remaining",
            "targets",
            "cleared",
            "targets_remaining",
            "props_enabled",
            "inventory",
            "prop_costs",
            "error",
        }
    ),
    "escape": frozenset(
        {
            "scenario",
            "objective",
            "attempt",
            "step",
            # not "phase": the agent's text never shows the checkpoint counter
            "scene",
            "scene_description",
            "possible_actions",
            "tools_in_bag",
            "items",
            "scene_tools",
            "moves",
            "valid_scene_names",
            "bag",
            "forbidden",
            "history",
            "last",
        }
    ),
    # turtlesoup's initial_info names the role models; the bottom is never in its data.
    "turtlesoup": frozenset(
        {
            "puzzle_id",
            "language",
            "title",
            "surface",
            "turn",
            "max_turns",
            "history",
            "key_clues",
            "phase",
        }
    ),
}
"""Per benchmark, the keys of `Observation.data` a player receives: what the agent's observation
text already shows. A benchmark not listed sends the text alone."""

TRAIL_FIELDS: Mapping[str, frozenset[str]] = {
    # What griddag's agent has seen of the map: the cells it stood on, their open directions
    # and the nodes found there (its controls draw the known grid from them).
    "griddag": frozenset({"position", "available", "node"}),
}
"""Per benchmark, the keys of every earlier observation's data a player receives in `trail`
(a subset of OBSERVATION_FIELDS): what the agent was shown along the way."""

MIGRATIONS: list[str] = [
    """
    CREATE TABLE play_sessions (
        id TEXT PRIMARY KEY,
        user_name TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        instance TEXT NOT NULL,
        trial INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX play_sessions_user ON play_sessions (user_name, benchmark, instance);
    CREATE TABLE play_journal (
        session_id TEXT NOT NULL REFERENCES play_sessions(id),
        seq INTEGER NOT NULL,
        action TEXT NOT NULL,
        thought TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (session_id, seq)
    );
    """,
]
"""The play tables, one script per version; append, never edit one that has shipped."""

HUMAN_AGENT = "human"
"""The agent name of every human-played record."""
MAX_ACTION_CHARS = 20_000
"""Longest action a person may send (a TurtleSoup summary fits many times)."""
_TEXT_METRIC_CHARS = 200


class PlayError(ForkingPathsError):
    """A play request that cannot be served now (HTTP 409): not this person's turn, or the
    episode has ended."""


class PlayNotFound(ForkingPathsError):
    """No play session of that id belongs to the person asking (HTTP 404)."""


LAST_STEP_FIELDS = frozenset({"action", "response"})
"""Of escape's `last` (the step before), what its text shows: the engine's own judgement of
it (success, kind, canonical form) stays on the server."""


def filter_observation(benchmark: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an observation's data a player receives (`OBSERVATION_FIELDS`)."""
    allowed = OBSERVATION_FIELDS.get(benchmark, frozenset())
    out = {key: value for key, value in data.items() if key in allowed}
    if isinstance(out.get("last"), Mapping):
        out["last"] = {k: v for k, v in out["last"].items() if k in LAST_STEP_FIELDS}
    return out


def public_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """An episode's metrics as a player sees them: scalars only (tables of paths, judge
    breakdowns and lists are the viewer's, not the player's)."""
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        short_text = isinstance(value, str) and len(value) <= _TEXT_METRIC_CHARS
        if value is None or isinstance(value, bool | int | float) or short_text:
            out[key] = value
    return out


class WebHumanAgent:
    """A person acting through the browser: `act` publishes the observation and waits for the
    action the play route sends. Journaled actions given at construction are replayed first,
    without waiting, so a session rebuilt after a restart reaches the step it had reached."""

    def __init__(self, replay: Iterable[tuple[str, str]] = ()) -> None:
        self.observation: Observation | None = None
        self.ready = asyncio.Event()
        """Set while a person's action is awaited, and once the episode has ended."""
        self._replay: deque[Decision] = deque(Decision(a, t) for a, t in replay)
        self._pending: asyncio.Future[Decision] | None = None

    def reset(self, instance: Instance, seed: int) -> None:
        self.observation = None

    async def act(self, observation: Observation) -> Decision:
        self.observation = observation
        if self._replay:
            return self._replay.popleft()
        self._pending = asyncio.get_running_loop().create_future()
        self.ready.set()
        try:
            return await self._pending
        finally:
            self._pending = None

    def state(self) -> dict[str, Any]:
        return {}

    @property
    def waiting(self) -> bool:
        """A person's action is awaited now."""
        return self._pending is not None and not self._pending.done()

    def send(self, decision: Decision) -> None:
        """Hand the awaited action to the episode."""
        if self._pending is None or self._pending.done():
            raise PlayError("action: the episode is not waiting for an action now")
        self.ready.clear()
        self._pending.set_result(decision)


class _Watched(Wrapper):
    """Keeps the env's observations, the final one included (which no agent is shown)."""

    def __init__(self, env: Env) -> None:
        super().__init__(env)
        self.seen: list[Observation] = []

    @property
    def last(self) -> Observation | None:
        return self.seen[-1] if self.seen else None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> Observation:
        observation = self.env.reset(seed=seed, options=options)
        self.seen = [observation]
        return observation

    async def astep(self, action: str) -> Step:
        result = await self.env.astep(action)
        self.seen.append(result.observation)
        return result


@dataclass
class PlaySession:
    """One person's episode of one instance, live in this server."""

    id: str
    user: str
    benchmark: str
    instance: str
    trial: int
    seed: int
    created_at: str
    agent: WebHumanAgent
    status: str = "running"
    record: EpisodeRecord | None = None
    """The finished record (while running, the runner's in-flight one is read)."""
    error: str | None = None
    journaled: int = 0
    """Actions in the journal."""
    runner: EpisodeRunner | None = None
    watched: _Watched | None = None
    """The env as this session's episode plays it (its observations so far)."""
    task: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def done(self) -> bool:
        return self.status == "done"

    def current_record(self) -> EpisodeRecord | None:
        if self.record is not None:
            return self.record
        if self.runner is not None:
            return self.runner.in_flight.get((self.instance, self.trial))
        return None

    async def settle(self) -> None:
        """Wait until the episode waits for this person, or has ended."""
        await self.agent.ready.wait()

    def state(self) -> dict[str, Any]:
        """The JSON a play page receives (the format is written at the top of this module)."""
        record = self.current_record()
        steps = record.steps if record is not None else []
        last = self.watched.last if self.watched is not None else None
        observation = last if last is not None else self.agent.observation
        text = observation.text if observation is not None else ""
        if self.done and steps and not text:
            text = steps[-1].feedback
        data = observation.data if observation is not None else {}
        return {
            "session": self.id,
            "benchmark": self.benchmark,
            "instance": self.instance,
            "trial": self.trial,
            "step": len(steps),
            "observation": {"text": text, "data": filter_observation(self.benchmark, data)},
            "history": [
                {"action": s.action, "thought": s.thought, "feedback": s.feedback, "valid": s.valid}
                for s in steps
            ],
            "trail": self._trail(),
            "waiting": self.status == "running" and self.agent.waiting,
            "done": self.done,
            "status": self.status,
            "metrics": public_metrics(record.metrics) if self.done and record else None,
            "error": self.error,
        }

    def _trail(self) -> list[dict[str, Any]]:
        allowed = TRAIL_FIELDS.get(self.benchmark)
        if not allowed or self.watched is None:
            return []
        return [{k: v for k, v in o.data.items() if k in allowed} for o in self.watched.seen]


class PlayManager:
    """Starts, resumes and plays people's sessions. Every action is journaled in the study's
    SQLite file before the env sees it; a session this server does not hold (it restarted, the
    tab was closed long ago) is rebuilt by replaying its journal into a fresh env, which gives
    the same state because envs are deterministic given the seed and the role models' replies
    (at temperature 0 those come back from the response cache). A finished episode is appended
    to `RUNS_DIR/human-<benchmark>-<user>/` as a record of agent `human`, and that run's
    metrics.json is rewritten."""

    def __init__(
        self,
        runs_dir: Path,
        store: StudyStore,
        roles: Mapping[str, RoleModel] | None = None,
        options: RunOptions | None = None,
    ) -> None:
        self.runs_dir = Path(runs_dir)
        self.store = store
        self.roles = dict(roles or {})
        self.options = options or RunOptions(progress=False)
        self._sessions: dict[str, PlaySession] = {}
        self._benchmarks: dict[str, Benchmark] = {}
        self._lock = asyncio.Lock()
        store.migrate("play", MIGRATIONS)

    # ---- what a route calls ----

    async def start(self, user: str, benchmark: str, instance_id: str) -> PlaySession:
        """The person's unfinished session of this instance (rebuilt if this server does not
        hold it, retried if it failed), or a new one on the next free trial."""
        bench = self.benchmark(benchmark)
        instance = bench.instance(instance_id)
        async with self._lock:
            row = await asyncio.to_thread(self._unfinished_row, user, bench.name, instance.id)
            if row is not None:
                session = self._sessions.get(row["id"])
                if session is None or session.status == "error":
                    session = await self._rebuild(row)
            else:
                session = await self._new(user, bench, instance)
        await session.settle()
        return session

    async def latest(self, user: str, benchmark: str, instance_id: str) -> PlaySession | None:
        """The person's most recent session of this instance, finished or not."""
        bench = self.benchmark(benchmark)
        rows = await asyncio.to_thread(
            self._rows,
            "SELECT * FROM play_sessions WHERE user_name = ? AND benchmark = ? AND instance = ? "
            "ORDER BY trial DESC LIMIT 1",
            (user, bench.name, instance_id),
        )
        return await self.get(rows[0]["id"], user) if rows else None

    async def get(self, session_id: str, user: str) -> PlaySession:
        """A session of this person's by id (rebuilt from its journal if need be); another
        person's reads as not found."""
        async with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                rows = await asyncio.to_thread(
                    self._rows, "SELECT * FROM play_sessions WHERE id = ?", (session_id,)
                )
                if not rows or rows[0]["user_name"] != user:
                    raise PlayNotFound(f"session: no play session {session_id!r} of yours")
                session = await self._rebuild(rows[0])
        if session.user != user:
            raise PlayNotFound(f"session: no play session {session_id!r} of yours")
        await session.settle()
        return session

    async def act(self, session_id: str, user: str, action: str, thought: str = "") -> PlaySession:
        """Journal the person's action, then play it; returns once the env has answered."""
        if not isinstance(action, str) or len(action) > MAX_ACTION_CHARS:
            raise ConfigError(f"action: give a string of at most {MAX_ACTION_CHARS} characters")
        if not isinstance(thought, str) or len(thought) > MAX_ACTION_CHARS:
            raise ConfigError(f"thought: give a string of at most {MAX_ACTION_CHARS} characters")
        session = await self.get(session_id, user)
        async with session.lock:
            await session.settle()
            if session.status != "running" or not session.agent.waiting:
                raise PlayError(
                    f"session: the episode is {session.status}; it takes no more actions"
                )
            # Written (and committed) before the env sees it: a restart replays it.
            await asyncio.to_thread(self._journal, session.id, session.journaled, action, thought)
            session.journaled += 1
            session.agent.send(Decision(action, thought))
            await session.settle()
        return session

    async def aclose(self) -> None:
        """Stop every live episode (their journals stay: the next server resumes them)."""
        tasks = [s.task for s in self._sessions.values() if s.task and not s.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def benchmark(self, name: str) -> Benchmark:
        """The benchmark by short name or id (built once per manager)."""
        if not isinstance(name, str) or not name:
            raise ConfigError("benchmark: give a benchmark's name, e.g. griddag")
        if name not in self._benchmarks:
            bench = make_benchmark(name)
            self._benchmarks[name] = self._benchmarks.setdefault(bench.name, bench)
        return self._benchmarks[name]

    def run_dir(self, user: str, benchmark: Benchmark) -> RunDirectory:
        """The run directory of a person's episodes of a benchmark."""
        name = f"human-{benchmark.name}-{user}"
        check_run_id(name)
        return RunDirectory(self.runs_dir / name)

    def run_spec(self, benchmark: Benchmark) -> RunSpec:
        """The spec of every human run of `benchmark` on this server: agent `human`, no model,
        the configured role models the benchmark has."""
        roles = {r: m for r, m in self.roles.items() if r in benchmark.model_roles}
        # A role nobody configured is played as in the offline quick suite (TurtleSoup's
        # scripted responder and judge), so a study runs with no endpoint.
        offline = next(iter(benchmark.role_defaults_by_model.values()), {})
        for role, model in offline.items():
            roles.setdefault(role, RoleModel(model=model))
        return RunSpec(
            benchmark=benchmark.id,
            split=benchmark.default_split,
            agent=HUMAN_AGENT,
            roles=roles,
        )

    # ---- sessions ----

    async def _new(self, user: str, bench: Benchmark, instance: Instance) -> PlaySession:
        run_dir = self.run_dir(user, bench)
        await asyncio.to_thread(run_dir.open, self.run_spec(bench))
        recorded = await asyncio.to_thread(run_dir.latest_records)
        rows = await asyncio.to_thread(
            self._rows,
            "SELECT trial FROM play_sessions "
            "WHERE user_name = ? AND benchmark = ? AND instance = ?",
            (user, bench.name, instance.id),
        )
        taken = {trial for iid, trial in recorded if iid == instance.id}
        taken |= {row["trial"] for row in rows}
        trial = max(taken) + 1 if taken else 0
        seed = bench.episode_seed(instance, trial, self.run_spec(bench).seed)
        row = {
            "id": secrets.token_hex(16),
            "user_name": user,
            "benchmark": bench.name,
            "instance": instance.id,
            "trial": trial,
            "seed": seed,
            "status": "running",
            "created_at": utc_now(),
        }
        await asyncio.to_thread(self._insert_session, row)
        return self._launch(row, [])

    async def _rebuild(self, row: Mapping[str, Any]) -> PlaySession:
        """A session from its database row: done if its record is in the run directory,
        else replayed from its journal."""
        bench = self.benchmark(row["benchmark"])
        run_dir = self.run_dir(row["user_name"], bench)
        await asyncio.to_thread(run_dir.open, self.run_spec(bench))
        recorded = (await asyncio.to_thread(run_dir.latest_records)).get(
            (row["instance"], row["trial"])
        )
        if recorded is not None and recorded.status == "ok":
            # Killed after the record was written but maybe before the rest was done.
            if row["status"] != "done":
                await asyncio.to_thread(
                    self._close_recorded,
                    row["id"],
                    row["user_name"],
                    row["instance"],
                    bench,
                    run_dir,
                )
            session = self._session(row, WebHumanAgent())
            session.status, session.record = "done", recorded
            session.agent.ready.set()
            self._sessions[session.id] = session
            return session
        journal = await asyncio.to_thread(
            self._rows,
            "SELECT action, thought FROM play_journal WHERE session_id = ? ORDER BY seq",
            (row["id"],),
        )
        old = self._sessions.get(row["id"])
        if old is not None and old.task is not None and not old.task.done():
            old.task.cancel()
        return self._launch(row, [(j["action"], j["thought"]) for j in journal])

    def _session(self, row: Mapping[str, Any], agent: WebHumanAgent) -> PlaySession:
        return PlaySession(
            id=row["id"],
            user=row["user_name"],
            benchmark=row["benchmark"],
            instance=row["instance"],
            trial=row["trial"],
            seed=row["seed"],
            created_at=row["created_at"],
            agent=agent,
        )

    def _launch(self, row: Mapping[str, Any], journal: list[tuple[str, str]]) -> PlaySession:
        """Start the episode's task: the ordinary episode runner, with this session's agent."""
        bench = self.benchmark(row["benchmark"])
        session = self._session(row, WebHumanAgent(journal))
        session.journaled = len(journal)
        spec = self.run_spec(bench)
        run_dir = self.run_dir(session.user, bench)
        session.runner = EpisodeContext(run_dir.run_id, spec, self.options).build(
            UsageMeter(), _played_by(bench, session)
        )
        instance = bench.instance(session.instance)
        job = EpisodeJob(instance, session.trial, session.seed)
        session.task = asyncio.create_task(self._play(session, job, bench, run_dir))
        self._sessions[session.id] = session
        return session

    async def _play(
        self, session: PlaySession, job: EpisodeJob, bench: Benchmark, run_dir: RunDirectory
    ) -> None:
        runner = session.runner
        assert runner is not None
        try:
            record = await runner(job)
            if record.status != "ok":
                # Not recorded: the journal stays, and starting the instance again retries it.
                session.status, session.error = "error", (record.error or "").splitlines()[0]
                session.record = record
                return
            record.started_at = session.created_at
            await asyncio.to_thread(self._record, session, record, bench, run_dir)
            session.record, session.status = record, "done"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a failure to write must reach the person, not kill the loop
            log.exception("play session %s failed", session.id)
            session.status, session.error = "error", f"{type(exc).__name__}: {exc}"
        finally:
            session.agent.ready.set()
            await close_models(runner.roles.values())

    def _record(
        self, session: PlaySession, record: EpisodeRecord, bench: Benchmark, run_dir: RunDirectory
    ) -> None:
        """Append the finished episode, then close it (`_close_recorded`)."""
        run_dir.append(record)
        self._close_recorded(session.id, session.user, session.instance, bench, run_dir)

    def _close_recorded(
        self, session_id: str, user: str, instance: str, bench: Benchmark, run_dir: RunDirectory
    ) -> None:
        """Everything after a played episode's record is on disk, safe to repeat: its
        assignment done first (so a failure below never reopens the instance), the session
        row done, the run rescored. Run again for a session found recorded after a restart."""
        for assignment in self.store.assignments(user, "play"):
            if assignment.item == instance and assignment.benchmark in (bench.name, bench.id):
                self.store.mark_done(assignment.id, user)
        self._finish_row(session_id)
        latest = run_dir.latest_records()
        jobs = [
            EpisodeJob(bench.instance(iid), trial, r.seed) for (iid, trial), r in latest.items()
        ]
        finalize_run(run_dir, bench, jobs)

    # ---- the database ----

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self.store.connect() as db:
            return [dict(row) for row in db.execute(sql, args).fetchall()]

    def _unfinished_row(self, user: str, benchmark: str, instance: str) -> dict[str, Any] | None:
        rows = self._rows(
            "SELECT * FROM play_sessions WHERE user_name = ? AND benchmark = ? AND instance = ? "
            "AND status != 'done' ORDER BY trial DESC LIMIT 1",
            (user, benchmark, instance),
        )
        return rows[0] if rows else None

    def _insert_session(self, row: Mapping[str, Any]) -> None:
        with self.store.connect() as db:
            db.execute(
                "INSERT INTO play_sessions (id, user_name, benchmark, instance, trial, seed, "
                "status, created_at) VALUES (:id, :user_name, :benchmark, :instance, :trial, "
                ":seed, :status, :created_at)",
                dict(row),
            )

    def _journal(self, session_id: str, seq: int, action: str, thought: str) -> None:
        with self.store.connect() as db:
            db.execute(
                "INSERT INTO play_journal (session_id, seq, action, thought) VALUES (?, ?, ?, ?)",
                (session_id, seq, action, thought),
            )

    def _finish_row(self, session_id: str) -> None:
        with self.store.connect() as db:
            db.execute("UPDATE play_sessions SET status = 'done' WHERE id = ?", (session_id,))


def _played_by(benchmark: Benchmark, session: PlaySession) -> Benchmark:
    """The benchmark as the episode runner plays it for this session: its agent is the
    session's (the runner builds agents by name, and a person in a browser is no registered
    agent of every benchmark), and its env keeps the final observation for the done page. A
    shallow copy: the levels and worlds it has loaded are shared, the original is untouched."""
    played = copy.copy(benchmark)
    wrap = benchmark.wrap_env

    def make_agent(name: str, model: Any, options: Mapping[str, Any]) -> WebHumanAgent:
        return session.agent

    def wrap_env(env: Env, instance: Instance) -> Env:
        session.watched = _Watched(wrap(env, instance))
        return session.watched

    played.make_agent = make_agent  # type: ignore[method-assign]
    played.wrap_env = wrap_env  # type: ignore[method-assign]
    return played


# ---- routes ----

PLAY = web.AppKey("play", PlayManager)
"""The application's PlayManager."""


def check_playable(benchmark: str, items: list[str]) -> None:
    """Refuse, when they are assigned, a benchmark that has no play page or an instance it
    does not have (a typo is the admin's to fix, not the player's to find)."""
    bench = make_benchmark(benchmark)
    if bench.play_script() is None:
        playable = [n for n in benchmark_names() if benchmark_class(n).play_script() is not None]
        raise ConfigError(
            f"benchmark: {bench.name} is not played in the browser; allowed: {', '.join(playable)}"
        )
    for item in items:
        try:
            bench.instance(item)
        except ConfigError as exc:
            raise ConfigError(f"items: {exc}") from None


def add_routes(
    app: web.Application,
    runs_dir: Path | None = None,
    roles: Mapping[str, RoleModel] | None = None,
) -> None:
    """Register `/api/study/play/{start,state,act}`; the PlayManager is built at startup
    (its tables migrated) over `app[STORE]` and `runs_dir` (the store's folder by default)."""

    async def on_startup(app: web.Application) -> None:
        store = app[STORE]
        folder = Path(runs_dir) if runs_dir is not None else store.path.parent
        # Built on the loop's thread (its locks belong to the loop); migrating is one quick write.
        app[PLAY] = PlayManager(folder, store, roles)

    async def on_cleanup(app: web.Application) -> None:
        if PLAY in app:
            await app[PLAY].aclose()

    register_assign_check(app, "play", check_playable)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_post("/api/study/play/start", _start)
    app.router.add_get("/api/study/play/state", _state)
    app.router.add_post("/api/study/play/act", _act)


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise json_error(400, "body: send a JSON object") from None
    if not isinstance(body, dict):
        raise json_error(400, "body: send a JSON object")
    return body


def _answer(session: PlaySession) -> web.Response:
    return web.json_response(session.state(), headers={"Cache-Control": "no-store"})


def _failed(exc: ForkingPathsError) -> web.HTTPException:
    status = 404 if isinstance(exc, PlayNotFound) else 409 if isinstance(exc, PlayError) else 400
    return json_error(status, str(exc).splitlines()[0])


async def _start(request: web.Request) -> web.StreamResponse:
    user = await require(request, "player")
    body = await _body(request)
    benchmark, instance = body.get("benchmark"), body.get("instance")
    if not isinstance(benchmark, str) or not benchmark:
        raise json_error(400, "benchmark: missing; give the benchmark's name")
    if not isinstance(instance, str) or not instance:
        raise json_error(400, "instance: missing; give an instance id")
    manager = request.app[PLAY]
    try:
        bench = manager.benchmark(benchmark)
        assigned = [
            a
            for a in await asyncio.to_thread(request.app[STORE].assignments, user.name, "play")
            if a.item == instance and a.benchmark in (bench.name, bench.id, benchmark)
        ]
        if not assigned:
            raise json_error(403, f"instance: {instance!r} of {bench.name} is not assigned to you")
        if all(a.done for a in assigned):
            # Played already: the finished episode is shown, never a second try.
            session = await manager.latest(user.name, bench.name, instance)
            if session is not None:
                return _answer(session)
        session = await manager.start(user.name, bench.name, instance)
    except ForkingPathsError as exc:
        raise _failed(exc) from None
    return _answer(session)


async def _state(request: web.Request) -> web.StreamResponse:
    user = await require(request, "player")
    session_id = request.query.get("session", "")
    if not session_id:
        raise json_error(400, "session: missing; give ?session=ID")
    try:
        session = await request.app[PLAY].get(session_id, user.name)
    except ForkingPathsError as exc:
        raise _failed(exc) from None
    return _answer(session)


async def _act(request: web.Request) -> web.StreamResponse:
    user = await require(request, "player")
    body = await _body(request)
    session_id, action = body.get("session"), body.get("action")
    thought = body.get("thought") or ""
    if not isinstance(session_id, str) or not session_id:
        raise json_error(400, "session: missing; give the play session's id")
    if not isinstance(action, str):
        raise json_error(400, "action: missing; give the action as a string")
    try:
        session = await request.app[PLAY].act(session_id, user.name, action, thought)
    except ForkingPathsError as exc:
        raise _failed(exc) from None
    return _answer(session)
