// Annotation pages of the study: Metric 2 ratings of judged escape steps (blind to the judge) and
// yes/no validity of built CreativeBench instances. Every text shown is a text node (ctx.ui.el).

export const ANNOTATION_KINDS = {
  metric2: "Rate judged steps (Metric 2)",
  validity: "Check built instances",
};

const MISSING = {
  valid: "Choose yes or no.",
  reason: "Write a reason: say why the instance is not valid.",
};

// The history line the judge reads: "[Step n] action -> response".
export function historyLine(entry) {
  return `[Step ${entry.step}] ${entry.action} -> ${entry.response}`;
}

// The rating a form holds, or the name of what is missing.
export function readRating(kind, values) {
  if (kind === "metric2") {
    const out = {};
    for (const criterion of ["originality", "elaboration", "groundedness"]) {
      const score = Number(values[criterion]);
      if (!Number.isInteger(score) || score < 1 || score > 5) return { missing: criterion };
      out[criterion] = score;
    }
    return { value: out };
  }
  if (values.valid !== "yes" && values.valid !== "no") return { missing: "valid" };
  const reason = String(values.reason || "").trim();
  if (values.valid === "no" && !reason) return { missing: "reason" };
  return { value: { valid: values.valid === "yes", reason } };
}

// An item as an annotator sees it: a judged step's key without its run, whose name says
// which agent and model played (the rating stays blind to them as to the judge).
function shownKey(kind, key) {
  if (kind !== "metric2") return key;
  const [, instance, trial, attempt, step] = String(key).split("|");
  return `${instance} · trial ${trial} · attempt ${Number(attempt) + 1} · step ${step}`;
}

export async function annotatePage(content, params, ctx) {
  const { el, add } = ctx.ui;
  const kind = params.kind || "metric2";
  if (!(kind in ANNOTATION_KINDS)) {
    add(content, el("p", { class: "error" }, `No annotation of kind ${kind}: ${Object.keys(ANNOTATION_KINDS).join(", ")}.`));
    return;
  }
  const count = el("p", { class: "meta", "data-testid": "annotate-progress" });
  const body = el("div", { class: "annotate-item" });
  const list = el("div");
  add(content, el("h1", null, ANNOTATION_KINDS[kind]), count, body, list);
  if (ctx.user && ctx.user.role === "admin") add(content, adminTools(kind, ctx));

  const showProgress = (p) => {
    count.textContent = `${p.rated} of ${p.assigned} rated`;
  };

  const refreshList = async () => {
    const all = await ctx.api("GET", "annotate/progress");
    const mine = all[kind] || { items: [], rated: 0, assigned: 0 };
    showProgress(mine);
    list.replaceChildren();
    const rated = mine.items.filter((i) => i.rated);
    if (!rated.length) return;
    add(
      list,
      el(
        "details",
        null,
        el("summary", null, `Your ${rated.length} rated items (open one to rate it again)`),
        ctx.ui.table(
          ["item", ""],
          rated.map((i) => [el("span", { class: "mono" }, shownKey(kind, i.item)), el("button", { class: "link", onclick: () => open(i.item) }, "rate again")]),
        ),
      ),
    );
  };

  const show = (data) => {
    body.replaceChildren();
    if (data.skipped && data.skipped.length) {
      add(body, el("p", { class: "error" }, `${data.skipped.length} assigned items cannot be shown: ${data.skipped.map((s) => s.error).join("; ")}`));
    }
    if (!data.item) {
      add(body, el("p", { "data-testid": "annotate-done" }, "Nothing left to rate in your queue. Thank you!"));
      return;
    }
    add(body, el("p", { class: "muted small mono" }, shownKey(kind, data.item)));
    add(body, kind === "metric2" ? stepView(data.context, ctx.ui) : instanceView(data.instance, ctx.ui));
    add(body, ratingForm(kind, data, ctx, async () => {
      await next();
    }));
  };

  const next = async () => {
    const data = await ctx.api("GET", `annotate/next?kind=${encodeURIComponent(kind)}`);
    if (data.progress) showProgress(data.progress);
    show(data);
    await refreshList();
    window.scrollTo(0, 0);
  };

  const open = async (item) => {
    const data = await ctx.api("GET", `annotate/item?kind=${encodeURIComponent(kind)}&item=${encodeURIComponent(item)}`);
    show(data);
    window.scrollTo(0, 0);
  };

  try {
    await next();
  } catch (err) {
    add(body, el("p", { class: "error" }, String(err.message || err)));
  }
}

function section(ui, title, ...children) {
  return ui.el("section", { class: "annotate-section" }, ui.el("h3", null, title), ...children);
}

// What the judge saw of the step, in the order of its prompt.
function stepView(context, ui) {
  const { el } = ui;
  const history = context.history.length
    ? el("div", { class: "mono small" }, context.history.map((h) => el("div", { class: "annotate-history" }, historyLine(h))))
    : el("p", { class: "muted" }, "(none)");
  return el(
    "div",
    { "data-testid": "annotate-context" },
    section(ui, "Scenario objective", ui.textBlock(context.objective || "(none)")),
    section(ui, "Current scene", ui.textBlock(context.scene || "(none)")),
    section(ui, "Tools in the agent's bag", context.bag.length ? el("div", { class: "chips" }, context.bag.map((b) => el("span", { class: "chip" }, b))) : el("p", { class: "muted" }, "(none)")),
    section(ui, "Recent history (oldest first)", history),
    section(ui, "The agent's Thought", ui.textBlock(context.thought || "(the agent gave no Thought)")),
    section(ui, "The agent's Action", el("p", { class: "mono" }, context.action)),
    section(ui, "Environment response to the Action", ui.textBlock(context.response || "(none)")),
  );
}

// What a reviewer checks (§3.5): the statement, the tests and the reference solution.
function instanceView(instance, ui) {
  const { el } = ui;
  const parts = [section(ui, "Problem statement", ui.textBlock(instance.question))];
  if (instance.function_signature) parts.push(section(ui, "Function signature", ui.textBlock(instance.function_signature)));
  if (instance.constraints && instance.constraints.length) {
    parts.push(section(ui, "Constraints", el("ol", null, instance.constraints.map((c) => el("li", null, c)))));
  }
  if (instance.demo_tests) parts.push(section(ui, "Demo tests", ui.textBlock(instance.demo_tests)));
  parts.push(section(ui, "Test function", ui.textBlock(instance.tests)));
  parts.push(section(ui, "Reference solution", ui.textBlock(instance.reference_solution)));
  return el("div", { "data-testid": "annotate-instance" }, el("p", { class: "muted" }, `${instance.pipeline} instance ${instance.id}`), parts);
}

function radios(ui, name, options, checked) {
  return options.map(([value, text]) =>
    ui.el(
      "label",
      { class: "annotate-choice", style: { display: "block", margin: ".15rem 0" } },
      ui.el("input", { type: "radio", name, value: String(value), checked: String(checked) === String(value) }),
      ` ${text}`,
    ),
  );
}

function ratingForm(kind, data, ctx, done) {
  const { el } = ctx.ui;
  const mine = data.mine || {};
  const message = el("p", { class: "error", role: "alert" });
  const groups = [];
  if (kind === "metric2") {
    for (const r of data.rubric) {
      const name = r.criterion;
      const label = name[0].toUpperCase() + name.slice(1);
      groups.push(
        el(
          "fieldset",
          { "data-criterion": name },
          el("legend", null, el("strong", null, label), ` — ${r.definition}`),
          radios(ctx.ui, name, Object.entries(r.anchors).map(([n, text]) => [n, `${n} = ${text}`]), mine[name]),
        ),
      );
    }
  } else {
    const was = mine.valid === undefined ? null : mine.valid ? "yes" : "no";
    groups.push(
      el(
        "fieldset",
        null,
        el("legend", null, "Is the instance valid (the tests correct and aligned with the statement)?"),
        radios(ctx.ui, "valid", [["yes", "yes"], ["no", "no"]], was),
      ),
      el("label", null, el("span", null, "reason (needed for no)"), el("textarea", { name: "reason", rows: 3, value: mine.reason || "" })),
    );
  }
  const form = el(
    "form",
    {
      class: "study-form annotate-form",
      style: { maxWidth: "60rem" },
      onsubmit: async (event) => {
        event.preventDefault();
        message.textContent = "";
        const values = Object.fromEntries(new FormData(form).entries());
        const read = readRating(kind, values);
        if (read.missing) {
          message.textContent = MISSING[read.missing] || `Choose a score for ${read.missing}.`;
          return;
        }
        try {
          await ctx.api("POST", "annotate/rate", { kind, item: data.item, value: read.value });
          await done();
        } catch (err) {
          message.textContent = String(err.message || err);
        }
      },
    },
    groups,
    el("button", { class: "primary", type: "submit" }, "Submit and go on"),
    message,
  );
  return form;
}

// An admin's tools: the item keys of a run or a built file (to paste into an assignment) and
// the exports.
function adminTools(kind, ctx) {
  const { el } = ctx.ui;
  const what = kind === "metric2" ? "run" : "file";
  const source = el("input", { name: what, placeholder: kind === "metric2" ? "run key (as in the runs list)" : "build/combo.jsonl (under the runs folder)" });
  const out = el("textarea", { rows: 6, readonly: true, class: "mono" });
  const message = el("p", { class: "error", role: "alert" });
  const exports = kind === "metric2" ? ["metric2", "turtlesoup"] : ["validity"];
  return el(
    "details",
    { class: "annotate-admin" },
    el("summary", null, "Admin: items and exports"),
    el(
      "form",
      {
        class: "study-form",
        onsubmit: async (event) => {
          event.preventDefault();
          message.textContent = "";
          try {
            const data = await ctx.api("GET", `annotate/items?kind=${kind}&${what}=${encodeURIComponent(source.value.trim())}`);
            out.value = data.items.join("\n");
          } catch (err) {
            message.textContent = String(err.message || err);
          }
        },
      },
      el("label", null, el("span", null, what), source),
      el("button", { type: "submit" }, "List items"),
      el("label", null, el("span", null, "item keys (one per line, to assign)"), out),
      message,
    ),
    el(
      "p",
      null,
      exports.map((k) => [
        el("a", { class: "button", href: k === "turtlesoup" ? `api/study/annotate/export?kind=${k}` : `api/study/annotate/export?kind=${k}&format=jsonl`, download: `${k}.${k === "turtlesoup" ? "json" : "jsonl"}` }, `export ${k}`),
        " ",
      ]),
    ),
  );
}
