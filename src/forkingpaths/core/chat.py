"""The chat-model contract: Message, ModelParams, ChatRequest, Usage, Completion, ChatModel."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    """Who speaks."""
    content: str
    """What is said."""


class ModelParams(BaseModel):
    """Sampling parameters of one request; part of the cache key."""

    model_config = ConfigDict(frozen=True)

    temperature: float = 0.0
    """Sampling temperature; the papers use 0 unless they say otherwise."""
    max_tokens: int | None = None
    """Upper bound on completion tokens (None: the server's default)."""
    top_p: float | None = None
    """Nucleus sampling mass (None: server default)."""
    seed: int | None = None
    """Sampling seed passed to servers that honour it."""
    reasoning_effort: str | None = None
    """Reasoning effort for reasoning models ("low", "medium", "high"), None to omit."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Provider-specific body fields passed through unchanged."""

    def request_fields(self, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
        """The sampling fields of a chat request: temperature always, the others only when set
        (so a server's defaults apply), max tokens under the name the API expects."""
        fields: dict[str, Any] = {"temperature": self.temperature}
        optional = {
            max_tokens_field: self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
            "reasoning_effort": self.reasoning_effort,
        }
        fields.update({k: v for k, v in optional.items() if v is not None})
        return fields


class ChatRequest(BaseModel):
    """The exact request of one model call: what a transcript shows and a replay sends again."""

    model_config = ConfigDict(frozen=True)

    model: str
    """`provider/model` id the request went to."""
    messages: list[Message]
    """The messages sent, in order, with their roles."""
    params: ModelParams = Field(default_factory=ModelParams)
    """Sampling parameters sent (seed included)."""


class Usage(BaseModel):
    """Token usage of one call, as the API reported it (0 where it reported nothing)."""

    prompt_tokens: int = 0
    """Input tokens."""
    completion_tokens: int = 0
    """Output tokens, reasoning included when the API counts it there."""
    reasoning_tokens: int = 0
    """Reasoning tokens where the API reports them separately."""
    cached_prompt_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache, where reported."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
        )


class Completion(BaseModel):
    """A model's answer to one request, with its accounting."""

    text: str
    """The assistant message content ("" when the model returned none)."""
    model: str
    """The model id that answered (`provider/model`)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens spent."""
    latency_s: float = 0.0
    """Wall time of the call including retries (0 for a cache hit)."""
    cost_usd: float = 0.0
    """Cost from the price table (0 for a cache hit or an unpriced model)."""
    cached: bool = False
    """True when the answer came from the local response cache."""
    attempts: int = 1
    """HTTP attempts made (1 + retries)."""
    finish_reason: str | None = None
    """Why generation stopped, as the API said."""
    request: ChatRequest | None = None
    """The request this answers; set by every provider (never stored in the response cache,
    whose key already is the request)."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers chat messages.

    Failure semantics: transient API failures are retried inside `complete`; when retries are
    exhausted or the error is not retryable it raises `ModelError`, and the runner records the
    episode as errored. A model that answers nonsense is not an error: the text is returned and
    the agent/env treat it as an invalid action.
    """

    name: str
    """`provider/model` id."""

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion: ...


@runtime_checkable
class ScriptedPolicy(Protocol):
    """A deterministic stand-in for a model: reads the messages, answers as a model would.

    Policies must derive everything from the messages (no per-episode state), because one scripted
    model serves every concurrent episode of a run, in-process or behind the mock server.
    """

    def respond(self, messages: list[Message], params: ModelParams) -> str: ...
