// eeb play controls: the maze as the agent knows it (fog included) with its 12 actions, sent as
// "Action: N" (maze.py ACTION_LABELS), and the match-2 board, whose cells send App. B.1's JSON
// ({"action": {"type": "eliminate", "pos": [i, j]}}, props by type, row/col by index).

const eebPlayMoves = [
  ["UP", "ArrowUp"],
  ["DOWN", "ArrowDown"],
  ["LEFT", "ArrowLeft"],
  ["RIGHT", "ArrowRight"],
];
const eebPlayGlyphs = {
  "#": ["#24292f", "wall"],
  ".": ["#f6f8fa", "empty"],
  "?": ["#afb8c1", "unexplored"],
  C: ["#fff8c5", "coin"],
  M: ["#ffebe9", "monster"],
  G: ["#dafbe1", "goal"],
  A: ["#ddf4ff", "you"],
  T: ["#fbefff", "shovel"],
  W: ["#fbefff", "sword"],
  N: ["#fbefff", "magnet"],
  K: ["#fbefff", "key"],
};
const eebPlayColours = { A: "#cf222e", B: "#0969da", C: "#1a7f37", D: "#bf8700" };
// Choices that outlive one render (the controls are rebuilt after every step).
const eebPlayChoice = { tool: "eliminate", handler: null };

const EEB_MAZE_TUTORIAL =
  "Reach the goal G. You see the cells around you; the rest is fog (?) until you explore it. " +
  "Each action moves 1, 2 or 3 cells in a direction (the buttons, or the arrow keys for one " +
  "cell) and costs a step. Coins add to your score, monsters cost a life, walls stop you; the " +
  "score also counts the cells you explore.";
const EEB_MATCH2_TUTORIAL =
  "Clear the target tiles of each colour within the step budget. Click a tile to eliminate its " +
  "group of two or more touching tiles of one colour; props (row, column, bomb, hammer) clear " +
  "other shapes at the cost the board lists. Tiles above fall down and new ones drop in.";

export function renderPlay(root, state, ui, send) {
  const data = (state.observation && state.observation.data) || {};
  if (eebPlayChoice.handler) document.removeEventListener("keydown", eebPlayChoice.handler);
  eebPlayChoice.handler = null;
  const maze = Array.isArray(data.map);
  root.append(
    ui.el(
      "details",
      { open: state.step === 0 || undefined },
      ui.el("summary", null, "How to play (tutorial)"),
      ui.el("p", null, maze ? EEB_MAZE_TUTORIAL : EEB_MATCH2_TUTORIAL),
    ),
  );
  if (maze) eebPlayMaze(root, state, data, ui, send);
  else if (Array.isArray(data.board)) eebPlayMatch2(root, state, data, ui, send);
  else root.append(ui.el("p", { class: "muted" }, "No board in this observation: type the action below."));
}

// The action number of moving `n` cells in direction index `d` (maze.py: 3d + n - 1).
function eebPlayAction(d, n) {
  return 3 * d + n - 1;
}

function eebPlayMaze(root, state, data, ui, send) {
  const el = ui.el;
  const size = 30;
  const rows = data.map;
  const width = (rows[0] || "").length * size;
  const height = rows.length * size;
  const cells = [];
  rows.forEach((row, r) => {
    [...row].forEach((glyph, c) => {
      const [fill, name] = eebPlayGlyphs[glyph] || ["#ffffff", glyph];
      cells.push(
        ui.svg(
          "rect",
          { x: c * size + 1, y: r * size + 1, width: size - 2, height: size - 2, rx: 3, fill, stroke: "#d0d7de" },
          ui.svg("title", null, `(${r},${c}) ${name}`),
        ),
      );
      if (!"#.?".includes(glyph)) {
        cells.push(
          ui.svg(
            "text",
            { x: c * size + size / 2, y: r * size + size / 2 + 5, "text-anchor": "middle", "font-size": 14, "font-weight": 600, fill: "#24292f" },
            glyph,
          ),
        );
      }
    });
  });
  const items = data.items || {};
  const held = Object.entries(items)
    .filter(([, v]) => v)
    .map(([k, v]) => (typeof v === "number" ? `${k} (${v})` : k));
  const buttons = eebPlayMoves.map(([name], d) =>
    el(
      "div",
      { style: { display: "flex", gap: ".3rem", alignItems: "center" } },
      [1, 2, 3].map((n) => {
        const action = eebPlayAction(d, n);
        return el(
          "button",
          {
            class: n === 1 ? "primary" : "",
            "data-action": action,
            disabled: state.done || undefined,
            onclick: () => send(`Action: ${action}`),
          },
          `${action}: Move ${name} ${n} step${n > 1 ? "s" : ""}`,
        );
      }),
    ),
  );
  root.append(
    el(
      "div",
      { style: { display: "flex", gap: "1.5rem", flexWrap: "wrap", alignItems: "flex-start" } },
      el(
        "div",
        null,
        ui.svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "eeb-play-maze", role: "img" }, cells),
        el("p", { class: "small muted" }, "A you · G goal · C coin · M monster · # wall · ? unexplored · T W N K items"),
      ),
      el(
        "div",
        null,
        el(
          "p",
          null,
          el("strong", null, `Level ${data.level} · step ${data.steps} of ${data.max_steps}`),
          ` · lives ${data.lives} · score ${data.score} · coins ${data.coins_collected} of ${data.coins_total}`,
          ` · explored ${data.explored} of ${data.cells}`,
        ),
        held.length ? el("p", null, `Holding: ${held.join(", ")}`) : null,
        state.done ? null : el("div", { class: "eeb-play-actions", style: { display: "grid", gap: ".3rem" } }, buttons),
        state.done ? null : el("p", { class: "small muted" }, "Arrow keys move one step."),
      ),
    ),
  );
  if (state.done) return;
  const byKey = Object.fromEntries(eebPlayMoves.map(([, key], d) => [key, eebPlayAction(d, 1)]));
  const handler = (event) => {
    if (!root.isConnected) {
      document.removeEventListener("keydown", handler);
      return;
    }
    const target = event.target;
    if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
    const action = byKey[event.key];
    if (action === undefined || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    send(`Action: ${action}`);
  };
  eebPlayChoice.handler = handler;
  document.addEventListener("keydown", handler);
}

function eebPlayMatch2(root, state, data, ui, send) {
  const el = ui.el;
  const inventory = data.props_enabled ? data.inventory || {} : {};
  const tools = ["eliminate", ...Object.keys(inventory)];
  if (!tools.includes(eebPlayChoice.tool)) eebPlayChoice.tool = "eliminate";
  const tool = eebPlayChoice.tool;
  const rerender = () => {
    root.replaceChildren();
    renderPlay(root, state, ui, send);
  };
  const actionAt = (i, j) => {
    if (tool === "row") return { type: "row", index: i };
    if (tool === "col") return { type: "col", index: j };
    return { type: tool, pos: [i, j] };
  };
  const size = 36;
  const board = el(
    "div",
    { class: "eeb-play-board", style: { display: "grid", gridTemplateColumns: `2rem repeat(${data.board[0].length}, ${size}px)`, gap: "2px" } },
    el("span"),
    [...data.board[0]].map((_, j) => el("span", { class: "small muted", style: { textAlign: "center" } }, String(j))),
    data.board.map((row, i) => [
      el("span", { class: "small muted", style: { alignSelf: "center" } }, String(i)),
      [...row].map((colour, j) =>
        el(
          "button",
          {
            "data-cell": `${i},${j}`,
            title: `[${i}, ${j}] ${colour}`,
            disabled: state.done || undefined,
            style: { width: `${size}px`, height: `${size}px`, padding: 0, background: eebPlayColours[colour] || "#ffffff", color: "white", fontWeight: 600, border: "1px solid #ffffff" },
            onclick: () => send(JSON.stringify({ action: actionAt(i, j) })),
          },
          colour,
        ),
      ),
    ]),
  );
  const toolButtons = tools.map((name) =>
    el(
      "button",
      {
        class: name === tool ? "primary" : "",
        disabled: (name !== "eliminate" && !inventory[name]) || undefined,
        onclick: () => {
          eebPlayChoice.tool = name;
          rerender();
        },
      },
      name === "eliminate" ? "eliminate" : `${name} ×${inventory[name]} (−${(data.prop_costs || {})[name]})`,
    ),
  );
  const targets = data.targets || {};
  const cleared = data.cleared || {};
  root.append(
    el(
      "div",
      { style: { display: "flex", gap: "1.5rem", flexWrap: "wrap", alignItems: "flex-start" } },
      board,
      el(
        "div",
        null,
        el("p", null, el("strong", null, `Score ${data.score}`), ` · steps remaining ${data.steps_remaining} of ${data.max_steps}`),
        ui.table(
          ["colour", "cleared", "target"],
          Object.keys(targets).map((c) => [el("span", { style: { color: eebPlayColours[c] || "inherit", fontWeight: 600 } }, c), cleared[c] ?? 0, targets[c]]),
        ),
        state.done ? null : el("p", null, "Click a tile to ", tool === "row" ? "clear its row" : tool === "col" ? "clear its column" : tool === "eliminate" ? "eliminate its group" : `use the ${tool} on it`, "."),
        state.done || tools.length < 2 ? null : el("div", { class: "controls" }, toolButtons),
      ),
    ),
  );
}
