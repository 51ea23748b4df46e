// The viewer's page (urec serve, docs/viewer.md): the overview, the
// distributions, the grid of the records a query matches, a record's page.
// The URL holds the state (query, page, record, seed, epoch).
//
// Every string from the dataset (field and class names, values, paths,
// errors) is put into the page as a text node or an attribute value by
// dom.js's el() and svg(); no markup is ever made from data.
import { el, fill, formatBytes, getJson, readState, writeState } from "./dom.js";
import { renderDistributions, stopDistributions } from "./charts.js";
import { renderGrid } from "./grid.js";
import { showRecord } from "./record.js";

const PAGE_SIZE = 48;
const $ = (id) => document.getElementById(id);

let state = readState();
let overview = null;
let total = 0;
const timings = (window.urecTimings = {});

function when(name) {
  timings[name] = performance.now();
}

function table(head, rows) {
  return el("table", {}, el("tr", {}, head.map((h) => el("th", {}, h))), rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c)))));
}

function renderOverview() {
  const o = overview;
  $("dataset-path").textContent = o.path;
  $("dataset-facts").textContent =
    `${o.records.toLocaleString("en-US")} records · ${o.files} shard files · ${formatBytes(o.bytes.shards)}` +
    (o.version ? ` · version ${o.version}` : "") + (o.remote ? " · remote" : "");
  const fields = table(["field", "type", "shape", "indexed", ""], o.fields.map((f) => [
    f.name, f.type, f.shape.length ? `[${f.shape.join(", ")}]` : "", f.indexed ? "yes" : "", f.role || "",
  ]));
  const sizes = table(["", "bytes"], [
    ["shards", formatBytes(o.bytes.shards)], ["indexes", formatBytes(o.bytes.indexes)], ["blobs", formatBytes(o.bytes.blobs)],
    ["scalar pages", `${formatBytes(o.bytes.scalar_pages_stored)} (${formatBytes(o.bytes.scalar_pages_raw)} raw)`],
  ]);
  const segments = table(["segment", "version", "first id", "records", "shards", "fields added", "dropped"],
    o.segments.map((s, i) => [String(i), String(s.version), s.first_id.toLocaleString("en-US"),
                              s.records.toLocaleString("en-US"), String(s.shards),
                              s.field_groups.map((g) => `${g.fields.join(", ")} (v${g.version})`).join("; "),
                              s.dropped_fields.join(", ")]));
  const parts = [el("div", {}, el("h4", {}, "Fields"), fields),
                 el("div", {}, el("h4", {}, "On disk"), sizes, el("h4", {}, "Segments"), segments)];
  if (Array.isArray(o.versions) && o.versions.length) {
    parts.push(el("div", {}, el("h4", {}, "Versions"), table(["version", "committed", "tags", "records", "added", "dropped"],
      o.versions.map((v) => [
        `${v.version}${v.latest ? " (latest)" : ""}${v.opened ? " ← shown" : ""}`,
        new Date(v.committed_unix_s * 1000).toISOString().replace(".000", ""), (v.tags || []).join(", "),
        v.records !== undefined ? v.records.toLocaleString("en-US") : v.error || "",
        [v.added_records ? `${v.added_records > 0 ? "+" : ""}${v.added_records} records` : "",
         ...(v.added_fields || [])].filter(Boolean).join(", "),
        (v.dropped_fields || []).join(", "),
      ]))));
  } else if (o.versions && o.versions.error) {
    parts.push(el("div", { class: "cell-error" }, o.versions.error));
  }
  const names = o.classes.length ? o.classes.map((name, i) => el("span", { title: String(i) }, name))
    : o.categories.map((c) => el("span", { title: String(c.id) }, c.name));
  const last = el("div", { class: "overview-last" });
  if (names.length) last.append(el("h4", {}, `Classes (${names.length})`), el("div", { class: "names" }, names));
  if (o.metadata.length) {
    last.append(el("h4", {}, "Metadata"), table(["key", "bytes", "value"], o.metadata.map((m) => [
      m.key, String(m.bytes), m.text.length > 80 ? m.text.slice(0, 80) + "…" : m.text,
    ])));
  }
  parts.push(last);
  const body = $("overview-body");
  body.classList.remove("loading");
  body.classList.add("overview-columns");
  fill(body, parts);
}

function showQueryError(error) {
  const box = $("query-error");
  const input = $("query");
  if (!error) {
    box.hidden = true;
    input.removeAttribute("aria-invalid");
    return;
  }
  const [message] = error.message.split("\n");
  $("query-error-message").textContent = message;
  const column = error.column || 0;
  $("query-error-caret").textContent = column ? `${state.q}\n${" ".repeat(column - 1)}^` : "";
  box.hidden = false;
  box.dataset.column = String(column);
  input.setAttribute("aria-invalid", "true");
  if (column) input.setSelectionRange(column - 1, Math.min(column, state.q.length));
}

async function loadGrid() {
  const grid = $("grid");
  grid.dataset.state = "loading";
  let answer;
  try {
    answer = await getJson("grid", { q: state.q, page: state.page, size: PAGE_SIZE });
  } catch (e) {
    showQueryError(e);
    fill(grid);
    grid.dataset.state = "error";
    $("page-info").textContent = "";
    return;
  }
  showQueryError(null);
  total = answer.total;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  $("page-info").textContent = `page ${state.page + 1} of ${pages.toLocaleString("en-US")} · ` +
    `${total.toLocaleString("en-US")} ${state.q ? "matching" : ""} records`;
  $("prev").disabled = state.page === 0;
  $("next").disabled = state.page + 1 >= pages;
  const drawn = renderGrid(grid, overview, answer, openRecord);
  grid.dataset.total = String(total);
  when("grid");
  await drawn;
  when("thumbnails");
  grid.dataset.state = "ready";
}

function loadDistributions() {
  $("distributions-scope").textContent = state.q ? `of the records matching ${state.q}` : "of every record";
  renderDistributions($("charts"), overview, state.q, (filter) => applyQuery(state.q ? `(${state.q}) and ${filter}` : filter));
}

async function applyQuery(q) {
  when("query");
  stopDistributions();  // their requests would hold connections the new page's thumbnails need
  state.q = q.trim();
  state.page = 0;
  $("query").value = state.q;
  writeState(state);
  await loadGrid();  // the records first: the distributions' scans would compete with their thumbnails
  loadDistributions();
}

function openRecord(id) {
  state.record = id;
  writeState(state);
  showPanel();
}

function showPanel() {
  const panel = $("record");
  if (state.record === null) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const recordState = { seed: state.seed, epoch: state.epoch, onChange: () => {
    state.seed = recordState.seed;
    state.epoch = recordState.epoch;
    writeState(state, true);
  } };
  showRecord($("record-body"), $("record-title"), overview, state.record, recordState);
}

function wire() {
  $("query-form").addEventListener("submit", (event) => {
    event.preventDefault();
    applyQuery($("query").value);
  });
  $("query-clear").addEventListener("click", () => applyQuery(""));
  $("prev").addEventListener("click", () => {
    state.page = Math.max(0, state.page - 1);
    writeState(state);
    loadGrid();
  });
  $("next").addEventListener("click", () => {
    state.page += 1;
    writeState(state);
    loadGrid();
  });
  $("record-close").addEventListener("click", () => {
    state.record = null;
    writeState(state);
    showPanel();
  });
  for (const [button, step] of [["record-prev", -1], ["record-next", 1]]) {
    $(button).addEventListener("click", () => {
      const next = state.record + step;
      if (next >= 0 && next < overview.records) openRecord(next);
    });
  }
  window.addEventListener("popstate", () => {
    const before = state;
    state = readState();
    $("query").value = state.q;
    if (before.q !== state.q) stopDistributions();
    const grid = before.q !== state.q || before.page !== state.page ? loadGrid() : null;
    if (before.q !== state.q) Promise.resolve(grid).then(loadDistributions);
    showPanel();
  });
}

async function start() {
  wire();
  $("query").value = state.q;
  try {
    overview = await getJson("overview");
  } catch (e) {
    fill($("overview-body"), el("div", { class: "cell-error" }, e.message));
    document.body.dataset.state = "error";
    return;
  }
  renderOverview();
  when("overview");
  showPanel();
  await loadGrid();  // first the page of records, then the distributions
  loadDistributions();
  document.body.dataset.state = "ready";
}

start();
