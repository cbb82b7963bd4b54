"""Tests of the price lookup beyond the table: LiteLLM's cost map as the fallback, read locally
and lazily, only for providers that bill the model; local models free; scripted ones unpriced."""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
from pathlib import Path

import pytest

from forkingpaths.core.chat import Message, ModelParams, Usage
from forkingpaths.core.errors import InvalidFile
from forkingpaths.models import pricing
from forkingpaths.models.openai_compat import RawAnswer, RemoteChatModel
from forkingpaths.models.pricing import LiteLLMPrices, PriceTable
from forkingpaths.models.runtime import ModelRuntime

USAGE = Usage(prompt_tokens=1000, completion_tokens=500, cached_prompt_tokens=200)

# A few entries in the format of LiteLLM's model_prices_and_context_window.json (USD per token).
LITELLM_MAP = {
    "sample_spec": {
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
        "litellm_provider": "one of https://docs.litellm.ai/docs/providers",
        "mode": "one of: chat, embedding, completion, image_generation",
    },
    "claude-test-4": {
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "cache_read_input_token_cost": 3e-07,
        "litellm_provider": "anthropic",
        "mode": "chat",
    },
    "groq/llama-test-8b": {
        "input_cost_per_token": 5e-08,
        "output_cost_per_token": 8e-08,
        "litellm_provider": "groq",
        "mode": "chat",
    },
    "gpt-test-turbo": {
        "input_cost_per_token": 1e-05,
        "output_cost_per_token": 3e-05,
        "litellm_provider": "openai",
        "mode": "chat",
    },
    "nova-test-lite": {
        "input_cost_per_token": 6e-08,
        "output_cost_per_token": 2.4e-07,
        "litellm_provider": "bedrock_converse",
        "mode": "chat",
    },
    "gpt-4.1": {
        "input_cost_per_token": 9e-06,
        "output_cost_per_token": 9e-06,
        "litellm_provider": "openai",
        "mode": "chat",
    },
    "dall-e-test": {
        "input_cost_per_pixel": 1.9e-08,
        "output_cost_per_pixel": 0.0,
        "litellm_provider": "openai",
        "mode": "image_generation",
    },
    "text-embedding-test": {
        "input_cost_per_token": 2e-08,
        "litellm_provider": "openai",
        "mode": "embedding",
    },
}


@pytest.fixture(autouse=True)
def _no_user_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORKINGPATHS_PRICES", raising=False)
    monkeypatch.delenv("FORKINGPATHS_LITELLM_PRICES", raising=False)


@pytest.fixture
def litellm_map(tmp_path: Path) -> Path:
    path = tmp_path / "model_prices_and_context_window.json"
    path.write_text(json.dumps(LITELLM_MAP))
    return path


@pytest.fixture
def table(litellm_map: Path, monkeypatch: pytest.MonkeyPatch) -> PriceTable:
    """The shipped table with the fixture map as its fallback, named as a user would."""
    monkeypatch.setenv("FORKINGPATHS_LITELLM_PRICES", str(litellm_map))
    return PriceTable.load()


def test_litellm_model_is_priced_from_the_map_with_cached_tokens(table: PriceTable) -> None:
    # 800 fresh * $3 + 200 cached * $0.30 + 500 out * $15 per 1M = 9960 micro-dollars.
    assert table.is_priced("litellm/anthropic/claude-test-4")
    assert table.price("litellm/anthropic/claude-test-4", USAGE) == pytest.approx(0.00996)


def test_provider_and_model_key_comes_first_and_cached_tokens_default_to_input(
    table: PriceTable,
) -> None:
    # `groq/llama-test-8b` is listed whole; no cache price: all 1000 prompt tokens at $0.05.
    assert table.price("litellm/groq/llama-test-8b", USAGE) == pytest.approx(
        (1000 * 0.05 + 500 * 0.08) / 1e6
    )


def test_a_model_key_counts_only_under_its_own_provider(table: PriceTable) -> None:
    assert table.price("litellm/bedrock/nova-test-lite", USAGE) == pytest.approx(
        (1000 * 0.06 + 500 * 0.24) / 1e6
    )
    # A self-hosted server's copy of a model does not cost what its vendor charges.
    assert not table.is_priced("litellm/hosted_vllm/claude-test-4")
    assert table.price("litellm/hosted_vllm/claude-test-4", USAGE) == 0.0
    assert not table.is_priced("litellm/open/gpt-test-turbo")


def test_openai_models_missing_from_the_table_fall_back(table: PriceTable) -> None:
    assert table.price("openai/gpt-test-turbo", USAGE) == pytest.approx(
        (1000 * 10 + 500 * 30) / 1e6
    )
    assert not table.is_priced("openai/claude-test-4")


def test_the_table_wins_over_the_map(table: PriceTable) -> None:
    # Shipped gpt-4.1: $2 / $0.50 cached / $8, not the map's $9 / $9.
    assert table.price("openai/gpt-4.1", USAGE) == pytest.approx(0.0057)


def test_openai_compat_never_falls_back_unless_the_user_file_names_it(
    litellm_map: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKINGPATHS_LITELLM_PRICES", str(litellm_map))
    assert not PriceTable.load().is_priced("openai-compat/gpt-test-turbo")
    assert PriceTable.load().price("openai-compat/gpt-test-turbo", USAGE) == 0.0
    user = tmp_path / "prices.yaml"
    user.write_text("schema_version: 1\nmodels:\n  gpt-test-turbo: {input: 1.0, output: 2.0}\n")
    assert PriceTable.load(user).price("openai-compat/gpt-test-turbo", USAGE) == pytest.approx(
        (1000 * 1.0 + 500 * 2.0) / 1e6
    )


def test_entries_without_chat_token_prices_are_skipped(table: PriceTable) -> None:
    for model in ["openai/dall-e-test", "openai/text-embedding-test", "openai/sample_spec"]:
        assert not table.is_priced(model), model


def test_bare_names_and_scripted_models_stay_unpriced(table: PriceTable) -> None:
    assert not table.is_priced("gpt-test-turbo")
    assert not table.is_priced("scripted/echo")
    assert table.price("scripted/echo", USAGE) == 0.0


def test_local_models_are_priced_at_zero(table: PriceTable) -> None:
    for model in ["local/qwen3-0.6b", "local/gpt-4.1", "local/~/models/x.gguf"]:
        assert table.is_priced(model), model
        assert table.price(model, USAGE) == 0.0


def test_the_runner_budget_check_sees_a_litellm_model_in_the_map(
    litellm_map: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runner/run.py warns "has no price in the price table" when this is False.
    monkeypatch.setattr(pricing, "litellm_map_path", lambda: None)
    assert not PriceTable.load(None).is_priced("litellm/anthropic/claude-test-4")
    monkeypatch.setenv("FORKINGPATHS_LITELLM_PRICES", str(litellm_map))
    assert PriceTable.load(None).is_priced("litellm/anthropic/claude-test-4")


def test_installed_map_is_found_and_read_only_on_the_first_miss(
    litellm_map: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searches: list[int] = []

    def found() -> Path:
        searches.append(1)
        return litellm_map

    monkeypatch.setattr(pricing, "litellm_map_path", found)
    table = PriceTable.load()
    assert table.is_priced("openai/gpt-4.1") and table.is_priced("local/m")
    assert searches == []
    assert table.is_priced("litellm/anthropic/claude-test-4")
    assert table.is_priced("openai/gpt-test-turbo")
    assert searches == [1]


def test_without_litellm_installed_nothing_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pricing, "litellm_map_path", lambda: None)
    table = PriceTable.load()
    assert not table.is_priced("litellm/anthropic/claude-test-4")
    assert table.price("litellm/anthropic/claude-test-4", USAGE) == 0.0
    assert table.is_priced("openai/gpt-4.1")


def test_an_unreadable_installed_map_is_logged_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "model_prices_and_context_window_backup.json"
    broken.write_text("{not json")
    monkeypatch.setattr(pricing, "litellm_map_path", lambda: broken)
    with caplog.at_level(logging.WARNING, logger="forkingpaths.models.pricing"):
        assert not PriceTable.load().is_priced("litellm/anthropic/claude-test-4")
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["litellm package"]
    assert "is not valid JSON" in caplog.records[0].getMessage()


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (None, r"\$FORKINGPATHS_LITELLM_PRICES: LiteLLM price map '.*nope.json' cannot be read"),
        ("{not json", r"\$FORKINGPATHS_LITELLM_PRICES: .* is not valid JSON"),
        ("[1, 2]", r"must be a JSON object of model -> prices, got list"),
    ],
)
def test_a_bad_map_named_by_the_user_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str | None, match: str
) -> None:
    path = tmp_path / "nope.json"
    if text is not None:
        path.write_text(text)
    monkeypatch.setenv("FORKINGPATHS_LITELLM_PRICES", str(path))
    with pytest.raises(InvalidFile, match=match):
        PriceTable.load()


def test_an_explicit_map_object_overrides_the_environment(
    litellm_map: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    monkeypatch.setenv("FORKINGPATHS_LITELLM_PRICES", str(empty))
    table = PriceTable({}, litellm=LiteLLMPrices(litellm_map))
    assert table.is_priced("litellm/anthropic/claude-test-4")


class _FixedAnswer(RemoteChatModel):
    """A remote model whose every call returns USAGE, to see what the pipeline bills."""

    async def _send(self, messages: list[Message], params: ModelParams) -> RawAnswer:
        return RawAnswer(text="ok", usage=USAGE, finish_reason="stop")


@pytest.mark.parametrize(
    ("model", "cost"),
    [
        ("litellm/anthropic/claude-test-4", 0.00996),
        ("openai/gpt-test-turbo", 0.025),
        ("openai-compat/gpt-test-turbo", 0.0),
        ("local/gpt-test-turbo", 0.0),
    ],
)
async def test_completions_are_billed_by_the_full_model_id(
    litellm_map: Path, model: str, cost: float
) -> None:
    # Needs RemoteChatModel to price `self.name` (the full id), not the id less its provider.
    prices = PriceTable({}, litellm=LiteLLMPrices(litellm_map))
    remote = _FixedAnswer(model, base_url=None, runtime=ModelRuntime(cache=False), prices=prices)
    completion = await remote.complete([Message(role="user", content="hi")])
    assert completion.cost_usd == pytest.approx(cost)


@pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="litellm not installed")
def test_the_installed_litellm_map_is_found_without_importing_litellm() -> None:
    imported_before = "litellm" in sys.modules
    path = pricing.litellm_map_path()
    assert path is not None and path.name == "model_prices_and_context_window_backup.json"
    table = PriceTable.load()
    # In LiteLLM's map for years, absent from the shipped table.
    assert table.is_priced("openai/gpt-3.5-turbo")
    assert ("litellm" in sys.modules) == imported_before
