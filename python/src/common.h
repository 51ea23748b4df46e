// Shared helpers of the unirecord Python binding (_core).
#ifndef UNIRECORD_PYTHON_COMMON_H_
#define UNIRECORD_PYTHON_COMMON_H_

#include <pybind11/pybind11.h>

#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/loader.h"
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

// A problem the library went on past (a damaged tags file that a reader
// lists around) as a Python UserWarning; raises when the warnings filter
// makes it an error. Must be called with the GIL held.
void Warn(const std::string& message);

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
void RegisterSchema(py::module_& m);  // Field, Schema (before RegisterDataset)
void RegisterDataset(py::module_& m);
void RegisterWriter(py::module_& m);
void RegisterStagedWrite(py::module_& m);
void RegisterConvert(py::module_& m);
void RegisterConvertParts(py::module_& m);
void RegisterImage(py::module_& m);
void RegisterLoader(py::module_& m);
// unirecord.versions, tag, untag, gc.
void RegisterVersions(py::module_& m);
void RegisterFields(py::module_& m);
// Dataset.query and Dataset.count (after RegisterDataset).
void RegisterQuery(py::module_& m);
// unirecord.Coverage, CoverageCheck, check_coverage, merge_coverage.
void RegisterCoverage(py::module_& m);
// A unirecord.Coverage, or its bytes (TypeError otherwise; a malformed one raises as Parse says).
unirecord::CoverageDigest CoverageArg(const py::handle& item);
// unirecord.Server and _serve (unirecord.serve).
void RegisterServe(py::module_& m);

// LoaderOptions from the options dict of _Loader and _ImageReader (the keys
// of _core._loader_defaults; loader_options_py.cc has the one table of them).
unirecord::LoaderOptions ParseLoaderOptions(const py::dict& options);
// _core._loader_defaults and _check_loader_option (loader_options_py.cc).
void RegisterLoaderOptions(py::module_& m);

// A Schema from a unirecord.Schema, a list of Field, or a dict {name: type or Field}.
unirecord::Schema ToSchema(const py::handle& obj);

// A name from the file system (a class folder) or a string field as
// os.fsdecode returns it: the file system encoding, undecodable bytes as
// surrogate escapes, so no byte is lost. FsNameBytes is the inverse
// (os.fsencode; bytes pass through).
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

// Arguments from Python (args.cc): TypeError naming the argument, the type
// expected and the value given; ValueError naming the allowed range.
// IntArg: an int or anything with __index__ (not a bool) in [minimum, maximum]
// (maximum None: unbounded). IntArgAs<T>: the same within T's range.
py::int_ IntArg(const std::string& name, const py::handle& value, const py::int_& minimum,
                const py::object& maximum);
template <typename T>
T IntArgAs(const std::string& name, const py::handle& value, T minimum = std::numeric_limits<T>::min(),
           T maximum = std::numeric_limits<T>::max()) {
  return IntArg(name, value, py::int_(minimum), py::int_(maximum)).template cast<T>();
}
bool BoolArg(const std::string& name, const py::handle& value);  // True, False or a numpy bool
std::string StrArg(const std::string& name, const py::handle& value);  // a str (as os.fsencode)
std::string PathArg(const std::string& name, const py::handle& value);  // os.fspath, then as os.fsencode
// A Python index (any int, negative counts from the end) into `records`
// items as a position: TypeError for a non-integer, IndexError naming the range.
uint64_t IndexArg(const py::handle& index, uint64_t records);
// _core._int_arg, _bool_arg and _index_arg, for the Python package's own checks.
void RegisterArgs(py::module_& m);

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_COMMON_H_
