// A person's controls for a MUTATE scenario (App. C.1, Figure 5): tutorial, main (scene and
// actions), bag and context views, and the four-attempt protocol with its forbidden finishes.
// Built only with ui.el: every scenario and player string becomes a text node.

const ESCAPE_ATTEMPTS = 4;
const ESCAPE_KINDS = ["click", "apply", "craft", "input", "move"];
const ESCAPE_SIGNATURES = {
  click: "click(item)",
  apply: "apply(tool, item)",
  craft: "craft(tool, tool)",
  input: "input(text, item)",
  move: "move(scene)",
};
const ESCAPE_TUTORIAL = [
  "Escape the room: reach the objective shown below by acting on the scene one step at a time.",
  "Actions: click(item) examines an item or picks up a tool; apply(tool, item) uses a tool from " +
    "your bag on an item; craft(tool, tool) combines two bag tools; input(text, item) types a " +
    "code or word into an item; move(scene) walks to a neighbouring scene.",
  "Use the buttons and the action builder, or write one in the free-text box. The reason " +
    "field is optional and is recorded as your Thought for the step.",
  "A scenario is played four times (attempts). A solution found in one attempt is forbidden in " +
    "the later ones: its finishing action is listed in red and refused, so look for another way.",
  "An attempt ends at GAME END!, after its step budget, or after too many actions that change " +
    "nothing. CHECKPOINT! marks the end of a first phase.",
];

export function renderPlay(root, state, ui, send) {
  const view = escapePlayState(state);
  const data = view.data;
  const box = ui.el("div", { class: "escape-play" });
  ui.add(box, escapeTutorial(ui, view));
  ui.add(box, escapeHeader(ui, view));
  if (view.ended) ui.add(box, escapeAttemptEnded(ui, view));
  if (view.response) ui.add(box, escapeResponse(ui, view.response));
  if (view.done) {
    ui.add(box, escapeSection(ui, "Scenario over", ui.el("p", null, "All attempts are played; your episode is recorded.")));
    ui.add(root, box);
    return;
  }
  if (data.forbidden && data.forbidden.length) ui.add(box, escapeForbidden(ui, data.forbidden));
  const controls = escapeControls(ui, data, send, view.waiting);
  ui.add(
    box,
    ui.el(
      "div",
      { style: { display: "flex", flexWrap: "wrap", gap: "1rem", alignItems: "flex-start" } },
      ui.el(
        "div",
        { style: { flex: "1 1 28rem", minWidth: "0" } },
        escapeSceneView(ui, data, controls),
        controls.panel,
      ),
      ui.el(
        "div",
        { style: { flex: "1 1 20rem", minWidth: "0" } },
        escapeBagView(ui, data),
        escapeContextView(ui, data),
      ),
    ),
  );
  ui.add(root, box);
}

// The play state (web/play.py): the observation an agent reads now (its data filtered to what
// the text shows), every step's feedback, and whether the episode waits for this person.
function escapePlayState(state) {
  const s = state || {};
  const observation = s.observation || {};
  const data = observation.data || {};
  const steps = s.history || [];
  const last = steps.length ? steps[steps.length - 1] : null;
  // The first view of a later attempt: the step before ended the previous attempt, and its
  // feedback is that attempt's last view (EscapeBenchmark.step_hook).
  const ended = !s.done && !data.last && Number(data.attempt) > 0 && Number(data.step) === 1 && last;
  return {
    data,
    response: data.last && data.last.response !== undefined ? String(data.last.response) : "",
    ended: ended ? String(last.feedback ?? "") : null,
    done: Boolean(s.done),
    waiting: s.waiting !== false,
    attempts: ESCAPE_ATTEMPTS,
    scenario: data.scenario || s.instance || "",
  };
}

function escapeSection(ui, title, ...children) {
  return ui.el(
    "section",
    { class: "escape-section", style: { margin: ".5rem 0" } },
    ui.el("h3", null, title),
    ...children,
  );
}

function escapeTutorial(ui, view) {
  const first = !view.done && Number(view.data.step) === 1 && !view.data.attempt;
  return ui.el(
    "details",
    { class: "escape-tutorial", open: first },
    ui.el("summary", null, "How to play (tutorial)"),
    ESCAPE_TUTORIAL.map((line) => ui.el("p", { class: "small" }, line)),
  );
}

function escapeHeader(ui, view) {
  const data = view.data;
  const attempt = typeof data.attempt === "number" ? data.attempt + 1 : null;
  const step = data.step === undefined ? null : String(data.step);
  return ui.el(
    "div",
    { class: "escape-header", style: { margin: ".4rem 0" } },
    ui.el(
      "div",
      { class: "chips" },
      view.scenario ? ui.badge(`scenario ${view.scenario}`, "muted") : null,
      attempt === null ? null : ui.badge(`attempt ${attempt} of ${view.attempts}`, "info"),
      step === null || view.done ? null : ui.badge(`step ${step}`, "muted"),
    ),
    data.objective
      ? ui.el("p", { class: "escape-objective" }, ui.el("b", null, "Objective: "), String(data.objective))
      : null,
  );
}

function escapeAttemptEnded(ui, view) {
  const previous = Number(view.data.attempt);
  return ui.el(
    "div",
    { class: "escape-attempt-ended", style: { border: "1px solid #d4a72c", background: "#fff8c5", borderRadius: "6px", padding: ".4rem .6rem", margin: ".4rem 0" } },
    ui.el("b", null, `Attempt ${previous} of ${view.attempts} is over. `),
    `Attempt ${previous + 1} starts again from the beginning of the scenario.`,
    escapeLastResponse(view.ended) ? ui.textBlock(escapeLastResponse(view.ended)) : null,
    ui.el("details", null, ui.el("summary", null, `How attempt ${previous} ended`), ui.textBlock(view.ended)),
  );
}

// The response to the step that ended an attempt, read from that attempt's last view: the last
// entry of its "Recent history" block (observation.render_history); "" if the text has none.
function escapeLastResponse(text) {
  const head = String(text || "").split("\nYOUR OBJECTIVE:")[0];
  const at = head.lastIndexOf("\n[Step ");
  const block = at >= 0 ? head.slice(at + 1) : head.startsWith("Recent history:\n[Step ") ? head.slice(16) : "";
  const lines = block.split("\n");
  const action = lines.findIndex((line) => line.startsWith("Action: "));
  if (action < 0) return "";
  return [`${lines[action]}`, ...lines.slice(action + 1)].join("\n").trim();
}

function escapeResponse(ui, response) {
  return ui.el(
    "div",
    { class: "escape-response", style: { border: "1px solid #54aeff", background: "#ddf4ff", borderRadius: "6px", padding: ".4rem .6rem", margin: ".4rem 0" } },
    ui.el("div", { class: "label" }, "Response"),
    ui.textBlock(response),
  );
}

function escapeForbidden(ui, forbidden) {
  return ui.el(
    "div",
    { class: "escape-forbidden error-box", style: { margin: ".4rem 0" } },
    ui.el("b", null, "Forbidden in this attempt (solutions found before): "),
    ui.el("ul", null, forbidden.map((action) => ui.el("li", { class: "mono" }, String(action)))),
    ui.el("span", { class: "small" }, "Ending the game with one of them is refused; find another way."),
  );
}

// The main view: where the player is, what is there, and one-click actions on it.
function escapeSceneView(ui, data, controls) {
  const items = (data.items || []).map(String);
  const tools = (data.scene_tools || []).map(String);
  const moves = data.moves || [];
  const button = (action, label) =>
    controls.button({ class: "escape-quick mono", title: action, "data-action": action }, label || action, action);
  return escapeSection(
    ui,
    `Scene: ${data.scene ?? ""}`,
    ui.textBlock(data.scene_description ?? ""),
    items.length
      ? ui.el("div", { class: "controls" }, ui.el("span", { class: "label" }, "Items"), items.map((item) => button(`click(${item})`)))
      : null,
    tools.length
      ? ui.el("div", { class: "controls" }, ui.el("span", { class: "label" }, "Tools here"), tools.map((tool) => button(`click(${tool})`)))
      : null,
    moves.length
      ? ui.el(
          "div",
          { class: "controls" },
          ui.el("span", { class: "label" }, "Ways out"),
          moves.map((move) => button(`move(${move.scene})`, `${move.label} → ${move.scene}`)),
        )
      : null,
  );
}

function escapeBagView(ui, data) {
  const bag = data.bag || [];
  return escapeSection(
    ui,
    "Bag",
    bag.length
      ? ui.el(
          "ul",
          { class: "escape-bag" },
          bag.map((tool) => ui.el("li", null, ui.el("b", null, String(tool.name)), tool.desc ? `: ${tool.desc}` : "")),
        )
      : ui.el("p", { class: "muted escape-bag" }, "(empty)"),
  );
}

function escapeContextView(ui, data) {
  const history = data.history || [];
  return escapeSection(
    ui,
    "Context (recent history)",
    history.length
      ? ui.el(
          "ol",
          { class: "escape-history", style: { paddingLeft: "1.2rem" } },
          history.map((h) =>
            ui.el(
              "li",
              { value: h.step, style: { margin: ".2rem 0" } },
              ui.el("span", { class: "mono" }, String(h.action)),
              ui.el("div", { class: "small", style: { whiteSpace: "pre-wrap" } }, String(h.response ?? "")),
            ),
          ),
        )
      : ui.el("p", { class: "muted escape-history" }, "(none yet)"),
  );
}

// The action builder, free-text box and reason field; every button that acts goes through
// `act`, which sends the action with the reason and locks the controls while it is on its way.
function escapeControls(ui, data, send, waiting) {
  const buttons = [];
  const status = ui.el("div", { class: "small escape-status", role: "status" });
  const reason = ui.el("textarea", {
    class: "escape-reason",
    rows: 2,
    placeholder: "Reason (optional, recorded as your Thought)",
    disabled: !waiting,
    style: { width: "100%", boxSizing: "border-box" },
  });
  const act = (action) => {
    if (!waiting) return;
    const text = String(action || "").trim();
    if (!text) {
      status.textContent = "Type or build an action first.";
      return;
    }
    for (const b of buttons) b.disabled = true;
    status.textContent = `Sending ${text} …`;
    const thought = String(reason.value || "").trim();
    Promise.resolve(send(text, thought || undefined)).catch((err) => {
      for (const b of buttons) b.disabled = false;
      status.textContent = `Not sent: ${err && err.message ? err.message : err}`;
    });
  };
  const button = (attrs, label, action) => {
    const onclick = () => act(typeof action === "function" ? action() : action);
    const node = ui.el("button", { ...attrs, onclick, disabled: !waiting }, label);
    buttons.push(node);
    return node;
  };

  const names = {
    items: (data.items || []).map(String),
    tools: (data.scene_tools || []).map(String),
    bag: (data.bag || []).map((t) => String(t.name)),
    scenes: (data.valid_scene_names || []).map(String),
  };
  const kind = ui.el(
    "select",
    { class: "escape-kind", "aria-label": "action", onchange: () => build() },
    ESCAPE_KINDS.map((k) => ui.el("option", { value: k }, ESCAPE_SIGNATURES[k])),
  );
  const args = ui.el("span", { class: "escape-args", style: { display: "contents" } });
  const preview = ui.el("code", { class: "escape-preview mono" });
  let current = () => "";
  const pick = (label, options) =>
    ui.el(
      "select",
      { class: `escape-arg escape-arg-${label}`, "aria-label": label, onchange: () => refresh() },
      options.length ? options.map((o) => ui.el("option", { value: o }, o)) : ui.el("option", { value: "" }, `(no ${label})`),
    );
  const refresh = () => {
    preview.textContent = current();
  };
  const build = () => {
    args.replaceChildren();
    const k = kind.value;
    if (k === "click") {
      const item = pick("item", [...names.items, ...names.tools]);
      ui.add(args, item);
      current = () => (item.value ? `click(${item.value})` : "");
    } else if (k === "apply") {
      const tool = pick("tool", names.bag);
      const item = pick("item", [...names.items, ...names.tools]);
      ui.add(args, tool, item);
      current = () => (tool.value && item.value ? `apply(${tool.value}, ${item.value})` : "");
    } else if (k === "craft") {
      const a = pick("tool", names.bag);
      const b = pick("ingredient", names.bag);
      if (names.bag.length > 1) b.value = names.bag[1];
      ui.add(args, a, b);
      // Crafting takes two different tools.
      current = () => (a.value && b.value && a.value !== b.value ? `craft(${a.value}, ${b.value})` : "");
    } else if (k === "input") {
      const text = ui.el("input", {
        class: "escape-input-text",
        type: "text",
        placeholder: "text or code",
        "aria-label": "text",
        disabled: !waiting,
        oninput: () => refresh(),
        onkeydown: (event) => {
          if (event.key === "Enter" && !event.isComposing) {
            event.preventDefault();
            act(current());
          }
        },
      });
      const item = pick("item", names.items);
      ui.add(args, text, item);
      current = () => (text.value.trim() && item.value ? `input(${text.value.trim()}, ${item.value})` : "");
    } else {
      const scene = pick("scene", names.scenes);
      ui.add(args, scene);
      current = () => (scene.value ? `move(${scene.value})` : "");
    }
    refresh();
  };
  build();

  const free = ui.el("input", {
    class: "escape-free mono",
    type: "text",
    placeholder: "or write an action, e.g. apply(hammer, window)",
    "aria-label": "free-text action",
    disabled: !waiting,
    style: { flex: "1", minWidth: "16rem" },
    onkeydown: (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        act(free.value);
      }
    },
  });
  const panel = escapeSection(
    ui,
    "Your action",
    ui.el(
      "div",
      { class: "controls" },
      kind,
      args,
      button({ class: "primary escape-send-built" }, "Do it", () => current()),
      preview,
    ),
    ui.el("div", { class: "controls" }, free, button({ class: "escape-send-free" }, "Send", () => free.value)),
    reason,
    status,
  );
  return { panel, button };
}
