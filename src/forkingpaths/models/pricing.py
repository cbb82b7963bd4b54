"""Price table: USD per 1M tokens by model name, shipped YAML overridable by a user file."""

from __future__ import annotations

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


class PriceTable:
    """Model name -> ModelPrice, looked up by exact name, then by the longest listed prefix."""

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)
        # Longest first, so `gpt-4.1-mini-2025-04-14` finds gpt-4.1-mini before gpt-4.1.
        self._by_length = sorted(self._prices, key=len, reverse=True)

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
        turn), None if unlisted. A listed name also prices its dated snapshots (`o3` prices
        `o3-2025-04-16`, `gpt-4-0613`, `-latest`) and nothing else: `gpt-5.4` or `gpt-5-mini`
        are other models, not snapshots of `gpt-5`."""
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
        """True when `model` has a price (unpriced models are billed 0)."""
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
