"""Ray executor: episodes on an existing Ray cluster, recorded by the driver alone."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import EpisodeRecord, record_from_wire, record_to_wire
from forkingpaths.models.factory import close_models
from forkingpaths.models.pricing import PriceTable
from forkingpaths.models.usage import UsageMeter
from forkingpaths.runner.episode import EpisodeContext, EpisodeJob, errored_record
from forkingpaths.runner.executor import Executor, OnRecord, ShouldContinue
from forkingpaths.runner.ray_limits import BrokerLimitsFactory, LimitsBroker

log = logging.getLogger(__name__)

MAX_WORKER_DEATHS = 3
"""An episode whose worker died this many times is recorded as errored instead of queued
again: an episode that kills its worker (memory, a crash in native code) must not kill them
all in turn. `--retry-errors` plays it again."""

WORKER_START_TIMEOUT_S = 180.0
"""How long a worker may take to start (a fresh Python, imports, the benchmark's data)."""

WORKER_CLOSE_TIMEOUT_S = 10.0
"""How long a worker may take to close its models and sandboxes before it is killed."""

NODE_LOOK_INTERVAL_S = 5.0
"""How often, at most, the driver looks for live nodes without a worker (a restarted or added
node), while episodes wait to be played."""

SHARED_ENV = re.compile(r"^(FORKINGPATHS_\w+|OPENAI_\w+|\w+_API_KEY|\w+_BASE_URL|HF_TOKEN)$")
"""The driver's environment variables its workers get (keys, endpoints, the cache folder),
given to each worker actor when it is built: a run behaves the same wherever its episodes
play. Not a job's runtime_env, which Ray's dashboard and `ray list jobs` show."""

_ADDRESS = re.compile(r"^(auto|(ray://)?\[?[A-Za-z0-9.:_-]+?\]?:\d{1,5})$")


def check_ray_address(address: str | None) -> str:
    """The address to join: `auto` (a cluster started on this machine), HOST:PORT of its head,
    or ray://HOST:PORT (Ray Client); None reads RAY_ADDRESS, else `auto`."""
    value = address if address is not None else os.environ.get("RAY_ADDRESS") or "auto"
    if not _ADDRESS.match(value) or (
        value != "auto" and not 0 < int(value.rsplit(":", 1)[1]) < 65536
    ):
        source = "--ray-address" if address is not None else "$RAY_ADDRESS"
        raise ConfigError(
            f"{source} {value!r}: expected auto, HOST:PORT of the cluster's head "
            "(as `ray start --head` printed it) or ray://HOST:PORT"
        )
    return value


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray: pip install 'forkingpaths[ray]' (on the driver and on "
            "every node of the cluster)"
        ) from None
    return ray


class EpisodeWorker:
    """A Ray actor (async) on one node: the local executor's EpisodeRunner, with the run's
    model limits drawn from the cluster's broker and the node's own response-cache file."""

    def __init__(
        self, context: EpisodeContext, broker: Any, prices: PriceTable, env: dict[str, str]
    ) -> None:
        import ray

        os.environ.update(env)  # this process plays only this run's episodes
        runtime = ray.get_runtime_context()
        self.node_id = runtime.get_node_id()
        self.actor_id = runtime.get_actor_id() or ""
        self.host = socket.gethostname()
        self.meter = UsageMeter()
        self.played = 0
        self.runner = context.build(
            self.meter,
            shared_limits=BrokerLimitsFactory(broker, self.actor_id),
            # Processes of one machine share its file safely (SQLite's WAL); machines do not.
            cache_node=self.host,
            prices=prices,
        )

    def ready(self) -> dict[str, Any]:
        """Where this worker runs (called once it is built: a failure to build shows here)."""
        return {"actor_id": self.actor_id, "host": self.host, "pid": os.getpid()}

    async def play(self, job: EpisodeJob) -> tuple[str, int, dict[str, int | float]]:
        """One episode: its record as JSON (`record_to_wire`: each message once, not once per
        call that resent it), then this worker's running usage totals with their sequence
        number (results of one worker may reach the driver out of order)."""
        record = await self.runner(job)
        self.played += 1
        return record_to_wire(record), self.played, self.meter.snapshot()

    async def close(self) -> None:
        runner = self.runner
        await close_models((runner.model, *runner.roles.values()))
        await runner.benchmark.aclose()


@dataclass
class _Worker:
    actor: Any
    node_id: str
    serial: int
    """Unique within a run (a dead worker's usage stays counted beside its replacement's)."""
    host: str = ""
    holder: str = ""
    """Its actor id: what the limits broker counts its slots under."""
    in_flight: dict[asyncio.Future[Any], EpisodeJob] = field(default_factory=dict)


class RayExecutor(Executor):
    """Episodes on the actors of an existing Ray cluster; records come back to the driver.

    Each node with CPUs gets `workers_per_node` async actors (one CPU each), and each actor
    plays up to `concurrency` episodes at a time. The driver hands out one episode per free
    place, appends every record itself (so resume, the budget and the spec check work as for
    the local executor), and sums its workers' usage into `meter`. A worker that dies (its node
    lost, its process killed) has its episodes queued again, to any live worker.
    """

    def __init__(
        self,
        concurrency: int,
        *,
        address: str | None = None,
        workers_per_node: int = 1,
        meter: UsageMeter | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if workers_per_node < 1:
            raise ConfigError(f"--ray-workers-per-node must be >= 1, got {workers_per_node}")
        self.concurrency = concurrency
        self.address = check_ray_address(address)
        self.workers_per_node = workers_per_node
        self.meter = meter if meter is not None else UsageMeter()
        self.prices = prices if prices is not None else PriceTable.load(None)
        self.limits_stats: dict[str, dict[str, Any]] = {}
        """Per model, the broker's statistics at the end of the run (peak slots lent...)."""
        self.nodes_used: set[str] = set()
        """The node ids whose workers played at least one episode."""
        self._serial = 0

    # -- cluster ------------------------------------------------------------------------------

    def check(self) -> None:
        _import_ray()
        self._probe()

    def _connect(self, ray: Any) -> bool:
        """Join the cluster; True when this call did (and so leaves it at the end)."""
        if ray.is_initialized():
            return False
        self._probe()
        try:
            ray.init(
                address=self.address,
                logging_level=logging.WARNING,
                log_to_driver=True,
                namespace="forkingpaths",
            )
        except (ConnectionError, RuntimeError, ValueError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ConfigError(
                f"--ray-address {self.address!r}: no Ray cluster to join ({first}); start one "
                "with `ray start --head` (and `ray start --address HEAD:PORT` on each node)"
            ) from None
        return True

    def _probe(self) -> None:
        """Refuse an address nothing answers at, at once (joining one waits for minutes)."""
        address = self.address
        if address == "auto":
            try:
                from ray._private.services import canonicalize_bootstrap_address

                address = canonicalize_bootstrap_address("auto") or ""
            except Exception:  # a private helper: when it moves, ray.init decides alone
                return
            if not address:
                raise ConfigError(
                    "--ray-address auto: no Ray cluster started on this machine; start one with "
                    "`ray start --head`, or give HOST:PORT of its head"
                )
        host, _, port = address.removeprefix("ray://").rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
        except OSError as err:
            raise ConfigError(
                f"--ray-address {self.address!r}: no Ray cluster to join at {host}:{port} "
                f"({err.strerror or err}); start one with `ray start --head` (and `ray start "
                "--address HEAD:PORT` on each node)"
            ) from None

    def _worker_nodes(self, ray: Any) -> list[dict[str, Any]]:
        return [
            node
            for node in ray.nodes()
            if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) >= 1
        ]

    def _missing(self, ray: Any, have: Mapping[str, int]) -> dict[str, int]:
        """How many workers each live node with CPUs lacks: `workers_per_node` (at most one
        per CPU) less the `have` it has."""
        missing = {}
        for node in self._worker_nodes(ray):
            want = min(self.workers_per_node, int(node["Resources"]["CPU"]))
            if want > have.get(node["NodeID"], 0):
                missing[node["NodeID"]] = want - have.get(node["NodeID"], 0)
        return missing

    async def _start_workers(
        self, ray: Any, context: EpisodeContext, broker: Any, counts: Mapping[str, int]
    ) -> list[_Worker]:
        """`counts[node]` actors on each node; a node whose worker cannot start is left out
        (and named), unless none can."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor_class = ray.remote(EpisodeWorker)
        env = {k: v for k, v in os.environ.items() if SHARED_ENV.match(k)}
        started: list[_Worker] = []
        try:
            for node_id, count in counts.items():
                for _ in range(count):
                    actor = actor_class.options(
                        num_cpus=1,
                        max_concurrency=self.concurrency + 8,  # + close and ready beside them
                        max_restarts=0,
                        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                    ).remote(context, broker, self.prices, env)
                    self._serial += 1
                    started.append(_Worker(actor, node_id, self._serial))
            readies = {
                asyncio.ensure_future(_awaitable(w.actor.ready.remote())): w for w in started
            }
            if readies:
                # One deadline for all: actors start in parallel, not one after another.
                await asyncio.wait(readies, timeout=WORKER_START_TIMEOUT_S)
        except BaseException:
            for worker in started:  # cancelled (the run ended) or failed: none is left running
                with contextlib.suppress(Exception):
                    ray.kill(worker.actor, no_restart=True)
            raise
        workers, problems = [], []
        for ready, worker in readies.items():
            if not ready.done() or ready.exception() is not None:
                failure = ready.exception() if ready.done() else None
                why = _first_line(failure) if failure else "did not start in time"
                ready.cancel()
                problems.append(f"node {worker.node_id[:8]}: {why}")
                with contextlib.suppress(Exception):
                    ray.kill(worker.actor, no_restart=True)
                continue
            info = ready.result()
            worker.host, worker.holder = info["host"], info["actor_id"]
            workers.append(worker)
        for problem in problems:
            log.warning("a Ray worker did not start: %s", problem)
        if started and not workers:
            raise ConfigError(
                "no Ray worker could start a forkingpaths episode runner ("
                + "; ".join(problems[:3])
                + "): install the same forkingpaths and Ray on every node"
            )
        if workers:
            hosts = collections.Counter(w.host for w in workers)
            log.info(
                "Ray: %d workers on %s",
                len(workers),
                ", ".join(f"{h} ({n})" for h, n in sorted(hosts.items())),
            )
        return workers

    # -- the run ------------------------------------------------------------------------------

    async def run(
        self,
        jobs: Sequence[EpisodeJob],
        context: EpisodeContext,
        on_record: OnRecord,
        should_continue: ShouldContinue,
    ) -> None:
        if not jobs:
            return
        ray = _import_ray()
        joined = self._connect(ray)
        broker = None
        workers: list[_Worker] = []
        try:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            # On the driver's node: the broker must outlive any worker node the run loses.
            here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), False)
            broker = (
                ray.remote(LimitsBroker)
                .options(num_cpus=0, max_concurrency=10_000, scheduling_strategy=here)
                .remote()
            )
            workers = await self._start_workers(ray, context, broker, self._missing(ray, {}))
            if not workers:
                raise ConfigError(
                    "the Ray cluster has no live node with a CPU to run episodes on "
                    "(`ray status` shows its resources)"
                )
            await self._dispatch(ray, jobs, context, on_record, should_continue, workers, broker)
            try:
                self.limits_stats = await _awaitable(broker.stats.remote())
            except Exception as err:
                log.warning("the model limits broker is gone: %s", _first_line(err))
            for model, stats in self.limits_stats.items():
                log.info(
                    "model limits across the cluster, %s: at most %d of %d requests in flight, "
                    "%d requests, %d answered 429",
                    model,
                    stats["peak_in_use"],
                    stats["concurrency"],
                    stats["granted"],
                    stats["throttles"],
                )
        finally:
            try:
                await self._shutdown(ray, workers, broker)
            finally:
                if joined:
                    ray.shutdown()

    async def _dispatch(
        self,
        ray: Any,
        jobs: Sequence[EpisodeJob],
        context: EpisodeContext,
        on_record: OnRecord,
        should_continue: ShouldContinue,
        workers: list[_Worker],
        broker: Any,
    ) -> None:
        pending = collections.deque(jobs)
        deaths: collections.Counter[tuple[str, int]] = collections.Counter()
        recorded: set[tuple[str, int]] = set()
        # Per worker (by serial): its latest usage totals, by their sequence number.
        snapshots: dict[int, tuple[int, dict[str, int | float]]] = {}
        tried: collections.Counter[str] = collections.Counter()
        replacing: asyncio.Future[list[_Worker]] | None = None
        last_look = time.monotonic()

        def look() -> asyncio.Future[list[_Worker]] | None:
            """Start workers where live nodes have fewer than they should (a restarted or an
            added node, a killed actor), in the background: a dying node can take seconds to
            say so. A node gets at most MAX_WORKER_DEATHS tries."""
            nonlocal last_look
            last_look = time.monotonic()
            have = collections.Counter(w.node_id for w in workers)
            counts = {
                node_id: n
                for node_id, n in self._missing(ray, have).items()
                if tried[node_id] < MAX_WORKER_DEATHS
            }
            if not counts:
                return None
            tried.update(counts.keys())
            return asyncio.ensure_future(self._start_workers(ray, context, broker, counts))

        async def record(job: EpisodeJob, data: EpisodeRecord) -> None:
            if job.key in recorded:  # cannot happen by construction; never write a key twice
                log.warning("episode %s trial %d came back twice; kept the first", *job.key)
                return
            recorded.add(job.key)
            result = on_record(data)
            if asyncio.iscoroutine(result):
                await result

        async def requeue(job: EpisodeJob, err: BaseException) -> None:
            deaths[job.key] += 1
            if deaths[job.key] < MAX_WORKER_DEATHS:
                pending.appendleft(job)
                return
            error = (
                f"WorkerDied: its Ray worker died {deaths[job.key]} times while playing it; "
                f"last: {_first_line(err)}"
            )
            await record(job, errored_record(context.run_id, context.spec, job, error))

        try:
            while True:
                for worker in workers:
                    while (
                        pending and len(worker.in_flight) < self.concurrency and should_continue()
                    ):
                        job = pending.popleft()
                        future = asyncio.ensure_future(_awaitable(worker.actor.play.remote(job)))
                        worker.in_flight[future] = job
                owner = {f: w for w in workers for f in w.in_flight}
                waiting: set[asyncio.Future[Any]] = set(owner)
                if not owner:
                    if not (pending and should_continue()):
                        return
                    if replacing is None:
                        replacing = look()  # every worker is gone: look at once
                    if replacing is None:
                        raise ConfigError(
                            "every Ray worker died; re-run the same command to play the "
                            f"{len(pending)} episodes left"
                        )
                if replacing is not None:
                    waiting.add(replacing)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if replacing is not None and replacing in done:
                    try:
                        workers += replacing.result()
                    except ConfigError as err:
                        log.warning("%s", err)
                    replacing = None
                # Results before deaths: a finished episode of a worker that then died counts.
                for future in sorted(done, key=lambda f: f.exception() is not None):
                    worker = owner.get(future)
                    if worker is None or future not in worker.in_flight:
                        continue  # the replacement task, or a job already re-queued
                    job = worker.in_flight.pop(future)
                    try:
                        record_json, sequence, snapshot = future.result()
                    except Exception as err:
                        if not _is_worker_death(ray, err):
                            # Our code around the episode failed (the runner itself turns an
                            # episode's errors into its record): the run goes on.
                            error = f"RayTaskError: {_first_line(err)}"
                            await record(
                                job, errored_record(context.run_id, context.spec, job, error)
                            )
                            continue
                        # The actor is gone: none of its episodes will come back.
                        lost = [job, *worker.in_flight.values()]
                        for other in worker.in_flight:
                            other.cancel()
                        worker.in_flight.clear()
                        workers.remove(worker)
                        self._lose(ray, worker, err, len(lost), broker)
                        for lost_job in reversed(lost):
                            await requeue(lost_job, err)
                        continue
                    if sequence > snapshots.get(worker.serial, (0, {}))[0]:
                        snapshots[worker.serial] = (sequence, snapshot)
                        self.meter.set_sum(totals for _, totals in snapshots.values())
                    self.nodes_used.add(worker.node_id)
                    await record(job, record_from_wire(record_json))
                if (
                    replacing is None
                    and pending
                    and should_continue()
                    and time.monotonic() - last_look >= NODE_LOOK_INTERVAL_S
                ):
                    replacing = look()
        finally:
            if replacing is not None:
                replacing.cancel()
                with contextlib.suppress(BaseException):
                    workers += await replacing

    def _lose(
        self, ray: Any, worker: _Worker, err: BaseException, episodes: int, broker: Any
    ) -> None:
        log.warning(
            "Ray worker on %s (node %s) died: %s; its %d episodes go back to the queue",
            worker.host or "?",
            worker.node_id[:8],
            _first_line(err),
            episodes,
        )
        with contextlib.suppress(Exception):
            ray.kill(worker.actor, no_restart=True)
        broker.forget.remote(worker.holder)  # the model slots it held come back

    async def _shutdown(self, ray: Any, workers: list[_Worker], broker: Any) -> None:
        for worker in workers:
            for future in worker.in_flight:
                future.cancel()
        closing = [asyncio.ensure_future(_awaitable(w.actor.close.remote())) for w in workers]
        if closing:
            _, late = await asyncio.wait(closing, timeout=WORKER_CLOSE_TIMEOUT_S)
            for task in late:  # killed below, closed or not
                task.cancel()
        for worker in workers:
            try:
                ray.kill(worker.actor, no_restart=True)
            except Exception:  # already gone with its node
                log.debug("Ray worker on node %s already gone", worker.node_id[:8])
        if broker is not None:
            try:
                ray.kill(broker, no_restart=True)
            except Exception:
                log.debug("limits broker already gone")


@contextlib.contextmanager
def joined_cluster(address: str | None) -> Iterator[None]:
    """One connection to the cluster for several runs (a suite's): each run's RayExecutor finds
    Ray joined and leaves it so, instead of joining and leaving per run (about 1.7 s each)."""
    ray = _import_ray()
    joined = RayExecutor(1, address=address)._connect(ray)
    try:
        yield
    finally:
        if joined:
            ray.shutdown()


async def _awaitable(ref: Any) -> Any:
    return await ref


def _is_worker_death(ray: Any, err: BaseException) -> bool:
    exceptions = ray.exceptions
    kinds = tuple(
        getattr(exceptions, name)
        for name in (
            "RayActorError",
            "ActorUnavailableError",
            "WorkerCrashedError",
            "NodeDiedError",
            "ObjectLostError",
            "OwnerDiedError",
            "LocalRayletDiedError",
        )
        if hasattr(exceptions, name)
    )
    return isinstance(err, kinds)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__
