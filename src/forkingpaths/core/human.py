"""The `human` agent's plumbing shared by every benchmark: its factory and reading a line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from forkingpaths.core.errors import ConfigError, ForkingPathsError

A = TypeVar("A")

InputFn = Callable[[str], str]
"""`input_fn(prompt) -> line`: `input` in a terminal, a scripted stand-in in tests."""


class HumanInputEnded(ForkingPathsError):
    """The person's input ended (Ctrl-D, a closed pipe) before the episode did."""


def read_line(input_fn: InputFn, prompt: str, what: str = "the episode") -> str:
    """One line from the person; end of input becomes HumanInputEnded (the episode errors and
    the run keeps what was played)."""
    try:
        return input_fn(prompt)
    except (EOFError, StopIteration):
        raise HumanInputEnded(f"input ended before {what} did") from None


def human_factory(agent_class: Callable[..., A]) -> Callable[..., A]:
    """The registered factory of a benchmark's `human` agent class (built as
    `agent_class(input_fn=...)`); its one option is `input_fn`."""

    def make_human(benchmark: Any = None, model: Any = None, input_fn: InputFn | None = None) -> A:
        """Factory of the `human` agent; `input_fn(prompt) -> line` replaces `input` (tests)."""
        if input_fn is not None and not callable(input_fn):
            raise ConfigError(f"input_fn: got {input_fn!r}; allowed values: a callable or none")
        return agent_class(input_fn=input_fn)

    return make_human
