// unirecord.Writer and unirecord.convert_imagefolder.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>

#include "common.h"
#include "unirecord/convert.h"
#include "unirecord/writer.h"

namespace unirecord_py {

using unirecord::BlobCompression;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::RecordBuilder;
using unirecord::Schema;
using unirecord::Status;
using unirecord::Writer;
using unirecord::WriterOptions;

namespace {

// A Py_buffer held until the record is written (RecordBuilder::SetBytes keeps views).
class HeldBuffer {
 public:
  explicit HeldBuffer(PyObject* obj) {
    if (PyObject_GetBuffer(obj, &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  std::string_view bytes() const {
    return {static_cast<const char*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// Any numeric field's value (a scalar, a numpy array or nested lists) as
// the field's dtype (TypeInfo::name is numpy's name), then RecordBuilder::
// SetValues, which checks the shape against the field's pattern. A value
// whose dtype differs is cast only when nothing changes: an integer or bool
// target takes values that round-trip exactly; a float target takes any
// integer or float (rounded to the nearest).
Status SetNumericValue(RecordBuilder& b, size_t index, const Field& f, const py::handle& value) {
  const py::module_ np = py::module_::import("numpy");
  const py::dtype dtype(unirecord::FindType(f.type)->name);
  py::object given;
  try {
    given = np.attr("asarray")(value);
  } catch (py::error_already_set& e) {  // ragged nested lists
    return Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) +
                                   "): not an array: " + e.what());
  }
  py::array a = py::reinterpret_borrow<py::array>(given);
  const char given_kind = a.dtype().kind();
  if (!a.dtype().is(dtype) && a.size() > 0) {
    if (given_kind != 'b' && given_kind != 'i' && given_kind != 'u' && given_kind != 'f') {
      return Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) +
                                     ") needs numbers, got " + py::repr(value).cast<std::string>());
    }
    py::object cast = a.attr("astype")(dtype);
    const bool to_float = dtype.kind() == 'f' && given_kind != 'b';
    if (!to_float && !np.attr("array_equal")(cast, a).cast<bool>()) {
      return Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) + "): values of dtype " +
                                     py::str(a.dtype()).cast<std::string>() + " and shape " +
                                     py::str(a.attr("shape")).cast<std::string>() + " cannot be cast exactly to " +
                                     unirecord::FieldTypeName(f.type));
    }
    a = py::reinterpret_borrow<py::array>(cast);
  } else if (!a.dtype().is(dtype)) {
    a = py::reinterpret_borrow<py::array>(a.attr("astype")(dtype));  // empty: nothing to lose
  }
  if (!a.attr("flags").attr("c_contiguous").cast<bool>()) {
    a = py::reinterpret_borrow<py::array>(a.attr("copy")());  // C order; keeps a 0-d scalar 0-d
  }
  const std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return b.SetValues(index, f.type, a.data(), shape);
}

int64_t ToInt64(const Field& f, const py::handle& value) {
  PyObject* idx = PyNumber_Index(value.ptr());
  if (idx == nullptr) {
    PyErr_Clear();
    RaiseStatus(Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) +
                                        ") needs an integer, got " + py::repr(value).cast<std::string>()));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  Py_DECREF(idx);
  bool bad = overflow != 0 || !unirecord::FitsIntegral(f.type, v);
  if (bad) {
    RaiseStatus(Status::InvalidArgument("field '" + f.name + "': " + py::repr(value).cast<std::string>() +
                                        " does not fit " + unirecord::FieldTypeName(f.type)));
  }
  return v;
}

double ToDouble(const Field& f, const py::handle& value) {
  double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    RaiseStatus(Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) +
                                        ") needs a number, got " + py::repr(value).cast<std::string>()));
  }
  return v;
}

// The summary dict of Writer.finish(), PartWriter.finish(), StagedWrite.commit().
py::dict SummaryDict(const unirecord::WriterSummary& s) {
  py::dict summary;
  summary["records"] = s.records;
  summary["shards"] = s.shards;
  summary["bytes"] = s.bytes;
  summary["uuid"] = s.uuid;
  summary["shard_paths"] = FsNames(s.shard_paths);
  summary["index_paths"] = FsNames(s.index_paths);
  summary["manifest_path"] = FsName(s.manifest_path);
  summary["generation"] = s.generation;
  return summary;
}

// A Writer or a PartWriter (the same calls) with its Python state.
template <class W>
struct PyWriterOf {
  std::unique_ptr<W> writer;
  std::optional<RecordBuilder> builder;
  Schema schema;
  std::string out_dir, name;
  bool finished = false;
  bool aborted = false;
  py::dict summary;

  W& Live() {
    if (finished) RaiseStatus(Status::FailedPrecondition("Writer is already finished"));
    if (aborted || !writer) RaiseStatus(Status::FailedPrecondition("Writer was aborted; nothing was written"));
    return *writer;
  }

  void Write(const py::object& record_arg) {
    if (!PyDict_Check(record_arg.ptr())) {
      throw py::type_error("record must be a dict {field name: value}, not " +
                           std::string(Py_TYPE(record_arg.ptr())->tp_name));
    }
    const py::dict record = py::reinterpret_borrow<py::dict>(record_arg);
    W& w = Live();
    RecordBuilder& b = *builder;
    std::vector<std::unique_ptr<HeldBuffer>> held;
    size_t found = 0;
    for (size_t i = 0; i < schema.num_fields(); ++i) {
      const Field& f = schema.field(i);
      PyObject* raw = PyDict_GetItemString(record.ptr(), f.name.c_str());  // borrowed
      if (raw == nullptr) {
        b.Clear();
        RaiseStatus(Status::InvalidArgument("record has no value for field '" + f.name + "' (schema: " +
                                            schema.ToString() + ")"));
      }
      ++found;
      py::handle value(raw);
      Status st;
      if (unirecord::IsIntegral(f.type) && !f.is_array()) {
        const int64_t v = ToInt64(f, value);  // in range: its low bytes are the value (little-endian host)
        st = b.SetValues(i, f.type, &v, {});
      } else if (unirecord::IsNumeric(f.type) && !f.is_array() && unirecord::NumericWidth(f.type) >= 4) {
        const double v = ToDouble(f, value);  // float32, float64 without numpy
        const float narrow = static_cast<float>(v);
        st = b.SetValues(i, f.type, unirecord::NumericWidth(f.type) == 8 ? static_cast<const void*>(&v) : &narrow, {});
      } else if (unirecord::IsNumeric(f.type)) {
        if (!f.is_array()) ToDouble(f, value);  // raises "needs a number" for anything else
        st = SetNumericValue(b, i, f, value);
      } else {
        switch (f.type) {
          case FieldType::kString:
            if (PyUnicode_Check(raw)) {
              // As os.fsencode: surrogate escapes (from a Dataset or os.listdir) become their bytes again.
              st = b.SetString(i, FsNameBytes(value));  // copied
            } else if (PyObject_CheckBuffer(raw)) {
              HeldBuffer buf(raw);
              st = b.SetString(i, buf.bytes());  // copied
            } else {
              st = Status::InvalidArgument("field '" + f.name + "' (string) needs a str, got " +
                                           py::repr(value).cast<std::string>());
            }
            break;
          case FieldType::kBytes:
            if (!PyObject_CheckBuffer(raw)) {
              st = Status::InvalidArgument("field '" + f.name +
                                           "' (bytes) needs bytes or a contiguous buffer, got " +
                                           py::repr(value).cast<std::string>());
            } else {
              held.push_back(std::make_unique<HeldBuffer>(raw));
              st = b.SetBytes(i, held.back()->bytes());
            }
            break;
          default:
            break;
        }
      }
      if (!st.ok()) {
        b.Clear();
        RaiseStatus(Status(st.code(), "record " + std::to_string(w.records_written()) + ": " + st.message()));
      }
    }
    if (found != static_cast<size_t>(py::len(record))) {
      b.Clear();
      for (auto item : record) {
        std::string key = py::str(item.first).cast<std::string>();
        if (schema.FieldIndex(key) < 0) {
          RaiseStatus(Status::InvalidArgument("record has a value for '" + key +
                                              "', which is not a field of the schema (" + schema.ToString() + ")"));
        }
      }
    }
    Check(w.Write(b));
  }

  py::dict Finish() {
    W& w = Live();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = w.Finish();
    }
    if (!st.ok()) {
      aborted = true;
      writer.reset();  // removes the temporary files
      RaiseStatus(st);
    }
    finished = true;
    summary = SummaryDict(w.summary());
    return summary;
  }

  void Abort() {
    if (finished) return;
    aborted = true;
    py::gil_scoped_release nogil;
    writer.reset();
  }
};

using PyWriter = PyWriterOf<Writer>;
using PyPartWriter = PyWriterOf<unirecord::PartWriter>;

template <class W>
void SetMetadataArgs(PyWriterOf<W>& w, const py::object& classes, const py::object& metadata);

// WriterOptions from the keywords Writer and PartWriter share.
WriterOptions WriterOptionsArgs(const py::object& target_shard_bytes, const py::object& blob_compression,
                                const py::object& zstd_level, const py::object& threads, const py::object& sync,
                                const py::object& blob_page_bytes, const py::object& scalar_page_bytes) {
  WriterOptions o;
  o.target_shard_bytes = IntArgAs<uint64_t>("target_shard_bytes", target_shard_bytes);
  o.default_blob_compression =
      Unwrap(unirecord::ParseBlobCompression(StrArg("blob_compression", blob_compression)));
  o.zstd_level = IntArgAs<int>("zstd_level", zstd_level);
  o.threads = IntArgAs<int>("threads", threads, 0);
  o.sync = BoolArg("sync", sync);
  o.blob_page_bytes = IntArgAs<uint32_t>("blob_page_bytes", blob_page_bytes);
  o.scalar_page_bytes = IntArgAs<uint32_t>("scalar_page_bytes", scalar_page_bytes);
  return o;
}

std::unique_ptr<PyWriter> NewWriter(const py::object& out, const py::object& schema, const py::object& name,
                                    const py::object& num_shards, const py::object& expected_records,
                                    const py::object& target_shard_bytes, const py::object& metadata,
                                    const py::object& classes, const py::object& blob_compression,
                                    const py::object& zstd_level, const py::object& threads, const py::object& sync,
                                    const py::object& blob_page_bytes, const py::object& scalar_page_bytes,
                                    const py::object& mode) {
  auto w = std::make_unique<PyWriter>();
  w->schema = ToSchema(schema);
  w->out_dir = PathArg("out", out);
  w->name = StrArg("name", name);
  WriterOptions o = WriterOptionsArgs(target_shard_bytes, blob_compression, zstd_level, threads, sync,
                                      blob_page_bytes, scalar_page_bytes);
  o.num_shards = IntArgAs<uint32_t>("num_shards", num_shards);
  o.expected_records = IntArgAs<uint64_t>("expected_records", expected_records);
  const std::string mode_name = StrArg("mode", mode);
  if (mode_name != "write" && mode_name != "append") {
    RaiseStatus(Status::InvalidArgument("mode must be 'write' or 'append', not '" + mode_name + "'"));
  }
  o.append = mode_name == "append";
  unirecord::Result<std::unique_ptr<Writer>> r = Status::Internal("not created");
  {
    py::gil_scoped_release nogil;
    r = Writer::Create(w->out_dir, w->name, w->schema, o);
  }
  w->writer = Unwrap(std::move(r));
  SetMetadataArgs(*w, classes, metadata);
  return w;
}

// The Writer keywords metadata= and classes=, and the builder.
template <class W>
void SetMetadataArgs(PyWriterOf<W>& w, const py::object& classes, const py::object& metadata) {
  w.builder.emplace(w.writer->schema());
  if (!classes.is_none()) {
    std::vector<std::string> names;
    for (py::handle name : classes) names.push_back(FsNameBytes(name));
    Check(w.writer->SetMetadata(unirecord::kClassesMetadataKey, Unwrap(unirecord::EncodeNameList(names))));
  }
  if (!metadata.is_none()) {
    if (!PyDict_Check(metadata.ptr())) {
      throw py::type_error("metadata must be a dict {str: str or bytes}, not " + py::repr(metadata).cast<std::string>());
    }
    for (auto item : metadata.cast<py::dict>()) {
      std::string value;
      if (py::isinstance<py::bytes>(item.second)) value = item.second.cast<std::string>();
      else value = py::str(item.second).cast<std::string>();
      Check(w.writer->SetMetadata(StrArg("metadata key", item.first), value));
    }
  }
}

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
                                             const py::object& follow_links_outside, const py::object& allow_empty) {
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
                            const py::object& follow_links_outside, const py::object& allow_empty) {
  const unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                         keep_original, sync, max_pixels, follow_links_outside,
                                                         allow_empty);
  const std::string src_path = PathArg("src", src), out_path = PathArg("out", out);
  return RunConversion(o, progress, [&](const unirecord::ConvertOptions& options) {
    return unirecord::ConvertImageFolder(src_path, out_path, options);
  });
}

py::dict ConvertCoco(const py::object& annotations, const py::object& images, const py::object& out,
                     const py::object& name, const py::object& num_shards, const py::object& target_shard_bytes,
                     const py::object& threads, const py::object& strict, const py::object& keep_original,
                     const py::object& sync, const py::object& progress, const py::object& max_pixels,
                            const py::object& follow_links_outside, const py::object& allow_empty) {
  const unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                         keep_original, sync, max_pixels, follow_links_outside,
                                                         allow_empty);
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
                            const py::object& follow_links_outside, const py::object& allow_empty) {
  const unirecord::ConvertOptions o = ConvertOptionsArgs(name, num_shards, target_shard_bytes, threads, strict,
                                                         keep_original, sync, max_pixels, follow_links_outside,
                                                         allow_empty);
  const std::string manifest_path = PathArg("manifest", manifest), schema_path = PathArg("schema", schema),
                    out_path = PathArg("out", out);
  return RunConversion(o, progress, [&](const unirecord::ConvertOptions& options) {
    return Convert(manifest_path, schema_path, out_path, options);
  });
}

// unirecord.StagedWrite: the driver's side of a staged write.
struct PyStagedWrite {
  std::unique_ptr<unirecord::StagedWrite> staged;
  py::dict summary;

  unirecord::StagedWrite& Live() {
    if (!staged) RaiseStatus(Status::FailedPrecondition("StagedWrite is already committed or aborted"));
    return *staged;
  }
  py::dict Commit() {
    unirecord::StagedWrite& w = Live();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = w.Commit();
    }
    if (!st.ok()) {
      Abort();
      RaiseStatus(st);
    }
    summary = SummaryDict(w.summary());
    summary["report_paths"] = FsNames(w.summary().report_paths);
    staged.reset();
    return summary;
  }
  void Abort() {
    py::gil_scoped_release nogil;
    staged.reset();  // removes what the run staged, releases the lock
  }
};

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

// A COCO / JSON Lines / CSV input from the binding's arguments:
// kind "coco", "jsonl" or "csv".
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
  } else {
    throw py::value_error("kind must be 'coco', 'jsonl' or 'csv', not " + py::repr(kind).cast<std::string>());
  }
  source.input = PathArg(k == "coco" ? "annotations" : "manifest", input);
  return source;
}

// The plan of a staged COCO / JSON Lines / CSV conversion (driver side).
struct PySourcePlan {
  unirecord::SourcePlan plan;
};

}  // namespace

// Methods Writer and PartWriter share.
template <class W>
void DefineWriterMethods(py::class_<PyWriterOf<W>>& cls, const char* type_name) {
  using P = PyWriterOf<W>;
  cls.def("write", &P::Write, py::arg("record"),
          "Appends one record: a dict with a value for every field (bytes fields: bytes or any contiguous "
          "buffer; arrays: anything numpy converts to the field's shape). ValueError on a missing, extra or "
          "mistyped value (the writer stays usable).")
      .def(
          "set_metadata",
          [](P& w, const py::object& key, const py::object& value) {
            std::string v = py::isinstance<py::bytes>(value) ? value.cast<std::string>()
                                                              : py::str(value).cast<std::string>();
            Check(w.Live().SetMetadata(StrArg("key", key), v));
          },
          py::arg("key"), py::arg("value"), "Adds a metadata entry; only before the first write().")
      .def("abort", &P::Abort, "Deletes everything written so far (no-op after finish()).")
      .def_property_readonly("records_written",
                             [](const P& w) -> uint64_t { return w.writer ? w.writer->records_written() : 0; })
      .def_property_readonly("schema", [](const P& w) { return w.schema; })
      .def_property_readonly("closed", [](const P& w) { return w.finished || w.aborted; })
      .def_property_readonly("summary", [](const P& w) -> py::object {
        if (!w.finished) return py::none();
        return w.summary;
      }, "The summary dict after finish(), else None.")
      .def("__enter__", [](P& w) -> P& { return w; }, py::return_value_policy::reference)
      .def("__exit__",
           [](P& w, const py::object& exc_type, const py::object&, const py::object&) {
             if (exc_type.is_none()) {
               if (!w.finished && !w.aborted) w.Finish();
             } else {
               w.Abort();
             }
             return false;
           },
           py::arg("exc_type"), py::arg("exc"), py::arg("tb"))
      .def("__repr__", [type_name](const P& w) {
        return std::string("unirecord.") + type_name + "(" + py::repr(FsName(w.out_dir)).template cast<std::string>() +
               ", name=" + py::repr(FsName(w.name)).template cast<std::string>() + ", schema=" + w.schema.ToString() + ")";
      });
}

namespace {

std::unique_ptr<PyPartWriter> NewPartWriter(const py::object& out, const py::object& schema, const py::object& name,
                                            const py::object& token, const py::object& part,
                                            const py::object& num_parts, const py::object& target_shard_bytes,
                                            const py::object& metadata, const py::object& classes,
                                            const py::object& blob_compression, const py::object& zstd_level,
                                            const py::object& threads, const py::object& sync,
                                            const py::object& blob_page_bytes, const py::object& scalar_page_bytes) {
  auto w = std::make_unique<PyPartWriter>();
  w->schema = ToSchema(schema);
  w->out_dir = PathArg("out", out);
  w->name = StrArg("name", name);
  const std::string token_text = StrArg("token", token);
  const uint32_t part_number = IntArgAs<uint32_t>("part", part);
  const uint32_t parts = IntArgAs<uint32_t>("num_parts", num_parts);
  WriterOptions o = WriterOptionsArgs(target_shard_bytes, blob_compression, zstd_level, threads, sync,
                                      blob_page_bytes, scalar_page_bytes);
  unirecord::Result<std::unique_ptr<unirecord::PartWriter>> r = Status::Internal("not created");
  {
    py::gil_scoped_release nogil;
    r = unirecord::PartWriter::Create(w->out_dir, w->name, token_text, part_number, parts, w->schema, o);
  }
  w->writer = Unwrap(std::move(r));
  SetMetadataArgs(*w, classes, metadata);
  return w;
}

}  // namespace

void RegisterWriter(py::module_& m) {
  // The keyword defaults are those of a default-constructed WriterOptions and
  // ConvertOptions: the same records give the same files from C++, urec and Python.
  const WriterOptions w;
  const unirecord::ConvertOptions c;
  py::class_<PyWriter> writer_class(m, "Writer", R"doc(
Writes records into a new sharded dataset OUT/NAME.uset (the manifest) +
OUT/NAME-SSSSS-of-NNNNN.gGGGGGG.urec (+ .uidx).

The keyword defaults (shown in the signature above) are C++'s WriterOptions,
so the same records give byte-identical files from Python, C++ and urec.

Use it as a context manager:

    with unirecord.Writer("out", {"image": "bytes", "label": "int64"}, classes=["cat", "dog"]) as w:
        for jpeg, label in samples:
            w.write({"image": jpeg, "label": label})

Everything is written to hidden ".NAME.tmp-*.partial" files; leaving the block
normally calls finish() (fsync, then one rename of the manifest commits the
new generation and replaces an older dataset NAME whole); leaving it with an
exception calls abort(), which deletes them: nothing half-written is ever
left looking like a dataset. A Writer dropped without finish() aborts too.
A second Writer of the same NAME and OUT, in any process, raises
RuntimeError naming the holder while one is open.
Sharding: num_shards=N round-robin (or contiguous with expected_records=n),
or target_shard_bytes=B; neither: one shard. metadata: {str: str|bytes}, set
before the first write; classes: list of class names (metadata "classes").
mode="append": add the records to dataset NAME as a new generation (its
shards copied first, ids continue; same schema and metadata, or finish()
raises naming what differs; new shards cut by target_shard_bytes).
)doc");
  writer_class
      .def(py::init(&NewWriter), py::arg("out"), py::arg("schema"), py::arg("name") = "data", py::kw_only(),
           py::arg("num_shards") = w.num_shards, py::arg("expected_records") = w.expected_records,
           py::arg("target_shard_bytes") = w.target_shard_bytes, py::arg("metadata") = py::none(),
           py::arg("classes") = py::none(),
           py::arg("blob_compression") = unirecord::BlobCompressionName(w.default_blob_compression),
           py::arg("zstd_level") = w.zstd_level, py::arg("threads") = w.threads, py::arg("sync") = w.sync,
           py::arg("blob_page_bytes") = w.blob_page_bytes, py::arg("scalar_page_bytes") = w.scalar_page_bytes,
           py::arg("mode") = "write")
      .def("finish", &PyWriter::Finish,
           "Completes and fsyncs every file and commits them as a new generation; returns the summary dict "
           "(records, shards, bytes, uuid, shard_paths, index_paths, manifest_path, generation).");
  DefineWriterMethods(writer_class, "Writer");

  py::class_<PyPartWriter> part_class(m, "PartWriter", R"doc(
Writes part PART of NUM_PARTS of a StagedWrite (its token) from any process
that sees OUT: Writer's calls and keywords, plus next_shard(). A part starts
with one shard; next_shard() cuts one (and target_shard_bytes=B, when set,
cuts as Writer does). finish() stages the part under hidden names in OUT
that StagedWrite.commit() takes; a part run again replaces its staged files
whole. Every part must get the same schema and metadata.
)doc");
  part_class
      .def(py::init(&NewPartWriter), py::arg("out"), py::arg("schema"), py::arg("name") = "data", py::kw_only(),
           py::arg("token"), py::arg("part"), py::arg("num_parts"),
           py::arg("target_shard_bytes") = w.target_shard_bytes, py::arg("metadata") = py::none(),
           py::arg("classes") = py::none(),
           py::arg("blob_compression") = unirecord::BlobCompressionName(w.default_blob_compression),
           py::arg("zstd_level") = w.zstd_level, py::arg("threads") = w.threads, py::arg("sync") = w.sync,
           py::arg("blob_page_bytes") = w.blob_page_bytes, py::arg("scalar_page_bytes") = w.scalar_page_bytes)
      .def("next_shard", [](PyPartWriter& p) { Check(p.Live().NextShard()); },
           "Ends the current shard (an empty one when nothing was written to it) and starts the next.")
      .def("finish", &PyPartWriter::Finish,
           "Completes the part's shards and stages them; returns the summary dict (records, shards, bytes, "
           "shard_paths and index_paths of the staged files).");
  DefineWriterMethods(part_class, "PartWriter");

  const unirecord::StagedWriteOptions sw;
  py::class_<PyStagedWrite>(m, "StagedWrite", R"doc(
The driver's side of a dataset written as NUM_PARTS parts by PartWriters in
any processes (a Dask, Spark or Ray job; docs/scale.md). Creating it takes
the writers' lock of NAME in OUT (RuntimeError naming the holder while
another writer has it) and picks `token`, which every PartWriter needs.
commit() verifies every staged shard (headers, footer, index checksums),
stamps the dataset's values into their headers and commits one manifest,
as Writer.finish(); a missing part, a damaged shard or mismatched schemas
commit nothing, with an error naming the part and file. abort() (or
dropping it) removes what the run staged and releases the lock.
)doc")
      .def(py::init([](const py::object& out, const py::object& name, const py::object& num_parts,
                       const py::object& threads, const py::object& sync) {
             auto p = std::make_unique<PyStagedWrite>();
             unirecord::StagedWriteOptions o;
             o.threads = IntArgAs<int>("threads", threads, 0);
             o.sync = BoolArg("sync", sync);
             const std::string out_dir = PathArg("out", out), dataset = StrArg("name", name);
             const uint32_t parts = IntArgAs<uint32_t>("num_parts", num_parts);
             unirecord::Result<std::unique_ptr<unirecord::StagedWrite>> r = Status::Internal("not begun");
             {
               py::gil_scoped_release nogil;
               r = unirecord::StagedWrite::Begin(out_dir, dataset, parts, o);
             }
             p->staged = Unwrap(std::move(r));
             return p;
           }),
           py::arg("out"), py::arg("name"), py::arg("num_parts"), py::kw_only(), py::arg("threads") = sw.threads,
           py::arg("sync") = sw.sync)
      .def_property_readonly("token", [](PyStagedWrite& p) { return p.Live().token(); })
      .def_property_readonly("num_parts", [](PyStagedWrite& p) { return p.Live().num_parts(); })
      .def("add_report", [](PyStagedWrite& p, const py::object& label, const py::object& text) {
             Check(p.Live().AddReport(StrArg("label", label), FsNameBytes(text)));
           }, py::arg("label"), py::arg("text"), "A text report committed with the dataset (OUT/NAME.LABEL.gG.tsv).")
      .def("commit", &PyStagedWrite::Commit,
           "Verifies and commits every part; returns the summary dict (records, shards, bytes, uuid, shard_paths, "
           "index_paths, report_paths, manifest_path, generation).")
      .def("abort", &PyStagedWrite::Abort, "Removes what the run staged and releases the lock.")
      .def("__enter__", [](PyStagedWrite& p) -> PyStagedWrite& { return p; }, py::return_value_policy::reference)
      .def("__exit__", [](PyStagedWrite& p, const py::object&, const py::object&, const py::object&) {
             p.Abort();  // after commit() a no-op
             return false;
           },
           py::arg("exc_type"), py::arg("exc"), py::arg("tb"));

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
                                const py::object& follow_links_outside, const py::object& allow_empty) {
          auto p = std::make_unique<PyImageFolderPlan>();
          p->src = PathArg("src", src);
          const std::string out_dir = PathArg("out", out);
          p->options = ConvertOptionsArgs(name, num_shards, py::int_(0), py::int_(1), strict, keep_original, sync,
                                          max_pixels, follow_links_outside, allow_empty);
          unirecord::Result<unirecord::ImageFolderPlan> r = Status::Internal("not planned");
          {
            py::gil_scoped_release nogil;
            r = unirecord::PlanImageFolder(p->src, out_dir, p->options);
          }
          p->plan = Unwrap(std::move(r));
          return p;
        }, py::arg("src"), py::arg("out"), py::kw_only(), py::arg("name"), py::arg("num_shards"), py::arg("strict"),
        py::arg("keep_original"), py::arg("sync"), py::arg("max_pixels"), py::arg("follow_links_outside"),
        py::arg("allow_empty"));
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

  m.def("convert_imagefolder", &ConvertImageFolder, py::arg("src"), py::arg("out"), py::kw_only(),
        py::arg("name") = py::none(), py::arg("num_shards") = c.num_shards,
        py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads,
        py::arg("strict") = c.strict, py::arg("keep_original") = c.keep_original, py::arg("sync") = c.sync,
        py::arg("progress") = py::none(), py::arg("max_pixels") = c.limits.max_pixels,
        py::arg("follow_links_outside") = c.follow_links_outside, py::arg("allow_empty") = c.allow_empty,
        R"doc(
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
The defaults are C++'s ConvertOptions (as urec's). Returns the report dict (name, classes, written, rejected, skipped,
image_bytes, source_bytes, transcoded, kept_original, png, kept_original_reasons
({reason: count}), output_bytes, shards, seconds, uuid, shard_paths,
not_written, rejects_path).
)doc");
  m.def("convert_jsonl", &ConvertManifest<unirecord::ConvertJsonl>, py::arg("manifest"), py::arg("out"), py::kw_only(),
        py::arg("schema"), py::arg("name") = py::none(), py::arg("num_shards") = c.num_shards,
        py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads,
        py::arg("strict") = c.strict, py::arg("keep_original") = c.keep_original, py::arg("sync") = c.sync,
        py::arg("progress") = py::none(), py::arg("max_pixels") = c.limits.max_pixels,
        py::arg("follow_links_outside") = c.follow_links_outside, py::arg("allow_empty") = c.allow_empty,
        R"doc(
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
)doc");
  m.def("convert_csv", &ConvertManifest<unirecord::ConvertCsv>, py::arg("manifest"), py::arg("out"), py::kw_only(),
        py::arg("schema"), py::arg("name") = py::none(), py::arg("num_shards") = c.num_shards,
        py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads,
        py::arg("strict") = c.strict, py::arg("keep_original") = c.keep_original, py::arg("sync") = c.sync,
        py::arg("progress") = py::none(), py::arg("max_pixels") = c.limits.max_pixels,
        py::arg("follow_links_outside") = c.follow_links_outside, py::arg("allow_empty") = c.allow_empty,
        R"doc(
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
)doc");
  m.def("convert_coco", &ConvertCoco, py::arg("annotations"), py::arg("images"), py::arg("out"), py::kw_only(),
        py::arg("name") = py::none(), py::arg("num_shards") = c.num_shards,
        py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads,
        py::arg("strict") = c.strict, py::arg("keep_original") = c.keep_original, py::arg("sync") = c.sync,
        py::arg("progress") = py::none(), py::arg("max_pixels") = c.limits.max_pixels,
        py::arg("follow_links_outside") = c.follow_links_outside, py::arg("allow_empty") = c.allow_empty,
        R"doc(
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
)doc");
}

}  // namespace unirecord_py
