// unirecord.Dataset's options: the one table of its keywords (and of the
// remote options among them), through which a Dataset opens, pickles by name
// and unirecord.Remote checks its values.
#include "dataset_options_py.h"

#include <pybind11/stl.h>

#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "unirecord/schema.h"

namespace unirecord_py {

using unirecord::Dataset;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::RemoteOptions;
using unirecord::Schema;
using unirecord::Status;

namespace {

// Opens d from its paths and options, and resolves the fields it selects.
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
    const bool alone = f.type == FieldType::kBytes || f.type == FieldType::kVideo || f.type == FieldType::kAudio ||
                       f.storage() == unirecord::StorageClass::kIndexed;  // read without the record
    if (!alone) d.needs_record = true;
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
      {"remote_options",
       [](const std::string&, const py::handle& v, PyDataset& d) { SetRemoteOptions(v, &d.options.remote); },
       [](const PyDataset& d) -> py::object { return RemoteOptionsDict(d.options.remote); }},
      {"version",
       [](const std::string& s, const py::handle& v, PyDataset& d) {
         d.options.version = v.is_none() ? 0 : IntArgAs<uint64_t>(s, v, 1);
       },
       &OpenedVersion},
      {"tag",
       [](const std::string& s, const py::handle& v, PyDataset& d) {
         if (v.is_none()) return void(d.options.tag.clear());
         d.options.tag = StrArg(s, v);
         if (d.options.tag.empty()) RaiseStatus(Status::InvalidArgument("tag '': an empty tag names no version"));
       },
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

}  // namespace

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

std::shared_ptr<PyDataset> DatasetFromState(const py::object& state) {
  if (py::isinstance<py::tuple>(state)) return OpenPositionalState(state.cast<py::tuple>());
  if (!py::isinstance<py::dict>(state)) {
    throw py::type_error("a Dataset pickle holds a dict, not " + py::repr(state).cast<std::string>());
  }
  return OpenDataset(state.cast<py::dict>());
}

py::dict DatasetState(const PyDataset& d) {
  py::dict state;
  for (const DatasetOption& option : DatasetOptionTable()) state[option.name] = option.get(d);
  return state;
}

py::dict RemoteDefaults() { return RemoteOptionsDict(RemoteOptions()); }

}  // namespace unirecord_py
