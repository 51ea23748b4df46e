// unirecord.Writer, and what the writers share (writer_py.h).
#include "writer_py.h"

#include "unirecord/convert.h"
#include "unirecord/media.h"

namespace unirecord_py {

namespace {

// `value`'s repr for a message, bounded as every quoted input is (MessageText).
std::string Repr(const py::handle& value) { return unirecord::MessageText(py::repr(value).cast<std::string>()); }

// "field 'v' (float32)", how the messages below start.
std::string FieldWhere(const Field& f) {
  return "field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) + ")";
}

// The refusal of the one float policy (NarrowFloat) for `value`.
Status OutOfFloatRange(const Field& f, const std::string& value) {
  return Status::InvalidArgument(FieldWhere(f) + ": " + value + " is out of " + unirecord::FieldTypeName(f.type) +
                                 "'s range");
}

// The numbers of `a` (kind 'f', 'i' or 'u') as the float field `f`'s type,
// each through NarrowFloat, as JSON values go: rounded to the nearest, a
// finite value that would round to an infinity refused naming it and its
// position. A long double past float64's range is refused as well.
Status NarrowFloats(const Field& f, const py::array& a, py::array* out) {
  const py::module_ np = py::module_::import("numpy");
  const py::array wide = np.attr("ascontiguousarray")(a, "float64");
  if (a.dtype().kind() == 'f' && a.itemsize() > 8) {
    const py::array lost = np.attr("flatnonzero")(np.attr("isfinite")(a).attr("__and__")(
        np.attr("isinf")(wide)));
    if (lost.size() > 0) return OutOfFloatRange(f, Repr(a.attr("flat")[lost.attr("item")(0)]));
  }
  *out = py::array(py::dtype(unirecord::FindType(f.type)->name),
                   std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  const double* given = static_cast<const double*>(wide.data());
  auto* stored = static_cast<uint8_t*>(out->mutable_data());
  const size_t width = unirecord::NumericWidth(f.type);
  for (py::ssize_t k = 0; k < wide.size(); ++k) {
    if (!unirecord::NarrowFloat(f.type, given[k], stored + k * width)) {
      return OutOfFloatRange(f, py::repr(py::float_(given[k])).cast<std::string>() +
                                    (a.ndim() > 0 ? " (element " + std::to_string(k) + " in C order)" : ""));
    }
  }
  return Status::OK();
}

}  // namespace

// Any numeric field's value (a scalar, a numpy array or nested lists) as
// the field's dtype (TypeInfo::name is numpy's name), then RecordBuilder::
// SetValues, which checks the shape against the field's pattern. A value
// whose dtype differs is cast only when nothing changes: an integer or bool
// target takes values that round-trip exactly; a float target takes any
// integer or float by the one float policy (NarrowFloat: rounded to the
// nearest, never from a finite value to an infinity).
Status SetNumericValue(RecordBuilder& b, size_t index, const Field& f, const py::handle& value) {
  const py::module_ np = py::module_::import("numpy");
  const py::dtype dtype(unirecord::FindType(f.type)->name);
  py::object given;
  try {
    given = np.attr("asarray")(value);
  } catch (py::error_already_set& e) {  // ragged nested lists
    return Status::InvalidArgument(FieldWhere(f) + ": not an array: " + unirecord::MessageText(e.what()));
  }
  py::array a = py::reinterpret_borrow<py::array>(given);
  const char given_kind = a.dtype().kind();
  const bool numbers = given_kind == 'b' || given_kind == 'i' || given_kind == 'u' || given_kind == 'f';
  // Narrowing into a float type: a wider float, or an integer into float16.
  const bool narrows = dtype.kind() == 'f' && ((given_kind == 'f' && a.itemsize() > dtype.itemsize()) ||
                                               ((given_kind == 'i' || given_kind == 'u') && dtype.itemsize() == 2));
  if (!a.dtype().is(dtype) && a.size() > 0) {
    if (!numbers) return Status::InvalidArgument(FieldWhere(f) + " needs numbers, got " + Repr(value));
    if (narrows) {
      py::array narrowed;
      UREC_RETURN_IF_ERROR(NarrowFloats(f, a, &narrowed));
      a = narrowed;
    } else {
      py::object cast = a.attr("astype")(dtype);
      const bool to_float = dtype.kind() == 'f' && given_kind != 'b';
      if (!to_float && !np.attr("array_equal")(cast, a).cast<bool>()) {
        return Status::InvalidArgument(FieldWhere(f) + ": values of dtype " + py::str(a.dtype()).cast<std::string>() +
                                       " and shape " + py::str(a.attr("shape")).cast<std::string>() +
                                       " cannot be cast exactly to " + unirecord::FieldTypeName(f.type));
      }
      a = py::reinterpret_borrow<py::array>(cast);
    }
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
    RaiseStatus(Status::InvalidArgument(FieldWhere(f) + " needs an integer, got " + Repr(value)));
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  Py_DECREF(idx);
  bool bad = overflow != 0 || !unirecord::FitsIntegral(f.type, v);
  if (bad) {
    RaiseStatus(Status::InvalidArgument("field '" + f.name + "': " + Repr(value) + " does not fit " +
                                        unirecord::FieldTypeName(f.type)));
  }
  return v;
}

double ToDouble(const Field& f, const py::handle& value) {
  double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    // An int past any double (10**400): out of range, not "not a number".
    const bool too_large = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    if (too_large) RaiseStatus(OutOfFloatRange(f, Repr(value)));
    RaiseStatus(Status::InvalidArgument(FieldWhere(f) + " needs a number, got " + Repr(value)));
  }
  return v;
}

// A video or audio field from a container file's bytes (any buffer) or a
// path (os.PathLike), demuxed into the field's media value, or from a media
// value (unirecord.demux's bytes).
Status SetMediaValue(RecordBuilder& b, size_t i, const Field& f, const py::handle& value) {
  PyObject* raw = value.ptr();
  if (PyObject_CheckBuffer(raw)) {
    HeldBuffer buf(raw);
    py::gil_scoped_release nogil;
    // A media value already (unirecord.demux's): taken as it is; a container otherwise.
    if (unirecord::IsMediaValue(buf.bytes())) return b.SetMediaValue(i, buf.bytes());
    return b.SetMedia(i, buf.bytes());
  }
  if (!py::isinstance<py::str>(value) && py::hasattr(value, "__fspath__")) {
    const std::string path = PathArg(f.name, value);
    unirecord::media::DemuxOptions options;
    options.kind = f.type == FieldType::kVideo ? unirecord::MediaKind::kVideo : unirecord::MediaKind::kAudio;
    options.name = "field '" + f.name + "': " + path;
    py::gil_scoped_release nogil;
    unirecord::Result<std::string> stored = unirecord::media::DemuxFile(path, options);
    return stored.ok() ? b.SetMediaValue(i, *stored) : stored.status();
  }
  return Status::InvalidArgument("field '" + f.name + "' (" + unirecord::FieldTypeName(f.type) +
                                 ") needs a container file's bytes or a pathlib.Path, got " + Repr(value));
}

void FillRecord(RecordBuilder& b, const Schema& schema, const py::dict& record,
                std::vector<std::unique_ptr<HeldBuffer>>* held, const std::string& where) {
  size_t found = 0;
  for (size_t i = 0; i < schema.num_fields(); ++i) {
    const Field& f = schema.field(i);
    PyObject* raw = PyDict_GetItemString(record.ptr(), f.name.c_str());  // borrowed
    if (schema.MediaSourceOf(i) >= 0) {  // a media parameter: set from the media value, never given
      if (raw == nullptr) continue;
      b.Clear();
      RaiseStatus(Status::InvalidArgument("record has a value for '" + f.name + "', a parameter of field '" +
                                          schema.field(static_cast<size_t>(schema.MediaSourceOf(i))).name +
                                          "' that is set from its media value"));
    }
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
      uint8_t stored[8];
      st = unirecord::NarrowFloat(f.type, v, stored) ? b.SetValues(i, f.type, stored, {})
                                                      : OutOfFloatRange(f, Repr(py::float_(v)));
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
            st = Status::InvalidArgument("field '" + f.name + "' (string) needs a str, got " + Repr(value));
          }
          break;
        case FieldType::kBytes:
          if (!PyObject_CheckBuffer(raw)) {
            st = Status::InvalidArgument("field '" + f.name +
                                         "' (bytes) needs bytes or a contiguous buffer, got " + Repr(value));
          } else {
            held->push_back(std::make_unique<HeldBuffer>(raw));
            st = b.SetBytes(i, held->back()->bytes());
          }
          break;
        case FieldType::kVideo:
        case FieldType::kAudio:
          st = SetMediaValue(b, i, f, value);
          break;
        default:
          break;
      }
    }
    if (!st.ok()) {
      b.Clear();
      RaiseStatus(where.empty() ? st : Status(st.code(), where + ": " + st.message()));
    }
  }
  if (found != static_cast<size_t>(py::len(record))) {
    b.Clear();
    for (auto item : record) {
      std::string key = py::str(item.first).cast<std::string>();
      if (schema.FieldIndex(key) < 0) {
        RaiseStatus(Status::InvalidArgument("record has a value for '" + unirecord::MessageText(key) +
                                            "', which is not a field of the schema (" + schema.ToString() + ")"));
      }
    }
  }
}

Status FillFromDict(const Schema& schema, const std::function<py::object()>& get, const std::string& where,
                    RecordBuilder& out, std::optional<py::error_already_set>* raised) {
  py::gil_scoped_acquire gil;
  try {
    const py::object record = get();
    if (!PyDict_Check(record.ptr())) {
      throw py::type_error("the values of " + (where.empty() ? std::string("a record") : where) +
                           " must be a dict, not " + std::string(Py_TYPE(record.ptr())->tp_name));
    }
    std::vector<std::unique_ptr<HeldBuffer>> held;
    FillRecord(out, schema, py::reinterpret_borrow<py::dict>(record), &held, where);
    // Bytes are viewed until written: copy them in now.
    for (size_t k = 0; k < schema.num_fields(); ++k) {
      if (schema.field(k).type != unirecord::FieldType::kBytes) continue;
      PyObject* raw = PyDict_GetItemString(record.ptr(), schema.field(k).name.c_str());
      HeldBuffer buffer(raw);
      Status copied = out.SetBytesOwned(k, std::string(buffer.bytes()));
      if (!copied.ok()) return copied;
    }
    return Status::OK();
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) {
      const std::string message = py::str(e.value()).cast<std::string>();
      return Status::InvalidArgument(where.empty() ? message : where + ": " + message);
    }
    raised->emplace(std::move(e));
    return Status::Internal("stopped by a Python exception");
  }
}

unirecord::FieldDefaults DefaultsArg(const py::object& value) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::str>(value)) return unirecord::JsonFieldDefaults(value.cast<std::string>());
  if (!PyDict_Check(value.ptr())) {
    throw py::type_error("default must be a dict {field: value} (or a JSON object's text), not " +
                         std::string(Py_TYPE(value.ptr())->tp_name));
  }
  // Copied with the FieldDefaults wherever it goes; released under the GIL.
  std::shared_ptr<py::object> held(new py::object(value), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
  return [held](RecordBuilder& out) -> Status {
    std::optional<py::error_already_set> raised;
    Status set = FillFromDict(out.schema(), [&] { return *held; }, "default", out, &raised);
    if (raised) {
      py::gil_scoped_acquire gil;
      set = Status::InvalidArgument("default: " + std::string(raised->type().attr("__name__").cast<std::string>()) +
                                    ": " + py::str(raised->value()).cast<std::string>());
      raised.reset();
    }
    return set;
  };
}

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

namespace {

std::unique_ptr<PyWriter> NewWriter(const py::object& out, const py::object& schema, const py::object& name,
                                    const py::object& num_shards, const py::object& expected_records,
                                    const py::object& target_shard_bytes, const py::object& metadata,
                                    const py::object& classes, const py::object& blob_compression,
                                    const py::object& zstd_level, const py::object& threads, const py::object& sync,
                                    const py::object& blob_page_bytes, const py::object& scalar_page_bytes,
                                    const py::object& mode, const py::object& default_values) {
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
  o.defaults = DefaultsArg(default_values);
  unirecord::Result<std::unique_ptr<Writer>> r = Status::Internal("not created");
  {
    py::gil_scoped_release nogil;
    r = Writer::Create(w->out_dir, w->name, w->schema, o);
  }
  w->writer = Unwrap(std::move(r));
  SetMetadataArgs(*w, classes, metadata);
  return w;
}

}  // namespace

void RegisterWriter(py::module_& m) {
  // The keyword defaults are those of a default-constructed WriterOptions: the
  // same records give the same files from C++, urec and Python.
  const WriterOptions w;
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
mode="append": add the records to dataset NAME as a new generation: a new
segment after its shards, which stay as they are (no copy; ids continue;
same schema and metadata, or finish() raises naming what differs; new shards
cut by target_shard_bytes). Fields added to the dataset later (add_fields)
that the records lack get default={field: value}; without it the Writer
raises ValueError at once naming them. Every commit is kept as a version
(unirecord.versions; unirecord.gc removes old ones).
)doc");
  writer_class
      .def(py::init(&NewWriter), py::arg("out"), py::arg("schema"), py::arg("name") = "data", py::kw_only(),
           py::arg("num_shards") = w.num_shards, py::arg("expected_records") = w.expected_records,
           py::arg("target_shard_bytes") = w.target_shard_bytes, py::arg("metadata") = py::none(),
           py::arg("classes") = py::none(),
           py::arg("blob_compression") = unirecord::BlobCompressionName(w.default_blob_compression),
           py::arg("zstd_level") = w.zstd_level, py::arg("threads") = w.threads, py::arg("sync") = w.sync,
           py::arg("blob_page_bytes") = w.blob_page_bytes, py::arg("scalar_page_bytes") = w.scalar_page_bytes,
           py::arg("mode") = "write", py::arg("default") = py::none())
      .def("finish", &PyWriter::Finish,
           "Completes and fsyncs every file and commits them as a new generation; returns the summary dict "
           "(records, shards, bytes, uuid, shard_paths, index_paths, manifest_path, generation).");
  DefineWriterMethods(writer_class, "Writer");

}

}  // namespace unirecord_py
