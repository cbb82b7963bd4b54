"""Byte-offset indexes of a run's episodes and texts: reading one episode reads no whole file."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.records import RECORD_SCHEMA_VERSION, EpisodeRecord, expand_record
from forkingpaths.runner.rundir import EPISODES_FILE, INDEX_FILE, episode_summary, parse_record
from forkingpaths.runner.transcripts import TEXTS_FILE, attach_messages

log = logging.getLogger(__name__)

_BLOCK_BYTES = 16 << 20
"""How much of a file one scan reads at a time."""
_TEXT_ID_PREFIX = b'{"id":"'
_TEXT_ID_CHARS = 14
"""A text-store line starts `{"id":"<14 characters>"`: the store writes the id first."""
_MAX_SEGMENTS = 8
"""Sorted stretches of a text index before they are merged into one."""
_MESSAGE_CACHE = 4096
"""Text-store lines kept parsed per run (a history that every call repeats is read once)."""


_PLACE = ("offset", "length", "instance_id", "trial")
"""What an entry of `EpisodeIndex(summaries=False)` keeps."""


class EpisodeIndex:
    """Where each episode of a run lies in `episodes.jsonl`, with its summary, in the order
    `load_records` gives: a retried episode takes its first attempt's place. Built from the
    run's `episodes.index.jsonl` where that matches the records, by reading the records past it
    otherwise (runs written before the index existed), and extended as a running run appends."""

    def __init__(self, run_path: Path, *, summaries: bool = True) -> None:
        self.path = Path(run_path)
        self.summaries = summaries
        """Keep each episode's summary; without, an entry holds only where the episode lies and
        its key (a reader of every record, such as an export, keeps memory flat in run size)."""
        self._lock = threading.Lock()
        self.version = 0
        """Bumped whenever the entries change (a cache key for their serialised form)."""
        self._reset()

    def _reset(self) -> None:
        self.version += 1
        self._inode: tuple[int, int] | None = None
        self._entries: list[dict[str, Any]] = []
        self._where: dict[tuple[str, int], int] = {}
        self._end = 0  # bytes of episodes.jsonl indexed so far
        self._index_pos = 0  # bytes of episodes.index.jsonl read so far
        self._trust_index = True

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES_FILE

    def entries(self) -> list[dict[str, Any]]:
        """The episodes' summaries, each with its number `n`, offset and length (a copy of the
        list, fresh from disk)."""
        self.refresh()
        return list(self._entries)

    def count(self) -> int:
        self.refresh()
        return len(self._entries)

    def entry(self, number: int) -> dict[str, Any]:
        self.refresh()
        if not 0 <= number < len(self._entries):
            raise KeyError(number)
        return self._entries[number]

    def find(self, instance_id: str, trial: int) -> int | None:
        self.refresh()
        return self._where.get((instance_id, trial))

    def refresh(self) -> None:
        """Take in what was appended since the last look; a file that shrank or was replaced (a
        run deleted and written again) is indexed afresh."""
        with self._lock:
            try:
                stat = self.episodes_path.stat()
            except FileNotFoundError:
                if self._end:
                    self._reset()
                return
            inode = (stat.st_dev, stat.st_ino)
            if stat.st_size < self._end or (self._inode is not None and inode != self._inode):
                self._reset()
            self._inode = inode
            size = stat.st_size
            if size == self._end:
                return
            before = (len(self._entries), self._end)
            if self._trust_index:
                self._read_index(size)
            if self._end < size:
                self._scan_records(size)
            if (len(self._entries), self._end) != before:
                self.version += 1

    def _add(self, entry: dict[str, Any]) -> None:
        if not self.summaries:
            entry = {name: entry[name] for name in _PLACE}
        key = (entry["instance_id"], entry["trial"])
        number = self._where.get(key)
        if number is None:
            number = len(self._entries)
            self._where[key] = number
            self._entries.append(entry)
        else:
            self._entries[number] = entry
        entry["n"] = number
        self._end = entry["offset"] + entry["length"]

    def _read_index(self, size: int) -> None:
        path = self.path / INDEX_FILE
        if not path.exists():
            self._trust_index = False
            return
        with path.open("rb") as handle:
            handle.seek(self._index_pos)
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # being written: read it next time
                try:
                    entry = json.loads(line)
                    offset, length = int(entry["offset"]), int(entry["length"])
                    str(entry["instance_id"]), int(entry["trial"]), entry["metrics"].items()
                    # What a run's list shows of an episode (`episode_summary`): a line written
                    # without it (another version's) sends the reader to the records.
                    str(entry["status"]), int(entry["steps"]), int(entry["calls"])
                    int(entry["tokens"]), entry["outcome"].items(), entry["error"]
                except (ValueError, KeyError, TypeError, AttributeError):
                    self._trust_index = False
                    return
                if offset + length > size:
                    return  # its record is not all on disk yet
                if offset + length <= self._end:
                    # A record already read from the records themselves (the viewer looked
                    # between the record's write and its index line's).
                    self._index_pos += len(line)
                    continue
                if offset > self._end:
                    # Records with no index line (a writer killed between the two writes):
                    # read them, then trust the index again if it lines up.
                    self._scan_records(offset)
                if offset != self._end:
                    self._trust_index = False
                    return
                self._index_pos += len(line)
                self._add(entry)

    def _scan_records(self, size: int) -> None:
        """Index the records from `_end` up to byte `size` (whole lines only), reading each; a
        line that is no record is skipped with a warning, as `load_records` skips it."""
        with self.episodes_path.open("rb") as handle:
            handle.seek(self._end)
            offset = self._end
            for line in handle:
                if offset + len(line) > size or not line.endswith(b"\n"):
                    break
                length = len(line)
                if line.strip():
                    try:
                        data = json.loads(line)
                        EpisodeRecord.model_validate(expand_record(data))
                        entry = {"offset": offset, "length": length, **episode_summary(data)}
                    except (ValueError, TypeError, AttributeError, ValidationError):
                        log.warning(
                            "%s: skipped an unreadable record at byte %d", self.path, offset
                        )
                    else:
                        self._add(entry)
                offset += length
                self._end = offset

    def read(self, number: int) -> EpisodeRecord:
        """The record of episode `number`, read by its offset (messages not loaded). A record
        that is not the one the index names (an index file written for another file) drops the
        index file: the records themselves are indexed and read."""
        asked = self.entry(number)
        record, problem = self._read_at(asked)
        if record is None:
            with self._lock:
                self._reset()
                self._trust_index = False
            # Indexed afresh from the records, the episode may have another number, or none
            # (its record unreadable): never read another episode in its place.
            found = self.find(asked["instance_id"], asked["trial"])
            if found is None:
                raise InvalidFile(
                    f"{self.episodes_path}: episode {asked['instance_id']}#{asked['trial']} has "
                    f"no readable record ({problem})"
                )
            record, problem = self._read_at(self.entry(found))
        if record is None:
            raise InvalidFile(f"{self.episodes_path}: {problem}")
        if record.schema_version > RECORD_SCHEMA_VERSION:
            raise InvalidFile(
                f"{self.episodes_path}: record schema_version {record.schema_version} is newer "
                f"than this forkingpaths understands ({RECORD_SCHEMA_VERSION})"
            )
        return record

    def _read_at(self, entry: dict[str, Any]) -> tuple[EpisodeRecord | None, str]:
        with self.episodes_path.open("rb") as handle:
            handle.seek(entry["offset"])
            line = handle.read(entry["length"])
        where = f"the record at byte {entry['offset']}"
        try:
            record = parse_record(line)
        except InvalidFile as exc:  # a record of a newer schema
            raise InvalidFile(f"{self.episodes_path}: {exc}") from None
        except ValidationError as exc:
            return None, f"{where} is not readable ({exc.errors()[0]['msg']})"
        except ValueError as exc:  # not JSON, or an edit that does not fit its text
            return None, f"{where} is not readable ({exc})"
        if (record.instance_id, record.trial) != (entry["instance_id"], entry["trial"]):
            return None, f"{where} is not episode {entry['instance_id']}#{entry['trial']}"
        return record, ""


class TextIndex:
    """Where each line of a run's text store lies, by id: sorted arrays of the ids and offsets
    (22 bytes a line, so a store of millions of lines stays small in memory), one pair per
    stretch of the file read, merged when they grow many, so a store that grows is never sorted
    whole again. Lines are read and parsed only when a transcript asks for them."""

    def __init__(self, run_path: Path) -> None:
        self.path = Path(run_path) / TEXTS_FILE
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        # Replaced whole, never changed in place: a reader on another thread sees one state.
        self._segments: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
        self._other_ids: dict[bytes, int] = {}
        """Offsets of lines whose id is not `_TEXT_ID_CHARS` long (stores written before the
        ids took their present form: 20 hex digits)."""
        self._end = 0
        self._cache: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def refresh(self) -> None:
        with self._lock:
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                return
            if size < self._end:
                self._reset()
            if size == self._end:
                return
            ids, offsets = [], []
            other: dict[bytes, int] = {}
            with self.path.open("rb") as handle:
                handle.seek(self._end)
                base = self._end
                while base < size:
                    block = handle.read(min(_BLOCK_BYTES, size - base))
                    last = block.rfind(b"\n")
                    if last < 0 and len(block) == _BLOCK_BYTES:
                        block += handle.readline()  # a line longer than a block
                        last = len(block) - 1 if block.endswith(b"\n") else -1
                    if last < 0:
                        break  # nothing whole yet: a line still being written
                    block = block[: last + 1]
                    handle.seek(base + len(block))
                    block_ids, block_offsets = _line_ids(block, base, other)
                    ids.append(block_ids)
                    offsets.append(block_offsets)
                    base += len(block)
            if other:
                self._other_ids = {**self._other_ids, **other}
            if not ids:
                return
            new_ids, new_offsets = np.concatenate(ids), np.concatenate(offsets)
            order = np.argsort(new_ids, kind="stable")
            segments = (*self._segments, (new_ids[order], new_offsets[order]))
            if len(segments) > _MAX_SEGMENTS:
                merged_ids = np.concatenate([seg[0] for seg in segments])
                merged_offsets = np.concatenate([seg[1] for seg in segments])
                order = np.argsort(merged_ids, kind="stable")
                segments = ((merged_ids[order], merged_offsets[order]),)
            self._segments, self._end = segments, base

    def _find(self, key: bytes) -> int | None:
        if len(key) != _TEXT_ID_CHARS:
            return self._other_ids.get(key)
        for ids, offsets in self._segments:
            at = int(np.searchsorted(ids, key))
            if at < len(ids) and ids[at] == key:
                return int(offsets[at])
        return None

    def get(self, text_id: str) -> dict[str, Any]:
        """The text-store line with this id, parsed."""
        with self._lock:
            cached = self._cache.get(text_id)
            if cached is not None:
                self._cache.move_to_end(text_id)
                return cached
        key = text_id.encode()
        offset = self._find(key)
        if offset is None:
            self.refresh()
            offset = self._find(key)
            if offset is None:
                raise KeyError(text_id)
        with self.path.open("rb") as handle:
            handle.seek(offset)
            line = handle.readline()
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise TypeError(f"a JSON {type(entry).__name__}, not an object")
        except (ValueError, TypeError) as exc:
            raise InvalidFile(
                f"{self.path}: the line of {text_id} at byte {offset} is not a text-store line "
                f"({exc})"
            ) from None
        with self._lock:
            self._cache[text_id] = entry
            if len(self._cache) > _MESSAGE_CACHE:
                self._cache.popitem(last=False)
        return entry

    def attach(self, record: EpisodeRecord) -> None:
        """Put the messages back into one record's calls, reading only the store lines they
        name (`attach_messages`: an id the store lacks is named with its episode)."""
        self.refresh()
        attach_messages([record], self._message, self.path)

    def _message(self, mid: str) -> tuple[str | None, str, str]:
        """(parent id, role, text) of a message line; KeyError for an id the store lacks."""
        entry = self.get(mid)
        try:
            parent, role, chunk_ids = entry["parent"], str(entry["role"]), list(entry["chunks"])
        except (KeyError, TypeError) as exc:
            raise InvalidFile(
                f"{self.path}: the line of {mid} is not a message line ({exc!r} missing or wrong)"
            ) from None
        return parent, role, "".join(str(self.get(cid).get("text", "")) for cid in chunk_ids)

    def messages(self, refs: list[str]) -> dict[str, list[Any]]:
        """Every message in the chains ending at `refs`: id -> [parent id, role, text], each
        message once (a history that many calls share is sent once)."""
        self.refresh()
        out: dict[str, list[Any]] = {}
        for ref in refs:
            mid: str | None = ref
            while mid is not None and mid not in out:
                try:
                    parent, role, text = self._message(mid)
                except KeyError as exc:
                    raise InvalidFile(
                        f"{self.path}: a call refers to {exc.args[0]}, which the text store "
                        "does not hold"
                    ) from None
                out[mid] = [parent, role, text]
                mid = parent
        return out


def _line_ids(block: bytes, base: int, other: dict[bytes, int]) -> tuple[np.ndarray, np.ndarray]:
    """Ids and offsets of the lines of a block of whole lines: found with array operations
    where a line starts as the store writes it, parsed where it does not. An id of another
    length than `_TEXT_ID_CHARS` goes into `other` (id -> offset) instead."""
    data = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(data == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    width = len(_TEXT_ID_PREFIX) + _TEXT_ID_CHARS + 1
    fits = starts + width <= len(block)
    ids = np.empty(len(starts), dtype=f"S{_TEXT_ID_CHARS}")
    good = np.zeros(len(starts), dtype=bool)
    if fits.any():
        window = data[starts[fits, None] + np.arange(width)]
        prefix = np.frombuffer(_TEXT_ID_PREFIX, dtype=np.uint8)
        closes = window[:, -1] == ord('"')
        matches = (window[:, : len(prefix)] == prefix).all(axis=1) & closes
        id_bytes = np.ascontiguousarray(window[:, len(prefix) : len(prefix) + _TEXT_ID_CHARS])
        fit_ids = id_bytes.view(f"S{_TEXT_ID_CHARS}").ravel()
        ids[fits] = fit_ids
        good[fits] = matches
    for i in np.flatnonzero(~good):
        start, end = int(starts[i]), int(ends[i])
        line = block[start:end].strip()
        if not line:
            continue
        try:
            text_id = json.loads(line)["id"].encode()
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("text store: skipped an unreadable line at byte %d", base + start)
            continue
        if len(text_id) == _TEXT_ID_CHARS:
            ids[i], good[i] = text_id, True
        else:
            other[text_id] = base + start
    return ids[good], starts[good] + base
