"""Model ids to ChatModel objects: make_model, check_model_access and RunParamsModel."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from forkingpaths.core import registry
from forkingpaths.core.chat import ChatModel, Completion, Message, ModelParams
from forkingpaths.core.errors import ConfigError, NameNotFound
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.runtime import ModelRuntime

log = logging.getLogger(__name__)


def parse_model_id(model_id: str) -> tuple[str, str]:
    """`provider/model` -> (provider, model); the model part may itself contain slashes."""
    provider, slash, name = model_id.partition("/")
    if not slash or not provider or not name:
        raise ConfigError(
            f"model id {model_id!r} must read provider/model, e.g. openai/gpt-4.1,"
            " openai-compat/qwen3-32b (with --base-url) or scripted/echo;"
            f" providers: {', '.join(sorted(registry.MODEL_APIS))}"
        )
    return provider, name


def _provider_entry(provider: str) -> registry.ModelAPIEntry:
    if provider not in registry.MODEL_APIS:
        raise NameNotFound("model API", provider, list(registry.MODEL_APIS))
    return registry.MODEL_APIS[provider]


def make_model(
    model_id: str,
    options: ModelOptions | None = None,
    runtime: ModelRuntime | None = None,
) -> ChatModel:
    """Build the ChatModel for `model_id` (`openai/gpt-4.1`, `scripted/echo`...)."""
    provider, name = parse_model_id(model_id)
    factory = registry.load_entry_point(_provider_entry(provider).factory)
    model: ChatModel = factory(
        name,
        options if options is not None else ModelOptions(),
        runtime if runtime is not None else ModelRuntime(),
    )
    return model


def check_model_access(model_id: str, options: ModelOptions | None = None) -> None:
    """Refuse, without any network call or SDK import, a model that cannot work: unknown
    provider or policy, missing API key, missing or malformed base URL, extra not installed.
    Each provider's check is its registry entry's."""
    provider, name = parse_model_id(model_id)
    registry.load_entry_point(_provider_entry(provider).check)(
        name, options if options is not None else ModelOptions()
    )


class RunParamsModel:
    """A model whose requests start from the run's sampling parameters (`--temperature`,
    `--max-tokens`, `--reasoning-effort`...); a field an agent sets itself overrides them, so an
    agent that needs, say, a longer completion can still ask for it."""

    def __init__(self, model: ChatModel, defaults: ModelParams) -> None:
        self.model = model
        self.defaults = defaults
        self.name = model.name

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        if params is not None:
            explicit = {field: getattr(params, field) for field in params.model_fields_set}
            params = self.defaults.model_copy(update=explicit)
        return await self.model.complete(messages, params or self.defaults)

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, defaults={self.defaults!r})"


async def close_models(models: Iterable[object | None]) -> None:
    """Close each distinct model once (a role may be played by the agent's own model): HTTP
    clients, and a local model's llama.cpp server. A failure to close is logged, not raised, so
    the others still close and the results already written stand."""
    for model in {id(m): m for m in models if m is not None}.values():
        close = getattr(model, "aclose", None)
        if close is None:
            continue
        try:
            await close()
        except Exception:
            log.warning("closing %r failed", model, exc_info=True)
