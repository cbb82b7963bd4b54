"""OpenAI-compatible chat client, and the cache/limits/retry/pricing pipeline of remote models."""

from __future__ import annotations

import os
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forkingpaths.core.chat import ChatRequest, Completion, Message, ModelParams, Usage
from forkingpaths.core.errors import ModelError
from forkingpaths.models.cache import ResponseCache, cache_key
from forkingpaths.models.endpoints import checked_base_url, openai_api_key, openai_compat_api_key
from forkingpaths.models.http_json import (
    APIConnectionError,
    APIStatusError,
    JSONEndpoint,
    MalformedResponse,
)
from forkingpaths.models.limits import Limits
from forkingpaths.models.pricing import PriceTable
from forkingpaths.models.retry import Verdict, call_with_retries, retry_after_from_headers

if TYPE_CHECKING:
    from forkingpaths.core.records import ModelOptions
    from forkingpaths.models.runtime import ModelRuntime

__all__ = ["MalformedResponse", "OpenAICompatModel", "RemoteChatModel", "classify_http_error"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
"""Where `openai/...` models send requests unless --base-url or $OPENAI_BASE_URL says otherwise."""

# 408 and 409 are transient by HTTP semantics (request timeout, conflicting concurrent request).
_RETRYABLE_4XX = frozenset({408, 409, 429})

# How servers say a prompt is longer than the context window: OpenAI's error code, and the
# messages of OpenAI, vLLM, llama-cpp-python's server and llama.cpp's own.
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "exceed context window",
    "context window of",
    "longer than the model's context",
    "exceeds the available context size",
)


@dataclass(frozen=True)
class RawAnswer:
    """What one successful HTTP attempt yielded, before pricing and accounting."""

    text: str
    usage: Usage
    finish_reason: str | None


def status_verdict(status: int, headers: Iterable[tuple[str, str]] | None, text: str) -> Verdict:
    """Retry verdict for an HTTP error status; `text` (error code and message) tells a prompt
    over the context window apart from other refusals."""
    if status >= 500 or status in _RETRYABLE_4XX:
        after = retry_after_from_headers(headers) if headers is not None else None
        return Verdict(retry=True, retry_after_s=after, throttled=status == 429)
    return context_verdict(text)


def context_verdict(text: str) -> Verdict:
    """A refusal that is not retried; a prompt over the context window when `text` says so."""
    lowered = text.lower()
    return Verdict(retry=False, context_exceeded=any(m in lowered for m in _CONTEXT_MARKERS))


def classify_http_error(err: Exception) -> Verdict | None:
    """Retry verdict for the errors of forkingpaths' own HTTP client (`http_json`)."""
    if isinstance(err, MalformedResponse | APIConnectionError):  # timeouts derive from the latter
        return Verdict(retry=True)
    if isinstance(err, APIStatusError):
        return status_verdict(err.status_code, err.headers.items(), f"{err.code or ''} {err}")
    return None


def classify_openai_error(err: Exception) -> Verdict | None:
    """Retry verdict for exceptions of the openai SDK and of SDKs deriving from it (LiteLLM)."""
    # Deferred: only LiteLLM models raise SDK errors, and they have imported the SDK already.
    import openai

    if isinstance(err, MalformedResponse | openai.APIResponseValidationError):
        return Verdict(retry=True)
    if isinstance(err, openai.APIConnectionError):  # APITimeoutError derives from it
        return Verdict(retry=True)
    if not isinstance(err, openai.OpenAIError):
        return None
    # APIStatusError has a status code; so do some LiteLLM errors that derive only from APIError.
    status = getattr(err, "status_code", None)
    text = f"{getattr(err, 'code', '') or ''} {err}"
    if isinstance(status, int):
        response = getattr(err, "response", None)
        headers = getattr(response, "headers", None)
        return status_verdict(status, headers.items() if headers is not None else None, text)
    return context_verdict(text)


def parse_chat_response(response: object) -> RawAnswer:
    """Text, usage and finish reason of a chat completion (an SDK object or a plain dict).

    Tolerates missing pieces: no usage counts 0 tokens, null content gives text "" (the model
    said nothing: the agent records an invalid action). Empty `choices` is a broken server, not
    a model's answer, so it raises MalformedResponse like any body that is not a completion: it
    is retried, and an episode whose retries run out is recorded as errored, never scored.
    """
    if response is None or isinstance(response, str | bytes):
        raise MalformedResponse(f"expected a chat completion object, got {type(response).__name__}")
    choices = _field(response, "choices")
    if not isinstance(choices, list | tuple):
        raise MalformedResponse("response has no `choices` list")
    usage = parse_usage(_field(response, "usage"))
    if not choices:
        raise MalformedResponse("response has an empty `choices` list")
    first = choices[0]
    message = _field(first, "message")
    content = _field(message, "content") if message is not None else None
    finish = _field(first, "finish_reason")
    return RawAnswer(
        text=_content_text(content),
        usage=usage,
        finish_reason=str(finish) if finish is not None else None,
    )


def parse_usage(usage: object) -> Usage:
    """Usage from an OpenAI-shaped `usage` object or dict; None anywhere counts as 0."""
    if usage is None:
        return Usage()
    completion_details = _field(usage, "completion_tokens_details")
    prompt_details = _field(usage, "prompt_tokens_details")
    return Usage(
        prompt_tokens=_count(_field(usage, "prompt_tokens")),
        completion_tokens=_count(_field(usage, "completion_tokens")),
        reasoning_tokens=_count(_field(completion_details, "reasoning_tokens")),
        cached_prompt_tokens=_count(_field(prompt_details, "cached_tokens")),
    )


def _field(obj: object, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    # Unvalidated SDK models lack attributes the server left out instead of holding None.
    return getattr(obj, name, None)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some servers return content parts ([{"type": "text", "text": ...}]) instead of a string.
        return "".join(t for part in content if isinstance(t := _field(part, "text"), str))
    return ""


class RemoteChatModel(ABC):
    """A ChatModel reached over the network: response cache, request limits, retries, pricing and
    usage accounting around `_send`, which subclasses implement for one transport.

    One object serves every concurrent episode of a run; its limits therefore bound the whole run's
    traffic to this model.
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str | None,
        runtime: ModelRuntime,
        prices: PriceTable | None = None,
    ) -> None:
        self.name = name
        """`provider/model` id."""
        self.base_url = base_url
        self._price_name = name
        self._prices = prices if prices is not None else runtime.price_table()
        self._meter = runtime.meter
        self._retry_policy = runtime.retry_policy()
        # An instance, not the global RNG: jitter stays independent of anything else seeding
        # `random`, and reproducible when the runtime gives a seed.
        self._rng = random.Random(runtime.jitter_seed)
        self._limits = runtime.request_limits(name, base_url)
        self._cache = None
        if runtime.cache:
            path, shared = runtime.resolved_cache_path(), runtime.shared_cache_path()
            self._cache = ResponseCache(path, also_read=None if shared == path else shared)

    @property
    def limits(self) -> Limits:
        """The concurrency and rate limits applied to each HTTP attempt."""
        return self._limits

    @abstractmethod
    async def _send(self, messages: list[Message], params: ModelParams) -> RawAnswer:
        """One HTTP attempt; raises the transport's exceptions, judged by `_classify`."""

    def _classify(self, err: Exception) -> Verdict | None:
        return classify_http_error(err)

    def _classify_and_report(self, err: Exception) -> Verdict | None:
        verdict = self._classify(err)
        if verdict is not None and verdict.throttled:
            self._limits.throttled(verdict.retry_after_s)
        return verdict

    async def aclose(self) -> None:
        """Release network resources; the model stays usable (they reopen on demand). Call it
        before the event loop ends, or the transport's cleanup may run on a closed loop."""
        if self._cache is not None:
            self._cache.close()

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        params = params or ModelParams()
        key = None
        # Only temperature 0 is worth replaying: a sampled answer is one draw, not the answer.
        if self._cache is not None and params.temperature == 0:
            key = cache_key(self.name, self.base_url, messages, params)
            hit = self._cache.get(key)
            if hit is not None:
                completion = hit.model_copy(
                    update={
                        "cached": True,
                        "latency_s": 0.0,
                        "cost_usd": 0.0,
                        "attempts": 0,
                        "request": ChatRequest(model=self.name, messages=messages, params=params),
                    }
                )
                self._meter.record(completion)
                return completion

        started = time.perf_counter()

        async def attempt() -> RawAnswer:
            # Limits are taken per attempt, so a call sleeping in backoff holds no slot.
            async with self._limits.slot():
                return await self._send(messages, params)

        try:
            answer, attempts = await call_with_retries(
                attempt,
                policy=self._retry_policy,
                classify=self._classify_and_report,
                rng=self._rng,
                model=self.name,
            )
        except ModelError:
            self._meter.record_failure()
            raise
        completion = Completion(
            text=answer.text,
            model=self.name,
            usage=answer.usage,
            latency_s=time.perf_counter() - started,
            cost_usd=self._prices.price(self._price_name, answer.usage),
            cached=False,
            attempts=attempts,
            finish_reason=answer.finish_reason,
        )
        if key is not None and self._cache is not None:
            self._cache.put(key, completion)
        completion.request = ChatRequest(model=self.name, messages=messages, params=params)
        self._meter.record(completion)
        return completion

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r})"


class OpenAICompatModel(RemoteChatModel):
    """Chat completions over forkingpaths' thin aiohttp client: OpenAI itself, vLLM, SGLang,
    Ollama, llama.cpp, LM Studio, OpenRouter, DeepSeek...

    Not the openai SDK: its request building, transport and response validation cost ~2.5 ms of
    CPU per call, which made the client, not the server, the limit of a run with many episodes
    in flight (benchmarks/bench_harness_overhead.py, bench_concurrency.py). The bytes sent are
    those the SDK sends for the same call (tests/models/test_openai_wire.py)."""

    def __init__(
        self,
        name: str,
        *,
        model_name: str,
        base_url: str | None,
        api_key: str,
        runtime: ModelRuntime,
        prices: PriceTable | None = None,
        max_tokens_field: str = "max_tokens",
    ) -> None:
        super().__init__(name, base_url=base_url, runtime=runtime, prices=prices)
        self.model_name = model_name
        """Model name sent in the request body."""
        self._max_tokens_field = max_tokens_field
        self._endpoint = JSONEndpoint(
            base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL,
            api_key=api_key,
            timeout_s=runtime.request_timeout_s,
            headers=openai_account_headers(),
        )

    @property
    def endpoint_url(self) -> str:
        """The base URL requests go to (`base_url`, or OpenAI's when that is None)."""
        return self._endpoint.base_url

    def request_body(self, messages: list[Message], params: ModelParams) -> dict[str, Any]:
        """The JSON body of this request (unset params omitted, so the server's defaults apply;
        `params.extra` merged in last, as the SDK merges `extra_body`)."""
        body: dict[str, Any] = {
            "model": self.model_name,
            # A frozen Message's __dict__ is exactly {"role", "content"}: serialized as it is,
            # not copied per call (a call resends the whole history; copying it was 80 us).
            "messages": [m.__dict__ for m in messages],
            **params.request_fields(self._max_tokens_field),
        }
        if params.extra:
            body.update(params.extra)
        return body

    async def _send(self, messages: list[Message], params: ModelParams) -> RawAnswer:
        response = await self._endpoint.post(
            "/chat/completions", self.request_body(messages, params)
        )
        return parse_chat_response(response)

    async def aclose(self) -> None:
        await self._endpoint.aclose()
        await super().aclose()


def openai_account_headers() -> dict[str, str]:
    """The organization and project headers the openai SDK sends when $OPENAI_ORG_ID and
    $OPENAI_PROJECT_ID are set (requests are billed to them)."""
    headers = {}
    if org := os.environ.get("OPENAI_ORG_ID"):
        headers["OpenAI-Organization"] = org
    if project := os.environ.get("OPENAI_PROJECT_ID"):
        headers["OpenAI-Project"] = project
    return headers


def make_openai(name: str, options: ModelOptions, runtime: ModelRuntime) -> OpenAICompatModel:
    """Factory for `openai/<model>` ids."""
    return OpenAICompatModel(
        f"openai/{name}",
        model_name=name,
        base_url=checked_base_url(options.base_url, required=False),
        api_key=openai_api_key(options),
        runtime=runtime,
        # OpenAI's reasoning models refuse the older `max_tokens`; every OpenAI model accepts this.
        max_tokens_field="max_completion_tokens",
    )


def make_openai_compat(
    name: str, options: ModelOptions, runtime: ModelRuntime
) -> OpenAICompatModel:
    """Factory for `openai-compat/<model>` ids (requires a base URL)."""
    return OpenAICompatModel(
        f"openai-compat/{name}",
        model_name=name,
        base_url=checked_base_url(options.base_url, required=True),
        api_key=openai_compat_api_key(options),
        runtime=runtime,
    )
