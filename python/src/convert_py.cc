// unirecord.convert_imagefolder, convert_coco, convert_jsonl and convert_csv.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <functional>
#include <optional>
#include <tuple>

#include "convert_py.h"
#include "writer_py.h"

namespace unirecord_py {

using unirecord::Status;

py::dict ProgressDict(const unirecord::ConvertProgress& p) {
  py::dict d;
  d["files_done"] = p.files_done;
  d["files_total"] = p.files_total;
  d["written"] = p.written;
  d["rejected"] = p.rejected;
  d["bytes"] = p.bytes;
  d["seconds"] = p.seconds;
  return d;
}

unirecord::ConvertOptions ConvertOptionsArgs(const py::object& name, const py::object& num_shards,
                                             const py::object& target_shard_bytes, const py::object& threads,
                                             const py::object& strict, const py::object& keep_original,
                                             const py::object& sync, const py::object& max_pixels,
                                             const py::object& follow_links_outside, const py::object& allow_empty,
                                             const py::object& append, const py::object& extend_classes) {
  unirecord::ConvertOptions o;
  o.limits.max_pixels = IntArgAs<int64_t>("max_pixels", max_pixels, 1);
  if (!name.is_none()) o.name = StrArg("name", name);
  o.num_shards = IntArgAs<uint32_t>("num_shards", num_shards);
  o.target_shard_bytes = IntArgAs<uint64_t>("target_shard_bytes", target_shard_bytes);
  o.threads = IntArgAs<int>("threads", threads, 0);
  o.strict = BoolArg("strict", strict);
  o.keep_original = BoolArg("keep_original", keep_original);
  o.sync = BoolArg("sync", sync);
  o.follow_links_outside = BoolArg("follow_links_outside", follow_links_outside);
  o.allow_empty = BoolArg("allow_empty", allow_empty);
  o.append = BoolArg("append", append);
  o.extend_classes = BoolArg("extend_classes", extend_classes);
  return o;
}

py::dict ReportDict(const unirecord::ConvertReport& rep) {
  py::dict d;
  // Names and paths as the file system gave them (os.listdir's decoding).
  d["name"] = FsName(rep.name);
  d["classes"] = FsNames(rep.classes);
  d["written"] = rep.written;
  d["rejected"] = rep.rejected;
  d["skipped"] = rep.skipped;
  d["image_bytes"] = rep.image_bytes;
  d["source_bytes"] = rep.source_bytes;
  d["transcoded"] = rep.transcoded;
  d["kept_original"] = rep.kept_original;
  d["png"] = rep.png;
  py::dict reasons;
  for (const auto& [reason, count] : rep.kept_original_reasons) reasons[py::str(reason)] = count;
  d["kept_original_reasons"] = reasons;
  d["output_bytes"] = rep.output_bytes;
  d["shards"] = rep.shards;
  d["seconds"] = rep.seconds;
  d["uuid"] = rep.uuid;
  d["shard_paths"] = FsNames(rep.shard_paths);
  py::list not_written;
  for (const auto& n : rep.not_written) not_written.append(py::make_tuple(FsName(n.path), FsName(n.reason)));
  d["not_written"] = not_written;
  d["rejects_path"] = FsName(rep.rejects_path);
  d["annotations"] = rep.annotations;
  d["annotations_rejected"] = rep.annotations_rejected;
  return d;
}

// Runs `convert` with options.on_progress calling `progress` (None: none),
// without the GIL; its errors and the callback's become exceptions here.
py::dict RunConversion(unirecord::ConvertOptions o, const py::object& progress,
                       const std::function<unirecord::Result<unirecord::ConvertReport>(
                           const unirecord::ConvertOptions&)>& convert) {
  if (!progress.is_none() && !PyCallable_Check(progress.ptr())) {
    throw py::type_error("progress must be a callable or None, not " + py::repr(progress).cast<std::string>());
  }
  std::optional<py::error_already_set> callback_error;
  if (!progress.is_none()) {
    // Runs on the calling thread, which released the GIL below.
    o.on_progress = [&](const unirecord::ConvertProgress& p) {
      py::gil_scoped_acquire gil;
      if (callback_error) return;
      try {
        progress(ProgressDict(p));
      } catch (py::error_already_set& e) {
        callback_error.emplace(std::move(e));
      }
    };
  }
  unirecord::Result<unirecord::ConvertReport> r = Status::Internal("not run");
  {
    py::gil_scoped_release nogil;
    r = convert(o);
  }
  if (callback_error) throw std::move(*callback_error);
  return ReportDict(Unwrap(std::move(r)));
}

py::dict ConvertImageFolder(const py::object& src, const py::object& out, const py::object& name,
                            const py::object& num_shards, const py::object& target_shard_bytes,
                            const py::object& threads, const py::object& strict, const py::object& keep_original,
                            const py::object& sync, const py::object& progress, const py::object& max_pixels,
                            const py::object& follow_links_outside, const py::object& allow_empty,
                            const py::object& append, const py::object& default_values,
                            const py::object& extend_classes) {
  unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                   keep_original, sync, max_pixels, follow_links_outside,
                                                   allow_empty, append, extend_classes);
  o.defaults = DefaultsArg(default_values);
  const std::string src_path = PathArg("src", src), out_path = PathArg("out", out);
  return RunConversion(o, progress, [&](const unirecord::ConvertOptions& options) {
    return unirecord::ConvertImageFolder(src_path, out_path, options);
  });
}

py::dict ConvertCoco(const py::object& annotations, const py::object& images, const py::object& out,
                     const py::object& name, const py::object& num_shards, const py::object& target_shard_bytes,
                     const py::object& threads, const py::object& strict, const py::object& keep_original,
                     const py::object& sync, const py::object& progress, const py::object& max_pixels,
                     const py::object& follow_links_outside, const py::object& allow_empty,
                     const py::object& append, const py::object& default_values) {
  unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                   keep_original, sync, max_pixels, follow_links_outside,
                                                   allow_empty, append, py::bool_(false));
  o.defaults = DefaultsArg(default_values);
  const std::string annotations_path = PathArg("annotations", annotations), images_path = PathArg("images", images),
                    out_path = PathArg("out", out);
  return RunConversion(o, progress, [&](const unirecord::ConvertOptions& options) {
    return unirecord::ConvertCoco(annotations_path, images_path, out_path, options);
  });
}

// convert_jsonl / convert_csv.
template <unirecord::Result<unirecord::ConvertReport> (*Convert)(const std::string&, const std::string&,
                                                                 const std::string&, const unirecord::ConvertOptions&)>
py::dict ConvertManifest(const py::object& manifest, const py::object& out, const py::object& schema,
                         const py::object& name, const py::object& num_shards, const py::object& target_shard_bytes,
                         const py::object& threads, const py::object& strict, const py::object& keep_original,
                         const py::object& sync, const py::object& progress, const py::object& max_pixels,
                         const py::object& follow_links_outside, const py::object& allow_empty,
                     const py::object& append, const py::object& default_values) {
  unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                   keep_original, sync, max_pixels, follow_links_outside,
                                                   allow_empty, append, py::bool_(false));
  o.defaults = DefaultsArg(default_values);
  const std::string manifest_path = PathArg("manifest", manifest), schema_path = PathArg("schema", schema),
                    out_path = PathArg("out", out);
  return RunConversion(o, progress, [&](const unirecord::ConvertOptions& options) {
    return Convert(manifest_path, schema_path, out_path, options);
  });
}

// Defines converter `name`: its `leading` arguments (positional, then
// py::kw_only() and its own keywords), the keywords every converter takes
// (their defaults those of a default-constructed ConvertOptions, as urec's),
// then `trailing` ones.
template <typename Function, typename... Leading, typename... Trailing>
void DefConvert(py::module_& m, const char* name, Function function, const char* doc, std::tuple<Leading...> leading,
                Trailing... trailing) {
  const unirecord::ConvertOptions c;
  std::apply(
      [&](auto... lead) {
        m.def(name, function, lead..., py::arg("name") = py::none(), py::arg("num_shards") = c.num_shards,
              py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads,
              py::arg("strict") = c.strict, py::arg("keep_original") = c.keep_original, py::arg("sync") = c.sync,
              py::arg("progress") = py::none(), py::arg("max_pixels") = c.limits.max_pixels,
              py::arg("follow_links_outside") = c.follow_links_outside, py::arg("allow_empty") = c.allow_empty,
              py::arg("append") = c.append, py::arg("default") = py::none(), trailing..., doc);
      },
      leading);
}

void RegisterConvert(py::module_& m) {
  DefConvert(m, "convert_imagefolder", &ConvertImageFolder, R"doc(
Converts a torchvision-style ImageFolder SRC/<class>/**/<image> into a dataset
in OUT (the code behind `urec convert imagefolder`).

Records keep ImageFolder's sample order and labels; fields image (bytes),
label (int64, indexed), path (str), width and height (int32, indexed),
jpeg_layout (0: the source bytes, 1: the fast layout), source_size and
source_xxh3 (the source file's size and XXH3-64 as a signed int64);
metadata "classes". Each JPEG is rewritten losslessly into the fast layout
(same pixels, decodes crops faster; docs/image.md) unless keep_original=True;
one the rewrite cannot reproduce exactly is stored as it was and counted.
Files that are not decodable JPEGs are listed in the report and in its
rejects_path, OUT/NAME.rejects.gGGGGGG.tsv, committed with the shards
(strict=True: the first one is an error).
name defaults to SRC's last component; num_shards / target_shard_bytes as
for Writer (default: shards of about 1 GiB). progress: called with a dict
(files_done, files_total, written, rejected, bytes, seconds) about every
100 ms. max_pixels: JPEGs over this many pixels are rejected (default: the
decoder's limit). follow_links_outside: read files whose symbolic links
lead outside SRC (else they are rejected: "leaves the source folder: resolves
to ..."; the same for every converter's folder). allow_empty: commit an
empty dataset when every file is rejected; else that raises ValueError
naming the rejects report OUT/NAME.rejected.tsv and commits nothing.
append: add the records to dataset NAME in OUT as a new segment (its
shards stay as they are, ids continue; the schema and metadata must be the
dataset's) instead of replacing it; fields added to the dataset later
(add_fields) get default={field: value} in the new records (without it
such an append raises ValueError naming them); SRC's class folders are mapped onto the
dataset's classes by name, and a class it lacks raises ValueError naming it
unless extend_classes=True adds it at the end of the class list.
The defaults are C++'s ConvertOptions (as urec's). Returns the report dict (name, classes, written, rejected, skipped,
image_bytes, source_bytes, transcoded, kept_original, png, kept_original_reasons
({reason: count}), output_bytes, shards, seconds, uuid, shard_paths,
not_written, rejects_path).
)doc",
             std::make_tuple(py::arg("src"), py::arg("out"), py::kw_only()),
             py::arg("extend_classes") = unirecord::ConvertOptions().extend_classes);
  DefConvert(m, "convert_jsonl", &ConvertManifest<unirecord::ConvertJsonl>, R"doc(
Converts a manifest, one sample a line, into a dataset in OUT (the code
behind `urec convert jsonl`): JSON Lines, one object a line with a key per field. SCHEMA is a JSON file
{"fields": [{"name": ..., "type": ..., "shape": [...], "indexed": bool}, ...]}
whose types are schema types (int32, float32, uint8, bool, ...; not
float16; "shape" with -1 where lines differ), "string", or "image": a path
relative to the manifest's folder, stored as convert_imagefolder stores
images, which adds the fields path, width, height, jpeg_layout,
source_size, source_xxh3 (one image field at most). Records keep the
manifest's order. A line that cannot be used (not valid, a missing or
unknown field, a wrong type, shape or range, an unreadable image) is a row
of not_written and of rejects_path ("line N" or the image's path, and the
reason). ValueError for a bad schema file. name defaults to the
manifest's file name without its extension; the other keywords and the
report are convert_imagefolder's.
)doc",
             std::make_tuple(py::arg("manifest"), py::arg("out"), py::kw_only(), py::arg("schema")));
  DefConvert(m, "convert_csv", &ConvertManifest<unirecord::ConvertCsv>, R"doc(
Converts a manifest, one sample a line, into a dataset in OUT (the code
behind `urec convert csv`): CSV with a header row naming each field once; string and image cells are taken as they are, the others parsed as JSON (3, 0.5, true, [1, 2, 3]); quoted cells may hold commas, quotes as "" and newlines. SCHEMA is a JSON file
{"fields": [{"name": ..., "type": ..., "shape": [...], "indexed": bool}, ...]}
whose types are schema types (int32, float32, uint8, bool, ...; not
float16; "shape" with -1 where lines differ), "string", or "image": a path
relative to the manifest's folder, stored as convert_imagefolder stores
images, which adds the fields path, width, height, jpeg_layout,
source_size, source_xxh3 (one image field at most). Records keep the
manifest's order. A line that cannot be used (not valid, a missing or
unknown field, a wrong type, shape or range, an unreadable image) is a row
of not_written and of rejects_path ("line N" or the image's path, and the
reason). ValueError for a bad schema file, a header that does not name the fields or an unclosed quote. name defaults to the
manifest's file name without its extension; the other keywords and the
report are convert_imagefolder's.
)doc",
             std::make_tuple(py::arg("manifest"), py::arg("out"), py::kw_only(), py::arg("schema")));
  DefConvert(m, "convert_coco", &ConvertCoco, R"doc(
Converts a COCO instances file (ANNOTATIONS) and the folder of its images
(IMAGES) into a dataset in OUT (the code behind `urec convert coco`).

One record per image, by image id: image (bytes, stored as
convert_imagefolder stores it), path, image_id, width, height, boxes
(float32 (-1, 4), COCO's xywh), category_id (int64 (-1,)), iscrowd (uint8
(-1,)), area (float32 (-1,)), annotation_id (int64 (-1,)), segmentation (a
JSON string), jpeg_layout, source_size, source_xxh3; metadata "categories"
(a JSON list of {"id", "name", "supercategory"}). Images without
annotations have empty arrays. Every image, annotation or category left out
is a row of the report's not_written (and of rejects_path) with the reason;
the report counts annotations and annotations_rejected. name defaults to
ANNOTATIONS' file name without .json; the other options are
convert_imagefolder's. Load boxes with
Loader(..., label_field=None, boxes="boxes", box_aligned=["category_id"]).
)doc",
             std::make_tuple(py::arg("annotations"), py::arg("images"), py::arg("out"), py::kw_only()));
}

}  // namespace unirecord_py
