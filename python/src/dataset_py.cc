// unirecord.Field, unirecord.Schema and unirecord.Dataset.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.h"
#include "unirecord/schema.h"

namespace unirecord_py {

using unirecord::Blob;
using unirecord::BlobCompression;
using unirecord::BlobCompressionName;
using unirecord::Dataset;
using unirecord::DatasetOptions;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::Record;
using unirecord::RemoteOptions;
using unirecord::Schema;
using unirecord::Status;

namespace {

FieldType FieldTypeArg(const py::handle& obj) {
  std::string name;
  if (py::isinstance<py::str>(obj)) {
    return Unwrap(unirecord::ParseFieldType(obj.cast<std::string>()));
  } else if (obj.is(py::type::of(py::int_()))) {
    name = "int64";
  } else if (obj.is(py::type::of(py::float_()))) {
    name = "float64";
  } else if (obj.is(py::type::of(py::str()))) {
    name = "string";
  } else if (obj.is(py::type::of(py::bytes()))) {
    name = "bytes";
  } else if (py::hasattr(obj, "name") || py::hasattr(obj, "dtype")) {
    // numpy dtypes and scalar types: np.int32, np.dtype("float32")
    name = py::str(py::module_::import("numpy").attr("dtype")(obj).attr("name")).cast<std::string>();
  }
  unirecord::Result<FieldType> type = unirecord::ParseFieldType(name);
  if (type.ok()) return *type;
  PyErr_SetString(PyExc_TypeError, (type.status().message() + " (or int, float, str, bytes, a numpy dtype), not " +
                                    py::repr(obj).cast<std::string>())
                                       .c_str());
  throw py::error_already_set();
}

Field MakeField(const std::string& name, const py::handle& type, const py::handle& shape, const py::handle& indexed,
                const py::handle& compression) {
  Field f;
  f.name = name;
  f.type = FieldTypeArg(type);
  if (!shape.is_none()) {
    if (PyIndex_Check(shape.ptr())) {
      f.shape = {IntArgAs<int64_t>("shape", shape, unirecord::kVariableDim)};
    } else if (py::isinstance<py::sequence>(shape) && !py::isinstance<py::str>(shape)) {
      for (py::handle dim : shape) f.shape.push_back(IntArgAs<int64_t>("shape", dim, unirecord::kVariableDim));
    } else {
      IntArgAs<int64_t>("shape", shape, 1);  // raises the TypeError
    }
  }
  f.indexed = BoolArg("indexed", indexed);
  f.compression = Unwrap(unirecord::ParseBlobCompression(StrArg("compression", compression)));
  return f;
}

std::string FieldRepr(const Field& f) {
  std::string s = "Field('" + f.name + "', '" + unirecord::FieldTypeName(f.type) + "'";
  if (f.is_array()) {
    s += ", shape=(";
    for (size_t i = 0; i < f.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(f.shape[i]);
    s += f.shape.size() == 1 ? ",)" : ")";
  }
  if (f.indexed) s += ", indexed=True";
  if (f.compression != BlobCompression::kNone) s += ", compression='" + std::string(BlobCompressionName(f.compression)) + "'";
  return s + ")";
}

}  // namespace

// A schema from a Schema, a list of Fields, or a dict {name: type or Field}.
Schema ToSchema(const py::handle& obj) {
  if (py::isinstance<Schema>(obj)) return obj.cast<Schema>();
  std::vector<Field> fields;
  if (py::isinstance<py::dict>(obj)) {
    for (auto item : obj.cast<py::dict>()) {
      std::string name = StrArg("field name", item.first);
      if (py::isinstance<Field>(item.second)) {
        Field f = item.second.cast<Field>();
        f.name = name;
        fields.push_back(f);
      } else {
        fields.push_back(MakeField(name, item.second, py::none(), py::bool_(false), py::str("none")));
      }
    }
  } else if (py::isinstance<py::iterable>(obj) && !py::isinstance<py::str>(obj)) {
    for (auto item : obj) {
      if (!py::isinstance<Field>(item)) {
        throw py::type_error("a schema's list holds unirecord.Field values, not " +
                             py::repr(item).cast<std::string>());
      }
      fields.push_back(item.cast<Field>());
    }
  } else {
    throw py::type_error("schema must be a Schema, a list of Field or a dict {name: type or Field}, not " +
                         py::repr(obj).cast<std::string>());
  }
  return Unwrap(Schema::Make(std::move(fields)));
}

namespace {

// Metadata from the file: str when it is valid UTF-8, bytes otherwise.
py::object TextOrBytes(std::string_view s) {
  PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  if (u != nullptr) return py::reinterpret_steal<py::object>(u);
  PyErr_Clear();
  return py::bytes(s.data(), s.size());
}

// The owner behind a zero-copy memoryview of a blob: keeps the mapping alive.
struct BlobView {
  std::shared_ptr<const Dataset> dataset;
  Blob blob;
};

// A read-only view of the blob: a memoryview, or (as_numpy) a 1-D uint8 numpy
// array whose base is the owner. Either keeps the dataset mapped.
py::object MakeBlobValue(std::shared_ptr<const Dataset> dataset, Blob blob, bool as_numpy) {
  std::string_view bytes = blob.data();
  py::object owner = py::cast(BlobView{std::move(dataset), std::move(blob)});
  if (as_numpy) {
    static const uint8_t empty = 0;
    const uint8_t* p = bytes.empty() ? &empty : reinterpret_cast<const uint8_t*>(bytes.data());
    py::array_t<uint8_t> a({static_cast<py::ssize_t>(bytes.size())}, {py::ssize_t{1}}, p, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return std::move(a);
  }
  PyObject* mv = PyMemoryView_FromObject(owner.ptr());
  if (mv == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(mv);
}

// A numpy array of the field's dtype (TypeInfo::name is numpy's name). A
// variable-shape array is a read-only zero-copy view of the mapped shard
// whose base keeps the dataset open; a fixed-shape one (in an inflated
// scalar page that the record owns) is copied.
py::object ArrayValue(const PyDataset& d, const Field& f, const unirecord::ArrayView& a) {
  const py::dtype dtype(unirecord::FindType(a.type)->name);
  const std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  if (unirecord::KindInfoOf(f.kind()).storage == unirecord::StorageClass::kBlob) {
    static const uint64_t empty = 0;
    py::object owner = py::cast(BlobView{d.dataset, Blob()});
    py::array out(dtype, shape, {}, a.count == 0 ? &empty : a.data, owner);
    py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return std::move(out);
  }
  py::array out(dtype, shape, {});
  std::memcpy(out.mutable_data(), a.data, a.bytes());
  return std::move(out);
}

// An integer or bool scalar as Python's int or bool.
py::object IntValue(const Field& f, int64_t v) {
  return f.type == FieldType::kBool ? py::object(py::bool_(v != 0)) : py::object(py::int_(v));
}

py::object FieldValue(const PyDataset& d, uint64_t id, size_t index, const Record* record) {
  const Field& f = d.dataset->schema().field(index);
  if (f.type == FieldType::kBytes) {
    Blob blob;
    {
      py::gil_scoped_release nogil;
      auto r = d.dataset->GetBlob(id, index);
      if (r.ok()) blob = std::move(r).value();
      else {
        py::gil_scoped_acquire gil;
        RaiseStatus(r.status());
      }
    }
    return MakeBlobValue(d.dataset, std::move(blob), d.bytes_as_numpy);
  }
  if (f.storage() == unirecord::StorageClass::kIndexed) {
    if (unirecord::IsIntegral(f.type)) {
      return IntValue(f, Unwrap(d.dataset->GetIndexedInt64(id, index)));
    }
    return py::float_(Unwrap(d.dataset->GetIndexedFloat64(id, index)));
  }
  if (record == nullptr) {
    RaiseStatus(Status::Internal("field '" + f.name + "' read without its record"));
  }
  if (f.is_array()) return ArrayValue(d, f, Unwrap(record->GetArray(index)));
  if (unirecord::IsIntegral(f.type)) return IntValue(f, Unwrap(record->GetInt64(index)));
  if (unirecord::IsNumeric(f.type)) return py::float_(Unwrap(record->GetFloat64(index)));
  switch (f.type) {
    case FieldType::kString: {
      // As os.fsdecode: bytes that are not UTF-8 survive as surrogate escapes.
      return FsName(Unwrap(record->GetString(index)));
    }
    default: break;
  }
  RaiseStatus(Status::Internal("field '" + f.name + "' has an unknown type"));
}

void OpenInto(PyDataset& d) {
  unirecord::Result<std::shared_ptr<Dataset>> r = Status::Internal("not opened");
  {
    py::gil_scoped_release nogil;
    r = d.path_is_list ? Dataset::Open(d.paths, d.options) : Dataset::Open(d.paths[0], d.options);
  }
  d.dataset = Unwrap(std::move(r));
  const Schema& schema = d.dataset->schema();
  d.fields.clear();
  if (d.field_names.empty()) {
    for (size_t i = 0; i < schema.num_fields(); ++i) d.fields.push_back(i);
  } else {
    for (const std::string& name : d.field_names) {
      int i = schema.FieldIndex(name);
      if (i < 0) {
        RaiseStatus(Status::KeyNotFound("dataset " + d.paths[0] + " has no field named '" + name +
                                            "' (fields: " + schema.ToString() + ")"));
      }
      d.fields.push_back(static_cast<size_t>(i));
    }
  }
  d.needs_record = false;
  for (size_t i : d.fields) {
    const Field& f = schema.field(i);
    if (f.type != FieldType::kBytes && f.storage() != unirecord::StorageClass::kIndexed) d.needs_record = true;
  }
}

// One remote option (a RemoteOptions member other than cache_dir and
// cache_limit, docs/remote.md) by name: Dataset(remote_options={name: ...})
// and unirecord.Remote take them; the ranges are RemoteShards::Open's to check.
struct RemoteOption {
  const char* name;
  py::object (*get)(const RemoteOptions&);
  void (*set)(const std::string& shown_as, const py::handle&, RemoteOptions&);
};

template <typename T>
T RemoteValue(const std::string& shown_as, const py::handle& value) {
  if constexpr (std::is_same_v<T, std::string>) return StrArg(shown_as, value);
  else return IntArgAs<T>(shown_as, value);
}

#define UREC_REMOTE_OPTION(MEMBER)                                                                  \
  RemoteOption {                                                                                     \
    #MEMBER, [](const RemoteOptions& o) { return py::cast(o.MEMBER); },                              \
        [](const std::string& shown_as, const py::handle& v, RemoteOptions& o) {                     \
          o.MEMBER = RemoteValue<decltype(o.MEMBER)>(shown_as, v);                                   \
        }                                                                                            \
  }

const std::vector<RemoteOption>& RemoteOptionTable() {
  static const std::vector<RemoteOption> table = {
      UREC_REMOTE_OPTION(prefetch_shards),   UREC_REMOTE_OPTION(max_requests),
      UREC_REMOTE_OPTION(attempts),          UREC_REMOTE_OPTION(retry_backoff_ms),
      UREC_REMOTE_OPTION(timeout_s),         UREC_REMOTE_OPTION(min_rate_bytes_per_s),
      UREC_REMOTE_OPTION(min_rate_window_s), UREC_REMOTE_OPTION(request_deadline_s),
      UREC_REMOTE_OPTION(s3_endpoint),       UREC_REMOTE_OPTION(s3_addressing),
  };
  return table;
}

#undef UREC_REMOTE_OPTION

const RemoteOption* FindRemoteOption(const std::string& name) {
  for (const RemoteOption& option : RemoteOptionTable()) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

void SetRemoteOptions(const py::handle& options, RemoteOptions* remote) {
  if (options.is_none()) return;
  if (!py::isinstance<py::dict>(options)) {
    throw py::type_error("remote_options must be a dict, not " + py::repr(options).cast<std::string>());
  }
  for (auto item : py::reinterpret_borrow<py::dict>(options)) {
    const std::string key = StrArg("remote_options key", item.first);
    const RemoteOption* option = FindRemoteOption(key);
    if (option == nullptr) {
      std::string names;
      for (const RemoteOption& known : RemoteOptionTable()) names += std::string(known.name) + ", ";
      RaiseStatus(Status::InvalidArgument("unknown remote option '" + key + "' (known: " + names +
                                          "and cache_dir and cache_limit as arguments of their own)"));
    }
    option->set("remote_options['" + key + "']", item.second, *remote);
  }
}

// All of them, as SetRemoteOptions takes them.
py::dict RemoteOptionsDict(const RemoteOptions& remote) {
  py::dict d;
  for (const RemoteOption& option : RemoteOptionTable()) d[option.name] = option.get(remote);
  return d;
}

// One keyword of unirecord.Dataset (or its path): how a value is checked and
// kept in a PyDataset before it opens, and the value that opens the same
// dataset again (what a pickle holds: the version opened, not its tag).
struct DatasetOption {
  const char* name;
  void (*set)(const std::string& shown_as, const py::handle&, PyDataset&);
  py::object (*get)(const PyDataset&);
};

void SetPath(const std::string& shown_as, const py::handle& v, PyDataset& d) {
  d.paths.clear();
  d.path_is_list = py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v);
  if (!d.path_is_list) return d.paths.push_back(PathArg(shown_as, v));
  for (auto p : v) d.paths.push_back(PathArg(shown_as, p));
  if (d.paths.empty()) RaiseStatus(Status::InvalidArgument("empty list of shard paths"));
}

void SetFieldNames(const std::string& shown_as, const py::handle& v, PyDataset& d) {
  d.field_names.clear();
  if (v.is_none()) return;
  if (py::isinstance<py::str>(v)) return d.field_names.push_back(StrArg(shown_as, v));
  if (!py::isinstance<py::iterable>(v)) {
    throw py::type_error(shown_as + " must be a field name or a list of them, not " + py::repr(v).cast<std::string>());
  }
  for (py::handle name : v) d.field_names.push_back(StrArg(shown_as, name));
}

void SetBytesAs(const std::string& shown_as, const py::handle& v, PyDataset& d) {
  const std::string bytes_as = StrArg(shown_as, v);
  if (bytes_as != "memoryview" && bytes_as != "numpy") {
    RaiseStatus(Status::InvalidArgument(shown_as + " must be 'memoryview' or 'numpy', not '" + bytes_as + "'"));
  }
  d.bytes_as_numpy = bytes_as == "numpy";
}

// The version opened (None: a dataset without a manifest, a glob or .urec files).
py::object OpenedVersion(const PyDataset& d) {
  const uint64_t opened = d.dataset ? d.dataset->version() : d.options.version;
  return opened == 0 ? py::none() : py::object(py::int_(opened));
}

// A bool, integer or optional member of the options, by the UREC_DATASET_* macros.
#define UREC_DATASET_BOOL(NAME, MEMBER)                                                                   \
  DatasetOption {                                                                                          \
    NAME, [](const std::string& s, const py::handle& v, PyDataset& d) { d.MEMBER = BoolArg(s, v); },       \
        [](const PyDataset& d) -> py::object { return py::bool_(d.MEMBER); }                               \
  }
#define UREC_DATASET_UINT64(NAME, MEMBER)                                                                 \
  DatasetOption {                                                                                          \
    NAME, [](const std::string& s, const py::handle& v, PyDataset& d) { d.MEMBER = IntArgAs<uint64_t>(s, v); }, \
        [](const PyDataset& d) -> py::object { return py::int_(d.MEMBER); }                                \
  }

// The one list of Dataset's keywords (and its path): the constructor, the
// pickle (a dict keyed by these names) and unirecord.Remote's checks
// (_check_dataset_option) go through it.
const std::vector<DatasetOption>& DatasetOptionTable() {
  static const std::vector<DatasetOption> table = {
      {"path", &SetPath, [](const PyDataset& d) -> py::object {
         return d.path_is_list ? py::object(FsNames(d.paths)) : py::object(FsName(d.paths[0]));
       }},
      {"fields", &SetFieldNames, [](const PyDataset& d) -> py::object { return py::cast(d.field_names); }},
      UREC_DATASET_BOOL("verify_checksums", options.verify_checksums),
      UREC_DATASET_BOOL("allow_partial", options.allow_partial),
      {"bytes_as", &SetBytesAs,
       [](const PyDataset& d) -> py::object { return py::str(d.bytes_as_numpy ? "numpy" : "memoryview"); }},
      {"cache_dir",
       [](const std::string& s, const py::handle& v, PyDataset& d) {
         d.options.remote.cache_dir = v.is_none() ? "" : PathArg(s, v);
       },
       [](const PyDataset& d) -> py::object {
         return d.options.remote.cache_dir.empty() ? py::none() : py::object(FsName(d.options.remote.cache_dir));
       }},
      UREC_DATASET_UINT64("cache_limit", options.remote.cache_limit),
      {"remote_options", [](const std::string&, const py::handle& v, PyDataset& d) { SetRemoteOptions(v, &d.options.remote); },
       [](const PyDataset& d) -> py::object { return RemoteOptionsDict(d.options.remote); }},
      {"version",
       [](const std::string& s, const py::handle& v, PyDataset& d) {
         d.options.version = v.is_none() ? 0 : IntArgAs<uint64_t>(s, v, 1);
       },
       &OpenedVersion},
      {"tag", [](const std::string& s, const py::handle& v, PyDataset& d) { d.options.tag = v.is_none() ? "" : StrArg(s, v); },
       [](const PyDataset&) -> py::object { return py::none(); }},  // the version opened stands for it
      UREC_DATASET_UINT64("page_cache_bytes", options.page_cache_bytes),
  };
  return table;
}

#undef UREC_DATASET_BOOL
#undef UREC_DATASET_UINT64

const DatasetOption* FindDatasetOption(const std::string& name) {
  for (const DatasetOption& option : DatasetOptionTable()) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

// A Dataset opened from {keyword: value} (keys of DatasetOptionTable).
std::shared_ptr<PyDataset> OpenDataset(const py::dict& options) {
  auto d = std::make_shared<PyDataset>();
  for (auto item : options) {
    const std::string key = py::str(item.first).cast<std::string>();
    const DatasetOption* option = FindDatasetOption(key);
    if (option == nullptr) RaiseStatus(Status::InvalidArgument("unknown Dataset option '" + key + "'"));
    option->set(key, item.second, *d);
  }
  if (d->paths.empty()) RaiseStatus(Status::InvalidArgument("a Dataset needs a path"));
  OpenInto(*d);
  return d;
}

// The pickle of a Dataset: {keyword: value} of every DatasetOption.
py::dict DatasetState(const PyDataset& d) {
  py::dict state;
  for (const DatasetOption& option : DatasetOptionTable()) state[option.name] = option.get(d);
  return state;
}

// A pickle of before the dict: (paths, path_is_list, field names,
// verify_checksums, allow_partial, bytes_as_numpy[, cache_dir, cache_limit[,
// remote_options[, version[, page_cache_bytes]]]]), grown at its end.
std::shared_ptr<PyDataset> OpenPositionalState(const py::tuple& t) {
  if (t.size() < 6) RaiseStatus(Status::InvalidArgument("a Dataset pickle of " + std::to_string(t.size()) + " values"));
  py::dict options;
  options["path"] = t[1].cast<bool>() ? py::object(py::list(t[0])) : py::object(py::list(t[0])[0]);
  const char* names[] = {"fields", "verify_checksums", "allow_partial", "bytes_as", "cache_dir",
                         "cache_limit", "remote_options", "version", "page_cache_bytes"};
  for (size_t i = 2; i < t.size() && i - 2 < std::size(names); ++i) options[names[i - 2]] = t[i];
  options["bytes_as"] = t[5].cast<bool>() ? "numpy" : "memoryview";
  if (t.size() > 9 && t[9].cast<uint64_t>() == 0) options["version"] = py::none();  // no manifest
  return OpenDataset(options);
}

// Dataset(...): its parameters are the table's, in the table's order.
std::shared_ptr<PyDataset> NewDataset(const py::object& path, const py::object& fields,
                                      const py::object& verify_checksums, const py::object& allow_partial,
                                      const py::object& bytes_as, const py::object& cache_dir,
                                      const py::object& cache_limit, const py::object& remote_options,
                                      const py::object& version, const py::object& tag,
                                      const py::object& page_cache_bytes) {
  const py::object* given[] = {&path,        &fields,         &verify_checksums, &allow_partial, &bytes_as, &cache_dir,
                               &cache_limit, &remote_options, &version,          &tag,           &page_cache_bytes};
  const std::vector<DatasetOption>& table = DatasetOptionTable();
  if (table.size() != std::size(given)) RaiseStatus(Status::Internal("Dataset's parameters are not its table's"));
  py::dict options;
  for (size_t i = 0; i < table.size(); ++i) options[table[i].name] = *given[i];
  return OpenDataset(options);
}

// _core._check_dataset_option: one Dataset keyword or remote option checked
// as Dataset(...) checks it, the error naming it `shown_as` (unirecord.Remote).
void CheckDatasetOption(const std::string& key, const py::handle& value, const std::string& shown_as) {
  PyDataset scratch;
  if (const DatasetOption* option = FindDatasetOption(key)) return option->set(shown_as, value, scratch);
  if (const RemoteOption* option = FindRemoteOption(key)) return option->set(shown_as, value, scratch.options.remote);
  RaiseStatus(Status::InvalidArgument("unknown Dataset option '" + key + "'"));
}

}  // namespace

namespace {

py::dict GetItem(const PyDataset& d, const py::handle& index) {
  uint64_t id = IndexArg(index, d.dataset->size());
  std::optional<Record> record;
  if (d.needs_record) {
    unirecord::Result<Record> r = Status::Internal("not read");
    {
      py::gil_scoped_release nogil;
      r = d.dataset->Get(id);
    }
    record.emplace(Unwrap(std::move(r)));
  }
  py::dict out;
  const Schema& schema = d.dataset->schema();
  for (size_t f : d.fields) {
    out[py::str(schema.field(f).name)] = FieldValue(d, id, f, record ? &*record : nullptr);
  }
  return out;
}

// Every record's value of an indexed field, read from the index alone.
template <typename T>
py::object IndexedColumn(const PyDataset& d, size_t field,
                         unirecord::Result<T> (Dataset::*get)(uint64_t, size_t) const) {
  uint64_t n = d.dataset->size();
  py::array_t<T> out(static_cast<py::ssize_t>(n));
  T* p = out.mutable_data();
  Status st;
  {
    py::gil_scoped_release nogil;
    for (uint64_t i = 0; i < n && st.ok(); ++i) {
      auto r = ((*d.dataset).*get)(i, field);
      if (r.ok()) p[i] = *r;
      else st = r.status();
    }
  }
  Check(st);
  return std::move(out);
}

py::dict ShardDict(const unirecord::ShardInfo& s) {
  py::dict o;
  o["path"] = FsName(s.path);
  o["index_path"] = FsName(s.index_path);
  o["number"] = s.number;
  o["first_id"] = s.first_id;
  o["records"] = s.records;
  o["file_bytes"] = s.file_bytes;
  o["index_bytes"] = s.index_bytes;
  o["blob_pages"] = s.blob_pages;
  o["scalar_pages"] = s.scalar_pages;
  o["format_version"] = std::to_string(s.format_major) + "." + std::to_string(s.format_minor);
  return o;
}

}  // namespace

void RegisterDataset(py::module_& m) {
  py::class_<BlobView>(m, "_BlobView", py::buffer_protocol(),
                       "Owner of a zero-copy blob view (keeps the dataset mapped).")
      .def_buffer([](BlobView& v) {
        static char empty = 0;
        std::string_view s = v.blob.data();
        char* p = s.empty() ? &empty : const_cast<char*>(s.data());
        return py::buffer_info(p, 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(s.size())}, {static_cast<py::ssize_t>(1)},
                               /*readonly=*/true);
      })
      .def_property_readonly("zero_copy", [](const BlobView& v) { return v.blob.zero_copy(); });

  py::class_<Field>(m, "Field", R"doc(
One field of a schema.

Field(name, type, shape=None, indexed=False, compression="none")

type: "uint8", "int8", "uint16", "int16", "uint32", "int32", "int64",
"float16", "float32", "float64", "bool", "string" or "bytes" (or the
Python/numpy types int, float, str, bytes, np.int32, ...). shape: the shape
of a numeric array field (e.g. (3,) or (28, 28)); -1 marks a dimension each
record sets: boxes (-1, 4), tokens (-1,), a mask (-1, -1). Write such a field
from a numpy array or nested lists; it reads back as a read-only zero-copy
numpy array. indexed: numeric scalars (not float16): stored in the index
so that reading it touches no page (use it for labels); or a (-1,) list of an
integer or bool type: the index gets a list index (format 1.2) that answers
`contains`, `any(... in [...])` and `len(...)` queries without reading blobs. compression: "none"
(bytes read zero-copy) or "zstd" (bytes only).
)doc")
      .def(py::init([](const py::object& name, const py::object& type, const py::object& shape,
                       const py::object& indexed, const py::object& compression) {
             return MakeField(StrArg("name", name), type, shape, indexed, compression);
           }),
           py::arg("name"), py::arg("type"), py::arg("shape") = py::none(), py::arg("indexed") = false,
           py::arg("compression") = "none")
      .def_readonly("name", &Field::name, "Field name.")
      .def_property_readonly("type", [](const Field& f) { return std::string(unirecord::FieldTypeName(f.type)); },
                             "Type name: 'uint8', ..., 'float64', 'bool', 'string' or 'bytes' (numpy's names).")
      .def_property_readonly("shape", [](const Field& f) { return py::tuple(py::cast(f.shape)); },
                             "Array shape, -1 where each record sets the extent; () for a scalar.")
      .def_readonly("indexed", &Field::indexed,
                    "Numeric scalars: stored inline in the index. (-1,) integer or bool lists: a list index "
                    "(format 1.2).")
      .def_property_readonly("compression", [](const Field& f) { return std::string(BlobCompressionName(f.compression)); },
                             "'none' or 'zstd' (bytes fields).")
      .def("__eq__", [](const Field& a, const py::object& b) {
        return py::isinstance<Field>(b) && a == b.cast<Field>();
      }, py::arg("other"))
      .def("__hash__", [](const Field& f) { return py::hash(py::str(FieldRepr(f))); })
      .def("__repr__", &FieldRepr)
      .def(py::pickle(
          [](const Field& f) {
            return py::make_tuple(f.name, unirecord::FieldTypeName(f.type), py::tuple(py::cast(f.shape)), f.indexed,
                                  BlobCompressionName(f.compression));
          },
          [](const py::tuple& t) {
            return MakeField(t[0].cast<std::string>(), t[1], t[2], t[3], t[4]);
          }));

  py::class_<Schema>(m, "Schema", R"doc(
The ordered, typed fields every record of a dataset has.

Schema(fields): a list of Field, or a dict {name: type or Field}, e.g.
Schema({"image": "bytes", "label": unirecord.Field("label", "int64", indexed=True)}).
Raises ValueError for an invalid schema (naming the field).
)doc")
      .def(py::init([](const py::object& fields) { return ToSchema(fields); }), py::arg("fields"))
      .def_property_readonly("fields", [](const Schema& s) { return s.fields(); }, "The fields, in order.")
      .def_property_readonly(
          "names",
          [](const Schema& s) {
            std::vector<std::string> names;
            for (const Field& f : s.fields()) names.push_back(f.name);
            return names;
          },
          "Field names, in order.")
      .def("__len__", &Schema::num_fields)
      .def("__iter__", [](const Schema& s) { return py::iter(py::cast(s.fields())); })
      .def("__contains__",
           [](const Schema& s, const py::object& name) {
             return py::isinstance<py::str>(name) && s.FieldIndex(name.cast<std::string>()) >= 0;
           },
           py::arg("name"))
      .def("__getitem__",
           [](const Schema& s, const py::object& key) -> Field {
             if (py::isinstance<py::str>(key)) {
               return s.field(Unwrap(s.FindField(key.cast<std::string>())));
             }
             if (PyBool_Check(key.ptr()) || !PyIndex_Check(key.ptr())) {
               throw py::type_error("schema keys are field names (str) or positions (int), not " +
                                    py::repr(key).cast<std::string>());
             }
             const py::int_ n(s.num_fields()), zero(0);
             py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(key.ptr()));
             py::int_ position = i < zero ? py::int_(i + n) : i;
             if (position < zero || !(position < n)) {
               throw py::index_error("field position " + py::repr(i).cast<std::string>() + " out of range for a schema of " +
                                     std::to_string(s.num_fields()) + " fields");
             }
             return s.field(position.cast<size_t>());
           },
           py::arg("key"))
      .def("__eq__", [](const Schema& a, const py::object& b) {
        return py::isinstance<Schema>(b) && a == b.cast<Schema>();
      }, py::arg("other"))
      .def("__repr__", [](const Schema& s) { return "Schema(" + s.ToString() + ")"; })
      .def("__str__", &Schema::ToString)
      .def(py::pickle([](const Schema& s) { return py::list(py::cast(s.fields())); },
                      [](const py::list& fields) { return ToSchema(fields); }));

  py::class_<PyDataset, std::shared_ptr<PyDataset>>(m, "Dataset", R"doc(
Random access to the records of a unirecord dataset (a map-style dataset).

Dataset(path, fields=None, *, verify_checksums=True, allow_partial=False, bytes_as="memoryview",
        cache_dir=None, cache_limit=0, remote_options=None, version=None, tag=None,
        page_cache_bytes=256 << 20)

path: a directory holding the shards, one .urec file, a glob pattern, a
list of .urec paths, or a remote dataset: http(s)://HOST/DIR/ (or
.../NAME, .../NAME.uset) or s3://BUCKET/KEY/... (docs/remote.md). fields:
names of the fields ds[i] returns (default all). cache_dir: where a remote
dataset's shards are cached (default $XDG_CACHE_HOME/unirecord or
~/.cache/unirecord); cache_limit: their byte budget (0: none).
remote_options: a dict of the other remote options (docs/remote.md):
prefetch_shards (3), max_requests (4), attempts (5), retry_backoff_ms
(200), timeout_s (30), min_rate_bytes_per_s (1024), min_rate_window_s (30),
request_deadline_s (0: none), s3_endpoint (""), s3_addressing ("auto").
version / tag: open a kept version of a dataset with a manifest (its
generation, or the tag naming it; unirecord.versions lists them; default
the latest). Reading it gives the same bytes whatever was committed since.
page_cache_bytes: scalar pages (numbers, small arrays, strings) inflated for
reads are kept up to this many bytes for all threads (a shuffled Loader of
such fields then inflates each page once); 0: none kept.

Opening maps the files and reads only their fixed-size parts: no per-record
work and no per-record Python objects, so it is cheap in every DataLoader
worker. ds[i] returns a dict {field: value}: bytes fields as read-only
zero-copy memoryviews over the mapped file (they keep the dataset mapped;
np.frombuffer(v, np.uint8) is zero-copy too) or, with bytes_as="numpy",
read-only zero-copy uint8 numpy arrays (picklable, so they can travel back
from DataLoader workers; memoryviews cannot), numbers as int/float, strings
as str, fixed-shape arrays as numpy arrays.

Pickling stores the path and options only, and the version opened;
unpickling re-opens and re-maps the files of that same version (this is
what DataLoader workers do), even when a newer one has committed since.
)doc")
      .def(py::init(&NewDataset), py::arg("path"), py::arg("fields") = py::none(), py::kw_only(),
           py::arg("verify_checksums") = DatasetOptions().verify_checksums,
           py::arg("allow_partial") = DatasetOptions().allow_partial, py::arg("bytes_as") = "memoryview",
           py::arg("cache_dir") = py::none(), py::arg("cache_limit") = DatasetOptions().remote.cache_limit,
           py::arg("remote_options") = py::none(), py::arg("version") = py::none(), py::arg("tag") = py::none(),
           py::arg("page_cache_bytes") = DatasetOptions().page_cache_bytes)
      .def("__len__", [](const PyDataset& d) { return d.dataset->size(); })
      .def("__getitem__", &GetItem, py::arg("index"),
           "The record at index (negative counts from the end) as a dict of the selected fields.")
      .def(
          "get_blob",
          [](const PyDataset& d, const py::object& index, const py::object& field_arg) {
            uint64_t id = IndexArg(index, d.dataset->size());
            const std::string field = StrArg("field", field_arg);
            size_t f = Unwrap(d.dataset->schema().FindField(field));
            const Field& fd = d.dataset->schema().field(f);
            if (fd.type != FieldType::kBytes) {
              // A wrong argument type, as Python's own TypeErrors (not a Status).
              throw py::type_error("get_blob: field '" + field + "' is " + unirecord::FieldTypeName(fd.type) +
                                   ", not bytes");
            }
            return FieldValue(d, id, f, nullptr);
          },
          py::arg("index"), py::arg("field"),
          "One bytes field of one record as a zero-copy memoryview (reads nothing else).")
      .def(
          "column",
          [](const PyDataset& d, const py::object& field_arg) {
            const std::string field = StrArg("field", field_arg);
            size_t f = Unwrap(d.dataset->schema().FindField(field));
            const Field& fd = d.dataset->schema().field(f);
            if (fd.storage() != unirecord::StorageClass::kIndexed) {
              RaiseStatus(Status::InvalidArgument("column('" + field + "'): the field is not an indexed scalar"));
            }
            bool is_int = unirecord::IsIntegral(fd.type);
            if (is_int) return IndexedColumn<int64_t>(d, f, &Dataset::GetIndexedInt64);
            return IndexedColumn<double>(d, f, &Dataset::GetIndexedFloat64);
          },
          py::arg("field"),
          "Every record's value of an indexed numeric field as a numpy array (int64 or float64), "
          "read from the index alone.")
      .def_property_readonly("schema", [](const PyDataset& d) { return d.dataset->schema(); }, "The Schema.")
      .def_property_readonly(
          "fields",
          [](const PyDataset& d) {
            std::vector<std::string> names;
            for (size_t f : d.fields) names.push_back(d.dataset->schema().field(f).name);
            return names;
          },
          "Names of the fields ds[i] returns.")
      .def_property_readonly(
          "metadata",
          [](const PyDataset& d) {
            py::dict out;
            for (const auto& [k, v] : d.dataset->metadata()) out[py::str(k)] = TextOrBytes(v);
            return out;
          },
          "Metadata dict (str -> str; bytes for values that are not UTF-8). "
          "ds.metadata['classes'] holds the class names, one per line; see classes.")
      .def_property_readonly(
          "classes",
          [](const PyDataset& d) -> py::object {
            auto it = d.dataset->metadata().find(unirecord::kClassesMetadataKey);
            if (it == d.dataset->metadata().end()) return py::none();
            return FsNames(unirecord::DecodeNameList(it->second));
          },
          "Class names in label order (from metadata 'classes'), or None.")
      .def(
          "remote_stats",
          [](const PyDataset& d) {
            const unirecord::RemoteStats st = d.dataset->remote_stats();
            py::dict out;
            out["remote"] = d.dataset->is_remote();
            out["requests"] = st.requests;
            out["retries"] = st.retries;
            out["bytes_downloaded"] = st.bytes_downloaded;
            out["shard_downloads"] = st.shard_downloads;
            out["cache_hits"] = st.cache_hits;
            out["verify_failures"] = st.verify_failures;
            out["prefetched"] = st.prefetched;
            out["read_fetches"] = st.read_fetches;
            return out;
          },
          "A remote dataset's requests, retries, bytes downloaded, shards downloaded and verified, shards "
          "found in the cache, downloads refused by verification, files fetched by the prefetch ahead of the reads "
          "and files a read had to fetch itself (a wait), since it was opened (zeros when local).")
      .def_property_readonly("version", [](const PyDataset& d) { return d.dataset->version(); },
                             "The version opened (its generation; 0 without a manifest: a glob, .urec files).")
      .def_property_readonly(
          "segments",
          [](const PyDataset& d) {
            py::list out;
            for (const unirecord::SegmentInfo& g : d.dataset->segments()) {
              py::dict segment;
              segment["generation"] = g.generation;
              segment["uuid"] = g.uuid;
              segment["first_shard"] = g.first_shard;
              segment["shards"] = g.shards;
              segment["first_id"] = g.first_id;
              segment["records"] = g.records;
              out.append(segment);
            }
            return out;
          },
          "The runs of shards written together (an append adds one), in id order, as dicts: generation, uuid, "
          "first_shard, shards, first_id, records.")
      .def_property_readonly("uuid", [](const PyDataset& d) { return d.dataset->uuid(); },
                             "Content-derived dataset UUID.")
      .def_property_readonly("num_files", [](const PyDataset& d) { return d.dataset->num_files(); },
                             "The number of shard files (.urec) of the dataset. Not Loader.num_shards, "
                             "the data-parallel ranks.")
      .def_property_readonly(
          "num_shards",
          [](const PyDataset& d) {
            if (PyErr_WarnEx(PyExc_DeprecationWarning,
                             "Dataset.num_shards is deprecated: it is the number of files; use Dataset.num_files "
                             "(num_shards names the data-parallel ranks of Loader)",
                             1) != 0) {
              throw py::error_already_set();
            }
            return d.dataset->num_files();
          },
          "Deprecated alias of num_files (DeprecationWarning).")
      .def_property_readonly(
          "path",
          [](const PyDataset& d) -> py::object {
            if (d.path_is_list) return FsNames(d.paths);
            return FsName(d.paths[0]);
          },
          "The path (or list of paths) the dataset was opened from.")
      .def_property_readonly(
          "shards",
          [](const PyDataset& d) {
            py::list out;
            for (const auto& s : d.dataset->shards()) out.append(ShardDict(s));
            return out;
          },
          "Per-shard facts (path, records, sizes, format version).")
      .def(
          "verify",
          [](const PyDataset& d) {
            Status st;
            {
              py::gil_scoped_release nogil;
              st = d.dataset->Verify();
            }
            Check(st);
          },
          "Deep check of every checksum; raises CorruptRecordError naming the file on the first problem.")
      .def("__repr__",
           [](const PyDataset& d) {
             py::object p = d.path_is_list ? py::object(FsNames(d.paths)) : py::object(FsName(d.paths[0]));
             return "unirecord.Dataset(" + py::repr(p).cast<std::string>() +
                    ", records=" + std::to_string(d.dataset->size()) + ", schema=" + d.dataset->schema().ToString() + ")";
           })
      // A dict {keyword: value} (DatasetOptionTable); the tuples of earlier builds still load.
      .def(py::pickle([](const PyDataset& d) -> py::object { return DatasetState(d); }, [](const py::object& state) {
        if (py::isinstance<py::tuple>(state)) return OpenPositionalState(state.cast<py::tuple>());
        if (!py::isinstance<py::dict>(state)) {
          throw py::type_error("a Dataset pickle holds a dict, not " + py::repr(state).cast<std::string>());
        }
        return OpenDataset(state.cast<py::dict>());
      }));

  m.def("_check_dataset_option", &CheckDatasetOption, py::arg("key"), py::arg("value"), py::arg("shown_as"),
        "Checks value as Dataset's keyword or remote option `key`; the error names it `shown_as`.");
  m.attr("_remote_defaults") = RemoteOptionsDict(RemoteOptions());
  m.def("_to_schema", &ToSchema, py::arg("schema"));
}

}  // namespace unirecord_py
