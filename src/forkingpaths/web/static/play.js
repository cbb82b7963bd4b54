// The study's play page: start or resume an assigned instance, the observation exactly as an
// agent reads it, the steps so far, the result once done, and the benchmark's own controls
// (views/<benchmark>-play.js, `renderPlay(root, state, ui, send)`).

const playModules = new Map();

// A benchmark's controls module, or null when it has none (the typed action box remains).
async function loadPlayModule(benchmark) {
  const url = `views/${encodeURIComponent(benchmark)}-play.js`;
  if (!playModules.has(url)) {
    playModules.set(
      url,
      import(new URL(url, document.baseURI).href).catch(() => null),
    );
  }
  return playModules.get(url);
}

export async function playPage(content, params, ctx) {
  const ui = ctx.ui;
  const el = ui.el;
  const add = ui.add;
  const benchmark = String(params.benchmark || "");
  const instance = String(params.instance || "");
  add(content, el("h1", null, `Play ${benchmark} · ${instance}`));
  const status = el("div", { class: "controls" });
  const message = el("p", { class: "error", role: "alert" });
  const controls = el("div", { class: "play-controls" });
  const typed = el("div");
  const observation = el("div");
  const result = el("div");
  const history = el("div");
  add(
    content,
    status,
    message,
    result,
    controls,
    typed,
    el("h2", null, "What you see (exactly what an agent reads)"),
    observation,
    history,
  );
  const module = await loadPlayModule(benchmark);
  const page = { state: null, busy: false };
  const thoughtBox = el("textarea", {
    rows: 2,
    placeholder: "optional: why this action (recorded as your thought)",
    style: { width: "100%", maxWidth: "40rem" },
  });

  const send = async (action, thought) => {
    if (page.busy || !page.state || page.state.done) return page.state;
    page.busy = true;
    message.textContent = "";
    draw();
    try {
      const given = thought === undefined || thought === null ? thoughtBox.value : thought;
      const next = await ctx.api("POST", "play/act", {
        session: page.state.session,
        action: String(action),
        thought: String(given || ""),
      });
      thoughtBox.value = "";
      page.state = next;
    } catch (err) {
      message.textContent = String(err.message || err);
    } finally {
      page.busy = false;
      draw();
    }
    return page.state;
  };

  function draw() {
    const state = page.state;
    if (!state) return;
    status.replaceChildren(
      state.done
        ? ui.badge("episode over", "ok")
        : state.status === "error"
          ? ui.badge("error", "bad")
          : page.busy
            ? ui.badge("the environment is answering…", "warn")
            : ui.badge("your move", "info"),
      el("span", { class: "muted" }, `step ${state.step} · trial ${state.trial}`),
    );
    if (state.error) message.textContent = state.error;
    result.replaceChildren(...(state.done ? [doneBlock(state, ui)] : []));
    controls.replaceChildren();
    if (module && typeof module.renderPlay === "function") {
      try {
        module.renderPlay(controls, state, ui, send);
      } catch (err) {
        ui.add(controls, el("p", { class: "error" }, `controls failed: ${err.message || err}`));
      }
    }
    typed.replaceChildren(...(state.done ? [] : [typedAction(state, ui, send, thoughtBox, !module, page.busy)]));
    observation.replaceChildren(ui.textBlock(state.observation ? state.observation.text : ""));
    history.replaceChildren(historyBlock(state, ui));
  }

  try {
    page.state = await ctx.api("POST", "play/start", { benchmark, instance });
  } catch (err) {
    message.textContent = String(err.message || err);
    return;
  }
  draw();
}

// The agent's own channel: the action as text, exactly as a model would reply.
function typedAction(state, ui, send, thoughtBox, open, busy) {
  const el = ui.el;
  const input = el("textarea", {
    rows: 2,
    placeholder: "type the action exactly as an agent would reply",
    style: { width: "100%", maxWidth: "40rem" },
  });
  const submit = async (event) => {
    event.preventDefault();
    const action = input.value;
    if (!action.trim()) return;
    await send(action);
  };
  const form = el(
    "form",
    { class: "study-form", onsubmit: submit },
    el("label", null, el("span", null, "action"), input),
    el("label", null, el("span", null, "thought (optional)"), thoughtBox),
    el("button", { class: "primary", type: "submit", disabled: busy || !state.waiting }, "Send"),
  );
  return el("details", { open: open || undefined }, el("summary", null, "Type an action"), form);
}

function doneBlock(state, ui) {
  const el = ui.el;
  const metrics = state.metrics || {};
  const rows = Object.entries(metrics).map(([key, value]) => [key, ui.formatNumber(value)]);
  return el(
    "section",
    null,
    el("h2", null, "Episode over"),
    el("p", { class: "muted" }, "Your episode is recorded and scored like an agent's."),
    rows.length ? ui.table(["metric", "value"], rows) : el("p", { class: "muted" }, "No metrics."),
    el("p", null, el("a", { href: "#/queue" }, "back to my queue")),
  );
}

function historyBlock(state, ui) {
  const el = ui.el;
  const steps = state.history || [];
  if (!steps.length) return el("p", { class: "muted" }, "No step yet.");
  return el(
    "section",
    null,
    el("h2", null, `Your steps (${steps.length})`),
    el(
      "div",
      { class: "scroll-box" },
      ui.table(
        ["#", "action", "", "what came back"],
        steps
          .map((s, i) => [
            i + 1,
            el("span", { class: "mono" }, s.action),
            s.valid ? "" : ui.badge("invalid", "bad"),
            el(
              "details",
              null,
              el("summary", null, feedbackLine(s.feedback)),
              ui.textBlock(s.feedback, { limit: 4000 }),
            ),
          ])
          .reverse(),
      ),
    ),
  );
}

// One line of what a step answered: the line an env writes about the last step where it has
// one (eeb's "Last step:", "Last action:"; the rest repeats the board), else the first line.
function feedbackLine(text) {
  const lines = String(text || "").split("\n");
  const line = lines.find((l) => /^Last (step|action):/.test(l)) || lines[0];
  return line.length > 140 ? `${line.slice(0, 139)}…` : line || "(nothing)";
}
