"""Tests of the CreativeBench solvers: code extraction, the App. M/N prompts, the vanilla,
reference and evolved-prompt solvers, and the scripted `creative-solver` policy."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.creativebench import evolve_prompts
from forkingpaths.benchmarks.creativebench.agents import solver_prompts
from forkingpaths.benchmarks.creativebench.agents.scripted import (
    MUTATION_HINTS,
    STUB_MESSAGE,
    CreativeSolverPolicy,
    misses,
    stub_for,
)
from forkingpaths.benchmarks.creativebench.agents.solver import (
    THOUGHT_LIMIT,
    CreativeSolver,
    ReferenceSolver,
    extract_code,
    make_prompt_solver,
    make_reference,
    make_vanilla,
    read_prompt_file,
    render_solver_prompt,
    task_subset,
)
from forkingpaths.benchmarks.creativebench.tasks import load_combo, load_explore
from forkingpaths.core.benchmark import Instance
from forkingpaths.core.chat import Message, ModelParams
from forkingpaths.core.env import Observation
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel

INSTANCE = Instance(id="t", split="test")

EXPLORE_TASK: dict[str, Any] = {
    "id": "runs-L2",
    "problem_id": "runs",
    "level": 2,
    "language": "python",
    "difficulty": "easy",
    "question": "Return the length of the longest run of equal neighbours in a list.",
    "function_signature": "def longest_run(values: list[int]) -> int:",
    "constraints": ["Do not use any for loop.", "Do not call max()."],
    "constraints_detail": [
        {
            "constraint": "Do not use any for loop.",
            "blocked_technique": "for loop",
            "expected_impact": "forces another traversal",
            "verification_hint": "no For node",
        },
        {
            "constraint": "Do not call max().",
            "blocked_technique": "max",
            "expected_impact": "forces a manual comparison",
            "verification_hint": "no call to max",
        },
    ],
    "test_code": "def test():\n    assert longest_run([1, 1, 2]) == 2\n",
    "reference_solution": "def longest_run(values):\n    return 2\n",
}

COMBO_TASK: dict[str, Any] = {
    "id": "combo-3",
    "question": "Parse 'a-b' edge strings into a graph and return its connected components.",
    "canonical_solution": "def components(edges):\n    return []\n",
    "demo_test_func": "",
    "full_test_func": "def test():\n    assert components([]) == []\n",
    "language": "python",
    "difficulty": "medium",
}

LINE_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)


def observation(subset: str, task: dict[str, Any], override: str | None = None) -> Observation:
    data: dict[str, Any] = {"subset": subset, "task": task}
    if override is not None:
        data["prompt_override"] = override
    return Observation(text="(rendered by the benchmark)", data=data)


def scripted() -> ScriptedModel:
    return ScriptedModel("scripted/creative-solver", CreativeSolverPolicy(), ModelRuntime())


# ---- extract_code ----


def test_extract_code_takes_the_first_fenced_block() -> None:
    reply = "Plan first.\n```python\ndef f():\n    return 1\n```\nthen\n```python\nx = 2\n```"
    assert extract_code(reply) == "def f():\n    return 1\n"


def test_extract_code_without_a_block_takes_the_whole_reply() -> None:
    assert extract_code("  def f():\n    return 1\n  ") == "def f():\n    return 1"


def test_extract_code_reads_a_block_cut_off_by_the_token_limit() -> None:
    assert extract_code("```python\ndef f():\n    return 1") == "def f():\n    return 1\n"


def test_extract_code_skips_code_sketched_while_thinking() -> None:
    reply = "<think>\n```python\nwrong = 1\n```\n</think>\n```py\nright = 2\n```"
    assert extract_code(reply) == "right = 2\n"


def test_extract_code_drops_a_closing_fence_glued_to_the_last_line() -> None:
    assert extract_code("```python\nx = 1```\n") == "x = 1\n"


def test_extract_code_ignores_a_fence_mentioned_mid_sentence() -> None:
    reply = 'Wrap it in "```python" as asked.\n```\ny = 3\n```'
    assert extract_code(reply) == "y = 3\n"


# ---- prompts ----


def test_combo_prompt_holds_the_instruction_the_problem_and_the_format() -> None:
    text = render_solver_prompt("combo", COMBO_TASK)
    assert text.startswith(solver_prompts.COMBO_INSTRUCTION)
    assert COMBO_TASK["question"] in text
    assert "exactly one Markdown code block tagged python" in text
    assert not LINE_FENCE.search(text)


def test_explore_prompt_numbers_the_stacked_constraints_and_gives_the_signature() -> None:
    text = render_solver_prompt("explore", EXPLORE_TASK)
    assert text.startswith(solver_prompts.EXPLORE_INSTRUCTION)
    assert EXPLORE_TASK["function_signature"] in text
    assert "1. Do not use any for loop.\n2. Do not call max()." in text
    assert '"Approach:"' in text
    assert not LINE_FENCE.search(text)


LEVEL0_TASK = {**EXPLORE_TASK, "id": "runs-L0", "level": 0, "constraints": [],
               "constraints_detail": []}  # fmt: skip

EXPLORATORY_WORDING = ("off the table", "another one", "unusual", "creativ", "invent",
                       "different", "alternative", "Approach:")  # fmt: skip


def test_explore_level_zero_gets_a_plain_baseline_prompt() -> None:
    """App. A / Table 19: the baseline is the model's default behaviour from a plain prompt."""
    text = render_solver_prompt("explore", LEVEL0_TASK)
    assert text.startswith("You are an expert Python programmer.")
    assert EXPLORE_TASK["question"] in text and EXPLORE_TASK["function_signature"] in text
    assert "exactly one Markdown code block tagged python" in text
    for words in EXPLORATORY_WORDING:
        assert words.lower() not in text.lower(), words
    assert solver_prompts.EXPLORE_INSTRUCTION not in text
    assert not LINE_FENCE.search(text)
    # The constrained levels keep the exploratory instruction.
    constrained = render_solver_prompt("explore", EXPLORE_TASK)
    assert constrained.startswith(solver_prompts.EXPLORE_INSTRUCTION)
    assert "off the table" in constrained


async def test_level_zero_ignores_evolved_and_overriding_instructions() -> None:
    model = FakeChatModel(["```python\npass\n```"])
    solver = CreativeSolver(model, instruction="From the file.")
    await solver.act(observation("explore", LEVEL0_TASK, override="From the benchmark."))
    await solver.act(observation("explore", EXPLORE_TASK))
    baseline, constrained = (request[0][0].content for request in model.requests)
    assert baseline == render_solver_prompt("explore", LEVEL0_TASK)
    assert constrained.startswith("From the file.")


def test_combo_answer_format_asks_for_no_comments() -> None:
    """App. M (Table 20): "Do not include any explanations, comments, tests, or extra text"."""
    text = render_solver_prompt("combo", COMBO_TASK)
    assert "no comments" in text and "no tests" in text and "no explanations" in text


def test_explore_constraints_fall_back_to_the_detail_items() -> None:
    task = {**EXPLORE_TASK, "constraints": []}
    assert "2. Do not call max()." in render_solver_prompt("explore", task)


def test_an_override_replaces_only_the_instruction() -> None:
    text = render_solver_prompt("explore", EXPLORE_TASK, "Be bold but correct.")
    assert text.startswith("Be bold but correct.\n\n## Problem")
    assert solver_prompts.EXPLORE_INSTRUCTION not in text
    assert EXPLORE_TASK["function_signature"] in text


def test_bad_subset_and_missing_question_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="subset: expected one of explore, combo"):
        render_solver_prompt("fusion", COMBO_TASK)
    with pytest.raises(ConfigError, match="task combo-3: field 'question'"):
        render_solver_prompt("combo", {**COMBO_TASK, "question": ""})


def test_task_subset_tells_explore_rows_from_combo_rows() -> None:
    assert task_subset(EXPLORE_TASK) == "explore"
    assert task_subset(COMBO_TASK) == "combo"


# ---- vanilla ----


async def test_vanilla_sends_the_prompt_and_returns_code_thought_and_call() -> None:
    model = FakeChatModel(["Here it is:\n```python\ndef components(edges):\n    return []\n```"])
    solver = make_vanilla(benchmark=None, model=model)
    assert (solver.model, solver.instruction, solver.params, solver.seed) == (
        model,
        None,
        ModelParams(),
        None,
    )
    solver.reset(INSTANCE, 0)
    assert solver.seed == 0
    decision = await solver.act(observation("combo", COMBO_TASK))
    assert decision.action == "def components(edges):\n    return []\n"
    assert decision.thought == model.replies[0]
    assert [c.purpose for c in decision.calls] == ["solve"]
    assert decision.calls[0].response == model.replies[0]
    ((messages, params),) = model.requests
    assert [m.role for m in messages] == ["user"]
    assert messages[0].content == render_solver_prompt("combo", COMBO_TASK)
    # Only the episode seed is set by the solver: the run's parameters apply to the rest.
    assert params is not None and params.model_fields_set == {"seed"} and params.seed == 0


async def test_each_call_carries_the_episode_seed() -> None:
    model = FakeChatModel(["```python\npass\n```"])
    solver = CreativeSolver(model, params=ModelParams(max_tokens=50))
    for seed in (42, 43, 44):
        solver.reset(INSTANCE, seed)
        await solver.act(observation("combo", COMBO_TASK))
    sent = [params for _, params in model.requests]
    assert [p.seed for p in sent if p is not None] == [42, 43, 44]
    assert all(p is not None and p.max_tokens == 50 for p in sent)


async def test_prompt_override_from_the_observation_wins() -> None:
    model = FakeChatModel(["```python\npass\n```"])
    solver = CreativeSolver(model, instruction="From the file.")
    await solver.act(observation("explore", EXPLORE_TASK, override="From the benchmark."))
    content = model.requests[0][0][0].content
    assert content.startswith("From the benchmark.")
    assert "From the file." not in content


async def test_a_long_reply_is_kept_whole_as_code_and_cut_as_thought() -> None:
    body = "x = 1\n" * 2000
    model = FakeChatModel([f"```python\n{body}```"])
    decision = await CreativeSolver(model).act(observation("combo", COMBO_TASK))
    assert decision.action == body
    assert len(decision.thought) < THOUGHT_LIMIT + 100
    assert "more characters]" in decision.thought


async def test_a_hand_made_observation_is_sent_as_its_text() -> None:
    model = FakeChatModel(["done"])
    decision = await CreativeSolver(model).act(Observation(text="Solve this."))
    assert model.requests[0][0] == [Message(role="user", content="Solve this.")]
    assert decision.action == "done"


def test_vanilla_without_a_model_says_how_to_give_one() -> None:
    with pytest.raises(ConfigError, match="agent 'vanilla' needs a model: pass --model"):
        make_vanilla(benchmark=None, model=None)


# ---- reference ----


@pytest.mark.parametrize(
    ("subset", "task", "field"),
    [("explore", EXPLORE_TASK, "reference_solution"), ("combo", COMBO_TASK, "canonical_solution")],
)
async def test_reference_returns_the_tasks_solution(
    subset: str, task: dict[str, Any], field: str
) -> None:
    solver = make_reference(benchmark=None)
    assert type(solver) is ReferenceSolver and solver.state() == {}
    decision = await solver.act(observation(subset, task))
    assert decision.action == task[field]
    assert decision.thought == f"reference: the task's {field}"
    assert decision.calls == []


async def test_reference_without_a_solution_names_task_and_field() -> None:
    with pytest.raises(ConfigError, match="task combo-3: field 'canonical_solution'"):
        await ReferenceSolver().act(observation("combo", {**COMBO_TASK, "canonical_solution": ""}))


# ---- evolved prompt ----


async def test_prompt_solver_uses_the_evolved_instruction(tmp_path: Path) -> None:
    path = tmp_path / "island.json"
    path.write_text(json.dumps({"prompt": "Evolved words.", "method": "island", "score": 0.4}))
    model = FakeChatModel(["```python\npass\n```"])
    solver = make_prompt_solver(benchmark=None, model=model, prompt_file=str(path))
    await solver.act(observation("combo", COMBO_TASK))
    assert model.requests[0][0][0].content.startswith("Evolved words.\n\n## Problem")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"method": "gepa"}', "field 'prompt': expected non-empty text, got null"),
        ('{"prompt": "  "}', "field 'prompt'"),
    ],
)
def test_unreadable_prompt_files_are_refused_naming_the_file(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "evolved.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=re.escape(f"prompt_file {path}: ")) as raised:
        read_prompt_file(path)
    assert message in str(raised.value)


def test_prompt_solver_needs_a_file() -> None:
    with pytest.raises(ConfigError, match="prompt_file"):
        make_prompt_solver(benchmark=None, model=FakeChatModel(["x"]), prompt_file="")


# ---- scripted policy ----


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


async def test_scripted_explore_answer_is_a_stub_with_the_signature() -> None:
    decision = await make_vanilla(benchmark=None, model=scripted()).act(
        observation("explore", EXPLORE_TASK)
    )
    assert decision.action.startswith("def longest_run(values: list[int]) -> int:\n")
    assert "Approach:" in decision.thought
    # The program runs the task's tests: the stub raises, as a RUNTIME_ERROR verdict expects.
    done = run_python(decision.action + "\n" + EXPLORE_TASK["test_code"] + "test()\n")
    assert done.returncode != 0
    assert "NotImplementedError" in done.stderr and STUB_MESSAGE in done.stderr


async def test_scripted_combo_answer_without_signature_raises_on_import() -> None:
    decision = await make_vanilla(benchmark=None, model=scripted()).act(
        observation("combo", COMBO_TASK)
    )
    assert decision.action.strip() == f'raise NotImplementedError("{STUB_MESSAGE}")'
    done = run_python(decision.action)
    assert done.returncode != 0 and "NotImplementedError" in done.stderr


def test_scripted_policy_never_echoes_a_code_block_of_the_prompt() -> None:
    prompt = "Fix this:\n```python\ndef f():\n    return 41\n```\n"
    reply = CreativeSolverPolicy().respond([Message(role="user", content=prompt)], ModelParams())
    assert extract_code(reply) == f'def f():\n    raise NotImplementedError("{STUB_MESSAGE}")\n'


def ask(policy: CreativeSolverPolicy, prompt: str, seed: int) -> str:
    reply = policy.respond([Message(role="user", content=prompt)], ModelParams(seed=seed))
    return extract_code(reply)


def test_scripted_policy_answers_a_builtin_task_with_its_reference_solution() -> None:
    policy = CreativeSolverPolicy()
    (combo,) = [t for t in load_combo()[0] if t.id == "combo-01"]
    prompt = render_solver_prompt("combo", combo)
    # The question shows the signature as a bare header in a fenced block: no program.
    assert "```python\ndef flag_run_anomalies(" in prompt
    assert ask(policy, prompt, 42) == combo.canonical_solution.rstrip() + "\n"
    # Seeds 43 and 50 are the misses of combo-01 among 42-51 (`misses`): the stub, which
    # parses and raises, with the question's signature.
    assert [seed for seed in range(42, 52) if misses("combo-01", seed)] == [43, 50]
    stub = ask(policy, prompt, 43)
    assert stub.startswith("def flag_run_anomalies(runs: list[tuple[float, int]], window: int")
    assert STUB_MESSAGE in stub
    explore = {t.id: t for t in load_explore()[0]}
    for level in ("run-length-encode-L0", "run-length-encode-L2"):
        task = explore[level]
        for instruction in (None, "Be bold."):
            prompt = render_solver_prompt("explore", task, instruction)
            assert ask(policy, prompt, 42) == task.reference_solution.rstrip() + "\n"


def test_scripted_policy_answers_a_program_that_parses_to_every_builtin_prompt() -> None:
    policy = CreativeSolverPolicy()
    prompts = [render_solver_prompt("combo", t) for t in load_combo()[0]]
    prompts += [render_solver_prompt("explore", t) for t in load_explore()[0]]
    for prompt in prompts:
        for seed in range(42, 52):
            compile(ask(policy, prompt, seed), "<answer>", "exec")


def test_stub_reads_a_signature_spread_over_lines() -> None:
    prompt = (
        "Write it.\n    def merge(\n        a: list[int],\n        b: list[int],\n"
        "    ) -> list[int]\n"
    )
    stub = stub_for(prompt)
    assert stub.startswith("def merge(\n        a: list[int],")
    compile(stub, "<stub>", "exec")


def test_scripted_policy_rewrites_an_evolution_prompt_deterministically() -> None:
    prompt = (
        f"{evolve_prompts.MUTATION_HEADING}\n\n{evolve_prompts.CURRENT_OPEN}\nBe clever."
        f"\n{evolve_prompts.CURRENT_CLOSE}\n"
    )
    policy = CreativeSolverPolicy()
    first = policy.respond([Message(role="user", content=prompt)], ModelParams())
    assert first == policy.respond([Message(role="user", content=prompt)], ModelParams())
    inner = first.removeprefix(evolve_prompts.NEW_OPEN).removesuffix(evolve_prompts.NEW_CLOSE)
    lines = inner.strip().splitlines()
    assert lines[0] == "Be clever." and lines[1] in MUTATION_HINTS


def test_scripted_rewrite_adds_a_hint_the_instruction_lacks() -> None:
    current = "\n".join(MUTATION_HINTS[:-1])
    prompt = (
        f"{evolve_prompts.REFLECTION_HEADING}\n{evolve_prompts.CURRENT_OPEN}\n{current}\n"
        f"{evolve_prompts.CURRENT_CLOSE}"
    )
    reply = CreativeSolverPolicy().respond([Message(role="user", content=prompt)], ModelParams())
    assert reply.strip().endswith(MUTATION_HINTS[-1] + "\n" + evolve_prompts.NEW_CLOSE)
