"""The `evorepe` solver: the vanilla or evolved-prompt solver on a local model steered by an
EvoRePE creativity vector (§4.3), so a '+ EvoRePE' row of Table 3 is an ordinary run.

Only the solver is steered: it answers through a steered view of the run's `hf/` model
(`HFSteeredModel.steered`), while a judge played by the same model stays unsteered (steering
the whole model with `--model-extra evorepe_vector=...` would steer that judge too).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from forkingpaths.benchmarks.creativebench.agents.solver import (
    CreativeSolver,
    pinned_instruction,
)
from forkingpaths.benchmarks.creativebench.evorepe import (
    DEFAULT_ALPHA,
    DEFAULT_LAYER,
    HFSteeredModel,
    load_vector,
)
from forkingpaths.core.agent import require_model
from forkingpaths.core.benchmark import Benchmark
from forkingpaths.core.chat import ChatModel
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.models.factory import RunParamsModel

HF_HINT = "--model hf/MODEL, with the hf extra: pip install -e '.[hf]'"
"""What steering needs, said in every refusal."""


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes (hex): what the `evorepe_sha256` agent option pins."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(
            f"evorepe_vector {path}: cannot read it ({exc.strerror or exc})"
        ) from None


def make_evorepe_solver(
    benchmark: Benchmark | None = None,
    model: ChatModel | None = None,
    evorepe_vector: str = "",
    evorepe_layer: int = 0,
    evorepe_alpha: float = DEFAULT_ALPHA,
    evorepe_sha256: str = "",
    prompt_file: str = "",
    prompt_sha256: str = "",
) -> CreativeSolver:
    """Factory of the `evorepe` solver: the creativity vector in `evorepe_vector` (a file of
    `creativebench evorepe-vector`) added at `evorepe_layer` (0: the layer stored in the file,
    else the paper's 26) with strength `evorepe_alpha` (the paper's 0.1); with `prompt_file`
    the solver plays that evolved prompt ('AlphaEvolve/GEPA + EvoRePE'), else the default one
    ('Vanilla Prompt + EvoRePE'). `evorepe_sha256` / `prompt_sha256` pin the files' contents."""
    if not evorepe_vector:
        raise ConfigError(
            "evorepe_vector: the evorepe solver needs a creativity vector file (`forkingpaths "
            "creativebench evorepe-vector --prompt-file EVOLVED.json --out v.pt`, then -a "
            "evorepe_vector=v.pt)"
        )
    if isinstance(evorepe_layer, bool) or not isinstance(evorepe_layer, int) or evorepe_layer < 0:
        raise ConfigError(
            "evorepe_layer: expected a decoder layer >= 1 (0: the file's), "
            f"got {shown(evorepe_layer)}"
        )
    chat = require_model(model, "evorepe")
    base = chat.model if isinstance(chat, RunParamsModel) else chat
    if not isinstance(base, HFSteeredModel):
        raise ConfigError(
            f"evorepe_vector: steering needs a local transformers model ({HF_HINT}); "
            f"got {chat.name}"
        )
    if evorepe_sha256 and file_digest(evorepe_vector) != evorepe_sha256:
        raise ConfigError(
            f"evorepe_sha256: evorepe_vector {evorepe_vector} now holds another vector (sha256 "
            f"{file_digest(evorepe_vector)}, expected {evorepe_sha256}); give the file the run "
            "was made with, or start a new run"
        )
    vector, meta = load_vector(evorepe_vector)
    layer = evorepe_layer or int(meta.get("layer") or DEFAULT_LAYER)
    steered = base.steered(vector, layer, evorepe_alpha)
    solver_model: ChatModel = (
        RunParamsModel(steered, chat.defaults) if isinstance(chat, RunParamsModel) else steered
    )
    instruction = pinned_instruction(prompt_file, prompt_sha256) if prompt_file else None
    return CreativeSolver(solver_model, instruction=instruction)
