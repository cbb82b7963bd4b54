"""The release's level files (`levels=PATH`): integer grid codes, `mode: "Level N"`,
collections, match-2 boards, defects as warnings; release geometry; Table 4 scoring."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.level_files import load_level_path
from forkingpaths.benchmarks.eeb.maze_levels import (
    RELEASE_SIZES,
    MazeLevel,
    generate_release_geometry_level,
)
from forkingpaths.benchmarks.eeb.scoring import table4_score
from forkingpaths.core.errors import ConfigError
from forkingpaths.core.records import RunOptions, RunSpec
from forkingpaths.runner.run import execute_run

# Samples written for these tests in the release's format (uuu-quant/EvoEmpirBench,
# data/levels/maze_eval/Level_N_i.json): an integer grid with the codes of its
# src/config/game_config.py, the same things listed, items null when absent.
# 0 free, 1 wall, 2 start, 3 goal, 5 coin, 6 monster, 7 shovel, 8 sword, 9 magnet, 10 key.
EASY = [
    "0000103",
    "0500100",
    "0000000",
    "5011050",
    "0000000",
    "0500005",
    "2000000",
]
HARD = [
    "000000000a3",  # 'a' is 10 (the key), one character per cell
    "05000000000",
    "00001110000",
    "00600000050",
    "00000000000",
    "00000700000",
    "01100000000",
    "00000800500",
    "00000000000",
    "05000090060",
    "20000000005",
]
NAMES = {7: "shovel", 8: "sword", 9: "magnet", 10: "key"}


def release_maze(picture: list[str], mode: str) -> dict[str, Any]:
    grid = [[10 if ch == "a" else int(ch) for ch in row] for row in picture]
    cells = [(r, c, v) for r, row in enumerate(grid) for c, v in enumerate(row)]
    items: dict[str, Any] = dict.fromkeys(("shovel", "sword", "magnet", "key"))
    for r, c, v in cells:
        if v in NAMES:
            items[NAMES[v]] = [r, c]
    return {
        "grid": grid,
        "obstacles": [[r, c] for r, c, v in cells if v == 1],
        "coins": [[r, c] for r, c, v in cells if v == 5],
        "monsters": [[r, c] for r, c, v in cells if v == 6],
        "items": items,
        "mode": mode,
        "grid_size": len(grid),
    }


BOARD = [
    ["A", "A", "B", "C", "D", "A", "B", "C"],
    ["B", "C", "D", "A", "B", "C", "D", "A"],
    ["C", "D", "A", "B", "C", "D", "A", "B"],
    ["D", "A", "B", "C", "D", "A", "B", "C"],
    ["A", "B", "C", "D", "A", "B", "C", "D"],
    ["B", "C", "D", "A", "B", "C", "D", "A"],
    ["C", "D", "A", "B", "C", "D", "A", "B"],
    ["D", "A", "B", "C", "D", "A", "B", "D"],
]


def release_match2(steps: int) -> dict[str, Any]:
    """The release's data/levels/match_game/<difficulty>/levelNN.json keys."""
    return {
        "board": BOARD,
        "max_steps": steps,
        "inventory": {"row": 1, "col": 1, "bomb": 1, "hammer": 1},
        "color_targets": {"A": 3, "B": 2, "C": 2, "D": 2},
    }


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def release_dir(tmp_path: Path) -> Path:
    """A small tree in the release's layout, with a duplicate collection and defects."""
    root = tmp_path / "levels"
    easy, hard = release_maze(EASY, "Level 1"), release_maze(HARD, "Level 3")
    write(root / "maze_eval" / "Level_1_1.json", easy)
    write(root / "maze_eval" / "Level_3_2.json", hard)
    write(root / "maze_eval" / "Level_3_10.json", {**hard, "coins": hard["coins"] + [[4, 4]]})
    write(root / "maze_eval" / "Level_1_collection.json", [easy])
    (root / "maze_eval" / "Level_2_1.json").write_text("{not json", encoding="utf-8")
    write(root / "maze_train" / "Level_1_1.json", {**easy, "coins": easy["coins"] + [[1, 1]]})
    write(root / "match_game" / "easy" / "level01.json", release_match2(15))
    write(root / "match_game" / "hard" / "level01.json", release_match2(10))
    return root


def test_release_codes_and_mode_map_as_the_release_defines_them() -> None:
    hard = MazeLevel.from_json(release_maze(HARD, "Level 3"), source="Level_3_2.json")
    assert hard.size == 11 and hard.level == 3
    assert hard.start == (10, 0) and hard.goal == (0, 10)
    assert hard.walls == frozenset({(2, 4), (2, 5), (2, 6), (6, 1), (6, 2)})
    assert hard.coins == ((1, 1), (3, 9), (7, 8), (9, 1), (10, 10))
    assert hard.monsters == ((3, 2), (9, 9))
    assert dict(hard.items) == {"shovel": (5, 5), "sword": (7, 5), "magnet": (9, 6), "key": (0, 9)}
    easy = MazeLevel.from_json(release_maze(EASY, "Level 1"), source="Level_1_1.json")
    assert (easy.size, easy.level, easy.monsters, dict(easy.items)) == (7, 1, (), {})


def test_a_grid_that_disagrees_with_its_lists_loads_with_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = release_maze(HARD, "Level 3")
    data["coins"] = data["coins"][1:]  # grid[1][1] still draws it
    data["monsters"].append([4, 4])  # listed, not drawn
    data["items"]["sword"] = [8, 8]  # the grid draws it at [7, 5]
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING):
        level = MazeLevel.from_json(data, source="L3.json", warnings=warnings)
    assert warnings == [
        "L3.json: grid[1][1] draws a coin that coins does not list; kept",
        "L3.json: monsters[2] [4, 4] is not drawn on the grid (grid[4][4]); kept",
        "L3.json: grid[7][5] draws the sword but items.sword is [8, 8]; the grid's cell is used",
    ]
    assert caplog.records == [], "the caller reports the warnings it collects"
    with caplog.at_level(logging.WARNING):
        MazeLevel.from_json(data, source="L3.json")
    assert [r.getMessage() for r in caplog.records] == warnings
    assert (1, 1) in level.coins and (4, 4) in level.monsters and level.items["sword"] == (7, 5)


def test_a_folder_loads_every_entry_and_warns_per_defect(release_dir: Path) -> None:
    found = load_level_path(release_dir)
    assert [e.id for e in found.entries] == [
        "match2-match_game-easy-level01",
        "match2-match_game-hard-level01",
        "maze-maze_eval-Level_1_1",
        "maze-maze_eval-Level_3_2",
        "maze-maze_eval-Level_3_10",
    ]
    assert [e.level.difficulty for e in found.of("match2")] == ["easy", "hard"]  # type: ignore[union-attr]
    assert [e.level.level for e in found.of("maze")] == [1, 3, 3]  # type: ignore[union-attr]
    eval_dir, train_dir = release_dir / "maze_eval", release_dir / "maze_train"
    assert found.warnings == (
        f"{eval_dir / 'Level_2_1.json'}: not valid JSON (Expecting property name enclosed in "
        "double quotes, line 1); refused",
        f"{eval_dir / 'Level_3_10.json'}: coins[5] [4, 4] is not drawn on the grid "
        "(grid[4][4]); kept",
        f"{train_dir / 'Level_1_1.json'}: coins[5]: [1, 1] is on another coin; refused",
    )


def test_a_collection_file_gives_numbered_entries(tmp_path: Path) -> None:
    easy = release_maze(EASY, "Level 1")
    other = {**easy, "coins": easy["coins"][:4]}
    path = write(tmp_path / "Level_1_collection.json", [easy, other, easy])
    found = load_level_path(path)
    assert [e.id for e in found.entries] == [
        "maze-Level_1_collection-001",
        "maze-Level_1_collection-002",
    ]
    assert found.entries[1].source == f"{path}[1]"
    # The coin the list dropped is still drawn on the grid: one warning, the coin kept.
    assert found.warnings == (f"{path}[1]: grid[5][6] draws a coin that coins does not list; kept",)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing", "levels: '.*missing' does not exist"),
        ("empty", "levels: no playable level under '.*empty' \\(no \\*.json files\\)"),
    ],
)
def test_an_unusable_levels_path_is_refused(tmp_path: Path, path: str, message: str) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=message):
        load_level_path(tmp_path / path)


async def test_levels_option_replaces_the_splits_and_plays_to_the_end(
    release_dir: Path, tmp_path: Path
) -> None:
    bench = EEBBenchmark(levels=str(release_dir))
    assert len(bench.instances("test")) == 5
    assert [i.id for i in bench.instances("match2")] == [
        "match2-match_game-easy-level01",
        "match2-match_game-hard-level01",
    ]
    assert [i.params["level"] for i in bench.instances("maze")] == [1, 3, 3]
    spec = RunSpec(
        benchmark="eeb",
        split="test",
        agent="reference",
        benchmark_options={"levels": str(release_dir)},
    )
    result = await execute_run(spec, RunOptions(progress=False), runs_dir=tmp_path)
    metrics = result.metrics["metrics"]
    assert metrics["by_group"]["maze-all"]["episodes"] == 3
    assert metrics["by_group"]["match2-all"]["episodes"] == 2
    assert metrics["maze_success_rate"] == 1.0
    assert result.metrics["episodes"]["errored"] == 0


def test_levels_option_splits_training_from_held_out_levels(release_dir: Path) -> None:
    # The fixture's only training maze is refused (a coin on a coin): add a playable one.
    write(release_dir / "maze_train" / "Level_2_1.json", release_maze(EASY, "Level 2"))
    bench = EEBBenchmark(levels=str(release_dir))
    held_out_mazes = [
        "maze-maze_eval-Level_1_1",
        "maze-maze_eval-Level_3_2",
        "maze-maze_eval-Level_3_10",
    ]
    boards = ["match2-match_game-easy-level01", "match2-match_game-hard-level01"]
    ids = {split: [i.id for i in bench.select_instances(split, None)] for split in bench.splits}
    assert ids == {
        "test": boards + held_out_mazes,
        "maze": held_out_mazes,
        "match2": boards,
        "maze-train": ["maze-maze_train-Level_2_1"],
    }
    (train,) = bench.select_instances("maze-train", None)
    assert (train.split, train.params["level"]) == ("maze-train", 2)
    assert bench.instance("maze-maze_train-Level_2_1") == train
    assert [i.id for i in bench.sample_instances("maze-train", 5)] == ids["maze-train"]


def test_a_split_the_levels_path_cannot_fill_is_refused(release_dir: Path) -> None:
    bench = EEBBenchmark(levels=str(release_dir))
    assert len(bench.instances("maze-train")) == 0  # listing stays quiet (instance lookups)
    with pytest.raises(ConfigError) as refused:
        bench.select_instances("maze-train", None)
    assert str(refused.value) == (
        f"levels: {str(release_dir)!r} holds no training maze for split 'maze-train' (it holds "
        "2 held-out match-2 boards, 3 held-out mazes; training levels are those in a folder "
        "whose name contains 'train', as the release's maze_train)"
    )
    with pytest.raises(ConfigError, match="no training maze for split 'maze-train'"):
        bench.sample_instances("maze-train", 1)
    train_only = release_dir / "only" / "maze_train"
    write(train_only / "Level_1_1.json", release_maze(EASY, "Level 1"))
    bench = EEBBenchmark(levels=str(train_only))
    assert [i.id for i in bench.select_instances("maze-train", None)] == ["maze-Level_1_1"]
    for split, what in (
        ("test", "held-out level"),
        ("maze", "held-out maze"),
        ("match2", "held-out match-2 board"),
    ):
        with pytest.raises(ConfigError) as refused:
            bench.select_instances(split, None)
        assert str(refused.value).startswith(
            f"levels: {str(train_only)!r} holds no {what} for split {split!r} (it holds 1 "
            "training maze; "
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"levels": ""}, "levels"),
        ({"levels": "x", "geometry": "release"}, "levels replaces the maze levels"),
        ({"geometry": "release", "maze_size": 9}, "geometry=release sets the maze sizes"),
        ({"geometry": "huge"}, "geometry"),
        ({"scoring": "table5"}, "scoring"),
    ],
)
def test_bad_level_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        EEBBenchmark(**options)


def test_release_geometry_generates_the_release_sizes_and_wall_density() -> None:
    bench = EEBBenchmark(geometry="release")
    sizes = {i.params["level"]: bench.level(i).size for i in bench.instances("maze")}
    assert sizes == dict(RELEASE_SIZES) == {1: 7, 2: 9, 3: 11}
    walls = {
        level: len(generate_release_geometry_level(level, 1000 * level).walls)
        for level in (1, 2, 3)
    }
    assert walls == {1: 7, 2: 11, 3: 16}
    assert bench.level(bench.instance("maze-l3-000")) == generate_release_geometry_level(3, 3000)


def test_table4_scoring_drops_the_life_penalty_and_pays_kills() -> None:
    metrics = {"score": 1290, "remaining_hp": 1, "kills": 2}
    assert table4_score(metrics) == 1290 + 2 * 1000 + 2 * 500
