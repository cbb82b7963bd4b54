"""The live progress display of a run: episodes, steps, tokens, cost, errors, ETA."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import TimeRemainingColumn as EtaColumn

from forkingpaths.models.usage import UsageMeter


class RunProgress:
    """Renders to stderr so a run's stdout stays machine-readable; a no-op when disabled."""

    def __init__(
        self,
        total: int,
        meter: UsageMeter,
        live_steps: Callable[[], int],
        *,
        enabled: bool,
        description: str,
    ) -> None:
        self.meter, self.live_steps, self.enabled = meter, live_steps, enabled
        self.done_steps = 0
        self.errors = 0
        self.started = time.monotonic()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(bar_width=20),
                TextColumn("{task.completed}/{task.total} episodes"),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                EtaColumn(),
                console=Console(stderr=True),
                refresh_per_second=4,
                transient=False,
            )
            self._task = self._progress.add_task(description, total=total, stats="")

    def __enter__(self) -> RunProgress:
        if self._progress:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress:
            self.refresh()
            self._progress.stop()

    def episode_done(self, steps: int, errored: bool) -> None:
        self.done_steps += steps
        self.errors += int(errored)
        if self._progress and self._task is not None:
            self._progress.advance(self._task)
        self.refresh()

    def refresh(self) -> None:
        if not (self._progress and self._task is not None):
            return
        m = self.meter
        tokens = m.prompt_tokens + m.completion_tokens
        errors = f"[red]errors {self.errors}[/red]" if self.errors else "errors 0"
        stats = (
            f"{errors} | steps {self.done_steps + self.live_steps():,} | calls {m.calls:,}"
            f" | tok {_human(tokens)} | ${m.cost_usd:.2f}"
        )
        self._progress.update(self._task, stats=stats)


def _human(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)
