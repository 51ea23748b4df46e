// unirecord.Dataset: records as Python values (bytes zero-copy), what the
// dataset is, and its pickle (dataset_options_py.cc has its options).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "media_py.h"
#include "dataset_options_py.h"
#include "unirecord/schema.h"

namespace unirecord_py {

using unirecord::Blob;
using unirecord::Dataset;
using unirecord::DatasetOptions;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::Record;
using unirecord::Schema;
using unirecord::Status;

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
  if (f.type == FieldType::kVideo || f.type == FieldType::kAudio) return MediaValue(d.dataset, id, index);
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

using DatasetClass = py::class_<PyDataset, std::shared_ptr<PyDataset>>;

// Reading records: the length, a record, one blob, a column, the deep check.
void DefDatasetReads(DatasetClass& c) {
  c
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
          "Deep check of every checksum; raises CorruptRecordError naming the file on the first problem.");
}

// What the dataset is: schema, metadata, classes, versions, files, remote counters.
void DefDatasetFacts(DatasetClass& c) {
  c
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
      .def("__repr__",
           [](const PyDataset& d) {
             py::object p = d.path_is_list ? py::object(FsNames(d.paths)) : py::object(FsName(d.paths[0]));
             return "unirecord.Dataset(" + py::repr(p).cast<std::string>() +
                    ", records=" + std::to_string(d.dataset->size()) + ", schema=" + d.dataset->schema().ToString() + ")";
           });
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

  DatasetClass dataset(m, "Dataset", R"doc(
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
)doc");
  dataset
      .def(py::init(&NewDataset), py::arg("path"), py::arg("fields") = py::none(), py::kw_only(),
           py::arg("verify_checksums") = DatasetOptions().verify_checksums,
           py::arg("allow_partial") = DatasetOptions().allow_partial, py::arg("bytes_as") = "memoryview",
           py::arg("cache_dir") = py::none(), py::arg("cache_limit") = DatasetOptions().remote.cache_limit,
           py::arg("remote_options") = py::none(), py::arg("version") = py::none(), py::arg("tag") = py::none(),
           py::arg("page_cache_bytes") = DatasetOptions().page_cache_bytes)
      // A dict {keyword: value} (dataset_options_py.cc); the tuples of earlier builds still load.
      .def(py::pickle([](const PyDataset& d) -> py::object { return DatasetState(d); }, &DatasetFromState));
  DefDatasetReads(dataset);
  DefDatasetFacts(dataset);
  m.def("_check_dataset_option", &CheckDatasetOption, py::arg("key"), py::arg("value"), py::arg("shown_as"),
        "Checks value as Dataset's keyword or remote option `key`; the error names it `shown_as`.");
  m.attr("_remote_defaults") = RemoteDefaults();
}

}  // namespace unirecord_py
