"""World views of escape-v1 and aut-v1: attempt lanes, paths, streaks, judge scores, AUT runs."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.benchmarks.escape.scripts import ScriptAgent

from forkingpaths.api import run
from forkingpaths.benchmarks.escape.aut import AUTBenchmark
from forkingpaths.benchmarks.escape.aut_scripted import AUTJudgePolicy, AUTScriptedPolicy
from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark
from forkingpaths.benchmarks.escape.judge_scripted import DivergenceJudgePolicy
from forkingpaths.benchmarks.escape.metrics import counted_paths, episode_facts, is_judged
from forkingpaths.core.records import EpisodeRecord, StepRecord
from forkingpaths.models.runtime import ModelRuntime
from forkingpaths.models.scripted import GarbagePolicy, ScriptedModel

CELL = Path(__file__).parent / "fixtures" / "cell"
VIEW_JS = (
    Path(__file__).parents[3] / "src" / "forkingpaths" / "benchmarks" / "escape" / "web" / "view.js"
)
HOSTILE = ["<script>alert(1)</script>", '" onmouseover="x', "javascript:alert(1)"]

A = [
    "move(Go to the alcove)",
    "click(crowbar)",
    "move(Back to the cell)",
    "apply(crowbar, cell door)",
]
B = ["click(note)", "input(4321, cell door)"]


def cell_bench(**options: object) -> EscapeBenchmark:
    return EscapeBenchmark(scenarios=str(CELL), **options)


def empty_record(benchmark: str, instance_id: str, split: str) -> EpisodeRecord:
    return EpisodeRecord(
        run_id="t", benchmark=benchmark, split=split, instance_id=instance_id, seed=7, agent="s"
    )


async def play_cell(
    b: EscapeBenchmark, attempts: list[list[str]], judge: Any = None
) -> EpisodeRecord:
    record = empty_record(b.id, "cell", "custom")
    instance = b.select_instances("custom", ["cell"])[0]
    roles = {} if judge is None else {"judge": ScriptedModel("scripted/j", judge, ModelRuntime())}
    await b.run_episode(instance, ScriptAgent(attempts), record, roles)  # type: ignore[arg-type]
    return record


def view_of(bench: Any, record: EpisodeRecord) -> dict[str, Any]:
    view = bench.world_view(record)
    assert view is not None
    # JSON-serialisable, and the same after a round trip (no tuples, sets or objects).
    assert json.loads(json.dumps(view)) == view
    return view


# ---- escape-v1 ----


async def test_frames_follow_the_steps_and_lanes_hold_each_attempt() -> None:
    b = cell_bench(max_steps=8)
    record = await play_cell(b, [A, [*A, *B], B, []])
    view = view_of(b, record)
    steps = record.steps
    assert view["kind"] == "escape" and view["attempts"] == 4
    assert len(view["frames"]) == len(steps) + 1 == len(view["steps"]) + 1
    assert view["frames"][0]["scene"] == record.initial_info["scene"] == "cell"
    assert view["frames"][0]["bag"] == [] and view["frames"][0]["t"] == 0
    for p in range(1, len(steps) + 1):
        frame, info = view["frames"][p], steps[p - 1].info
        assert (frame["attempt"], frame["t"], frame["scene"], frame["bag"]) == (
            info["attempt"],
            info["t"],
            info["scene"],
            info["bag"],
        )
    lanes = view["lanes"]
    assert [lane["steps"] for lane in lanes] == [
        [s.index for s in steps if s.info["attempt"] == a] for a in range(4)
    ]
    assert [lane["paths"] for lane in lanes] == [["P1_A"], ["P1_B"], [], []]
    assert [lane["stop"] for lane in lanes] == ["goal", "goal", "budget", "budget"]


async def test_forbidden_finish_actions_and_refusals_per_attempt() -> None:
    b = cell_bench(max_steps=8)
    record = await play_cell(b, [A, [*A, *B], B, []])
    view = view_of(b, record)
    finish_a, finish_b = "apply(crowbar, cell door)", "input(4321, cell door)"
    assert [lane["forbidden"] for lane in view["lanes"]] == [
        [],
        [finish_a],
        [finish_a, finish_b],
        [finish_a, finish_b],
    ]
    # The prompt of each attempt lists the same actions (Prompt 3).
    for lane in view["lanes"][1:]:
        first = record.steps[lane["steps"][0]]
        assert all(f"  * {a}" in first.observation for a in lane["forbidden"])
    refused = [s["index"] for s in view["steps"] if s["forbidden"]]
    assert refused == [s.index for s in record.steps if s.info.get("forbidden")]
    assert [view["steps"][i]["attempt"] for i in refused] == [1, 2]


async def test_paths_found_only_grow_and_match_the_metric() -> None:
    b = cell_bench(max_steps=8)
    record = await play_cell(b, [A, [*A, *B], B, []])
    view = view_of(b, record)
    found = [f["found"] for f in view["frames"]]
    for before, after in itertools.pairwise(found):
        assert after[: len(before)] == before
    assert found[-1] == record.outcome["paths_found"] == ["P1_A", "P1_B"]
    counted, total = counted_paths(episode_facts(record))
    assert (view["paths_found"], view["paths_total"]) == (len(counted), len(total)) == (2, 4)
    by_id = {p["id"]: p for p in view["paths"]}
    assert [p["id"] for p in view["paths"]] == ["P1_A", "P1_B", "P1_C1", "P1_C2"]
    assert {p: by_id[p]["mark"] for p in by_id} == {
        "P1_A": "O",
        "P1_B": "O",
        "P1_C1": "X",
        "P1_C2": "X",
    }
    assert (by_id["P1_A"]["type"], by_id["P1_C1"]["kind"]) == ("A", "C1")
    for path_id in ("P1_A", "P1_B"):
        position = by_id[path_id]["position"]
        assert record.steps[position - 1].info["path"] == path_id
        assert path_id in view["frames"][position]["found"]
        assert path_id not in view["frames"][position - 1]["found"]
    assert by_id["P1_C1"]["position"] is None and by_id["P1_C1"]["attempt"] is None


async def test_meaningless_streaks_restart_with_each_attempt() -> None:
    b = cell_bench(max_steps=50, meaningless_limit=5)
    record = await play_cell(b, [["dance wildly"] * 9, ["click(note)", "click(note)", *B], [], []])
    view = view_of(b, record)
    first = view["lanes"][0]
    assert first["stop"] == "meaningless" and len(first["steps"]) == 5
    assert first["streaks"] == [{"first": 0, "last": 4, "length": 5}]
    assert [view["steps"][i]["streak"] for i in first["steps"]] == [1, 2, 3, 4, 5]
    assert view["frames"][5]["streak"] == 5 and view["meaningless_limit"] == 5
    second = view["lanes"][1]
    # click(note) again returns nothing new: a streak of two, broken by the code.
    assert [view["steps"][i]["streak"] for i in second["steps"]] == [0, 1, 2, 0]
    assert second["streaks"] == [{"first": 6, "last": 7, "length": 2}]
    for lane, outcome in zip(view["lanes"], record.outcome["attempts"], strict=True):
        flagged = sum(view["steps"][i]["meaningless"] for i in lane["steps"])
        assert flagged == outcome["meaningless"]


async def test_judge_scores_and_missing_scores_per_step() -> None:
    b = cell_bench(attempts=1)
    actions = ["click(spoon)", "apply(spoon, cell door)", "input(1234, cell door)", *B]
    record = await play_cell(b, [actions], DivergenceJudgePolicy())
    view = view_of(b, record)
    assert [s["judged"] for s in view["steps"]] == [is_judged(s) for s in record.steps]
    judged = [s for s in view["steps"] if s["judge"] is not None]
    assert [s["index"] for s in judged] == [1, 2]
    for s in judged:
        assert s["judge"] == {"scores": record.steps[s["index"]].info["judge"]}
    assert view["criteria"] == ["originality", "elaboration", "groundedness"]
    assert view["momentum"] == {"originality": 3.0, "elaboration": 2.0, "groundedness": 2.0}
    assert (view["judged_steps"], view["judge_missing"]) == (2, 0)

    garbage = await play_cell(b, [actions], GarbagePolicy())
    view = view_of(b, garbage)
    missing = [s for s in view["steps"] if s["judge"] is not None]
    assert [s["index"] for s in missing] == [1, 2]
    assert all(s["judge"]["missing"] == garbage.steps[1].info["judge"]["missing"] for s in missing)
    assert view["judge_missing"] == 2 and view["momentum"]["originality"] is None


def test_two_phase_scenario_under_the_oracle(tmp_path: Path) -> None:
    result = run("escape", agent="oracle", instances=["house_heist"], runs_dir=tmp_path)
    record = next(iter(result.records()))
    b = EscapeBenchmark()
    view = view_of(b, record)
    assert view["title"] == "House Heist" and view["objective"]
    assert view["paths_found"] == view["paths_total"] == 8
    assert [lane["paths"] for lane in view["lanes"]] == [
        a["paths"] for a in record.outcome["attempts"]
    ]
    forbidden = [lane["forbidden"] for lane in view["lanes"]]
    assert [len(f) for f in forbidden] == [0, 2, 4, 6]
    for earlier, later in itertools.pairwise(forbidden):
        assert later[: len(earlier)] == earlier
    scenes = {s["name"] for s in view["scenes"]}
    assert all(f["scene"] in scenes for f in view["frames"])
    bag_tools = {name for f in view["frames"] for name in f["bag"]}
    assert bag_tools and bag_tools <= set(view["tools"])
    assert len(json.dumps(view)) < 200_000


def test_errored_record_without_steps_gives_a_valid_view() -> None:
    b = EscapeBenchmark()
    record = empty_record(b.id, "zombie_lab", "mutate")
    record.status, record.error = "error", "model down"
    view = view_of(b, record)
    assert len(view["frames"]) == 1 and view["steps"] == []
    assert [lane["played"] for lane in view["lanes"]] == [False] * 4
    assert view["paths_found"] == 0 and len(view["paths"]) == 4
    assert view["status"] == "error" and view["error"] == "model down"


def test_old_or_foreign_records_do_not_raise() -> None:
    b = EscapeBenchmark()
    record = empty_record(b.id, "no_such_scenario", "custom")
    record.steps = [
        StepRecord(index=0, observation="o", action="x", feedback="f", info={}),
        StepRecord(
            index=1,
            observation="o",
            action="y",
            feedback="f",
            info={"attempt": "two", "bag": [{"name": "rope"}, 3], "judge": {"originality": "x"}},
        ),
    ]
    view = view_of(b, record)
    assert view["paths"] == [] and view["scenes"] == []
    assert len(view["frames"]) == 3 and view["frames"][2]["bag"] == ["rope", "3"]
    assert view["steps"][1]["judge"] == {
        "scores": {"originality": None, "elaboration": None, "groundedness": None}
    }


def test_hostile_strings_come_back_unchanged() -> None:
    b = EscapeBenchmark()
    record = empty_record(b.id, "zombie_lab", "mutate")
    record.initial_info = {"objective": HOSTILE[0], "scene": HOSTILE[1], "bag": []}
    record.steps = [
        StepRecord(
            index=i,
            observation="o",
            action=text,
            feedback="f",
            valid=False,
            info={
                "attempt": 0,
                "t": i + 1,
                "canonical": None,
                "response": text,
                "scene": text,
                "bag": [text],
                "meaningless": True,
                "judge": {"missing": text},
            },
        )
        for i, text in enumerate(HOSTILE)
    ]
    view = view_of(b, record)
    assert view["objective"] == HOSTILE[0] and view["frames"][0]["scene"] == HOSTILE[1]
    for i, text in enumerate(HOSTILE):
        step, frame = view["steps"][i], view["frames"][i + 1]
        assert (step["action"], step["response"], step["judge"]["missing"]) == (text, text, text)
        assert (frame["scene"], frame["bag"]) == (text, [text])


# ---- aut-v1 ----


async def play_aut(bench: AUTBenchmark, judge_policy: Any | None) -> EpisodeRecord:
    instance = bench.instance("brick")
    model = ScriptedModel("scripted/aut-scripted", AUTScriptedPolicy(), ModelRuntime(cache=False))
    agent = bench.make_agent("redna", model, {})
    agent.reset(instance, 0)
    record = empty_record(bench.id, "brick", "objects")
    roles = {}
    if judge_policy is not None:
        roles = {"judge": ScriptedModel("scripted/j", judge_policy, ModelRuntime(cache=False))}
    await bench.run_episode(instance, agent, record, roles)
    record.metrics = bench.episode_metrics(record)
    return record


async def test_aut_runs_list_each_use_with_its_ratings() -> None:
    bench = AUTBenchmark()
    record = await play_aut(bench, AUTJudgePolicy())
    view = view_of(bench, record)
    assert view["kind"] == "aut" and view["object"] == "brick" and view["planned_runs"] == 3
    assert view["description"] == record.initial_info["description"]
    assert len(view["frames"]) == len(record.steps) + 1 == 4
    assert [f["runs"] for f in view["frames"]] == [0, 1, 2, 3]
    uses = [f["uses"] for f in view["frames"]]
    assert uses == sorted(uses) and uses[-1] == sum(len(s.info["uses"]) for s in record.steps)
    for run_view, step, row in zip(
        view["runs"], record.steps, record.metrics["by_run"], strict=True
    ):
        assert [u["text"] for u in run_view["uses"]] == step.info["uses"]
        assert [
            {"originality": u["originality"], "elaboration": u["elaboration"]}
            for u in run_view["uses"]
        ] == step.info["judge"]["scores"]
        assert run_view["fluency"] == len(step.info["uses"]) == row["fluency"]
        assert (run_view["originality"], run_view["elaboration"]) == (
            row["originality"],
            row["elaboration"],
        )
        assert run_view["judge"] == "rated" and run_view["missing"] is None
    assert view["fluency"] == record.metrics["fluency"]
    assert view["originality"] == record.metrics["originality"] and view["judged"] is True


async def test_aut_judge_missing_and_unjudged_runs() -> None:
    bench = AUTBenchmark()
    record = await play_aut(bench, GarbagePolicy())
    view = view_of(bench, record)
    assert [r["judge"] for r in view["runs"]] == ["missing"] * 3
    assert all(r["missing"] == record.steps[0].info["judge"]["missing"] for r in view["runs"])
    assert all(u["originality"] is None for r in view["runs"] for u in r["uses"])
    assert view["judge_missing"] == 3 and view["originality"] is None
    unjudged = view_of(bench, await play_aut(bench, None))
    assert [r["judge"] for r in unjudged["runs"]] == ["none"] * 3 and not unjudged["judged"]


def test_aut_errored_invalid_and_hostile_records() -> None:
    bench = AUTBenchmark()
    record = empty_record(bench.id, "brick", "objects")
    record.status = "error"
    view = view_of(bench, record)
    assert view["runs"] == [] and len(view["frames"]) == 1 and view["object"] == "brick"

    record.steps = [
        StepRecord(
            index=0,
            observation="o",
            action=HOSTILE[0],
            feedback="f",
            valid=False,
            info={
                "run": 0,
                "uses": [],
                "valid": False,
                "error": "no list",
                "judge": {"scores": []},
            },
        ),
        StepRecord(
            index=1,
            observation="o",
            action=json.dumps(HOSTILE),
            feedback="f",
            info={"run": 1, "uses": HOSTILE, "judge": {"missing": HOSTILE[2]}},
        ),
    ]
    view = view_of(bench, record)
    invalid, hostile = view["runs"]
    assert not invalid["valid"] and invalid["action"] == HOSTILE[0] and invalid["fluency"] == 0
    assert [u["text"] for u in hostile["uses"]] == HOSTILE and hostile["missing"] == HOSTILE[2]


# ---- the JS half ----


def test_view_js_builds_dom_only_through_ui() -> None:
    source = VIEW_JS.read_text(encoding="utf-8")
    for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert banned not in source
    assert "import " not in source and "export default" not in source
    assert "export function renderWorld(root, view, position, ui)" in source


# A stand-in for the viewer's `ui` and DOM in node: elements are plain objects, so the test
# reads back every text node and attribute renderWorld made.
NODE_HARNESS = r"""
import { readFileSync } from "node:fs";
const { renderWorld } = await import(process.argv[2]);
const views = JSON.parse(readFileSync(0, "utf8"));
function node(tag, attrs, children) {
  const n = { tag, attrs: {}, style: {}, children: [] };
  n.appendChild = (c) => {
    if (c === null || typeof c !== "object") throw new TypeError("appendChild of a non-node");
    n.children.push(c);
  };
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "style" && typeof v === "object") Object.assign(n.style, v);
    else if (typeof v === "function") n.attrs[k] = "fn";
    else n.attrs[k] = v;
  }
  const add = (c) => {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else if (typeof c === "string" || typeof c === "number") n.children.push({ text: String(c) });
    else n.children.push(c);
  };
  add(children);
  return n;
}
const seeks = [];
const ui = {
  el: (t, a, ...c) => node(t, a, c),
  svg: (t, a, ...c) => node(t, a, c),
  table: (h, rows) =>
    node("table", {}, [
      h.map((x) => node("th", {}, [x])),
      rows.map((r) => node("tr", {}, r.map((c) => node("td", {}, [c])))),
    ]),
  badge: (text, kind) => node("span", { class: "badge badge-" + kind }, [text]),
  lineChart: (spec) => node("svg", { series: spec.series.length }, []),
  seek: (p) => seeks.push(p),
  colors: {
    ok: "#1a7f37", bad: "#cf222e", warn: "#9a6700", info: "#0969da", muted: "#6e7781", case: [],
  },
};
const texts = (n, out) => {
  if (n.text !== undefined) out.push(n.text);
  (n.children || []).forEach((c) => texts(c, out));
  return out;
};
const out = [];
for (const view of views) {
  const positions = view.frames.map((_, p) => p);
  for (const p of positions) {
    const root = node("div", {}, []);
    renderWorld(root, view, p, ui);
    out.push({ kind: view.kind, position: p, texts: texts(root, []) });
  }
}
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
async def test_view_js_renders_every_position_with_model_text_as_text(tmp_path: Path) -> None:
    b = cell_bench(max_steps=8)
    escape = view_of(b, await play_cell(b, [A, [*A, *B], [HOSTILE[0], *B], []]))
    aut_bench = AUTBenchmark()
    aut = view_of(aut_bench, await play_aut(aut_bench, AUTJudgePolicy()))
    aut["runs"][0]["uses"][0]["text"] = HOSTILE[1]
    errored = [
        view_of(EscapeBenchmark(), empty_record("escape-v1", "zombie_lab", "mutate")),
        view_of(aut_bench, empty_record("aut-v1", "brick", "objects")),
    ]
    harness = tmp_path / "harness.mjs"
    harness.write_text(NODE_HARNESS, encoding="utf-8")
    done = subprocess.run(
        ["node", str(harness), VIEW_JS.as_uri()],
        input=json.dumps([escape, aut, *errored]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rendered = json.loads(done.stdout)
    assert len(rendered) == len(escape["frames"]) + len(aut["frames"]) + 2
    escape_texts = [t for r in rendered if r["kind"] == "escape" for t in r["texts"]]
    aut_texts = [t for r in rendered if r["kind"] == "aut" for t in r["texts"]]
    assert HOSTILE[0] in escape_texts and HOSTILE[1] in aut_texts
    assert "Attempt 4" in escape_texts and "P1_B" in escape_texts
    assert any("apply(crowbar, cell door)" in t for t in escape_texts)
    assert "not played" in rendered[-2]["texts"] and "No run was answered." in rendered[-1]["texts"]
