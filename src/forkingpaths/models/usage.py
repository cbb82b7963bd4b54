"""UsageMeter: running totals of every model call in a process, for progress and budgets."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields

from forkingpaths.core.chat import Completion, Usage


@dataclass
class UsageMeter:
    """Totals over every call made through the models that share this meter.

    One meter serves a whole run: every model object built for the run adds to it, and the runner
    reads it for the progress display and `--budget-usd`. Plain attributes without locks, because
    all updates happen on the event loop thread between awaits.

    Token totals count tokens actually spent by this process: a cache hit adds to `calls` and
    `cached_calls` but not to the token totals or the cost (its tokens were paid for when the
    answer was first stored). Episode records, by contrast, keep a hit's recorded tokens.
    """

    calls: int = 0
    """Completed calls, cache hits included."""
    cached_calls: int = 0
    """Calls answered from the local response cache."""
    failed_calls: int = 0
    """Calls that raised ModelError after their retries."""
    retries: int = 0
    """Extra HTTP attempts made beyond the first, over all completed calls."""
    prompt_tokens: int = 0
    """Input tokens spent (cache hits excluded)."""
    completion_tokens: int = 0
    """Output tokens spent, reasoning included where the API counts it there."""
    reasoning_tokens: int = 0
    """Reasoning tokens reported separately by the API."""
    cached_prompt_tokens: int = 0
    """Prompt tokens the provider served from its own prompt cache."""
    cost_usd: float = 0.0
    """Priced cost of the calls (0 for cache hits and unpriced models)."""

    def record(self, completion: Completion) -> None:
        """Add one finished call."""
        self.calls += 1
        if completion.cached:
            self.cached_calls += 1
            return
        self.retries += max(completion.attempts - 1, 0)
        usage = completion.usage
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        self.cached_prompt_tokens += usage.cached_prompt_tokens
        self.cost_usd += completion.cost_usd

    def record_failure(self) -> None:
        """Count a call that failed for good."""
        self.failed_calls += 1

    def snapshot(self) -> dict[str, int | float]:
        """The totals as plain numbers (what a Ray worker sends its driver)."""
        return asdict(self)

    def set_sum(self, snapshots: Iterable[dict[str, int | float]]) -> None:
        """Make these totals the sum of other processes' snapshots (a driver's view of its
        workers: each sends its running totals, so the latest one of each is summed)."""
        parts = list(snapshots)
        for f in fields(self):
            setattr(self, f.name, sum((part.get(f.name, 0) for part in parts), type(f.default)()))

    @property
    def usage(self) -> Usage:
        """Token totals as a Usage."""
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            reasoning_tokens=self.reasoning_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens,
        )
