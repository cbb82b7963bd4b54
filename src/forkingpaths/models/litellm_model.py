"""LiteLLM client (optional extra) for providers without an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pydantic

from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.endpoints import LITELLM_MISSING, checked_base_url, litellm_api_key
from forkingpaths.models.http_json import MalformedResponse
from forkingpaths.models.openai_compat import (
    RawAnswer,
    RemoteChatModel,
    classify_openai_error,
    parse_chat_response,
)
from forkingpaths.models.retry import Verdict

if TYPE_CHECKING:
    from forkingpaths.core.records import ModelOptions
    from forkingpaths.models.runtime import ModelRuntime


class LiteLLMModel(RemoteChatModel):
    """Chat completions through `litellm.acompletion`, on the same cache/limits/retry/pricing
    pipeline as the OpenAI client. LiteLLM's own retries are off; its exceptions derive from the
    openai SDK's, so the same retry verdicts apply."""

    def __init__(
        self,
        name: str,
        *,
        litellm: ModuleType,
        model_name: str,
        base_url: str | None,
        api_key: str | None,
        runtime: ModelRuntime,
    ) -> None:
        super().__init__(name, base_url=base_url, runtime=runtime)
        self.model_name = model_name
        """LiteLLM model string (`anthropic/claude-...`)."""
        self._litellm = litellm
        self._api_key = api_key
        self._timeout_s = runtime.request_timeout_s

    def request_kwargs(self, messages: list[Message], params: ModelParams) -> dict[str, Any]:
        """Keyword arguments of `litellm.acompletion` for this request."""
        kwargs: dict[str, Any] = {
            "model": self.model_name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            **params.request_fields(),
            "timeout": self._timeout_s,
            "num_retries": 0,
        }
        if self.base_url is not None:
            kwargs["api_base"] = self.base_url
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        kwargs.update(params.extra)
        return kwargs

    async def _send(self, messages: list[Message], params: ModelParams) -> RawAnswer:
        try:
            response = await self._litellm.acompletion(**self.request_kwargs(messages, params))
        except (json.JSONDecodeError, UnicodeDecodeError, pydantic.ValidationError) as err:
            raise MalformedResponse(f"unreadable response body: {err}") from err
        return parse_chat_response(response)

    def _classify(self, err: Exception) -> Verdict | None:
        return classify_openai_error(err)


def make_litellm(name: str, options: ModelOptions, runtime: ModelRuntime) -> LiteLLMModel:
    """Factory for `litellm/<provider>/<model>` ids; imports LiteLLM only here."""
    model_id = f"litellm/{name}"
    if "/" not in name:
        raise ConfigError(
            f"model id {model_id!r} must read litellm/<provider>/<model>,"
            " e.g. litellm/anthropic/claude-sonnet-4-20250514"
        )
    try:
        import litellm
    except ImportError as err:
        raise ConfigError(LITELLM_MISSING.format(model_id=model_id)) from err
    return LiteLLMModel(
        model_id,
        litellm=litellm,
        model_name=name,
        base_url=checked_base_url(options.base_url, required=False),
        api_key=litellm_api_key(options),
        runtime=runtime,
    )
