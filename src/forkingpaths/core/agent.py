"""The agent contract: Decision and the async Agent protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from forkingpaths.core.chat import ChatModel
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import ModelCallRecord

if TYPE_CHECKING:
    from forkingpaths.core.benchmark import Instance


@dataclass
class Decision:
    """What an agent chose: the action string, its reasoning, and the model calls it took."""

    action: str
    thought: str = ""
    calls: list[ModelCallRecord] = field(default_factory=list)


@runtime_checkable
class Agent(Protocol):
    """Acts in an environment one observation at a time.

    Failure semantics: a reply the agent cannot parse is not an exception; the agent passes the
    raw text (or its best parse) as the action and the env records it as invalid. Model outages
    raise `ModelError` out of `act` and the runner records the episode as errored. An agent that
    learns across episodes keeps that memory in `state()` so the run can save it.
    """

    def reset(self, instance: Instance, seed: int) -> None:
        """Forget the previous episode (but not cross-episode memory)."""
        ...

    async def act(self, observation: Observation) -> Decision:
        """Choose the next action."""
        ...

    def state(self) -> dict[str, Any]:
        """Cross-episode memory to save with the run ({} for agents without one)."""
        ...


def require_model(model: ChatModel | None, agent: str) -> ChatModel:
    """The model of an agent that needs one; built without one (from Python, around the runner,
    which refuses such a spec itself) it is refused with the fix."""
    if model is None:
        raise ConfigError(
            f"agent {agent!r} needs a model: pass --model (e.g. openai/gpt-4.1 or a scripted/... "
            "policy), or model=... from Python"
        )
    return model
