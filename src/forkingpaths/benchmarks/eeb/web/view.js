// The eeb world view: maze maps (observed and full, with fog) and match-2 boards per position.

const eebCell = 30;
const eebMazeFill = {
  "#": "#57606a",
  ".": "#ffffff",
  "?": "#d0d7de",
  C: "#f2cc60",
  G: "#4ac26b",
  S: "#ddf4ff",
  T: "#d8b9ff",
  W: "#d8b9ff",
  N: "#d8b9ff",
  K: "#d8b9ff",
  A: "#ffffff",
  M: "#ffffff",
};
// Two maps or boards side by side, each half of the root's width.
const eebPanel = { flex: "1 1 0", minWidth: "0", maxWidth: "275px" };
const eebItemNames = { T: "shovel", W: "sword", N: "magnet", K: "key" };
const eebTileFill = { A: "#d73a49", B: "#0366d6", C: "#28a745", D: "#dbab09" };

export function renderWorld(root, view, position, ui) {
  if (!view || !Array.isArray(view.frames) || view.frames.length === 0) {
    root.appendChild(ui.el("p", { class: "muted" }, "No world view for this episode."));
    return;
  }
  const p = Math.max(0, Math.min(position | 0, view.frames.length - 1));
  if (view.kind === "maze") {
    eebMaze(root, view, p, ui);
  } else if (view.kind === "match2") {
    eebMatch2(root, view, p, ui);
  }
  eebTruths(root, view.truths, ui);
}

// ---- shared pieces ----

function eebHeader(ui, title, view) {
  const badges = [];
  if (view.status === "error") badges.push(ui.badge("errored", "bad"));
  if (view.summary && typeof view.summary.success === "boolean") {
    badges.push(ui.badge(view.summary.success ? "success" : "failed", view.summary.success ? "ok" : "bad"));
  }
  return ui.el(
    "div",
    { style: { display: "flex", gap: "8px", alignItems: "center", marginBottom: "6px" } },
    ui.el("strong", {}, title),
    badges,
  );
}

function eebChart(ui, lines, p, yLabel) {
  // An old record may lack a quantity: its line is left out, and an empty chart with it.
  const series = lines.filter((line) => Array.isArray(line.values) && line.values.length > 0);
  if (series.length === 0) return null;
  return ui.lineChart({
    series,
    width: 540,
    height: 120,
    xLabel: "position",
    yLabel,
    marker: p,
    onSeek: (x) => ui.seek(Math.round(x)),
  });
}

function eebStepBox(ui, p, total, rows) {
  // Steps are numbered from 0 as the timeline numbers them: position p follows step p - 1.
  const title = p === 0 ? "After reset (no step yet)" : `Step ${p - 1} (${p} of ${total} steps taken)`;
  return ui.el(
    "div",
    { style: { border: "1px solid #d0d7de", borderRadius: "6px", padding: "6px 8px", margin: "6px 0" } },
    ui.el("div", { style: { fontWeight: "600", marginBottom: "2px" } }, title),
    rows,
  );
}

function eebTruths(root, truths, ui) {
  if (!truths) return;
  const head = [truths.source];
  if (truths.round !== undefined && truths.round !== null) head.push(`round ${truths.round}`);
  if (truths.phase) head.push(`phase ${truths.phase}`);
  if (truths.path) head.push(truths.path);
  const texts = Array.isArray(truths.texts) ? truths.texts : [];
  root.appendChild(
    ui.el(
      "details",
      texts.length > 0 && texts.length <= 8 ? { open: "", style: { marginTop: "8px" } } : { style: { marginTop: "8px" } },
      ui.el("summary", {}, `Truths the agent played with (Eq. 5): ${texts.length}`),
      ui.el("div", { class: "muted" }, head.join(" · ")),
      truths.note ? ui.el("div", { class: "muted" }, truths.note) : null,
      texts.length
        ? ui.el("ol", { style: { margin: "4px 0", paddingLeft: "20px" } }, texts.map((t) => ui.el("li", {}, t)))
        : null,
    ),
  );
}

function eebPut(root, node) {
  if (node) root.appendChild(node);
}

function eebCaption(ui, text, muted) {
  return ui.el("div", muted ? { class: "muted", style: { fontSize: "12px" } } : { style: { fontSize: "12px" } }, text);
}

function eebRect(ui, x, y, width, height, attrs) {
  return ui.svg("rect", { x, y, width, height, ...attrs });
}

function eebLegend(ui, items) {
  return ui.el(
    "div",
    { style: { display: "flex", flexWrap: "wrap", gap: "10px", fontSize: "12px", margin: "4px 0" } },
    items.map(([fill, glyph, text, stroke]) =>
      ui.el(
        "span",
        { style: { display: "inline-flex", alignItems: "center", gap: "3px" } },
        ui.svg(
          "svg",
          { width: 14, height: 14, viewBox: "0 0 14 14" },
          ui.svg("rect", { x: 0.5, y: 0.5, width: 13, height: 13, fill, stroke: stroke || "#8c959f" }),
          glyph ? ui.svg("text", { x: 7, y: 11, "text-anchor": "middle", "font-size": 10 }, glyph) : null,
        ),
        text,
      ),
    ),
  );
}

// ---- maze ----

function eebMaze(root, view, p, ui) {
  const frames = view.frames;
  const frame = frames[p];
  const size = view.size || (view.obs0 ? view.obs0.length : 0);
  const title = `Maze level ${view.level ?? "?"} (${size}x${size})`;
  root.appendChild(eebHeader(ui, title, view));

  // The observed map and, with a replay, the board, explored cells and trail up to p.
  const known = (view.obs0 || []).map((row) => row.split(""));
  const board = view.board ? view.board.map((row) => row.split("")) : null;
  const explored = new Set();
  const firstVisit = new Map();
  const trail = [];
  for (let q = 0; q <= p; q++) {
    const f = frames[q];
    for (const [r, c, ch] of f.obs || []) if (known[r]) known[r][c] = ch;
    for (const [r, c] of f.seen || []) explored.add(`${r},${c}`);
    if (board) for (const [r, c] of f.gone || []) if (board[r] && board[r][c] !== "G") board[r][c] = ".";
    if (Array.isArray(f.pos)) {
      const key = `${f.pos[0]},${f.pos[1]}`;
      if (!firstVisit.has(key)) firstVisit.set(key, q);
      trail.push({ pos: f.pos, jump: Boolean(f.step && f.step.respawn) });
    }
  }

  const maps = ui.el("div", { style: { display: "flex", gap: "10px" } });
  maps.appendChild(
    ui.el(
      "div",
      { style: eebPanel },
      eebCaption(ui, `Agent's observation (${view.full_vision ? "full vision" : "3x3 view outlined"})`),
      eebObservedMap(ui, known, frame, view.full_vision),
    ),
  );
  if (board) {
    maps.appendChild(
      ui.el(
        "div",
        { style: eebPanel },
        eebCaption(ui, "Full map (fog: not explored yet; click a cell to seek)"),
        eebFullMap(ui, board, explored, frame, trail, firstVisit),
      ),
    );
  }
  root.appendChild(maps);
  if (!view.replayed) {
    root.appendChild(eebCaption(ui, `Full map not shown: ${view.replay_note || "no replay"}.`, true));
  }
  root.appendChild(
    eebLegend(ui, [
      ["#ffffff", "A", "agent", "#0969da"],
      ["#4ac26b", "G", "goal"],
      ["#ddf4ff", "S", "start"],
      ["#f2cc60", "C", "coin"],
      ["#57606a", "", "wall"],
      ["#ffffff", "M", "monster (dashed: out of the agent's view)", "#cf222e"],
      ["#d8b9ff", "T", "items: T shovel, W sword, N magnet, K key"],
      ["#d0d7de", "?", "unexplored / fog"],
      ["#9ec5f0", "", "path walked"],
    ]),
  );

  root.appendChild(eebStepBox(ui, p, frames.length - 1, eebMazeStepRows(ui, frame)));

  const s = view.series || {};
  if (frames.length < 2) return;
  eebPut(
    root,
    eebChart(
      ui,
      [
        { name: "HP (lives)", values: s.lives || [], color: ui.colors.bad },
        { name: "gold (coins)", values: s.coins || [], color: ui.colors.warn },
      ],
      p,
      "lives, coins",
    ),
  );
  eebPut(root, eebChart(ui, [{ name: "score", values: s.score || [], color: ui.colors.info }], p, "score"));
}

function eebMazeStepRows(ui, frame) {
  const rows = [];
  const held = frame.held;
  const status = [
    `HP ${frame.lives ?? "?"}`,
    `gold ${frame.coins ?? "?"}`,
    `score ${frame.score ?? "?"}`,
    `explored ${frame.explored ?? "?"}`,
  ];
  if (held) {
    const items = [];
    if (held.shovel) items.push(`shovel (${held.shovel} uses)`);
    if (held.sword) items.push("sword");
    if (held.magnet) items.push("magnet");
    if (held.key) items.push("key");
    if (items.length) status.push(`holding ${items.join(", ")}`);
  }
  rows.push(ui.el("div", { class: "mono", style: { fontSize: "12px" } }, status.join(" · ")));
  const step = frame.step;
  if (!step) return rows;
  const action = step.label ? `${step.action}: ${step.label}` : "no action could be read";
  const reward = typeof step.reward === "number" ? ` (${step.reward >= 0 ? "+" : ""}${step.reward})` : "";
  rows.push(
    ui.el(
      "div",
      {},
      ui.badge(step.valid ? "valid" : "invalid", step.valid ? "ok" : "bad"),
      " ",
      `Action ${action}${reward}`,
      step.end ? [" ", ui.badge(step.end, step.end === "success" ? "ok" : "warn")] : null,
    ),
  );
  const events = step.events || [];
  if (events.length) {
    rows.push(ui.el("ul", { style: { margin: "2px 0", paddingLeft: "18px" } }, events.map((e) => ui.el("li", {}, e.text || e.event))));
  } else {
    rows.push(ui.el("div", { class: "muted" }, "no events"));
  }
  return rows;
}

function eebGlyph(ui, x, y, ch, color) {
  const at = { x: x + eebCell / 2, y: y + eebCell / 2 + 5, "text-anchor": "middle" };
  return ui.svg("text", { ...at, "font-size": 15, "font-family": "monospace", fill: color || "#24292f" }, ch);
}

function eebMazeCell(ui, r, c, ch) {
  const x = c * eebCell;
  const y = r * eebCell;
  const fill = eebMazeFill[ch] || "#ffffff";
  const parts = [eebRect(ui, x, y, eebCell, eebCell, { fill, stroke: "#afb8c1", "stroke-width": 0.5 })];
  if (ch === "C") parts.push(ui.svg("circle", { cx: x + eebCell / 2, cy: y + eebCell / 2, r: 8, fill: "#d4a72c", stroke: "#9a6700" }));
  if (ch === "G" || ch === "S" || ch === "?" || eebItemNames[ch]) parts.push(eebGlyph(ui, x, y, ch, ch === "?" ? "#6e7781" : null));
  return parts;
}

function eebAgent(ui, r, c) {
  return [
    ui.svg("circle", { cx: c * eebCell + eebCell / 2, cy: r * eebCell + eebCell / 2, r: 11, fill: "#0969da" }),
    eebGlyph(ui, c * eebCell, r * eebCell, "A", "#ffffff"),
  ];
}

function eebMonster(ui, r, c, seen) {
  const ring = { cx: c * eebCell + eebCell / 2, cy: r * eebCell + eebCell / 2, r: 11, stroke: "#cf222e", "stroke-width": 2 };
  // A monster out of the agent's view is drawn hollow and dashed.
  const look = seen ? { fill: "#cf222e" } : { fill: "#ffffff", "stroke-dasharray": "3 2" };
  return [
    ui.svg("circle", { ...ring, ...look }),
    eebGlyph(ui, c * eebCell, r * eebCell, "M", seen ? "#ffffff" : "#cf222e"),
  ];
}

function eebObservedMap(ui, known, frame, fullVision) {
  const n = known.length;
  const svg = ui.svg("svg", { viewBox: `0 0 ${n * eebCell} ${n * eebCell}`, width: "100%", role: "img" });
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < known[r].length; c++) {
      const ch = known[r][c];
      if (ch === "A") {
        svg.append(...eebMazeCell(ui, r, c, "."), ...eebAgent(ui, r, c));
      } else if (ch === "M") {
        svg.append(...eebMazeCell(ui, r, c, "."), ...eebMonster(ui, r, c, true));
      } else {
        svg.append(...eebMazeCell(ui, r, c, ch));
      }
    }
  }
  if (!fullVision && Array.isArray(frame.pos)) {
    const [r, c] = frame.pos;
    const r0 = Math.max(0, r - 1);
    const c0 = Math.max(0, c - 1);
    const r1 = Math.min(n - 1, r + 1);
    const c1 = Math.min(n - 1, c + 1);
    svg.appendChild(
      eebRect(ui, c0 * eebCell, r0 * eebCell, (c1 - c0 + 1) * eebCell, (r1 - r0 + 1) * eebCell, {
        fill: "none",
        stroke: "#0969da",
        "stroke-width": 2.5,
      }),
    );
  }
  return svg;
}

function eebFullMap(ui, board, explored, frame, trail, firstVisit) {
  const n = board.length;
  const svg = ui.svg("svg", { viewBox: `0 0 ${n * eebCell} ${n * eebCell}`, width: "100%", role: "img" });
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < board[r].length; c++) {
      const parts = eebMazeCell(ui, r, c, board[r][c]);
      const visit = firstVisit.get(`${r},${c}`);
      if (visit !== undefined) {
        parts[0].setAttribute("style", "cursor:pointer");
        parts[0].addEventListener("click", () => ui.seek(visit));
      }
      svg.append(...parts);
      if (!explored.has(`${r},${c}`) && board[r][c] !== "G") {
        const fog = { fill: "#8c959f", "fill-opacity": 0.55, "pointer-events": "none" };
        svg.appendChild(eebRect(ui, c * eebCell, r * eebCell, eebCell, eebCell, fog));
      }
    }
  }
  // The path walked so far; a respawn at the start is a jump, not a walk.
  const mid = (v) => v * eebCell + eebCell / 2;
  for (let i = 1; i < trail.length; i++) {
    const a = trail[i - 1].pos;
    const b = trail[i].pos;
    if (trail[i].jump || (a[0] === b[0] && a[1] === b[1])) continue;
    const ends = { x1: mid(a[1]), y1: mid(a[0]), x2: mid(b[1]), y2: mid(b[0]) };
    const pen = { stroke: "#0969da", "stroke-width": 3, "stroke-opacity": 0.45, "stroke-linecap": "round" };
    svg.appendChild(ui.svg("line", { ...ends, ...pen, "pointer-events": "none" }));
  }
  const visible = new Set((frame.visible || []).map(([r, c]) => `${r},${c}`));
  for (const [r, c] of frame.monsters || []) svg.append(...eebMonster(ui, r, c, visible.has(`${r},${c}`)));
  if (Array.isArray(frame.pos)) svg.append(...eebAgent(ui, frame.pos[0], frame.pos[1]));
  return svg;
}

// ---- match-2 ----

function eebMatch2(root, view, p, ui) {
  const frames = view.frames;
  const frame = frames[p];
  const title = `Match-2${view.difficulty ? ` (${view.difficulty})` : ""}, ${view.max_steps ?? "?"} steps`;
  root.appendChild(eebHeader(ui, title, view));
  const step = frame.step;
  const boards = ui.el("div", { style: { display: "flex", gap: "10px" } });
  if (p > 0) {
    boards.appendChild(
      ui.el(
        "div",
        { style: eebPanel },
        eebCaption(ui, `Before step ${p - 1}: cleared tiles outlined`),
        eebBoard(ui, frames[p - 1].board, step ? step.removed : [], "removed"),
      ),
    );
  }
  boards.appendChild(
    ui.el(
      "div",
      { style: eebPanel },
      eebCaption(ui, p > 0 ? `After step ${p - 1}: refilled tiles dotted` : "Board after reset"),
      eebBoard(ui, frame.board, step ? step.fresh : [], "fresh"),
    ),
  );
  root.appendChild(boards);
  root.appendChild(
    eebLegend(ui, [
      [eebTileFill.A, "A", "colours A-D"],
      ["#ffffff", "", "cleared by the step", "#24292f"],
      ["#ffffff", "•", "new tile from the refill"],
    ]),
  );
  if (view.replay_note) root.appendChild(ui.el("div", { class: "muted", style: { fontSize: "12px" } }, view.replay_note));

  const rows = [];
  const targets = view.targets || {};
  const progress = Object.keys(targets).map((colour) => {
    const done = (frame.cleared || {})[colour] ?? 0;
    const met = done >= targets[colour];
    const look = { color: eebTileFill[colour] || "#24292f", marginRight: "10px", fontWeight: met ? "600" : "400" };
    return ui.el("span", { style: look }, `${colour} ${done}/${targets[colour]}${met ? " ✓" : ""}`);
  });
  const totals = `score ${frame.score ?? "?"} · steps left ${frame.left ?? "?"} · `;
  rows.push(ui.el("div", { class: "mono", style: { fontSize: "12px" } }, totals, progress));
  const inventory = Object.entries(frame.inventory || {}).map(([k, v]) => `${k} x${v}`);
  if (view.props_enabled === false) rows.push(ui.el("div", { class: "muted" }, "props disabled (NoProps)"));
  else if (inventory.length) rows.push(ui.el("div", { class: "muted" }, `props left: ${inventory.join(", ")}`));
  if (step) {
    const reward = typeof step.reward === "number" ? ` (${step.reward >= 0 ? "+" : ""}${step.reward})` : "";
    const cleared = Object.entries(step.cleared || {}).filter(([, n]) => n > 0).map(([c, n]) => `${n} ${c}`);
    rows.push(
      ui.el(
        "div",
        {},
        ui.badge(step.valid ? "valid" : "invalid", step.valid ? "ok" : "bad"),
        " ",
        `Action ${step.action ?? "(none read)"}${reward}`,
        cleared.length ? ` — cleared ${cleared.join(", ")}` : "",
        step.end ? [" ", ui.badge(step.end, step.end === "success" ? "ok" : "warn")] : null,
      ),
    );
    if (step.error) rows.push(ui.el("div", { style: { color: ui.colors.bad } }, step.error));
    if (step.raw) rows.push(ui.el("div", { class: "mono muted", style: { fontSize: "11px", whiteSpace: "pre-wrap" } }, step.raw));
  }
  root.appendChild(eebStepBox(ui, p, frames.length - 1, rows));

  const s = view.series || {};
  if (frames.length < 2) return;
  eebPut(root, eebChart(ui, [{ name: "score", values: s.score || [], color: ui.colors.info }], p, "score"));
  // Short names, steps left first: five legend entries must fit the chart's 540 px width.
  const need = [{ name: "steps left", values: s.left || [], color: ui.colors.muted }];
  for (const c of (view.colours || []).filter((c) => s[`need_${c}`])) {
    need.push({ name: `need ${c}`, values: s[`need_${c}`], color: eebTileFill[c] });
  }
  eebPut(root, eebChart(ui, need, p, "tiles / steps"));
}

function eebBoard(ui, board, marked, how) {
  const rows = Array.isArray(board) ? board : [];
  const n = rows.length || 8;
  const svg = ui.svg("svg", { viewBox: `0 0 ${n * eebCell} ${n * eebCell}`, width: "100%", role: "img" });
  const marks = new Set((marked || []).map(([i, j]) => `${i},${j}`));
  for (let i = 0; i < rows.length; i++) {
    for (let j = 0; j < rows[i].length; j++) {
      const tile = rows[i][j];
      const x = j * eebCell;
      const y = i * eebCell;
      const on = marks.has(`${i},${j}`);
      svg.appendChild(
        ui.svg("rect", {
          x: x + 1,
          y: y + 1,
          width: eebCell - 2,
          height: eebCell - 2,
          rx: 4,
          fill: eebTileFill[tile] || "#d0d7de",
          "fill-opacity": on && how === "removed" ? 0.35 : 1,
          stroke: on && how === "removed" ? "#24292f" : "none",
          "stroke-width": 2.5,
        }),
      );
      svg.appendChild(eebGlyph(ui, x, y, tile, "#ffffff"));
      if (on && how === "fresh") svg.appendChild(ui.svg("circle", { cx: x + 6, cy: y + 6, r: 3, fill: "#ffffff", stroke: "#24292f" }));
    }
  }
  return svg;
}
