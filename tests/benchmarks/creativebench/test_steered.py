"""The `evorepe` solver's refusals (what runs without the hf extra); the steering itself is
tested in test_evorepe.py, where torch and transformers are installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.creativebench.agents.solver import (
    make_prompt_solver,
    prompt_digest,
)
from forkingpaths.benchmarks.creativebench.agents.steered import file_digest, make_evorepe_solver
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.core.chat import ModelParams
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.factory import RunParamsModel


def test_the_evorepe_agent_is_listed_with_its_options() -> None:
    bench = CreativeBenchmark()
    assert bench.agent_spec("evorepe").needs_model
    with pytest.raises(ConfigError) as raised:
        bench.make_agent("evorepe", FakeChatModel(["x"]), {"vector": "v.pt"})
    assert str(raised.value) == (
        "agent 'evorepe' of creativebench has no option 'vector'; its options: evorepe_vector, "
        "evorepe_layer, evorepe_alpha, evorepe_sha256, prompt_file, prompt_sha256"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {},
            "evorepe_vector: the evorepe solver needs a creativity vector file (`forkingpaths "
            "creativebench evorepe-vector --prompt-file EVOLVED.json --out v.pt`, then -a "
            "evorepe_vector=v.pt)",
        ),
        (
            {"evorepe_vector": "v.pt", "evorepe_layer": -1},
            "evorepe_layer: expected a decoder layer >= 1 (0: the file's), got -1",
        ),
        (
            {"evorepe_vector": "v.pt", "evorepe_layer": True},
            "evorepe_layer: expected a decoder layer >= 1 (0: the file's), got true",
        ),
        (
            {"evorepe_vector": "v.pt"},
            "evorepe_vector: steering needs a local transformers model (--model hf/MODEL, with "
            "the hf extra: pip install -e '.[hf]'); got fake/model",
        ),
    ],
)
def test_the_evorepe_solver_refuses_what_it_cannot_steer(
    options: dict[str, object], message: str
) -> None:
    model = RunParamsModel(FakeChatModel(["x"]), ModelParams(temperature=0.1))
    with pytest.raises(ConfigError) as raised:
        make_evorepe_solver(model=model, **options)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_file_digest_names_an_unreadable_vector(tmp_path: Path) -> None:
    (tmp_path / "v.pt").write_bytes(b"abc")
    assert file_digest(tmp_path / "v.pt") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    with pytest.raises(ConfigError, match=f"evorepe_vector {tmp_path / 'no.pt'}: cannot read"):
        file_digest(tmp_path / "no.pt")


def test_a_pinned_prompt_file_that_changed_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "island.json"
    path.write_text(json.dumps({"prompt": "Be original."}))
    pinned = prompt_digest("Be original.")
    solver = make_prompt_solver(
        model=FakeChatModel(["x"]), prompt_file=str(path), prompt_sha256=pinned
    )
    assert solver.instruction == "Be original."
    path.write_text(json.dumps({"prompt": "Be bold."}))
    with pytest.raises(ConfigError) as raised:
        make_prompt_solver(model=FakeChatModel(["x"]), prompt_file=str(path), prompt_sha256=pinned)
    assert str(raised.value) == (
        f"prompt_sha256: prompt_file {path} now holds another prompt (sha256 "
        f"{prompt_digest('Be bold.')}, expected {pinned}); give the file the run was made "
        "with, or start a new run"
    )
