"""Tests of EvoRePE on a tiny randomly initialised Qwen2-style model (no download): the steering
hook's exact shift and clean removal, the creativity vector as PCA_1, vector files, the steered
ChatModel and the App. I sweep."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from forkingpaths.benchmarks.creativebench.agents.solver import (  # noqa: E402
    default_instruction,
    render_solver_prompt,
)
from forkingpaths.benchmarks.creativebench.agents.steered import (  # noqa: E402
    file_digest,
    make_evorepe_solver,
)
from forkingpaths.benchmarks.creativebench.evorepe import (  # noqa: E402
    DEFAULT_ALPHA,
    DEFAULT_LAYER,
    HFSteeredModel,
    SteeringHook,
    capture_last_token,
    creativity_vector,
    first_principal_component,
    format_prompt,
    load_vector,
    prompt_pairs,
    save_vector,
    sweep,
)
from forkingpaths.core.chat import Message, ModelParams  # noqa: E402
from forkingpaths.core.errors import ConfigError  # noqa: E402
from forkingpaths.models.factory import RunParamsModel  # noqa: E402

HIDDEN = 32
LAYERS = 3
SPECIALS = ("<pad>", "<unk>", "<eos>")
CHAT_TEMPLATE = (
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}"
)

PAIRS = [
    ("Solve it plainly.", "Solve it in a way nobody expects."),
    ("Sort the list.", "Sort the list without comparisons."),
    ("Count the words.", "Count the words by arithmetic alone."),
    ("Find the path.", "Find the path by flooding the grid."),
]


def char_tokenizer() -> Any:
    """A character-level fast tokenizer over printable ASCII, with pad/unk/eos and a chat
    template (built in memory: nothing is downloaded)."""
    chars = [c for c in string.printable if c not in "\x0b\x0c"]
    vocab = {token: i for i, token in enumerate([*SPECIALS, *chars])}
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex("."), behavior="isolated")
    core.decoder = tokenizers.decoders.Fuse()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", eos_token="<eos>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Any]:
    tokenizer = char_tokenizer()
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        intermediate_size=64,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config).eval()
    torch.random.set_rng_state(generator_state)
    return model, tokenizer


def layer_outputs(model: Any, tokenizer: Any, text: str) -> list[Any]:
    """Full output hidden states of every decoder layer for one input."""
    outputs: list[Any] = []
    handles = [
        layer.register_forward_hook(
            lambda _m, _a, out: outputs.append(
                (out[0] if isinstance(out, tuple) else out).detach().clone()
            )
        )
        for layer in model.model.layers
    ]
    try:
        with torch.no_grad():
            model(**tokenizer(text, return_tensors="pt"), use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    return outputs


def installed_hooks(model: Any) -> list[list[int]]:
    """Ids of the forward hooks on each decoder layer (transformers may keep its own there)."""
    return [sorted(layer._forward_hooks) for layer in model.model.layers]


def greedy_reply(model: Any, tokenizer: Any, text: str, max_new_tokens: int) -> str:
    """What greedy decoding of `text` continues with, decoded without special tokens."""
    inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        output = model.generate(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["attention_mask"],
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
        )
    return tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)


def unit(n: int, seed: int) -> Any:
    generator = torch.Generator().manual_seed(seed)
    vector = torch.randn(n, generator=generator)
    return vector / vector.norm()


# ---- the hook ----


def test_the_hook_shifts_the_chosen_layer_by_exactly_alpha_v(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    vector, alpha, layer = unit(HIDDEN, 1), 0.7, 2
    plain = layer_outputs(model, tokenizer, "def f(x): return x")
    with SteeringHook(model, layer, vector, alpha):
        steered = layer_outputs(model, tokenizer, "def f(x): return x")
    # Layer 2 is the second decoder block: the block before it is untouched...
    assert torch.equal(steered[0], plain[0])
    # ...its output moves by alpha * v at every position...
    assert torch.allclose(steered[1] - plain[1], (alpha * vector).expand_as(plain[1]), atol=1e-6)
    # ...and the shift propagates to the blocks after it.
    assert not torch.allclose(steered[2], plain[2])


def test_removing_the_hook_restores_the_original_output(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    inputs = tokenizer("print(1)", return_tensors="pt")
    hooks = installed_hooks(model)
    with torch.no_grad():
        before = model(**inputs).logits
        with SteeringHook(model, 3, unit(HIDDEN, 2), 5.0):
            during = model(**inputs).logits
        after = model(**inputs).logits
    assert not torch.allclose(before, during)
    assert torch.equal(before, after)
    assert installed_hooks(model) == hooks


def test_capture_sees_the_steered_residual_stream(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    vector, alpha = unit(HIDDEN, 3), DEFAULT_ALPHA
    plain = capture_last_token(model, tokenizer, ["a", "bcd"], 1)
    with SteeringHook(model, 1, vector, alpha):
        steered = capture_last_token(model, tokenizer, ["a", "bcd"], 1)
    assert torch.allclose(steered - plain, (alpha * vector).expand_as(plain), atol=1e-6)


def test_bad_layers_and_sizes_are_refused(tiny: tuple[Any, Any]) -> None:
    model, _ = tiny
    with pytest.raises(ConfigError, match="layer: expected an integer from 1 to 3"):
        SteeringHook(model, DEFAULT_LAYER, unit(HIDDEN, 0), 0.1)
    with pytest.raises(
        ConfigError,
        match=r"layer: expected an integer from 1 to 3 \(this model.s decoder layers\), got 0",
    ):
        SteeringHook(model, 0, unit(HIDDEN, 0), 0.1)
    with pytest.raises(ConfigError, match="has 8 values but the model's hidden size is 32"):
        SteeringHook(model, 1, unit(8, 0), 0.1)


# ---- activations and the vector ----


def test_capture_matches_transformers_hidden_states(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    prompts = ["Sort the list.", "x"]
    captured = capture_last_token(model, tokenizer, prompts, 2)
    assert captured.shape == (2, HIDDEN) and captured.dtype == torch.float32
    for row, prompt in zip(captured, prompts, strict=True):
        text = format_prompt(tokenizer, prompt)
        assert text == f"<user>{prompt}\n<assistant>"
        encoded = tokenizer(text, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            states = model(**encoded, output_hidden_states=True).hidden_states
        # hidden_states[0] is the embedding output; entry 2 is the output of block 2.
        assert torch.allclose(row, states[2][0, -1], atol=1e-6)


def test_the_vector_is_the_unit_first_principal_component() -> None:
    generator = torch.Generator().manual_seed(5)
    direction = unit(16, 7)
    loadings = torch.tensor([3.0, -1.0, 2.5, -2.0, 4.0, 0.5])
    noise = 0.01 * torch.randn(6, 16, generator=generator)
    shifts = loadings[:, None] * direction[None, :] + noise + 0.2 * unit(16, 9)
    vector = first_principal_component(shifts)
    assert torch.isclose(vector.norm(), torch.tensor(1.0), atol=1e-6)
    # The top right-singular vector of the centred matrix, up to sign...
    centred = (shifts - shifts.mean(0)).double()
    top = torch.linalg.svd(centred, full_matrices=False).Vh[0].float()
    assert torch.allclose(vector.abs(), top.abs(), atol=1e-5)
    assert abs(float(vector @ direction)) > 0.99
    # ...signed so that the mean shift projects positively.
    assert float(vector @ shifts.mean(0)) > 0
    assert torch.allclose(first_principal_component(-shifts), -vector, atol=1e-5)


def test_one_pair_gives_its_normalised_shift() -> None:
    shift = torch.tensor([[3.0, 4.0]])
    assert torch.allclose(first_principal_component(shift), torch.tensor([0.6, 0.8]))


def test_identical_activations_have_no_direction() -> None:
    with pytest.raises(ConfigError, match="identical activations"):
        first_principal_component(torch.zeros(3, 4))


def test_creativity_vector_is_pca1_of_evolved_minus_base(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    vector = creativity_vector(model, tokenizer, PAIRS, 2)
    base = capture_last_token(model, tokenizer, [b for b, _ in PAIRS], 2)
    evolved = capture_last_token(model, tokenizer, [e for _, e in PAIRS], 2)
    assert torch.allclose(vector, first_principal_component(evolved - base), atol=1e-6)
    assert torch.isclose(vector.norm(), torch.tensor(1.0), atol=1e-5)
    with pytest.raises(ConfigError, match="pairs: expected at least one"):
        creativity_vector(model, tokenizer, [], 2)


def test_prompt_pairs_put_the_evolved_instruction_in_place_of_the_default() -> None:
    task = {"id": "combo-1", "question": "Fuse two parsers.", "language": "python"}
    ((base, evolved),) = prompt_pairs([task], "Think sideways.")
    assert base == render_solver_prompt("combo", task)
    assert base.startswith(default_instruction("combo"))
    assert evolved == render_solver_prompt("combo", task, "Think sideways.")


def test_vector_files_round_trip_and_bad_files_name_themselves(tmp_path: Path) -> None:
    vector = unit(HIDDEN, 4)
    path = save_vector(tmp_path / "v.pt", vector, layer=2, model_name="tiny", pairs=4)
    loaded, meta = load_vector(path)
    assert torch.equal(loaded, vector)
    assert meta == {"format": "evorepe-pca1", "layer": 2, "model": "tiny", "pairs": 4}
    (tmp_path / "bad.pt").write_text("not a tensor")
    with pytest.raises(ConfigError, match=f"vector file {tmp_path / 'bad.pt'}: not a saved"):
        load_vector(tmp_path / "bad.pt")
    with pytest.raises(ConfigError, match="not found"):
        load_vector(tmp_path / "missing.pt")


# ---- the steered chat model ----


async def test_generation_runs_with_the_hook_and_names_the_steering(
    tiny: tuple[Any, Any], tmp_path: Path
) -> None:
    model, tokenizer = tiny
    path = save_vector(tmp_path / "v.pt", unit(HIDDEN, 6), layer=2)
    chat = HFSteeredModel("tiny", model=model, tokenizer=tokenizer, vector=path, layer=2, alpha=3)
    hooks = installed_hooks(model)
    assert chat.steering is not None and chat.steering[1:] == (2, 3.0)
    assert torch.equal(chat.steering[0], unit(HIDDEN, 6))
    assert chat.name == "hf/tiny+evorepe(layer=2,alpha=3)"
    messages = [Message(role="user", content="Write a function.")]
    steered = await chat.complete(messages, ModelParams(max_tokens=6))
    # The reply is greedy decoding of the templated prompt with alpha * v added at layer 2.
    with SteeringHook(model, 2, unit(HIDDEN, 6), 3):
        expected = greedy_reply(model, tokenizer, "<user>Write a function.\n<assistant>", 6)
    assert steered.text == expected
    assert steered.model == "hf/tiny+evorepe(layer=2,alpha=3)"
    assert steered.usage.completion_tokens <= 6
    assert steered.usage.prompt_tokens == len("<user>Write a function.\n<assistant>")
    assert steered.finish_reason in ("stop", "length")
    assert installed_hooks(model) == hooks

    chat.clear_steering()
    plain = await chat.complete(messages, ModelParams(max_tokens=6))
    assert plain.model == "hf/tiny"
    # Greedy decoding is deterministic.
    again = await chat.complete(messages, ModelParams(max_tokens=6))
    assert again.text == plain.text


async def test_sampling_with_a_seed_repeats_and_leaves_the_global_rng(
    tiny: tuple[Any, Any],
) -> None:
    model, tokenizer = tiny
    chat = HFSteeredModel("tiny", model=model, tokenizer=tokenizer)
    params = ModelParams(temperature=1.0, max_tokens=8, seed=11)
    state = torch.random.get_rng_state()
    first = await chat.complete([Message(role="user", content="hi")], params)
    second = await chat.complete([Message(role="user", content="hi")], params)
    assert first.text == second.text
    assert torch.equal(torch.random.get_rng_state(), state)


def test_model_and_tokenizer_come_together(tiny: tuple[Any, Any]) -> None:
    with pytest.raises(ConfigError, match="pass both"):
        HFSteeredModel("tiny", model=tiny[0])


def test_a_steered_view_shares_the_weights_and_lock_and_leaves_the_model_alone(
    tiny: tuple[Any, Any],
) -> None:
    model, tokenizer = tiny
    chat = HFSteeredModel("tiny", model=model, tokenizer=tokenizer)
    view = chat.steered(unit(HIDDEN, 6), 2, 3.0)
    assert view.model is chat.model and view.tokenizer is chat.tokenizer
    assert view._lock is chat._lock  # one generation at a time across views
    assert chat.steering is None and chat.name == "hf/tiny"
    assert view.name == "hf/tiny+evorepe(layer=2,alpha=3)"


def test_the_evorepe_solver_steers_its_own_view_at_the_files_layer(
    tiny: tuple[Any, Any], tmp_path: Path
) -> None:
    model, tokenizer = tiny
    path = save_vector(tmp_path / "v.pt", unit(HIDDEN, 6), layer=2)
    chat = HFSteeredModel("tiny", model=model, tokenizer=tokenizer)
    run_model = RunParamsModel(chat, ModelParams(temperature=0.1))
    solver = make_evorepe_solver(
        model=run_model, evorepe_vector=str(path), evorepe_sha256=file_digest(path)
    )
    assert isinstance(solver.model, RunParamsModel)
    assert solver.model.defaults == ModelParams(temperature=0.1)
    steered = solver.model.model
    assert isinstance(steered, HFSteeredModel) and steered.steering is not None
    assert steered.steering[1:] == (2, DEFAULT_ALPHA)
    assert chat.steering is None  # a judge played by the run's model stays unsteered
    assert solver.instruction is None
    with pytest.raises(ConfigError, match=r"evorepe_sha256: evorepe_vector .* another vector"):
        make_evorepe_solver(model=run_model, evorepe_vector=str(path), evorepe_sha256="0" * 64)


# ---- App. I sweep ----


async def test_sweep_covers_the_grid_and_restores_the_steering(tiny: tuple[Any, Any]) -> None:
    model, tokenizer = tiny
    chat = HFSteeredModel("tiny", model=model, tokenizer=tokenizer)
    seen: list[str] = []

    async def evaluate(steered: HFSteeredModel) -> dict[str, float]:
        seen.append(steered.name)
        reply = await steered.complete(
            [Message(role="user", content="go")], ModelParams(max_tokens=2)
        )
        return {"creativity": float(len(reply.text)), "quality": 1.0}

    rows = await sweep(chat, PAIRS, evaluate, layers=(1, 3), alphas=(0.05, 0.2))
    assert [(r["layer"], r["alpha"]) for r in rows] == [
        (None, 0.0),
        (1, 0.05),
        (1, 0.2),
        (3, 0.05),
        (3, 0.2),
    ]
    assert all(r["quality"] == 1.0 for r in rows)
    assert seen[0] == "hf/tiny" and seen[1] == "hf/tiny+evorepe(layer=1,alpha=0.05)"
    assert chat.steering is None

    async def scalar(steered: HFSteeredModel) -> float:
        return 0.5

    chat.set_steering(unit(HIDDEN, 8), 2, 0.1)
    rows = await sweep(chat, PAIRS, scalar, baseline=False, layers=(2,))
    assert rows == [{"layer": 2, "alpha": DEFAULT_ALPHA, "creativity": 0.5}]
    assert chat.steering is not None and chat.steering[1:] == (2, 0.1)
