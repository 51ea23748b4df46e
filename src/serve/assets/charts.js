// The distributions: a card per field with its charts drawn in SVG. A bar
// whose records a query can select carries that query (from the server);
// clicking it filters by it. A computation that needs a scan shows its
// progress; one that reads every blob waits for a click.
import { el, fill, formatNumber, getJson, svg } from "./dom.js";

const WIDTH = 250;
const HEIGHT = 56;
const AXIS = 14;

let generation = 0;  // a newer render stops the polls of older ones
let controller = null;  // ... and aborts their requests

// At most this many distribution requests at once: a browser opens six
// connections to a server, and the grid's thumbnails need the others.
const MAX_REQUESTS = 2;
let active = 0;
const waiting = [];

async function limited(request) {
  while (active >= MAX_REQUESTS) await new Promise((resolve) => waiting.push(resolve));
  active += 1;
  try {
    return await request();
  } finally {
    active -= 1;
    const next = waiting.shift();
    if (next) next();
  }
}

function label(bar) {
  if (bar.name !== undefined) return bar.lo === bar.hi && typeof bar.lo === "number" ? `${bar.lo} ${bar.name}` : bar.name;
  return bar.lo === bar.hi ? formatNumber(bar.lo) : `${formatNumber(bar.lo)} – ${formatNumber(bar.hi)}`;
}

// An axis end: short (3 significant digits past a million).
function axis(value) {
  const n = Number(value);
  return Number.isFinite(n) && Math.abs(n) >= 1e6 ? n.toPrecision(3) : formatNumber(value);
}

function chart(data, onFilter) {
  const bars = data.bars;
  const most = Math.max(1, ...bars.map((b) => b.n));
  const width = WIDTH / Math.max(bars.length, 1);
  const drawing = svg("svg", { class: "chart", width: WIDTH, height: HEIGHT + AXIS, viewBox: `0 0 ${WIDTH} ${HEIGHT + AXIS}` });
  bars.forEach((bar, i) => {
    const height = bar.n > 0 ? Math.max(1, (HEIGHT * bar.n) / most) : 0;
    const rect = svg("rect", {
      class: bar.filter ? "bar filter" : "bar", x: i * width, y: HEIGHT - height, width: Math.max(width - (width > 3 ? 1 : 0), 0.5),
      height, "data-n": bar.n, "data-filter": bar.filter,
    }, svg("title", {}, `${label(bar)}: ${bar.n.toLocaleString("en-US")}`));
    if (bar.filter) rect.addEventListener("click", () => onFilter(bar.filter));
    drawing.append(rect);
  });
  if (bars.length) {
    const named = bars.length <= 12 && bars.some((b) => b.name !== undefined);
    drawing.append(svg("text", { x: 0, y: HEIGHT + AXIS - 2 }, named ? "" : axis(bars[0].lo)));
    const end = named ? "" : axis(bars[bars.length - 1].hi);
    drawing.append(svg("text", { x: WIDTH, y: HEIGHT + AXIS - 2, "text-anchor": "end" }, end));
  }
  const notes = [];
  for (const [key, what] of [["nan", "NaN"], ["-inf", "-inf"], ["inf", "inf"]]) {
    if (data[key]) notes.push(`${data[key].toLocaleString("en-US")} ${what}`);
  }
  const names = bars.length <= 12 && bars.some((b) => b.name !== undefined)
    ? el("div", { class: "chart-note" }, bars.map((b) => `${label(b)}: ${b.n.toLocaleString("en-US")}`).join(" · "))
    : null;
  return el("div", { class: "chart-block" },
            el("div", { class: "chart-title" }, `${data.title} (${data.count.toLocaleString("en-US")} values)`),
            drawing, names, notes.length ? el("div", { class: "chart-note" }, notes.join(", ")) : null);
}

async function load(card, body, field, q, onFilter, mine, scan) {
  let wait = 250;
  const signal = controller.signal;
  for (;;) {
    let answer;
    try {
      answer = await limited(() => getJson("distribution", { field: field.name, q, scan: scan ? 1 : "" }, signal));
    } catch (e) {
      if (mine !== generation) return;  // aborted by a newer render
      fill(body, el("div", { class: "cell-error" }, e.message));
      card.dataset.state = "error";
      return;
    }
    if (mine !== generation) return;
    card.dataset.state = answer.state;
    if (answer.state === "done") {
      const parts = answer.charts.map((c) => chart(c, onFilter));
      if (answer.note) parts.push(el("div", { class: "chart-note" }, answer.note));
      if (answer.errors) parts.push(el("div", { class: "cell-error" }, `${answer.errors} records could not be read: ${answer.error}`));
      card.querySelector(".source").textContent = answer.source ? `from the ${answer.source}` : "";
      fill(body, parts);
      return;
    }
    if (answer.state === "error") {
      fill(body, el("div", { class: "cell-error" }, answer.error));
      return;
    }
    if (answer.state === "scan_needed") {
      const button = el("button", { type: "button" }, `read every record's blob (${answer.records.toLocaleString("en-US")})`);
      button.addEventListener("click", () => load(card, body, field, q, onFilter, mine, true));
      fill(body, button);
      return;
    }
    const progress = answer.total ? el("progress", { value: answer.done, max: answer.total }) : el("progress", {});
    fill(body, progress, ` ${answer.state}: ${answer.done.toLocaleString("en-US")} read`);
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, 2000);
    if (mine !== generation) return;
  }
}

// A card per field of `overview`, each loading its distribution over the
// records `q` matches; onFilter(expression) when a bar is clicked.
// Stops the polls and requests of the cards shown (a new query is coming).
export function stopDistributions() {
  generation += 1;
  if (controller) controller.abort();
  controller = new AbortController();
}

export function renderDistributions(container, overview, q, onFilter) {
  stopDistributions();
  const mine = generation;
  fill(container);
  for (const field of overview.fields) {
    const body = el("div", { class: "loading" }, "…");
    const card = el("div", { class: "card", "data-field": field.name },
                    el("h3", {}, field.name), el("div", { class: "source" }, `${field.type}${field.indexed ? ", indexed" : ""}`),
                    body);
    container.append(card);
    load(card, body, field, q, onFilter, mine, false);
  }
}
