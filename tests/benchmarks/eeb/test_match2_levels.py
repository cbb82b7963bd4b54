"""Match-2 levels: Table 2 ranges, deterministic generator, shipped data, artifact format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.eeb.match2_levels import (
    COLOURS,
    MATCH2_DATA,
    MATCH2_DIFFICULTIES,
    MATCH2_TEST_SEEDS,
    PROPS,
    Match2Level,
    build_match2_dataset,
    generate_match2_level,
    has_legal_elimination,
    level_json_text,
    load_match2_level,
    load_match2_split,
)
from forkingpaths.core.errors import ConfigError, InvalidFile

BOARD = [
    "CDDABBCB",
    "CCCBAABC",
    "ABBCBDBD",
    "CCBABBAB",
    "BDCBADAB",
    "ABBDACAA",
    "DBACCDBD",
    "DBAAACBD",
]
"""The easy level's first board in App. D."""


def artifact(**overrides: Any) -> dict[str, Any]:
    """A level object in the released artifact's format (no difficulty, no meta)."""
    data: dict[str, Any] = {
        "board": list(BOARD),
        "max_steps": 15,
        "inventory": {"row": 0, "col": 1, "bomb": 2, "hammer": 1},
        "color_targets": {"A": 10, "B": 6, "C": 8, "D": 6},
    }
    data.update(overrides)
    return data


# ---- shipped data ----


def test_shipped_files_equal_the_generator_output(tmp_path: Path) -> None:
    written = build_match2_dataset(tmp_path)
    assert len(written) == 90
    for path in written:
        shipped = MATCH2_DATA / path.relative_to(tmp_path)
        assert shipped.read_text() == path.read_text(), shipped


def test_shipped_split_loads_90_levels_in_order() -> None:
    levels = load_match2_split("test")
    assert len(levels) == 90
    expected = [f"{d}/{s:03d}" for d in MATCH2_DIFFICULTIES for s in MATCH2_TEST_SEEDS]
    assert list(levels) == expected


def test_shipped_levels_respect_table_2_ranges() -> None:
    for key, level in load_match2_split("test").items():
        difficulty = key.split("/")[0]
        ranges = MATCH2_DIFFICULTIES[difficulty]
        assert level.difficulty == difficulty
        assert ranges.steps[0] <= level.max_steps <= ranges.steps[1], key
        assert set(level.color_targets) == set(COLOURS)
        for colour, target in level.color_targets.items():
            assert ranges.target[0] <= target <= ranges.target[1], (key, colour)
        assert level.inventory == dict.fromkeys(PROPS, 1)
        assert has_legal_elimination(level.board), key


def test_generator_spans_the_ranges() -> None:
    # 30 draws per difficulty reach both ends of each 4-6 value range.
    for difficulty, ranges in MATCH2_DIFFICULTIES.items():
        levels = [generate_match2_level(difficulty, s) for s in MATCH2_TEST_SEEDS]
        assert {lv.max_steps for lv in levels} == set(range(ranges.steps[0], ranges.steps[1] + 1))
        targets = {t for lv in levels for t in lv.color_targets.values()}
        assert targets == set(range(ranges.target[0], ranges.target[1] + 1))


def test_generator_is_deterministic_and_seeds_differ() -> None:
    assert generate_match2_level("medium", 3) == generate_match2_level("medium", 3)
    assert generate_match2_level("medium", 3).board != generate_match2_level("medium", 4).board
    assert generate_match2_level("easy", 3).board != generate_match2_level("hard", 3).board


@pytest.mark.parametrize(
    ("difficulty", "seed", "field"),
    [("extreme", 0, "difficulty"), ("easy", -1, "seed"), ("easy", "1", "seed")],
)
def test_generator_refuses_bad_arguments(difficulty: Any, seed: Any, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        generate_match2_level(difficulty, seed)


def test_unknown_split_is_refused_with_the_available_ones() -> None:
    with pytest.raises(ConfigError, match=r"'train' not found .* available: test"):
        load_match2_split("train")


# ---- the artifact format ----


def test_artifact_level_with_string_rows_loads() -> None:
    level = Match2Level.from_json(artifact(), source="lv.json")
    assert level.board == tuple(BOARD)
    assert level.max_steps == 15
    assert level.inventory == {"row": 0, "col": 1, "bomb": 2, "hammer": 1}
    assert level.color_targets == {"A": 10, "B": 6, "C": 8, "D": 6}
    assert level.difficulty == "custom"


def test_artifact_level_with_list_rows_loads_to_the_same_level() -> None:
    as_lists = Match2Level.from_json(artifact(board=[list(row) for row in BOARD]))
    assert as_lists == Match2Level.from_json(artifact())


def test_spaced_rows_missing_counts_and_extra_keys_are_accepted() -> None:
    data = artifact(
        board=[" ".join(row) for row in BOARD],
        inventory={"bomb": 1},
        color_targets={"A": 5},
        level_id=7,
    )
    level = Match2Level.from_json(data)
    assert level.board == tuple(BOARD)
    assert level.inventory == {"row": 0, "col": 0, "bomb": 1, "hammer": 0}
    assert level.color_targets == {"A": 5, "B": 0, "C": 0, "D": 0}


def test_json_round_trip_keeps_difficulty_and_meta() -> None:
    level = generate_match2_level("hard", 5)
    again = Match2Level.from_json(json.loads(level_json_text(level)))
    assert again == level and again.meta == {"generator": "eeb-match2-v1", "seed": 5}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"board": "CDDABBCB"}, r"lv\.json\.board must be a list"),
        ({"board": BOARD[:7]}, r"lv\.json\.board has 7 rows"),
        ({"board": [*BOARD[:3], "CDDABBC", *BOARD[4:]]}, r"lv\.json\.board\[3\] has 7 tiles"),
        ({"board": [*BOARD[:2], "CDDABBCBA", *BOARD[3:]]}, r"lv\.json\.board\[2\] has 9 tiles"),
        ({"board": [*BOARD[:5], "ABBDAEAA", *BOARD[6:]]}, r"board\[5\]\[5\] is \"E\"; colours"),
        ({"board": [list(r) for r in BOARD[:7]] + [[None] * 8]}, r"board\[7\]\[0\] is null"),
        ({"board": [*BOARD[:1], 12345678, *BOARD[2:]]}, r"lv\.json\.board\[1\] must be a"),
        ({"board": [*BOARD[:1], "cddabbcb", *BOARD[2:]]}, r"board\[1\]\[0\] is \"c\""),
        ({"max_steps": 0}, r"lv\.json\.max_steps must be a positive integer, got 0"),
        ({"max_steps": "15"}, r"lv\.json\.max_steps must be a positive integer"),
        ({"color_targets": {"A": -1}}, r"lv\.json\.color_targets\.A must be a non-negative"),
        ({"color_targets": {"E": 3}}, r"color_targets has unknown key 'E'; allowed: A, B, C, D"),
        ({"color_targets": {"A": 0}}, r"color_targets are all 0"),
        ({"color_targets": [10, 6, 8, 6]}, r"lv\.json\.color_targets must be an object"),
        ({"inventory": {"row": -2}}, r"lv\.json\.inventory\.row must be a non-negative"),
        ({"inventory": {"rocket": 1}}, r"inventory has unknown key 'rocket'; allowed: row, col"),
        ({"inventory": {"bomb": True}}, r"inventory\.bomb must be a non-negative integer"),
        ({"difficulty": "extreme"}, r"lv\.json\.difficulty is \"extreme\"; allowed: easy"),
        ({"meta": "x"}, r"lv\.json: meta must be an object"),
    ],
)
def test_malformed_levels_are_refused_naming_the_field(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidFile, match=message):
        Match2Level.from_json(artifact(**overrides), source="lv.json")


@pytest.mark.parametrize("field", ["board", "max_steps", "inventory", "color_targets"])
def test_missing_fields_are_named(field: str) -> None:
    data = artifact()
    del data[field]
    with pytest.raises(InvalidFile, match=rf"lv\.json: missing field '{field}'"):
        Match2Level.from_json(data, source="lv.json")


def test_non_object_is_refused() -> None:
    with pytest.raises(InvalidFile, match="expected a JSON object, got list"):
        Match2Level.from_json([BOARD])


def test_level_files_load_and_bad_files_are_named(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(artifact()))
    assert load_match2_level(good).board == tuple(BOARD)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InvalidFile, match=r"broken\.json: not valid JSON"):
        load_match2_level(broken)
    with pytest.raises(InvalidFile, match=r"missing\.json: cannot read"):
        load_match2_level(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(artifact(max_steps=-3)))
    with pytest.raises(InvalidFile, match=r"bad\.json\.max_steps"):
        load_match2_level(bad)


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(ConfigError, match=r"Match2Level\.board has 2 rows"):
        Match2Level(
            board=("AAAAAAAA", "BBBBBBBB"), max_steps=3, inventory={}, color_targets={"A": 1}
        )


def test_has_legal_elimination() -> None:
    checker = ["ABABABAB", "CDCDCDCD"] * 4
    assert not has_legal_elimination(checker)
    assert has_legal_elimination(["AABABABA", *checker[1:]])
    assert has_legal_elimination([checker[0], "ADCDCDCD", *checker[2:]])
