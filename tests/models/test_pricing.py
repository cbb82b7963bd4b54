"""Tests of the price table: shipped prices, prefix lookup, user overrides, unpriced models."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkingpaths.core.chat import Usage
from forkingpaths.core.errors import InvalidFile
from forkingpaths.models.pricing import PriceTable


@pytest.fixture(autouse=True)
def _no_user_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORKINGPATHS_PRICES", raising=False)


USAGE = Usage(prompt_tokens=1000, completion_tokens=500, cached_prompt_tokens=200)


def test_shipped_table_lists_the_common_openai_models() -> None:
    table = PriceTable.load()
    for name in [
        "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "gpt-4o-mini",
        "o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano",
    ]:  # fmt: skip
        assert table.is_priced(name), name


def test_known_model_cost_by_hand() -> None:
    # gpt-4.1: $2 / 1M input, $0.50 / 1M cached input, $8 / 1M output.
    # 800 fresh * 2 + 200 cached * 0.5 + 500 out * 8 = 5700 micro-dollars.
    assert PriceTable.load().price("gpt-4.1", USAGE) == pytest.approx(0.0057)


def test_dated_snapshots_and_provider_prefixes_match_the_longest_name() -> None:
    table = PriceTable.load()
    mini = table.price("gpt-4.1-mini", USAGE)
    assert table.price("gpt-4.1-mini-2025-04-14", USAGE) == mini
    assert table.price("openai/gpt-4.1-mini", USAGE) == mini
    assert table.price("gpt-4.1-2025-04-14", USAGE) == table.price("gpt-4.1", USAGE)
    assert table.lookup("o3-mini") != table.lookup("o3")
    assert not table.is_priced("o3x")


def test_reasoning_tokens_bill_as_output_once() -> None:
    table = PriceTable.load()
    inside = Usage(prompt_tokens=0, completion_tokens=1000, reasoning_tokens=800)
    assert table.price("o4-mini", inside) == pytest.approx(1000 * 4.40 / 1e6)
    # An API that reports reasoning apart from (and beyond) completion tokens: both are output.
    apart = Usage(prompt_tokens=0, completion_tokens=100, reasoning_tokens=900)
    assert table.price("o4-mini", apart) == pytest.approx(1000 * 4.40 / 1e6)


def test_unknown_models_cost_nothing_and_are_reported() -> None:
    table = PriceTable.load()
    assert not table.is_priced("qwen3-32b")
    assert table.price("qwen3-32b", USAGE) == 0.0


def test_user_file_overrides_and_extends(tmp_path: Path) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text(
        "schema_version: 1\n"
        "models:\n"
        "  gpt-4.1: {input: 1.0, output: 1.0}\n"
        "  qwen3-32b: {input: 0.1, cached_input: 0.0, output: 0.3}\n"
    )
    table = PriceTable.load(user)
    # No cached_input given: cached tokens bill at the input price.
    assert table.price("gpt-4.1", USAGE) == pytest.approx(1500 / 1e6)
    assert table.price("qwen3-32b", USAGE) == pytest.approx((800 * 0.1 + 500 * 0.3) / 1e6)
    assert table.price("gpt-4o", USAGE) == PriceTable.load().price("gpt-4o", USAGE)


def test_environment_variable_names_the_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text("models:\n  my-model: {input: 3, output: 4}\n")
    monkeypatch.setenv("FORKINGPATHS_PRICES", str(user))
    assert PriceTable.load().is_priced("my-model")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("models:\n  m: {input: -1, output: 1}\n", "models.m.input"),
        ("models:\n  m: {input: 1}\n", "models.m.output"),
        ("models:\n  m: {input: 1, output: 1, typo: 2}\n", "models.m.typo"),
        ("schema_version: 99\nmodels: {}\n", "schema_version 99"),
        ("- just\n- a list\n", "must be a mapping"),
        ("models: [unclosed\n", "not valid YAML"),
    ],
)
def test_invalid_user_files_are_refused(tmp_path: Path, text: str, match: str) -> None:
    user = tmp_path / "prices.yaml"
    user.write_text(text)
    with pytest.raises(InvalidFile, match=match):
        PriceTable.load(user)


def test_missing_user_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidFile, match="cannot be read"):
        PriceTable.load(tmp_path / "nope.yaml")


def test_a_point_release_is_not_priced_as_its_base_model() -> None:
    table = PriceTable.load()
    assert table.lookup("gpt-5-2025-08-07") == table.lookup("gpt-5")
    assert not table.is_priced("gpt-5.4") and not table.is_priced("gpt-5.4-mini")
