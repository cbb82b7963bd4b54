"""eeb world view: maze maps and match-2 boards per position, rebuilt from records alone."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from forkingpaths.benchmarks.eeb.agents.reference import make_random, make_reference
from forkingpaths.benchmarks.eeb.agents.truths import TruthRepository
from forkingpaths.benchmarks.eeb.benchmark import EEBBenchmark
from forkingpaths.benchmarks.eeb.match2_levels import BOARD_SIZE
from forkingpaths.benchmarks.eeb.pinning import content_digest
from forkingpaths.benchmarks.eeb.view import _parse_map
from forkingpaths.core.agent import Decision
from forkingpaths.core.env import Observation
from forkingpaths.core.protocol import play_episode
from forkingpaths.core.records import EpisodeRecord

HOSTILE = ("<script>alert(1)</script>", '" onmouseover="x', "javascript:alert(1)")
MAZES = ("maze-l1-000", "maze-l2-003", "maze-l3-004")
BOARDS = ("match2-easy-010", "match2-hard-001")


class _Replies:
    """An agent that sends fixed replies, then the last one forever."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.n = 0

    def reset(self, instance: Any, seed: int) -> None:
        self.n = 0

    async def act(self, observation: Observation) -> Decision:
        reply = self.replies[min(self.n, len(self.replies) - 1)]
        self.n += 1
        return Decision(action=reply, thought="")


def _play(bench: EEBBenchmark, instance_id: str, agent: Any, seed: int = 7) -> EpisodeRecord:
    instance = bench.instance(instance_id)
    record = EpisodeRecord(
        run_id="view-test",
        benchmark=bench.id,
        split="test",
        instance_id=instance_id,
        seed=seed,
        agent="test",
    )
    agent.reset(instance, seed)
    env = bench.make_env(instance)
    asyncio.run(play_episode(env, agent, record, max_steps=bench.max_steps(instance)))
    record.metrics = bench.episode_metrics(record)
    return record


@pytest.fixture(scope="module")
def bench() -> EEBBenchmark:
    return EEBBenchmark()


@pytest.fixture(scope="module")
def played(bench: EEBBenchmark) -> list[EpisodeRecord]:
    """Reference and random play on every maze level and two match-2 boards."""
    records = []
    for instance_id in (*MAZES, *BOARDS):
        records.append(_play(bench, instance_id, make_reference()))
        records.append(_play(bench, instance_id, make_random(), seed=11))
    return records


def _maze_maps(view: dict[str, Any]) -> list[list[str]]:
    """The observed map at every position, rebuilt as view.js rebuilds it."""
    known = [list(row) for row in view["obs0"]]
    out = []
    for frame in view["frames"]:
        for r, c, ch in frame.get("obs", []):
            known[r][c] = ch
        out.append(["".join(row) for row in known])
    return out


def test_maze_frames_follow_the_record(bench: EEBBenchmark, played: list[EpisodeRecord]) -> None:
    for record in (r for r in played if r.instance_id.startswith("maze")):
        view = bench.world_view(record)
        assert view is not None and view["kind"] == "maze"
        assert view["replayed"], view["replay_note"]
        frames = view["frames"]
        assert len(frames) == len(record.steps) + 1
        assert frames[0]["pos"] == record.initial_info["position"]
        for p, step in enumerate(record.steps, start=1):
            for key, recorded in (("pos", "position"), ("lives", "lives"), ("score", "score")):
                assert frames[p][key] == step.info[recorded]
            assert frames[p]["step"]["valid"] == step.valid
        assert view["series"]["lives"] == [f["lives"] for f in frames]
        assert len(json.dumps(view)) < 200_000


def test_observed_map_is_what_each_observation_showed(
    bench: EEBBenchmark, played: list[EpisodeRecord]
) -> None:
    for record in (r for r in played if r.instance_id.startswith("maze")):
        maps = _maze_maps(bench.world_view(record))  # type: ignore[arg-type]
        assert maps[0] == record.initial_info["map"] == _parse_map(record.initial_observation)
        for p, step in enumerate(record.steps, start=1):
            assert maps[p] == _parse_map(step.feedback)


def test_explored_cells_only_grow(bench: EEBBenchmark, played: list[EpisodeRecord]) -> None:
    for record in (r for r in played if r.instance_id.startswith("maze")):
        view = bench.world_view(record)
        assert view is not None
        explored: set[tuple[int, int]] = set()
        for frame, rows in zip(view["frames"], _maze_maps(view), strict=True):
            seen = {tuple(cell) for cell in frame.get("seen", [])}
            assert not seen & explored  # each cell is revealed once
            explored |= seen
            assert len(explored) == frame["explored"]
            # The fog of the full map is exactly the agent's "?" (the goal is always shown).
            shown = {(r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch != "?"}
            assert shown - explored == {tuple(view["goal"])} - explored
        board = view["board"]
        assert len(board) == view["size"] and board[view["goal"][0]][view["goal"][1]] == "G"


def test_cleared_cells_match_the_events(bench: EEBBenchmark, played: list[EpisodeRecord]) -> None:
    hard = [r for r in played if r.instance_id == "maze-l3-004"]
    kinds = set()
    for record in hard:
        view = bench.world_view(record)
        assert view is not None
        board = [list(row) for row in view["board"]]
        for frame in view["frames"][1:]:
            kinds |= {e["event"] for e in frame["step"]["events"]}
            for r, c in frame.get("gone", []):
                assert board[r][c] in "#CTWNK"  # a coin, an item or a broken wall
                board[r][c] = "."
        collected = sum(
            1 for f in view["frames"][1:] for e in f["step"]["events"] if e["event"] == "coin"
        )
        assert collected == view["frames"][-1]["coins"]
    assert "coin" in kinds


def test_match2_frames_hold_the_recorded_boards(
    bench: EEBBenchmark, played: list[EpisodeRecord]
) -> None:
    for record in (r for r in played if r.instance_id.startswith("match2")):
        view = bench.world_view(record)
        assert view is not None and view["kind"] == "match2"
        frames = view["frames"]
        assert len(frames) == len(record.steps) + 1
        assert frames[0]["board"] == record.initial_info["board"]
        for p, step in enumerate(record.steps, start=1):
            frame = frames[p]
            assert frame["board"] == step.info["board"]
            assert frame["score"] == step.info["score"]
            shown = frame["step"]
            # The outlined tiles are exactly the ones the step cleared, the fresh ones as many.
            assert len(shown["removed"]) == step.info["cleared_total"]
            assert len(shown["fresh"]) == len(shown["removed"])
            before = frames[p - 1]["board"]
            colours: dict[str, int] = {}
            for i, j in shown["removed"]:
                colours[before[i][j]] = colours.get(before[i][j], 0) + 1
            assert colours == {c: n for c, n in step.info["cleared"].items() if n}
            for i, j in shown["fresh"]:
                assert 0 <= i < BOARD_SIZE and 0 <= j < BOARD_SIZE
        targets = view["targets"]
        for colour, values in ((c, view["series"][f"need_{c}"]) for c in targets):
            assert values[0] == targets[colour]
            assert all(a >= b for a, b in pairwise(values))


def test_hostile_replies_and_truths_come_back_as_plain_strings(bench: EEBBenchmark) -> None:
    board = _play(bench, "match2-easy-010", _Replies(list(HOSTILE)))
    board.agent_options = {"truths": list(HOSTILE)}
    view = bench.world_view(board)
    assert view is not None
    raws = [f["step"].get("raw") for f in view["frames"][1:4]]
    assert raws == list(HOSTILE)
    assert all(f["step"]["valid"] is False for f in view["frames"][1:4])
    assert view["truths"]["texts"] == list(HOSTILE)
    maze = _play(bench, "maze-l1-000", _Replies([*HOSTILE, "Action: 9"]))
    maze.agent_state = {"expver": {"round": 2, "phase": "train", "truths": list(HOSTILE)}}
    view = bench.world_view(maze)
    assert view is not None and view["replayed"]
    assert view["truths"] == {
        "source": "Agent-ExpVer learning episode",
        "round": 2,
        "phase": "train",
        "texts": list(HOSTILE),
        "note": None,
    }
    assert [f["step"]["valid"] for f in view["frames"][1:4]] == [False, False, False]
    assert json.loads(json.dumps(view)) == view


def test_truths_file_is_shown_only_as_pinned_and_for_its_game(
    bench: EEBBenchmark, tmp_path: Path
) -> None:
    path = TruthRepository("maze", ["keep away from monsters"]).save(tmp_path / "truths.json")
    record = _play(bench, "maze-l1-000", make_reference())
    record.agent_options = {"truths": str(path), "truths_sha256": content_digest(path, "t")}
    view = bench.world_view(record)
    assert view is not None and view["truths"]["texts"] == ["keep away from monsters"]
    path.write_text(path.read_text().replace("monsters", "walls"))
    changed = bench.world_view(record)
    assert changed is not None and changed["truths"]["texts"] == []
    assert "pinned" in changed["truths"]["note"]
    board = _play(bench, "match2-easy-010", make_reference())
    board.agent_options = {"truths": str(path)}
    other = bench.world_view(board)
    assert other is not None and other["truths"]["texts"] == []


@pytest.mark.parametrize("instance_id", ["maze-l2-003", "match2-easy-010"])
def test_errored_record_without_steps_gives_a_view(bench: EEBBenchmark, instance_id: str) -> None:
    record = _play(bench, instance_id, make_reference())
    record.steps, record.status, record.error, record.metrics = [], "error", "ModelError: x", {}
    view = bench.world_view(record)
    assert view is not None and len(view["frames"]) == 1
    json.dumps(view)


def test_unknown_level_and_bare_record_do_not_raise(bench: EEBBenchmark) -> None:
    bare = EpisodeRecord(
        run_id="r", benchmark="eeb-v1", split="test", instance_id="nope", seed=0, agent="a"
    )
    assert bench.world_view(bare) is None
    record = _play(bench, "maze-l2-003", make_random(), seed=3)
    moved = record.model_copy(update={"instance_id": "maze-elsewhere-001"})
    view = bench.world_view(moved)
    assert view is not None and not view["replayed"] and view["board"] is None
    assert len(view["frames"]) == len(record.steps) + 1
    # Without the level the observed map still comes from the observation texts.
    expected = _maze_maps(bench.world_view(record))  # type: ignore[arg-type]
    assert _maze_maps(view) == expected
    for step in moved.steps:
        step.info.clear()
    assert len(bench.world_view(moved)["frames"]) == len(record.steps) + 1  # type: ignore[index]


def test_a_record_the_replay_disagrees_with_falls_back_to_the_texts(bench: EEBBenchmark) -> None:
    record = _play(bench, "maze-l1-000", make_reference())
    record.steps[3].info["score"] += 1
    view = bench.world_view(record)
    assert view is not None and not view["replayed"]
    assert "step 4" in view["replay_note"]
    assert len(view["frames"]) == len(record.steps) + 1


def test_release_rules_respawn_after_a_wall_hit() -> None:
    bench = EEBBenchmark(rules="release")
    record = _play(bench, "maze-l1-000", make_random(), seed=5)
    view = bench.world_view(record)
    assert view is not None and view["replayed"]
    hits = [
        f for f in view["frames"][1:] if any(e["event"] == "wall_hit" for e in f["step"]["events"])
    ]
    assert hits and all(f["step"].get("respawn") and f["pos"] == view["start"] for f in hits)


VIEW_JS = Path(EEBBenchmark().view_script() or "")
NODE_CHECK = """
import { readFileSync } from "node:fs";
const { renderWorld } = await import(process.argv[2]);
class N {
  constructor(tag) { this.tag = tag; this.kids = []; this.style = {}; }
  appendChild(kid) {
    if (!(kid instanceof N)) throw new Error(`appended ${kid}`);
    this.kids.push(kid);
    return kid;
  }
  append(...kids) { for (const kid of kids) this.appendChild(kid); }
  setAttribute(key, value) {
    if (typeof value === "object" && value !== null) throw new Error(`object attribute ${key}`);
  }
  addEventListener() {}
}
const add = (node, kids) => {
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === false || kid === undefined) continue;
    node.appendChild(typeof kid === "object" ? kid : new N("#text"));
  }
  return node;
};
const make = (tag, attrs, ...kids) => {
  const node = new N(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "style") Object.assign(node.style, value);
    else if (typeof value !== "function") node.setAttribute(key, value);
  }
  return add(node, kids);
};
const ui = {
  el: make, svg: make, badge: (text) => make("span", {}, text), seek() {},
  table: () => new N("table"), diff: () => new N("div"),
  colors: { ok: "g", bad: "r", warn: "y", info: "b", muted: "m", case: [] },
  lineChart: (options) => {
    for (const s of options.series) {
      if (s.values.some((v) => typeof v !== "number")) throw new Error(`non-number in ${s.name}`);
    }
    return new N("svg");
  },
};
let drawn = 0;
for (const view of JSON.parse(readFileSync(process.argv[3], "utf8"))) {
  for (let p = 0; p < view.frames.length; p++) { renderWorld(new N("div"), view, p, ui); drawn++; }
}
console.log(`drawn ${drawn}`);
"""


def test_view_script_keeps_to_the_viewer_rules() -> None:
    text = VIEW_JS.read_text(encoding="utf-8")
    assert VIEW_JS.name == "view.js" and "export function renderWorld(" in text
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert banned not in text
    assert not [
        line for line in text.splitlines() if line.startswith(("import ", "export default"))
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_view_script_draws_every_position(
    bench: EEBBenchmark, played: list[EpisodeRecord], tmp_path: Path
) -> None:
    views = [bench.world_view(record) for record in played]
    errored = played[0].model_copy(update={"steps": [], "status": "error", "metrics": {}})
    views.append(bench.world_view(errored))
    # An old record of a level the benchmark lacks, its infos empty: drawn from texts alone.
    bare = played[1].model_copy(deep=True, update={"instance_id": "maze-elsewhere-001"})
    for step in bare.steps:
        step.info.clear()
    bare.initial_info.clear()
    views.append(bench.world_view(bare))
    (tmp_path / "views.json").write_text(json.dumps(views))
    module = tmp_path / "view.mjs"
    module.write_text(VIEW_JS.read_text(encoding="utf-8"))
    (tmp_path / "check.mjs").write_text(NODE_CHECK)
    done = subprocess.run(
        ["node", str(tmp_path / "check.mjs"), module.as_uri(), str(tmp_path / "views.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"drawn {sum(len(v['frames']) for v in views if v)}"
