"""Tests of the agents' prompt texts: examples leak no scenario content, Prompt 1 keeps the paper's
hedge, and the flagged near-verbatim sentences of the paper stay reworded."""

from __future__ import annotations

import re
from string import Template
from types import ModuleType

import pytest

from forkingpaths.benchmarks.escape.actions import ACTION_KINDS, find_calls, fold_name
from forkingpaths.benchmarks.escape.agents import (
    escapeagent_prompts,
    react_prompts,
    redna_prompts,
)
from forkingpaths.benchmarks.escape.agents.escapeagent import TASK_FUNCTIONS
from forkingpaths.benchmarks.escape.schema import load_scenario, scenario_names, scenarios_dir

PROMPT_MODULES: tuple[ModuleType, ...] = (react_prompts, redna_prompts, escapeagent_prompts)

PAPER_EXAMPLE_NAMES = (
    "microwave",
    "wrench",
    "key",
    "silver chest",
    "controller",
    "battery",
    "c79a1",
    "combination lock",
    "operation room",
)
"""The names of the paper's own examples (Prompts 1 and 5), which ours must not reuse."""


def prompt_texts() -> dict[str, str]:
    """Every template of the three prompt modules, and Prompt 1 as rendered (with examples)."""
    texts = {
        f"{module.__name__.rsplit('.', 1)[-1]}.{name}": value.template
        for module in PROMPT_MODULES
        for name, value in vars(module).items()
        if isinstance(value, Template)
    }
    texts["render_system()"] = react_prompts.render_system()
    return texts


def scenario_vocabulary() -> set[str]:
    """Folded names of every scene, item, tool and move label of every shipped scenario."""
    names: set[str] = set()
    stems = scenario_names()
    assert len(stems) >= 10
    for stem in stems:
        scenario = load_scenario(scenarios_dir() / f"{stem}.yaml")
        for scene in scenario.scenes:
            names.add(fold_name(scene.name))
            names.update(fold_name(label) for label, _ in scene.relations)
        names.update(fold_name(item.name) for item in scenario.items)
        names.update(fold_name(tool.name) for tool in scenario.tools)
    return names


def example_arguments() -> list[tuple[str, str]]:
    """(where, argument) of every call written in a prompt: actions and task-list calls."""
    found = []
    for where, text in prompt_texts().items():
        for call in find_calls(text, (*ACTION_KINDS, *TASK_FUNCTIONS)):
            found += [(where, arg) for arg in call.args if arg.strip()]
    return found


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words (both folded, `_` read as a space)."""
    words = re.escape(fold_name(phrase.replace("_", " ")))
    return re.search(rf"(?<!\w){words}(?!\w)", fold_name(text.replace("_", " "))) is not None


def test_prompts_hold_examples_to_check():
    arguments = {arg for _, arg in example_arguments()}
    # Prompt 1's examples and Prompt 5's task-list examples are among them.
    assert {"grandfather clock", "crystal chandelier", "observatory", "6153"} <= arguments
    assert any("weather vane" in arg for arg in arguments)


def test_no_prompt_example_names_scenario_content():
    vocabulary = scenario_vocabulary()
    leaks = [
        (where, arg, name)
        for where, arg in example_arguments()
        for name in vocabulary
        if contains_phrase(arg, name)
    ]
    assert leaks == []


def test_no_prompt_example_reuses_the_papers_examples():
    reused = [
        (where, arg, name)
        for where, arg in example_arguments()
        for name in PAPER_EXAMPLE_NAMES
        if contains_phrase(arg, name)
    ]
    assert reused == []


def test_prompt_1_hedges_on_multiple_solutions():
    system = " ".join(react_prompts.render_system().split())
    assert "IMPORTANT: The goal may be reachable by MORE THAN ONE route." in system
    assert "The goal may have several solutions" in system
    for overstated in ("SEVERAL different ways", "more than one solution exists", "usually"):
        assert overstated.casefold() not in system.casefold()
    assert "(a code, a word)" not in system
    # Rule 1 names the bag block: our observation lists bag tools outside Possible Actions.
    assert "Possible Actions or under Tools in Bag" in system


FLAGGED = (
    # Prompt 1
    "Is the thing I want to use already in my bag?",
    "For apply(X, Y): is Y listed",
    "For craft(A, B): have I already",
    "do NOT try craft(A, B) or craft(B, A) again",
    "The FIRST is the base tool",
    "the SECOND the ingredient",
    "if you want to use it later",
    "or try a different mechanism",
    "can usually be reached in SEVERAL different ways",
    "Since more than one solution exists",
    # Prompt 9
    "For apply(tool, item): is the tool",
    "For craft(tool A, tool B): are both tools",
    # Prompts 10-11
    "Use only creative interaction mechanisms",
    "Do not propose click() or move()",
    "Choose exactly one valid next action",
    "A new tool-based mechanism on the same target",
    "compare 2-4 concrete candidates",
    "The final Action must begin with apply(), input() or craft()",
    "The final Action must start with",
    "code, word, label, or sequence",
    # Prompts 4-8
    "interact with the items through click, input or apply, and try crafting new tools",
    "In your Thought, consider click, apply and input possibilities",
    "be bold in proposing plausible",
    "be bold to propose plausible",
    "why the tool may solve the task",
    "connect them to the task",
    "suggestions and hints for your future self",
    "extract hint and fill in the parameter",
    "retain the original feedback and add one new hindsight",
)


@pytest.mark.parametrize("phrase", FLAGGED)
def test_flagged_paper_sentences_are_reworded(phrase: str):
    wanted = " ".join(phrase.split()).casefold()
    copies = [
        where
        for where, text in prompt_texts().items()
        if wanted in " ".join(text.split()).casefold()
    ]
    assert copies == []


def test_protocol_headings_and_output_format_are_kept():
    user = redna_prompts.DN_USER_TEMPLATE.template
    for heading in ("DIVERGENT PHASE INPUTS", "CONVERGENT PHASE INPUTS"):
        assert f"${'divergent' if 'DIVERGENT' in heading else 'convergent'}_heading" in user
    assert "\nDIVERGENT PHASE\n" in user and "\nCONVERGENT PHASE\n" in user
    for text in (
        react_prompts.render_system(),
        react_prompts.render_self_refine(),
        redna_prompts.render_dn_system(),
        redna_prompts.DN_USER_TEMPLATE.template,
        redna_prompts.render_dn_retry("click(x)"),
    ):
        assert text.rstrip().endswith("Thought: ...\nAction: ...")
