// Shared helpers of the unirecord Python binding (_core).
#ifndef UNIRECORD_PYTHON_COMMON_H_
#define UNIRECORD_PYTHON_COMMON_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/status.h"

namespace unirecord_py {

namespace py = pybind11;

// The one place a C++ Status becomes a Python exception (errors.cc):
//   NotFound -> FileNotFoundError, KeyNotFound -> KeyError, InvalidArgument -> ValueError,
//   Corruption -> unirecord.CorruptRecordError (an OSError), IOError -> OSError,
//   NotSupported -> unirecord.NotSupportedError (a ValueError),
//   OutOfRange -> IndexError, FailedPrecondition/Internal -> RuntimeError.
// Must be called with the GIL held. Never returns.
[[noreturn]] void RaiseStatus(const unirecord::Status& status);

inline void Check(const unirecord::Status& status) {
  if (!status.ok()) RaiseStatus(status);
}

template <typename T>
T Unwrap(unirecord::Result<T>&& result) {
  if (!result.ok()) RaiseStatus(result.status());
  return std::move(result).value();
}

// Adds CorruptRecordError and NotSupportedError to the module.
void RegisterErrors(py::module_& m);
void RegisterDataset(py::module_& m);
void RegisterWriter(py::module_& m);
void RegisterImage(py::module_& m);
void RegisterLoader(py::module_& m);
// Dataset.query and Dataset.count (after RegisterDataset).
void RegisterQuery(py::module_& m);

// A Schema from a unirecord.Schema, a list of Field, or a dict {name: type or Field}.
unirecord::Schema ToSchema(const py::handle& obj);

// os.fspath(obj) as a std::string (str, bytes or os.PathLike; str encoded
// as os.fsencode does).
std::string FsPath(const py::handle& obj);
// A name from the file system (a class folder) as os.listdir returns it: the
// file system encoding, undecodable bytes as surrogate escapes. FsNameBytes
// is the inverse (os.fsencode; bytes pass through).
py::str FsName(std::string_view name);
std::string FsNameBytes(const py::handle& obj);
py::list FsNames(const std::vector<std::string>& names);

// The Python Dataset object: an opened dataset plus what is needed to reopen
// it in another process (pickling).
struct PyDataset {
  std::shared_ptr<unirecord::Dataset> dataset;
  std::vector<std::string> paths;  // one path (dir, file, glob) or a list of shard files
  bool path_is_list = false;
  unirecord::DatasetOptions options;
  std::vector<std::string> field_names;  // as selected; empty: all fields
  std::vector<size_t> fields;            // selected field indexes, schema order
  bool needs_record = false;             // some selected field needs Dataset::Get
  bool bytes_as_numpy = false;           // bytes fields as numpy arrays, not memoryviews
};

// "none" | "zstd" (or "" for none) and back; ValueError for another name.
unirecord::BlobCompression ParseCompression(const std::string& name);
const char* CompressionName(unirecord::BlobCompression compression);

// A Python index (negative counts from the end) into `d` as a record id;
// IndexError when out of range.
uint64_t CheckIndex(const PyDataset& d, int64_t i);

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_COMMON_H_
