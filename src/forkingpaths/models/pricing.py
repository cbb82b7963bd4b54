"""Price table: USD per 1M tokens by model id, shipped YAML overridable by a user file, with
LiteLLM's cost map as the fallback for models neither lists.

Lookup order for a model id (`PriceTable.lookup`):

1. `local/...` (a GGUF model on this machine's llama.cpp server): free, always priced 0.
2. The table: the user's file (--prices or $FORKINGPATHS_PRICES) entry by entry over the shipped
   `prices.yaml`; the id, then the id with its provider prefixes taken off in turn, exactly, then
   as a dated snapshot of the longest listed name (`o3` prices `o3-2025-04-16`).
3. LiteLLM's cost map, read from a local JSON file (never fetched): $FORKINGPATHS_LITELLM_PRICES if
   set, else `model_prices_and_context_window_backup.json` inside the installed `litellm` package
   (found without importing LiteLLM, read on the first model the table misses). Only for ids
   whose provider is known to bill that model: `litellm/<provider>/<model>` tries the keys
   `<provider>/<model>`, then `<model>` when LiteLLM lists it under that provider;
   `openai/<model>` tries `<model>` listed under `openai`. `openai-compat/...` never falls back:
   a self-hosted server's model does not cost what the provider charges (name it in your file).
4. Anything else (`scripted/...`, `hf/...`, bare names, unknown models) is unpriced: billed 0 and
   reported by `is_priced` as False, so the runner can warn that --budget-usd cannot cap it.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forkingpaths.core.chat import Usage
from forkingpaths.core.errors import InvalidFile

PRICES_ENV = "FORKINGPATHS_PRICES"
"""Environment variable naming a user price YAML (used when no path is passed explicitly)."""

PRICES_SCHEMA_VERSION = 1
"""Schema version of price files this code reads."""

LITELLM_PRICES_ENV = "FORKINGPATHS_LITELLM_PRICES"
"""Environment variable naming a JSON cost map in LiteLLM's format, read instead of the one inside
the installed litellm package (e.g. a newer `model_prices_and_context_window.json`)."""

LITELLM_MAP_FILE = "model_prices_and_context_window_backup.json"
"""LiteLLM's bundled cost map, inside the `litellm` package directory."""

FREE_PROVIDERS = frozenset({"local"})
"""Providers whose models run on this machine: priced, at 0."""

log = logging.getLogger(__name__)


class _PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    """USD per 1M prompt tokens."""
    cached_input: float | None = Field(default=None, ge=0)
    """USD per 1M prompt tokens served from the provider's prompt cache (None: as input)."""
    output: float = Field(ge=0)
    """USD per 1M completion tokens."""


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = PRICES_SCHEMA_VERSION
    """Price file schema version."""
    models: dict[str, _PriceEntry] = Field(default_factory=dict)
    """Model name -> prices."""


@dataclass(frozen=True)
class ModelPrice:
    """Prices of one model, USD per 1M tokens."""

    input_per_m: float
    cached_input_per_m: float
    output_per_m: float


# What may follow a listed name in a snapshot id of the same model.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4}|latest)")


_FREE = ModelPrice(input_per_m=0.0, cached_input_per_m=0.0, output_per_m=0.0)


def litellm_map_path() -> Path | None:
    """LiteLLM's bundled cost map in the installed `litellm` package, None if not installed.

    Found with `importlib.util.find_spec`, which locates the package without importing it
    (importing LiteLLM takes seconds and may fetch its remote map; `importlib.resources.files`
    would import it).
    """
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / LITELLM_MAP_FILE
        if candidate.is_file():
            return candidate
    return None


class LiteLLMPrices:
    """LiteLLM's cost map (USD per token, keyed by LiteLLM model string), read from a local file.

    `path` given: that file is read now, and a missing or malformed file raises InvalidFile
    naming `origin`. None: the file inside the installed litellm package is found and read on the
    first lookup; no litellm, or an unreadable file (logged once), leaves the fallback empty.
    Parsed maps are cached per file for the process.
    """

    def __init__(
        self, path: str | Path | None = None, *, origin: str = "LiteLLM price map"
    ) -> None:
        self._entries: dict[str, tuple[str, ModelPrice]] | None = None
        if path is not None:
            self._entries = _read_litellm_map(str(Path(path).expanduser()), origin)

    @classmethod
    def from_environment(cls) -> LiteLLMPrices:
        """The map named by $FORKINGPATHS_LITELLM_PRICES, else the installed package's."""
        chosen = os.environ.get(LITELLM_PRICES_ENV) or None
        return cls(chosen, origin=f"${LITELLM_PRICES_ENV}")

    def _loaded(self) -> dict[str, tuple[str, ModelPrice]]:
        if self._entries is None:
            found = litellm_map_path()
            self._entries = {} if found is None else _read_installed_litellm_map(str(found))
        return self._entries

    def lookup(self, model: str) -> ModelPrice | None:
        """Prices of the forkingpaths id `model` from the map, None for ids it may not price."""
        for key, provider in _litellm_keys(model):
            entry = self._loaded().get(key)
            if entry is not None and (provider is None or _billed_by(entry[0], provider)):
                return entry[1]
        return None


def _billed_by(litellm_provider: str, provider: str) -> bool:
    """Whether LiteLLM's `litellm_provider` is `provider` or one of its APIs (`bedrock_converse`
    for bedrock, `vertex_ai-language-models` for vertex_ai, `cohere_chat` for cohere)."""
    return litellm_provider == provider or litellm_provider.startswith(
        (f"{provider}_", f"{provider}-")
    )


def _litellm_keys(model: str) -> list[tuple[str, str | None]]:
    """LiteLLM keys to try for a forkingpaths id, each with the `litellm_provider` its entry must
    start with (None: any)."""
    provider, _, rest = model.partition("/")
    if provider == "litellm":
        inner, _, name = rest.partition("/")
        return [(rest, None), (name, inner)] if inner and name else []
    if provider == "openai" and rest:
        return [(rest, "openai")]
    return []


def _cost(entry: Mapping[str, object], field: str) -> float | None:
    value = entry.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


@functools.cache
def _read_litellm_map(path: str, origin: str) -> dict[str, tuple[str, ModelPrice]]:
    """Key -> (litellm_provider, prices) of every entry with input and output token prices."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise InvalidFile(
            f"{origin}: LiteLLM price map {path!r} cannot be read ({err.strerror or err});"
            f" name a JSON file in the format of LiteLLM's {LITELLM_MAP_FILE}"
        ) from err
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InvalidFile(f"{origin}: LiteLLM price map {path!r} is not valid JSON: {err}") from err
    if not isinstance(raw, dict):
        raise InvalidFile(
            f"{origin}: LiteLLM price map {path!r} must be a JSON object of model -> prices,"
            f" got {type(raw).__name__}"
        )
    entries: dict[str, tuple[str, ModelPrice]] = {}
    for key, entry in raw.items():
        if not isinstance(entry, dict) or key == "sample_spec":  # the format's documentation
            continue
        per_token_in = _cost(entry, "input_cost_per_token")
        per_token_out = _cost(entry, "output_cost_per_token")
        if per_token_in is None or per_token_out is None:
            continue  # images, audio, embeddings: not priced per chat token
        per_token_cached = _cost(entry, "cache_read_input_token_cost")
        provider = entry.get("litellm_provider")
        entries[key] = (
            provider if isinstance(provider, str) else "",
            ModelPrice(
                input_per_m=per_token_in * 1_000_000,
                cached_input_per_m=(per_token_in if per_token_cached is None else per_token_cached)
                * 1_000_000,
                output_per_m=per_token_out * 1_000_000,
            ),
        )
    return entries


@functools.cache
def _read_installed_litellm_map(path: str) -> dict[str, tuple[str, ModelPrice]]:
    try:
        return _read_litellm_map(path, "litellm package")
    except InvalidFile as err:
        log.warning("%s; models outside the price table stay unpriced", err)
        return {}


class PriceTable:
    """Model id -> ModelPrice: local models free, then the listed table (exact name, provider
    prefixes off, dated snapshots of the longest listed name), then LiteLLM's cost map; the
    module docstring gives the order in full."""

    def __init__(
        self, prices: Mapping[str, ModelPrice], litellm: LiteLLMPrices | None = None
    ) -> None:
        """`litellm`: the fallback cost map (None: $FORKINGPATHS_LITELLM_PRICES, else the
        installed litellm package's, read on the first miss)."""
        self._prices = dict(prices)
        # Longest first, so `gpt-4.1-mini-2025-04-14` finds gpt-4.1-mini before gpt-4.1.
        self._by_length = sorted(self._prices, key=len, reverse=True)
        self._litellm = litellm if litellm is not None else LiteLLMPrices.from_environment()

    @classmethod
    def load(cls, user_path: str | Path | None = None) -> PriceTable:
        """The shipped table, overridden entry by entry by `user_path` (or $FORKINGPATHS_PRICES)."""
        shipped = files("forkingpaths.models").joinpath("prices.yaml").read_text(encoding="utf-8")
        prices = _parse(shipped, "forkingpaths/models/prices.yaml")
        chosen = user_path if user_path is not None else os.environ.get(PRICES_ENV) or None
        if chosen is not None:
            path = Path(chosen).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as err:
                raise InvalidFile(
                    f"price file {str(path)!r} cannot be read ({err.strerror or err});"
                    f" pass an existing YAML file (--prices or ${PRICES_ENV})"
                ) from err
            prices.update(_parse(text, str(path)))
        return cls(prices)

    def names(self) -> list[str]:
        """Every listed model name."""
        return sorted(self._prices)

    def lookup(self, model: str) -> ModelPrice | None:
        """Prices of `model` (a name, or an id with provider prefixes, which are tried off in
        turn), None if unpriced. A listed name also prices its dated snapshots (`o3` prices
        `o3-2025-04-16`, `gpt-4-0613`, `-latest`) and nothing else: `gpt-5.4` or `gpt-5-mini`
        are other models, not snapshots of `gpt-5`. `local/...` ids cost 0; ids the table misses
        fall back to LiteLLM's cost map (full ids only: see the module docstring)."""
        provider, slash, _ = model.partition("/")
        if slash and provider in FREE_PROVIDERS:
            return _FREE
        listed = self._listed(model)
        return listed if listed is not None else self._litellm.lookup(model)

    def _listed(self, model: str) -> ModelPrice | None:
        candidates = [model]
        while "/" in candidates[-1]:
            candidates.append(candidates[-1].split("/", 1)[1])
        for name in candidates:
            if name in self._prices:
                return self._prices[name]
        for name in candidates:
            for listed in self._by_length:
                if name.startswith(listed) and _SNAPSHOT.fullmatch(name[len(listed) :]):
                    return self._prices[listed]
        return None

    def is_priced(self, model: str) -> bool:
        """True when `model` has a price, from the table, LiteLLM's map, or as a free local
        model (unpriced models are billed 0)."""
        return self.lookup(model) is not None

    def price(self, model: str, usage: Usage) -> float:
        """USD cost of `usage` on `model` (0 for unpriced models).

        Output is `completion_tokens`, which on OpenAI-style APIs already includes the reasoning
        tokens; only when an API reports more reasoning than completion tokens (so they cannot be
        included) are they added, still at the output price.
        """
        found = self.lookup(model)
        if found is None:
            return 0.0
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        fresh = usage.prompt_tokens - cached
        output = usage.completion_tokens
        if usage.reasoning_tokens > usage.completion_tokens:
            output += usage.reasoning_tokens
        return (
            fresh * found.input_per_m
            + cached * found.cached_input_per_m
            + output * found.output_per_m
        ) / 1_000_000


def _parse(text: str, source: str) -> dict[str, ModelPrice]:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise InvalidFile(f"price file {source!r} is not valid YAML: {err}") from err
    if not isinstance(raw, dict):
        raise InvalidFile(
            f"price file {source!r} must be a mapping with `schema_version` and `models`,"
            f" got {type(raw).__name__}"
        )
    try:
        parsed = _PriceFile.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InvalidFile(
            f"price file {source!r}: field {field!r} got {first.get('input')!r}: {first['msg']}"
            " (each model needs `input` and `output`, and may give `cached_input`, all USD per"
            " 1M tokens >= 0)"
        ) from err
    if parsed.schema_version > PRICES_SCHEMA_VERSION:
        raise InvalidFile(
            f"price file {source!r}: schema_version {parsed.schema_version} is newer than this"
            f" forkingpaths reads (<= {PRICES_SCHEMA_VERSION}); upgrade forkingpaths"
        )
    return {
        name: ModelPrice(
            input_per_m=entry.input,
            cached_input_per_m=entry.input if entry.cached_input is None else entry.cached_input,
            output_per_m=entry.output,
        )
        for name, entry in parsed.models.items()
    }
