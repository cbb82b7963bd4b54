// griddag play controls: the grid as the agent knows it (the cells it stood on, the open
// directions it was told there, the states it found) and moves by arrow keys or buttons; each
// move sends the bare direction word the env parses ("up", "down", "left", "right").

const griddagPlayDirections = [
  ["up", "ArrowUp", "↑"],
  ["left", "ArrowLeft", "←"],
  ["right", "ArrowRight", "→"],
  ["down", "ArrowDown", "↓"],
];
const griddagPlayStep = { up: [0, 1], down: [0, -1], left: [-1, 0], right: [1, 0] };
const griddagPlayFill = {
  unknown: "#d0d7de",
  open: "#ddf4ff",
  visited: "#f6f8fa",
  discovered: "#fff8c5",
  achieved: "#dafbe1",
};
// The one key listener of the page: replaced at every render, dropped once the page is gone.
const griddagPlayKeys = { handler: null };

const GRIDDAG_TUTORIAL =
  "You stand in a grid you cannot see. Each move (up, down, left, right: the arrow keys or the " +
  "buttons) spends one step and tells you what is where you arrive. Some cells hold states; a " +
  "state activates once the states it requires are active. Find the goal state and activate " +
  "it in as few steps as you can: explore where you must, go straight where you know the way.";

export function renderPlay(root, state, ui, send) {
  const data = (state.observation && state.observation.data) || {};
  const known = griddagKnown(state.trail || [], data);
  root.append(
    ui.el("details", { open: state.step === 0 || undefined }, ui.el("summary", null, "How to play (tutorial)"), ui.el("p", null, GRIDDAG_TUTORIAL)),
    ui.el(
      "div",
      { style: { display: "flex", gap: "1.5rem", flexWrap: "wrap", alignItems: "flex-start" } },
      griddagPlayGrid(known, data, ui),
      ui.el("div", null, griddagPlayHere(data, ui), state.done ? null : griddagPlayPad(data, ui, send)),
    ),
    griddagPlayStates(known, ui),
  );
  griddagPlayListen(root, state, send);
}

// What the observations so far told: visited cells, open neighbours, states by cell.
function griddagKnown(trail, data) {
  const key = (x, y) => `${x},${y}`;
  const cells = new Map();
  const states = new Map();
  const entries = trail.length ? trail : [data];
  for (const obs of entries) {
    if (!Array.isArray(obs.position)) continue;
    const [x, y] = obs.position;
    cells.set(key(x, y), { x, y, kind: "visited" });
    for (const dir of obs.available || []) {
      const [dx, dy] = griddagPlayStep[dir] || [0, 0];
      const k = key(x + dx, y + dy);
      if (!cells.has(k)) cells.set(k, { x: x + dx, y: y + dy, kind: "open" });
    }
    if (obs.node && obs.node.name) states.set(key(x, y), { ...obs.node, x, y });
  }
  return { cells, states, key };
}

function griddagPlayGrid(known, data, ui) {
  const all = [...known.cells.values()];
  if (!all.length) return ui.el("p", { class: "muted" }, "Nothing seen yet.");
  const xs = all.map((c) => c.x);
  const ys = all.map((c) => c.y);
  const [x0, x1, y0, y1] = [Math.min(...xs) - 1, Math.max(...xs) + 1, Math.min(...ys) - 1, Math.max(...ys) + 1];
  const size = 40;
  const width = (x1 - x0 + 1) * size;
  const height = (y1 - y0 + 1) * size;
  const shapes = [];
  for (let y = y1; y >= y0; y--) {
    for (let x = x0; x <= x1; x++) {
      const cell = known.cells.get(known.key(x, y));
      const node = known.states.get(known.key(x, y));
      const px = (x - x0) * size;
      const py = (y1 - y) * size; // y grows upwards ("up" is y + 1)
      const fill = node ? griddagPlayFill[node.status] || griddagPlayFill.visited : griddagPlayFill[cell ? cell.kind : "unknown"];
      shapes.push(
        ui.svg(
          "rect",
          { x: px + 1, y: py + 1, width: size - 2, height: size - 2, rx: 3, fill, stroke: "#afb8c1" },
          ui.svg("title", null, `[${x}, ${y}]${node ? ` ${node.name} (${node.status})` : cell ? ` ${cell.kind}` : " not seen"}`),
        ),
      );
      if (node) {
        shapes.push(
          ui.svg(
            "text",
            { x: px + size / 2, y: py + size / 2 + 4, "text-anchor": "middle", "font-size": 10, fill: "#24292f" },
            node.is_goal ? `★${node.name}` : node.name,
          ),
        );
      }
    }
  }
  if (Array.isArray(data.position)) {
    const [x, y] = data.position;
    shapes.push(
      ui.svg("rect", {
        x: (x - x0) * size + 2.5,
        y: (y1 - y) * size + 2.5,
        width: size - 5,
        height: size - 5,
        rx: 4,
        fill: "none",
        stroke: "#0969da",
        "stroke-width": 4,
      }),
    );
  }
  return ui.el(
    "div",
    null,
    ui.svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "griddag-play-grid", role: "img" }, shapes),
    ui.el(
      "p",
      { class: "small muted", style: { maxWidth: "22rem" } },
      "blue frame: you · white: visited · light blue: open, not visited · yellow: state found, not activated · green: activated · grey: not seen",
    ),
  );
}

function griddagPlayHere(data, ui) {
  const el = ui.el;
  const pos = Array.isArray(data.position) ? `[${data.position[0]}, ${data.position[1]}]` : "?";
  const node = data.node;
  return el(
    "div",
    null,
    el("p", null, el("strong", null, `You are at ${pos}`), ` · ${data.steps ?? 0} steps spent`),
    node
      ? el(
          "p",
          null,
          `State ${node.name} (${node.status})`,
          node.options && node.options.length
            ? ` requires ${node.options.map((o) => o.join(" and ")).join(", or ")}`
            : " has no prerequisites",
          node.children && node.children.length ? `; ancestors: ${node.children.join(", ")}` : "",
          node.is_goal ? " · the goal state" : "",
        )
      : el("p", { class: "muted" }, "Nothing here."),
    el("p", null, `Available directions: ${(data.available || []).join(", ") || "none"}`),
  );
}

function griddagPlayPad(data, ui, send) {
  const open = new Set(data.available || []);
  const button = ([dir, , arrow]) =>
    ui.el(
      "button",
      {
        class: open.has(dir) ? "primary" : "",
        title: open.has(dir) ? `move ${dir}` : `${dir} is blocked here: trying it still costs a step`,
        "data-direction": dir,
        style: { minWidth: "5.5rem" },
        onclick: () => send(dir),
      },
      `${arrow} ${dir}`,
    );
  const [up, left, right, down] = griddagPlayDirections;
  return ui.el(
    "div",
    { class: "griddag-pad", style: { display: "grid", gridTemplateColumns: "repeat(3, auto)", gap: ".3rem", justifyContent: "start" } },
    ui.el("span"),
    button(up),
    ui.el("span"),
    button(left),
    ui.el("span"),
    button(right),
    ui.el("span"),
    button(down),
    ui.el("span"),
    ui.el("p", { class: "small muted", style: { gridColumn: "1 / 4" } }, "or use the arrow keys"),
  );
}

function griddagPlayStates(known, ui) {
  const states = [...known.states.values()];
  if (!states.length) return ui.el("p", { class: "muted" }, "No state found yet.");
  return ui.table(
    ["state", "at", "status", "requires", "ancestors"],
    states.map((n) => [
      n.is_goal ? `${n.name} (goal)` : n.name,
      `[${n.x}, ${n.y}]`,
      ui.badge(n.status, n.status === "achieved" ? "ok" : "warn"),
      n.options && n.options.length ? n.options.map((o) => o.join(" and ")).join(", or ") : "nothing",
      (n.children || []).join(", "),
    ]),
  );
}

function griddagPlayListen(root, state, send) {
  if (griddagPlayKeys.handler) document.removeEventListener("keydown", griddagPlayKeys.handler);
  griddagPlayKeys.handler = null;
  if (state.done) return;
  const byKey = Object.fromEntries(griddagPlayDirections.map(([dir, key]) => [key, dir]));
  const handler = (event) => {
    if (!root.isConnected) {
      document.removeEventListener("keydown", handler);
      return;
    }
    const target = event.target;
    if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    const dir = byKey[event.key];
    if (!dir || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    send(dir);
  };
  griddagPlayKeys.handler = handler;
  document.addEventListener("keydown", handler);
}
