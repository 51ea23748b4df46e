// The grid of records: each record a cell with its image (a thumbnail the
// server decoded at that size), the boxes it holds drawn over it, and a
// short form of every other field. A record that could not be read is a
// cell holding its error. A page's thumbnails come in one picture, an atlas
// (/api/thumbs, src/serve/images.h), each cell drawn from its part of it.
import { apiUrl, el, fill, formatBytes, formatNumber, getJson, svg } from "./dom.js";

// The size a width x height image is shown at in a size x size square:
// aspect kept, never enlarged (the server's FitInSquare, src/serve/images.cc).
export function fitInSquare(width, height, size) {
  const scale = Math.min(1, size / width, size / height);
  const fit = (n) => Math.min(Math.max(Math.round(n * scale), 1), Math.max(n, 1));
  return [fit(width), fit(height)];
}

// `image` (an element shown at shown_width x shown_height) with `boxes`
// ([x, y, w, h] in the frame_width x frame_height frame of the image) drawn
// over it.
function framed(image, shownWidth, shownHeight, frameWidth, frameHeight, boxes) {
  const node = el("div", { class: "picture" }, image);
  if (boxes && boxes.length) {
    const overlay = svg("svg", {
      class: "boxes", width: shownWidth, height: shownHeight, viewBox: `0 0 ${frameWidth} ${frameHeight}`,
      preserveAspectRatio: "none",
    });
    const fontSize = (11 * frameWidth) / shownWidth;
    for (const box of boxes) {
      const [x, y, w, h] = box.b.map(Number);
      if (![x, y, w, h].every(Number.isFinite)) continue;
      overlay.append(svg("rect", { class: "box", x, y, width: w, height: h }));
      const label = box.name !== undefined ? box.name : box.label !== undefined ? String(box.label) : "";
      if (label) {
        overlay.append(svg("text", { class: "box-label", x, y: Math.max(y - fontSize * 0.2, fontSize), "font-size": fontSize }, label));
      }
    }
    node.append(overlay);
  }
  return node;
}

// The image at `src` shown as framed() shows it; one the server could not
// make is its error, as text, in its place.
export function picture(src, shownWidth, shownHeight, frameWidth, frameHeight, boxes, alt) {
  const image = el("img", { src, width: shownWidth, height: shownHeight, alt, decoding: "async" });
  const node = framed(image, shownWidth, shownHeight, frameWidth, frameHeight, boxes);
  image.addEventListener("error", async () => {
    let message = "the image could not be shown";
    try {
      const response = await fetch(src, { credentials: "same-origin" });
      const body = await response.json();
      if (body && body.error) message = body.error;
    } catch (e) {
      // keep the general message
    }
    node.replaceWith(el("div", { class: "image-error" }, message));
  });
  return node;
}

// A 2-D array's heat map: cells of `heat` ({rows, cols, cells}) coloured
// from the least value (dark blue) to the greatest (yellow).
export function heatMap(heat) {
  const canvas = el("canvas", { class: "heat", width: heat.cols, height: heat.rows });
  const values = heat.cells.filter((v) => typeof v === "number");
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const context = canvas.getContext("2d");
  const image = context.createImageData(heat.cols, heat.rows);
  heat.cells.forEach((v, i) => {
    if (typeof v !== "number") return;
    const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    image.data.set([Math.round(40 + 215 * t), Math.round(30 + 190 * t), Math.round(120 - 80 * t), 255], i * 4);
  });
  context.putImageData(image, 0, 0);
  return canvas;
}

// A field's summary as a short text (and a heat map for a 2-D array).
export function summaryNode(summary, field) {
  if (summary.error) return el("span", { class: "cell-error" }, summary.error);
  if (field.kind === "bytes") {
    const parts = [summary.format || "bytes"];
    if (summary.width) parts.push(`${summary.width}×${summary.height}`);
    parts.push(formatBytes(summary.bytes));
    return el("span", {}, parts.join(" · "));
  }
  if (field.kind === "string") return el("span", {}, summary.v + (summary.cut ? "…" : ""));
  if (summary.dtype) {
    let text = `${summary.dtype}[${summary.shape.join(", ")}]`;
    if (summary.min !== undefined) text += ` ${formatNumber(summary.min)}..${formatNumber(summary.max)}`;
    if (summary.v && field.shape.length === 1) text += ` [${summary.v.map(formatNumber).join(", ")}]`;
    return el("span", {}, text, summary.heat ? el("br") : null, summary.heat ? heatMap(summary.heat) : null);
  }
  const value = typeof summary.v === "boolean" ? String(summary.v) : formatNumber(summary.v);
  return el("span", {}, value + (summary.name !== undefined ? ` ${summary.name}` : ""));
}

// The field shown as the record's image: the first bytes field holding a
// JPEG or PNG in this record.
export function imageFieldOf(overview, fields) {
  return fields.findIndex((f, i) => overview.fields[i].kind === "bytes" && f.format && f.width && !f.error);
}

// A record's cell; its thumbnail, if it has one, is a canvas that
// drawAtlases() fills, listed in `thumbnails` under the image field's name.
function cell(overview, record, open, thumbnails) {
  const id = el("div", { class: "id" }, `#${record.id}`);
  if (record.error) {
    return el("div", { class: "cell bad", "data-id": record.id }, id, el("div", { class: "cell-error" }, record.error));
  }
  const node = el("div", { class: "cell", "data-id": record.id }, id);
  const image = imageFieldOf(overview, record.fields);
  if (image >= 0) {
    const summary = record.fields[image];
    const [width, height] = fitInSquare(summary.width, summary.height, overview.thumbnail_size);
    const canvas = el("canvas", { class: "thumb", width, height, role: "img", "aria-label": `record ${record.id}`,
                                  "data-state": "loading" });
    const shown = framed(canvas, width, height, summary.width, summary.height, record.boxes);
    node.append(shown);
    const name = overview.fields[image].name;
    if (!thumbnails.has(name)) thumbnails.set(name, []);
    thumbnails.get(name).push({ id: record.id, canvas, shown });
  }
  record.fields.forEach((summary, i) => {
    if (i === image) return;
    const field = overview.fields[i];
    node.append(el("div", { class: "row" }, el("span", { class: "name", title: field.name }, field.name),
                   el("span", { class: "value" }, summaryNode(summary, field))));
  });
  node.addEventListener("click", () => open(record.id));
  return node;
}

function showThumbnailError(thumbnail, message) {
  thumbnail.shown.replaceWith(el("div", { class: "image-error" }, message));
}

// One field's thumbnails from their atlas: the picture first (the server
// makes it, and keeps its cells), then, while it arrives and is decoded,
// its cells (and their errors), each drawn from its part of the picture.
async function drawAtlas(field, thumbnails) {
  const params = { ids: thumbnails.map((t) => t.id).join(","), field };
  const src = apiUrl("thumbs.png", params);
  let layout;
  let picture;
  try {
    const response = await fetch(src, { credentials: "same-origin" });
    const decoded = response.ok ? response.blob().then((blob) => createImageBitmap(blob)) : Promise.resolve(null);
    [layout, picture] = await Promise.all([getJson("thumbs", params), decoded.catch(() => null)]);
    if (!picture) throw new Error("the thumbnails could not be shown");
  } catch (e) {
    thumbnails.forEach((t) => showThumbnailError(t, e.message));
    return;
  }
  layout.cells.forEach((at, k) => {
    const thumbnail = thumbnails[k];
    if (at.error) {
      showThumbnailError(thumbnail, at.error);
      return;
    }
    const { canvas } = thumbnail;
    canvas.width = at.width;
    canvas.height = at.height;
    canvas.getContext("2d").drawImage(picture, at.x, at.y, at.width, at.height, 0, 0, at.width, at.height);
    Object.assign(canvas.dataset, { atlas: src, x: at.x, y: at.y, state: "drawn" });
  });
  picture.close();
}

// Fills `container` with the cells of `grid` (an /api/grid answer); `open`
// is called with a record's id when its cell is clicked. Resolves when
// every thumbnail is drawn (or shows its error).
export function renderGrid(container, overview, grid, open) {
  const thumbnails = new Map();
  fill(container, grid.records.map((record) => cell(overview, record, open, thumbnails)));
  return Promise.all([...thumbnails].map(([field, list]) => drawAtlas(field, list)));
}
