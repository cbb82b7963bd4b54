"""Tests of the SQLite response cache: keys, round trips, WAL, two processes writing at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from forkingpaths.core.chat import Completion, Message, ModelParams, Usage
from forkingpaths.core.errors import ConfigError
from forkingpaths.models.cache import ResponseCache, cache_key

MESSAGES = [Message(role="user", content="hi")]


def answer(text: str) -> Completion:
    return Completion(
        text=text,
        model="openai/gpt-4.1",
        usage=Usage(prompt_tokens=3, completion_tokens=2),
        latency_s=0.5,
        cost_usd=0.01,
        attempts=2,
        finish_reason="stop",
    )


def test_key_is_stable_and_covers_every_part_of_the_request() -> None:
    base = cache_key("openai/gpt-4.1", None, MESSAGES, ModelParams())
    assert base == cache_key("openai/gpt-4.1", None, list(MESSAGES), ModelParams())
    variants = [
        cache_key("openai/gpt-4o", None, MESSAGES, ModelParams()),
        cache_key("openai/gpt-4.1", "http://x/v1", MESSAGES, ModelParams()),
        cache_key("openai/gpt-4.1", None, [Message(role="user", content="hi!")], ModelParams()),
        cache_key("openai/gpt-4.1", None, [Message(role="system", content="hi")], ModelParams()),
        cache_key("openai/gpt-4.1", None, MESSAGES, ModelParams(seed=1)),
        cache_key("openai/gpt-4.1", None, MESSAGES, ModelParams(max_tokens=5)),
        cache_key("openai/gpt-4.1", None, MESSAGES, ModelParams(extra={"top_k": 1})),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert len(base) == 64


def test_round_trip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    cache = ResponseCache(path)
    assert cache.get("k") is None
    cache.put("k", answer("stored"))
    assert cache.get("k") == answer("stored")
    cache.put("k", answer("newer"))
    assert cache.get("k") == answer("newer") and len(cache) == 1
    cache.close()
    assert ResponseCache(path).get("k") == answer("newer")


def test_file_uses_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).put("k", answer("x"))
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unreadable_entries_count_as_misses(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put("k", answer("x"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE completions_v1 SET completion = '{broken'")
    assert cache.get("k") is None


def test_unwritable_location_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="--no-cache"):
        ResponseCache(blocker / "cache.sqlite").get("k")


def test_two_processes_write_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    writer = textwrap.dedent(
        f"""
        from forkingpaths.core.chat import Completion
        from forkingpaths.models.cache import ResponseCache
        cache = ResponseCache({str(path)!r})
        for i in range(200):
            cache.put(f"child-{{i}}", Completion(text=str(i), model="m/m"))
            cache.get(f"parent-{{i}}")
        """
    )
    child = subprocess.Popen([sys.executable, "-c", writer])
    cache = ResponseCache(path)
    for i in range(200):
        cache.put(f"parent-{i}", answer(str(i)))
        cache.get(f"child-{i}")
    assert child.wait(timeout=60) == 0
    assert len(cache) == 400
    assert cache.get("child-199") == Completion(text="199", model="m/m")


@pytest.mark.parametrize("where", ["folder", "parent", "cache-file"])
def test_a_location_that_cannot_hold_the_file_is_refused_at_construction(
    tmp_path: Path, where: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    path = {
        "folder": blocker / "responses.sqlite",
        "parent": blocker / "deeper" / "responses.sqlite",
        "cache-file": tmp_path,  # a folder where the file should be
    }[where]
    with pytest.raises(ConfigError) as info:
        ResponseCache(path)
    problem = f"'{tmp_path}' is a folder, not the cache file"
    if where != "cache-file":
        problem = f"'{blocker}' is a file, not a folder"
    assert str(info.value) == (
        f"response cache '{path}': {problem}; set FORKINGPATHS_CACHE_DIR to a writable folder or"
        " turn the cache off (--no-cache)"
    )
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_at_construction(tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(ConfigError, match="is not writable"):
            ResponseCache(tmp_path / "cache" / "responses.sqlite")
    finally:
        tmp_path.chmod(0o755)
