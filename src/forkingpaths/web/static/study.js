// The study's pages (forkingpaths study): sign-in, the first admin, a person's queue, the admin's
// people and assignments; play and annotation pages come from their own modules.
import { add, badge, colors, diff, el, formatNumber, lineChart, svg, table, textBlock } from "./ui.js";

const ROLES = ["viewer", "player", "annotator", "admin"];
const KINDS = { play: "play", metric2: "rate judged steps (Metric 2)", validity: "check built instances", summary: "write a summary" };

// What the server says of the signed-in person: {user, csrf}, null when signed out, or
// undefined when this server runs no study (plain `forkingpaths view`).
export async function whoAmI() {
  const response = await fetch("api/study/auth/me", { cache: "no-store", credentials: "same-origin" });
  if (response.status === 404) return undefined;
  if (!response.ok) return null;
  return response.json();
}

export function makeContext(session, go) {
  const api = async (method, path, body) => {
    const response = await fetch(`api/study/${path}`, {
      method,
      cache: "no-store",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": (session && session.csrf) || "" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = {};
    try {
      data = await response.json();
    } catch (err) {
      data = { error: `HTTP ${response.status}` };
    }
    if (response.status === 401) go("#/login");
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    return data;
  };
  return {
    api,
    go,
    user: session ? session.user : null,
    ui: { el, svg, add, badge, table, lineChart, diff, textBlock, colors, formatNumber },
  };
}

export function studyBar(session, go) {
  if (!session || !session.user) return el("div");
  const user = session.user;
  const links = [el("a", { href: "#/queue" }, "my queue")];
  if (user.role === "viewer" || user.role === "admin") links.push(el("a", { href: "#/" }, "runs"));
  if (user.role === "admin") links.push(el("a", { href: "#/admin" }, "people and assignments"));
  return el(
    "div",
    { class: "study-bar" },
    links.map((a) => [a, " · "]),
    el("span", { class: "muted" }, `${user.name} (${user.role}) `),
    el(
      "button",
      {
        class: "link",
        onclick: async () => {
          await makeContext(session, go).api("POST", "auth/logout", {});
          go("#/login");
          location.reload();
        },
      },
      "sign out",
    ),
  );
}

function form(fields, label, onSubmit) {
  const message = el("p", { class: "error", role: "alert" });
  const inputs = {};
  const node = el(
    "form",
    {
      class: "study-form",
      onsubmit: async (event) => {
        event.preventDefault();
        message.textContent = "";
        const values = {};
        for (const [name, input] of Object.entries(inputs)) values[name] = input.value;
        try {
          await onSubmit(values);
        } catch (err) {
          message.textContent = String(err.message || err);
        }
      },
    },
    fields.map(([name, title, type, options]) => {
      const input =
        type === "select"
          ? el("select", { name }, options.map((o) => el("option", { value: o }, o)))
          : el("input", { name, type: type || "text", autocomplete: type === "password" ? "current-password" : "off", required: true });
      inputs[name] = input;
      return el("label", null, el("span", null, title), input);
    }),
    el("button", { class: "primary", type: "submit" }, label),
    message,
  );
  return node;
}

export async function loginPage(content, ctx) {
  add(
    content,
    el("h1", null, "Sign in"),
    el("p", { class: "muted" }, "This viewer runs a study: sign in with the name and password your study's admin gave you."),
    form([["name", "name"], ["password", "password", "password"]], "Sign in", async (values) => {
      const signed = await ctx.api("POST", "auth/login", values);
      location.hash = signed.user && signed.user.role === "admin" ? "#/admin" : "#/queue";
      location.reload();
    }),
  );
}

export async function setupPage(content, ctx, token) {
  add(
    content,
    el("h1", null, "Create the study's admin"),
    el("p", { class: "muted" }, "The link printed at the first start makes the first account, once."),
    form([["name", "admin name"], ["password", "password (8 or more characters)", "password"]], "Create", async (values) => {
      await ctx.api("POST", "auth/setup", { ...values, token });
      location.hash = "#/admin";
      location.reload();
    }),
  );
}

export async function queuePage(content, ctx) {
  const data = await ctx.api("GET", "queue");
  const items = data.assignments || [];
  add(content, el("h1", null, "My queue"));
  if (!items.length) {
    add(content, el("p", { class: "muted" }, "Nothing assigned to you yet: your study's admin assigns instances and items."));
    return;
  }
  const byKind = {};
  for (const a of items) (byKind[a.kind] = byKind[a.kind] || []).push(a);
  for (const [kind, list] of Object.entries(byKind)) {
    const open = list.filter((a) => !a.done).length;
    add(content, el("h2", null, `${KINDS[kind] || kind} · ${open} of ${list.length} to do`));
    if (kind === "play" || kind === "summary") {
      add(
        content,
        table(
          ["benchmark", "instance", "status", ""],
          list.map((a) => [
            a.benchmark,
            el("span", { class: "mono" }, a.item),
            a.done ? badge("done", "ok") : badge("to do", "info"),
            a.done ? "" : el("a", { class: "button", href: `#/play/${encodeURIComponent(a.benchmark)}/${encodeURIComponent(a.item)}` }, "play"),
          ]),
        ),
      );
    } else {
      add(content, el("p", null, el("a", { class: "button", href: `#/annotate/${encodeURIComponent(kind)}` }, open ? "start" : "review")));
    }
  }
}

export async function adminPage(content, ctx) {
  const [users, assigned] = await Promise.all([ctx.api("GET", "admin/users"), ctx.api("GET", "admin/assignments")]);
  const reload = () => {
    content.replaceChildren();
    adminPage(content, ctx);
  };
  add(
    content,
    el("h1", null, "People and assignments"),
    el("h2", null, "People"),
    table(["name", "role"], (users.users || []).map((u) => [u.name, u.role])),
    el("h3", null, "Add a person"),
    form(
      [
        ["name", "name"],
        ["password", "first password (8 or more characters)", "password"],
        ["role", "role", "select", ROLES],
      ],
      "Add",
      async (values) => {
        await ctx.api("POST", "admin/users", values);
        reload();
      },
    ),
    el("h2", null, "Annotation items and exports"),
    el(
      "p",
      null,
      el("a", { href: "#/annotate/metric2" }, "MUTATE Metric 2: judged steps, ratings, Table 10 export"),
      " · ",
      el("a", { href: "#/annotate/validity" }, "CreativeBench: built instances, validity export"),
    ),
    el("h3", null, "Reset a password"),
    el("p", { class: "muted" }, "Also ends the person's sessions and lifts a lock after wrong passwords."),
    form(
      [
        ["name", "name"],
        ["password", "new password (8 or more characters)", "password"],
      ],
      "Reset",
      async (values) => {
        await ctx.api("POST", "admin/password", values);
        reload();
      },
    ),
    el("h2", null, "Assign"),
    el("p", { class: "muted" }, "Items: instance ids to play, one per line (or the item keys the annotation pages list)."),
    assignForm(ctx, users.users || [], reload),
    el("h2", null, "Assignments"),
    table(
      ["person", "kind", "benchmark", "item", "done", ""],
      (assigned.assignments || []).map((a) => [
        a.user,
        KINDS[a.kind] || a.kind,
        a.benchmark,
        el("span", { class: "mono" }, a.item),
        a.done ? "yes" : "no",
        el(
          "button",
          {
            class: "link",
            title: "take this assignment back",
            onclick: async () => {
              await ctx.api("POST", "admin/unassign", { id: a.id });
              reload();
            },
          },
          "remove",
        ),
      ]),
    ),
  );
}

function assignForm(ctx, users, done) {
  const user = el("select", { name: "user" }, users.map((u) => el("option", { value: u.name }, `${u.name} (${u.role})`)));
  const kind = el("select", { name: "kind" }, Object.keys(KINDS).map((k) => el("option", { value: k }, KINDS[k])));
  const benchmark = el("input", { name: "benchmark", placeholder: "griddag, eeb, escape, turtlesoup, creativebench" });
  const items = el("textarea", { name: "items", rows: 4, placeholder: "low-easy-s0\nmaze-l1-000" });
  const message = el("p", { class: "error", role: "alert" });
  return el(
    "form",
    {
      class: "study-form",
      onsubmit: async (event) => {
        event.preventDefault();
        message.textContent = "";
        try {
          const list = items.value.split("\n").map((s) => s.trim()).filter(Boolean);
          await ctx.api("POST", "admin/assign", { user: user.value, kind: kind.value, benchmark: benchmark.value.trim(), items: list });
          done();
        } catch (err) {
          message.textContent = String(err.message || err);
        }
      },
    },
    el("label", null, el("span", null, "person"), user),
    el("label", null, el("span", null, "what"), kind),
    el("label", null, el("span", null, "benchmark"), benchmark),
    el("label", null, el("span", null, "items"), items),
    el("button", { class: "primary", type: "submit" }, "Assign"),
    message,
  );
}
