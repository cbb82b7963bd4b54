"""The run's sampling parameters reach every request; an agent's explicit fields win."""

from __future__ import annotations

from pathlib import Path

import pytest

from forkingpaths.core.chat import Completion, Message, ModelParams
from forkingpaths.core.records import ModelOptions, RunOptions, RunSpec
from forkingpaths.models.factory import RunParamsModel
from forkingpaths.models.mockserver import MockServer
from forkingpaths.runner.run import execute_run


class Recorder:
    """A ChatModel test double that keeps the params of every request."""

    name = "fake/recorder"

    def __init__(self) -> None:
        self.params: list[ModelParams | None] = []

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        self.params.append(params)
        return Completion(text="{}", model=self.name)


async def test_run_defaults_fill_what_the_agent_leaves_unset() -> None:
    inner = Recorder()
    model = RunParamsModel(inner, ModelParams(temperature=0.7, max_tokens=64, seed=3))
    hello = [Message(role="user", content="hi")]
    await model.complete(hello)
    await model.complete(hello, ModelParams(max_tokens=512))
    first, second = inner.params
    assert first == ModelParams(temperature=0.7, max_tokens=64, seed=3)
    assert second == ModelParams(temperature=0.7, max_tokens=512, seed=3)


async def test_temperature_flag_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORKINGPATHS_CACHE_DIR", str(tmp_path / "cache"))
    async with MockServer() as server:
        assert server.base_url
        spec = RunSpec(
            benchmark="griddag",
            split="main",
            instances=["low-easy-s0"],
            agent="react",
            model="openai-compat/griddag-frontier",
            model_options=ModelOptions(
                base_url=server.base_url, params=ModelParams(temperature=0.7)
            ),
        )
        options = RunOptions(progress=False)
        await execute_run(spec, options, runs_dir=tmp_path)
        first = server.stats.requests
        again = await execute_run(spec, options, runs_dir=tmp_path, force_new=True)
    # Sampled calls are never replayed from the cache, so temperature 0.7 reached the model.
    assert server.stats.requests == 2 * first
    assert again.metrics["usage"]["cached_calls"] == 0
