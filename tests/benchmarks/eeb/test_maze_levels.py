"""Maze levels: generator, shipped dataset, our file format and the paper artifact's."""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.eeb.maze_levels import (
    COINS_PER_MAP,
    ITEM_NAMES,
    MONSTER_MIN_START_DISTANCE,
    WALL_DENSITY,
    MazeLevel,
    build_maze_dataset,
    dump_level,
    generate_maze_level,
    load_maze_level,
    load_maze_split,
    maze_dataset_specs,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

SHIPPED = Path(str(files("forkingpaths.benchmarks.eeb") / "data" / "maze"))


def artifact_level() -> dict[str, Any]:
    """A level in the artifact's keys: integer grid, lists, items, mode."""
    grid = [[0] * 9 for _ in range(9)]
    grid[7][2] = 1
    return {
        "grid_size": 9,
        "grid": grid,
        "obstacles": [[7, 2], [4, 4]],
        "coins": [[8, 2], [0, 0], [5, 5], [2, 6], [6, 1]],
        "monsters": [[3, 3], [1, 7]],
        "items": {"pickaxe": [6, 6], "sword": [4, 0], "magnet": [0, 4], "key": [2, 2]},
        "mode": "hard",
    }


# ---- the generator ----


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generator_is_deterministic_and_seed_sensitive(level: int) -> None:
    assert generate_maze_level(level, 42) == generate_maze_level(level, 42)
    assert generate_maze_level(level, 42) != generate_maze_level(level, 43)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generated_content_follows_table_2(level: int) -> None:
    for seed in range(20):
        maze = generate_maze_level(level, seed)
        assert maze.size == 9 and maze.level == level
        assert maze.start == (8, 0) and maze.goal == (0, 8)
        assert len(maze.coins) == COINS_PER_MAP
        assert len(maze.walls) == round(WALL_DENSITY[level] * 81)
        assert len(maze.monsters) == (0 if level == 1 else 2)
        assert sorted(maze.items) == (sorted(ITEM_NAMES) if level == 3 else [])
        for r, c in maze.monsters:
            assert abs(r - 8) + c >= MONSTER_MIN_START_DISTANCE
        assert maze.meta["seed"] == seed


def test_generator_accepts_other_sizes_and_refuses_bad_arguments() -> None:
    small = generate_maze_level(3, 1, size=7)
    assert small.size == 7 and small.start == (6, 0) and small.goal == (0, 6)
    assert_reachable(small)
    with pytest.raises(ConfigError, match="level"):
        generate_maze_level(4, 1)
    with pytest.raises(ConfigError, match="size"):
        generate_maze_level(1, 1, size=4)
    with pytest.raises(ConfigError, match="seed"):
        generate_maze_level(1, "1")  # type: ignore[arg-type]


def assert_reachable(maze: MazeLevel) -> None:
    """Goal reachable; coins, items (the key included) reachable without entering the goal."""
    assert maze.goal in maze.reachable(maze.start)
    before_goal = maze.reachable(maze.start, avoid=[maze.goal])
    for cell in (*maze.coins, *maze.items.values(), *maze.monsters):
        assert cell in before_goal


# ---- the shipped dataset ----


def test_shipped_files_equal_what_the_generator_produces_now(tmp_path: Path) -> None:
    written = build_maze_dataset(tmp_path)
    assert len(written) == 120
    produced = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in written}
    shipped = {
        p.relative_to(SHIPPED).as_posix(): p.read_bytes()
        for p in SHIPPED.rglob("*.json")
        if p.is_file()
    }
    assert sorted(shipped) == sorted(produced)
    for rel, content in produced.items():
        assert shipped[rel] == content, f"{rel} differs from generate_maze_level's output"


def test_all_shipped_levels_load_and_are_reachable() -> None:
    test = load_maze_split("test")
    train = load_maze_split("train")
    assert len(test) == 90 and len(train) == 30
    for level in (1, 2, 3):
        ids_levels = load_maze_split("test", level)
        assert len(ids_levels) == 30
        assert all(maze.level == level for _, maze in ids_levels)
    assert {maze.level for _, maze in train} == {1, 2, 3}
    seeds = [maze.meta["seed"] for _, maze in test + train]
    assert len(set(seeds)) == 120
    for _, maze in test + train:
        assert_reachable(maze)
    assert test[0][0] == "test/level1/000"
    assert load_maze_split("test", 2)[7][1].meta["seed"] == 2007


def test_dataset_specs_document_the_seeds() -> None:
    specs = maze_dataset_specs()
    assert ("test/level3/029.json", 3, 3029) in specs
    assert ("train/004.json", 2, 9004) in specs
    with pytest.raises(ConfigError, match="split"):
        load_maze_split("dev")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="level"):
        load_maze_split("test", 0)


# ---- our format ----


def test_to_json_round_trips() -> None:
    for level in (1, 2, 3):
        maze = generate_maze_level(level, 5)
        data = json.loads(dump_level(maze))
        assert data == maze.to_json()
        again = MazeLevel.from_json(data)
        assert again == maze and again.meta["seed"] == 5
        assert data["mode"] == {1: "easy", 2: "medium", 3: "hard"}[level]


def test_load_maze_level_reads_a_file_and_refuses_broken_ones(tmp_path: Path) -> None:
    maze = generate_maze_level(2, 1)
    path = tmp_path / "level.json"
    path.write_text(dump_level(maze), encoding="utf-8")
    assert load_maze_level(path) == maze
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidFile, match="not valid JSON"):
        load_maze_level(path)
    with pytest.raises(InvalidFile, match="cannot read"):
        load_maze_level(tmp_path / "missing.json")


# ---- the artifact's format ----


def test_artifact_level_loads() -> None:
    maze = MazeLevel.from_artifact(artifact_level(), source="artifact")
    assert maze.size == 9 and maze.level == 3
    assert maze.start == (8, 0) and maze.goal == (0, 8)
    assert maze.walls == {(7, 2), (4, 4)}  # the grid's wall and the obstacles list, merged
    assert maze.coins == ((8, 2), (0, 0), (5, 5), (2, 6), (6, 1))
    assert maze.monsters == ((3, 3), (1, 7))
    assert maze.items == {"shovel": (6, 6), "sword": (4, 0), "magnet": (0, 4), "key": (2, 2)}


def test_artifact_character_grid_and_level_inference() -> None:
    rows = ["....G", ".C.M.", "..#..", ".K...", "S...."]
    maze = MazeLevel.from_json({"grid": rows})
    assert maze.size == 5 and maze.level == 3  # an item means level 3
    assert maze.coins == ((1, 1),) and maze.monsters == ((1, 3),)
    assert maze.items == {"key": (3, 1)} and maze.walls == {(2, 2)}
    assert MazeLevel.from_json({"grid": ["...G", ".M..", "....", "A..."]}).level == 2
    assert MazeLevel.from_json({"grid_size": 4}).level == 1
    for mode, level in (("level_2", 2), ("1", 1), (3, 3), ("Medium", 2), ("level3", 3)):
        assert MazeLevel.from_json({"grid_size": 4, "mode": mode}).level == level
    as_lists = MazeLevel.from_json({"grid": [list(row) for row in rows], "grid_size": [5, 5]})
    assert as_lists == maze


def mutate(path: str, value: Any) -> dict[str, Any]:
    """artifact_level() with the field at `path` ("items.key", "grid.3") set (or removed)."""
    data = copy.deepcopy(artifact_level())
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    key: Any = int(last) if isinstance(target, list) else last
    if value is _REMOVE:
        del target[key]
    else:
        target[key] = value
    return data


_REMOVE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("grid_size", 0, "grid_size must be an integer"),
        ("grid_size", [9, 8], "grid_size must be an integer"),
        ("grid_size", "9", "grid_size must be an integer"),
        ("grid", [[0] * 9] * 8, r"grid must have 9 rows \(grid_size\), got 8 rows"),
        ("grid.3", [0] * 10, r"grid\[3\] must have 9 cells"),
        ("grid.2.5", 11, r"grid\[2\]\[5\]: unknown integer cell 11; the release's codes are 0-10"),
        ("grid.2.5", "X", r"grid\[2\]\[5\]: unknown cell"),
        ("obstacles", "walls", "obstacles: expected a list"),
        ("obstacles.1", [4], r"obstacles\[1\]: expected \[row, col\]"),
        ("obstacles.1", [9, 0], r"obstacles\[1\]: \[9, 0\] is off the 9x9 grid"),
        ("obstacles.1", [8, 0], r"obstacles: \[8, 0\] is the start or the goal"),
        ("coins.2", [-1, 3], r"coins\[2\]: \[-1, 3\] is off the 9x9 grid"),
        ("coins.2", [4, 4], r"coins\[2\]: \[4, 4\] is on a wall"),
        ("coins.2", [0, 8], r"coins\[2\]: \[0, 8\] is on the goal"),
        ("coins.2", [0, 0], r"coins\[2\]: \[0, 0\] is on another coin"),
        ("monsters.0", [3, 9], r"monsters\[0\]: \[3, 9\] is off the 9x9 grid"),
        ("monsters.0", [8, 0], r"monsters\[0\]: \[8, 0\] is on the start"),
        ("monsters.1", [3, 3], r"monsters\[1\]: \[3, 3\] is on another monster"),
        ("items", ["sword"], "items must be an object"),
        ("items.bow", [1, 1], "items.bow: unknown item 'bow'; allowed: shovel, sword"),
        ("items.shovel", [1, 1], "items.shovel: shovel is given twice"),
        ("items.key", [9, 9], r"items.key: \[9, 9\] is off the 9x9 grid"),
        ("items.key", [7, 2], r"items.key: \[7, 2\] is on a wall"),
        ("items.key", [8, 2], r"items.key: \[8, 2\] is on a coin"),
        ("items.key", [6, 6], r"items.key: \[6, 6\] is on the shovel"),
        ("mode", "nightmare", 'mode "nightmare" is not a level; allowed: 1-3'),
        ("level", 2, "level 2 and mode 3 disagree"),
        ("start", [4, 4], r"obstacles: \[4, 4\] is the start or the goal"),
        ("start", [0, 8], "start and goal are the same cell"),
        ("goal", "top-right", r"goal: expected \[row, col\]"),
        ("schema_version", 2, "schema_version 2 is not supported"),
    ],
)
def test_malformed_level_files_name_the_field(path: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidFile, match=message) as error:
        MazeLevel.from_json(mutate(path, value), source="bad.json")
    assert str(error.value).startswith("bad.json: ")


def test_malformed_top_level_and_grid_only_errors() -> None:
    with pytest.raises(InvalidFile, match="expected a JSON object"):
        MazeLevel.from_json([1, 2], source="bad.json")
    with pytest.raises(InvalidFile, match="missing field 'grid_size'"):
        MazeLevel.from_json({"coins": []}, source="bad.json")
    with pytest.raises(InvalidFile, match="a second key"):
        MazeLevel.from_json({"grid": ["K..G", "....", "K...", "S..."]})
    with pytest.raises(InvalidFile, match="a second start"):
        MazeLevel.from_json({"grid": ["...G", "....", "...S", "S..."]})
    with pytest.raises(InvalidFile, match="goal is"):
        MazeLevel.from_json({"grid": ["...G", "....", "....", "S..."], "goal": [0, 0]})


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(ConfigError, match="size must be an integer 3-30"):
        MazeLevel(size=2, start=(1, 0), goal=(0, 1), walls=frozenset(), coins=())
    with pytest.raises(ConfigError, match="level must be 1, 2 or 3"):
        MazeLevel(size=3, start=(2, 0), goal=(0, 2), walls=frozenset(), coins=(), level=4)
    with pytest.raises(ConfigError, match=r"items: unknown item 'bow'"):
        MazeLevel(
            size=3, start=(2, 0), goal=(0, 2), walls=frozenset(), coins=(), items={"bow": (1, 1)}
        )
