// The unirecord._core extension module: bindings of the public C++ API.
#include <string>

#include "common.h"
#include "media_py.h"
#include "unirecord/loader.h"

namespace {

// pybind11 before 2.12 predates NumPy 2's ABI: built with it, arrays returned
// under NumPy 2 can hold wrong values (seen: an int64 column read as zeros).
// Refuse to load rather than hand out wrong data.
void CheckNumpyAbi() {
#if PYBIND11_VERSION_MAJOR == 2 && PYBIND11_VERSION_MINOR < 12
  std::string version;
  try {
    version = pybind11::module_::import("numpy").attr("__version__").cast<std::string>();
  } catch (const pybind11::error_already_set&) {
    return;  // no NumPy: nothing to mismatch
  }
  if (std::stoi(version.substr(0, version.find('.'))) >= 2) {
    throw pybind11::import_error("unirecord._core was built with pybind11 " PYBIND11_TOSTRING(
        PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_MINOR) ", which does not "
        "support NumPy " + version + "; rebuild it with pybind11 >= 2.12 or use NumPy 1.x");
  }
#endif
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  CheckNumpyAbi();
  m.doc() = "Native core of the unirecord package (see the unirecord package for the documented API).";
  unirecord_py::RegisterErrors(m);
  unirecord_py::RegisterArgs(m);
  unirecord_py::RegisterSchema(m);
  unirecord_py::RegisterMedia(m);
  unirecord_py::RegisterDataset(m);
  unirecord_py::RegisterQuery(m);
  unirecord_py::RegisterWriter(m);
  unirecord_py::RegisterStagedWrite(m);
  unirecord_py::RegisterConvert(m);
  unirecord_py::RegisterConvertParts(m);
  unirecord_py::RegisterImage(m);
  unirecord_py::RegisterCoverage(m);
  unirecord_py::RegisterLoader(m);
  unirecord_py::RegisterVersions(m);
  unirecord_py::RegisterFields(m);
  unirecord_py::RegisterServe(m);
  m.attr("built_with_cuda") = unirecord::BuiltWithCuda();
}
