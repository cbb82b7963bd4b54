// World views of escape-v1 (MUTATE attempts) and aut-v1 (Alternate Uses Test runs).
// Built only with ui.el / ui.svg: every model-written string becomes a text node or an attribute.

const ESCAPE_ROW_H = 13;
const ESCAPE_SCORE_COLORS = ["#6e7781", "#cf222e", "#e36209", "#9a6700", "#0969da", "#1a7f37"];
const ESCAPE_CRITERIA_SHORT = { originality: "O", elaboration: "E", groundedness: "G" };

export function renderWorld(root, view, position, ui) {
  if (!view) return;
  if (view.kind === "aut") {
    escapeRenderAut(root, view, position, ui);
  } else {
    escapeRenderEscape(root, view, position, ui);
  }
}

// ---- shared helpers ----

function escapeScoreColor(value) {
  if (typeof value !== "number") return ESCAPE_SCORE_COLORS[0];
  const i = Math.max(1, Math.min(5, Math.round(value)));
  return ESCAPE_SCORE_COLORS[i];
}

function escapeFmt(value, digits) {
  return typeof value === "number" ? value.toFixed(digits === undefined ? 2 : digits) : "–";
}

function escapeSection(ui, title, ...children) {
  return ui.el(
    "div",
    { style: { margin: "8px 0" } },
    ui.el("div", { style: { fontWeight: "600", fontSize: "12px", margin: "0 0 4px" } }, title),
    ...children,
  );
}

function escapeScoreChip(ui, label, value, title) {
  return ui.el(
    "span",
    {
      class: "mono",
      title: title,
      style: {
        display: "inline-block",
        minWidth: "10px",
        padding: "0 2px",
        marginLeft: "1px",
        borderRadius: "2px",
        fontSize: "9px",
        lineHeight: "11px",
        color: "#fff",
        textAlign: "center",
        background: escapeScoreColor(value),
      },
    },
    label === null ? (typeof value === "number" ? String(value) : "?") : label,
  );
}

// The app's badges are sized for text lines; a lane header needs them smaller.
function escapeSmallBadge(ui, text, kind) {
  const badge = ui.badge(text, kind);
  badge.style.fontSize = "9px";
  badge.style.lineHeight = "1.3";
  badge.style.padding = "0 4px";
  return badge;
}

function escapeLegendItem(ui, color, text, border) {
  return ui.el(
    "span",
    { style: { marginRight: "10px", whiteSpace: "nowrap" } },
    ui.el("span", {
      style: {
        display: "inline-block",
        width: "10px",
        height: "10px",
        verticalAlign: "middle",
        marginRight: "3px",
        background: color,
        borderLeft: border ? "3px solid " + border : "none",
      },
    }),
    text,
  );
}

// ---- escape-v1 ----

function escapeRenderEscape(root, view, position, ui) {
  const steps = view.steps || [];
  const frames = view.frames || [];
  const pos = Math.max(0, Math.min(position, frames.length - 1));
  const frame = frames[pos] || { attempt: 0, t: 0, scene: null, bag: [], found: [], streak: 0 };
  const selected = pos > 0 ? steps[pos - 1] : null;

  root.appendChild(escapeHeader(ui, view));
  root.appendChild(escapePaths(ui, view, frame));
  root.appendChild(escapeHere(ui, view, frame, selected));
  const chart = escapeChart(ui, view, pos);
  if (chart) root.appendChild(chart);
  root.appendChild(escapeLanes(ui, view, pos, frame));
  root.appendChild(escapeLegend(ui, view));
}

function escapeHeader(ui, view) {
  const m = view.momentum || {};
  const crit = view.criteria || [];
  return ui.el(
    "div",
    {},
    ui.el(
      "div",
      { style: { fontWeight: "600", fontSize: "14px" } },
      view.title || view.scenario,
      " ",
      ui.badge(
        "Path Discovery " + view.paths_found + " / " + view.paths_total,
        view.paths_found > 0 ? "ok" : "muted",
      ),
      " ",
      typeof view.escapes === "number" ? ui.badge(view.escapes + " escapes", "info") : null,
      " ",
      view.status === "error" ? ui.badge("errored", "bad") : null,
    ),
    view.error ? ui.el("div", { class: "mono", style: { color: ui.colors.bad, fontSize: "11px" } }, view.error) : null,
    ui.el("div", { class: "muted", style: { fontSize: "11px" } }, "Objective: ", view.objective || "–"),
    ui.el(
      "div",
      { style: { fontSize: "11px", marginTop: "2px" } },
      "Divergence Momentum: ",
      crit.map((c) =>
        ui.el(
          "span",
          { style: { marginRight: "8px" } },
          c.charAt(0).toUpperCase() + c.slice(1) + " ",
          ui.el("b", {}, escapeFmt(m[c])),
        ),
      ),
      ui.el(
        "span",
        { class: "muted" },
        "(" + (view.judged_steps ?? 0) + " judged",
        view.judge_missing ? ", " + view.judge_missing + " missing" : "",
        ")",
      ),
    ),
  );
}

function escapePaths(ui, view, frame) {
  const paths = view.paths || [];
  if (paths.length === 0) {
    return escapeSection(ui, "Gold paths", ui.el("div", { class: "muted" }, "No path metadata for this scenario."));
  }
  const found = new Set(frame.found || []);
  const frames = view.frames || [];
  const rows = paths.map((p) => {
    // Said in words: a bare O/X here read as a tick; the paper's O/X table is the report's.
    let status;
    const done = p.position !== null && p.position !== undefined;
    const when = done
      ? "attempt " + (p.attempt + 1) + ", its step " + ((frames[p.position] || {}).t ?? "?")
      : "";
    // Plain wrapping text, not a badge: the table must fit the ~560 px panel.
    const cell = { display: "inline-block", maxWidth: "120px", whiteSpace: "normal" };
    if (found.has(p.id)) {
      status = ui.el("span", { style: { ...cell, color: ui.colors.ok, fontWeight: "600" } }, "✓ found at " + when);
    } else if (done) {
      status = ui.el("span", { class: "muted", style: cell }, "not yet (found later, " + when + ")");
    } else {
      status = ui.el("span", { class: "muted", style: cell }, "not yet");
    }
    if (p.position !== null && p.position !== undefined) {
      const target = p.position;
      status = ui.el("span", { style: { cursor: "pointer" }, title: "go to timeline step " + (target - 1) + ", which completed it", onclick: () => ui.seek(target) }, status);
    }
    return [
      ui.el("span", { class: "mono", style: { fontSize: "11px" } }, p.id),
      ui.el("span", { title: { A: "affordance", B: "alternative principle", C: "creative leap" }[p.type] || "" }, p.type, p.extra ? " " : "", p.extra ? ui.badge("extra", "warn") : null),
      ui.el(
        "span",
        { title: p.mechanism, style: { display: "inline-block", maxWidth: "170px", overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap", verticalAlign: "bottom" } },
        p.mechanism,
      ),
      ui.el("span", { class: "mono", style: { fontSize: "10px" } }, p.finish),
      status,
    ];
  });
  const table = ui.table(["path", "type", "mechanism", "finish action", "found by now"], rows);
  table.style.fontSize = "11px";
  return escapeSection(ui, "Gold paths (A affordance · B alternative principle · C creative leap)", table);
}

function escapeHere(ui, view, frame, selected) {
  const tools = view.tools || {};
  const bag = (frame.bag || []).map((name) =>
    ui.el(
      "span",
      { title: tools[name] || "", style: { display: "inline-block", margin: "1px 3px 1px 0", padding: "0 4px", border: "1px solid #d0d7de", borderRadius: "8px", fontSize: "10px" } },
      name,
    ),
  );
  const scenes = view.scenes || [];
  const here = scenes.find((s) => s.name === frame.scene);
  const right = ui.el(
    "div",
    { style: { width: "210px", flex: "0 0 210px" } },
    ui.el("div", { style: { fontSize: "11px" } }, "Scene: ", ui.el("b", {}, frame.scene || "–")),
    escapeSceneMap(ui, view, frame),
    here ? ui.el("div", { class: "muted", style: { fontSize: "10px", maxHeight: "52px", overflow: "hidden" }, title: here.desc }, here.desc) : null,
    ui.el("div", { style: { fontSize: "11px", marginTop: "4px" } }, "Bag (" + (frame.bag || []).length + "): ", bag.length ? bag : ui.el("span", { class: "muted" }, "empty")),
  );
  return escapeSection(
    ui,
    selected
      ? "After step " + selected.index + " (attempt " + (selected.attempt + 1) + " of " + view.attempts + ", its step " + selected.t + ")"
      : "At the start (attempt 1 of " + view.attempts + ")",
    ui.el("div", { style: { display: "flex", gap: "10px" } }, ui.el("div", { style: { flex: "1 1 auto", minWidth: "0" } }, escapeStepDetail(ui, view, selected, frame)), right),
  );
}

function escapeStepDetail(ui, view, step, frame) {
  if (!step) {
    return ui.el("div", { class: "muted", style: { fontSize: "11px" } }, "No step taken yet. Pick a step in an attempt lane below.");
  }
  const flags = [];
  flags.push(ui.badge(step.kind || "unparsed", "info"));
  if (!step.valid) flags.push(ui.badge("invalid", "bad"));
  else flags.push(ui.badge(step.success ? "succeeded" : "failed", step.success ? "ok" : "muted"));
  if (step.changed) flags.push(ui.badge("changed the world", "ok"));
  if (step.meaningless) flags.push(ui.badge("meaningless " + step.streak + " / " + view.meaningless_limit, "warn"));
  if (step.forbidden) flags.push(ui.badge("forbidden finish refused", "bad"));
  if (step.path) flags.push(ui.badge("completed " + step.path, "ok"));
  if (step.checkpoint) flags.push(ui.badge("CHECKPOINT", "ok"));
  if (step.game_end) flags.push(ui.badge("GAME END", "ok"));
  if (step.stop) flags.push(ui.badge("attempt ends: " + step.stop, step.stop === "goal" ? "ok" : "warn"));
  return ui.el(
    "div",
    { style: { fontSize: "11px" } },
    ui.el("div", { class: "mono", style: { wordBreak: "break-word", fontWeight: "600", fontSize: "11px" } }, step.action),
    ui.el("div", { style: { margin: "3px 0", display: "flex", flexWrap: "wrap", gap: "3px" } }, flags),
    ui.el("div", { style: { whiteSpace: "pre-wrap", wordBreak: "break-word", maxHeight: "90px", overflow: "auto", color: "#333" } }, step.response),
    ui.el("div", { style: { marginTop: "4px" } }, escapeJudgeDetail(ui, view, step)),
  );
}

function escapeJudgeDetail(ui, view, step) {
  const judge = step.judge;
  if (judge && judge.missing !== undefined) {
    return ui.el("span", {}, ui.badge("judge score missing", "warn"), " ", ui.el("span", { class: "muted" }, judge.missing));
  }
  if (judge && judge.scores) {
    return ui.el(
      "div",
      {},
      (view.criteria || []).map((c) => {
        const v = judge.scores[c];
        const w = typeof v === "number" ? Math.max(0, Math.min(5, v)) * 20 : 0;
        return ui.el(
          "div",
          { style: { display: "flex", alignItems: "center", gap: "4px", height: "13px" } },
          ui.el("span", { style: { width: "82px" } }, c.charAt(0).toUpperCase() + c.slice(1)),
          ui.el(
            "span",
            { style: { width: "100px", height: "8px", background: "#eaeef2", display: "inline-block", position: "relative" } },
            ui.el("span", { style: { position: "absolute", left: "0", top: "0", bottom: "0", width: w + "%", background: escapeScoreColor(v) } }),
          ),
          ui.el("b", {}, typeof v === "number" ? v + " / 5" : "?"),
        );
      }),
    );
  }
  if (step.judged) {
    return ui.el("span", { class: "muted" }, "Scored by Metric 2, but no judge ran.");
  }
  return ui.el("span", { class: "muted" }, "Not scored by Metric 2 (only apply / craft / input steps that complete no path and are not refused).");
}

function escapeSceneMap(ui, view, frame) {
  const scenes = view.scenes || [];
  if (scenes.length === 0) return null;
  // Scenes visited in the current attempt up to this position.
  const visited = new Set();
  const frames = view.frames || [];
  for (let p = 0; p < frames.length && frames[p] !== frame; p++) {
    if (frames[p].attempt === frame.attempt || p === 0) visited.add(frames[p].scene);
  }
  visited.add(frame.scene);
  const W = 210;
  const H = Math.max(90, Math.min(150, 40 + scenes.length * 14));
  const cx = W / 2;
  const cy = H / 2;
  const rx = W / 2 - 48;
  const ry = H / 2 - 16;
  const at = scenes.map((_, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / scenes.length;
    return [cx + rx * Math.cos(a), cy + ry * Math.sin(a)];
  });
  const edges = [];
  scenes.forEach((s, i) => {
    (s.moves || []).forEach((j) => {
      if (j > i || !(scenes[j].moves || []).includes(i)) {
        if (at[j]) edges.push(ui.svg("line", { x1: at[i][0], y1: at[i][1], x2: at[j][0], y2: at[j][1], stroke: "#d0d7de", "stroke-width": 1 }));
      }
    });
  });
  const nodes = scenes.map((s, i) => {
    const current = s.name === frame.scene;
    const seen = visited.has(s.name);
    return ui.svg(
      "g",
      {},
      ui.svg("title", {}, s.name),
      ui.svg("circle", {
        cx: at[i][0],
        cy: at[i][1],
        r: current ? 6 : 4,
        fill: current ? ui.colors.info : seen ? "#b6d4f2" : "#fff",
        stroke: current ? ui.colors.info : "#8c959f",
        "stroke-width": 1,
      }),
      ui.svg(
        "text",
        { x: at[i][0], y: at[i][1] - 8, "text-anchor": "middle", "font-size": 8, fill: current ? ui.colors.info : "#57606a", "font-weight": current ? "bold" : "normal" },
        s.name.length > 18 ? s.name.slice(0, 17) + "…" : s.name,
      ),
    );
  });
  return ui.svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, style: "display:block" }, edges, nodes);
}

// Over the whole episode: the meaningless streak against its limit, and the paths found so far.
function escapeChart(ui, view, pos) {
  const frames = view.frames || [];
  if (frames.length < 2 || !ui.lineChart) return null;
  const chart = ui.lineChart({
    series: [
      { name: "streak", values: frames.map((f) => f.streak), color: ui.colors.warn },
      { name: "streak limit", values: frames.map(() => view.meaningless_limit), color: ui.colors.muted },
      { name: "paths found", values: frames.map((f) => (f.found || []).length), color: ui.colors.ok },
    ],
    width: 556,
    height: 110,
    xLabel: "position",
    yLabel: "steps / paths",
    marker: pos,
    onSeek: (x) => ui.seek(Math.max(0, Math.min(frames.length - 1, Math.round(x)))),
  });
  return escapeSection(ui, "Meaningless streak and paths found over the episode", chart);
}

function escapeLanes(ui, view, pos, frame) {
  const steps = view.steps || [];
  const lanes = view.lanes || [];
  const selected = pos > 0 ? pos - 1 : -1;
  const currentAttempt = frame.attempt;
  const gap = 4;
  const width = Math.floor((556 - gap * (lanes.length - 1)) / Math.max(1, lanes.length));
  // One header height for every lane, so the step rows of the attempts line up.
  const maxForbidden = Math.max(1, ...lanes.map((l) => (l.forbidden || []).length));
  const headHeight = 34 + 11 * maxForbidden;
  const columns = lanes.map((lane) => {
    const active = lane.attempt === currentAttempt;
    const streakEnds = new Map();
    (lane.streaks || []).forEach((s) => streakEnds.set(s.last, s.length));
    const stopKind = { goal: "ok", budget: "muted", meaningless: "warn" }[lane.stop] || "muted";
    const head = ui.el(
      "div",
      { style: { padding: "2px 3px", background: active ? "#ddf4ff" : "#f6f8fa", borderBottom: "1px solid #d0d7de", fontSize: "11px", minHeight: headHeight + "px", boxSizing: "border-box" } },
      ui.el(
        "div",
        {},
        ui.el("b", {}, "Attempt " + (lane.attempt + 1)),
        " ",
        lane.stop ? escapeSmallBadge(ui, lane.stop, stopKind) : lane.played ? null : escapeSmallBadge(ui, "not played", "muted"),
      ),
      ui.el(
        "div",
        {},
        (lane.paths || []).map((p) => escapeSmallBadge(ui, p, "ok")),
        (lane.paths || []).length === 0 && lane.played ? ui.el("span", { class: "muted", style: { fontSize: "10px" } }, "no path") : null,
      ),
      ui.el(
        "div",
        { style: { fontSize: "9px", color: ui.colors.bad }, title: "finish actions forbidden in this attempt (paths found earlier)" },
        (lane.forbidden || []).length === 0
          ? ui.el("span", { class: "muted" }, "nothing forbidden")
          : (lane.forbidden || []).map((a) => ui.el("div", { class: "mono", style: { fontSize: "9px", overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }, title: a }, "⊘ " + a)),
      ),
    );
    const rows = (lane.steps || []).map((index) => escapeLaneRow(ui, view, steps[index], index === selected, index >= pos, streakEnds.get(index)));
    return ui.el(
      "div",
      { style: { width: width + "px", flex: "0 0 " + width + "px", boxSizing: "border-box", border: active ? "1px solid " + ui.colors.info : "1px solid #d0d7de", borderRadius: "3px", overflow: "hidden" } },
      head,
      rows,
    );
  });
  return escapeSection(ui, "Attempts (click a step to go there)", ui.el("div", { style: { display: "flex", gap: gap + "px", alignItems: "flex-start" } }, columns));
}

function escapeLaneRow(ui, view, step, isSelected, isFuture, streakLength) {
  let bg = "transparent";
  if (step.path) bg = "#dafbe1";
  else if (step.forbidden) bg = "#ffebe9";
  else if (step.meaningless) bg = "#fff8c5";
  const judge = step.judge;
  let scores = null;
  if (judge && judge.scores) {
    scores = escapeMiniBars(ui, view.criteria || [], judge.scores);
  } else if (judge && judge.missing !== undefined) {
    scores = escapeScoreChip(ui, "?", null, "judge score missing: " + judge.missing);
  }
  const tip = "step " + step.index + " · t " + step.t + ": " + step.action + (step.meaningless ? " (meaningless, streak " + step.streak + ")" : "");
  return ui.el(
    "div",
    {
      title: tip,
      onclick: () => ui.seek(step.index + 1),
      style: {
        display: "flex",
        alignItems: "center",
        height: ESCAPE_ROW_H + "px",
        fontSize: "10px",
        cursor: "pointer",
        background: bg,
        borderLeft: "3px solid " + (step.meaningless ? ui.colors.warn : "transparent"),
        outline: isSelected ? "2px solid " + ui.colors.info : "none",
        outlineOffset: "-2px",
        opacity: isFuture ? "0.55" : "1",
        fontWeight: isSelected ? "700" : "400",
      },
    },
    ui.el("span", { class: "muted", style: { width: "17px", flex: "0 0 17px", textAlign: "right", marginRight: "3px" } }, String(step.t)),
    ui.el(
      "span",
      {
        class: "mono",
        style: {
          fontSize: "10px",
          flex: "1 1 auto",
          minWidth: "0",
          overflow: "hidden",
          textOverflow: "ellipsis",
          whiteSpace: "nowrap",
          color: !step.valid ? ui.colors.muted : step.forbidden ? ui.colors.bad : "inherit",
          fontStyle: step.valid ? "normal" : "italic",
        },
      },
      step.action,
    ),
    streakLength && streakLength > 1 ? ui.el("span", { style: { color: ui.colors.warn, fontSize: "9px", margin: "0 2px" } }, "×" + streakLength) : null,
    step.path ? ui.el("span", { style: { color: ui.colors.ok, fontSize: "9px", fontWeight: "700", margin: "0 2px" } }, step.path) : null,
    scores ? ui.el("span", { style: { flex: "0 0 auto", whiteSpace: "nowrap" } }, scores) : null,
  );
}

// Three bars, one per criterion, as tall as the score and coloured by it (1-5).
function escapeMiniBars(ui, criteria, scores) {
  const bars = criteria.map((c, i) => {
    const v = scores[c];
    const h = typeof v === "number" ? Math.max(1, Math.min(5, v)) * 2 : 10;
    return ui.svg("rect", { x: i * 5, y: 11 - h, width: 4, height: h, fill: typeof v === "number" ? escapeScoreColor(v) : "#d0d7de" });
  });
  const tip = criteria.map((c) => c + " " + (typeof scores[c] === "number" ? scores[c] : "?")).join(", ");
  return ui.el("span", { title: tip, style: { display: "inline-block", lineHeight: "0" } }, ui.svg("svg", { width: 5 * criteria.length, height: 11, viewBox: "0 0 " + 5 * criteria.length + " 11" }, bars));
}

function escapeLegend(ui, view) {
  return ui.el(
    "div",
    { class: "muted", style: { fontSize: "10px", marginTop: "6px", lineHeight: "16px" } },
    escapeLegendItem(ui, "#dafbe1", "completed a gold path"),
    escapeLegendItem(ui, "#ffebe9", "forbidden finish refused"),
    escapeLegendItem(ui, "#fff8c5", "meaningless step (×n: streak length; limit " + view.meaningless_limit + ")", ui.colors.warn),
    ui.el("span", { style: { marginRight: "10px" } }, ui.el("i", {}, "grey italic"), ": invalid action"),
    ui.el("br", {}),
    "Judge bars per step: ",
    (view.criteria || []).map((c) => ESCAPE_CRITERIA_SHORT[c] || c).join(" / "),
    " (",
    (view.criteria || []).join(", "),
    "), height and colour 1-5: ",
    [1, 2, 3, 4, 5].map((v) => escapeScoreChip(ui, null, v, String(v))),
    " ",
    escapeScoreChip(ui, "?", null, "missing"),
    " missing. Scene map: ",
    ui.el("span", { style: { color: ui.colors.info } }, "●"),
    " current, ",
    ui.el("span", { style: { color: "#b6d4f2" } }, "●"),
    " visited in this attempt.",
  );
}

// ---- aut-v1 ----

function escapeRenderAut(root, view, position, ui) {
  const runs = view.runs || [];
  const selected = position > 0 ? position - 1 : -1;
  root.appendChild(
    ui.el(
      "div",
      {},
      ui.el("div", { style: { fontWeight: "600", fontSize: "14px" } }, "Alternate uses of: ", view.object, " ", view.status === "error" ? ui.badge("errored", "bad") : null),
      ui.el("div", { class: "muted", style: { fontSize: "11px" } }, view.description),
      view.error ? ui.el("div", { class: "mono", style: { color: ui.colors.bad, fontSize: "11px" } }, view.error) : null,
      ui.el(
        "div",
        { style: { fontSize: "11px", marginTop: "3px", display: "flex", gap: "4px", flexWrap: "wrap" } },
        ui.badge("runs " + runs.length + " / " + view.planned_runs, "info"),
        ui.badge("fluency " + escapeFmt(view.fluency, 1), "info"),
        ui.badge("originality " + escapeFmt(view.originality), view.originality === null || view.originality === undefined ? "muted" : "ok"),
        ui.badge("elaboration " + escapeFmt(view.elaboration), view.elaboration === null || view.elaboration === undefined ? "muted" : "ok"),
        view.judged ? null : ui.badge("no judge ran", "muted"),
        view.judge_missing ? ui.badge(view.judge_missing + " run(s) without a rating", "warn") : null,
      ),
    ),
  );
  if (runs.length === 0) {
    root.appendChild(ui.el("div", { class: "muted", style: { marginTop: "8px" } }, "No run was answered."));
  }
  runs.forEach((run, i) => root.appendChild(escapeAutRun(ui, run, i === selected, i >= position)));
  root.appendChild(
    ui.el(
      "div",
      { class: "muted", style: { fontSize: "10px", marginTop: "6px" } },
      "Each run is one step; O = originality, E = elaboration (judge, 1-5): ",
      [1, 2, 3, 4, 5].map((v) => escapeScoreChip(ui, null, v, String(v))),
      ". Fluency = uses in the run. Runs after this position are faded; click a run to go there.",
    ),
  );
}

function escapeAutRun(ui, run, isSelected, isFuture) {
  let judgeNote = null;
  if (run.judge === "missing") judgeNote = ui.el("span", {}, ui.badge("judge rating missing", "warn"), " ", ui.el("span", { class: "muted" }, run.missing));
  else if (run.judge === "none") judgeNote = ui.badge("not rated", "muted");
  const head = ui.el(
    "div",
    { style: { display: "flex", gap: "5px", alignItems: "center", flexWrap: "wrap", cursor: "pointer", fontSize: "12px" }, onclick: () => ui.seek(run.index + 1) },
    ui.el("b", {}, "Run " + (run.run + 1)),
    ui.badge("fluency " + run.fluency, "info"),
    run.judge === "rated" ? ui.badge("O " + escapeFmt(run.originality), "muted") : null,
    run.judge === "rated" ? ui.badge("E " + escapeFmt(run.elaboration), "muted") : null,
    run.valid ? null : ui.badge("invalid answer", "bad"),
    judgeNote,
  );
  const body = [];
  if (!run.valid) {
    const raw = run.action || "";
    body.push(ui.el("div", { class: "muted", style: { fontSize: "11px" } }, run.error || "no uses"));
    body.push(ui.el("div", { class: "mono", style: { fontSize: "10px", whiteSpace: "pre-wrap", wordBreak: "break-word", maxHeight: "60px", overflow: "auto" } }, raw.length > 400 ? raw.slice(0, 400) + "…" : raw));
  }
  if (run.uses.length) {
    const rows = run.uses.map((u, k) => [
      String(k + 1),
      ui.el("span", { style: { wordBreak: "break-word" } }, u.text),
      escapeScoreChip(ui, null, u.originality, "originality"),
      escapeScoreChip(ui, null, u.elaboration, "elaboration"),
    ]);
    const table = ui.table(["#", "use", "O", "E"], rows);
    table.style.fontSize = "11px";
    table.style.width = "100%";
    body.push(table);
  }
  return ui.el(
    "div",
    {
      style: {
        margin: "8px 0",
        padding: "4px 6px",
        border: isSelected ? "2px solid " + ui.colors.info : "1px solid #d0d7de",
        borderRadius: "4px",
        opacity: isFuture ? "0.5" : "1",
      },
    },
    head,
    body,
  );
}
