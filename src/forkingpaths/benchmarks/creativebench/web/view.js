// creativebench world view: the task, the program beside the solutions its novelty is measured
// against, the sandbox verdicts, each constraint's verdict and the novelty terms (Eq. 2-5).
// Built with ui.el only: every model-written string becomes a text node.

const creativebenchState = { base: {} };

const creativebenchPre = {
  whiteSpace: "pre-wrap",
  wordBreak: "break-word",
  maxHeight: "220px",
  overflow: "auto",
  fontSize: "12px",
  background: "#f6f8fa",
  border: "1px solid #d0d7de",
  borderRadius: "4px",
  padding: "6px",
  margin: "4px 0",
};

function creativebenchSection(ui, title, ...children) {
  return ui.el(
    "section",
    { style: { margin: "10px 0", borderTop: "1px solid #d0d7de", paddingTop: "6px" } },
    ui.el("div", { style: { fontWeight: "600", marginBottom: "4px" } }, title),
    ...children,
  );
}

function creativebenchNote(ui, text) {
  return ui.el("div", { class: "muted", style: { fontSize: "12px", margin: "2px 0" } }, text);
}

function creativebenchNumber(value) {
  return typeof value === "number" && isFinite(value) ? value.toFixed(4) : "—";
}

function creativebenchVerdict(ui, verdict, missing) {
  if (verdict === undefined || verdict === null || verdict === "") {
    return ui.badge(missing || "not recorded", "muted");
  }
  return ui.badge(String(verdict), verdict === "PASSED" ? "ok" : "bad");
}

function creativebenchCode(ui, text, maxHeight) {
  return ui.el(
    "pre",
    {
      class: "mono",
      style: Object.assign({}, creativebenchPre, { whiteSpace: "pre", maxHeight: maxHeight }),
    },
    text || "",
  );
}

// One box per Explore level: green/red once answered (Quality 1/0), grey before; the level the
// current position shows is outlined. Clicking a box seeks to the position of its answer.
function creativebenchLevels(ui, view, frames, position, current) {
  const tasks = view.tasks || [];
  if (tasks.length < 2) return null;
  const answered = {};
  for (let q = 1; q < frames.length; q++) {
    const t = frames[q].task;
    if (t !== null && t !== undefined && !(t in answered)) answered[t] = q;
  }
  const cells = tasks.map((task, i) => {
    const q = answered[i];
    const frame = q !== undefined && q <= position ? frames[q] : null;
    const color = !frame ? ui.colors.muted : frame.quality === 1 ? ui.colors.ok : ui.colors.bad;
    const fill = !frame ? "#ffffff" : frame.quality === 1 ? "#dafbe1" : "#ffebe9";
    const target = q !== undefined ? q : Math.min(i + 1, frames.length - 1);
    const below = !frame
      ? "—"
      : task.level === 0
        ? "baseline"
        : typeof frame.novelty === "number"
          ? "N " + frame.novelty.toFixed(3)
          : "";
    return ui.el(
      "div",
      {
        title:
          "level " + task.level + (frame ? ": Quality " + frame.quality : ": not answered yet"),
        onclick: () => ui.seek(target),
        style: {
          flex: "1 1 0",
          maxWidth: "90px",
          textAlign: "center",
          cursor: "pointer",
          background: fill,
          border: (i === current ? "3px" : "1px") + " solid " + color,
          borderRadius: "4px",
          padding: i === current ? "1px 0" : "3px 0",
        },
      },
      ui.el("div", { style: { fontWeight: "600", fontSize: "12px" } }, "L" + task.level),
      ui.el("div", { style: { fontSize: "10px", color: "#57606a" } }, below),
    );
  });
  return ui.el(
    "div",
    { style: { margin: "6px 0" } },
    ui.el("div", { style: { display: "flex", gap: "6px" } }, ...cells),
    creativebenchNote(
      ui,
      "Levels: green Quality 1, red Quality 0, grey not answered yet; N = novelty against " +
        "level 0; outlined: the level shown. Click to seek.",
    ),
  );
}

function creativebenchTask(ui, view, task, frame) {
  const level = task ? task.level : frame ? frame.level : null;
  const title =
    view.subset === "explore" && !task && typeof level === "number"
      ? "Task — Explore level " + level
      : view.subset === "explore" && task
        ? "Task — Explore level " +
          task.level +
          (task.level
            ? " (" + task.constraints.length + " stacked constraints)"
            : " (unconstrained)")
        : view.subset === "combo"
          ? "Task — Combo problem"
          : "Task";
  if (!task) {
    return creativebenchSection(
      ui,
      title,
      ui.el("pre", { style: creativebenchPre }, view.initial_observation || ""),
      creativebenchNote(
        ui,
        "This task is not in the benchmark's task set as loaded now (a custom tasks file?): " +
          "the reference and source solutions are unavailable.",
      ),
    );
  }
  const parts = [ui.el("pre", { style: creativebenchPre }, task.question)];
  if (task.function_signature) {
    const signature = task.function_signature;
    parts.push(ui.el("div", { class: "mono", style: { fontSize: "12px" } }, signature));
  }
  if (task.domains && task.domains.length) {
    parts.push(creativebenchNote(ui, "Domains: " + task.domains.join(" + ")));
  }
  if (!frame && task.constraints.length) {
    const items = task.constraints.map((c) => ui.el("li", {}, c.constraint));
    parts.push(ui.el("ol", { style: { margin: "4px 0", paddingLeft: "20px" } }, items));
  }
  return creativebenchSection(ui, title, ...parts);
}

// Why a row earned its Quality (metrics.quality: tests passed, no final finding, judge not
// refusing).
function creativebenchWhy(view, frame) {
  const combo = view.subset === "combo";
  if (frame.quality === 1) {
    return combo ? "full and demo tests passed" : "tests passed, no constraint broken";
  }
  if (frame.verdict !== "PASSED") {
    return combo ? "the full tests did not pass" : "the tests did not pass";
  }
  if (combo && frame.demo_verdict && frame.demo_verdict !== "PASSED") {
    return "the demo tests did not pass";
  }
  if ((frame.violations || []).length) return "a constraint broken (explicit check rule)";
  if (frame.judge && frame.judge.compliant === false) return "the judge found a constraint broken";
  return "";
}

function creativebenchScores(ui, view, frame) {
  const rows = [];
  const quality = frame.quality;
  rows.push([
    "Quality (Pass@1)",
    typeof quality === "number"
      ? ui.el(
          "span",
          {},
          ui.badge(String(quality), quality === 1 ? "ok" : "bad"),
          " ",
          creativebenchWhy(view, frame),
        )
      : ui.badge("not recorded", "muted"),
  ]);
  const base = frame.novelty_base || {};
  if ("novelty" in frame && frame.novelty !== null && frame.novelty !== undefined) {
    const eq =
      view.subset === "combo"
        ? "Combinatorial Novelty, mean over the k source solutions (Eq. 5)"
        : "Exploratory Novelty N(y_c, y_b) (Eq. 4)";
    rows.push([
      "embedding distance 1 − cos(e_u, e_v)",
      frame.embedding_distance === null || frame.embedding_distance === undefined
        ? "— (no embedding backend)"
        : creativebenchNumber(frame.embedding_distance),
    ]);
    rows.push([
      "4-gram distance 1 − |G₄(u) ∩ G₄(v)| / |G₄(u) ∪ G₄(v)|",
      creativebenchNumber(frame.ngram_distance),
    ]);
    rows.push([eq, ui.el("b", {}, creativebenchNumber(frame.novelty))]);
    if (typeof quality === "number") {
      rows.push([
        "Quality × Novelty (this row's Creativity term, Eq. 2)",
        creativebenchNumber(quality * frame.novelty),
      ]);
    }
  } else if (view.subset === "combo") {
    rows.push(["Novelty", "— (the task lists no source solutions: no combinatorial novelty)"]);
  } else if (frame.baseline_solution || frame.level === 0) {
    rows.push([
      "Novelty",
      "— level 0 is the baseline y_b (Eq. 4 scores constrained levels only)",
    ]);
  } else {
    rows.push(["Novelty", "— not recorded"]);
  }
  const notes = [];
  const note = (text) => notes.push(creativebenchNote(ui, text));
  if (view.embedding) {
    const standIn = String(view.embedding).startsWith("ast-tfidf");
    note(
      "Embedding backend: " +
        view.embedding +
        (standIn ? " (offline stand-in for the paper's CodeXEmbed)" : ""),
    );
  }
  if (view.subset === "explore" && (frame.baseline_solution || frame.level === 0)) {
    note(
      frame.verdict === "PASSED"
        ? "This program is y_b: the novelty of every constrained level is measured against it."
        : "This program failed, so the reference level-0 solution stands in as y_b for the " +
            "constrained levels.",
    );
  }
  if (base.label === "reference-level0") {
    note("The run's own level-0 answer failed: the reference level-0 solution stood in as y_b.");
  }
  if (base.label === "reference-lowest-level") {
    note("The problem has no level 0: its lowest level's reference solution stood in as y_b.");
  }
  if (frame.novelty_truncated) {
    note("The program was scored for novelty on its first 200,000 bytes only.");
  }
  return creativebenchSection(ui, "Scores", ui.table(["measure", "value"], rows), ...notes);
}

function creativebenchTests(ui, view, task, frame) {
  const rows = [];
  const tests = task ? task.tests : [];
  if (view.subset === "combo") {
    rows.push(["full tests (full_test_func)", creativebenchVerdict(ui, frame.verdict)]);
    const hasDemo = tests.some((t) => t.field === "demo_test_func");
    rows.push([
      "demo tests (demo_test_func)",
      creativebenchVerdict(
        ui,
        frame.demo_verdict,
        hasDemo || !task ? "not recorded" : "none (no demo tests)",
      ),
    ]);
  } else {
    rows.push(["tests (test_code)", creativebenchVerdict(ui, frame.verdict)]);
  }
  const flags = [];
  if (frame.no_code) {
    flags.push(ui.badge("no code", "warn"), " the answer holds no Python the parser accepts ");
  }
  if (frame.valid === false) flags.push(ui.badge("invalid step", "warn"));
  const code = tests.map((t) =>
    ui.el(
      "details",
      {},
      ui.el(
        "summary",
        { style: { fontSize: "12px", cursor: "pointer" } },
        "test program: " + t.name + " (" + t.field + ")",
      ),
      creativebenchCode(ui, t.code, "200px"),
    ),
  );
  return creativebenchSection(
    ui,
    "Tests (sandbox" + (frame.isolation ? ", " + frame.isolation : "") + ")",
    ui.table(["test program", "verdict"], rows),
    flags.length ? ui.el("div", { style: { margin: "4px 0" } }, ...flags) : null,
    ui.el("div", { style: { fontSize: "12px", marginTop: "4px" } }, "Output"),
    frame.detail
      ? ui.el("pre", { class: "mono", style: creativebenchPre }, frame.detail)
      : creativebenchNote(ui, "(none recorded)"),
    creativebenchNote(
      ui,
      "The record holds one verdict per test program, not per assertion, and one output: the " +
        "full tests' traceback or stderr tail, else the demo tests'.",
    ),
    ...code,
  );
}

function creativebenchFinding(ui, f) {
  return ui.el(
    "div",
    {
      class: "mono",
      style: { fontSize: "11px", color: f.inferred ? ui.colors.warn : ui.colors.bad },
    },
    (f.inferred ? "advisory, " : "") +
      (f.line ? "line " + f.line + ": " : "") +
      (f.rule ? "[" + f.rule + "] " : "") +
      f.detail,
  );
}

function creativebenchConstraints(ui, view, task, frame) {
  const verdicts = frame.constraint_verdicts || [];
  const items = task ? task.constraints : [];
  const found = (frame.violations || []).length + (frame.advisory_violations || []).length;
  if (!items.length && !found && !frame.judge) return null;
  const byNumber = {};
  for (const v of verdicts) byNumber[v.number] = v;
  const staticBadge = {
    violated: ["violated", "bad"],
    advisory: ["advisory finding", "warn"],
    clear: ["no finding", "ok"],
  };
  const rows = items.map((c) => {
    const v = byNumber[c.number];
    const [text, kind] = v ? staticBadge[v.static] : ["not recorded", "muted"];
    const rules = Object.keys(c.check || {});
    return [
      String(c.number) + (c.number === items.length ? " (new)" : ""),
      ui.el(
        "div",
        {},
        ui.el("div", {}, c.constraint),
        c.blocked_technique ? creativebenchNote(ui, "blocks: " + c.blocked_technique) : null,
        ...(v ? v.findings.map((f) => creativebenchFinding(ui, f)) : []),
      ),
      ui.el(
        "div",
        {},
        ui.badge(text, kind),
        creativebenchNote(
          ui,
          rules.length
            ? "explicit rules (" + rules.join(", ") + "): final"
            : "rules inferred from the text: advisory",
        ),
      ),
    ];
  });
  // Findings no listed constraint takes (none names one, or the task is not loaded).
  const listed = new Set(items.map((c) => c.number));
  const loose = (frame.violations || [])
    .concat(frame.advisory_violations || [])
    .filter((f) => !listed.has(f.constraint));
  let judge;
  if (frame.judge) {
    const c = frame.judge.compliant;
    judge = ui.el(
      "div",
      {},
      c === true
        ? ui.badge("compliant", "ok")
        : c === false
          ? ui.badge("non-compliant", "bad")
          : ui.badge("unjudged", "muted"),
      " ",
      ui.el("span", { style: { fontSize: "12px" } }, String(frame.judge.reasons ?? "")),
    );
  } else {
    const why =
      !view.judge || view.judge === "none"
        ? "no judge model: the static checker decided alone"
        : frame.verdict !== "PASSED"
          ? "not asked: the program failed its tests"
          : (frame.violations || []).length
            ? "not asked: a final static finding already zeroes Quality"
            : "not asked";
    judge = ui.el(
      "div",
      {},
      ui.badge("not asked", "muted"),
      " ",
      ui.el("span", { style: { fontSize: "12px" } }, why),
    );
  }
  const judgeName =
    view.judge && view.judge !== "none"
      ? " — " + view.judge + (view.judge_is_solver ? " (the solver's own model)" : "")
      : "";
  return creativebenchSection(
    ui,
    "Constraints",
    rows.length ? ui.table(["#", "constraint", "static checker"], rows) : null,
    loose.length
      ? ui.el(
          "div",
          {},
          creativebenchNote(
            ui,
            rows.length ? "Findings naming no listed constraint:" : "Static checker findings:",
          ),
          ...loose.map((f) => creativebenchFinding(ui, f)),
        )
      : null,
    ui.el(
      "div",
      { style: { fontSize: "12px", margin: "6px 0 2px" } },
      "Judge (App. B.1) on all constraints together" + judgeName,
    ),
    judge,
  );
}

// The texts the program can be compared with, the novelty baseline(s) first.
function creativebenchBases(view, frames, frame) {
  const base = frame.novelty_base || {};
  const tasks = view.tasks || [];
  const out = [];
  if (base.kind === "sources" && tasks[base.task]) {
    const task = tasks[base.task];
    task.source_solutions.forEach((text, j) => {
      const domain = task.domains && task.domains[j] ? " (" + task.domains[j] + ")" : "";
      out.push({
        key: "source" + j,
        label: "source " + (j + 1) + domain,
        text: text,
        note:
          "one of the k = " +
          task.source_solutions.length +
          " source solutions y_s the novelty averages over (Eq. 5)",
      });
    });
    out.push({
      key: "canonical",
      label: "canonical solution",
      text: task.reference_solution,
      note: "the task's fused reference solution (not a novelty baseline)",
    });
    return out;
  }
  if (base.kind === "run" && frames[base.position]) {
    out.push({
      key: "baseline",
      label: "level-0 answer (y_b)",
      text: frames[base.position].code || "",
      note: "the run's own level-0 program, the novelty baseline y_b (Eq. 4)",
    });
  } else if (base.kind === "reference" && base.scored && tasks[base.task]) {
    out.push({
      key: "baseline",
      label: "reference L" + tasks[base.task].level + " (y_b)",
      text: tasks[base.task].reference_solution,
      note: "the reference solution that stood in as the novelty baseline y_b (" + base.label + ")",
    });
  }
  const own = frame.task !== null && frame.task !== undefined ? tasks[frame.task] : null;
  if (own && !(base.kind === "reference" && base.task === frame.task && base.scored)) {
    const combo = view.subset === "combo";
    out.push({
      key: "own",
      label: combo ? "canonical solution" : "reference L" + own.level,
      text: own.reference_solution,
      note: combo
        ? "the task's reference solution (no source solutions to measure novelty against)"
        : "this level's reference solution (not a novelty baseline)",
    });
  }
  return out;
}

function creativebenchProgram(ui, view, frames, frame) {
  const bases = creativebenchBases(view, frames, frame);
  const holder = ui.el("div", {});
  const stateKey = view.instance_id + "|" + (frame.task === null ? "" : frame.task);
  const draw = () => {
    const chosen = bases.find((b) => b.key === creativebenchState.base[stateKey]) || bases[0];
    const buttons = bases.map((b) =>
      ui.el(
        "button",
        {
          style: {
            fontSize: "12px",
            margin: "0 4px 4px 0",
            padding: "2px 6px",
            border: "1px solid " + (b === chosen ? ui.colors.info : "#d0d7de"),
            background: b === chosen ? "#ddf4ff" : "#ffffff",
            borderRadius: "4px",
            cursor: "pointer",
          },
          onclick: () => {
            creativebenchState.base[stateKey] = b.key;
            draw();
          },
        },
        b.label,
      ),
    );
    holder.replaceChildren(
      ...(chosen
        ? [
            ui.el("div", {}, ...buttons),
            creativebenchNote(
              ui,
              "Diff from " +
                chosen.note +
                " to the generated program (removed lines: only in the solution; added lines: " +
                "only in the program)." +
                (chosen.text === frame.code ? " The two are identical." : ""),
            ),
            ui.diff(chosen.text || "", frame.code || ""),
          ]
        : [creativebenchNote(ui, "No reference or baseline solution to compare with.")]),
    );
  };
  draw();
  return creativebenchSection(
    ui,
    "Program",
    holder,
    ui.el(
      "div",
      { style: { fontSize: "12px", marginTop: "6px" } },
      "Generated program (the step's action)",
    ),
    creativebenchCode(ui, frame.code, "320px"),
  );
}

function creativebenchEpisode(ui, view) {
  const m = view.metrics || {};
  if (!("pass_at_1" in m)) return null;
  return creativebenchSection(
    ui,
    "Episode",
    ui.table(
      ["Pass@1", "Novelty", "Creativity", "rows"],
      [
        [
          creativebenchNumber(m.pass_at_1),
          creativebenchNumber(m.novelty),
          creativebenchNumber(m.creativity),
          m.rows === undefined ? "—" : String(m.rows),
        ],
      ],
    ),
    creativebenchNote(
      ui,
      view.subset === "explore"
        ? "Novelty and Creativity average the constrained levels (level 0 is the baseline)."
        : "Creativity = Quality × Novelty (Eq. 2).",
    ),
  );
}

function creativebenchLegend(ui) {
  return ui.el(
    "div",
    { style: { fontSize: "12px", marginTop: "8px" } },
    ui.badge("PASSED", "ok"),
    " passed / no finding / compliant  ",
    ui.badge("failed", "bad"),
    " failed verdict / violated (final)  ",
    ui.badge("advisory", "warn"),
    " finding of a rule inferred from the text (a hint for the judge)  ",
    ui.badge("—", "muted"),
    " not run or not recorded",
  );
}

export function renderWorld(root, view, position, ui) {
  if (!view || view.kind !== "creativebench") {
    root.appendChild(ui.el("div", { class: "muted" }, "No creativebench world for this episode."));
    return;
  }
  const frames = view.frames && view.frames.length ? view.frames : [{ position: 0, task: 0 }];
  const p = Math.max(0, Math.min(Number(position) || 0, frames.length - 1));
  const frame = p > 0 ? frames[p] : null;
  const tasks = view.tasks || [];
  const current = frame ? frame.task : 0;
  const task = current !== null && current !== undefined ? tasks[current] : null;
  const subsetTitle =
    view.subset === "combo"
      ? "CreativeBench-Combo: combinatorial creativity"
      : view.subset === "explore"
        ? "CreativeBench-Explore: exploratory creativity"
        : "CreativeBench";
  root.appendChild(
    ui.el(
      "div",
      { style: { display: "flex", gap: "8px", alignItems: "center", flexWrap: "wrap" } },
      ui.el("b", {}, subsetTitle),
      ui.el("span", { class: "mono" }, view.instance_id || ""),
      view.status === "error" ? ui.badge("errored", "bad") : null,
      frame
        ? ui.el("span", { class: "muted" }, "answer " + p + " of " + (frames.length - 1))
        : null,
    ),
  );
  if (view.error) root.appendChild(ui.el("pre", { style: creativebenchPre }, String(view.error)));
  if (view.subset === "explore") {
    const strip = creativebenchLevels(ui, view, frames, p, current);
    if (strip) root.appendChild(strip);
  }
  root.appendChild(creativebenchTask(ui, view, task, frame));
  if (!frame) {
    root.appendChild(
      creativebenchNote(
        ui,
        frames.length > 1
          ? "No program yet: position 1 shows what the sandbox, the constraint checker and " +
              "the judge made of the first answer."
          : "The episode recorded no answer.",
      ),
    );
  } else {
    root.appendChild(creativebenchScores(ui, view, frame));
    root.appendChild(creativebenchTests(ui, view, task, frame));
    if (view.subset === "explore") {
      const constraints = creativebenchConstraints(ui, view, task, frame);
      if (constraints) root.appendChild(constraints);
    }
    root.appendChild(creativebenchProgram(ui, view, frames, frame));
  }
  const episode = creativebenchEpisode(ui, view);
  if (episode && p === frames.length - 1) root.appendChild(episode);
  root.appendChild(creativebenchLegend(ui));
}
