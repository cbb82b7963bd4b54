"""Executors: where episodes run. The local one is asyncio; others plug in behind Executor."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence

from forkingpaths.core.records import EpisodeRecord
from forkingpaths.runner.episode import EpisodeContext, EpisodeJob, EpisodeRunner

OnRecord = Callable[[EpisodeRecord], Awaitable[None] | None]
ShouldContinue = Callable[[], bool]


class Executor(ABC):
    """Runs jobs and hands each finished record to `on_record` (in the driver process).

    Contract: every job either yields exactly one record through `on_record` or is not started
    (when `should_continue()` turned False, e.g. the budget ran out). Benchmarks never see the
    executor; a new executor only implements `run`.
    """

    def check(self) -> None:
        """Refuse, before the run directory is written, what cannot run (a cluster that does
        not answer); nothing to check in this process."""
        return

    @abstractmethod
    async def run(
        self,
        jobs: Sequence[EpisodeJob],
        context: EpisodeContext,
        on_record: OnRecord,
        should_continue: ShouldContinue,
    ) -> None: ...


class LocalExecutor(Executor):
    """Asyncio executor: `concurrency` episodes in flight, one shared model (so its concurrency
    and rate limits cover the whole run)."""

    def __init__(self, concurrency: int, runner: EpisodeRunner | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency
        self.runner = runner

    async def run(
        self,
        jobs: Sequence[EpisodeJob],
        context: EpisodeContext,
        on_record: OnRecord,
        should_continue: ShouldContinue,
    ) -> None:
        runner = self.runner or context.build()
        queue: asyncio.Queue[EpisodeJob] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        async def worker() -> None:
            while not queue.empty() and should_continue():
                job = queue.get_nowait()
                record = await runner(job)
                result = on_record(record)
                if asyncio.iscoroutine(result):
                    await result

        workers = [asyncio.create_task(worker()) for _ in range(min(self.concurrency, len(jobs)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
