"""The one action grammar: the engine and the agents read, fold and key actions alike."""

from __future__ import annotations

import random

import pytest

from forkingpaths.benchmarks.escape.actions import (
    _PLAIN,
    ActionCall,
    _parse_any,
    action_key,
    action_parts,
    find_calls,
    fold_name,
    parse_action,
)
from forkingpaths.benchmarks.escape.agents.escapeagent import is_valid_candidate
from forkingpaths.benchmarks.escape.engine import BLOCKED, EscapeGame
from forkingpaths.benchmarks.escape.schema import load_scenario

STREET = """\
- name: street
  objective: "Get through the gate."
  desc: "A quiet street."
  items:
  - position: "Across the road"
    item:
      name: Straßentor
      states:
      - desc: "A locked iron gate."
        transitions:
        - wait_for: [apply, key]
          trigger: [change_state, 1]
          reward: "The gate swings open. GAME END!"
      - desc: "An open gate."
  tools:
  - position: "On the pavement"
    tool:
      name: key
      states:
      - desc: "An iron key."
        apply_to: [Straßentor]
"""

FINISH = "apply(key, Straßentor)"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Straßentor", "STRASSENTOR"),  # ß folds to ss; lower() keeps it
        ("ΟΔΟΣ", "οδοσ"),  # lower() writes the final sigma ς, casefold() σ
        ("  Pipe \t HEAD ", "pipe head"),
    ],
)
def test_names_fold_by_unicode_case_folding(one: str, other: str) -> None:
    assert fold_name(one) == fold_name(other)
    assert action_key(f"click({one})") == action_key(f"click({other})")


def test_engine_and_agent_agree_on_a_forbidden_finish_spelt_another_way() -> None:
    # Before the shared grammar the engine folded names with lower() and the agents with
    # casefold(): the agent dropped `apply(KEY, STRASSENTOR)` as the forbidden finish while the
    # engine answered that no such item was here. Now both see the forbidden finish.
    written = "apply(KEY, STRASSENTOR)"
    game = EscapeGame(load_scenario(STREET, name="street"))
    game.step("click(key)")
    result = game.step(written, forbidden=(FINISH,))
    assert (result.forbidden, result.valid, result.response) == (True, False, BLOCKED)
    assert result.action == FINISH  # spelt as the scenario spells it

    call = parse_action(written)
    assert call is not None and call.key == action_key(FINISH) == "apply(key, strassentor)"
    data = {"items": ["Straßentor"], "scene_tools": [], "bag": [{"name": "key", "desc": ""}]}
    assert is_valid_candidate(call, {**data, "forbidden": []})
    assert not is_valid_candidate(call, {**data, "forbidden": [FINISH]})

    # Without the restriction the engine plays it: the same name, however it is written.
    assert game.step(written).game_end


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click(driver's licence)", ActionCall("click", ("driver's licence",))),
        ("input('12,34', safe)", ActionCall("input", ("12,34", "safe"))),
        ("Apply( Pipe  Head , Safe )", ActionCall("apply", ("Pipe Head", "Safe"))),
        ("input(1,2, pad)", None),  # an unquoted comma splits the input string: three arguments
        ("click(a, b)", None),
        ("jump(high)", None),
    ],
)
def test_find_calls_reads_what_the_engine_reads(text: str, expected: ActionCall | None) -> None:
    assert parse_action(text) == expected
    assert find_calls(f"I will try {text} now") == ([] if expected is None else [expected])


def test_keys_of_found_calls_are_the_engines_keys() -> None:
    calls = find_calls('then input("1,2", pad) and Craft(Rope ,  Hook)')
    assert [c.key for c in calls] == ['input("1,2", pad)', "craft(rope, hook)"]
    assert [c.key for c in calls] == [action_key(c.text) for c in calls]
    assert [c.text for c in calls] == ['input("1,2", pad)', "Craft(Rope ,  Hook)"]


def test_other_kinds_keep_their_arguments_as_written() -> None:
    calls = find_calls("new(Open safe, needs a code, maybe 4 digits) none()", ("new", "none"))
    assert [(c.kind, c.args) for c in calls] == [
        ("new", ("Open safe", "needs a code", "maybe 4 digits")),
        ("none", ()),
    ]


def test_plain_calls_are_read_as_any_text_is() -> None:
    """Fuzz: the fast reading of a plain `kind(a, b)` (`_PLAIN`) gives what the general
    reader gives, position and text included; `action_parts` agrees with both."""
    rng = random.Random(17)
    pieces = ["click", "apply", "input", "craft", "move", "Move", "jump", "(", ")", ",", " ", "  "]
    pieces += ["\t", "\n", "'", '"', "`", "door", "Straße", "a b", "1234", "", "Action: ", "x"]
    plain_seen = 0
    for _ in range(20000):
        if rng.random() < 0.5:
            kind = rng.choice(["click", "apply", "input", "craft", "move", "look"])
            args = [
                rng.choice(pieces[8:]) + rng.choice(pieces[8:]) for _ in range(rng.randint(0, 3))
            ]
            text = f"{kind}({','.join(args)})" + rng.choice(["", "", " ", ")", "x"])
        else:
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        plain_seen += _PLAIN.fullmatch(text) is not None
        got, want = parse_action(text), _parse_any(text)
        assert got == want, text
        if want is not None:
            assert (got.text, got.start) == (want.text, want.start), text  # type: ignore[union-attr]
        assert action_parts(text) == (None if want is None else (want.kind, want.args)), text
    assert plain_seen > 1000  # the fast path was exercised
