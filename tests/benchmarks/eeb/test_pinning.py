"""A truths file or levels folder changed after a run: a new run, or the old one refuses it
(`truths_sha256`, `levels_sha256`), never the old run resumed on the new content."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from tests.benchmarks.eeb.test_learn_cli import release_tree
from tests.benchmarks.eeb.test_level_files import release_match2, write
from tests.doubles import FakeChatModel

from forkingpaths.benchmarks.eeb.agents.base import make_base
from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository
from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.pinning import content_digest
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import RunOptions
from forkingpaths.runner.reproduce import run_reproduction
from forkingpaths.runner.run import execute_run
from forkingpaths.runner.rundir import RunDirectory

TRUTHS = ("maze_truths", "maze_truths_no_tw", "match2_truths", "match2_truths_no_tw")


def episodes(run: Path) -> list[str]:
    return (run / "episodes.jsonl").read_text().splitlines()


def resume(run: Path) -> None:
    """Resume the run in `run` as it was recorded (its own spec and directory)."""
    spec = RunDirectory(run).read_header().spec
    asyncio.run(execute_run(spec, RunOptions(progress=False), runs_dir=run.parent, run_id=run.name))


def test_content_digest_of_a_file_and_of_a_folder(tmp_path: Path) -> None:
    file = tmp_path / "levels" / "a.json"
    write(file, {"x": 1})
    assert content_digest(file, "levels") == hashlib.sha256(file.read_bytes()).hexdigest()
    folder = content_digest(tmp_path / "levels", "levels")
    (tmp_path / "levels" / "notes.txt").write_text("not a level")
    assert content_digest(tmp_path / "levels", "levels") == folder, "only *.json is read"
    write(tmp_path / "levels" / "sub" / "b.json", {"y": 2})
    assert content_digest(tmp_path / "levels", "levels") != folder
    with pytest.raises(ConfigError) as err:
        content_digest(tmp_path / "nowhere", "levels")
    assert str(err.value) == (
        f"levels: {str(tmp_path / 'nowhere')!r} does not exist; give a file or folder"
    )


def test_a_truths_file_changed_after_a_run_makes_a_new_run(tmp_path: Path) -> None:
    inputs = {
        name: TruthRepository(name.split("_")[0], ["Go round the walls."]).save(
            tmp_path / f"{name}.json"
        )
        for name in TRUTHS
    }
    first = run_reproduction("eeb:table6", model="scripted", limit=1, inputs=inputs,
                             runs_dir=tmp_path / "runs")  # fmt: skip
    old = first.runs["maze-ours"]
    spec = json.loads((old / "spec.json").read_text())["spec"]
    assert spec["agent_options"] == {
        "truths": str(inputs["maze_truths"]),
        "truths_sha256": hashlib.sha256(inputs["maze_truths"].read_bytes()).hexdigest(),
    }
    before = episodes(old)

    TruthRepository("maze", ["Take the coins first."]).save(inputs["maze_truths"])  # in place
    second = run_reproduction("eeb:table6", model="scripted", limit=1, inputs=inputs,
                              runs_dir=tmp_path / "runs")  # fmt: skip
    assert second.runs["maze-ours"] != old, "a new run for the new content"
    assert len(episodes(second.runs["maze-ours"])) == 1
    assert episodes(old) == before, "the old run is left as it was"
    unchanged = [k for k in first.runs if first.runs[k] == second.runs[k]]
    assert sorted(unchanged) == ["match2-base", "match2-notw", "match2-ours", "maze-base",
                                 "maze-notw"]  # fmt: skip

    # The old run, resumed as recorded, refuses the edited file in one line.
    with pytest.raises(ConfigError) as err:
        resume(old)
    now = hashlib.sha256(inputs["maze_truths"].read_bytes()).hexdigest()
    assert str(err.value) == (
        f"truths_sha256: truths {str(inputs['maze_truths'])!r} no longer holds the content the "
        f"run was made with (sha256 {now}, pinned {spec['agent_options']['truths_sha256']}); "
        "give that content back, or start a new run"
    )
    assert episodes(old) == before


def test_a_levels_folder_changed_after_a_run_makes_a_new_run(tmp_path: Path) -> None:
    root = release_tree(tmp_path / "levels")
    pinned = content_digest(root, "levels")
    first = run_reproduction("eeb:table5", model="scripted", limit=1, inputs={"levels": root},
                             runs_dir=tmp_path / "runs")  # fmt: skip
    old = first.runs["base"]
    options = json.loads((old / "spec.json").read_text())["spec"]["benchmark_options"]
    assert options == {"levels": str(root.resolve()), "levels_sha256": pinned}
    before = episodes(old)

    write(root / "match_game" / "easy" / "level01.json", release_match2(12))  # in place
    second = run_reproduction("eeb:table5", model="scripted", limit=1, inputs={"levels": root},
                              runs_dir=tmp_path / "runs")  # fmt: skip
    assert second.runs["base"] != old
    assert len(episodes(second.runs["base"])) == 1
    assert episodes(old) == before

    with pytest.raises(ConfigError, match=r"^levels_sha256: levels .* no longer holds the"):
        resume(old)
    assert episodes(old) == before


PIN_FIELD = (
    "eeb option levels_sha256 (pins the content of `levels` (sha256 as eeb's reproductions "
    "write it): 64 lowercase hex digits): "
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"levels": "x", "levels_sha256": "ABC"},
         PIN_FIELD + "String should match pattern '^[0-9a-f]{64}$', got \"ABC\""),
        ({"levels": "x", "levels_sha256": 7}, PIN_FIELD + "Input should be a valid string, got 7"),
        ({"levels_sha256": "0" * 64},
         "eeb option options: Value error, levels_sha256 pins the content of levels; give it "
         "with levels, got "),
    ],
)  # fmt: skip
def test_a_bad_levels_pin_is_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        EEBBenchmark(**options)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_bad_truths_pin_is_refused(tmp_path: Path) -> None:
    model = FakeChatModel(["Action: 0"])
    truths = TruthRepository("maze", ["Go round the walls."]).save(tmp_path / "t.json")
    with pytest.raises(ConfigError) as err:
        make_base(model=model, truths=truths, truths_sha256="abc")
    assert str(err.value) == "truths_sha256: got 'abc'; allowed values: 64 lowercase hex digits"
    with pytest.raises(ConfigError) as err:
        make_base(model=model, truths=["Go round."], truths_sha256="0" * 64)
    assert str(err.value) == (
        "truths_sha256: pins a truths file; got truths=['Go round.'] (give truths=FILE)"
    )
    digest = content_digest(truths, "truths")
    assert make_base(model=model, truths=str(truths), truths_sha256=digest).truths is not None
