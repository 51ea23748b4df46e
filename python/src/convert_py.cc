// unirecord.convert_imagefolder, convert_coco, convert_jsonl and convert_csv.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <array>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

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

namespace {

// The options of one converter call: ConvertOptions, and the progress
// callable that RunConversion wraps into its on_progress.
struct ConvertArgs {
  unirecord::ConvertOptions options;
  py::object progress = py::none();
};

// A keyword every converter takes: its default (that of a default-constructed
// ConvertOptions, as urec's) and how a value is checked and kept.
struct ConvertKeyword {
  const char* name;
  py::object (*default_value)(const unirecord::ConvertOptions& defaults);
  void (*set)(const char* name, const py::handle& value, ConvertArgs& args);
};

#define UREC_CONVERT_KEYWORD(NAME, MEMBER, PARSE)                                                          \
  ConvertKeyword {                                                                                          \
    NAME, [](const unirecord::ConvertOptions& c) -> py::object { return py::cast(c.MEMBER); },              \
        [](const char* name, const py::handle& v, ConvertArgs& a) { a.options.MEMBER = PARSE; }             \
  }

// The one list of the converters' common keywords, in their order: it makes
// each converter's keywords and defaults (DefConvert), checks their values,
// and is _core._convert_keywords (test_stubs.py checks the four stubs against it).
constexpr ConvertKeyword kConvertKeywords[] = {
    {"name", [](const unirecord::ConvertOptions&) -> py::object { return py::none(); },
     [](const char* name, const py::handle& v, ConvertArgs& a) {
       if (!v.is_none()) a.options.name = StrArg(name, v);
     }},
    UREC_CONVERT_KEYWORD("num_shards", num_shards, IntArgAs<uint32_t>(name, v)),
    UREC_CONVERT_KEYWORD("target_shard_bytes", target_shard_bytes, IntArgAs<uint64_t>(name, v)),
    UREC_CONVERT_KEYWORD("threads", threads, IntArgAs<int>(name, v, 0)),
    UREC_CONVERT_KEYWORD("strict", strict, BoolArg(name, v)),
    UREC_CONVERT_KEYWORD("keep_original", keep_original, BoolArg(name, v)),
    UREC_CONVERT_KEYWORD("sync", sync, BoolArg(name, v)),
    {"progress", [](const unirecord::ConvertOptions&) -> py::object { return py::none(); },
     [](const char* name, const py::handle& v, ConvertArgs& a) {
       if (!v.is_none() && !PyCallable_Check(v.ptr())) {
         throw py::type_error(std::string(name) + " must be a callable or None, not " +
                              py::repr(v).cast<std::string>());
       }
       a.progress = py::reinterpret_borrow<py::object>(v);
     }},
    UREC_CONVERT_KEYWORD("max_pixels", limits.max_pixels, IntArgAs<int64_t>(name, v, 1)),
    UREC_CONVERT_KEYWORD("follow_links_outside", follow_links_outside, BoolArg(name, v)),
    UREC_CONVERT_KEYWORD("allow_empty", allow_empty, BoolArg(name, v)),
    UREC_CONVERT_KEYWORD("append", append, BoolArg(name, v)),
    {"default", [](const unirecord::ConvertOptions&) -> py::object { return py::none(); },
     [](const char*, const py::handle& v, ConvertArgs& a) {
       a.options.defaults = DefaultsArg(py::reinterpret_borrow<py::object>(v));
     }},
};

#undef UREC_CONVERT_KEYWORD

constexpr size_t kConvertKeywordCount = std::size(kConvertKeywords);

void SetConvertKeyword(const char* name, const py::handle& value, ConvertArgs& args) {
  for (const ConvertKeyword& keyword : kConvertKeywords) {
    if (std::string_view(keyword.name) == name) return keyword.set(name, value, args);
  }
  RaiseStatus(Status::Internal(std::string("no converter keyword '") + name + "'"));
}

}  // namespace

unirecord::ConvertOptions ConvertOptionsArgs(const py::object& name, const py::object& num_shards,
                                             const py::object& target_shard_bytes, const py::object& threads,
                                             const py::object& strict, const py::object& keep_original,
                                             const py::object& sync, const py::object& max_pixels,
                                             const py::object& follow_links_outside, const py::object& allow_empty,
                                             const py::object& append, const py::object& extend_classes) {
  ConvertArgs args;
  const std::pair<const char*, const py::object*> given[] = {
      {"name", &name},         {"num_shards", &num_shards},
      {"target_shard_bytes", &target_shard_bytes},
      {"threads", &threads},   {"strict", &strict},
      {"keep_original", &keep_original},
      {"sync", &sync},         {"max_pixels", &max_pixels},
      {"follow_links_outside", &follow_links_outside},
      {"allow_empty", &allow_empty},
      {"append", &append}};
  for (const auto& [keyword, value] : given) SetConvertKeyword(keyword, *value, args);
  args.options.extend_classes = BoolArg("extend_classes", extend_classes);
  return args.options;
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

namespace {

// Runs `convert` with options.on_progress calling args.progress (None: none),
// without the GIL; its errors and the callback's become exceptions here.
py::dict RunConversion(ConvertArgs args, const std::function<unirecord::Result<unirecord::ConvertReport>(
                                             const unirecord::ConvertOptions&)>& convert) {
  unirecord::ConvertOptions& o = args.options;
  const py::object& progress = args.progress;
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

// A converter's own arguments, in their order.
template <size_t N>
using Values = std::array<py::object, N>;

py::dict ConvertImageFolder(const Values<2>& given, ConvertArgs args, const Values<1>& own) {
  args.options.extend_classes = BoolArg("extend_classes", own[0]);
  const std::string src_path = PathArg("src", given[0]), out_path = PathArg("out", given[1]);
  return RunConversion(std::move(args), [&](const unirecord::ConvertOptions& options) {
    return unirecord::ConvertImageFolder(src_path, out_path, options);
  });
}

// convert_videofolder / convert_audiofolder.
template <unirecord::Result<unirecord::ConvertReport> (*Convert)(const std::string&, const std::string&,
                                                                 const unirecord::ConvertOptions&)>
py::dict ConvertMediaFolder(const Values<2>& given, ConvertArgs args, const Values<0>&) {
  const std::string src_path = PathArg("src", given[0]), out_path = PathArg("out", given[1]);
  return RunConversion(std::move(args),
                       [&](const unirecord::ConvertOptions& options) { return Convert(src_path, out_path, options); });
}

py::dict ConvertCoco(const Values<3>& given, ConvertArgs args, const Values<0>&) {
  const std::string annotations_path = PathArg("annotations", given[0]), images_path = PathArg("images", given[1]),
                    out_path = PathArg("out", given[2]);
  return RunConversion(std::move(args), [&](const unirecord::ConvertOptions& options) {
    return unirecord::ConvertCoco(annotations_path, images_path, out_path, options);
  });
}

// convert_jsonl / convert_csv.
template <unirecord::Result<unirecord::ConvertReport> (*Convert)(const std::string&, const std::string&,
                                                                 const std::string&, const unirecord::ConvertOptions&)>
py::dict ConvertManifest(const Values<3>& given, ConvertArgs args, const Values<0>&) {
  const std::string manifest_path = PathArg("manifest", given[0]), out_path = PathArg("out", given[1]),
                    schema_path = PathArg("schema", given[2]);
  return RunConversion(std::move(args), [&](const unirecord::ConvertOptions& options) {
    return Convert(manifest_path, schema_path, out_path, options);
  });
}

template <size_t>
using Given = const py::object&;

// The Python function of a converter: its L arguments, the common keywords
// (checked into a ConvertArgs by their rows of kConvertKeywords), its T own
// keywords after them; calls convert(the L, the ConvertArgs, the T).
template <typename Convert, size_t... L, size_t... C, size_t... T>
auto ConverterFunction(Convert convert, std::index_sequence<L...>, std::index_sequence<C...>,
                       std::index_sequence<T...>) {
  return [convert](Given<L>... given, Given<C>... common, Given<T>... own) {
    ConvertArgs args;
    (kConvertKeywords[C].set(kConvertKeywords[C].name, common, args), ...);
    return convert(Values<sizeof...(L)>{given...}, std::move(args), Values<sizeof...(T)>{own...});
  };
}

// py::arg(name) = its default, for each common keyword.
template <size_t... C>
auto ConvertKeywordArgs(std::index_sequence<C...>) {
  const unirecord::ConvertOptions defaults;
  return std::make_tuple((py::arg(kConvertKeywords[C].name) = kConvertKeywords[C].default_value(defaults))...);
}

// Defines converter `name`: `leading` (its Given arguments, then
// py::kw_only() and its own keywords before the common ones), the keywords
// every converter takes (kConvertKeywords), then its `own` keywords.
template <size_t Given, size_t Own, typename... Leading, typename... OwnArgs>
void DefConvert(py::module_& m, const char* name, py::dict (*convert)(const Values<Given>&, ConvertArgs,
                                                                     const Values<Own>&),
                const char* doc, std::tuple<Leading...> leading, OwnArgs... own) {
  static_assert(sizeof...(OwnArgs) == Own, "one py::arg per own keyword");
  auto function = ConverterFunction(convert, std::make_index_sequence<Given>(),
                                    std::make_index_sequence<kConvertKeywordCount>(), std::make_index_sequence<Own>());
  std::apply([&](auto... args) { m.def(name, function, args..., own..., doc); },
             std::tuple_cat(leading, ConvertKeywordArgs(std::make_index_sequence<kConvertKeywordCount>())));
}

// convert_videofolder and convert_audiofolder.
void RegisterMediaFolderConverters(py::module_& m) {
  DefConvert<2, 0>(m, "convert_videofolder", &ConvertMediaFolder<unirecord::ConvertVideoFolder>, R"doc(
Converts class folders of videos SRC/<class>/**/<video> (.mp4 .avi .mkv
.webm .mov .m4v .mpg .mpeg .ogv; Kinetics' and UCF-101's layout) into a
dataset in OUT (the code behind `urec convert videofolder`): one record
per file in folder order with fields video (the file's best video stream:
its packets and packet table, docs/video-audio.md) and its parameter
fields (video.width, video.height, video.duration, ...), label (int64,
indexed) and path; metadata "classes". A file FFmpeg cannot read, without
a video stream, with a codec it cannot decode, cut short, corrupt or with
absurd dimensions or duration is a row of not_written and of rejects_path
naming it and the reason. The keywords and the report are
convert_imagefolder's (keep_original and max_pixels do not apply).
)doc",
             std::make_tuple(py::arg("src"), py::arg("out"), py::kw_only()));
  DefConvert<2, 0>(m, "convert_audiofolder", &ConvertMediaFolder<unirecord::ConvertAudioFolder>, R"doc(
Converts class folders of audio files SRC/<class>/**/<file> (.wav .flac
.mp3 .ogg .opus .m4a .aac) into a dataset in OUT (the code behind `urec
convert audiofolder`), as convert_videofolder does: fields audio (the best
audio stream) and its parameter fields, label, path and transcript (str:
LibriSpeech's, from the *.trans.txt files beside the audio, lines
"UTTERANCE-ID TEXT"; "" for a file none names).
)doc",
             std::make_tuple(py::arg("src"), py::arg("out"), py::kw_only()));
}

}  // namespace

void RegisterConvert(py::module_& m) {
  py::dict keywords;  // _core._convert_keywords: name -> default, in their order
  for (const ConvertKeyword& keyword : kConvertKeywords) {
    keywords[keyword.name] = keyword.default_value(unirecord::ConvertOptions());
  }
  m.attr("_convert_keywords") = keywords;
  DefConvert<2, 1>(m, "convert_imagefolder", &ConvertImageFolder, R"doc(
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
  RegisterMediaFolderConverters(m);
  DefConvert<3, 0>(m, "convert_jsonl", &ConvertManifest<unirecord::ConvertJsonl>, R"doc(
Converts a manifest, one sample a line, into a dataset in OUT (the code
behind `urec convert jsonl`): JSON Lines, one object a line with a key per field. SCHEMA is a JSON file
{"fields": [{"name": ..., "type": ..., "shape": [...], "indexed": bool}, ...]}
whose types are schema types (int32, float32, uint8, bool, ...; not
float16; "shape" with -1 where lines differ), "string", or "image": a path
relative to the manifest's folder, stored as convert_imagefolder stores
images, which adds the fields path, width, height, jpeg_layout,
source_size, source_xxh3 (one image field at most); or "video" / "audio":
a path stored as convert_videofolder stores its files, plus path (with
numeric "start" / "end" fields, in seconds, each record keeps the packets
of its range only: docs/video-audio.md). Records keep the
manifest's order. A line that cannot be used (not valid, a missing or
unknown field, a wrong type, shape or range, an unreadable image) is a row
of not_written and of rejects_path ("line N" or the image's path, and the
reason). ValueError for a bad schema file. name defaults to the
manifest's file name without its extension; the other keywords and the
report are convert_imagefolder's.
)doc",
             std::make_tuple(py::arg("manifest"), py::arg("out"), py::kw_only(), py::arg("schema")));
  DefConvert<3, 0>(m, "convert_csv", &ConvertManifest<unirecord::ConvertCsv>, R"doc(
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
  DefConvert<3, 0>(m, "convert_coco", &ConvertCoco, R"doc(
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
