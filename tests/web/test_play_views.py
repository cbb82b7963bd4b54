"""The escape and TurtleSoup play controls (`<b>/web/play.js`), run in node with a stand-in `ui`
on play states built from real observations (web/play.py's format): the views show what the
agent reads, the controls send the action strings the env parses, hostile text stays text, the
observation data a player is sent holds no gold; then in chromium with the app's own ui.js."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import forkingpaths.benchmarks as benchmarks_package
from forkingpaths.benchmarks.escape.agents.reference import make_oracle
from forkingpaths.benchmarks.escape.benchmark import EscapeBenchmark
from forkingpaths.benchmarks.escape.observation import render_observation
from forkingpaths.benchmarks.turtlesoup.benchmark import TurtleSoupBenchmark
from forkingpaths.core.env import Observation
from forkingpaths.web.bundle import module_source
from forkingpaths.web.play import OBSERVATION_FIELDS, filter_observation
from forkingpaths.web.server import STATIC_DIR

NODE = shutil.which("node")
BENCHMARKS = Path(benchmarks_package.__file__).parent
MODULES = {b: BENCHMARKS / b / "web" / "play.js" for b in ("escape", "turtlesoup")}
HOSTILE = (
    '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
    '<a href="javascript:window.__pwned=1">x</a>" onmouseover="window.__pwned=1" x="'
)
needs_node = pytest.mark.skipif(NODE is None, reason="node runs the play controls")

# A stand-in for static/ui.js: elements are plain objects, strings become text nodes (never
# parsed), handlers are kept to be called by the test.
FAKE_UI = r"""
class FakeNode {
  constructor(tag) {
    this.tag = tag; this.attrs = {}; this.children = []; this.listeners = {}; this.style = {};
    this.className = ""; this.value = ""; this.disabled = false; this.parent = null;
  }
  appendChild(child) { child.parent = this; this.children.push(child); return child; }
  replaceChildren(...kids) { this.children = []; appendKids(this, kids); }
  remove() {
    if (this.parent) this.parent.children = this.parent.children.filter((c) => c !== this);
  }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
  set textContent(v) { this.children = []; this.appendChild(new TextNode(String(v))); }
}
class TextNode {
  constructor(text) { this.tag = "#text"; this.text = text; this.children = []; }
  get textContent() { return this.text; }
}
const created = [];
function appendKids(node, kids) {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) appendKids(node, k);
    else if (k instanceof FakeNode || k instanceof TextNode) node.appendChild(k);
    else node.appendChild(new TextNode(String(k)));
  }
}
function el(tag, attrs, ...kids) {
  const node = new FakeNode(tag);
  created.push(node);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value !== "function") throw new Error(`handler ${name} given as text`);
      node.listeners[name.slice(2)] = value;
    } else if (name === "style") Object.assign(node.style, value);
    else if (name === "class") node.className = String(value);
    else if (name === "value" || name === "disabled") node[name] = value;
    else node.attrs[name] = value === true ? "" : String(value);
  }
  appendKids(node, kids);
  if (tag === "select" && node.value === "") {
    const first = node.children.find((c) => c.tag === "option");
    if (first) node.value = first.value;
  }
  return node;
}
const ui = {
  el, svg: el, add: (node, ...kids) => { appendKids(node, kids); return node; },
  badge: (text, kind) => el("span", { class: `badge badge-${kind || "muted"}` }, text),
  table: (headers, rows) => el("table", null, el("tr", null, headers.map((h) => el("th", null, h))),
    rows.map((r) => el("tr", null, r.map((c) => el("td", null, c))))),
  textBlock: (text) => el("pre", { class: "fp-text" }, String(text ?? "")),
  formatNumber: (v) => String(v), colors: {}, lineChart: () => el("svg"), diff: () => el("pre"),
};
function walk(node, out = []) {
  out.push(node);
  for (const c of node.children) walk(c, out);
  return out;
}
function all(root, cls) {
  return walk(root).filter((n) => n.className && n.className.split(" ").includes(cls));
}
function one(root, cls) {
  const found = all(root, cls);
  if (found.length !== 1) throw new Error(`${found.length} nodes of class ${cls}`);
  return found[0];
}
function texts(root) { return walk(root).filter((n) => n.tag === "#text").map((n) => n.text); }
function render(renderPlay, state) {
  const sent = [];
  const root = el("div");
  renderPlay(root, state, ui, (action, thought) => {
    sent.push([action, thought ?? null]);
    return Promise.resolve();
  });
  return { root, sent };
}
function click(node) { node.listeners.click({ preventDefault() {} }); }
function choose(node, value) {
  node.value = value;
  if (node.listeners.change) node.listeners.change({});
}
function type(node, value) {
  node.value = value;
  if (node.listeners.input) node.listeners.input({});
}
function enter(node) {
  node.listeners.keydown({ key: "Enter", isComposing: false, preventDefault() {} });
}
"""


def _module(benchmark: str) -> str:
    """A play module as a function scope of a classic script (as the viewer's bundle joins it)."""
    source = MODULES[benchmark].read_text(encoding="utf-8")
    assert not re.search(r"^import ", source, re.M), "the play controls import nothing"
    body = re.sub(r"^export ", "", source, flags=re.M)
    return f"(function () {{\n{body}\nreturn {{ renderPlay }};\n}})()"


def _node(benchmark: str, states: dict[str, Any], body: str) -> Any:
    program = (
        f"{FAKE_UI}\nconst {{ renderPlay }} = {_module(benchmark)};\n"
        f"const states = {json.dumps(states)};\n"
        f"const __out = (() => {{ {body} }})();\n"
        "process.stdout.write(JSON.stringify(__out));"
    )
    done = subprocess.run(
        # The program on stdin: the states are longer than a command line may be.
        [NODE or "node", "--input-type=commonjs"],
        input=program,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@dataclass
class Moment:
    """One point of a played episode: the observation the player sees, the info of the step that
    led to it, and the steps so far as the play state lists them."""

    observation: Observation
    info: dict[str, Any]
    steps: list[dict[str, Any]]


def _state(benchmark: str, moment: Moment, done: bool = False) -> dict[str, Any]:
    """The play state `web/play.py` sends for `moment` (its documented format)."""
    observation = moment.observation
    text = observation.text or (moment.steps[-1]["feedback"] if done and moment.steps else "")
    return {
        "session": "0" * 32,
        "benchmark": benchmark,
        "instance": "instance",
        "trial": 0,
        "step": len(moment.steps),
        "observation": {"text": text, "data": filter_observation(benchmark, observation.data)},
        "history": moment.steps,
        "trail": [],
        "waiting": not done,
        "done": done,
        "status": "done" if done else "running",
        "metrics": None,
        "error": None,
    }


# ---- real observations ----


def _escape_episode() -> list[Moment]:
    """house_heist played by the oracle over its four attempts; a step's feedback is what the
    protocol records (the next observation, or the ended attempt's last view)."""
    benchmark = EscapeBenchmark()
    instance = benchmark.instances("mutate")[0]
    env = benchmark.make_env(instance)
    agent = make_oracle(benchmark)
    agent.reset(instance, 0)
    moments = [Moment(env.reset(seed=0), {}, [])]

    async def play() -> None:
        for _ in range(100):
            decision = await agent.act(moments[-1].observation)
            step = env.step(decision.action)
            end = env.attempt_end
            feedback = end.observation.text if end is not None else step.observation.text
            entry = {
                "action": decision.action,
                "thought": decision.thought,
                "feedback": feedback,
                "valid": step.info["valid"],
            }
            moments.append(Moment(step.observation, step.info, [*moments[-1].steps, entry]))
            if step.terminated or step.truncated:
                return

    asyncio.run(play())
    return moments


@pytest.fixture(scope="module")
def escape_episode() -> list[Moment]:
    return _escape_episode()


@pytest.fixture(scope="module")
def escape_states(escape_episode: list[Moment]) -> dict[str, Any]:
    data = [m.observation.data for m in escape_episode]
    # In the study with the pipe head in the bag, just before the first checkpoint.
    study = next(i for i, d in enumerate(data) if d["scene"] == "study" and d["bag"])
    second = next(i for i, d in enumerate(data) if d["attempt"] == 1)
    return {
        "first": _state("escape", escape_episode[0]),
        "study": _state("escape", escape_episode[study]),
        "second": _state("escape", escape_episode[second]),
        "done": _state("escape", escape_episode[-1], done=True),
    }


def _turtlesoup_states() -> dict[str, Any]:
    benchmark = TurtleSoupBenchmark()
    states: dict[str, Any] = {}
    for split, questions in (
        ("en", ["Does the café face a barbershop?", "Did he die?", "{not a question}"]),
        ("zh", ["是镜子吗?"]),
    ):
        instance = benchmark.instances(split)[0]
        env = benchmark.make_env(instance)
        moments = [Moment(env.reset(seed=0, options={}), {}, [])]

        async def play(env: Any, actions: list[str]) -> list[Any]:
            return [(a, await env.astep(a)) for a in actions]

        for action, step in asyncio.run(play(env, [*questions, "/solve", "A summary."])):
            entry = {
                "action": action,
                "thought": "",
                "feedback": step.info["feedback"],
                "valid": step.info.get("valid", True),
            }
            moments.append(Moment(step.observation, step.info, [*moments[-1].steps, entry]))
        states[f"{split}-first"] = _state("turtlesoup", moments[0])
        states[f"{split}-asked"] = _state("turtlesoup", moments[len(questions)])
        states[f"{split}-summarize"] = _state("turtlesoup", moments[-2])
        states[f"{split}-done"] = _state("turtlesoup", moments[-1], done=True)
    return states


@pytest.fixture(scope="module")
def turtlesoup_states() -> dict[str, Any]:
    return _turtlesoup_states()


# ---- escape ----


@needs_node
def test_escape_views_show_what_the_agent_reads(escape_states: dict[str, Any]) -> None:
    body = """
    const out = {};
    for (const [name, state] of Object.entries(states)) {
      const { root } = render(renderPlay, state);
      const shown = texts(root);
      out[name] = {
        text: shown.join("\\n"),
        response: all(root, "escape-response").map((n) => texts(n).join("")),
        ended: all(root, "escape-attempt-ended").map((n) => texts(n).join("\\n")),
        disabled: all(root, "escape-quick").map((n) => n.disabled),
        forbidden: all(root, "escape-forbidden").length,
        quick: all(root, "escape-quick").map((n) => n.attrs["data-action"]),
        bag: all(root, "escape-bag").map((n) => texts(n).join("")),
        history: all(root, "escape-history").map((n) => texts(n).join(" ")),
        kinds: all(root, "escape-kind").map((n) => n.children.map((o) => o.value)),
        tutorialOpen: all(root, "escape-tutorial").map((n) => "open" in n.attrs),
        send: all(root, "escape-send-built").length + all(root, "escape-send-free").length,
      };
    }
    return out;
    """
    got = _node("escape", escape_states, body)
    first, study = got["first"], got["study"]
    assert first["response"] == [] and first["ended"] == []
    assert "attempt 1 of 4" in first["text"] and "step 1" in first["text"]
    assert "Objective: " in first["text"] and "fingerprint safe" in first["text"]
    assert first["kinds"] == [["click", "apply", "craft", "input", "move"]]
    assert first["tutorialOpen"] == [True] and study["tutorialOpen"] == [False]
    assert "click(alarm panel)" in first["quick"] and "click(umbrella)" in first["quick"]
    assert "move(study)" in first["quick"] and first["send"] == 2
    assert first["bag"] == ["(empty)"] and first["history"] == ["(none yet)"]
    # The environment's answer to the last step, then the bag and context views.
    assert study["response"] == ["ResponseYou move to study."]
    assert study["disabled"] and not any(study["disabled"])
    assert "pipe head" in study["bag"][0] and "[" not in study["bag"][0]
    assert "click(pipe head)" in study["history"][0]
    assert "You collect the pipe head" in study["history"][0]
    # Forbidden finish actions: only when the observation lists them (attempts after a find).
    assert first["forbidden"] == 0 and study["forbidden"] == 0
    second = got["second"]
    assert second["forbidden"] == 1 and "attempt 2 of 4" in second["text"]
    for action in escape_states["second"]["observation"]["data"]["forbidden"]:
        assert action in second["text"]
        assert action in escape_states["second"]["observation"]["text"]
    # The step that ended attempt 1 answered with GAME END!, shown above the new attempt.
    assert second["response"] == [] and len(second["ended"]) == 1
    assert second["ended"][0].startswith("Attempt 1 of 4 is over.")
    assert "Action: apply(door key, study door)" in second["ended"][0]
    assert "GAME END!" in second["ended"][0]
    # The end: no controls, the last answer.
    done = got["done"]
    assert done["send"] == 0 and done["quick"] == [] and "Scenario over" in done["text"]
    assert "GAME END!" in done["response"][0] and done["forbidden"] == 0


@needs_node
def test_escape_controls_send_the_actions_the_env_parses(escape_states: dict[str, Any]) -> None:
    body = """
    const results = {};
    const run = (name, play) => {
      const { root, sent } = render(renderPlay, states.study);
      play(root);
      results[name] = sent;
    };
    const quick = (root, action) =>
      all(root, "escape-quick").find((n) => n.attrs["data-action"] === action);
    run("click", (root) => click(quick(root, "click(fingerprint safe)")));
    run("move", (root) => click(quick(root, "move(hallway)")));
    run("apply", (root) => {
      choose(one(root, "escape-kind"), "apply");
      choose(one(root, "escape-arg-tool"), "pipe head");
      choose(one(root, "escape-arg-item"), "fingerprint safe");
      one(root, "escape-reason").value = "  the safe's glass may crack  ";
      results.applyPreview = one(root, "escape-preview").textContent;
      click(one(root, "escape-send-built"));
    });
    run("input", (root) => {
      choose(one(root, "escape-kind"), "input");
      type(one(root, "escape-input-text"), " 2518 ");
      results.inputItems = one(root, "escape-arg-item").children.map((o) => o.value);
      choose(one(root, "escape-arg-item"), results.inputItems[0]);
      enter(one(root, "escape-input-text"));
    });
    run("inputEmpty", (root) => {
      choose(one(root, "escape-kind"), "input");
      click(one(root, "escape-send-built"));
      results.inputEmptyStatus = one(root, "escape-status").textContent;
    });
    run("moveBuilt", (root) => {
      choose(one(root, "escape-kind"), "move");
      results.scenes = one(root, "escape-arg-scene").children.map((o) => o.value);
      click(one(root, "escape-send-built"));
    });
    run("craftNoBag", (root) => {
      choose(one(root, "escape-kind"), "craft");
      click(one(root, "escape-send-built"));
    });
    run("free", (root) => {
      const free = one(root, "escape-free");
      free.value = "apply(fire extinguisher, lab door)";
      enter(free);
      results.locked = all(root, "escape-send-built").map((b) => b.disabled);
    });
    run("freeButton", (root) => {
      one(root, "escape-free").value = "craft(curtain hook, silk cord)";
      click(one(root, "escape-send-free"));
    });
    return results;
    """
    got = _node("escape", escape_states, body)
    data = escape_states["study"]["observation"]["data"]
    assert got["click"] == [["click(fingerprint safe)", None]]
    assert got["move"] == [["move(hallway)", None]]
    assert got["applyPreview"] == "apply(pipe head, fingerprint safe)"
    assert got["apply"] == [["apply(pipe head, fingerprint safe)", "the safe's glass may crack"]]
    assert got["inputItems"] == data["items"]
    assert got["input"] == [[f"input(2518, {data['items'][0]})", None]]
    assert got["inputEmpty"] == [] and "first" in got["inputEmptyStatus"]
    assert got["scenes"] == data["valid_scene_names"]
    assert got["moveBuilt"] == [[f"move({data['valid_scene_names'][0]})", None]]
    assert len(data["bag"]) == 1 and got["craftNoBag"] == []
    assert got["free"] == [["apply(fire extinguisher, lab door)", None]] and got["locked"] == [True]
    assert got["freeButton"] == [["craft(curtain hook, silk cord)", None]]


@needs_node
def test_escape_hostile_text_stays_text(escape_states: dict[str, Any]) -> None:
    state = json.loads(json.dumps(escape_states["study"]))
    data = state["observation"]["data"]
    state["observation"]["text"] = HOSTILE
    for step in state["history"]:
        step.update(action=HOSTILE, feedback=HOSTILE, thought=HOSTILE)
    data.update(
        objective=HOSTILE,
        scene=HOSTILE,
        scene_description=HOSTILE,
        items=[HOSTILE],
        scene_tools=[HOSTILE],
        moves=[{"label": HOSTILE, "scene": HOSTILE}],
        valid_scene_names=[HOSTILE],
        bag=[{"name": HOSTILE, "desc": HOSTILE}],
        forbidden=[HOSTILE],
        history=[{"step": 1, "action": HOSTILE, "response": HOSTILE}],
        last={"action": HOSTILE, "response": HOSTILE},
    )
    # A later attempt's first view: the ended attempt's last view (its feedback) is shown too.
    ended = json.loads(json.dumps(escape_states["second"]))
    ended["history"][-1]["feedback"] = f"Recent history:\n[Step 1]\nAction: {HOSTILE}\n{HOSTILE}"
    ended["observation"]["data"].update(forbidden=[HOSTILE], objective=HOSTILE)
    body = """
    const { root, sent } = render(renderPlay, states.hostile);
    click(all(root, "escape-quick")[0]);
    render(renderPlay, states.ended);
    return { tags: [...new Set(created.map((n) => n.tag))], texts: created.flatMap(texts), sent };
    """
    got = _node("escape", {"hostile": state, "ended": ended}, body)
    assert not {"script", "img", "a", "iframe", "style"} & set(got["tags"])
    assert sum(HOSTILE in t for t in got["texts"]) >= 15
    assert got["sent"] == [[f"click({HOSTILE})", None]]


# ---- turtlesoup ----


@needs_node
def test_turtlesoup_views_show_the_dialogue_as_the_questioner_reads_it(
    turtlesoup_states: dict[str, Any],
) -> None:
    body = """
    const out = {};
    for (const [name, state] of Object.entries(states)) {
      const { root } = render(renderPlay, state);
      out[name] = {
        text: texts(root).join("\\n"),
        surface: all(root, "turtlesoup-surface").map((n) => n.textContent),
        replies: all(root, "badge").map((n) => n.textContent),
        keys: all(root, "turtlesoup-key").length,
        ask: all(root, "turtlesoup-question-input").length,
        solve: all(root, "turtlesoup-solve").length,
        summary: all(root, "turtlesoup-summary").length,
        feedback: all(root, "turtlesoup-feedback").map((n) => n.textContent),
      };
    }
    return out;
    """
    got = _node("turtlesoup", turtlesoup_states, body)
    for lang in ("en", "zh"):
        first = turtlesoup_states[f"{lang}-first"]["observation"]
        assert got[f"{lang}-first"]["surface"] == [first["data"]["surface"]]
        assert got[f"{lang}-first"]["ask"] == 1 and got[f"{lang}-first"]["solve"] == 1
        assert got[f"{lang}-first"]["summary"] == 0
        assert got[f"{lang}-summarize"]["ask"] == 0 and got[f"{lang}-summarize"]["summary"] == 1
        assert got[f"{lang}-done"]["ask"] == got[f"{lang}-done"]["summary"] == 0
        # Every reply as the observation text shows it: "1. question -> Yes<Key Clue>".
        asked = turtlesoup_states[f"{lang}-asked"]["observation"]
        for h, reply in zip(asked["data"]["history"], got[f"{lang}-asked"]["replies"], strict=True):
            assert reply == h["text"]
            assert f"{h['turn']}. {h['question']} -> {reply}" in asked["text"]
    en = got["en-asked"]
    assert en["replies"] == ["Yes<Key Clue>", "Unknown"] and en["keys"] == 1
    assert en["feedback"] == ["Last answer: Invalid question (not a question)."]
    assert "Question 4 of 30" in en["text"]
    assert got["zh-asked"]["replies"] == ["是"] and "第 2 问(共 30 问)" in got["zh-asked"]["text"]
    assert "提问" in got["zh-first"]["text"]
    # The end: the last observation has no dialogue; the steps give the questions and summary.
    done = got["en-done"]["text"]
    assert "Does the café face a barbershop?" in done and "Yes<Key Clue>" in done
    assert "A summary." in done and "/solve" not in done


@needs_node
def test_turtlesoup_controls_send_questions_solve_and_the_summary(
    turtlesoup_states: dict[str, Any],
) -> None:
    body = """
    const results = {};
    const run = (name, state, play) => {
      const { root, sent } = render(renderPlay, states[state]);
      play(root);
      results[name] = sent;
    };
    run("enter", "en-asked", (root) => {
      const q = one(root, "turtlesoup-question-input");
      q.value = "  Was the sign meant for a mirror?  ";
      enter(q);
      const controls = [q, one(root, "turtlesoup-ask"), one(root, "turtlesoup-solve")];
      results.locked = controls.map((n) => n.disabled);
    });
    run("button", "en-first", (root) => {
      one(root, "turtlesoup-question-input").value = "Is Rosa the painter?";
      click(one(root, "turtlesoup-ask"));
    });
    run("empty", "en-first", (root) => {
      enter(one(root, "turtlesoup-question-input"));
      results.emptyStatus = one(root, "turtlesoup-status").textContent;
    });
    run("solve", "en-first", (root) => click(one(root, "turtlesoup-solve")));
    run("summary", "en-summarize", (root) => {
      one(root, "turtlesoup-summary").value = "The sign was for barbershop mirrors.\\nLine two.";
      click(one(root, "turtlesoup-submit"));
    });
    run("summaryKeys", "en-summarize", (root) => {
      const box = one(root, "turtlesoup-summary");
      box.value = "Mirrors.";
      enter(box);  // a new line, not a send
      box.listeners.keydown({ key: "Enter", ctrlKey: true, preventDefault() {} });
    });
    return results;
    """
    got = _node("turtlesoup", turtlesoup_states, body)
    assert got["enter"] == [["Was the sign meant for a mirror?", None]]
    assert got["locked"] == [True, True, True]
    assert got["button"] == [["Is Rosa the painter?", None]]
    assert got["empty"] == [] and got["emptyStatus"]
    assert got["solve"] == [["/solve", None]]
    assert got["summary"] == [["The sign was for barbershop mirrors.\nLine two.", None]]
    assert got["summaryKeys"] == [["Mirrors.", None]]


@needs_node
def test_turtlesoup_hostile_text_stays_text(turtlesoup_states: dict[str, Any]) -> None:
    state = json.loads(json.dumps(turtlesoup_states["en-asked"]))
    data = state["observation"]["data"]
    data.update(title=HOSTILE, surface=HOSTILE)
    for h in data["history"]:
        h.update(question=HOSTILE, text=HOSTILE)
    done = json.loads(json.dumps(turtlesoup_states["en-done"]))
    for step in [*state["history"], *done["history"]]:
        step.update(action=HOSTILE, feedback=HOSTILE)
    body = """
    render(renderPlay, states.hostile);
    render(renderPlay, states.done);
    return { tags: [...new Set(created.map((n) => n.tag))], texts: created.flatMap(texts) };
    """
    got = _node("turtlesoup", {"hostile": state, "done": done}, body)
    assert not {"script", "img", "a", "iframe", "style"} & set(got["tags"])
    assert sum(HOSTILE in t for t in got["texts"]) >= 10


@needs_node
def test_controls_wait_while_the_environment_answers(
    escape_states: dict[str, Any], turtlesoup_states: dict[str, Any]
) -> None:
    body = """
    const state = { ...states.s, waiting: false };
    const { root, sent } = render(renderPlay, state);
    const controls = walk(root).filter((n) => ["button", "input", "textarea"].includes(n.tag));
    const enabled = controls.filter((n) => !n.disabled).length;
    // Even a click or an Enter that reached them would send nothing.
    for (const n of controls) {
      n.value = "Is it?";
      if (n.listeners.click) click(n);
      if (n.listeners.keydown) enter(n);
    }
    return { n: controls.length, enabled, sent };
    """
    for benchmark, state in (
        ("escape", escape_states["study"]),
        ("turtlesoup", turtlesoup_states["en-asked"]),
        ("turtlesoup", turtlesoup_states["en-summarize"]),
    ):
        got = _node(benchmark, {"s": state}, body)
        assert got["n"] > 0 and got["enabled"] == 0 and got["sent"] == []


# ---- the modules' own rules, and what a player is sent ----


@pytest.mark.parametrize("benchmark", sorted(MODULES))
def test_play_modules_build_the_page_only_with_ui(benchmark: str) -> None:
    source = MODULES[benchmark].read_text(encoding="utf-8")
    for banned in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.",
        "window.",
        "eval(",
        "Function(",
        "export default",
    ):
        assert banned not in source, banned
    assert re.findall(r"^export (\w+ \w+)", source, re.M) == ["function renderPlay"]
    bench = {"escape": EscapeBenchmark, "turtlesoup": TurtleSoupBenchmark}[benchmark]()
    assert bench.play_script() == MODULES[benchmark]
    module_source(MODULES[benchmark].name, source, "x")  # joins a static bundle as it is
    if NODE is not None:
        subprocess.run([NODE, "--check", str(MODULES[benchmark])], check=True)


def test_escape_observation_data_sent_to_a_player_holds_no_gold(
    escape_episode: list[Moment],
) -> None:
    benchmark = EscapeBenchmark()
    _, meta = benchmark.load(benchmark.instances("mutate")[0])
    assert meta is not None
    for moment in escape_episode:
        view = filter_observation("escape", moment.observation.data)
        assert "outcome" not in view  # its path catalog (paths_total) is the gold
        # Forbidden: the finish actions of paths found in earlier attempts, none other.
        found = _found_before(escape_episode, moment)
        assert set(view["forbidden"]) == {p.finish for p in meta.paths if p.id in found}
        # Nothing names a path (P1_A ...) nor lists a gold path's steps.
        text = json.dumps(view)
        assert not re.search(r"\bP\d_", text)
        for path in meta.paths:
            assert json.dumps(list(path.gold)) not in text
    assert "outcome" in escape_episode[-1].observation.data
    # The player plays the same observation: the data sent renders the agent's prompt again.
    for moment in escape_episode[:5]:
        view = filter_observation("escape", moment.observation.data)
        assert render_observation(view) == moment.observation.text


def _found_before(episode: list[Moment], moment: Moment) -> list[str]:
    """Paths credited in attempts before `moment`'s attempt."""
    attempt = moment.observation.data["attempt"]
    return [m.info["path"] for m in episode if m.info.get("path") and m.info["attempt"] < attempt]


def test_turtlesoup_observation_data_sent_to_a_player_holds_no_gold() -> None:
    benchmark = TurtleSoupBenchmark()
    for split in ("en", "zh"):
        instance = benchmark.instances(split)[0]
        puzzle = benchmark.puzzle(instance)
        env = benchmark.make_env(instance)
        observations = [env.reset(seed=0, options={})]

        async def play(env: Any, actions: list[str]) -> list[Observation]:
            return [(await env.astep(action)).observation for action in actions]

        actions = [puzzle.key_clues[0], "Is it about a mirror?", "/solve", puzzle.bottom]
        observations += asyncio.run(play(env, actions))
        final = observations[-1].data["outcome"]
        # As with a judge: its evaluation quotes the bottom and the key points.
        final["evaluation"] = {"points": list(puzzle.key_clues), "bottom": puzzle.bottom}
        final["judge"] = "scripted/judge"
        for observation in observations:
            view = filter_observation("turtlesoup", observation.data)
            text = json.dumps(view, ensure_ascii=False)
            assert "initial_info" not in view and "outcome" not in view
            assert puzzle.bottom not in text
            for secret in puzzle.key_clues[1:]:
                assert secret not in text
        assert set(filter_observation("turtlesoup", observations[1].data)) == set(
            OBSERVATION_FIELDS["turtlesoup"]
        )


# ---- in a real browser, with the app's own ui.js ----

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOTS = Path(os.environ.get("FORKINGPATHS_SCREENSHOTS", "test-artifacts/screenshots"))
UI_NAMES = "el, svg, add, badge, table, formatNumber, lineChart, diff, textBlock, colors"


@pytest.fixture(scope="module")
def browser(escape_states: dict[str, Any], turtlesoup_states: dict[str, Any]) -> Iterator[Any]:
    # The states are built first: Playwright's sync API holds an event loop while it runs.
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - CI installs it (the dev extra)
        pytest.skip("needs the playwright package")
    if CHROMIUM is None:
        pytest.skip("needs Debian's chromium")
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=args)
        yield launched
        launched.close()


def _open(browser: Any, benchmark: str, state: dict[str, Any]) -> Any:
    """A page showing `benchmark`'s controls for `state`, drawn with the app's ui.js and style;
    `window.__sent` collects what they send."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.set_content('<!doctype html><meta charset="utf-8"><main id="root"></main>')
    page.add_style_tag(content=(STATIC_DIR / "style.css").read_text(encoding="utf-8"))
    ui_source = re.sub(
        r"^export ", "", (STATIC_DIR / "ui.js").read_text(encoding="utf-8"), flags=re.M
    )
    page.add_script_tag(
        content=(
            f"window.ui = (function () {{\n{ui_source}\nreturn {{ {UI_NAMES} }};\n}})();\n"
            f"window.play = {_module(benchmark)};\n"
            "window.__sent = [];\n"
            "window.__draw = (state) => {\n"
            "  const root = document.getElementById('root');\n"
            "  root.replaceChildren();\n"
            "  window.play.renderPlay(root, state, window.ui, (action, thought) => {\n"
            "    window.__sent.push([action, thought ?? null]);\n"
            "    return Promise.resolve(state);\n"
            "  });\n"
            "};\n"
        )
    )
    page.evaluate("(state) => window.__draw(state)", state)
    return page


def _shot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_escape_controls_in_a_browser(browser: Any, escape_states: dict[str, Any]) -> None:
    page = _open(browser, "escape", escape_states["study"])
    _shot(page, "play-escape")
    page.select_option(".escape-kind", "apply")
    page.select_option(".escape-arg-tool", "pipe head")
    page.select_option(".escape-arg-item", "fingerprint safe")
    page.fill(".escape-reason", "heavy enough to crack the glass")
    assert page.text_content(".escape-preview") == "apply(pipe head, fingerprint safe)"
    page.click(".escape-send-built")
    assert page.evaluate("window.__sent") == [
        ["apply(pipe head, fingerprint safe)", "heavy enough to crack the glass"]
    ]
    page.evaluate("(state) => window.__draw(state)", escape_states["second"])
    assert page.is_visible(".escape-forbidden")
    _shot(page, "play-escape-attempt-2")
    hostile = json.loads(json.dumps(escape_states["study"]))
    hostile["observation"]["data"].update(
        scene_description=HOSTILE, items=[HOSTILE], bag=[{"name": HOSTILE, "desc": HOSTILE}]
    )
    page.evaluate("(state) => window.__draw(state)", hostile)
    page.click(".escape-quick")
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('#root script, #root img').length") == 0
    assert page.errors == []


def test_turtlesoup_controls_in_a_browser(browser: Any, turtlesoup_states: dict[str, Any]) -> None:
    page = _open(browser, "turtlesoup", turtlesoup_states["en-asked"])
    _shot(page, "play-turtlesoup")
    # The cursor waits in the question box: a question is typed and sent with Enter alone.
    page.keyboard.type("Did the barbers' customers see the sign?")
    page.keyboard.press("Enter")
    page.evaluate("(state) => window.__draw(state)", turtlesoup_states["en-summarize"])
    page.fill(".turtlesoup-summary", "Customers read the sign in the barbershop mirror.")
    page.click(".turtlesoup-submit")
    assert page.evaluate("window.__sent") == [
        ["Did the barbers' customers see the sign?", None],
        ["Customers read the sign in the barbershop mirror.", None],
    ]
    _shot(page, "play-turtlesoup-summary")
    page.evaluate("(state) => window.__draw(state)", turtlesoup_states["zh-asked"])
    _shot(page, "play-turtlesoup-zh")
    assert page.errors == []
