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
from forkingpaths.models.cache import ResponseCache, cache_key, merge_caches

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


def test_processes_opening_a_new_file_at_once_all_get_it(tmp_path: Path) -> None:
    # Ray workers of one machine open its node file together; one of them switching the new
    # file to WAL must not fail the others ("database is locked").
    path = tmp_path / "fresh" / "responses.node-host.sqlite"
    opener = textwrap.dedent(
        f"""
        import sys
        from forkingpaths.core.chat import Completion
        from forkingpaths.models.cache import ResponseCache
        ResponseCache({str(path)!r}).put(sys.argv[1], Completion(text=sys.argv[1], model="m/m"))
        """
    )
    children = [
        subprocess.Popen([sys.executable, "-c", opener, f"k{n}"], stderr=subprocess.PIPE)
        for n in range(8)
    ]
    for child in children:
        assert child.wait(timeout=120) == 0, child.stderr.read().decode()[-2000:]
    assert len(ResponseCache(path)) == 8


def test_a_file_locked_while_another_process_sets_it_up_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two processes switching a new file to WAL at once: SQLite answers one of them "locked"
    # at once (a deadlock its busy timeout does not wait out). The loser tries again.
    real_connect = sqlite3.connect
    refusals = []

    class Racing:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, sql: str, *args: object) -> object:
            if sql.startswith("PRAGMA journal_mode") and len(refusals) < 2:
                refusals.append(sql)
                raise sqlite3.OperationalError("database is locked")
            return self.conn.execute(sql, *args)

        def close(self) -> None:
            self.conn.close()

    monkeypatch.setattr(
        "forkingpaths.models.cache.sqlite3.connect", lambda *a, **k: Racing(real_connect(*a, **k))
    )
    cache = ResponseCache(tmp_path / "responses.node-host.sqlite")
    cache.put("k", answer("x"))
    assert len(refusals) == 2 and cache.get("k").text == "x"
    # Anything but "locked" is not waited on: one line naming the file.
    refusals.clear()
    monkeypatch.setattr(
        "forkingpaths.models.cache.sqlite3.connect",
        lambda *a, **k: (_ for _ in ()).throw(sqlite3.OperationalError("disk I/O error")),
    )
    with pytest.raises(ConfigError, match=r"cannot be opened \(disk I/O error"):
        ResponseCache(tmp_path / "other.sqlite").get("k")


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


def test_a_node_file_reads_the_shared_file_and_writes_only_itself(tmp_path: Path) -> None:
    shared = ResponseCache(tmp_path / "responses.sqlite")
    shared.put("old", answer("from before"))
    node = ResponseCache(tmp_path / "responses.node-a.sqlite", also_read=shared.path)
    assert node.get("old").text == "from before"
    node.put("new", answer("from the node"))
    assert shared.get("new") is None and len(shared) == 1
    assert ResponseCache(tmp_path / "x.sqlite", also_read=tmp_path / "missing").get("k") is None


def test_merge_joins_node_files_keeps_first_answers_and_is_idempotent(tmp_path: Path) -> None:
    a = ResponseCache(tmp_path / "responses.node-a.sqlite")
    b = ResponseCache(tmp_path / "responses.node-b.sqlite")
    a.put("k1", answer("a1"))
    a.put("both", answer("from a"))
    b.put("k2", answer("b2"))
    b.put("both", answer("from b"))
    into = tmp_path / "responses.sqlite"
    ResponseCache(into).put("both", answer("already here"))
    result = merge_caches([a.path, b.path], into)
    assert (result.added, result.already, result.total) == (2, 2, 4)
    merged = ResponseCache(into)
    assert {k: merged.get(k).text for k in ("k1", "k2", "both")} == {
        "k1": "a1",
        "k2": "b2",
        "both": "already here",
    }
    again = merge_caches([a.path, b.path], into)
    assert (again.added, again.already) == (0, 4)
    assert a.path.exists() and b.path.exists()  # sources are kept


def test_merge_refuses_what_is_not_a_cache_before_writing(tmp_path: Path) -> None:
    good = ResponseCache(tmp_path / "responses.node-a.sqlite")
    good.put("k", answer("x"))
    (tmp_path / "notes.txt").write_text("hello")
    into = tmp_path / "responses.sqlite"
    for bad, why in [
        (tmp_path / "notes.txt", "not a forkingpaths response cache"),
        (tmp_path / "absent.sqlite", "no such file"),
        (tmp_path, "not a file"),
    ]:
        with pytest.raises(ConfigError, match=why):
            merge_caches([good.path, bad], into)
    assert not into.exists()


def test_cache_merge_cli(tmp_path: Path) -> None:
    for node in ("a", "b"):
        ResponseCache(tmp_path / f"responses.node-{node}.sqlite").put(node, answer(node))
    env = {**os.environ, "FORKINGPATHS_CACHE_DIR": str(tmp_path)}
    cli = [sys.executable, "-m", "forkingpaths.cli", "cache", "merge"]
    out = subprocess.run(cli, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "merged 2 files" in out.stdout and "2 new answers, 0 already there" in out.stdout
    assert len(ResponseCache(tmp_path / "responses.sqlite")) == 2
    (tmp_path / "bad.sqlite").write_text("not sqlite")
    bad = subprocess.run(
        [*cli, str(tmp_path / "bad.sqlite")], env=env, capture_output=True, text=True, check=False
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "bad.sqlite" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    none = subprocess.run(
        cli, env={**env, "FORKINGPATHS_CACHE_DIR": str(empty)}, capture_output=True, text=True
    )
    assert none.returncode != 0 and "no per-node cache files" in none.stderr
