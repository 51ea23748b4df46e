// What the viewer's modules share: building elements (text from the data is
// only ever a text node or an attribute value, never HTML), the JSON
// requests, the state the URL holds, and number formats.

const SVG_NS = "http://www.w3.org/2000/svg";

// An element with attributes and children; strings become text nodes.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attributes);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttributes(node, attributes);
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setAttributes(node, attributes) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) throw new Error("handlers are added with addEventListener");
    node.setAttribute(name, value === true ? "" : String(value));
  }
}

// The URL of an API request: path and parameters, each encoded.
export function apiUrl(path, params = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return "/api/" + path + (text ? "?" + text : "");
}

// The answer of an API request as JSON; a failure throws an Error carrying
// the server's message (and a query's column). `signal` may abort it.
export async function getJson(path, params = {}, signal = undefined) {
  const response = await fetch(apiUrl(path, params), { credentials: "same-origin", signal });
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = { error: `${response.status} ${response.statusText}` };
  }
  if (!response.ok) {
    const error = new Error(body && body.error ? body.error : `${response.status} ${response.statusText}`);
    error.column = body && body.column ? body.column : 0;
    error.status = response.status;
    throw error;
  }
  return body;
}

// The state a URL holds (so a view can be shared): the query, the page, the
// record shown, its crops' seed and epoch. The token stays in the URL.
export function readState() {
  const params = new URLSearchParams(location.search);
  const number = (name, fallback) => {
    const value = Number(params.get(name));
    return params.has(name) && Number.isSafeInteger(value) && value >= 0 ? value : fallback;
  };
  return {
    q: params.get("q") || "",
    page: number("page", 0),
    record: params.has("record") ? number("record", null) : null,
    seed: number("seed", 0),
    epoch: number("epoch", 0),
  };
}

export function writeState(state, replace = false) {
  const params = new URLSearchParams(location.search);
  const set = (name, value, fallback) => {
    if (value === null || value === undefined || value === "" || value === fallback) params.delete(name);
    else params.set(name, String(value));
  };
  set("q", state.q, "");
  set("page", state.page, 0);
  set("record", state.record, null);
  set("seed", state.seed, 0);
  set("epoch", state.epoch, 0);
  const url = location.pathname + (params.toString() ? "?" + params.toString() : "");
  if (url === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
}

export function formatNumber(value) {
  if (typeof value === "string") return value;  // "nan", "inf", "-inf"
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const abs = Math.abs(value);
  return abs !== 0 && (abs < 1e-3 || abs >= 1e6) ? value.toExponential(3) : String(Number(value.toPrecision(6)));
}

export function formatBytes(bytes) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit + 1 < units.length) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

// Replaces the children of `node`.
export function fill(node, ...children) {
  node.replaceChildren();
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
