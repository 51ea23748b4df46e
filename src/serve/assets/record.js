// A record's page: its image with its boxes, every field's value, the crops
// the training transform feeds for a seed and epoch (as `urec show` draws
// them: the loader's own decoder, boxes mapped as the loader maps them), the
// raw values as JSON and the `urec cat` command that prints them.
import { apiUrl, el, fill, getJson } from "./dom.js";
import { fitInSquare, heatMap, imageFieldOf, picture, summaryNode } from "./grid.js";

const LARGE = 512;
const CROP = 160;
const CROPS = 4;

// The values as JSON text, keyed by field name (built as text: a field
// named __proto__ stays a field).
function rawJson(overview, record) {
  const lines = record.fields.map((value, i) => `  ${JSON.stringify(overview.fields[i].name)}: ${JSON.stringify(value)}`);
  return `{\n  "id": ${record.id},\n${lines.join(",\n")}\n}`;
}

function valueNode(value, field) {
  if (value.error) return el("span", { class: "cell-error" }, value.error);
  if (field.kind === "string") return el("pre", {}, value.v + (value.cut ? `\n… (${value.bytes} bytes in all)` : ""));
  if (value.dtype) {
    const parts = [summaryNode({ ...value, v: undefined, heat: undefined }, field)];
    if (value.heat) parts.push(el("div", {}, heatMap(value.heat)));
    if (value.v !== undefined) parts.push(el("pre", {}, JSON.stringify(value.v)));
    if (value.head !== undefined) parts.push(el("pre", {}, `first ${value.head.length} of ${value.count}: ${JSON.stringify(value.head)}`));
    return el("div", {}, parts);
  }
  if (field.kind === "bytes") {
    return el("div", {}, summaryNode(value, field), value.head ? el("pre", {}, value.head) : null);
  }
  return summaryNode(value, field);
}

async function showCrops(container, overview, record, imageField, state) {
  const controls = el("div", { class: "crop-controls" });
  const seed = el("input", { type: "number", min: 0, value: state.seed, "aria-label": "seed" });
  const epoch = el("input", { type: "number", min: 0, value: state.epoch, "aria-label": "epoch" });
  const transform = el("select", { "aria-label": "transform" },
                       el("option", { value: "train" }, "train (RandomResizedCrop + flip)"),
                       el("option", { value: "val" }, "val (Resize + CenterCrop)"));
  const apply = el("button", { type: "button" }, "show");
  controls.append("seed ", seed, " epoch ", epoch, " ", transform, apply);
  const crops = el("div", { class: "crops" });
  container.append(controls, crops);
  const draw = async () => {
    state.seed = Math.max(0, Number(seed.value) || 0);
    state.epoch = Math.max(0, Number(epoch.value) || 0);
    const params = { id: record.id, field: overview.fields[imageField].name, seed: state.seed, epoch: state.epoch,
                     transform: transform.value, size: CROP };
    try {
      const answer = await getJson("crops", { ...params, count: CROPS });
      fill(crops, answer.crops.map((crop) => {
        const w = crop.window;
        return el("figure", { class: "crop" },
                  picture(apiUrl("crop", { ...params, epoch: crop.epoch }), CROP, CROP, CROP, CROP, crop.boxes,
                          `epoch ${crop.epoch}`),
                  el("figcaption", {}, `epoch ${crop.epoch}: ${w.width}×${w.height} at ${w.x},${w.y}${w.flip ? ", flipped" : ""}`));
      }));
    } catch (e) {
      fill(crops, el("div", { class: "cell-error" }, e.message));
    }
    state.onChange();
  };
  apply.addEventListener("click", draw);
  await draw();
}

// Shows record `id` in `panel`'s body; `state` holds seed and epoch and
// onChange (to keep them in the URL).
export async function showRecord(body, title, overview, id, state) {
  title.textContent = `record ${id}`;
  fill(body, el("div", { class: "loading" }, "loading…"));
  let record;
  try {
    record = await getJson("record", { id });
  } catch (e) {
    fill(body, el("div", { class: "cell-error" }, e.message));
    return;
  }
  const parts = [];
  if (record.error) {
    parts.push(el("div", { class: "cell-error" }, record.error));
  } else {
    const image = imageFieldOf(overview, record.fields);
    if (image >= 0) {
      const v = record.fields[image];
      const [width, height] = fitInSquare(v.width, v.height, LARGE);
      parts.push(picture(apiUrl("thumb", { id, field: overview.fields[image].name, size: LARGE }), width, height,
                         v.width, v.height, record.boxes, `record ${id}`));
    }
    const rows = record.fields.map((value, i) => el("tr", {}, el("th", {}, overview.fields[i].name),
                                                      el("td", {}, valueNode(value, overview.fields[i]))));
    parts.push(el("table", { class: "values" }, rows));
    if (image >= 0) {
      const crops = el("section", { class: "crops-section" }, el("h3", {}, "Training crops"));
      parts.push(crops);
      showCrops(crops, overview, record, image, state);
    }
    parts.push(el("h3", {}, "Raw values"), el("pre", { class: "raw" }, rawJson(overview, record)));
  }
  parts.push(el("h3", {}, "From a shell"), el("code", { class: "command" }, record.cat));
  fill(body, parts);
}
