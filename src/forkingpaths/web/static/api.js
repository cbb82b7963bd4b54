// Where the viewer's data comes from: the server's JSON, or the files of a static bundle.

export const bundled = typeof window !== "undefined" && Boolean(window.FP_BUNDLE);

// The key of a request in a bundle's manifest: endpoint and parameters sorted by name.
export function requestKey(endpoint, params) {
  const names = Object.keys(params || {}).sort();
  return `${endpoint}?${names.map((n) => `${n}=${params[n]}`).join("&")}`;
}

const pending = new Map();

function loadBundled(key) {
  const file = window.FP_BUNDLE.files[key];
  if (!file) return Promise.reject(new Error(`not in this bundle: ${key}`));
  if (!pending.has(key)) {
    pending.set(
      key,
      new Promise((resolve, reject) => {
        window.FP_DATA_WAITERS = window.FP_DATA_WAITERS || {};
        window.FP_DATA_WAITERS[key] = resolve;
        window.FP_DATA =
          window.FP_DATA ||
          ((k, value) => {
            const waiter = window.FP_DATA_WAITERS[k];
            if (waiter) waiter(value);
          });
        const script = document.createElement("script");
        script.src = file;
        script.onerror = () => reject(new Error(`cannot read ${file}`));
        document.head.appendChild(script);
      }),
    );
  }
  return pending.get(key);
}

export async function getJSON(endpoint, params) {
  if (bundled) return loadBundled(requestKey(endpoint, params));
  const query = new URLSearchParams(params || {}).toString();
  const response = await fetch(`api/${endpoint}${query ? `?${query}` : ""}`, { cache: "no-store" });
  let body;
  try {
    body = await response.json();
  } catch (err) {
    throw new Error(`${endpoint}: the server answered ${response.status} without JSON`);
  }
  if (!response.ok) throw new Error(body.error || `${endpoint}: HTTP ${response.status}`);
  return body;
}

// The episode list arrives as columns and rows; the pages read it as one object per episode.
export function episodeRows(payload) {
  const columns = payload.columns;
  return payload.rows.map((row) => {
    const episode = { metrics: {}, outcome: {} };
    columns.forEach((column, i) => {
      const dot = column.indexOf(".");
      if (dot < 0) episode[column] = row[i];
      else if (row[i] !== null && row[i] !== undefined) episode[column.slice(0, dot)][column.slice(dot + 1)] = row[i];
    });
    return episode;
  });
}

export function plotURL(run, name) {
  if (bundled) return window.FP_BUNDLE.plots[`${run}/${name}`] || "";
  return `files/plot?${new URLSearchParams({ run, name }).toString()}`;
}

const views = new Map();

// A benchmark's world-view module: imported from the server, or registered by the bundle.
export async function loadView(url) {
  if (!url) return null;
  if (bundled) return (window.FP_MODULES || {})[url] || null;
  if (!views.has(url)) views.set(url, import(new URL(url, document.baseURI).href));
  return views.get(url);
}
