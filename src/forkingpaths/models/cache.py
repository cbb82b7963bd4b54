"""SQLite response cache: a Completion stored under the hash of the full request."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from forkingpaths.core.chat import Completion, Message, ModelParams
from forkingpaths.core.errors import ConfigError

logger = logging.getLogger(__name__)

CACHE_DIR_ENV = "FORKINGPATHS_CACHE_DIR"
"""Folder of the response cache file when ModelRuntime.cache_path is not given."""

# Bump the table name when Completion's stored shape changes: old rows are then simply ignored.
_TABLE = "completions_v1"


def cache_key(
    model: str, base_url: str | None, messages: list[Message], params: ModelParams
) -> str:
    """sha256 of the canonical JSON of everything that determines the answer."""
    request = {
        "model": model,
        "base_url": base_url,
        "messages": [m.model_dump(mode="json") for m in messages],
        "params": params.model_dump(mode="json"),
    }
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completions by request key in one SQLite file, shared by coroutines, threads and processes.

    WAL mode lets readers proceed while another process writes; each insert is its own short
    transaction, and a busy file is waited on (up to `busy_timeout_s`) instead of failing. The
    connection opens on first use and stays open, so a lookup costs one indexed query.
    """

    def __init__(
        self, path: Path, *, busy_timeout_s: float = 30.0, also_read: Path | None = None
    ) -> None:
        """A location that cannot hold the file (a file where its folder should be, a folder
        where the file should be, an unwritable folder) is a ConfigError naming the path, raised
        here, before any model call; the file itself is opened on first use.

        `also_read`: a second cache file looked in, never written, when `path` has no answer (a
        Ray node's own file reads the shared one too, so answers cached earlier still replay).
        """
        self.path = Path(path)
        self.also_read = Path(also_read) if also_read is not None else None
        self._busy_timeout_s = busy_timeout_s
        self._conn: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        # sqlite3 connections are not safe to share between threads without serialising calls.
        self._lock = threading.Lock()
        self._check_location()

    def _check_location(self) -> None:
        problem = None
        if self.path.is_dir():
            problem = f"{str(self.path)!r} is a folder, not the cache file"
        else:
            # The nearest existing folder on the way up must be a folder this process can write
            # (the file, its write-ahead log and any missing folders are created there).
            nearest = next((p for p in self.path.parents if os.path.lexists(p)), None)
            if nearest is not None and not nearest.is_dir():
                problem = f"{str(nearest)!r} is a file, not a folder"
            elif nearest is not None and not os.access(nearest, os.W_OK | os.X_OK):
                problem = f"folder {str(nearest)!r} is not writable"
        if problem is not None:
            raise ConfigError(
                f"response cache {str(self.path)!r}: {problem}; set {CACHE_DIR_ENV} to a"
                " writable folder or turn the cache off (--no-cache)"
            )

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        deadline = time.monotonic() + self._busy_timeout_s
        while True:
            conn = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path,
                    timeout=self._busy_timeout_s,
                    isolation_level=None,
                    check_same_thread=False,
                )
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL is durable against application crashes in WAL mode; a lost row after a
                # power cut only costs one repeated request.
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {_TABLE} "
                    "(key TEXT PRIMARY KEY, completion TEXT NOT NULL, created REAL NOT NULL)"
                )
                break
            except sqlite3.OperationalError as err:
                if conn is not None:
                    conn.close()
                # Processes opening a new file at once (Ray workers of one machine) can meet
                # "locked" while one of them switches it to WAL, a step SQLite's busy timeout
                # does not cover: try again until the timeout.
                if "locked" in str(err) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise self._unopenable(err) from err
            except (OSError, sqlite3.Error) as err:
                if conn is not None:
                    conn.close()
                raise self._unopenable(err) from err
        self._conn = conn
        return conn

    def _unopenable(self, err: Exception) -> ConfigError:
        return ConfigError(
            f"response cache file {str(self.path)!r} cannot be opened ({err}); set"
            " FORKINGPATHS_CACHE_DIR to a writable folder or turn the cache off (--no-cache)"
        )

    def _second(self) -> sqlite3.Connection | None:
        """The read-only connection to `also_read`, once that file exists with the table."""
        if self._reader is None and self.also_read is not None and self.also_read.is_file():
            try:
                conn = sqlite3.connect(
                    f"{self.also_read.resolve().as_uri()}?mode=ro",
                    uri=True,
                    timeout=self._busy_timeout_s,
                    check_same_thread=False,
                )
                conn.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1")
            except sqlite3.Error:
                return None  # not a cache (yet): looked at again on the next miss
            self._reader = conn
        return self._reader

    def get(self, key: str) -> Completion | None:
        """The stored completion for `key`, or None."""
        query = f"SELECT completion FROM {_TABLE} WHERE key = ?"
        with self._lock:
            row = self._connection().execute(query, (key,)).fetchone()
            if row is None and (reader := self._second()) is not None:
                try:
                    row = reader.execute(query, (key,)).fetchone()
                except sqlite3.Error as err:
                    logger.warning("response cache %s unreadable (%s)", self.also_read, err)
        if row is None:
            return None
        try:
            return Completion.model_validate_json(row[0])
        except ValidationError:
            logger.warning("ignoring unreadable response cache entry %s in %s", key, self.path)
            return None

    def put(self, key: str, completion: Completion) -> None:
        """Store `completion` under `key` (a concurrent writer of the same key simply wins)."""
        with self._lock:
            self._connection().execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, completion, created) VALUES (?, ?, ?)",
                (key, completion.model_dump_json(), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0])

    def close(self) -> None:
        """Close the connections (they reopen on next use)."""
        with self._lock:
            if self._conn is not None:
                # Fold the write-ahead log into the file: a copied file then holds every answer.
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for conn in (self._conn, self._reader):
                if conn is not None:
                    conn.close()
            self._conn = self._reader = None


@dataclass(frozen=True)
class MergeResult:
    """What `merge_caches` did."""

    into: Path
    sources: tuple[Path, ...]
    added: int
    """Answers new to `into`."""
    already: int
    """Answers `into` held already (the first stored answer of a request is kept)."""

    @property
    def total(self) -> int:
        return self.added + self.already


def merge_caches(sources: Iterable[Path], into: Path) -> MergeResult:
    """Copy every answer of `sources` (per-node cache files) into the cache file `into`.

    A request both files answer keeps `into`'s answer, so merging twice adds nothing and a
    merge never changes what a later run replays. Each source is checked to be a cache file
    before anything is written; sources are left in place.
    """
    paths = tuple(Path(p) for p in sources)
    for path in paths:
        _check_cache_file(path)
    target = ResponseCache(Path(into))
    added = already = 0
    try:
        with target._lock:
            conn = target._connection()
            for path in paths:
                if path.resolve() == target.path.resolve():
                    continue
                conn.execute("ATTACH DATABASE ? AS source", (str(path.resolve()),))
                try:
                    conn.execute("BEGIN")
                    total = conn.execute(f"SELECT COUNT(*) FROM source.{_TABLE}").fetchone()[0]
                    cursor = conn.execute(
                        f"INSERT OR IGNORE INTO main.{_TABLE} (key, completion, created) "
                        f"SELECT key, completion, created FROM source.{_TABLE}"
                    )
                    conn.execute("COMMIT")
                finally:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    conn.execute("DETACH DATABASE source")
                added += cursor.rowcount
                already += total - cursor.rowcount
    finally:
        target.close()
    return MergeResult(target.path, paths, added, already)


def _check_cache_file(path: Path) -> None:
    problem = None
    if not path.is_file():
        problem = "no such file" if not path.exists() else "not a file"
    else:
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                conn.execute(f"SELECT key, completion, created FROM {_TABLE} LIMIT 1")
            finally:
                conn.close()
        except sqlite3.Error as err:
            problem = f"not a forkingpaths response cache ({err})"
    if problem is not None:
        raise ConfigError(f"cache file {str(path)!r}: {problem}")
