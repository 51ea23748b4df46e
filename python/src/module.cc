// The unirecord._core extension module: bindings of the public C++ API.
#include "common.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "Native core of the unirecord package (see the unirecord package for the documented API).";
  unirecord_py::RegisterErrors(m);
  unirecord_py::RegisterDataset(m);
  unirecord_py::RegisterWriter(m);
  unirecord_py::RegisterImage(m);
  unirecord_py::RegisterLoader(m);
#ifdef UNIRECORD_WITH_CUDA
  m.attr("built_with_cuda") = true;
#else
  m.attr("built_with_cuda") = false;
#endif
}
