"""The README's offline commands run as written, and its sample outputs are what they print
(`scripts/readme_outputs.py` runs them all and rewrites the samples: `--update`)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from scripts.readme_outputs import (
    README,
    ROOT,
    Sample,
    check_sample,
    commands,
    find_command,
    printed_rows,
    regenerate,
    run_command,
    sample_rows,
    samples,
    why_not_offline,
)

TURTLESOUP = (
    ".venv/bin/forkingpaths run turtlesoup --agent mosaic --model scripted/turtlesoup-questioner"
)
TEXT = README.read_text(encoding="utf-8")
FOUND = commands(TEXT)
OFFLINE = [c for c in FOUND if c.skip is None]


def offline(fragment: str):
    (command,) = [c for c in OFFLINE if fragment in c.text]
    return command


def test_the_offline_commands_are_found() -> None:
    texts = [c.text for c in OFFLINE if c.language == "bash"]
    for expected in (
        ".venv/bin/forkingpaths run griddag --agent frontier",
        ".venv/bin/forkingpaths run eeb --agent reference",
        TURTLESOUP,
        ".venv/bin/forkingpaths run creativebench --split all --agent reference",
        ".venv/bin/forkingpaths run escape --agent oracle",
        ".venv/bin/forkingpaths run escape --agent systematic",
        ".venv/bin/forkingpaths creativebench exec solution.py --tests tests.py --json",
    ):
        assert expected in texts
    assert [c.text.splitlines()[0] for c in OFFLINE if c.language == "python"] == [
        "import gymnasium",
        "from forkingpaths.api import load_records, run",
        "from forkingpaths.api import reproduce",
    ]


def test_commands_that_need_a_model_a_person_or_a_file_are_not_offline() -> None:
    reasons = {
        "forkingpaths run griddag --agent react --model openai/gpt-4.1": "calls openai/gpt-4.1",
        "forkingpaths run escape --agent oracle --role judge=openai/o3": "calls openai/o3",
        "forkingpaths run x --agent a --model scripted/echo --base-url http://h/v1": (
            "needs an endpoint (--base-url)"
        ),
        "forkingpaths run eeb --agent human": "waits for a person (--agent human)",
        "forkingpaths escape play zombie_lab": "serves, or waits for a person",
        "forkingpaths mockserver --port 8000": "serves, or waits for a person",
        "forkingpaths view runs": "serves, or waits for a person",
        "forkingpaths study runs --port 8800": "serves, or waits for a person",
        "forkingpaths griddag score map.json": "needs map.json",
        "forkingpaths run x --agent a -a truths=runs/x/truths.json": "needs runs/x/truths.json",
        "forkingpaths griddag generate --seed 2 > map.json": (
            "a shell job (redirect, pipe or background)"
        ),
        "make run": "not a forkingpaths command (make)",
        "forkingpaths run turtlesoup --agent mosaic --model scripted/turtlesoup-questioner": None,
        "forkingpaths creativebench novelty a.py b.py --embedding none": None,
    }
    assert {text: why_not_offline(text.split()) for text in reasons} == reasons


SAMPLE = Sample(
    "forkingpaths run g",
    "metric      value\nrate       0.5000    a comment\n"
    "episodes ok / errored / planned  2 / 0 / 2\nrun directory: runs/g-1\n",
    0,
    0,
)
PRINTED = """g-1
┏━━━━━━━━━━┳━━━━━━━━┓
┃ metric   ┃  value ┃
┡━━━━━━━━━━╇━━━━━━━━┩
│ rate     │ 1.0000 │
│ episodes ok / errored / planned │ 2 / 0 / 2 │
└──────────┴────────┘
run directory: runs/g-1
"""


def test_a_sample_is_checked_and_regenerated_row_by_row() -> None:
    assert sample_rows(SAMPLE.body) == [
        ("rate", "0.5000", "a comment"),
        ("episodes ok / errored / planned", "2 / 0 / 2", ""),
        ("run directory", "runs/g-1", ""),
    ]
    assert printed_rows(PRINTED) == {
        "metric": "value",
        "rate": "1.0000",
        "episodes ok / errored / planned": "2 / 0 / 2",
        "run directory": "runs/g-1",
    }
    assert check_sample(SAMPLE, PRINTED) == [
        "forkingpaths run g: rate is '1.0000', the README shows '0.5000'"
    ]
    assert regenerate(SAMPLE, PRINTED) == (
        "metric                               value\n"
        "rate                                1.0000    a comment\n"
        "episodes ok / errored / planned  2 / 0 / 2\n"
        "run directory: runs/g-1\n"
    )
    assert check_sample(SAMPLE, "run directory: runs/g-2\n") == [
        "forkingpaths run g: 'rate' is not printed",
        "forkingpaths run g: 'episodes ok / errored / planned' is not printed",
        "forkingpaths run g: run directory is 'runs/g-2', the README shows 'runs/g-1'",
    ]


@pytest.mark.slow
def test_the_readme_samples_are_what_their_commands_print(tmp_path: Path) -> None:
    shown = samples(TEXT)
    assert [s.command for s in shown] == [
        ".venv/bin/forkingpaths run griddag --agent frontier",
        TURTLESOUP,
    ]
    for number, sample in enumerate(shown):
        command = find_command(FOUND, sample.command)
        assert command.skip is None
        (tmp_path / str(number)).mkdir()
        output = run_command(command, tmp_path / str(number))
        assert output.returncode == 0, output.stderr
        assert check_sample(sample, output.stdout) == []


@pytest.mark.slow
def test_fast_offline_commands_run_as_written(tmp_path: Path) -> None:
    """A fast subset; `scripts/readme_outputs.py --check` runs every offline command."""
    escape = run_command(offline("run escape --agent oracle"), tmp_path)
    assert escape.returncode == 0, escape.stderr
    # The README's comment: "plays the gold paths: 55 / 55".
    assert printed_rows(escape.stdout)["path_discovery_text"] == "55 / 55 (100.0%)"

    replay = run_command(offline("eeb replay maze"), tmp_path)
    assert replay.returncode == 0, replay.stderr
    steps = [json.loads(line) for line in replay.stdout.splitlines()]
    # moves.txt: "Move RIGHT 1 step", "Move UP 1 step", "9"
    assert [(s["action"], s["valid"]) for s in steps] == [(9, True), (0, True), (9, True)]

    executed = run_command(offline("creativebench exec solution.py"), tmp_path)
    assert executed.returncode == 0, executed.stderr
    # tests.py calls the solution's add() without importing it: the tests are appended.
    assert json.loads(executed.stdout)["verdict"] == "PASSED"

    api = run_command(offline("from forkingpaths.api import load_records"), tmp_path)
    assert api.returncode == 0, api.stderr
    assert api.stdout.splitlines()[0].startswith("1.0 runs/griddag-main-react-scripted-")

    gym = run_command(offline("import gymnasium"), tmp_path)
    assert gym.returncode == 0, gym.stderr

    python = run_command(offline("from forkingpaths.api import reproduce"), tmp_path)
    assert python.returncode == 0, python.stderr
    assert python.stdout.splitlines()[:3] == ["Base 0.0 27.0", "Re only 0.0 33.0", "ReDNA 0.0 38.0"]

    table = run_command(offline("reproduce mutate:table3 --model scripted"), tmp_path)
    assert table.returncode == 0, table.stderr
    # The README's excerpt: Base's row, ours / paper (Δ).
    base = next(line for line in table.stdout.splitlines() if "│ Base " in line)
    assert "0 / 27 (−27)" in base and "40.5 / 25.3 (+15.2)" in base
    assert "report: runs/reproduce-mutate-table3-scripted/report.html" in table.stdout


def test_the_readme_names_what_its_examples_need() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert any(d.startswith("gymnasium") for d in extras["gym"])
    assert "pip install -e '.[gym]'" in TEXT
    flat = " ".join(TEXT.split())
    assert "`creativebench exec SOLUTION --tests TESTS` appends the tests to the solution" in flat
    assert "Maze actions are the numbers 0-11 or their names as the game lists them" in flat
    assert "a role you do not name goes to the scripted responder or judge" in flat
