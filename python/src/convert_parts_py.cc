// The conversion in parts behind unirecord.distributed: plans, parts and
// commits of image-folder and COCO / JSON Lines / CSV conversions (internal:
// _plan_*, _convert_*_part, _commit_*).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <functional>

#include "convert_py.h"
#include "unirecord/convert_parts.h"
#include "writer_py.h"

namespace unirecord_py {
namespace {

// The plan of a staged image-folder conversion (driver side).
struct PyImageFolderPlan {
  std::string src;
  unirecord::ImageFolderPlan plan;
  unirecord::ConvertOptions options;
};

// A part of a plan as plain Python values (pickled to the tasks):
// (classes, [(path, label, is_candidate), ...], shard_starts).
py::tuple PartTuple(const PyImageFolderPlan& p, uint32_t first_shard, uint32_t end_shard) {
  const uint32_t shards = static_cast<uint32_t>(p.plan.shard_starts.empty() ? 1 : p.plan.shard_starts.size() - 1);
  if (first_shard >= end_shard || end_shard > shards) {
    RaiseStatus(Status::InvalidArgument("shards [" + std::to_string(first_shard) + ", " + std::to_string(end_shard) +
                                        ") of a plan of " + std::to_string(shards)));
  }
  unirecord::ImageFolderPart part = unirecord::PartOfPlan(p.plan, first_shard, end_shard, 0, 1);
  py::list files;
  for (const auto& f : part.files) files.append(py::make_tuple(FsName(f.path), f.label, f.is_candidate));
  return py::make_tuple(FsNames(part.classes), files, part.shard_starts);
}

unirecord::ImageFolderPart PartFromTuple(const py::object& spec, uint32_t part, uint32_t num_parts) {
  unirecord::ImageFolderPart p;
  p.part = part;
  p.num_parts = num_parts;
  const py::tuple t = spec.cast<py::tuple>();
  if (t.size() != 3) throw py::value_error("part must be the (classes, files, shard_starts) of plan.part()");
  for (py::handle c : t[0]) p.classes.push_back(FsNameBytes(c));
  for (py::handle f : t[1]) {
    const py::tuple file = f.cast<py::tuple>();
    p.files.push_back({FsNameBytes(file[0]), file[1].cast<int64_t>(), file[2].cast<bool>()});
  }
  p.shard_starts = t[2].cast<std::vector<size_t>>();
  return p;
}

unirecord::ConvertReport ReportFromDict(const py::dict& d) {
  unirecord::ConvertReport r;
  r.written = d["written"].cast<uint64_t>();
  r.rejected = d["rejected"].cast<uint64_t>();
  r.skipped = d["skipped"].cast<uint64_t>();
  r.image_bytes = d["image_bytes"].cast<uint64_t>();
  r.source_bytes = d["source_bytes"].cast<uint64_t>();
  r.transcoded = d["transcoded"].cast<uint64_t>();
  r.kept_original = d["kept_original"].cast<uint64_t>();
  r.png = d["png"].cast<uint64_t>();
  r.annotations = d["annotations"].cast<uint64_t>();
  r.seconds = d["seconds"].cast<double>();
  for (auto item : d["kept_original_reasons"].cast<py::dict>()) {
    r.kept_original_reasons[item.first.cast<std::string>()] = item.second.cast<uint64_t>();
  }
  for (py::handle row : d["not_written"]) {
    const py::tuple t = row.cast<py::tuple>();
    r.not_written.push_back({FsNameBytes(t[0]), FsNameBytes(t[1])});
  }
  return r;
}

// Commits a staged conversion with `commit` over the tasks' report dicts;
// committed or not, the run is over and its lock goes.
py::dict CommitParts(PyStagedWrite& staged, const py::list& reports,
                     const std::function<unirecord::Result<unirecord::ConvertReport>(
                         unirecord::StagedWrite&, const std::vector<unirecord::ConvertReport>&)>& commit) {
  std::vector<unirecord::ConvertReport> parts;
  for (py::handle r : reports) parts.push_back(ReportFromDict(r.cast<py::dict>()));
  unirecord::StagedWrite& w = staged.Live();
  unirecord::Result<unirecord::ConvertReport> r = Status::Internal("not committed");
  {
    py::gil_scoped_release nogil;
    r = commit(w, parts);
  }
  staged.staged.reset();
  return ReportDict(Unwrap(std::move(r)));
}

// A COCO / JSON Lines / CSV / video or audio folder input from the
// binding's arguments: kind "coco", "jsonl", "csv", "videofolder" or "audiofolder".
unirecord::ConvertSource SourceArgs(const py::object& kind, const py::object& input, const py::object& images,
                                    const py::object& schema) {
  unirecord::ConvertSource source;
  const std::string k = StrArg("kind", kind);
  if (k == "coco") {
    source.format = unirecord::SourceFormat::kCoco;
    source.images = PathArg("images", images);
  } else if (k == "jsonl" || k == "csv") {
    source.format = k == "csv" ? unirecord::SourceFormat::kCsv : unirecord::SourceFormat::kJsonl;
    source.schema = PathArg("schema", schema);
  } else if (k == "videofolder" || k == "audiofolder") {
    source.format = k == "videofolder" ? unirecord::SourceFormat::kVideoFolder : unirecord::SourceFormat::kAudioFolder;
  } else {
    throw py::value_error("kind must be 'coco', 'jsonl', 'csv', 'videofolder' or 'audiofolder', not " +
                          py::repr(kind).cast<std::string>());
  }
  source.input = PathArg(k == "coco" ? "annotations" : k == "jsonl" || k == "csv" ? "manifest" : "src", input);
  return source;
}

// The plan of a staged COCO / JSON Lines / CSV conversion (driver side).
struct PySourcePlan {
  unirecord::SourcePlan plan;
};

// The image folder's staged conversion: plan, parts, commit.
void RegisterImageFolderParts(py::module_& m) {
  const unirecord::ConvertOptions c;
  py::class_<PyImageFolderPlan>(m, "_ImageFolderPlan")
      .def_property_readonly("name", [](const PyImageFolderPlan& p) { return FsName(p.plan.name); })
      .def_property_readonly("classes", [](const PyImageFolderPlan& p) { return FsNames(p.plan.classes); })
      .def_property_readonly("candidates", [](const PyImageFolderPlan& p) { return p.plan.candidates; })
      .def_property_readonly("num_shards", [](const PyImageFolderPlan& p) {
        return p.plan.shard_starts.empty() ? 0 : p.plan.shard_starts.size() - 1;
      })
      .def("part", &PartTuple, py::arg("first_shard"), py::arg("end_shard"),
           "Shards [first_shard, end_shard) as (classes, files, shard_starts): plain values for a task.")
      .def("candidates_in", [](const PyImageFolderPlan& p, uint32_t first, uint32_t end) {
             uint64_t n = 0;
             const size_t b = p.plan.shard_starts.at(first), e = p.plan.shard_starts.at(end);
             for (size_t i = b; i < e; ++i) n += p.plan.files[i].is_candidate ? 1 : 0;
             return n;
           }, py::arg("first_shard"), py::arg("end_shard"));
  m.attr("_DEFAULT_MAX_PIXELS") = c.limits.max_pixels;
  m.def("_plan_imagefolder", [](const py::object& src, const py::object& out, const py::object& name,
                                const py::object& num_shards, const py::object& strict, const py::object& keep_original,
                                const py::object& sync, const py::object& max_pixels,
                                const py::object& follow_links_outside, const py::object& allow_empty,
                                const py::object& append, const py::object& extend_classes) {
          auto p = std::make_unique<PyImageFolderPlan>();
          p->src = PathArg("src", src);
          const std::string out_dir = PathArg("out", out);
          p->options = ConvertOptionsArgs(name, num_shards, py::int_(0), py::int_(1), strict, keep_original, sync,
                                          max_pixels, follow_links_outside, allow_empty, append, extend_classes);
          unirecord::Result<unirecord::ImageFolderPlan> r = Status::Internal("not planned");
          {
            py::gil_scoped_release nogil;
            r = unirecord::PlanImageFolder(p->src, out_dir, p->options);
          }
          p->plan = Unwrap(std::move(r));
          return p;
        }, py::arg("src"), py::arg("out"), py::kw_only(), py::arg("name"), py::arg("num_shards"), py::arg("strict"),
        py::arg("keep_original"), py::arg("sync"), py::arg("max_pixels"), py::arg("follow_links_outside"),
        py::arg("allow_empty"), py::arg("append"), py::arg("extend_classes"));
  m.def("_convert_imagefolder_part", [](const py::object& src, const py::object& out, const py::object& name,
                                        const py::object& token, const py::object& spec, uint32_t part,
                                        uint32_t num_parts, const py::object& threads, const py::object& strict,
                                        const py::object& keep_original, const py::object& sync,
                                        const py::object& max_pixels, const py::object& follow_links_outside,
                                        const py::object& allow_empty) {
          unirecord::ConvertOptions o = ConvertOptionsArgs(py::none(), py::int_(0), py::int_(0), threads, strict,
                                                           keep_original, sync, max_pixels, follow_links_outside,
                                                           allow_empty);
          unirecord::ImageFolderPart p = PartFromTuple(spec, part, num_parts);
          const std::string src_path = PathArg("src", src), out_path = PathArg("out", out);
          const std::string dataset = StrArg("name", name), token_text = StrArg("token", token);
          unirecord::Result<unirecord::ConvertReport> r = Status::Internal("not run");
          {
            py::gil_scoped_release nogil;
            r = unirecord::ConvertImageFolderPart(src_path, p, out_path, dataset, token_text, o);
          }
          return ReportDict(Unwrap(std::move(r)));
        }, py::arg("src"), py::arg("out"), py::arg("name"), py::arg("token"), py::arg("part_spec"), py::arg("part"),
        py::arg("num_parts"), py::kw_only(), py::arg("threads"), py::arg("strict"), py::arg("keep_original"),
        py::arg("sync"), py::arg("max_pixels"), py::arg("follow_links_outside"), py::arg("allow_empty"));
  m.def("_commit_imagefolder", [](PyStagedWrite& staged, const PyImageFolderPlan& plan, const py::list& reports) {
          return CommitParts(staged, reports, [&](unirecord::StagedWrite& w, const auto& parts) {
            return unirecord::CommitImageFolder(w, plan.plan, parts);
          });
        }, py::arg("staged"), py::arg("plan"), py::arg("reports"));
}

// The staged conversion of COCO / JSON Lines / CSV sources: plan, parts, commit.
void RegisterSourceParts(py::module_& m) {
  py::class_<PySourcePlan>(m, "_SourcePlan")
      .def_property_readonly("name", [](const PySourcePlan& p) { return FsName(p.plan.name); })
      .def_property_readonly("candidates", [](const PySourcePlan& p) { return p.plan.shard_starts.back(); })
      .def_property_readonly("num_shards", [](const PySourcePlan& p) { return p.plan.shard_starts.size() - 1; })
      .def("candidates_in", [](const PySourcePlan& p, uint32_t first, uint32_t end) {
             return p.plan.shard_starts.at(end) - p.plan.shard_starts.at(first);
           }, py::arg("first_shard"), py::arg("end_shard"));
  m.def("_plan_source", [](const py::object& kind, const py::object& input, const py::object& images,
                           const py::object& schema, const py::object& out, const py::object& name,
                           const py::object& num_shards, const py::object& strict, const py::object& keep_original,
                           const py::object& sync, const py::object& max_pixels,
                           const py::object& follow_links_outside, const py::object& allow_empty) {
          const unirecord::ConvertSource source = SourceArgs(kind, input, images, schema);
          const std::string out_dir = PathArg("out", out);
          const unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, py::int_(0), py::int_(1), strict,
                                                                 keep_original, sync, max_pixels,
                                                                 follow_links_outside, allow_empty);
          auto p = std::make_unique<PySourcePlan>();
          unirecord::Result<unirecord::SourcePlan> r = Status::Internal("not planned");
          {
            py::gil_scoped_release nogil;
            r = unirecord::PlanSource(source, out_dir, o);
          }
          p->plan = Unwrap(std::move(r));
          return p;
        }, py::arg("kind"), py::arg("input"), py::arg("images"), py::arg("schema"), py::arg("out"), py::kw_only(),
        py::arg("name"), py::arg("num_shards"), py::arg("strict"), py::arg("keep_original"), py::arg("sync"),
        py::arg("max_pixels"), py::arg("follow_links_outside"), py::arg("allow_empty"));
  m.def("_convert_source_part", [](const py::object& kind, const py::object& input, const py::object& images,
                                   const py::object& schema, const py::object& out, const py::object& name,
                                   const py::object& token, uint32_t first_shard, uint32_t end_shard, uint32_t part,
                                   uint32_t num_parts, const py::object& num_shards, const py::object& threads,
                                   const py::object& strict, const py::object& keep_original, const py::object& sync,
                                   const py::object& max_pixels, const py::object& follow_links_outside,
                                   const py::object& allow_empty) {
          const unirecord::ConvertSource source = SourceArgs(kind, input, images, schema);
          const std::string out_dir = PathArg("out", out), dataset = StrArg("name", name);
          const std::string token_text = StrArg("token", token);
          const unirecord::ConvertOptions o =
              ConvertOptionsArgs(name, num_shards, py::int_(0), threads, strict, keep_original, sync, max_pixels,
                                 follow_links_outside, allow_empty);
          unirecord::Result<unirecord::ConvertReport> r = Status::Internal("not run");
          {
            py::gil_scoped_release nogil;
            r = unirecord::ConvertSourcePart(source, out_dir, dataset, token_text, first_shard, end_shard, part,
                                             num_parts, o);
          }
          return ReportDict(Unwrap(std::move(r)));
        }, py::arg("kind"), py::arg("input"), py::arg("images"), py::arg("schema"), py::arg("out"), py::arg("name"),
        py::arg("token"), py::arg("first_shard"), py::arg("end_shard"), py::arg("part"), py::arg("num_parts"),
        py::kw_only(), py::arg("num_shards"), py::arg("threads"), py::arg("strict"), py::arg("keep_original"),
        py::arg("sync"), py::arg("max_pixels"), py::arg("follow_links_outside"), py::arg("allow_empty"));
  m.def("_commit_source", [](PyStagedWrite& staged, const PySourcePlan& plan, const py::list& reports) {
          return CommitParts(staged, reports, [&](unirecord::StagedWrite& w, const auto& parts) {
            return unirecord::CommitSource(w, plan.plan, parts);
          });
        }, py::arg("staged"), py::arg("plan"), py::arg("reports"));
}

}  // namespace

void RegisterConvertParts(py::module_& m) {
  RegisterImageFolderParts(m);
  RegisterSourceParts(m);
}

}  // namespace unirecord_py
