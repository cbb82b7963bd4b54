// The viewer's pages: runs, a run, an episode with its world view, and a comparison.
import { add, badge, colors, diff, el, formatNumber, lineChart, svg, table, textBlock } from "./ui.js";
import { bundled, episodeRows, getJSON, loadView, plotURL } from "./api.js";
import { adminPage, loginPage, makeContext, queuePage, setupPage, studyBar, whoAmI } from "./study.js";

const PAGE_ROWS = 100;
const POLL_MS = 3000;
const ACTION_CHARS = 160;

let pollTimer = null;
let pageToken = 0;

// Under `forkingpaths study` the person signed in ({user, csrf}) or null; undefined for the
// plain viewer and a bundle.
let study;

export async function start() {
  study = bundled ? undefined : await whoAmI().catch(() => undefined);
  window.addEventListener("hashchange", route);
  route();
}

const STUDY_PAGES = new Set(["login", "setup", "queue", "admin", "play", "annotate"]);

// A study page, or null where the plain viewer's pages apply.
async function studyRoute(content, parts, query) {
  const ctx = makeContext(study, (hash) => { location.hash = hash; });
  const page = parts[0] || "";
  if (!study || !study.user) {
    if (page === "setup") return setupPage(content, ctx, query.get("token") || "");
    return loginPage(content, ctx);
  }
  const role = study.user.role;
  if (page === "queue") return queuePage(content, ctx);
  if (page === "admin") return adminPage(content, ctx);
  if (page === "play") {
    const module = await import(new URL("static/play.js", document.baseURI).href);
    return module.playPage(content, { benchmark: parts[1], instance: parts[2] }, ctx);
  }
  if (page === "annotate") {
    const module = await import(new URL("static/annotate.js", document.baseURI).href);
    return module.annotatePage(content, { kind: parts[1] }, ctx);
  }
  if (STUDY_PAGES.has(page)) return loginPage(content, ctx);
  // The runs hold what players and blind annotators must not see.
  if (role !== "viewer" && role !== "admin") return queuePage(content, ctx);
  return null;
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const parts = path ? path.split("/").map(decodeURIComponent) : [];
  return { parts, query: new URLSearchParams(query || "") };
}

export function runHref(key) {
  return `#/run/${encodeURIComponent(key)}`;
}

export function episodeHref(key, n, pos) {
  return `#/run/${encodeURIComponent(key)}/episode/${n}${pos === undefined ? "" : `?pos=${pos}`}`;
}

function compareHref(keys, instance, trial) {
  const query = new URLSearchParams({ runs: keys.join(",") });
  if (instance !== undefined) {
    query.set("instance", instance);
    query.set("trial", String(trial || 0));
  }
  return `#/compare?${query.toString()}`;
}

// Refresh a page every POLL_MS while it is the page shown: one request at a time, stopped
// when the reader moves to another page.
function poll(token, refresh) {
  const next = () => {
    pollTimer = setTimeout(async () => {
      if (token !== pageToken) return;
      await refresh();
      if (token === pageToken) next();
    }, POLL_MS);
  };
  if (token === pageToken) next();
}

async function route() {
  if (pollTimer) clearTimeout(pollTimer);
  pollTimer = null;
  const token = ++pageToken;
  const root = document.getElementById("app");
  const content = el("div", { class: "page" });
  try {
    const { parts, query } = parseHash();
    if (study !== undefined && (await studyRoute(content, parts, query)) !== null) {
      // drawn by the study's page
    } else if (parts[0] === "run" && parts[2] === "episode") {
      if (!/^[0-9]+$/.test(parts[3] || "0")) throw new Error(`episode: got "${parts[3]}"; give its number in the run's list (0, 1, ...)`);
      await episodePage(content, parts[1], Number(parts[3] || 0), query, token);
    } else if (parts[0] === "run") {
      await runPage(content, parts[1], token);
    } else if (parts[0] === "compare") {
      await comparePage(content, (query.get("runs") || "").split(",").filter(Boolean), query);
    } else {
      await runsPage(content, token);
    }
  } catch (err) {
    content.replaceChildren(el("h1", null, "Cannot show this page"), el("p", { class: "error" }, String(err.message || err)), el("p", null, el("a", { href: "#/" }, "← all runs")));
  }
  if (token !== pageToken) return;
  root.replaceChildren(...(study === undefined ? [] : [studyBar(study, (hash) => { location.hash = hash; })]), content);
  window.scrollTo(0, 0);
}

function nav(...crumbs) {
  return el(
    "nav",
    { class: "crumbs" },
    el("a", { href: "#/" }, "forkingpaths"),
    crumbs.map((c) => [" › ", c]),
  );
}

function statusBadge(status) {
  const kind = { finished: "ok", ok: "ok", running: "info", incomplete: "warn", error: "bad", unreadable: "bad" }[status] || "muted";
  return badge(status, kind);
}

function money(value) {
  return value ? `$${value.toFixed(value < 0.01 ? 4 : 2)}` : "$0";
}

function ago(seconds) {
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}

// A sortable table: columns {label, value(row) for sorting, cell(row) -> node|text, num}.
function sortableTable(columns, rows, state, onRow) {
  const sorted = rows.slice();
  if (state.sort !== undefined && columns[state.sort]) {
    const col = columns[state.sort];
    const dir = state.desc ? -1 : 1;
    sorted.sort((a, b) => {
      const va = col.value(a);
      const vb = col.value(b);
      if (va === vb) return 0;
      if (va === null || va === undefined) return 1;
      if (vb === null || vb === undefined) return -1;
      return (va < vb ? -1 : 1) * dir;
    });
  }
  const limit = state.limit || PAGE_ROWS;
  const body = el("tbody");
  for (const row of sorted.slice(0, limit)) {
    const tr = el(
      "tr",
      onRow ? { class: "clickable", onclick: (event) => onRow(row, event) } : null,
      columns.map((c) => el("td", { class: c.num ? "num" : "" }, c.cell ? c.cell(row) : formatNumber(c.value(row)))),
    );
    body.appendChild(tr);
  }
  const head = el(
    "tr",
    null,
    columns.map((c, i) =>
      el(
        "th",
        {
          class: c.value ? "sortable" : "",
          title: c.title || "",
          onclick: c.value
            ? () => {
                state.desc = state.sort === i ? !state.desc : Boolean(c.num);
                state.sort = i;
                state.rerender();
              }
            : null,
        },
        c.label,
        state.sort === i ? (state.desc ? " ▼" : " ▲") : "",
      ),
    ),
  );
  // Long lists scroll in a box whose header stays in view, its horizontal bar at hand.
  const wrap = el("div", null, el("div", { class: "scroll-box" }, el("table", { class: "fp-table" }, el("thead", null, head), body)));
  if (sorted.length > limit) {
    wrap.appendChild(
      el(
        "p",
        null,
        `${limit.toLocaleString("en-US")} of ${sorted.length.toLocaleString("en-US")} shown · `,
        el("button", { class: "link", onclick: () => { state.limit = limit + PAGE_ROWS * 5; state.rerender(); } }, "show more"),
      ),
    );
  }
  return wrap;
}

// -- the runs --------------------------------------------------------------------------------

const runsState = { filter: "", status: "", selected: new Set(), sort: undefined, desc: false };

async function runsPage(content, token) {
  let data = await getJSON("runs", {});
  const listHolder = el("div");
  // In the runs list's order, as a bundle lists its comparisons.
  const compareButton = el("button", { class: "primary", onclick: () => { location.hash = compareHref(data.runs.map((r) => r.key).filter((k) => runsState.selected.has(k))); } }, "Compare selected");
  const countLabel = el("span", { class: "muted" });
  const render = () => {
    const needle = runsState.filter.toLowerCase();
    const rows = data.runs.filter((r) => {
      if (runsState.status && r.status !== runsState.status) return false;
      if (!needle) return true;
      return [r.key, r.benchmark, r.agent, r.model || "", r.split].join(" ").toLowerCase().includes(needle);
    });
    countLabel.textContent = `${rows.length} of ${data.runs.length} runs`;
    compareButton.disabled = runsState.selected.size < 2;
    compareButton.textContent = `Compare selected (${runsState.selected.size})`;
    const columns = [
      {
        label: "",
        cell: (r) =>
          el("input", {
            type: "checkbox",
            checked: runsState.selected.has(r.key),
            "aria-label": `select ${r.key}`,
            onclick: (event) => {
              event.stopPropagation();
              if (event.target.checked) runsState.selected.add(r.key);
              else runsState.selected.delete(r.key);
              render();
            },
          }),
      },
      { label: "run", value: (r) => r.key, cell: (r) => el("a", { href: runHref(r.key), class: "mono" }, r.key) },
      { label: "benchmark", value: (r) => r.benchmark || "" },
      { label: "agent", value: (r) => r.agent || "" },
      { label: "model", value: (r) => r.model || "", cell: (r) => r.model || "–" },
      { label: "status", value: (r) => r.status, cell: (r) => (r.problem ? [statusBadge(r.status), " ", r.problem] : statusBadge(r.status)) },
      {
        label: "episodes",
        num: true,
        value: (r) => (r.episodes ? r.episodes.recorded : null),
        cell: (r) =>
          r.episodes
            ? [
                `${r.episodes.ok.toLocaleString("en-US")} ok`,
                r.episodes.errored ? [" · ", el("span", { class: "error" }, `${r.episodes.errored} errored`)] : "",
                r.planned ? el("span", { class: "muted" }, ` / ${r.planned.toLocaleString("en-US")}`) : "",
              ]
            : "–",
      },
      {
        label: "headline metrics",
        cell: (r) => (r.headline || []).map((h) => el("div", { class: "metric" }, el("span", { class: "muted" }, `${h.label}${h.arrow ? ` ${h.arrow}` : ""}: `), h.text)),
      },
      { label: "tokens", num: true, value: (r) => r.tokens },
      { label: "cost", num: true, value: (r) => r.cost_usd, cell: (r) => money(r.cost_usd || 0) },
      { label: "updated", value: (r) => r.updated, cell: (r) => (r.updated ? ago(r.updated) : "–") },
    ];
    listHolder.replaceChildren(
      rows.length
        ? sortableTable(columns, rows, runsState, (r, event) => {
            if (event.target.closest("a,input,button")) return;
            location.hash = runHref(r.key);
          })
        : el("p", { class: "muted" }, data.runs.length ? "No run matches the filter." : `No runs under ${data.runs_dir} yet: start one with "forkingpaths run".`),
    );
  };
  runsState.rerender = render;
  const statuses = ["", "finished", "running", "incomplete", "unreadable"];
  add(content, 
    nav("runs"),
    el("h1", null, "Runs"),
    el("p", { class: "muted" }, bundled ? "A static copy of these runs." : `Every run under ${data.runs_dir}; updates while runs are writing.`),
    el(
      "div",
      { class: "controls" },
      el("input", { type: "search", placeholder: "filter: run, benchmark, agent, model", value: runsState.filter, oninput: (e) => { runsState.filter = e.target.value; render(); } }),
      el("select", { onchange: (e) => { runsState.status = e.target.value; render(); } }, statuses.map((s) => el("option", { value: s, selected: runsState.status === s }, s || "any status"))),
      compareButton,
      countLabel,
    ),
    listHolder,
  );
  render();
  if (!bundled) {
    poll(token, async () => {
      try {
        data = await getJSON("runs", {});
        render();
      } catch (err) {
        countLabel.textContent = `cannot refresh: ${err.message}`;
      }
    });
  }
}

// -- a run -----------------------------------------------------------------------------------

function runMeta(run) {
  const roles = Object.entries(run.roles || {}).map(([r, m]) => `${r}=${m}`).join(", ");
  return (
    `${run.benchmark} · split ${run.split} · agent ${run.agent} · model ${run.model || "none"}` +
    (roles ? ` · roles ${roles}` : "") +
    ` · ${run.episodes.ok} ok, ${run.episodes.errored} errored${run.planned ? ` of ${run.planned} planned` : ""}` +
    ` · ${(run.tokens || 0).toLocaleString("en-US")} tokens · ${money(run.cost_usd)}`
  );
}

// `key=value`, `key>number`, `key<number`, `key!=value` and bare words (matched against the
// instance id and the error), all of which must hold.
export function episodeFilter(text, known) {
  const tests = [];
  const unknown = [];
  const normal = text.replace(/\s*(!=|>=|<=|=|>|<)\s*/g, "$1");
  for (const token of normal.trim().split(/\s+/).filter(Boolean)) {
    const m = token.match(/^([\w.]+)(!=|>=|<=|=|>|<)(.*)$/);
    if (!m) {
      const needle = token.toLowerCase();
      tests.push((e) => `${e.instance_id}#${e.trial} ${e.error || ""}`.toLowerCase().includes(needle));
      continue;
    }
    const [, key, op, given] = m;
    // yes / no are how booleans are shown in the list.
    const raw = { yes: "true", no: "false" }[given.toLowerCase()] || given;
    const num = Number(raw);
    if (known && !known.has(key)) unknown.push(key);
    tests.push((e) => {
      const value = key in e ? e[key] : key in (e.metrics || {}) ? e.metrics[key] : (e.outcome || {})[key];
      if (value === undefined) return false;
      if (op === ">" || op === "<" || op === ">=" || op === "<=") {
        if (typeof value !== "number" || Number.isNaN(num)) return false;
        return op === ">" ? value > num : op === "<" ? value < num : op === ">=" ? value >= num : value <= num;
      }
      const same = String(value).toLowerCase() === raw.toLowerCase() || (typeof value === "boolean" && String(value) === raw) || (typeof value === "number" && value === num);
      return op === "!=" ? !same : same;
    });
  }
  const test = (e) => tests.every((t) => t(e));
  test.unknown = unknown;
  return test;
}

// A table of the report (the same rows as report.html); a click on a column sorts by it.
function reportTable(t) {
  const body = el("tbody");
  let sortedBy = -1;
  let descending = false;
  const fill = () => {
    const rows = t.rows.slice();
    if (sortedBy >= 0) {
      const key = (row) => (row[sortedBy][1] === null ? row[sortedBy][0] : row[sortedBy][1]);
      rows.sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        if (x === y) return 0;
        return (x < y ? -1 : 1) * (descending ? -1 : 1);
      });
    }
    body.replaceChildren(...rows.map((row) => el("tr", null, row.map(([text, num]) => el("td", { class: num === null ? "" : "num" }, text)))));
  };
  const head = el(
    "tr",
    null,
    t.header.map((h, i) =>
      el(
        "th",
        {
          class: t.rows.length > 1 ? "sortable" : "",
          onclick: () => {
            descending = sortedBy === i ? !descending : t.rows.some((r) => r[i][1] !== null);
            sortedBy = i;
            fill();
          },
        },
        h,
      ),
    ),
  );
  fill();
  return el(
    "section",
    null,
    el("h2", null, t.title),
    t.note ? el("p", { class: "muted" }, t.note) : null,
    el(
      "div",
      { class: "wide" },
      el(
        "table",
        { class: "fp-table" },
        el("thead", null, t.groups && t.groups.length ? el("tr", null, t.groups.map(([title, span]) => el("th", { colspan: span, class: "group" }, title))) : null, head),
        body,
      ),
    ),
  );
}

async function runPage(content, key, token) {
  const [page, list] = await Promise.all([getJSON("run", { run: key }), getJSON("episodes", { run: key })]);
  const run = page.run;
  let episodes = episodeRows(list);
  const state = { filter: "", status: "", sort: undefined, desc: false };
  const holder = el("div");
  const count = el("span", { class: "muted" });
  const columns = [
    { label: "#", num: true, value: (e) => e.n, cell: (e) => el("a", { href: episodeHref(key, e.n) }, String(e.n)) },
    { label: "instance", value: (e) => e.instance_id, cell: (e) => el("span", { class: "mono" }, e.instance_id) },
    { label: "trial", num: true, value: (e) => e.trial },
    { label: "status", value: (e) => e.status, cell: (e) => (e.status === "ok" ? badge("ok", "ok") : [badge("error", "bad"), " ", el("span", { class: "error small" }, e.error || "")]) },
    { label: "steps", num: true, value: (e) => e.steps },
    ...page.columns.map((c) => ({
      label: `${c.label}${c.direction === "higher" ? " ↑" : c.direction === "lower" ? " ↓" : ""}`,
      title: c.key,
      num: true,
      value: (e) => (e.metrics[c.key] === undefined ? null : typeof e.metrics[c.key] === "boolean" ? Number(e.metrics[c.key]) : e.metrics[c.key]),
      cell: (e) => formatNumber(e.metrics[c.key]),
    })),
    { label: "calls", num: true, value: (e) => e.calls },
    { label: "tokens", num: true, value: (e) => e.tokens },
    { label: "cost", num: true, value: (e) => e.cost_usd, cell: (e) => money(e.cost_usd) },
  ];
  const fields = () => {
    const names = new Set(["instance_id", "trial", "status", "steps", "calls", "tokens", "cost_usd", "error", "n"]);
    for (const e of episodes.slice(0, 200)) for (const k of [...Object.keys(e.metrics), ...Object.keys(e.outcome)]) names.add(k);
    return names;
  };
  const render = () => {
    const known = fields();
    const test = episodeFilter(state.filter, known);
    const rows = episodes.filter((e) => (!state.status || e.status === state.status) && test(e));
    count.textContent = `${rows.length.toLocaleString("en-US")} of ${episodes.length.toLocaleString("en-US")} episodes`;
    if (test.unknown.length) count.textContent += ` · no field ${test.unknown.map((k) => `"${k}"`).join(", ")}; fields: ${[...known].join(", ")}`;
    holder.replaceChildren(sortableTable(columns, rows, state, (e, event) => {
      if (event.target.closest("a")) return;
      location.hash = episodeHref(key, e.n);
    }));
  };
  state.rerender = render;
  const others = el("span");
  const meta = el("p", { class: "meta" }, runMeta(run));
  add(content, 
    nav(el("a", { href: runHref(key) }, key)),
    el("h1", null, run.run_id, " ", statusBadge(run.status)),
    meta,
    others,
  );
  if (!page.tables.length) add(content, el("p", { class: "muted" }, "No metrics.json yet (the run has not finished): its episodes so far are listed below."));
  const tables = page.tables.filter((t) => t.title !== "Run");
  if (tables.length) add(content, el("div", { class: "tables" }, tables.map(reportTable)));
  if (page.plots.length) {
    add(content, 
      el("h2", null, "Figures"),
      el("div", { class: "figures" }, page.plots.map((p) => el("figure", null, el("a", { href: plotURL(key, p.name), target: "_blank" }, el("img", { src: plotURL(key, p.name), alt: p.title, loading: "lazy" })), el("figcaption", null, p.title)))),
    );
  }
  if (page.error_groups.length) {
    add(content, 
      el("h2", { class: "error" }, "Errors by cause"),
      table(
        ["episodes", "cause", "where"],
        page.error_groups.map((g) => [g.count, el("span", { class: "mono small" }, g.example || g.cause), el("span", null, g.episodes.slice(0, 12).map((e) => [el("a", { href: episodeHref(key, e.n) }, `${e.instance_id}#${e.trial}`), " "]))]),
      ),
    );
  }
  add(content, 
    el("h2", null, "Episodes"),
    el(
      "div",
      { class: "controls" },
      el("input", { type: "search", class: "wide-input", placeholder: "filter: words match the instance; success=true  steps>10  status=error", oninput: (e) => { state.filter = e.target.value; render(); } }),
      el("select", { onchange: (e) => { state.status = e.target.value; render(); } }, ["", "ok", "error"].map((s) => el("option", { value: s }, s || "any status"))),
      count,
    ),
    holder,
    el("details", null, el("summary", null, "Spec"), el("pre", { class: "fp-text" }, JSON.stringify(page.spec, null, 2))),
  );
  const runTable = page.tables.find((t) => t.title === "Run");
  if (runTable) add(content, el("details", null, el("summary", null, "Run settings"), reportTable(runTable)));
  render();
  if (!bundled) {
    // After the page is drawn: the other runs only fill the "compare with" menu.
    const otherRuns = () => getJSON("runs", {})
      .then((all) => {
        const same = all.runs.filter((r) => r.benchmark === run.benchmark && r.key !== key);
        if (!same.length) return;
        const select = el("select", { "aria-label": "compare with" }, el("option", { value: "" }, "compare with…"), same.map((r) => el("option", { value: r.key }, `${r.key} (${r.agent}, ${r.model || "no model"})`)));
        select.addEventListener("change", () => {
          if (select.value) location.hash = compareHref([key, select.value]);
        });
        others.replaceChildren(select);
      })
      .catch(() => {});
    setTimeout(otherRuns, 300);
    if (run.status === "running") {
      poll(token, async () => {
        try {
          const [fresh, list] = await Promise.all([getJSON("run", { run: key }), getJSON("episodes", { run: key })]);
          if (fresh.run.status !== "running") {
            route(); // finished (or stopped): its tables and figures now exist
            return;
          }
          episodes = episodeRows(list);
          meta.textContent = runMeta(fresh.run);
          render();
        } catch (err) {
          count.textContent = `cannot refresh: ${err.message}`;
        }
      });
    }
  }
}

// -- an episode ------------------------------------------------------------------------------

function worldUI(seek) {
  return { el, svg, badge, table, lineChart, diff, textBlock, colors, formatNumber, seek };
}

function callRow(call, index, getMessages) {
  const details = el("div", { class: "call-body" });
  let open = false;
  const toggle = async () => {
    open = !open;
    if (!open) {
      details.replaceChildren();
      return;
    }
    details.replaceChildren(el("p", { class: "muted" }, "loading messages…"));
    try {
      const messages = await getMessages();
      const chain = [];
      let id = call.messages_ref;
      while (id && messages[id]) {
        const [parent, role, text] = messages[id];
        chain.push([role, text]);
        id = parent;
      }
      chain.reverse();
      const inline = (call.messages || []).map((m) => [m.role, m.content]);
      const shown = chain.length ? chain : inline;
      details.replaceChildren();
      add(
        details,
        call.params ? el("p", { class: "muted mono small" }, `params: ${JSON.stringify(call.params)}`) : null,
        shown.length ? null : el("p", { class: "muted" }, "No messages recorded (a record older than schema 2)."),
        shown.map(([role, text]) => el("div", { class: `message role-${role}` }, el("div", { class: "role" }, role), textBlock(text))),
        el("div", { class: "message role-reply" }, el("div", { class: "role" }, `reply${call.finish_reason ? ` (finish: ${call.finish_reason})` : ""}`), textBlock(call.response)),
      );
    } catch (err) {
      details.replaceChildren(el("p", { class: "error" }, String(err.message || err)));
    }
  };
  const tokens = `${call.prompt_tokens.toLocaleString("en-US")} + ${call.completion_tokens.toLocaleString("en-US")} tok`;
  return el(
    "div",
    { class: "call" },
    el(
      "button",
      { class: "call-head", onclick: toggle, title: "show the messages sent and the reply" },
      el("span", { class: "role-name" }, call.purpose),
      " ",
      el("span", { class: "mono" }, call.model),
      ` · ${tokens}`,
      call.reasoning_tokens ? ` (+${call.reasoning_tokens} reasoning)` : "",
      ` · ${call.cached ? "cache hit" : `${call.latency_s.toFixed(2)} s`}`,
      call.attempts > 1 ? ` · ${call.attempts - 1} retr${call.attempts === 2 ? "y" : "ies"}` : "",
      ` · ${money(call.cost_usd)}`,
      call.cached ? [" ", badge("cached", "info")] : "",
      ` · call ${index}`,
    ),
    details,
  );
}

function stepCard(step, selected, onSelect, getMessages) {
  const flags = [];
  if (!step.valid) flags.push(badge("invalid", "bad"));
  if (step.terminated) flags.push(badge("terminated", "info"));
  if (step.truncated) flags.push(badge("truncated", "warn"));
  if (step.reward) flags.push(badge(`reward ${formatNumber(step.reward, 2)}`, step.reward > 0 ? "ok" : "bad"));
  const head = el(
    "div",
    { class: "step-head", onclick: onSelect },
    el("span", { class: "step-n" }, `step ${step.index}`),
    el("span", { class: "action mono", title: step.action.length > ACTION_CHARS ? "the full action is below" : null }, step.action.length > ACTION_CHARS ? `${step.action.slice(0, ACTION_CHARS)}…` : step.action),
    flags,
    step.calls.length ? el("span", { class: "muted small" }, ` ${step.calls.length} call${step.calls.length > 1 ? "s" : ""}`) : null,
  );
  const card = el("div", { class: `step${selected ? " selected" : ""}${step.valid ? "" : " invalid"}`, id: `step-${step.index}` }, head);
  if (selected) {
    add(card, 
      step.action.length > ACTION_CHARS ? el("div", { class: "field" }, el("div", { class: "label" }, "action"), textBlock(step.action)) : null,
      step.thought ? el("div", { class: "field" }, el("div", { class: "label" }, "thought"), textBlock(step.thought)) : null,
      el("div", { class: "field" }, el("div", { class: "label" }, "feedback"), textBlock(step.feedback)),
      el("details", null, el("summary", null, "observation the agent acted on"), textBlock(step.observation)),
      Object.keys(step.info || {}).length ? el("details", null, el("summary", null, "info"), textBlock(JSON.stringify(step.info, null, 1))) : null,
      step.calls.length ? el("div", { class: "calls" }, el("div", { class: "label" }, "model calls"), step.calls.map((c, i) => callRow(c, i, getMessages))) : null,
    );
  }
  return card;
}

function chip(key, value) {
  const text = typeof value === "string" ? value : formatNumber(value);
  return el("span", { class: "chip", title: `${key}: ${text}` }, el("span", { class: "muted" }, `${key} `), text);
}

async function episodePage(content, key, n, query, token) {
  const data = await getJSON("episode", { run: key, n: String(n) });
  const record = data.record;
  const steps = record.steps;
  const module = data.world && data.view_script ? await loadView(data.view_script) : null;
  let position = Math.min(Math.max(Number(query.get("pos") || 0), 0), steps.length);
  let messages = null;
  const getMessages = async () => {
    if (!messages) messages = (await getJSON("messages", { run: key, n: String(n) })).messages;
    return messages;
  };
  const worldBox = el("div", { class: "world-view" });
  const slider = el("input", { type: "range", min: 0, max: steps.length, value: position, "aria-label": "position" });
  const posLabel = el("span", { class: "muted" });
  const timeline = el("div", { class: "timeline" });
  const setPosition = (p, scroll) => {
    position = Math.min(Math.max(p, 0), steps.length);
    slider.value = position;
    history.replaceState(null, "", episodeHref(key, n, position));
    renderWorld();
    renderTimeline(scroll);
  };
  const ui = worldUI((p) => setPosition(p, true));
  const renderWorld = () => {
    const step = steps[position - 1];
    posLabel.textContent = position === 0 ? `position 0 of ${steps.length}: after reset` : `position ${position} of ${steps.length}: after step ${position - 1} (${(step.action || "").slice(0, 60)})`;
    if (!module || typeof module.renderWorld !== "function") {
      worldBox.replaceChildren(el("p", { class: data.world_error ? "error" : "muted" }, data.world_error ? `world view failed: ${data.world_error}` : data.view_script ? "No world view for this episode: its benchmark could not rebuild the world from this record (the timeline shows every step)." : "This benchmark has no world view; the timeline shows every step."));
      return;
    }
    const holder = el("div");
    try {
      module.renderWorld(holder, data.world, position, ui);
    } catch (err) {
      holder.replaceChildren(el("p", { class: "error" }, `world view failed: ${err.message || err}`));
    }
    worldBox.replaceChildren(holder);
  };
  // The timeline scrolls in its own box, so the page (and the world beside it) stays put.
  const showSelected = () => {
    const target = timeline.querySelector(".step.selected");
    if (!target) return;
    const top = target.offsetTop - timeline.offsetTop;
    if (top < timeline.scrollTop || top + target.offsetHeight > timeline.scrollTop + timeline.clientHeight) {
      timeline.scrollTop = Math.max(0, top - 40);
    }
  };
  const renderTimeline = (scroll) => {
    const selected = position - 1;
    const cards = [
      el(
        "div",
        { class: `step${position === 0 ? " selected" : ""}`, id: "step-reset" },
        el("div", { class: "step-head", onclick: () => setPosition(0, false) }, el("span", { class: "step-n" }, "reset"), el("span", { class: "muted" }, `seed ${record.seed}`)),
        position === 0 ? textBlock(record.initial_observation) : null,
      ),
      ...steps.map((s, i) => stepCard(s, i === selected, () => setPosition(i === selected ? i : i + 1, false), getMessages)),
    ];
    timeline.replaceChildren(...cards);
    if (scroll) showSelected();
  };
  slider.addEventListener("input", () => setPosition(Number(slider.value), true));
  const onKey = (event) => {
    if (token !== pageToken) {
      window.removeEventListener("keydown", onKey);
      return;
    }
    // A focused control (the slider, a filter box) handles its own keys; so does the browser
    // with a modifier (Alt+← goes back).
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest && event.target.closest("input,textarea,select")) return;
    if (event.key === "ArrowRight" || event.key === "j") setPosition(position + 1, true);
    else if (event.key === "ArrowLeft" || event.key === "k") setPosition(position - 1, true);
    else return;
    event.preventDefault();
  };
  window.addEventListener("keydown", onKey);
  const metrics = Object.entries(record.metrics || {}).filter(([, v]) => v === null || typeof v !== "object");
  const outcome = Object.entries(record.outcome || {}).filter(([, v]) => v === null || typeof v !== "object");
  add(content, 
    nav(el("a", { href: runHref(key) }, key), `episode ${n}`),
    el(
      "div",
      { class: "episode-head" },
      el("h1", null, `${record.instance_id} `, el("span", { class: "muted" }, `trial ${record.trial}`), " ", badge(record.status, record.status === "ok" ? "ok" : "bad")),
      el(
        "div",
        { class: "pager" },
        n > 0 ? el("a", { href: episodeHref(key, n - 1), class: "button" }, "← previous") : null,
        el("span", { class: "muted" }, ` ${n + 1} of ${data.episodes} `),
        n + 1 < data.episodes ? el("a", { href: episodeHref(key, n + 1), class: "button" }, "next →") : null,
      ),
    ),
    el("p", { class: "meta" }, `${data.benchmark} · agent ${record.agent} · model ${record.model || "none"} · seed ${record.seed} · ${steps.length} steps · ${record.n_calls} calls (${record.n_cached} cached) · ${(record.usage.prompt_tokens + record.usage.completion_tokens).toLocaleString("en-US")} tokens · ${money(record.cost_usd)} · ${record.duration_s.toFixed(2)} s`),
    record.error ? el("div", { class: "error-box" }, el("b", null, "error: "), textBlock(record.error)) : null,
    el(
      "div",
      { class: "episode-metrics" },
      metrics.length ? el("div", { class: "chips" }, el("span", { class: "label" }, "metrics"), metrics.map(([k, v]) => chip(k, v))) : null,
      outcome.length ? el("div", { class: "chips" }, el("span", { class: "label" }, "outcome"), outcome.map(([k, v]) => chip(k, v))) : null,
    ),
    el(
      "div",
      { class: "episode-body" },
      el("div", { class: "world-panel" }, el("div", { class: "slider-row" }, slider, posLabel), el("p", { class: "muted small" }, "← → or j k move through the steps"), worldBox),
      el("div", { class: "timeline-panel" }, el("h2", null, "Timeline"), timeline),
    ),
  );
  renderWorld();
  renderTimeline(false);
  if (position > 0) requestAnimationFrame(showSelected);
}

// -- a comparison ----------------------------------------------------------------------------

async function comparePage(content, keys, query) {
  if (keys.length < 1) throw new Error("pick runs to compare on the runs page");
  const data = await getJSON("compare", { runs: keys.join(",") });
  const instance = query.get("instance");
  add(content, nav(instance ? el("a", { href: compareHref(keys) }, "compare") : "compare", instance ? `${instance}#${query.get("trial") || 0}` : null));
  add(content, el("h1", null, `Comparing ${keys.length} runs`));
  add(content, 
    table(
      ["", "run", "benchmark", "agent", "model"],
      data.runs.map((r, i) => [el("span", { class: "swatch", style: { background: colors.series[i % colors.series.length] } }), el("a", { href: runHref(r.key), class: "mono" }, r.key), r.benchmark, r.agent, r.model || "–"]),
    ),
  );
  if (instance !== null) {
    const trial = Number(query.get("trial") || 0);
    const row = data.rows.find((r) => r.instance_id === instance && r.trial === trial);
    if (!row) throw new Error(`no run of these played ${instance} trial ${trial}`);
    await sideBySide(content, data, row);
    return;
  }
  const benchmarks = new Set(data.runs.map((r) => r.benchmark));
  if (benchmarks.size > 1) add(content, el("p", { class: "error-box" }, `These runs are of ${benchmarks.size} benchmarks (${[...benchmarks].join(", ")}): they share no instance. Compare runs of one benchmark.`));
  const metricKeys = data.metrics.map((m) => m.key);
  const scored = data.metrics.find((m) => m.direction && m.direction !== "none");
  const state = { metric: (scored || data.metrics[0] || { key: "steps" }).key, onlyDiff: false, sort: undefined, desc: false };
  const holder = el("div");
  const render = () => {
    const m = state.metric;
    const raw = (cell) => (m === "steps" ? cell.steps : cell.metrics[m]);
    const value = (row, i) => {
      if (!row.cells[i]) return null;
      const v = raw(row.cells[i]);
      return typeof v === "boolean" ? Number(v) : v === undefined ? null : v;
    };
    const delta = (row) => {
      const a = value(row, 0);
      const b = value(row, 1);
      return typeof a === "number" && typeof b === "number" ? b - a : null;
    };
    const rows = data.rows.filter((row) => !state.onlyDiff || (delta(row) !== null && delta(row) !== 0));
    const columns = [
      { label: "instance", value: (r) => r.instance_id, cell: (r) => el("a", { href: compareHref(keys, r.instance_id, r.trial), class: "mono" }, r.instance_id) },
      { label: "trial", num: true, value: (r) => r.trial },
      ...data.runs.map((run, i) => ({
        label: el("span", null, el("span", { class: "swatch", style: { background: colors.series[i % colors.series.length] } }), ` ${run.agent} · ${run.model || "–"}`),
        num: true,
        value: (r) => value(r, i),
        cell: (r) => (!r.cells[i] ? el("span", { class: "muted" }, "not played") : r.cells[i].status !== "ok" ? badge("error", "bad") : formatNumber(raw(r.cells[i]))),
      })),
    ];
    const who = (r) => `${r.agent}${r.model ? ` · ${r.model}` : ""}`;
    if (data.runs.length >= 2) columns.push({ label: `Δ (${who(data.runs[1])} − ${who(data.runs[0])})`, num: true, value: delta, cell: (r) => { const d = delta(r); return d === null ? "–" : el("span", { class: d > 0 ? "pos" : d < 0 ? "neg" : "" }, `${d > 0 ? "+" : ""}${formatNumber(d)}`); } });
    holder.replaceChildren(sortableTable(columns, rows, state, (r, event) => {
      if (event.target.closest("a")) return;
      location.hash = compareHref(keys, r.instance_id, r.trial);
    }));
  };
  state.rerender = render;
  add(content, 
    el("h2", null, "Per instance"),
    el(
      "div",
      { class: "controls" },
      el("label", null, "metric ", el("select", { onchange: (e) => { state.metric = e.target.value; render(); } }, [...metricKeys, "steps"].map((k) => el("option", { value: k, selected: k === state.metric }, (data.metrics.find((m) => m.key === k) || { label: k }).label)))),
      data.runs.length >= 2 ? el("label", null, el("input", { type: "checkbox", onchange: (e) => { state.onlyDiff = e.target.checked; render(); } }), " only where the first two differ") : null,
    ),
    holder,
  );
  render();
}

async function sideBySide(content, data, row) {
  const episodes = await Promise.all(
    row.cells.map((cell, i) => (cell ? getJSON("episode", { run: data.runs[i].key, n: String(cell.n) }) : Promise.resolve(null))),
  );
  const modules = await Promise.all(episodes.map((e) => (e && e.world && e.view_script ? loadView(e.view_script) : null)));
  const longest = Math.max(0, ...episodes.map((e) => (e ? e.record.steps.length : 0)));
  let position = 0;
  const slider = el("input", { type: "range", min: 0, max: longest, value: 0, "aria-label": "position" });
  const label = el("span", { class: "muted" });
  const columns = episodes.map(() => el("div", { class: "compare-col" }));
  const render = () => {
    label.textContent = `position ${position} of ${longest}`;
    episodes.forEach((episode, i) => {
      const run = data.runs[i];
      const col = columns[i];
      if (!episode) {
        col.replaceChildren(el("h3", null, run.key), el("p", { class: "muted" }, "This run did not play this instance."));
        return;
      }
      const record = episode.record;
      const p = Math.min(position, record.steps.length);
      const world = el("div", { class: "world-view" });
      const module = modules[i];
      if (module && typeof module.renderWorld === "function") {
        try {
          module.renderWorld(world, episode.world, p, worldUI((q) => { position = q; slider.value = q; render(); }));
        } catch (err) {
          world.replaceChildren(el("p", { class: "error" }, `world view failed: ${err.message || err}`));
        }
      }
      const metrics = Object.entries(record.metrics || {}).filter(([, v]) => v === null || typeof v !== "object").slice(0, 8);
      col.replaceChildren(
        el("h3", null, el("span", { class: "swatch", style: { background: colors.series[i % colors.series.length] } }), ` ${run.agent} · ${run.model || "no model"}`),
        el("p", null, el("a", { href: episodeHref(run.key, episode.n, p) }, "open this episode"), ` · ${record.steps.length} steps · `, badge(record.status, record.status === "ok" ? "ok" : "bad")),
        el("div", { class: "chips" }, metrics.map(([k, v]) => chip(k, v))),
        world,
        el(
          "ol",
          { class: "mini-timeline", start: 0 },
          record.steps.map((s, j) =>
            el(
              "li",
              { class: `${j === p - 1 ? "selected" : ""}${s.valid ? "" : " invalid"}`, onclick: () => { position = j + 1; slider.value = position; render(); } },
              el("span", { class: "mono" }, s.action),
              s.valid ? "" : [" ", badge("invalid", "bad")],
            ),
          ),
        ),
      );
    });
  };
  slider.addEventListener("input", () => { position = Number(slider.value); render(); });
  add(content, 
    el("h2", null, `${row.instance_id} · trial ${row.trial}`),
    el("div", { class: "slider-row" }, slider, label),
    el("div", { class: "compare-grid", style: { gridTemplateColumns: `repeat(${columns.length}, minmax(0, 1fr))` } }, columns),
  );
  render();
}
