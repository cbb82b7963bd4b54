"""Tests of model ids -> models, the offline access check and ModelRuntime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forkingpaths.core.errors import ConfigError, MissingAPIKey, NameNotFound
from forkingpaths.core.records import ModelOptions, RunOptions
from forkingpaths.models.factory import check_model_access, make_model, parse_model_id
from forkingpaths.models.openai_compat import OpenAICompatModel
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel
from forkingpaths.models.usage import UsageMeter


def test_parse_model_id() -> None:
    assert parse_model_id("openai/gpt-4.1") == ("openai", "gpt-4.1")
    assert parse_model_id("litellm/anthropic/claude-x") == ("litellm", "anthropic/claude-x")


@pytest.mark.parametrize("bad", ["gpt-4.1", "", "/gpt-4.1", "openai/"])
def test_model_id_without_provider_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="provider/model") as caught:
        parse_model_id(bad)
    assert repr(bad) in str(caught.value) and "openai-compat" in str(caught.value)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(NameNotFound) as caught:
        make_model("opnai/gpt-4.1", ModelOptions(), ModelRuntime(cache=False))
    message = str(caught.value)
    assert "model API" in message and "Did you mean 'openai'?" in message
    for provider in ["litellm", "openai", "openai-compat", "scripted"]:
        assert provider in message
    with pytest.raises(NameNotFound):
        check_model_access("opnai/gpt-4.1")


def test_unknown_scripted_policy_lists_the_known_ones() -> None:
    with pytest.raises(NameNotFound) as caught:
        make_model("scripted/ecoh", ModelOptions(), ModelRuntime(cache=False))
    message = str(caught.value)
    assert "scripted policy" in message and "'echo'" in message and "garbage" in message
    with pytest.raises(NameNotFound):
        check_model_access("scripted/ecoh")


def test_missing_openai_key_is_caught_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingAPIKey, match="OPENAI_API_KEY"):
        check_model_access("openai/gpt-4.1", ModelOptions())
    with pytest.raises(MissingAPIKey):
        make_model("openai/gpt-4.1", ModelOptions(), ModelRuntime(cache=False))


def test_openai_model_builds_offline_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    check_model_access("openai/gpt-4.1")
    model = make_model("openai/gpt-4.1", ModelOptions(), ModelRuntime(cache=False))
    assert isinstance(model, OpenAICompatModel)
    assert model.name == "openai/gpt-4.1" and model.model_name == "gpt-4.1"
    assert "sk-test" not in repr(model)


def test_api_key_env_names_another_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_PROXY_KEY", "k")
    check_model_access("openai/gpt-4.1", ModelOptions(api_key_env="MY_PROXY_KEY"))
    monkeypatch.delenv("MY_PROXY_KEY")
    with pytest.raises(MissingAPIKey, match="MY_PROXY_KEY"):
        check_model_access("openai/gpt-4.1", ModelOptions(api_key_env="MY_PROXY_KEY"))


def test_openai_compat_needs_a_base_url() -> None:
    with pytest.raises(ConfigError, match="--base-url"):
        check_model_access("openai-compat/qwen3-32b", ModelOptions())
    with pytest.raises(ConfigError, match="--base-url"):
        make_model("openai-compat/qwen3-32b", ModelOptions(), ModelRuntime(cache=False))
    with pytest.raises(ConfigError, match=r"--base-url.*'localhost:8000'"):
        check_model_access("openai-compat/qwen3-32b", ModelOptions(base_url="localhost:8000"))


def test_openai_compat_key_is_optional_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ModelOptions(base_url="http://localhost:8000/v1")
    check_model_access("openai-compat/qwen3-32b", options)
    named = ModelOptions(base_url="http://localhost:8000/v1", api_key_env="VLLM_KEY")
    monkeypatch.delenv("VLLM_KEY", raising=False)
    with pytest.raises(MissingAPIKey, match="VLLM_KEY"):
        check_model_access("openai-compat/qwen3-32b", named)
    monkeypatch.setenv("VLLM_KEY", "secret")
    check_model_access("openai-compat/qwen3-32b", named)


def test_scripted_ids_build_scripted_models() -> None:
    check_model_access("scripted/echo")
    model = make_model("scripted/echo", ModelOptions(), ModelRuntime(cache=False))
    assert isinstance(model, ScriptedModel) and model.name == "scripted/echo"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"concurrency": 0},
        {"max_retries": -1},
        {"retry_base_delay_s": -1.0},
        {"request_timeout_s": 0.0},
        {"requests_per_minute": 0.0},
    ],
)
def test_invalid_runtime_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        ModelRuntime(**kwargs)  # type: ignore[arg-type]


def test_cache_path_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "c"))
    assert ModelRuntime().resolved_cache_path() == tmp_path / "c" / "responses.sqlite"
    monkeypatch.delenv("FORKINGPATHS_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    expected = tmp_path / ".cache" / "forkingpaths" / "responses.sqlite"
    assert ModelRuntime().resolved_cache_path() == expected
    assert ModelRuntime(cache_path=tmp_path / "x.db").resolved_cache_path() == tmp_path / "x.db"


def test_runtime_from_run_options() -> None:
    meter = UsageMeter()
    options = RunOptions(
        cache=False,
        model_concurrency=3,
        requests_per_minute=90,
        max_retries=2,
        request_timeout_s=5,
    )
    runtime = ModelRuntime.from_run_options(options, meter)
    assert (runtime.cache, runtime.concurrency, runtime.requests_per_minute) == (False, 3, 90)
    assert (runtime.max_retries, runtime.request_timeout_s) == (2, 5)
    assert runtime.meter is meter


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_checking_a_model_imports_no_sdk() -> None:
    modules = _modules_after(
        "from forkingpaths.core.records import ModelOptions\n"
        "from forkingpaths.models.factory import check_model_access\n"
        "check_model_access('openai/gpt-4.1')\n"
        "check_model_access('openai-compat/q', ModelOptions(base_url='http://127.0.0.1:1/v1'))"
    )
    assert "openai" not in modules and "litellm" not in modules


def test_building_a_generic_scripted_model_imports_no_benchmark() -> None:
    modules = _modules_after(
        "from forkingpaths.models.factory import make_model\nmake_model('scripted/echo')"
    )
    assert not {m for m in modules if m.startswith("forkingpaths.benchmarks")}
    # A benchmark's policy imports its own benchmark's module, and no other benchmark.
    modules = _modules_after(
        "from forkingpaths.models.factory import make_model\n"
        "make_model('scripted/griddag-frontier')"
    )
    assert {m.split(".")[2] for m in modules if m.startswith("forkingpaths.benchmarks.")} == {
        "griddag"
    }
