"""The eeb world view of `forkingpaths view`: maze maps and match-2 boards, position by position."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository
from forkingpaths.benchmarks.eeb.match2 import (
    Match2Env,
    bomb_cells,
    connected_group,
    format_action,
)
from forkingpaths.benchmarks.eeb.match2_levels import BOARD_SIZE, COLOURS, PROPS
from forkingpaths.benchmarks.eeb.maze import (
    ACTION_LABELS,
    MAZE_RULES,
    MazeEnv,
    _event_text,
)
from forkingpaths.benchmarks.eeb.maze_levels import (
    COIN,
    EMPTY,
    GOAL,
    ITEM_GLYPHS,
    START,
    WALL,
    MazeLevel,
)
from forkingpaths.benchmarks.eeb.pinning import content_digest
from forkingpaths.core.benchmark import Benchmark, Instance
from forkingpaths.core.errors import ForkingPathsError
from forkingpaths.core.records import EpisodeRecord

RAW_CHARS = 300
"""Most characters of an unreadable reply kept in a step (the timeline shows the whole reply)."""
_MAP_LINE = re.compile(r"^\s*(\d+) \| (.*)$")
"""A map row of the maze observation: ` 3 | ? . # A`."""


def eeb_world_view(bench: Benchmark, record: EpisodeRecord) -> dict[str, Any] | None:
    """The world view of an eeb episode (`Benchmark.world_view`): a maze or match-2 view with
    one frame per position, plus the truths the agent played with (§4.3, Eq. 5). None when the
    record says neither game."""
    instance = _instance(bench, record)
    game = _game_of(instance, record)
    if game == "maze":
        view = maze_view(bench, instance, record)
    elif game == "match2":
        view = match2_view(bench, instance, record)
    else:
        return None
    view["truths"] = truths_panel(record, game)
    view["summary"] = {
        k: v for k, v in record.metrics.items() if isinstance(v, bool | int | float | str)
    }
    view["status"] = record.status
    return view


def _instance(bench: Benchmark, record: EpisodeRecord) -> Instance | None:
    """The record's instance, or None for a level the benchmark does not list (Agent-ExpVer's
    generated match-2 training boards, another `levels` folder)."""
    try:
        return bench.instance(record.instance_id)
    except (ForkingPathsError, OSError, KeyError, ValueError):
        return None


def _game_of(instance: Instance | None, record: EpisodeRecord) -> str | None:
    if instance is not None and instance.params.get("game") in ("maze", "match2"):
        return str(instance.params["game"])
    info = record.initial_info
    if "board" in info:
        return "match2"
    if "map" in info:
        return "maze"
    game = record.metrics.get("game")
    return str(game) if game in ("maze", "match2") else None


def _level(bench: Benchmark, instance: Instance | None) -> Any:
    level_of = getattr(bench, "level", None)
    if instance is None or level_of is None:
        return None
    try:
        return level_of(instance)
    except (ForkingPathsError, OSError, KeyError, ValueError):
        return None


# ---- maze ----


def maze_view(bench: Benchmark, instance: Instance | None, record: EpisodeRecord) -> dict[str, Any]:
    """Maze: the map the agent's observation showed (`obs0` + per-frame `obs` deltas) and,
    when the episode replays from its level, seed and actions, the true board (`board`) with
    per-frame explored cells (`seen`), cleared cells (`gone`), every monster and held items."""
    info0 = record.initial_info
    view: dict[str, Any] = {
        "kind": "maze",
        "level": info0.get("level"),
        "size": info0.get("size"),
        "start": info0.get("start"),
        "goal": info0.get("goal"),
        "max_steps": info0.get("max_steps"),
        "full_vision": info0.get("full_vision"),
        "coins_total": info0.get("coins_total"),
    }
    level = _level(bench, instance)
    replay, note = (None, "the level is not in this benchmark")
    if isinstance(level, MazeLevel):
        replay, note = _replay_maze(bench, level, record)
    view["replayed"] = replay is not None
    view["replay_note"] = note
    if replay is not None:
        view.update(replay)
    else:
        view.update(_maze_from_text(record))
    frames = view["frames"]
    view["series"] = _series(
        {key: [frame.get(key) for frame in frames] for key in ("lives", "coins", "score")}
    )
    return view


def _series(candidates: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The chart lines whose every value is a number (an old record may lack a key)."""
    return {
        key: values
        for key, values in candidates.items()
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    }


def _maze_settings(bench: Benchmark, record: EpisodeRecord) -> dict[str, Any]:
    """The env settings the episode was played with: the record's own where it states them,
    else the benchmark's options."""
    config = getattr(bench, "config", None)
    info0 = record.initial_info
    rules = record.steps[0].info.get("rules") if record.steps else None
    if rules not in MAZE_RULES:
        rules = getattr(config, "rules", "paper")
    max_steps = info0.get("max_steps", getattr(config, "max_steps", None))
    full_vision = info0.get("full_vision", getattr(config, "full_vision", False))
    settings: dict[str, Any] = {"rules": rules, "full_vision": bool(full_vision)}
    if isinstance(max_steps, int) and not isinstance(max_steps, bool) and max_steps > 0:
        settings["max_steps"] = max_steps
    return settings


def _replay_maze(
    bench: Benchmark, level: MazeLevel, record: EpisodeRecord
) -> tuple[dict[str, Any] | None, str | None]:
    """Replays the recorded actions from reset(record.seed) and checks every position, lives
    and score against the record; (None, why) where they part (the record was played on
    another board or under other rules)."""
    try:
        env = MazeEnv(level, **_maze_settings(bench, record))
        env.reset(seed=record.seed)
    except ForkingPathsError as exc:
        return None, f"the level could not be replayed: {exc}"
    recorded_map = record.initial_info.get("map")
    if recorded_map is not None and recorded_map != env.map_rows():
        return None, "the recorded start map differs from the level's (other level options?)"
    known = env.map_rows()
    explored = set(env.explored)
    frames = [_maze_frame(env, None, None, set(), explored)]
    for step in record.steps:
        result = env.step(step.action)
        info = result.info
        for key in ("position", "lives", "score"):
            if key in step.info and step.info[key] != info[key]:
                return None, (
                    f"the replay parts from the record at step {step.index + 1} ({key}: "
                    f"recorded {step.info[key]!r}, replayed {info[key]!r})"
                )
        now = set(env.explored)
        frames.append(_maze_frame(env, info, known, explored, now))
        known, explored = env.map_rows(), now
        if result.done:
            break
    if len(frames) != len(record.steps) + 1:
        return None, "the recorded episode goes on after the replayed one ended"
    board = ["".join(row) for row in _maze_board(level)]
    return {"board": board, "obs0": frames[0].pop("obs0"), "frames": frames}, None


def _maze_board(level: MazeLevel) -> list[list[str]]:
    """The true board at reset, monsters aside: walls, coins, items, start, goal."""
    board = [[EMPTY] * level.size for _ in range(level.size)]
    for r, c in level.walls:
        board[r][c] = WALL
    for r, c in level.coins:
        board[r][c] = COIN
    for name, (r, c) in level.items.items():
        board[r][c] = ITEM_GLYPHS[name]
    board[level.start[0]][level.start[1]] = START
    board[level.goal[0]][level.goal[1]] = GOAL
    return board


def _maze_frame(
    env: MazeEnv,
    info: Mapping[str, Any] | None,
    before: list[str] | None,
    explored_before: set[tuple[int, int]],
    explored_now: set[tuple[int, int]],
) -> dict[str, Any]:
    """One position of the replay: the state after it, and what changed since `before` (the
    observed map one position earlier; None at reset, where the frame holds the whole map as
    `obs0`)."""
    r, c = env.position
    held = env.items_held()
    rows = env.map_rows()
    frame: dict[str, Any] = {
        "pos": [r, c],
        "lives": env.lives,
        "score": env.score,
        "coins": env.outcome()["coins_collected"],
        "explored": len(explored_now),
    }
    # Only what the board has: monsters from level 2, items on level 3.
    if env.monsters:
        frame["monsters"] = [list(m) for m in env.monsters]
        frame["visible"] = [list(m) for m in env.visible_monsters()]
    if env.level.items:
        frame["held"] = held
    seen = sorted(explored_now - explored_before)
    if seen:
        frame["seen"] = [list(cell) for cell in seen]
    if before is None or info is None:
        frame["obs0"] = rows
        return frame
    frame["obs"] = _map_delta(before, rows)
    events = [dict(e) for e in info.get("events", [])]
    gone = [e["position"] for e in events if e.get("event") in ("coin", "item", "barrier")]
    if gone:
        frame["gone"] = gone
    frame["step"] = _maze_step(info, events, held.get("shovel", 0), env.level.start)
    return frame


def _map_delta(before: Sequence[str], after: Sequence[str]) -> list[list[Any]]:
    """[row, col, glyph] of every cell whose glyph changed (maps of one size)."""
    return [
        [i, j, ch]
        for i, (old, new) in enumerate(zip(before, after, strict=False))
        if old != new and len(old) == len(new)
        for j, ch in enumerate(new)
        if ch != old[j]
    ]


def _maze_step(
    info: Mapping[str, Any], events: list[dict[str, Any]], shovel_uses: int, start: Any
) -> dict[str, Any]:
    action = info.get("action")
    label = ACTION_LABELS[action] if isinstance(action, int) and 0 <= action < 12 else None
    out: dict[str, Any] = {
        "action": action,
        "label": label,
        "valid": bool(info.get("valid", label is not None)),
        "reward": info.get("reward"),
        "events": [_event_entry(e, shovel_uses, start) for e in events],
    }
    # The agent was sent back to the start: the full map's trail jumps rather than walks.
    if any(e.get("event") == "monster_hit" or e.get("to_start") for e in events):
        out["respawn"] = True
    if info.get("terminated") or info.get("truncated"):
        out["end"] = (
            "success"
            if info.get("success")
            else ("out of lives" if info.get("terminated") else "step limit")
        )
    return out


def _event_entry(event: Mapping[str, Any], shovel_uses: int, start: Any) -> dict[str, Any]:
    try:
        text = _event_text(event, shovel_uses, tuple(start))
    except (KeyError, TypeError, ValueError):
        text = str(event.get("event", "event"))
    return {"event": event.get("event"), "position": event.get("position"), "text": text}


def _maze_from_text(record: EpisodeRecord) -> dict[str, Any]:
    """Without a replay: the map each observation text showed and the recorded info (no
    true board, no unseen monsters)."""
    info0 = record.initial_info
    rows = info0.get("map")
    if not isinstance(rows, list) or not all(isinstance(r, str) for r in rows):
        rows = _parse_map(record.initial_observation) or []
    frames: list[dict[str, Any]] = [
        {
            "pos": info0.get("position"),
            "lives": info0.get("lives"),
            "score": info0.get("score", 0),
            "coins": info0.get("coins_collected", 0),
            "explored": info0.get("explored"),
        }
    ]
    known = list(rows)
    start = info0.get("start") or [0, 0]
    for step in record.steps:
        info = {**step.info, "valid": step.valid}
        shown = _parse_map(step.feedback)
        frame: dict[str, Any] = {
            "pos": info.get("position", frames[-1]["pos"]),
            "lives": info.get("lives", frames[-1]["lives"]),
            "score": info.get("score", frames[-1]["score"]),
            "coins": info.get("coins_collected", frames[-1]["coins"]),
            "explored": info.get("explored", frames[-1]["explored"]),
        }
        if shown is not None and len(shown) == len(known):
            frame["obs"] = _map_delta(known, shown)
            known = shown
        events = [dict(e) for e in info.get("events", []) if isinstance(e, Mapping)]
        frame["step"] = _maze_step(info, events, 0, start)
        frames.append(frame)
    return {"board": None, "obs0": rows, "frames": frames}


def _parse_map(text: str) -> list[str] | None:
    """The map rows of a maze observation text, or None when it holds none."""
    rows: list[str] = []
    for line in text.splitlines():
        match = _MAP_LINE.match(line)
        if match and int(match.group(1)) == len(rows):
            rows.append("".join(match.group(2).split()))
        elif rows:
            break
    return rows or None


# ---- match-2 ----


def match2_view(
    bench: Benchmark, instance: Instance | None, record: EpisodeRecord
) -> dict[str, Any]:
    """Match-2: the board after each position, the tiles each step cleared (on the board
    before it) and the fresh tiles the refill dropped in, with score, steps left, cleared
    tiles per colour against the targets and props left."""
    info0 = record.initial_info
    infos = [{**step.info, "valid": step.valid} for step in record.steps]
    note = None
    if any("board" not in info for info in infos):
        infos, note = _replay_match2(bench, instance, record, infos)
    targets = info0.get("targets") or {}
    inventory = dict(info0.get("inventory") or {})
    cleared = {colour: 0 for colour in COLOURS}
    frames: list[dict[str, Any]] = [
        {
            "board": info0.get("board"),
            "score": info0.get("score", 0),
            "left": info0.get("steps_remaining"),
            "cleared": dict(cleared),
            "inventory": dict(inventory),
        }
    ]
    for step, info in zip(record.steps, infos, strict=False):
        before = frames[-1]["board"]
        action = info.get("action") if isinstance(info.get("action"), Mapping) else None
        valid = bool(info.get("valid")) and action is not None
        removed = _cleared_cells(before, action) if valid else []
        for colour, n in (info.get("cleared") or {}).items():
            if colour in cleared and isinstance(n, int):
                cleared[colour] += n
        if valid and action is not None and action.get("type") in PROPS:
            kind = action["type"]
            inventory[kind] = max(0, int(inventory.get(kind, 0)) - 1)
        step_view: dict[str, Any] = {
            "action": action_text(action),
            "valid": valid,
            "reward": info.get("reward"),
            "cleared": info.get("cleared"),
            "removed": [[cell // BOARD_SIZE, cell % BOARD_SIZE] for cell in removed],
            "fresh": _fresh_cells(removed),
        }
        if not valid:
            step_view["error"] = info.get("error")
            if action is None:
                step_view["raw"] = step.action[:RAW_CHARS]
        if info.get("done"):
            step_view["end"] = "success" if info.get("success") else "steps used up"
        frames.append(
            {
                "board": info.get("board", before),
                "score": info.get("score", frames[-1]["score"]),
                "left": info.get("steps_remaining", frames[-1]["left"]),
                "cleared": dict(cleared),
                "inventory": dict(inventory),
                "step": step_view,
            }
        )
    lines: dict[str, list[Any]] = {
        "score": [f["score"] for f in frames],
        "left": [f["left"] for f in frames],
    }
    for colour in COLOURS:
        if isinstance(targets.get(colour), int):
            lines[f"need_{colour}"] = [
                max(0, targets[colour] - f["cleared"][colour]) for f in frames
            ]
    series = _series(lines)
    return {
        "kind": "match2",
        "difficulty": (instance.params.get("difficulty") if instance is not None else None),
        "max_steps": info0.get("max_steps"),
        "targets": targets,
        "colours": list(COLOURS),
        "props_enabled": info0.get("props_enabled"),
        "prop_costs": info0.get("prop_costs") or {},
        "replay_note": note,
        "frames": frames,
        "series": series,
    }


def action_text(action: Mapping[str, Any] | None) -> str | None:
    """`eliminate [4, 3]` for a parsed action, None for none."""
    if action is None:
        return None
    try:
        return format_action(action)
    except (KeyError, IndexError, TypeError):
        return str(action.get("type"))


def _cleared_cells(board: Any, action: Mapping[str, Any]) -> list[int]:
    """The cells (i * 8 + j) a valid action cleared on the board before it."""
    if not isinstance(board, list) or len(board) != BOARD_SIZE:
        return []
    flat = [tile for row in board for tile in row]
    if len(flat) != BOARD_SIZE * BOARD_SIZE:
        return []
    kind = action.get("type")
    try:
        if kind in ("row", "col"):
            k = int(action["index"])
            if kind == "row":
                return [k * BOARD_SIZE + j for j in range(BOARD_SIZE)]
            return [i * BOARD_SIZE + k for i in range(BOARD_SIZE)]
        i, j = (int(x) for x in action["pos"])
    except (KeyError, TypeError, ValueError):
        return []
    if not (0 <= i < BOARD_SIZE and 0 <= j < BOARD_SIZE):
        return []
    if kind == "eliminate":
        return sorted(connected_group(flat, i * BOARD_SIZE + j))
    if kind == "bomb":
        return bomb_cells(i, j)
    if kind == "hammer":
        return [i * BOARD_SIZE + j]
    return []


def _fresh_cells(removed: Sequence[int]) -> list[list[int]]:
    """The refill's new tiles: in each column, as many top cells as the step cleared there
    (tiles fall, the gap at the top is filled; `match2.collapse`)."""
    per_column: dict[int, int] = {}
    for cell in removed:
        per_column[cell % BOARD_SIZE] = per_column.get(cell % BOARD_SIZE, 0) + 1
    return [[i, j] for j, n in sorted(per_column.items()) for i in range(n)]


def _replay_match2(
    bench: Benchmark,
    instance: Instance | None,
    record: EpisodeRecord,
    infos: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], str | None]:
    """Infos of an old record without boards, rebuilt by replaying its actions from the
    level and seed (the level's start board is fixed, the seed drives the refills)."""
    level = _level(bench, instance)
    if level is None:
        return infos, "the record holds no boards and its level is not in this benchmark"
    props = record.initial_info.get(
        "props_enabled", getattr(getattr(bench, "config", None), "props", True)
    )
    try:
        env = Match2Env(level, props=bool(props))
        env.reset(seed=record.seed)
        out = []
        for step in record.steps:
            result = env.step(step.action)
            out.append(result.info)
            if result.done:
                break
    except ForkingPathsError as exc:
        return infos, f"the boards could not be replayed: {exc}"
    if len(out) != len(infos):
        return infos, "the replay ended at another step than the record"
    return out, "boards replayed from the level, seed and actions"


# ---- Agent-ExpVer ----


def truths_panel(record: EpisodeRecord, game: str) -> dict[str, Any] | None:
    """The truths (M_truth, Eq. 5) the agent played this episode with: from an Agent-ExpVer
    learning episode's `agent_state["expver"]` (round, phase, truths), else from the agent's
    `truths` option (a list, or a truths file read as it is now, checked against
    `truths_sha256` where the run pinned it). None when the agent had none."""
    expver = record.agent_state.get("expver")
    if isinstance(expver, Mapping):
        texts = [str(t) for t in expver.get("truths") or []]
        return {
            "source": "Agent-ExpVer learning episode",
            "round": expver.get("round"),
            "phase": expver.get("phase"),
            "texts": texts,
            "note": None,
        }
    option = record.agent_options.get("truths")
    if isinstance(option, list):
        return {
            "source": "the agent's truths option",
            "texts": [str(t) for t in option],
            "note": None,
        }
    if isinstance(option, str) and option:
        return _truths_file(option, record.agent_options.get("truths_sha256"), game)
    return None


def _truths_file(path: str, pinned: Any, game: str) -> dict[str, Any]:
    out: dict[str, Any] = {"source": "truths file", "path": path, "texts": [], "note": None}
    try:
        if isinstance(pinned, str) and content_digest(path, "truths") != pinned:
            out["note"] = "the file no longer holds the content the run pinned; not shown"
            return out
        repository = TruthRepository.load(Path(path))
    except ForkingPathsError as exc:
        out["note"] = f"the file cannot be read now: {exc}"
        return out
    if repository.game != game:
        out["note"] = f"a {repository.game} repository: the agent showed none of it in {game}"
        return out
    out["texts"] = repository.texts()
    if not isinstance(pinned, str):
        out["note"] = "read from the file as it is now (the run did not pin its content)"
    return out
