"""Tests of the evolutionary baselines: island search (elitism, ring migration, monotone best,
deduplication, prompt file) and GEPA through the `gepa` package, with scripted models and a
deterministic fitness."""

from __future__ import annotations

import inspect
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.doubles import FakeChatModel, run_cli

from forkingpaths.benchmarks.creativebench import evolve_prompts
from forkingpaths.benchmarks.creativebench.agents.scripted import CreativeSolverPolicy
from forkingpaths.benchmarks.creativebench.agents.solver import (
    default_instruction,
    read_prompt_file,
)
from forkingpaths.benchmarks.creativebench.benchmark import CreativeBenchmark
from forkingpaths.benchmarks.creativebench.evolve import (
    CREATIVITY_MAX,
    Candidate,
    EvolutionResult,
    _migrate,
    gepa_search,
    island_search,
    read_instruction,
)
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import ScriptedModel

TASKS: list[dict[str, Any]] = [
    {
        "id": f"runs-L{level}",
        "problem_id": "runs",
        "level": level,
        "question": f"Count runs in a list, variant {level}.",
        "function_signature": "def runs(values):",
        "constraints": [f"Do not use construct {i}." for i in range(level)],
    }
    for level in (1, 2, 3)
]

COMBO_TASKS: list[dict[str, Any]] = [
    {"id": "combo-1", "question": "Fuse a parser and a graph search.", "canonical_solution": ""}
]


class WordCount:
    """Fitness = distinct words of the prompt (deterministic); counts calls per prompt."""

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.calls: Counter[str] = Counter()

    async def __call__(self, prompt: str) -> float:
        self.calls[prompt] += 1
        return len(set(prompt.lower().split())) * self.scale


def scripted() -> ScriptedModel:
    return ScriptedModel("scripted/creative-solver", CreativeSolverPolicy(), ModelRuntime())


def events(result: EvolutionResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.history if e["event"] == kind]


# ---- island search ----


async def test_island_search_improves_and_its_best_never_decreases() -> None:
    fitness = WordCount()
    result = await island_search(scripted(), TASKS, fitness, generations=4)
    assert result.method == "island"
    assert result.seed_prompt == default_instruction("explore")
    assert result.score > result.seed_score
    assert result.score == max(e["score"] for e in events(result, "evaluated"))
    assert result.score == await fitness(result.prompt)
    bests = [e["best_score"] for e in events(result, "generation")]
    assert len(bests) == 4 and bests == sorted(bests) and bests[-1] == result.score
    assert {c.purpose for c in result.calls} == {"mutate"}
    # 2 islands x 4 children x 4 generations mutation calls.
    assert len(result.calls) == 32


async def test_elitism_keeps_each_islands_best() -> None:
    result = await island_search(scripted(), TASKS, WordCount(), islands=3, generations=4)
    per_island = list(zip(*(e["island_best"] for e in events(result, "generation")), strict=True))
    for series in per_island:
        assert list(series) == sorted(series)


async def test_children_worse_than_the_seed_never_replace_it() -> None:
    async def shorter_is_better(prompt: str) -> float:
        return -float(len(prompt))

    result = await island_search(scripted(), TASKS, shorter_is_better, generations=2)
    assert result.prompt == result.seed_prompt
    assert result.score == result.seed_score
    for generation in events(result, "generation"):
        assert generation["island_best"] == [result.seed_score, result.seed_score]


async def test_each_distinct_prompt_is_evaluated_once() -> None:
    fitness = WordCount()
    await island_search(scripted(), TASKS, fitness, islands=3, generations=3)
    assert set(fitness.calls.values()) == {1}


async def test_migration_runs_on_the_ring_every_interval() -> None:
    result = await island_search(
        scripted(), TASKS, WordCount(), islands=3, generations=4, migration_interval=2
    )
    moves = events(result, "migrated")
    assert [m["generation"] for m in moves] == [2, 2, 2, 4, 4, 4]
    assert [(m["from"], m["to"]) for m in moves[:3]] == [(0, 1), (1, 2), (2, 0)]


async def test_one_island_never_migrates() -> None:
    result = await island_search(scripted(), TASKS, WordCount(), islands=1, migration_interval=1)
    assert events(result, "migrated") == []


def candidate(cid: str, score: float, island: int) -> Candidate:
    return Candidate(cid, f"prompt {cid}", score, island, generation=1)


def test_a_migrant_replaces_the_worst_member_only_when_better() -> None:
    pools = [
        [candidate("a", 9.0, 0), candidate("b", 1.0, 0)],
        [candidate("c", 5.0, 1), candidate("d", 4.0, 1)],
    ]
    history: list[dict[str, Any]] = []
    moved = _migrate(pools, 2, 2, history)
    # Island 0's best (9) displaces island 1's worst (4); island 1's best (5) displaces b (1).
    assert [c.id for c in moved[1]] == ["a", "c"]
    assert [c.id for c in moved[0]] == ["a", "c"]
    assert moved[1][0].island == 1
    assert [(h["from"], h["to"], h["kept"]) for h in history] == [(0, 1, True), (1, 0, True)]

    weak = [[candidate("e", 1.0, 0)], [candidate("f", 3.0, 1)]]
    moved = _migrate(weak, 1, 4, history := [])
    assert [c.id for c in moved[1]] == ["f"]  # the weaker migrant does not stay
    assert [c.id for c in moved[0]] == ["f"]
    assert [h["kept"] for h in history] == [False, True]


async def test_duplicate_and_empty_rewrites_are_dropped() -> None:
    same = FakeChatModel([f"{evolve_prompts.NEW_OPEN}Always the same.{evolve_prompts.NEW_CLOSE}"])
    result = await island_search(same, TASKS, WordCount(), islands=1, population=3, generations=1)
    assert [e["prompt"] for e in events(result, "evaluated")][1:] == ["Always the same."]
    assert [e["reason"] for e in events(result, "dropped")] == ["duplicate of a member"] * 2

    empty = FakeChatModel([f"{evolve_prompts.NEW_OPEN} {evolve_prompts.NEW_CLOSE}"])
    result = await island_search(empty, TASKS, WordCount(), islands=1, population=2, generations=1)
    assert [e["reason"] for e in events(result, "dropped")] == ["empty rewrite"] * 2
    assert result.prompt == result.seed_prompt


async def test_the_mutation_prompt_shows_parent_score_island_and_tasks() -> None:
    model = FakeChatModel([f"{evolve_prompts.NEW_OPEN}New words here.{evolve_prompts.NEW_CLOSE}"])
    await island_search(
        model, TASKS, WordCount(), islands=1, population=2, generations=2, seed_prompt="Seed it."
    )
    first = model.requests[0][0][0].content
    assert first.startswith(evolve_prompts.MUTATION_HEADING)
    assert f"{evolve_prompts.CURRENT_OPEN}\nSeed it.\n{evolve_prompts.CURRENT_CLOSE}" in first
    assert "(fitness 2.000)" in first
    assert (
        "- runs-L2: Count runs in a list, variant 2. (constraints: Do not use construct 0" in first
    )
    assert evolve_prompts.NO_OTHERS in first
    later = model.requests[-1][0][0].content
    assert "- fitness 3.000: New words here." in later or "- fitness 2.000: Seed it." in later
    # Mutations sample (OpenEvolve's temperature) with a seed per call.
    params = model.requests[0][1]
    assert params is not None and params.temperature == 0.7 and params.seed is not None


async def test_same_seed_same_search() -> None:
    first = await island_search(scripted(), TASKS, WordCount(), seed=3)
    second = await island_search(scripted(), TASKS, WordCount(), seed=3)
    assert first.history == second.history


async def test_per_task_scores_average_into_the_fitness() -> None:
    async def per_task(prompt: str) -> list[float]:
        return [0.0, 1.0, 2.0]

    result = await island_search(scripted(), TASKS, per_task, generations=1)
    assert result.seed_score == 1.0


@pytest.mark.parametrize(
    ("value", "message"),
    [([1.0], "returned 1 per-task scores for 3 tasks"), (math.nan, "non-finite"), ("x", "float")],
)
async def test_bad_fitness_values_are_refused(value: Any, message: str) -> None:
    async def bad(prompt: str) -> Any:
        return value

    with pytest.raises(ConfigError, match=message):
        await island_search(scripted(), TASKS, bad)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"islands": 0}, "islands: expected an integer >= 1, got 0"),
        ({"population": 1.5}, "population"),
        ({"migration_interval": 0}, "migration_interval"),
    ],
)
async def test_bad_settings_are_refused_by_name(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        await island_search(scripted(), TASKS, WordCount(), **kwargs)


async def test_an_empty_training_split_is_refused() -> None:
    with pytest.raises(ConfigError, match="tasks: the training split is empty"):
        await island_search(scripted(), [], WordCount())


async def test_the_prompt_file_is_written_and_read_by_the_prompt_solver(tmp_path: Path) -> None:
    out = tmp_path / "evolve" / "island.json"
    result = await island_search(scripted(), COMBO_TASKS, WordCount(), generations=1, out=out)
    data = json.loads(out.read_text())
    assert {"prompt", "method", "score", "history"} <= set(data)
    assert data["method"] == "island" and data["score"] == result.score
    assert data["seed_prompt"] == default_instruction("combo")
    assert data["usage"]["calls"] == len(result.calls)
    assert read_prompt_file(out) == result.prompt


def test_read_instruction_takes_tags_then_a_block_then_the_reply() -> None:
    assert read_instruction("x <new_instruction>\n Do A.\n</new_instruction> y") == "Do A."
    assert read_instruction("Sure:\n```\nDo B.\n```") == "Do B."
    assert read_instruction("  Do C.  ") == "Do C."


# ---- GEPA ----


async def test_gepa_search_evolves_with_reflection_and_writes_its_file(tmp_path: Path) -> None:
    pytest.importorskip("gepa")
    fitness = WordCount(scale=0.01)  # well under the perfect score of 3
    out = tmp_path / "gepa.json"
    result = await gepa_search(scripted(), TASKS, fitness, budget=15, out=out)
    assert result.method == "gepa"
    assert set(fitness.calls.values()) == {1}
    assert result.score > result.seed_score
    assert result.score == await fitness(result.prompt)
    assert {c.purpose for c in result.calls} == {"reflect"}
    (summary,) = events(result, "gepa")
    assert summary["candidates"][0] == result.seed_prompt
    assert result.prompt in summary["candidates"]
    assert set(summary["front"]) == {"runs-L1", "runs-L2", "runs-L3"}
    # gepa checks its budget between iterations; one iteration reads at most 2 minibatches
    # and a full validation pass.
    assert 15 <= summary["metric_calls"] <= 15 + 2 * 3 + len(TASKS)
    reflection = result.calls[0].response
    assert reflection.startswith(evolve_prompts.NEW_OPEN)
    assert read_prompt_file(out) == result.prompt


async def test_gepa_reflection_sees_per_task_scores() -> None:
    pytest.importorskip("gepa")
    model = FakeChatModel([f"{evolve_prompts.NEW_OPEN}Try harder.{evolve_prompts.NEW_CLOSE}"])

    async def per_task(prompt: str) -> Sequence[float]:
        return [0.0, 0.5, 1.5] if prompt != "Try harder." else [0.5, 1.0, 2.0]

    result = await gepa_search(model, TASKS, per_task, budget=8, seed_prompt="Start here.")
    text = model.requests[0][0][0].content
    assert text.startswith(evolve_prompts.REFLECTION_HEADING)
    assert f"{evolve_prompts.CURRENT_OPEN}\nStart here.\n{evolve_prompts.CURRENT_CLOSE}" in text
    assert "Score: 0.000" in text or "Score: 0.500" in text or "Score: 1.500" in text
    assert result.prompt == "Try harder." and result.score == pytest.approx(3.5 / 3)


async def test_gepa_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gepa", None)  # makes `import gepa` raise ImportError
    with pytest.raises(ConfigError, match="pip install gepa"):
        await gepa_search(scripted(), TASKS, WordCount())


def test_gepa_perfect_score_default_is_explained_against_the_paper() -> None:
    """App. E.3 sets perfect_score=1.0; our fitness is Creativity in [0, 3], so the default is
    3.0 and the docstring says why (and how to reproduce the paper's value)."""
    default = inspect.signature(gepa_search).parameters["perfect_score"].default
    assert default == CREATIVITY_MAX == 3.0
    doc = " ".join((gepa_search.__doc__ or "").split())
    assert "App. E.3 sets `perfect_score=1.0`" in doc and "perfect_score=1.0" in doc


async def test_gepa_takes_the_papers_perfect_score_when_asked(tmp_path: Path) -> None:
    pytest.importorskip("gepa")
    result = await gepa_search(
        scripted(), TASKS, WordCount(scale=0.01), budget=4, perfect_score=1.0
    )
    assert result.settings["perfect_score"] == 1.0


# ---- the evolve command: disjoint training and evaluation splits ----


def test_evolve_trains_on_the_last_instances_and_names_the_rest_for_evaluation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "island.json"
    args = ["creativebench", "evolve", "--model", "scripted/creative-solver", "--out", str(out),
            "--split", "combo", "--train", "2", "--generations", "1", "--islands", "1",
            "--population", "2"]  # fmt: skip
    code, printed, err = run_cli(args, capsys)
    assert code == 0, err
    pool = [i.id for i in CreativeBenchmark().instances("combo")]
    settings = json.loads(out.read_text())["settings"]
    assert settings["train_instances"] == pool[-2:]
    assert settings["eval_instances"] == pool[:-2]
    assert not set(settings["train_instances"]) & set(settings["eval_instances"])
    assert f"--instances {','.join(pool[:-2])}" in printed
    assert read_prompt_file(out)  # still a prompt file the prompt solver reads
    help_code, help_text, _ = run_cli(["creativebench", "evolve", "--help"], capsys)
    assert help_code == 0 and "LAST N" in " ".join(help_text.split())


def test_evolve_keeps_instances_out_of_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count = len(CreativeBenchmark().instances("explore"))
    args = ["creativebench", "evolve", "--model", "scripted/creative-solver", "--out",
            str(tmp_path / "x.json"), "--split", "explore", "--train", str(count)]  # fmt: skip
    code, _out, err = run_cli(args, capsys)
    assert code != 0 and "keep at least one" in " ".join(err.split())


def test_the_mutator_is_its_own_role_and_defaults_to_the_solver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["creativebench", "evolve", "--model", "scripted/creative-solver", "--split",
            "combo", "--train", "1", "--generations", "1", "--islands", "1",
            "--population", "1"]  # fmt: skip
    own, other = tmp_path / "own.json", tmp_path / "other.json"
    code, _out, err = run_cli([*base, "--out", str(own)], capsys)
    assert code == 0, err
    code, _out, err = run_cli(
        [*base, "--out", str(other), "--role", "mutator=scripted/constraint-judge"], capsys
    )
    assert code == 0, err
    mine, theirs = json.loads(own.read_text()), json.loads(other.read_text())
    assert (mine["settings"]["mutator"], mine["settings"]["solver"]) == (
        "scripted/creative-solver",
        "scripted/creative-solver",
    )
    assert theirs["settings"]["mutator"] == "scripted/constraint-judge"
    assert {c["model"] for c in theirs["calls"]} == {"scripted/constraint-judge"}
    assert {c["purpose"] for c in theirs["calls"]} == {"mutate"}
    assert "mutator" in CreativeBenchmark.model_roles
    assert "mutator" in CreativeBenchmark.roles_default_to_agent


@pytest.mark.parametrize(
    ("role", "message"),
    [
        ("mutator", "--role: expected ROLE=MODEL, got 'mutator'"),
        ("critic=scripted/x", "--role critic: evolve has no such role; its roles: judge, mutator"),
    ],
)
def test_a_bad_evolve_role_gets_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], role: str, message: str
) -> None:
    args = ["creativebench", "evolve", "--model", "scripted/creative-solver", "--out",
            str(tmp_path / "x.json"), "--role", role]  # fmt: skip
    code, _out, err = run_cli(args, capsys)
    assert code == 2 and message in " ".join(err.split())
