// TurtleSoup world view: surface, question-and-answer dialogue, Mosaic-Agent's belief state and
// genre at the selected position, and the final summary against the gold points (§4.4).

const turtlesoupGenreColors = {
  crime_thriller: "#cf222e",
  mind_game: "#8250df",
  supernatural: "#0969da",
  constant_change: "#bf8700",
  clever_logic: "#1a7f37",
};

const turtlesoupBandKinds = { full: "ok", partial: "warn", void: "bad", unscored: "muted" };

const turtlesoupBox = {
  border: "1px solid #d0d7de",
  borderRadius: "6px",
  padding: "6px 8px",
  margin: "6px 0",
};

function turtlesoupHeading(ui, text, extra) {
  return ui.el(
    "div",
    { style: { fontWeight: "600", margin: "10px 0 4px", fontSize: "13px" } },
    text,
    extra ? " " : null,
    extra || null,
  );
}

function turtlesoupPercent(value) {
  return value === null || value === undefined ? "—" : `${value.toFixed(1)}%`;
}

function turtlesoupNumber(value, digits) {
  return value === null || value === undefined ? "—" : value.toFixed(digits);
}

function turtlesoupAnswerBadge(ui, answer) {
  if (answer === "Yes") return ui.badge("Yes", "ok");
  if (answer === "No") return ui.badge("No", "bad");
  return ui.badge(answer || "?", "muted");
}

function turtlesoupLegend(ui, mosaic) {
  return ui.el(
    "div",
    { class: "muted", style: { fontSize: "11px", margin: "2px 0 6px" } },
    "Answers: ",
    ui.badge("Yes", "ok"),
    " ",
    ui.badge("No", "bad"),
    " ",
    ui.badge("Unknown", "muted"),
    "  marks: ",
    ui.badge("★ key clue", "warn"),
    " ",
    ui.badge("repeated", "info"),
    " ",
    ui.badge("invalid", "bad"),
    mosaic ? " " : null,
    mosaic ? ui.el("span", { style: { textDecoration: "line-through" } }, "ruled out") : null,
    mosaic ? " (Mosaic-Agent's blacklist)" : null,
    ". Greyed rows come after the selected position; click a row to seek.",
  );
}

function turtlesoupDialogueRow(ui, row, position) {
  const past = row.step < position;
  const selected = row.step === position - 1;
  const ruledOut = row.ruled_out_at !== null && row.ruled_out_at <= position;
  const marks = [];
  if (row.kind === "question") {
    marks.push(turtlesoupAnswerBadge(ui, row.answer));
    if (row.key_clue) marks.push(ui.badge("★ key clue", "warn"));
    if (row.repeated) marks.push(ui.badge("repeated", "info"));
    if (row.responder_failed) marks.push(ui.badge("responder unreadable", "muted"));
  } else if (row.kind === "invalid") {
    marks.push(ui.badge("invalid", "bad"));
  } else if (row.kind === "solve") {
    marks.push(ui.badge("/solve", "info"));
  } else if (row.kind === "summary") {
    marks.push(ui.badge("summary", "info"));
  }
  const label =
    row.kind === "summary"
      ? "Final summary written"
      : row.kind === "solve"
        ? "Ready to solve"
        : row.question.trim()
          ? row.question
          : "(empty)";
  const text = ui.el(
    "span",
    {
      style: {
        textDecoration: ruledOut ? "line-through" : "none",
        whiteSpace: "pre-wrap",
        wordBreak: "break-word",
      },
      title: ruledOut ? `ruled out from position ${row.ruled_out_at}` : "",
    },
    label,
  );
  const detail =
    row.kind === "invalid" && row.reason
      ? ui.el("div", { class: "muted", style: { fontSize: "11px" } }, row.reason)
      : null;
  return ui.el(
    "div",
    {
      "data-step": String(row.step),
      onclick: () => ui.seek(row.step + 1),
      title: `step ${row.step} — click to seek`,
      style: {
        display: "flex",
        gap: "6px",
        alignItems: "flex-start",
        padding: "2px 4px",
        cursor: "pointer",
        opacity: past ? "1" : "0.45",
        background: selected ? "#fff8c5" : row.key_clue && past ? "#fff8e6" : "transparent",
        borderLeft: selected ? `3px solid ${ui.colors.info}` : "3px solid transparent",
        fontSize: "12px",
      },
    },
    ui.el(
      "span",
      { class: "mono muted", style: { minWidth: "24px", textAlign: "right" } },
      row.turn === null || row.turn === undefined ? "·" : String(row.turn),
    ),
    ui.el("div", { style: { flex: "1" } }, text, detail),
    ui.el("span", { style: { display: "flex", gap: "3px", whiteSpace: "nowrap" } }, marks),
  );
}

function turtlesoupDialogue(ui, view, position) {
  const rows = view.turns.map((row) => turtlesoupDialogueRow(ui, row, position));
  const box = ui.el(
    "div",
    { style: { ...turtlesoupBox, maxHeight: "340px", overflowY: "auto", padding: "2px" } },
    rows.length ? rows : ui.el("div", { class: "muted" }, "No question was asked."),
  );
  // Keep the selected row in sight inside the box (not the page) once the root is attached.
  const selected = rows[position - 1];
  if (selected) {
    setTimeout(() => {
      box.scrollTop = Math.max(0, selected.offsetTop - box.offsetTop - 120);
    }, 0);
  }
  return box;
}

function turtlesoupGenreStrip(ui, view) {
  const frames = view.frames;
  const width = 540;
  const cell = width / frames.length;
  const cells = frames.map((frame, p) =>
    ui.svg(
      "rect",
      {
        x: (p * cell).toFixed(2),
        y: 0,
        width: Math.max(cell - 0.5, 0.5).toFixed(2),
        height: 12,
        fill: frame.genre ? turtlesoupGenreColors[frame.genre] || "#888" : "#d0d7de",
        cursor: "pointer",
        onclick: () => ui.seek(p),
      },
      ui.svg("title", {}, `position ${p}: ${frame.genre_name || "unknown genre"}`),
    ),
  );
  return cells;
}

function turtlesoupGenreLegend(ui) {
  const items = Object.entries(turtlesoupGenreColors).map(([id, color]) =>
    ui.el(
      "span",
      { style: { marginRight: "8px", whiteSpace: "nowrap" } },
      ui.el("span", {
        style: {
          display: "inline-block",
          width: "9px",
          height: "9px",
          background: color,
          marginRight: "3px",
        },
      }),
      id.replace("_", " "),
    ),
  );
  return ui.el(
    "div",
    { class: "muted", style: { fontSize: "11px" } },
    items,
    ui.el("span", {}, "grey: no genre chosen"),
  );
}

function turtlesoupList(ui, items, empty) {
  if (!items || !items.length) return ui.el("div", { class: "muted" }, empty);
  return ui.el(
    "ol",
    { style: { margin: "2px 0", paddingLeft: "20px" } },
    items.map((item) => ui.el("li", {}, item)),
  );
}

function turtlesoupMosaic(ui, view, position) {
  const frames = view.frames;
  const frame = frames[position];
  const parts = [];
  const genre = frame.genre
    ? ui.el(
        "span",
        {
          class: "badge",
          style: { background: turtlesoupGenreColors[frame.genre] || "#888", color: "#fff" },
        },
        frame.genre_name,
      )
    : ui.badge("genre unknown", "muted");
  parts.push(
    ui.el(
      "div",
      { style: { fontSize: "12px" } },
      "Genre: ",
      genre,
      ` confidence c = ${turtlesoupNumber(frame.confidence, 2)}`,
    ),
  );
  if (frame.check) {
    const check = frame.check;
    parts.push(
      ui.el(
        "div",
        { class: "muted", style: { fontSize: "11px" } },
        `Genre check at this step: votes ${check.votes.map((v) => v || "—").join(", ")}; `,
        check.winner ? `winner ${check.winner} (${Math.round(check.share * 3)}/3)` : "tie or unreadable",
        check.switched ? " — strategy switched" : "",
      ),
    );
  }
  parts.push(
    ui.svg(
      "svg",
      { viewBox: "0 0 540 12", width: "100%", height: 12, preserveAspectRatio: "none" },
      turtlesoupGenreStrip(ui, view),
      ui.svg("rect", {
        x: ((position * 540) / frames.length).toFixed(2),
        y: 0,
        width: Math.max(540 / frames.length - 0.5, 1).toFixed(2),
        height: 12,
        fill: "none",
        stroke: "#000",
        "stroke-width": 1.5,
      }),
    ),
  );
  parts.push(turtlesoupGenreLegend(ui));
  parts.push(
    ui.lineChart({
      series: [
        { name: "genre confidence c", values: frames.map((f) => f.confidence), color: ui.colors.info },
      ],
      width: 540,
      height: 110,
      xLabel: "position",
      yLabel: "c",
      marker: position,
      onSeek: (x) => ui.seek(x),
    }),
  );
  const belief = frame.belief === null || frame.belief === undefined ? null : view.beliefs[frame.belief];
  parts.push(
    turtlesoupHeading(
      ui,
      "Belief State",
      belief
        ? ui.el("span", { class: "muted", style: { fontWeight: "400" } }, `(updated at step ${belief.step})`)
        : null,
    ),
  );
  if (!belief) {
    parts.push(
      ui.el("div", { class: "muted", style: { fontSize: "12px" } }, "No belief yet at this position."),
    );
  } else {
    parts.push(
      ui.el(
        "div",
        { style: { fontSize: "12px" } },
        ui.el("div", { style: { fontWeight: "600" } }, "Logic"),
        turtlesoupList(ui, belief.logic, "none"),
        ui.el("div", { style: { fontWeight: "600" } }, "Details"),
        turtlesoupList(ui, belief.details, "none"),
        ui.el("div", { style: { fontWeight: "600" } }, "Conclusion"),
        ui.el("div", { style: { whiteSpace: "pre-wrap" } }, belief.conclusion || "—"),
      ),
    );
  }
  const aps = frame.aps === null || frame.aps === undefined ? null : view.proposals[frame.aps];
  if (aps) {
    parts.push(
      ui.el(
        "details",
        { style: { fontSize: "12px", marginTop: "4px" } },
        ui.el("summary", {}, `Analysis and Proposal Set (${aps.length})`),
        ui.table(
          ["doubt", "proposal"],
          aps.map((a) => [a.doubt, a.proposal]),
        ),
      ),
    );
  }
  return ui.el("div", { style: turtlesoupBox }, parts);
}

function turtlesoupPointRows(ui, label, points) {
  return points.map((p, i) => [
    ui.el("span", { class: "mono", title: label === "L" ? "Core Logic Point" : "Key Detail" }, `${label}${i + 1}`),
    p.point,
    p.matched !== null && p.matched !== undefined
      ? ui.el("span", {}, ui.el("span", { class: "mono muted" }, `#${p.best_match + 1} `), p.matched)
      : ui.el("span", { class: "muted" }, p.reason || "no match"),
    ui.el(
      "span",
      { style: { whiteSpace: "nowrap" } },
      `${turtlesoupNumber(p.score, 2)} → ${turtlesoupNumber(p.calibrated, 2)} `,
      ui.badge(p.band, turtlesoupBandKinds[p.band] || "muted"),
    ),
  ]);
}

function turtlesoupPointsTable(ui, ev) {
  const table = ui.table(
    ["", "gold point", "best match in the summary", "raw → cal."],
    [...turtlesoupPointRows(ui, "L", ev.logic), ...turtlesoupPointRows(ui, "D", ev.details)],
  );
  // Two text columns share the width evenly; the score column keeps to its content.
  table.style.width = "100%";
  table.style.tableLayout = "fixed";
  const widths = ["30px", "", "", "128px"];
  table.querySelectorAll("th").forEach((th, i) => {
    if (widths[i]) th.style.width = widths[i];
  });
  return table;
}

function turtlesoupSummary(ui, view, position) {
  const summary = view.summary;
  const last = view.frames.length - 1;
  if (!summary) {
    return ui.el("div", { class: "muted", style: { fontSize: "12px" } }, "No final summary in this record.");
  }
  if (position < last) {
    return ui.el(
      "div",
      { class: "muted", style: { fontSize: "12px", cursor: "pointer" }, onclick: () => ui.seek(last) },
      `The final summary and its scores come at position ${last} (click to go there).`,
    );
  }
  const parts = [];
  const ev = summary.evaluation;
  if (!ev) {
    parts.push(
      ui.el(
        "div",
        { class: "muted", style: { fontSize: "12px" } },
        summary.evaluation_error ? `Evaluation unreadable: ${summary.evaluation_error}` : "Not judged (no judge).",
      ),
    );
  } else {
    const m = ev.metrics;
    const w = summary.weights;
    parts.push(
      ui.table(
        ["Logic Accuracy", "Detail Fidelity", "Conclusion Match", "Overall"],
        [
          [
            turtlesoupPercent(m.logic_accuracy),
            turtlesoupPercent(m.detail_fidelity),
            turtlesoupPercent(m.conclusion_match),
            ui.el("b", {}, turtlesoupPercent(m.overall)),
          ],
        ],
      ),
    );
    const t = summary.thresholds;
    parts.push(
      ui.el(
        "div",
        { class: "muted", style: { fontSize: "11px", margin: "2px 0 4px" } },
        `Overall = ${w.logic} L + ${w.detail} D + ${w.conclusion} C. Two-Threshold Calibration of each ` +
          `gold point's best similarity: `,
        ui.badge("void", "bad"),
        ` < ${t.validity} → 0, `,
        ui.badge("partial", "warn"),
        " kept, ",
        ui.badge("full", "ok"),
        ` ≥ ${t.high_confidence} → 1, `,
        ui.badge("unscored", "muted"),
        " judge unreadable (left out of the mean). L: Core Logic Points, D: Key Details.",
      ),
    );
    parts.push(turtlesoupPointsTable(ui, ev));
    const conclusionText = summary.predicted && summary.predicted.conclusion;
    parts.push(
      ui.el(
        "div",
        { style: { fontSize: "12px", marginTop: "6px" } },
        ui.el("b", {}, "Conclusion Match "),
        turtlesoupNumber(ev.conclusion, 2),
        " (whole summary against the bottom, not calibrated)",
        ev.conclusion_reason ? ui.el("span", { class: "muted" }, ` — ${ev.conclusion_reason}`) : null,
        conclusionText
          ? ui.el(
              "div",
              { style: { whiteSpace: "pre-wrap" } },
              ui.el("span", { class: "muted" }, "Summary's conclusion: "),
              conclusionText,
            )
          : null,
      ),
    );
    if (ev.unextracted_points) {
      parts.push(
        ui.el("div", { class: "muted", style: { fontSize: "11px" } }, `${ev.unextracted_points} gold points could not be extracted.`),
      );
    }
    if (ev.errors.length) {
      parts.push(turtlesoupList(ui, ev.errors, ""));
    }
  }
  const predicted = summary.predicted;
  if (predicted && (predicted.logic.length || predicted.details.length)) {
    parts.push(
      ui.el(
        "details",
        { style: { fontSize: "12px", marginTop: "4px" } },
        ui.el("summary", {}, "Summary points (numbered as the judge saw them)"),
        ui.el("div", { style: { fontWeight: "600" } }, "Logic"),
        turtlesoupList(ui, predicted.logic, "none"),
        ui.el("div", { style: { fontWeight: "600" } }, "Details"),
        turtlesoupList(ui, predicted.details, "none"),
      ),
    );
  } else {
    parts.push(
      ui.el(
        "details",
        { style: { fontSize: "12px", marginTop: "4px" } },
        ui.el("summary", {}, "Summary text"),
        ui.el("div", { style: { whiteSpace: "pre-wrap" } }, summary.text || "(empty)"),
      ),
    );
  }
  return ui.el("div", { style: turtlesoupBox }, parts);
}

export function renderWorld(root, view, position, ui) {
  const puzzle = view.puzzle;
  const frames = view.frames;
  const pos = Math.max(0, Math.min(position, frames.length - 1));
  const frame = frames[pos];
  root.appendChild(
    ui.el(
      "div",
      { style: { fontSize: "13px" } },
      ui.badge(puzzle.category_name || "?", "info"),
      " ",
      ui.badge(puzzle.language || "?", "muted"),
      " ",
      ui.el("b", {}, puzzle.title || puzzle.id),
      ui.el(
        "span",
        { class: "muted", style: { fontSize: "11px" } },
        `  responder ${view.responder || "?"} · judge ${view.judge || "none"} · key clues ${
          view.key_clues_on === false ? "off" : "on"
        }`,
      ),
    ),
  );
  root.appendChild(
    ui.el(
      "div",
      { style: { ...turtlesoupBox, background: "#f6f8fa", whiteSpace: "pre-wrap" } },
      ui.el("div", { class: "muted", style: { fontSize: "11px" } }, "Surface"),
      puzzle.surface || "—",
    ),
  );
  if (view.status === "error") {
    root.appendChild(ui.el("div", {}, ui.badge("errored", "bad"), " ", view.error || ""));
  }
  root.appendChild(
    ui.el(
      "div",
      { style: { fontSize: "12px", margin: "4px 0" } },
      `Position ${pos}: turn ${frame.turn}, key clues hit ${frame.key_clues}, repeated ${frame.repeated}, ` +
        `invalid ${frame.invalid}, phase ${frame.phase}`,
    ),
  );
  root.appendChild(turtlesoupHeading(ui, "Questions and answers"));
  root.appendChild(turtlesoupLegend(ui, Boolean(view.beliefs)));
  root.appendChild(turtlesoupDialogue(ui, view, pos));
  if (view.beliefs) {
    root.appendChild(turtlesoupHeading(ui, "Mosaic-Agent at this position"));
    root.appendChild(turtlesoupMosaic(ui, view, pos));
  } else {
    root.appendChild(
      ui.el(
        "div",
        { class: "muted", style: { fontSize: "11px" } },
        `Agent ${view.agent} keeps no belief state or genre.`,
      ),
    );
  }
  root.appendChild(turtlesoupHeading(ui, "Final summary vs gold points"));
  root.appendChild(turtlesoupSummary(ui, view, pos));
  if (puzzle.bottom) {
    root.appendChild(
      ui.el(
        "details",
        { style: { fontSize: "12px", marginTop: "6px" } },
        ui.el("summary", {}, "Soup bottom and Key Clue Library (hidden from the questioner)"),
        ui.el("div", { style: { whiteSpace: "pre-wrap", margin: "4px 0" } }, puzzle.bottom),
        turtlesoupList(ui, puzzle.key_clue_library, "no Key Clue Library"),
      ),
    );
  }
}
