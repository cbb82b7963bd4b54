"""Model ids to ChatModel objects: make_model, check_model_access and ModelRuntime."""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from forkingpaths.core import registry
from forkingpaths.core.errors import ConfigError, NameNotFound
from forkingpaths.core.records import ModelOptions, RunOptions
from forkingpaths.models.base import ChatModel, Completion, Message, ModelParams
from forkingpaths.models.retry import RetryPolicy
from forkingpaths.models.usage import UsageMeter

CACHE_DIR_ENV = "FORKINGPATHS_CACHE_DIR"
"""Folder of the response cache file when ModelRuntime.cache_path is not given."""

CACHE_FILE = "responses.sqlite"


@dataclass
class ModelRuntime:
    """How model objects execute: cache, retries, limits, prices, accounting.

    None of it changes what a model answers, so it is not part of a run's identity (RunOptions
    feeds it; RunSpec does not).
    """

    cache: bool = True
    """Use the response cache (consulted and filled only at temperature 0)."""
    cache_path: Path | None = None
    """Cache file; None: $FORKINGPATHS_CACHE_DIR/responses.sqlite, else
    ~/.cache/forkingpaths/responses.sqlite."""
    max_retries: int = 6
    """Retries per call after the first attempt."""
    retry_base_delay_s: float = 0.5
    """Backoff cap of the first retry (doubles per retry, full jitter)."""
    retry_max_delay_s: float = 30.0
    """Longest single wait between attempts, Retry-After included."""
    request_timeout_s: float = 120.0
    """Timeout of one HTTP attempt."""
    concurrency: int = 32
    """Requests in flight per model object."""
    requests_per_minute: float | None = None
    """Request rate limit per model object (None: unlimited)."""
    prices_path: Path | str | None = None
    """User price YAML overriding the shipped table (None: $FORKINGPATHS_PRICES if set)."""
    jitter_seed: int | None = None
    """Seed of the backoff-jitter RNG each model owns (None: seeded from the OS)."""
    meter: UsageMeter = field(default_factory=UsageMeter)
    """Running totals every model built with this runtime adds to."""

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(
                f"model concurrency must be an integer >= 1, got {self.concurrency!r}"
            )
        if self.requests_per_minute is not None and not (
            math.isfinite(self.requests_per_minute) and self.requests_per_minute > 0
        ):
            raise ConfigError(
                "requests_per_minute must be a positive number or None (no limit),"
                f" got {self.requests_per_minute!r}"
            )
        if not (math.isfinite(self.request_timeout_s) and self.request_timeout_s > 0):
            raise ConfigError(
                f"request_timeout_s must be a positive number of seconds,"
                f" got {self.request_timeout_s!r}"
            )
        self.retry_policy()  # validates the retry fields

    def retry_policy(self) -> RetryPolicy:
        """The RetryPolicy these settings describe."""
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay_s=self.retry_base_delay_s,
            max_delay_s=self.retry_max_delay_s,
        )

    def resolved_cache_path(self) -> Path:
        """Where the response cache lives."""
        if self.cache_path is not None:
            return Path(self.cache_path).expanduser()
        folder = os.environ.get(CACHE_DIR_ENV)
        base = Path(folder).expanduser() if folder else Path.home() / ".cache" / "forkingpaths"
        return base / CACHE_FILE

    @classmethod
    def from_run_options(cls, options: RunOptions, meter: UsageMeter | None = None) -> ModelRuntime:
        """The runtime a run's options ask for."""
        return cls(
            cache=options.cache,
            max_retries=options.max_retries,
            request_timeout_s=options.request_timeout_s,
            concurrency=options.model_concurrency,
            requests_per_minute=options.requests_per_minute,
            prices_path=options.prices_path,
            meter=meter if meter is not None else UsageMeter(),
        )


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


def _provider_entry(provider: str) -> str:
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
    factory = registry.load_entry_point(_provider_entry(provider))
    model: ChatModel = factory(
        name,
        options if options is not None else ModelOptions(),
        runtime if runtime is not None else ModelRuntime(),
    )
    return model


def check_model_access(model_id: str, options: ModelOptions | None = None) -> None:
    """Refuse, without any network call, a model that cannot work: unknown provider or policy,
    missing API key, missing or malformed base URL, LiteLLM extra not installed."""
    options = options if options is not None else ModelOptions()
    provider, name = parse_model_id(model_id)
    _provider_entry(provider)
    if provider == "openai":
        from forkingpaths.models.openai_compat import checked_base_url, openai_api_key

        checked_base_url(options.base_url, required=False)
        openai_api_key(options)
    elif provider == "openai-compat":
        from forkingpaths.models.openai_compat import checked_base_url, openai_compat_api_key

        checked_base_url(options.base_url, required=True)
        openai_compat_api_key(options)
    elif provider == "litellm":
        from forkingpaths.models.litellm_model import LITELLM_MISSING, litellm_api_key

        if importlib.util.find_spec("litellm") is None:
            raise ConfigError(LITELLM_MISSING.format(model_id=model_id))
        litellm_api_key(options)
    elif provider == "scripted":
        from forkingpaths.models.scripted import load_policy

        load_policy(name)


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
