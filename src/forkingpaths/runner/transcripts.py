"""The run's text store: message text kept once per run, in content-addressed chunks."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from forkingpaths.core.chat import Message
from forkingpaths.core.errors import InvalidFile
from forkingpaths.core.jsonl import repair_tail
from forkingpaths.core.records import EpisodeRecord

TEXTS_FILE = "texts.jsonl"

_BOUNDARY_MASK = 1
"""A line ends a chunk when its checksum's low bit is zero: about one line in two (measured on
the quick suite, the best of 1 to 16 lines: a history spliced into a prompt shares most lines)."""
_MAX_CHUNK_CHARS = 4096
"""A chunk also ends once it is this long (at a line end), so one edit costs little to store."""


def split_chunks(text: str) -> list[str]:
    """Cut `text` into pieces at line ends chosen by the lines' own content (content-defined
    chunking, as backup tools do, at line granularity): a prompt that repeats another's lines,
    with lines added, removed or changed anywhere, shares every chunk away from the edits. The
    pieces join back to `text` exactly."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        size += len(line)
        if size >= _MAX_CHUNK_CHARS or not zlib.crc32(line.encode()) & _BOUNDARY_MASK:
            chunks.append("".join(current))
            current, size = [], 0
    if current or not chunks:
        chunks.append("".join(current))
    return chunks


def chunk_id(chunk: str) -> str:
    """Content address of a chunk."""
    return _address(chunk)


def message_id(parent: str | None, role: str, chunks: list[str]) -> str:
    """Content address of a message in its chain: its role, its text and every message before
    it (as a commit's id covers its history)."""
    return _address("\0".join((parent or "", role, *chunks)))


def _address(text: str) -> str:
    # 80 bits of BLAKE2b in URL-safe base64: 14 characters, no collision within any run.
    digest = hashlib.blake2b(text.encode(), digest_size=10).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class TextStore:
    """`texts.jsonl` of a run directory: the messages of every model call, stored once per run.

    Two kinds of lines: a chunk of text (`{"id", "text"}`) and a message (`{"id", "parent",
    "role", "chunks"}`), where `parent` is the message before it in its request. A call on disk
    names only its last message (`messages_ref`); its request is that message's chain. So a
    system prompt, and a history that every later call of an episode repeats, cost one line
    each per run, not one per call, and a long prompt rebuilt each step with a few lines changed
    shares its unchanged chunks. Lines are appended (and synced) before the record that refers
    to them, so a killed run never leaves a dangling id."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._known: set[str] | None = None

    def _ids(self) -> set[str]:
        if self._known is None:
            repair_tail(self.path)
            chunks, messages = self.read()
            self._known = set(chunks) | set(messages)
        return self._known

    def store(self, record: dict[str, Any], *, fsync: bool = True) -> None:
        """Move the messages of a dumped record (`model_dump(mode="json")`) into the store: each
        call keeps `messages_ref`, the id of its last message."""
        known = self._ids()
        new: dict[str, dict[str, Any]] = {}
        # Each call of an episode repeats the history before it: a message already addressed in
        # this record under the same parent is not chunked and hashed again (it was 35% of the
        # runner's CPU at full ReAct histories, quadratic in episode length).
        addressed: dict[tuple[str | None, str, str], str] = {}
        # A call most often resends the previous call's messages, the very same objects, and
        # adds a turn: that prefix is recognised in one list comparison (identity first, at C
        # speed) and its last id reused, so only the new messages are looked at.
        previous: list[Any] = []
        previous_last: str | None = None
        for step in record.get("steps", ()):
            for call in step.get("calls", ()):
                messages = call.get("messages")
                if not messages:
                    continue
                parent: str | None = None
                start = 0
                if previous and messages[: len(previous)] == previous:
                    start, parent = len(previous), previous_last
                for message in messages[start:] if start else messages:
                    seen = (parent, message["role"], message["content"])
                    if (mid := addressed.get(seen)) is not None:
                        parent = mid
                        continue
                    chunk_ids = []
                    for chunk in split_chunks(message["content"]):
                        cid = chunk_id(chunk)
                        chunk_ids.append(cid)
                        if cid not in known and cid not in new:
                            new[cid] = {"id": cid, "text": chunk}
                    mid = message_id(parent, message["role"], chunk_ids)
                    if mid not in known and mid not in new:
                        new[mid] = {
                            "id": mid,
                            "parent": parent,
                            "role": message["role"],
                            "chunks": chunk_ids,
                        }
                    addressed[seen] = parent = mid
                previous, previous_last = messages, parent
                call["messages"], call["messages_ref"] = [], parent
        if not new:
            return
        lines = "".join(
            json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
            for entry in new.values()
        )
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(lines)
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        known.update(new)

    def read(self) -> tuple[dict[str, str], dict[str, tuple[str | None, str, list[str]]]]:
        """Chunks (id -> text) and messages (id -> parent, role, chunk ids); both empty for a
        run without transcripts (older than record schema 2)."""
        chunks: dict[str, str] = {}
        messages: dict[str, tuple[str | None, str, list[str]]] = {}
        if not self.path.exists():
            return chunks, messages
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.endswith("\n"):
                    break  # a torn last line: no record refers to it
                try:
                    entry = json.loads(line)
                    if "text" in entry:
                        chunks[entry["id"]] = entry["text"]
                    else:
                        messages[entry["id"]] = (entry["parent"], entry["role"], entry["chunks"])
                except (ValueError, KeyError, TypeError) as exc:
                    raise InvalidFile(
                        f"{self.path}:{number}: not a text-store line ({exc})"
                    ) from exc
        return chunks, messages

    def resolve(self, records: Iterable[EpisodeRecord]) -> None:
        """Put the messages back into the calls of records read from disk."""
        chunks, messages = self.read()

        def lookup(mid: str) -> tuple[str | None, str, str]:
            parent, role, chunk_ids = messages[mid]
            return parent, role, "".join(chunks[cid] for cid in chunk_ids)

        attach_messages(records, lookup, self.path)


def attach_messages(
    records: Iterable[EpisodeRecord],
    lookup: Callable[[str], tuple[str | None, str, str]],
    store: Path,
) -> None:
    """Put the messages back into the calls of records read from disk: each call's request is
    the chain ending at its `messages_ref`, and `lookup(id)` gives a message's (parent id, role,
    text) (the whole store read, or a run's text index); a message is built once however many
    calls repeat it. An id the store does not hold is named with its episode."""
    built: dict[str, tuple[Message, str | None]] = {}
    for record in records:
        for step in record.steps:
            for call in step.calls:
                if call.messages_ref is None:
                    continue
                chain: list[Message] = []
                mid: str | None = call.messages_ref
                try:
                    while mid is not None:
                        entry = built.get(mid)
                        if entry is None:
                            parent, role, text = lookup(mid)
                            message = Message(role=role, content=text)  # type: ignore[arg-type]
                            entry = built[mid] = (message, parent)
                        chain.append(entry[0])
                        mid = entry[1]
                except KeyError as exc:
                    raise InvalidFile(
                        f"{store}: episode {record.instance_id} trial {record.trial} refers to "
                        f"{exc.args[0]}, which the text store does not hold"
                    ) from None
                call.messages, call.messages_ref = chain[::-1], None
