"""EvoRePE (§4.3, App. I): a creativity vector from evolved prompts, and a steered local model.

Method (§4.3). Given N pairs (x_base, x_evo) of a standard solver prompt and the prompt an
evolutionary search produced for the same task (`prompt_pairs`), take the last-token
activation h_l(x) at the output of decoder layer l (`capture_last_token`), form the shifts
h_l(x_evo) - h_l(x_base), and take their first principal component as the creativity vector
v_l (`creativity_vector`: SVD of the centred shift matrix, unit norm, sign chosen so the mean
shift projects positively). At inference, a forward hook on layer l adds alpha * v_l to the
layer's output hidden states, the residual stream, at every position (`SteeringHook`).
`HFSteeredModel` serves a local transformers causal LM behind the ChatModel protocol with that
hook on; `sweep` runs the layer and alpha sweeps of App. I. Defaults are the paper's:
Qwen2.5-7B-Instruct, layer 26, alpha 0.1.

Layers count from 1, as transformers' `output_hidden_states` does (entry 0 is the embedding
output): layer l is the output of the l-th decoder block, `model.model.layers[l - 1]`. With
this count the paper's sweep up to layer 28 of the 28-layer Qwen2.5-7B exists. For the last
layer the hook sees the block output before the final norm.

Needs the `hf` extra (transformers and torch), imported only when used: a missing package is
a ConfigError that says how to install it. Prompts are wrapped in the tokenizer's chat template
(as a generation turn) when it has one, so the activations are those the model computes when
it is asked to solve.
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from forkingpaths.benchmarks.creativebench.agents.solver import (
    render_solver_prompt,
    task_subset,
)
from forkingpaths.core.chat import ChatRequest, Completion, Message, ModelParams, Usage
from forkingpaths.core.errors import ConfigError, shown
from forkingpaths.core.records import ModelOptions
from forkingpaths.models.runtime import ModelRuntime

if TYPE_CHECKING:
    import torch

DEFAULT_MODEL = "Qwen/Qwen2.5-7B-Instruct"
DEFAULT_LAYER = 26
DEFAULT_ALPHA = 0.1
"""The paper's base model, injection layer and steering strength (§4.3 Setup)."""

DEFAULT_MAX_NEW_TOKENS = 2048
"""Completion length when a request sets no max_tokens."""

INSTALL_HINT = "pip install 'forkingpaths[hf]' (transformers and torch)"

VECTOR_FORMAT = "evorepe-pca1"
"""Marker of a saved creativity-vector file."""

_LAYER_PATHS = ("model.layers", "model.decoder.layers", "transformer.h", "gpt_neox.layers")
"""Where causal LMs of transformers keep their decoder blocks (Qwen2/Llama/Mistral first)."""


def require_hf() -> tuple[Any, Any]:
    """(torch, transformers), or a ConfigError saying how to install them."""
    try:
        # Deferred: torch and transformers are the optional `hf` extra, heavy to import.
        import torch
        import transformers
    except ImportError as exc:
        raise ConfigError(
            f"EvoRePE needs the hf extra ({exc.name or 'a package'} is missing): {INSTALL_HINT}"
        ) from None
    return torch, transformers


# ---- model anatomy ----


def decoder_layers(model: Any) -> Sequence[Any]:
    """The decoder blocks of a causal LM, in order."""
    torch, _ = require_hf()
    for path in _LAYER_PATHS:
        found: Any = model
        for part in path.split("."):
            found = getattr(found, part, None)
            if found is None:
                break
        if isinstance(found, torch.nn.ModuleList) and len(found) > 0:
            return found
    raise ConfigError(
        f"model: cannot find the decoder layers of {type(model).__name__} "
        f"(looked at {', '.join(_LAYER_PATHS)})"
    )


def layer_module(model: Any, layer: int) -> Any:
    """Decoder block whose output is layer `layer` (1-based, see the module docstring)."""
    layers = decoder_layers(model)
    if isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= len(layers):
        raise ConfigError(
            f"layer: expected an integer from 1 to {len(layers)} (this model's decoder layers), "
            f"got {shown(layer)}"
        )
    return layers[layer - 1]


def hidden_size(model: Any) -> int | None:
    """Width of the residual stream (None when the config does not say)."""
    config = getattr(model, "config", None)
    size = getattr(config, "hidden_size", None)
    return size if isinstance(size, int) else None


def _device_of(model: Any) -> Any:
    return next(model.parameters()).device


# ---- activations and the creativity vector ----


def format_prompt(tokenizer: Any, text: str, *, chat: bool = True) -> str:
    """`text` as one user turn of the tokenizer's chat template, opened for the answer; the
    text itself when `chat` is False or the tokenizer has no template."""
    if chat and getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
    return text


def _encode(tokenizer: Any, text: str, templated: bool, device: Any) -> dict[str, Any]:
    # A chat template writes its own special tokens; adding more would change the input.
    encoded = tokenizer(text, return_tensors="pt", add_special_tokens=not templated)
    return {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask")}


def capture_last_token(
    model: Any, tokenizer: Any, prompts: Sequence[str], layer: int, *, chat: bool = True
) -> torch.Tensor:
    """Last-token activations at the output of decoder layer `layer`, one row per prompt
    (float32, on the CPU). Prompts run one at a time, so no padding shifts the last token."""
    torch, _ = require_hf()
    if not prompts:
        raise ConfigError("prompts: expected at least one prompt, got none")
    module = layer_module(model, layer)
    rows: list[Any] = []

    def keep(_module: Any, _args: Any, output: Any) -> None:
        hidden = output[0] if isinstance(output, tuple) else output
        rows.append(hidden[:, -1, :].detach().to(device="cpu", dtype=torch.float32))

    templated = bool(chat and getattr(tokenizer, "chat_template", None))
    device = _device_of(model)
    handle = module.register_forward_hook(keep)
    try:
        with torch.no_grad():
            for prompt in prompts:
                text = format_prompt(tokenizer, prompt, chat=chat)
                model(**_encode(tokenizer, text, templated, device), use_cache=False)
    finally:
        handle.remove()
    return torch.cat(rows, dim=0)


def first_principal_component(shifts: torch.Tensor) -> torch.Tensor:
    """PCA_1 of the rows of `shifts` (N x d): the top right-singular vector of the centred
    matrix, unit norm, signed so that the mean shift projects positively.

    With one pair, or shifts that are all equal, the centred matrix is zero and has no
    principal direction; the normalised mean shift is returned instead.
    """
    torch, _ = require_hf()
    if shifts.ndim != 2 or shifts.shape[0] == 0:
        raise ConfigError(
            f"shifts: expected an N x d matrix with N >= 1, got shape {tuple(shifts.shape)}"
        )
    data = shifts.to(torch.float64)
    mean = data.mean(dim=0)
    centred = data - mean
    scale = float(torch.linalg.norm(data)) or 1.0
    if data.shape[0] < 2 or float(torch.linalg.norm(centred)) <= 1e-9 * scale:
        vector = mean
    else:
        _, _, vh = torch.linalg.svd(centred, full_matrices=False)
        vector = vh[0]
    norm = float(torch.linalg.norm(vector))
    if norm == 0.0:
        raise ConfigError(
            "pairs: the base and evolved prompts give identical activations; no direction "
            "to steer along"
        )
    vector = vector / norm
    if float(vector @ mean) < 0:
        vector = -vector
    return vector.to(torch.float32)


def creativity_vector(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    layer: int,
    *,
    chat: bool = True,
) -> torch.Tensor:
    """v_l = PCA_1 of h_l(x_evo) - h_l(x_base) over the (base, evolved) prompt pairs (§4.3)."""
    if not pairs:
        raise ConfigError("pairs: expected at least one (base, evolved) prompt pair, got none")
    base = capture_last_token(model, tokenizer, [b for b, _ in pairs], layer, chat=chat)
    evolved = capture_last_token(model, tokenizer, [e for _, e in pairs], layer, chat=chat)
    return first_principal_component(evolved - base)


def prompt_pairs(
    tasks: Sequence[Any], evolved_instruction: str, *, subset: str | None = None
) -> list[tuple[str, str]]:
    """The dataset D of §4.3 for an evolved instruction: per task, the solver prompt with the
    default instruction and with the evolved one (subset inferred from each task when None)."""
    return [
        (
            render_solver_prompt(subset or task_subset(task), task),
            render_solver_prompt(subset or task_subset(task), task, evolved_instruction),
        )
        for task in tasks
    ]


def save_vector(
    path: str | Path,
    vector: torch.Tensor,
    *,
    layer: int,
    model_name: str = "",
    pairs: int = 0,
) -> Path:
    """Write a creativity vector with what produced it (a `.pt` file)."""
    torch, _ = require_hf()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "format": VECTOR_FORMAT,
            "vector": vector.detach().to("cpu", torch.float32),
            "layer": layer,
            "model": model_name,
            "pairs": pairs,
        },
        target,
    )
    return target


def load_vector(path: str | Path) -> tuple[torch.Tensor, dict[str, Any]]:
    """(vector, metadata) of a file written by `save_vector` (a bare saved tensor also loads,
    with empty metadata); ConfigError naming the file otherwise."""
    torch, _ = require_hf()
    file = Path(path)
    try:
        data = torch.load(file, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ConfigError(f"vector file {file}: not found") from None
    except Exception as exc:  # torch raises many types for a file that is not its format
        raise ConfigError(f"vector file {file}: not a saved tensor ({exc})") from None
    if isinstance(data, torch.Tensor):
        vector, meta = data, {}
    elif isinstance(data, Mapping) and isinstance(data.get("vector"), torch.Tensor):
        vector = data["vector"]
        meta = {k: v for k, v in data.items() if k != "vector"}
    else:
        raise ConfigError(
            f"vector file {file}: expected a tensor or a dict with a 'vector' tensor "
            "(write it with evorepe.save_vector)"
        )
    if vector.ndim != 1 or vector.numel() == 0:
        raise ConfigError(
            f"vector file {file}: field 'vector': expected a 1-D tensor, "
            f"got shape {tuple(vector.shape)}"
        )
    return vector.to(torch.float32), meta


# ---- steering ----


class SteeringHook:
    """Context manager adding `alpha * vector` to the output hidden states of decoder layer
    `layer` (every position, prompt and generated tokens alike) while it is active; leaving
    it removes the hook and the model computes as before."""

    def __init__(self, model: Any, layer: int, vector: torch.Tensor, alpha: float) -> None:
        torch, _ = require_hf()
        self.module = layer_module(model, layer)
        flat = torch.as_tensor(vector).detach().flatten().to(torch.float32)
        width = hidden_size(model)
        if width is not None and flat.numel() != width:
            raise ConfigError(
                f"vector: has {flat.numel()} values but the model's hidden size is {width}"
            )
        if isinstance(alpha, bool) or not isinstance(alpha, int | float):
            raise ConfigError(f"alpha: expected a number, got {shown(alpha)}")
        self.layer = layer
        self.alpha = float(alpha)
        self.shift = self.alpha * flat
        self._cast: dict[tuple[Any, Any], Any] = {}
        self._handle: Any = None

    def __enter__(self) -> SteeringHook:
        if self._handle is not None:
            raise ConfigError("steering hook: already active (enter it once at a time)")
        self._handle = self.module.register_forward_hook(self._steer)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.remove()

    def remove(self) -> None:
        """Take the hook off (idempotent)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _steer(self, _module: Any, _args: Any, output: Any) -> Any:
        if isinstance(output, tuple):
            return (self._add(output[0]), *output[1:])
        return self._add(output)

    def _add(self, hidden: Any) -> Any:
        key = (hidden.dtype, hidden.device)
        if key not in self._cast:
            self._cast[key] = self.shift.to(device=hidden.device, dtype=hidden.dtype)
        return hidden + self._cast[key]


# ---- the steered chat model ----


class HFSteeredModel:
    """A ChatModel running a local transformers causal LM, optionally steered by EvoRePE.

    Messages go through the tokenizer's chat template (a plain `role: content` transcript when
    it has none). Sampling follows the request: temperature 0 decodes greedily; otherwise
    temperature, top_p (1.0 when unset) and top_k 0 (off), as App. B.2; `seed` seeds a forked
    RNG so the process's global RNG is left as it was. Generation runs in a worker thread
    (`asyncio.to_thread`), one request at a time per model. Cost is 0; tokens are counted by the
    tokenizer.

    `vector` (a tensor or a file from `save_vector`), `layer` and `alpha` set the steering; the
    name then carries them, so steered and unsteered answers are never mixed up in records.
    Pass `model` and `tokenizer` to serve objects already loaded (tests, notebooks); otherwise
    `model_name` (a hub id or a local directory) is loaded with `from_pretrained`.
    """

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL,
        *,
        vector: str | Path | torch.Tensor | None = None,
        layer: int = DEFAULT_LAYER,
        alpha: float = DEFAULT_ALPHA,
        device: str | None = None,
        dtype: str = "auto",
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        chat: bool = True,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        torch, _ = require_hf()
        if (model is None) != (tokenizer is None):
            raise ConfigError("model and tokenizer: pass both objects, or neither to load them")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise ConfigError(f"max_new_tokens: expected an integer, got {shown(max_new_tokens)}")
        if model is None:
            model, tokenizer = _load(model_name, dtype)
            target = device or ("cuda" if torch.cuda.is_available() else "cpu")
            model = model.to(target)
        elif device is not None:
            model = model.to(device)
        self.model_name = model_name
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.chat = chat
        self._lock = threading.Lock()
        self._steering: tuple[Any, int, float] | None = None
        if vector is not None:
            self.set_steering(vector, layer, alpha)

    @property
    def name(self) -> str:
        """`hf/<model>`, plus `+evorepe(layer=L,alpha=A)` while steered."""
        base = f"hf/{self.model_name}"
        if self._steering is None:
            return base
        _, layer, alpha = self._steering
        return f"{base}+evorepe(layer={layer},alpha={alpha:g})"

    @property
    def steering(self) -> tuple[Any, int, float] | None:
        """(vector, layer, alpha) while steered, else None."""
        return self._steering

    def set_steering(
        self,
        vector: str | Path | torch.Tensor,
        layer: int = DEFAULT_LAYER,
        alpha: float = DEFAULT_ALPHA,
    ) -> None:
        """Steer every later request along `vector` at `layer` with strength `alpha`."""
        tensor = load_vector(vector)[0] if isinstance(vector, str | Path) else vector
        SteeringHook(self.model, layer, tensor, alpha)  # validates layer, size and alpha
        self._steering = (tensor, layer, float(alpha))

    def steered(
        self,
        vector: str | Path | torch.Tensor,
        layer: int = DEFAULT_LAYER,
        alpha: float = DEFAULT_ALPHA,
    ) -> HFSteeredModel:
        """A view of this model steered along `vector`: the same weights, tokenizer and lock
        (one generation at a time across views, so a view's hook never reaches another view's
        generation); this model's own steering is left as it is."""
        view = copy.copy(self)  # shallow: shares model, tokenizer and _lock
        view.set_steering(vector, layer, alpha)
        return view

    def clear_steering(self) -> None:
        """Serve the unsteered model."""
        self._steering = None

    async def complete(
        self, messages: list[Message], params: ModelParams | None = None
    ) -> Completion:
        params = params or ModelParams()
        started = time.perf_counter()
        name = self.name
        text, prompt_tokens, completion_tokens, finish = await asyncio.to_thread(
            self.generate, messages, params
        )
        return Completion(
            text=text,
            model=name,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
            latency_s=time.perf_counter() - started,
            cost_usd=0.0,
            finish_reason=finish,
            request=ChatRequest(model=name, messages=messages, params=params),
        )

    def render(self, messages: list[Message]) -> tuple[str, bool]:
        """The model's input text for `messages`, and whether a chat template wrote it."""
        if self.chat and getattr(self.tokenizer, "chat_template", None):
            turns = [{"role": m.role, "content": m.content} for m in messages]
            text = self.tokenizer.apply_chat_template(
                turns, tokenize=False, add_generation_prompt=True
            )
            return text, True
        lines = [f"{m.role}: {m.content}" for m in messages]
        return "\n".join([*lines, "assistant:"]), False

    def generate(self, messages: list[Message], params: ModelParams) -> tuple[str, int, int, str]:
        """(text, prompt tokens, completion tokens, finish reason), synchronously."""
        torch, _ = require_hf()
        text, templated = self.render(messages)
        limit = params.max_tokens or self.max_new_tokens
        pad = self.tokenizer.pad_token_id
        options: dict[str, Any] = {
            "max_new_tokens": limit,
            "pad_token_id": pad if pad is not None else self.tokenizer.eos_token_id,
        }
        if params.temperature > 0:
            options.update(
                do_sample=True,
                temperature=params.temperature,
                top_p=params.top_p if params.top_p is not None else 1.0,
                top_k=0,
            )
        else:
            # Clear the model's own sampling defaults so greedy decoding raises no warning.
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with self._lock:
            steering = self._steering
            hook: AbstractContextManager[Any] = (
                SteeringHook(self.model, steering[1], steering[0], steering[2])
                if steering is not None
                else nullcontext()
            )
            device = _device_of(self.model)
            inputs = _encode(self.tokenizer, text, templated, device)
            # Fork the RNG of the device that samples, so a seed leaves no trace outside.
            devices = [device.index or 0] if device.type == "cuda" else []
            with torch.no_grad(), hook, torch.random.fork_rng(devices=devices):
                if params.seed is not None:
                    torch.manual_seed(params.seed)
                output = self.model.generate(**inputs, **options)
        prompt_length = inputs["input_ids"].shape[1]
        new = output[0, prompt_length:]
        eos = self.tokenizer.eos_token_id
        finish = "length" if len(new) >= limit and (eos is None or int(new[-1]) != eos) else "stop"
        answer = self.tokenizer.decode(new, skip_special_tokens=True)
        return answer, int(prompt_length), len(new), finish

    async def aclose(self) -> None:
        """Nothing to release but memory, which goes with the object."""


def _load(model_name: str, dtype: str) -> tuple[Any, Any]:
    _, transformers = require_hf()
    major = int(transformers.__version__.split(".")[0])
    # transformers 5 renamed torch_dtype to dtype; older versions ignore the new name.
    dtype_field = "dtype" if major >= 5 else "torch_dtype"
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_name)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            model_name, **{dtype_field: dtype}
        )
    except OSError as exc:
        raise ConfigError(
            f"model {model_name!r}: cannot load it ({exc}); give a local directory or a hub id "
            "already in the Hugging Face cache"
        ) from None
    return model, tokenizer


# ---- App. I sweeps ----


async def sweep(
    model: HFSteeredModel,
    pairs: Sequence[tuple[str, str]],
    evaluate: Callable[[HFSteeredModel], Awaitable[float | Mapping[str, float]]],
    *,
    layers: Sequence[int] = (DEFAULT_LAYER,),
    alphas: Sequence[float] = (DEFAULT_ALPHA,),
    baseline: bool = True,
) -> list[dict[str, Any]]:
    """Layer and alpha sweeps (App. I.2, I.3): for each layer, the creativity vector of
    `pairs` at that layer; for each alpha, `evaluate(model)` with that steering on.

    `evaluate` scores the steered model on an evaluation split: a creativity value or a
    mapping of metrics (creativity, quality, novelty...). Rows come back in order, the
    unsteered baseline first when `baseline` (layer None, alpha 0): `{"layer", "alpha", ...}`.
    Fix alpha and list layers for I.2; fix the layer and list alphas for I.3. The model's own
    steering is restored afterwards.
    """
    if not layers or not alphas:
        raise ConfigError(
            f"layers and alphas: expected at least one of each, got {list(layers)} and "
            f"{list(alphas)}"
        )
    saved = model.steering
    rows: list[dict[str, Any]] = []
    try:
        if baseline:
            model.clear_steering()
            rows.append({"layer": None, "alpha": 0.0, **_metrics(await evaluate(model))})
        for layer in layers:
            vector = await asyncio.to_thread(_vector_locked, model, pairs, layer)
            for alpha in alphas:
                model.set_steering(vector, layer, alpha)
                rows.append({"layer": layer, "alpha": alpha, **_metrics(await evaluate(model))})
    finally:
        if saved is None:
            model.clear_steering()
        else:
            model.set_steering(*saved)
    return rows


def _vector_locked(model: HFSteeredModel, pairs: Sequence[tuple[str, str]], layer: int) -> Any:
    # Extraction runs forward passes: keep them apart from any generation in flight.
    with model._lock:
        return creativity_vector(model.model, model.tokenizer, pairs, layer, chat=model.chat)


def _metrics(value: Any) -> dict[str, float]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"creativity": float(value)}
    if isinstance(value, Mapping):
        return {str(k): float(v) for k, v in value.items()}
    raise ConfigError(
        f"evaluate: expected a creativity value or a mapping of metrics, got {shown(value)}"
    )


def check_hf_model(name: str, options: ModelOptions) -> None:
    """`hf/...`: the model extras are EvoRePE's (the weights load only when the model is made)."""
    _steering_extras(options)


def _steering_extras(options: ModelOptions) -> dict[str, Any]:
    extra = options.params.extra
    unknown = sorted(k for k in extra if not k.startswith("evorepe_"))
    if unknown:
        raise ConfigError(
            f"hf models take model extras evorepe_vector, evorepe_layer, evorepe_alpha; "
            f"got {', '.join(unknown)}"
        )
    return extra


def make_hf_model(name: str, options: ModelOptions, runtime: ModelRuntime) -> HFSteeredModel:
    """Factory of `hf/<model id or path>` ids (the `hf` extra): a local transformers model,
    steered when the run's model extras name a vector (`--model-extra evorepe_vector=v.pt`,
    `evorepe_layer=26`, `evorepe_alpha=0.1`). The runtime's cache and limits do not apply:
    generation is local and steering state is not part of any request."""
    extra = _steering_extras(options)
    return HFSteeredModel(
        name,
        vector=extra.get("evorepe_vector"),
        layer=int(extra.get("evorepe_layer", DEFAULT_LAYER)),
        alpha=float(extra.get("evorepe_alpha", DEFAULT_ALPHA)),
    )
