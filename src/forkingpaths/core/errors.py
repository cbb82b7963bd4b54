"""The one exception hierarchy of forkingpaths: every error the package raises derives from it."""

from __future__ import annotations

import difflib
import json


class ForkingPathsError(Exception):
    """Base of every error forkingpaths raises on purpose."""


class ConfigError(ForkingPathsError, ValueError):
    """User input (a flag, a config field, a file) is invalid; the message names field and fix."""


class NameNotFound(ConfigError):
    """A registry lookup (benchmark, agent, model API, scripted policy, suite) missed."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind, self.name, self.available = kind, name, sorted(available)
        close = difflib.get_close_matches(name, self.available, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        super().__init__(
            f"Unknown {kind} {name!r}.{hint} Available: {', '.join(self.available) or '(none)'}"
        )


class MissingAPIKey(ConfigError):
    """A model needs an API key that is not in the environment."""


class ModelError(ForkingPathsError):
    """A model call failed for good (retries exhausted or a non-retryable API error)."""


class ContextLengthExceeded(ModelError):
    """The prompt does not fit the model's context window: not retryable. The episode ends
    there, recorded as errored with this cause (a model's limit, counted apart from outages);
    a larger context (`local_n_ctx` for local models) or a shorter budget lets it finish."""


class BudgetExhausted(ForkingPathsError):
    """The run's spending limit was reached; no new episode is scheduled."""


class SpecMismatch(ConfigError):
    """An existing run directory holds a different RunSpec than the one requested."""


class InvalidFile(ConfigError):
    """A file given by the user (map, trajectory, records) is malformed."""


class ResetNeeded(ForkingPathsError):
    """An environment was stepped before `reset()` or after its episode ended."""


def shown(value: object, limit: int = 60) -> str:
    """A received value as an error message quotes it: JSON where possible, cut to `limit`."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
