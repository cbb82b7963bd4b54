"""EscapeBench's reference action logs (`data/reference/key_log_<N-M>.txt`): read and replayed.

A log is a run of pretty-printed JSON objects, one per key action of a successful playthrough:
`{"position": "living room -> bedroom", "action_answer": "click(hairpin)"}`. Moves are left
out; `position` is the chain of scenes from the first one to where the action was taken. One
log serves a game's three variants (`game1-2`, `game1-2-easy`, `game1-2-hard`). Replaying walks
the shortest visible route to the position's last scene before each action, and stops at the
first action that does nothing, or at GAME END.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from forkingpaths.benchmarks.escape.engine import ActionResult, EscapeGame
from forkingpaths.benchmarks.escape.schema import read_text
from forkingpaths.core.errors import InvalidFile

_GAME_STEM = re.compile(r"^game(\d+-\d+)(?:-(?:easy|hard))?$")


@dataclass(frozen=True)
class LogEntry:
    """One key action of a reference log."""

    index: int
    """Position in the log, from 0."""
    line: int
    """Line of the file where the entry starts."""
    scene: str
    """The last scene of `position`: where the action is taken."""
    action: str


@dataclass(frozen=True)
class ReplayStep:
    """One action played during a replay: a walking move or a logged action."""

    entry: int | None
    """Index of the log entry; None for a walking move."""
    result: ActionResult


@dataclass(frozen=True)
class LogReplay:
    """How a reference log played out on a game."""

    steps: tuple[ReplayStep, ...]
    entries: int
    """Entries in the log."""
    played: int
    """Entries played before the replay stopped."""
    game_end: bool
    failure: str | None = None
    """Why it stopped before GAME END (file, line, entry, response); None when it got there."""


def reference_log_name(game_stem: str) -> str | None:
    """The log file name of a game (`game1-2-hard` -> `key_log_1-2.txt`); None for others."""
    match = _GAME_STEM.match(game_stem)
    return f"key_log_{match.group(1)}.txt" if match else None


def find_reference_log(game_file: Path) -> Path | None:
    """The game's log in EscapeBench's layout (`reference/` beside the game file), if any."""
    name = reference_log_name(game_file.name.removesuffix(".yaml"))
    if name is None:
        return None
    path = game_file.parent / "reference" / name
    return path if path.is_file() else None


def load_reference_log(path: Path) -> list[LogEntry]:
    """The entries of a log, refusing a malformed one with its file and line."""
    text = read_text(path)
    decoder = json.JSONDecoder()
    entries: list[LogEntry] = []
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        line = text.count("\n", 0, at) + 1
        try:
            obj, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise InvalidFile(f"{path}:{line}: not a JSON object ({exc.msg})") from None
        where = f"{path}:{line}: entry {len(entries)}"
        if not isinstance(obj, dict):
            raise InvalidFile(f"{where}: expected an object, got {type(obj).__name__}")
        position, action = obj.get("position"), obj.get("action_answer")
        if not isinstance(position, str) or not position.strip():
            raise InvalidFile(f"{where}: needs a text `position`")
        if not isinstance(action, str) or not action.strip():
            raise InvalidFile(f"{where}: needs a text `action_answer`")
        scene = position.split("->")[-1].strip()
        entries.append(LogEntry(len(entries), line, scene, action.strip()))
    if not entries:
        raise InvalidFile(f"{path}: no entries")
    return entries


def replay_reference_log(game: EscapeGame, entries: list[LogEntry], file: str) -> LogReplay:
    """Play the entries on `game`, walking to each one's scene first."""
    steps: list[ReplayStep] = []
    for entry in entries:
        where = f"{file}:{entry.line}: entry {entry.index} {entry.action!r}"
        route = game.route_to(entry.scene)
        if route is None:
            failure = f"{where}: scene {entry.scene!r} cannot be reached from {game.scene!r}"
            return LogReplay(tuple(steps), len(entries), entry.index, False, failure)
        for move in route:
            steps.append(ReplayStep(None, game.step(move)))
        result = game.step(entry.action)
        steps.append(ReplayStep(entry.index, result))
        if result.game_end:
            return LogReplay(tuple(steps), len(entries), entry.index + 1, True)
        if not result.success:
            failure = f"{where}: {result.response}"
            return LogReplay(tuple(steps), len(entries), entry.index, False, failure)
    failure = f"{file}: all {len(entries)} entries played without GAME END"
    return LogReplay(tuple(steps), len(entries), len(entries), False, failure)
