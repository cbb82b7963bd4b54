// griddag world view: the grid under the agent's fog of war, its path coloured by Table 1 case,
// the stale score and the task DAG as the episode reveals it (data: griddag/view.py).

const griddagCaseNames = {
  1: "case 1: explore (nothing pending)",
  2: "case 2: exploit (goal pending)",
  3: "case 3: exploit (map fully observed)",
  4: "case 4: explore or exploit",
};

const griddagFill = {
  fog: "#8c959f",
  fogRevealed: "#afb8c1",
  wall: "#24292f",
  observed: "#f6f8fa",
  unobserved: "#ddf4ff",
  achieved: "#dafbe1",
  pending: "#fff8c5",
  discovered: "#eaeef2",
  named: "#ffffff",
};

// Moves drawn at full strength behind the agent; older ones are faded.
const griddagRecentMoves = 20;

// Display choices that outlive one render (the root is rebuilt at every position).
const griddagState = { reveal: false };

export function renderWorld(root, view, position, ui) {
  if (!view || view.kind !== "griddag" || !Array.isArray(view.frames) || !view.frames.length) {
    root.append(ui.el("p", { class: "muted" }, "No griddag world view for this episode."));
    return;
  }
  const last = view.frames.length - 1;
  const p = Math.min(Math.max(0, Math.floor(Number(position) || 0)), last);
  const frame = view.frames[p];
  const rerender = () => {
    root.replaceChildren();
    renderWorld(root, view, p, ui);
  };
  root.append(
    griddagHeader(view, p, frame, ui),
    griddagControls(ui, rerender),
    griddagGrid(view, p, frame, ui),
    griddagGridLegend(ui),
    griddagErrorStrip(view, p, ui),
    griddagChart(view, p, ui),
    ui.el("h4", { style: { margin: "10px 0 4px" } }, "Task DAG as revealed"),
    griddagDag(view, p, frame, ui),
    griddagDagLegend(ui),
  );
}

function griddagStatus(node, p, frame) {
  if (node.achieved_at >= 0 && node.achieved_at <= p) return "achieved";
  if (node.discovered_at >= 0 && node.discovered_at <= p) {
    return frame.pending.includes(node.name) ? "pending" : "discovered";
  }
  if (node.named_at >= 0 && node.named_at <= p) return "named";
  return "hidden";
}

function griddagFmt(value) {
  return value === null || value === undefined ? "n/a" : Number(value).toFixed(3);
}

function griddagHeader(view, p, frame, ui) {
  const score = view.score || {};
  const outcome =
    view.status === "error"
      ? ui.badge("errored", "bad")
      : score.success
        ? ui.badge("goal achieved", "ok")
        : ui.badge("goal not achieved", "warn");
  // Before the first move there is nothing to judge yet: no case badge.
  const caseBadge =
    p === 0
      ? ui.badge("no move yet", "muted")
      : frame.case === null || frame.case === undefined
      ? ui.badge(p === view.frames.length - 1 ? "episode over" : "not scored", "muted")
      : ui.el(
          "span",
          {
            class: "badge",
            style: { background: ui.colors.case[frame.case], color: "#fff" },
            title: "Table 1 case of the state here; the next move is judged against it",
          },
          `now: ${griddagCaseNames[frame.case]}`,
        );
  // Facts of the whole episode sit on their own line, apart from what holds at this position.
  const lines = [
    ui.el(
      "div",
      {
        class: "muted",
        style: {
          display: "flex",
          gap: "6px",
          alignItems: "center",
          flexWrap: "wrap",
          fontSize: "12px",
          paddingBottom: "3px",
          borderBottom: "1px solid #d0d7de",
        },
      },
      ui.el("span", { class: "mono" }, String(view.instance_id)),
      "episode outcome:",
      outcome,
      `exploration error ${griddagFmt(score.exploration_error)} · exploitation error ` +
        `${griddagFmt(score.exploitation_error)} · budget ${view.budget} steps`,
    ),
    ui.el(
      "div",
      { style: { display: "flex", gap: "6px", alignItems: "center", marginTop: "4px" } },
      ui.el("b", { style: { fontSize: "12px" } }, `position ${p}:`),
      caseBadge,
    ),
  ];
  if (view.error) {
    lines.push(ui.el("div", { class: "mono", style: { color: ui.colors.bad } }, view.error));
  }
  const move = p > 0 ? view.moves[p - 1] : null;
  const facts = [
    `at [${frame.pos[0]}, ${frame.pos[1]}]`,
    `stale score S = ${frame.stale}`,
    `|T| = ${frame.targets.length}`,
    `pending: ${frame.pending.length ? frame.pending.join(", ") : "none"}`,
  ];
  lines.push(ui.el("div", { style: { fontSize: "12px", marginTop: "3px" } }, facts.join(" · ")));
  if (move) {
    const verdict =
      move.case === null || move.case === undefined
        ? ui.badge("not scored", "muted")
        : move.err
          ? ui.badge("error", "bad")
          : ui.badge(move.progress ? "progress" : "no error", "ok");
    lines.push(
      ui.el(
        "div",
        { style: { fontSize: "12px", marginTop: "3px" } },
        `last move (t = ${p - 1}): `,
        ui.el("span", { class: "mono" }, move.action),
        move.valid ? "" : ` refused (${move.error_reason || "invalid"})`,
        " ",
        verdict,
        move.case ? ` case ${move.case}, gain ${move.gain}, |T| = ${move.targets}` : "",
      ),
    );
  }
  return ui.el("div", { style: { marginBottom: "6px" } }, lines);
}

function griddagControls(ui, rerender) {
  // The episode page has the position slider and the arrow keys: only the map option lives here.
  const reveal = ui.el("input", { type: "checkbox" });
  reveal.checked = griddagState.reveal;
  reveal.addEventListener("change", () => {
    griddagState.reveal = reveal.checked;
    rerender();
  });
  return ui.el(
    "div",
    { style: { display: "flex", gap: "6px", alignItems: "center", margin: "4px 0" } },
    ui.el(
      "label",
      { style: { fontSize: "12px" }, title: "draw what the fog hides (the agent never saw it)" },
      reveal,
      " reveal map",
    ),
  );
}

function griddagTitle(ui, text) {
  return ui.svg("title", {}, text);
}

function griddagStyled(node, css) {
  node.setAttribute("style", css);
  return node;
}

function griddagOnClick(node, fn) {
  node.addEventListener("click", fn);
  node.setAttribute("style", "cursor: pointer");
  return node;
}

function griddagGrid(view, p, frame, ui) {
  const b = view.bounds;
  const w = b.x1 - b.x0 + 1;
  const h = b.y1 - b.y0 + 1;
  // The paper's up is y+1: the top row of the drawing is the largest y.
  const sx = (x) => x - b.x0;
  const sy = (y) => b.y1 - y;
  const parts = [];
  parts.push(ui.svg("rect", { x: 0, y: 0, width: w, height: h, fill: griddagFill.fog }));
  for (const [x, y, knownAt] of view.walls) {
    if ((knownAt >= 0 && knownAt <= p) || griddagState.reveal) {
      const known = knownAt >= 0 && knownAt <= p;
      parts.push(
        ui.svg(
          "rect",
          {
            x: sx(x),
            y: sy(y),
            width: 1,
            height: 1,
            fill: griddagFill.wall,
            opacity: known ? 1 : 0.35,
          },
          griddagTitle(ui, `[${x}, ${y}] obstacle${known ? "" : " (not yet known)"}`),
        ),
      );
    }
  }
  const nodeAt = {};
  for (const node of view.nodes) nodeAt[`${node.pos[0]},${node.pos[1]}`] = node;
  for (const [x, y, observedAt, knownAt] of view.cells) {
    const observed = observedAt >= 0 && observedAt <= p;
    const unobserved = !observed && knownAt >= 0 && knownAt <= p;
    const node = nodeAt[`${x},${y}`];
    // An unknown cell is not drawn at all: its outline would tell open floor from obstacle.
    if (!observed && !unobserved && !griddagState.reveal) continue;
    let fill = griddagState.reveal ? griddagFill.fogRevealed : griddagFill.fog;
    let label = "unknown";
    if (observed) {
      fill = griddagFill.observed;
      label = `observed (first visited at position ${observedAt})`;
    } else if (unobserved) {
      fill = griddagFill.unobserved;
      label = "unobserved (a neighbour was visited)";
    }
    const cell = ui.svg(
      "rect",
      {
        x: sx(x) + 0.02,
        y: sy(y) + 0.02,
        width: 0.96,
        height: 0.96,
        fill,
        stroke: unobserved ? ui.colors.info : "#d0d7de",
        "stroke-width": unobserved ? 0.04 : 0.02,
        "stroke-dasharray": unobserved ? "0.12 0.08" : "none",
      },
      griddagTitle(ui, `[${x}, ${y}] ${label}`),
    );
    // Clicking a visited cell goes to the agent's first arrival there.
    parts.push(observed && observedAt !== p ? griddagOnClick(cell, () => ui.seek(observedAt)) : cell);
    if (node && (observed || griddagState.reveal)) parts.push(griddagGridNode(node, p, frame, ui, sx, sy));
  }
  const caseColour = frame.case ? ui.colors.case[frame.case] : ui.colors.muted;
  for (const [x, y] of frame.targets) {
    parts.push(
      ui.svg(
        "rect",
        {
          x: sx(x) + 0.1,
          y: sy(y) + 0.1,
          width: 0.8,
          height: 0.8,
          fill: "none",
          stroke: caseColour,
          "stroke-width": 0.07,
          "stroke-dasharray": "0.15 0.1",
          "pointer-events": "none",
        },
      ),
    );
  }
  parts.push(griddagPath(view, p, ui, sx, sy));
  const [px, py] = frame.pos;
  // A ring, not a dot: the name of a node under the agent stays readable.
  parts.push(
    ui.svg("circle", {
      cx: sx(px) + 0.5,
      cy: sy(py) + 0.5,
      r: 0.45,
      fill: "none",
      stroke: "#111",
      "stroke-width": 0.09,
      "pointer-events": "none",
    }),
  );
  // Drawn after the ring, small on a white tab in the bottom-left corner: both stay readable.
  const [stx, sty] = view.start;
  parts.push(
    ui.svg(
      "g",
      { "pointer-events": "none" },
      ui.svg("rect", {
        x: sx(stx) + 0.02,
        y: sy(sty) + 0.8,
        width: 0.46,
        height: 0.18,
        rx: 0.03,
        fill: "#ffffff",
        stroke: "#d0d7de",
        "stroke-width": 0.015,
      }),
      ui.svg(
        "text",
        { x: sx(stx) + 0.05, y: sy(sty) + 0.94, "font-size": 0.15, fill: ui.colors.muted },
        "start",
      ),
    ),
  );
  const cellPx = Math.max(18, Math.min(60, Math.floor(540 / w), Math.floor(440 / h)));
  return griddagStyled(
    ui.svg(
      "svg",
      {
        viewBox: `-0.05 -0.05 ${w + 0.1} ${h + 0.1}`,
        width: cellPx * w,
        height: cellPx * h,
        role: "img",
        "aria-label": "grid map under the agent's fog of war",
      },
      parts,
    ),
    "display: block; max-width: 100%; height: auto",
  );
}

function griddagGridNode(node, p, frame, ui, sx, sy) {
  const status = griddagStatus(node, p, frame);
  const seen = status === "achieved" || status === "pending" || status === "discovered";
  const fill = seen ? griddagFill[status] : "#ffffff";
  const label = node.name.length > 6 ? `${node.name.slice(0, 5)}…` : node.name;
  const x = sx(node.pos[0]);
  const y = sy(node.pos[1]);
  const tip =
    `${node.name}${node.is_goal ? " (goal)" : ""}: ${seen ? status : "not yet discovered"}` +
    (node.requires ? `; requires ${node.requires}` : "; no prerequisites");
  return ui.svg(
    "g",
    { opacity: seen ? 1 : 0.45, "pointer-events": "none" },
    ui.svg("rect", {
      x: x + 0.12,
      y: y + 0.18,
      width: 0.76,
      height: 0.64,
      rx: 0.08,
      fill,
      stroke: node.is_goal ? ui.colors.ok : "#57606a",
      "stroke-width": node.is_goal ? 0.08 : 0.03,
    }),
    ui.svg(
      "text",
      {
        x: x + 0.5,
        y: y + 0.56,
        "text-anchor": "middle",
        "font-size": 0.22,
        "font-family": "monospace",
        "font-style": seen ? "normal" : "italic",
        fill: "#24292f",
      },
      label,
    ),
    griddagTitle(ui, tip),
  );
}

function griddagPath(view, p, ui, sx, sy) {
  const g = ui.svg("g", {});
  const lanes = view.lanes;
  for (let t = 0; t < p && t + 1 < lanes.length; t++) {
    const move = view.moves[t] || {};
    // Older moves fade so that a long walk still shows where the agent just went.
    const recent = t >= p - griddagRecentMoves;
    const colour = ui.colors.case[move.case || 0];
    const [ax, ay] = lanes[t];
    const [bx, by] = lanes[t + 1];
    const tip =
      `move t = ${t}: ${move.case ? `case ${move.case}` : "not scored"}` +
      `${move.err ? ", ERROR" : ""}${move.valid === false ? `, refused (${move.error_reason})` : ""}`;
    let mark;
    if (ax === bx && ay === by) {
      // A refused move stays in place: a ring on the cell.
      mark = ui.svg("circle", {
        cx: sx(ax) + 0.5,
        cy: sy(ay) + 0.5,
        r: 0.3,
        fill: "none",
        stroke: colour,
        "stroke-width": 0.04,
        opacity: recent ? 0.9 : 0.3,
      });
    } else {
      mark = ui.svg("line", {
        x1: sx(ax) + 0.5,
        y1: sy(ay) + 0.5,
        x2: sx(bx) + 0.5,
        y2: sy(by) + 0.5,
        stroke: colour,
        "stroke-width": move.err ? 0.08 : 0.05,
        opacity: recent ? 0.9 : 0.3,
        "stroke-linecap": "round",
      });
    }
    mark.append(griddagTitle(ui, tip));
    g.append(griddagOnClick(mark, () => ui.seek(t + 1)));
    if (move.err) {
      const mx = (sx(ax) + sx(bx)) / 2 + 0.5;
      const my = (sy(ay) + sy(by)) / 2 + 0.5;
      const cross = ui.svg(
        "g",
        { stroke: "#000", "stroke-width": 0.035, opacity: recent ? 1 : 0.35 },
        ui.svg("circle", { cx: mx, cy: my, r: 0.09, fill: "#fff" }),
        ui.svg("line", { x1: mx - 0.05, y1: my - 0.05, x2: mx + 0.05, y2: my + 0.05 }),
        ui.svg("line", { x1: mx - 0.05, y1: my + 0.05, x2: mx + 0.05, y2: my - 0.05 }),
        griddagTitle(ui, tip),
      );
      g.append(griddagOnClick(cross, () => ui.seek(t + 1)));
    }
  }
  return g;
}

function griddagSwatch(ui, fill, stroke, text, dashed) {
  return ui.el(
    "span",
    { style: { display: "inline-flex", alignItems: "center", gap: "3px", marginRight: "9px" } },
    ui.el("span", {
      style: {
        display: "inline-block",
        width: "12px",
        height: "12px",
        background: fill,
        border: `${dashed ? "1px dashed" : "1px solid"} ${stroke}`,
      },
    }),
    text,
  );
}

function griddagLine(ui, colour, text) {
  return ui.el(
    "span",
    { style: { display: "inline-flex", alignItems: "center", gap: "3px", marginRight: "9px" } },
    ui.el("span", {
      style: { display: "inline-block", width: "16px", height: "3px", background: colour },
    }),
    text,
  );
}

function griddagGridLegend(ui) {
  const style = { fontSize: "11px", lineHeight: "18px", margin: "4px 0" };
  return ui.el(
    "div",
    { style },
    ui.el(
      "div",
      {},
      griddagSwatch(ui, griddagFill.observed, "#d0d7de", "observed (visited)"),
      griddagSwatch(ui, griddagFill.unobserved, ui.colors.info, "unobserved (next to a visited cell)", true),
      griddagSwatch(ui, griddagFill.fog, griddagFill.fog, "unknown"),
      griddagSwatch(ui, griddagFill.wall, griddagFill.wall, "known obstacle"),
      griddagSwatch(ui, "transparent", "#444", "target set T(t)", true),
    ),
    ui.el(
      "div",
      {},
      "path by Table 1 case: ",
      [1, 2, 3, 4].map((c) => griddagLine(ui, ui.colors.case[c], `case ${c}`)),
      "⊗ error (err = 1) · thin ring: refused move · black ring: agent · moves before the last 20 faded",
    ),
  );
}

function griddagErrorStrip(view, p, ui) {
  // err(t) per move, one bar each, coloured by case; errors full height.
  const n = view.moves.length;
  if (!n) return ui.el("div", { class: "muted", style: { fontSize: "12px" } }, "No moves.");
  const width = 540;
  const bw = width / n;
  const bars = view.moves.map((move, t) => {
    const colour = ui.colors.case[move.case || 0];
    const bar = ui.svg(
      "rect",
      {
        x: t * bw,
        y: move.err ? 2 : 12,
        width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5),
        height: move.err ? 18 : 8,
        fill: colour,
        opacity: t < p ? 1 : 0.35,
      },
      griddagTitle(ui, `move t = ${t}: case ${move.case ?? "n/a"}, err ${move.err ?? "n/a"}`),
    );
    return griddagOnClick(bar, () => ui.seek(t + 1));
  });
  const marker = ui.svg("line", {
    x1: p * bw,
    x2: p * bw,
    y1: 0,
    y2: 22,
    stroke: "#111",
    "stroke-width": 1.5,
    "pointer-events": "none",
  });
  return ui.el(
    "div",
    { style: { margin: "6px 0" } },
    ui.el("div", { style: { fontSize: "12px" } }, "err(t) per move (tall = error), by case:"),
    griddagStyled(
      ui.svg(
        "svg",
        { viewBox: `0 0 ${width} 22`, width, height: 22, preserveAspectRatio: "none" },
        bars,
        marker,
      ),
      "display: block; max-width: 100%",
    ),
  );
}

function griddagChart(view, p, ui) {
  const frames = view.frames;
  const caption = ui.el(
    "div",
    { style: { fontSize: "12px", marginTop: "4px" } },
    "Stale score S = c + e + n of the no-progress segment (0 after progress) and errors so far: " +
      "exploration errors in cases 1 and 4, exploitation errors in cases 2-4 (a case-4 error " +
      "counts in both).",
  );
  const chart = ui.lineChart({
    series: [
      { name: "stale score S", values: frames.map((f) => f.stale), color: "#24292f" },
      {
        name: "explore errors",
        values: frames.map((f) => f.exploration_errors),
        color: ui.colors.case[1],
      },
      {
        name: "exploit errors",
        values: frames.map((f) => f.exploitation_errors),
        color: ui.colors.case[3],
      },
    ],
    width: 540,
    height: 150,
    xLabel: "position",
    yLabel: "count",
    marker: p,
    onSeek: (x) => ui.seek(x),
  });
  return ui.el("div", {}, caption, chart);
}

function griddagDag(view, p, frame, ui) {
  const width = 540;
  const rowH = 56;
  const boxW = 92;
  const boxH = 24;
  const layers = Math.max(1, ...view.nodes.map((n) => n.layer + 1));
  const height = layers * rowH;
  const where = {};
  for (const node of view.nodes) {
    where[node.name] = {
      x: ((node.slot + 0.5) / node.layer_size) * width,
      y: node.layer * rowH + rowH / 2,
      node,
      status: griddagStatus(node, p, frame),
    };
  }
  const shown = (name) => griddagState.reveal || where[name].status !== "hidden";
  const revealedAt = (name) => {
    const at = where[name].node.discovered_at;
    return at >= 0 && at <= p;
  };
  const parts = [];
  const optionCount = {};
  for (const node of view.nodes) optionCount[node.name] = node.options.length;
  for (const [parent, child, option] of view.edges) {
    if (!where[parent] || !where[child] || !shown(parent) || !shown(child)) continue;
    // A discovered node tells its prerequisites and its children: either end reveals the edge.
    const known = revealedAt(parent) || revealedAt(child);
    if (!known && !griddagState.reveal) continue;
    const a = where[parent];
    const c = where[child];
    const alternatives = optionCount[child] > 1;
    parts.push(
      ui.svg(
        "line",
        {
          x1: a.x,
          y1: a.y + boxH / 2,
          x2: c.x,
          y2: c.y - boxH / 2,
          stroke: alternatives ? ui.colors.info : "#57606a",
          "stroke-width": 1.3,
          "stroke-dasharray": option > 0 ? "5 3" : "none",
          opacity: known ? 1 : 0.3,
          "marker-end": "url(#griddag-arrow)",
        },
        griddagTitle(
          ui,
          `${parent} → ${child}` + (alternatives ? ` (alternative ${option + 1} of ${optionCount[child]})` : ""),
        ),
      ),
    );
  }
  for (const name of Object.keys(where)) {
    if (!shown(name)) continue;
    const { x, y, node, status } = where[name];
    const fill = status === "hidden" ? "#ffffff" : griddagFill[status];
    const label = node.name.length > 12 ? `${node.name.slice(0, 11)}…` : node.name;
    const tip =
      `${node.name}${node.is_goal ? " (goal)" : ""}: ` +
      {
        achieved: `achieved at position ${node.achieved_at}`,
        pending: "pending (prerequisites met, location known)",
        discovered: "discovered, prerequisites not met",
        named: "named by a discovered node; location unknown",
        hidden: "not yet revealed to the agent",
      }[status] +
      (node.requires ? `; requires ${node.requires}` : "; no prerequisites");
    const box = ui.svg(
      "g",
      { opacity: status === "hidden" ? 0.35 : 1 },
      ui.svg("rect", {
        x: x - boxW / 2,
        y: y - boxH / 2,
        width: boxW,
        height: boxH,
        rx: 5,
        fill,
        stroke: node.is_goal ? ui.colors.ok : status === "pending" ? ui.colors.warn : "#57606a",
        "stroke-width": node.is_goal || status === "pending" ? 2.2 : 1,
        "stroke-dasharray": status === "named" || status === "hidden" ? "4 3" : "none",
      }),
      ui.svg(
        "text",
        {
          x,
          y: y + 4,
          "text-anchor": "middle",
          "font-size": 11,
          "font-family": "monospace",
          fill: "#24292f",
        },
        label,
      ),
      griddagTitle(ui, tip),
    );
    parts.push(status === "hidden" ? box : griddagOnClick(box, () => griddagSeekNode(node, p, ui)));
  }
  const defs = ui.svg(
    "defs",
    {},
    ui.svg(
      "marker",
      {
        id: "griddag-arrow",
        viewBox: "0 0 10 10",
        refX: 9,
        refY: 5,
        markerWidth: 6,
        markerHeight: 6,
        orient: "auto-start-reverse",
      },
      ui.svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#57606a" }),
    ),
  );
  if (!parts.length) {
    return ui.el("div", { class: "muted", style: { fontSize: "12px" } }, "Nothing revealed yet.");
  }
  return griddagStyled(
    ui.svg(
      "svg",
      {
        viewBox: `0 0 ${width} ${height}`,
        width,
        height,
        role: "img",
        "aria-label": "task DAG as revealed to the agent",
      },
      defs,
      parts,
    ),
    "display: block; max-width: 100%; height: auto",
  );
}

function griddagSeekNode(node, p, ui) {
  // Clicking a node goes to when it was discovered, or, from there, to when it was achieved.
  const found = node.discovered_at;
  const done = node.achieved_at;
  if (found >= 0 && found !== p) ui.seek(found);
  else if (done >= 0 && done !== p) ui.seek(done);
}

function griddagDagLegend(ui) {
  return ui.el(
    "div",
    { style: { fontSize: "11px", lineHeight: "18px", margin: "4px 0" } },
    griddagSwatch(ui, griddagFill.achieved, "#57606a", "achieved"),
    griddagSwatch(ui, griddagFill.pending, ui.colors.warn, "pending P(t)"),
    griddagSwatch(ui, griddagFill.discovered, "#57606a", "discovered, waiting"),
    griddagSwatch(ui, griddagFill.named, "#57606a", "named only", true),
    griddagSwatch(ui, "#ffffff", ui.colors.ok, "goal"),
    " rows: prerequisite depth · dashed/blue edges: OR alternatives",
  );
}
