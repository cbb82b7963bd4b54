// DOM helpers of the viewer: every text a run holds becomes a text node, never markup.

export const colors = {
  ok: "#1a7f37",
  bad: "#cf222e",
  warn: "#9a6700",
  info: "#0969da",
  muted: "#6e7781",
  case: ["#888888", "#d73a49", "#e36209", "#6f42c1", "#0366d6"],
  series: ["#0969da", "#cf222e", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#57606a"],
};

const SVG_NS = "http://www.w3.org/2000/svg";
// A link stays on this app (or goes to a web page): no other scheme, no `//host` either.
const SAFE_URL = /^(https?:\/\/|#|\/(?![\/\\])|\.\/|[a-zA-Z0-9_.-]+(\/|\?|$))/;
const MAX_EDITS = 2000;

function applyAttrs(node, attrs, isSvg) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    const key = name.toLowerCase();
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "style" && typeof value === "object") {
      for (const [prop, v] of Object.entries(value)) {
        if (prop.startsWith("--")) node.style.setProperty(prop, String(v));
        else node.style[prop] = v;
      }
    } else if (key === "class" && !isSvg) {
      node.className = value;
    } else if (key === "style") {
      node.style.cssText = String(value);
    } else if (key === "srcdoc") {
      continue;
    } else if (key.startsWith("on")) {
      // An event handler given as text would run it: refused.
      continue;
    } else if ((key === "href" || key === "src" || key === "xlink:href") && !SAFE_URL.test(String(value))) {
      continue;
    } else if (!isSvg && (key === "value" || key === "checked" || key === "selected")) {
      node[key] = value;
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
}

function appendChildren(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) appendChildren(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

// Append children to a node as `el` does (null and false skipped, arrays flattened).
export function add(node, ...children) {
  appendChildren(node, children);
  return node;
}

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  applyAttrs(node, attrs, false);
  appendChildren(node, children);
  return node;
}

export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  applyAttrs(node, attrs, true);
  appendChildren(node, children);
  return node;
}

export function badge(text, kind) {
  return el("span", { class: `badge badge-${kind || "muted"}` }, text);
}

export function table(headers, rows, options) {
  const opts = options || {};
  return el(
    "table",
    { class: `fp-table ${opts.className || ""}` },
    el("thead", null, el("tr", null, headers.map((h) => el("th", null, h)))),
    el(
      "tbody",
      null,
      rows.map((row) =>
        el(
          "tr",
          null,
          row.map((cell) => el("td", { class: typeof cell === "number" ? "num" : "" }, cell)),
        ),
      ),
    ),
  );
}

export function formatNumber(value, digits) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return String(value);
  // Up to `digits` decimals, trailing zeros dropped: 14.000000000000002 reads 14, 241.6 reads 241.6.
  const d = digits === undefined ? 4 : digits;
  return value.toLocaleString("en-US", { maximumFractionDigits: Math.abs(value) < 1000 ? d : 1 });
}

// A line chart of series indexed by position; `marker` draws the current position, a click
// reports the position under the pointer.
export function lineChart(options) {
  const series = (options.series || []).filter((s) => s && s.values && s.values.length);
  const width = options.width || 360;
  const height = options.height || 160;
  const pad = { left: 44, right: 10, top: 10, bottom: 30 };
  const legendHeight = series.length > 1 ? 16 : 0;
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom - legendHeight;
  const n = Math.max(1, ...series.map((s) => s.values.length));
  const ys = series.flatMap((s) => s.values.filter((v) => typeof v === "number" && isFinite(v)));
  let lo = typeof options.yMin === "number" ? options.yMin : ys.length ? Math.min(...ys) : 0;
  let hi = typeof options.yMax === "number" ? options.yMax : ys.length ? Math.max(...ys) : 1;
  if (lo === hi) {
    lo -= 1;
    hi += 1;
  }
  const x = (i) => pad.left + (n <= 1 ? 0 : (i / (n - 1)) * plotW);
  const y = (v) => pad.top + legendHeight + plotH - ((v - lo) / (hi - lo)) * plotH;
  const root = svg("svg", {
    viewBox: `0 0 ${width} ${height}`,
    width: "100%",
    class: "fp-chart",
    role: "img",
    "aria-label": options.yLabel || "chart",
  });
  root.appendChild(svg("rect", { x: pad.left, y: pad.top + legendHeight, width: plotW, height: plotH, fill: "#fafbfc", stroke: "#d0d7de" }));
  for (const v of [lo, (lo + hi) / 2, hi]) {
    root.appendChild(svg("text", { x: pad.left - 4, y: y(v) + 4, "text-anchor": "end", "font-size": 10, fill: "#57606a" }, formatNumber(Math.round(v * 100) / 100, 2)));
  }
  root.appendChild(svg("text", { x: pad.left, y: height - 4, "font-size": 10, fill: "#57606a" }, "0"));
  root.appendChild(svg("text", { x: pad.left + plotW, y: height - 4, "font-size": 10, "text-anchor": "end", fill: "#57606a" }, String(n - 1)));
  if (options.xLabel) root.appendChild(svg("text", { x: pad.left + plotW / 2, y: height - 4, "font-size": 10, "text-anchor": "middle", fill: "#57606a" }, options.xLabel));
  if (options.yLabel) root.appendChild(svg("text", { x: 10, y: pad.top + legendHeight + plotH / 2, "font-size": 10, "text-anchor": "middle", fill: "#57606a", transform: `rotate(-90 10 ${pad.top + legendHeight + plotH / 2})` }, options.yLabel));
  series.forEach((s, k) => {
    const color = s.color || colors.series[k % colors.series.length];
    const points = s.values
      .map((v, i) => (typeof v === "number" && isFinite(v) ? `${x(i).toFixed(1)},${y(v).toFixed(1)}` : null))
      .filter(Boolean)
      .join(" ");
    root.appendChild(svg("polyline", { points, fill: "none", stroke: color, "stroke-width": 1.6 }, svg("title", null, s.name || "")));
    if (series.length > 1) {
      const lx = pad.left + k * 110;
      root.appendChild(svg("rect", { x: lx, y: 2, width: 10, height: 8, fill: color }));
      root.appendChild(svg("text", { x: lx + 14, y: 10, "font-size": 10, fill: "#24292f" }, s.name || ""));
    }
  });
  if (typeof options.marker === "number") {
    const mx = x(Math.min(Math.max(options.marker, 0), n - 1));
    root.appendChild(svg("line", { x1: mx, x2: mx, y1: pad.top + legendHeight, y2: pad.top + legendHeight + plotH, stroke: "#24292f", "stroke-dasharray": "3 2" }));
  }
  if (typeof options.onSeek === "function") {
    root.style.cursor = "pointer";
    root.addEventListener("click", (event) => {
      const box = root.getBoundingClientRect();
      const px = ((event.clientX - box.left) / box.width) * width;
      const i = n <= 1 ? 0 : Math.round(((px - pad.left) / plotW) * (n - 1));
      options.onSeek(Math.min(Math.max(i, 0), n - 1));
    });
  }
  return root;
}

// A line diff (Myers' algorithm on lines, common head and tail cut first).
export function diffLines(a, b) {
  const A = String(a || "").split("\n");
  const B = String(b || "").split("\n");
  let head = 0;
  while (head < A.length && head < B.length && A[head] === B[head]) head++;
  let tail = 0;
  while (tail < A.length - head && tail < B.length - head && A[A.length - 1 - tail] === B[B.length - 1 - tail]) tail++;
  const a2 = A.slice(head, A.length - tail);
  const b2 = B.slice(head, B.length - tail);
  const middle = myers(a2, b2);
  const out = [];
  for (let i = 0; i < head; i++) out.push([" ", A[i]]);
  out.push(...middle);
  for (let i = A.length - tail; i < A.length; i++) out.push([" ", A[i]]);
  return out;
}

function myers(a, b) {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const plain = () => [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  // The work grows with the square of the edits: past MAX_EDITS the texts are shown whole.
  const v = new Map([[1, 0]]);
  const trace = [];
  for (let d = 0; d <= Math.min(max, MAX_EDITS); d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      let xx = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1)) ? v.get(k + 1) ?? 0 : (v.get(k - 1) ?? 0) + 1;
      let yy = xx - k;
      while (xx < n && yy < m && a[xx] === b[yy]) {
        xx++;
        yy++;
      }
      v.set(k, xx);
      if (xx >= n && yy >= m) return backtrack(trace, a, b, d);
    }
  }
  return plain();
}

function backtrack(trace, a, b, dEnd) {
  const out = [];
  let xx = a.length;
  let yy = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = xx - yy;
    const prevK = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1)) ? k + 1 : k - 1;
    const prevX = v.get(prevK) ?? 0;
    const prevY = prevX - prevK;
    while (xx > prevX && yy > prevY) {
      out.push([" ", a[xx - 1]]);
      xx--;
      yy--;
    }
    if (xx === prevX) out.push(["+", b[yy - 1]]);
    else out.push(["-", a[xx - 1]]);
    xx = prevX;
    yy = prevY;
  }
  while (xx > 0 && yy > 0) {
    out.push([" ", a[xx - 1]]);
    xx--;
    yy--;
  }
  return out.reverse();
}

export function diff(oldText, newText) {
  const lines = diffLines(oldText, newText);
  return el(
    "pre",
    { class: "fp-diff mono" },
    lines.map(([op, text]) => el("div", { class: op === "+" ? "diff-add" : op === "-" ? "diff-del" : "diff-same" }, `${op} ${text}`)),
  );
}

// A block of untrusted text: kept as text, long lines wrapped, very long texts folded.
export function textBlock(text, options) {
  const value = String(text ?? "");
  const limit = (options && options.limit) || 20000;
  if (value.length <= limit) return el("pre", { class: "fp-text" }, value);
  const shown = el("pre", { class: "fp-text" }, value.slice(0, limit));
  const more = el(
    "button",
    {
      class: "link",
      onclick: () => {
        shown.textContent = value;
        more.remove();
      },
    },
    `show all ${value.length.toLocaleString("en-US")} characters`,
  );
  return el("div", null, shown, more);
}
