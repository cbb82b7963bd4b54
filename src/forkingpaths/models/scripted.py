"""Scripted models: deterministic policies behind the ChatModel protocol, for tests and demos."""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from forkingpaths.core import registry
from forkingpaths.core.chat import (
    ChatRequest,
    Completion,
    Message,
    ModelParams,
    ScriptedPolicy,
    Usage,
)
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.limits import RequestLimits

if TYPE_CHECKING:
    from forkingpaths.core.records import ModelOptions
    from forkingpaths.models.runtime import ModelRuntime


def estimate_tokens(text: str) -> int:
    """Rough token count of `text`: one token per 4 characters, plus 1.

    English text averages about 4 characters per token with OpenAI's tokenizers; the +1 stands for
    per-message overhead and keeps empty texts from counting as free. Good enough for cost
    estimates and progress displays, never for billing.
    """
    return len(text) // 4 + 1


def estimate_usage(messages: list[Message], text: str) -> Usage:
    """Usage a scripted answer is reported with (prompt: per message; completion: the answer)."""
    return Usage(
        prompt_tokens=sum(estimate_tokens(m.content) for m in messages),
        completion_tokens=estimate_tokens(text),
    )


class EchoPolicy:
    """Answers with the content of the last user message ("" when there is none)."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        for message in reversed(messages):
            if message.role == "user":
                return message.content
        return ""


_GARBAGE_WORDS = (
    "lorem", "zebra", "quantum", "muffin", "perhaps", "sprocket", "teapot", "glimmer", "vortex",
    "banana", "ledger", "umbra", "pickle", "tundra", "whisk", "obelisk", "fjord", "gravel",
    "hmm", "marzipan", "nebula", "wobble", "cardigan", "pollen", "zeppelin", "quokka",
)  # fmt: skip
# No quote characters: every alphabetic word then stands bare, which no JSON text allows, so the
# output can never parse as JSON, whatever the hash.
_GARBAGE_MARKS = ("", "", "", ",", ".", "?", "!", " {", " [", ":", "...", " ]", " }", ";")


class GarbagePolicy:
    """Answers varied nonsense derived from a hash of the messages: 3 to 14 made-up words with
    stray punctuation, never valid JSON, and always the same for the same messages."""

    def respond(self, messages: list[Message], params: ModelParams) -> str:
        digest = hashlib.sha256()
        for message in messages:
            digest.update(f"{message.role}\x00{message.content}\x01".encode())
        stream = digest.digest() + hashlib.sha256(digest.digest()).digest()
        count = 3 + stream[0] % 12
        words = []
        for i in range(count):
            word = _GARBAGE_WORDS[stream[1 + 2 * i] % len(_GARBAGE_WORDS)]
            mark = _GARBAGE_MARKS[stream[2 + 2 * i] % len(_GARBAGE_MARKS)]
            words.append(word + mark)
        return " ".join(words)


class ScriptedModel:
    """A ChatModel answered by a ScriptedPolicy, in-process.

    It passes through the same concurrency limit and UsageMeter as a remote model, so the runner
    sees it like one, but never through the response cache (answers cost nothing to recompute).
    Token counts are estimates (`estimate_usage`); cost is always 0.
    """

    def __init__(
        self,
        name: str,
        policy: ScriptedPolicy,
        runtime: ModelRuntime,
    ) -> None:
        self.name = name
        self.policy = policy
        self._meter = runtime.meter
        self._limits = RequestLimits(runtime.concurrency, runtime.requests_per_minute)

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        params = params or ModelParams()
        started = time.perf_counter()
        async with self._limits.slot():
            # Policies are cheap and synchronous by contract, so they run inline on the loop.
            text = self.policy.respond(messages, params)
        completion = Completion(
            text=text,
            model=self.name,
            usage=estimate_usage(messages, text),
            latency_s=time.perf_counter() - started,
            cost_usd=0.0,
            cached=False,
            attempts=1,
            finish_reason="stop",
            request=ChatRequest(model=self.name, messages=messages, params=params),
        )
        self._meter.record(completion)
        return completion

    async def aclose(self) -> None:
        """Nothing to release; present so callers can close any model alike."""


def load_policy(name: str) -> ScriptedPolicy:
    """Instantiate the scripted policy registered as `name` (generic or a benchmark's)."""
    entry = registry.scripted_policy_entry(name)
    target = registry.load_entry_point(entry)
    policy = target() if isinstance(target, type) else target
    if not isinstance(policy, ScriptedPolicy):
        raise ConfigError(
            f"scripted policy {name!r} ({entry}) has no respond(messages, params) method"
        )
    return policy


def check_scripted(name: str, options: ModelOptions) -> None:
    """`scripted/<policy>`: the policy is registered."""
    registry.scripted_policy_entry(name)


def make_scripted(name: str, options: ModelOptions, runtime: ModelRuntime) -> ScriptedModel:
    """Factory for `scripted/<policy>` ids."""
    return ScriptedModel(f"scripted/{name}", load_policy(name), runtime)
