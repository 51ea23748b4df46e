# Defines the Python extension target unirecord._core over the unirecord
# library target. Included by python/CMakeLists.txt (the wheel's build, driven
# by setup.py) and by the root CMakeLists.txt with UNIRECORD_BUILD_PYTHON
# (the tests' build: the module is linked to the library already compiled
# there, not compiled again).
set(PYBIND11_FINDPYTHON ON)
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
# Debian's pybind11-dev installs its CMake package system-wide; with pip's
# isolated builds the pybind11 wheel's directory is passed in pybind11_DIR.
find_package(pybind11 CONFIG REQUIRED)

set(_unirecord_py_src "${CMAKE_CURRENT_LIST_DIR}/src")
# NO_EXTRAS: no LTO (slow links on small machines); visibility set below.
pybind11_add_module(_core NO_EXTRAS
  ${_unirecord_py_src}/module.cc
  ${_unirecord_py_src}/errors.cc
  ${_unirecord_py_src}/args.cc
  ${_unirecord_py_src}/schema_py.cc
  ${_unirecord_py_src}/dataset_py.cc
  ${_unirecord_py_src}/dataset_options_py.cc
  ${_unirecord_py_src}/writer_py.cc
  ${_unirecord_py_src}/staged_write_py.cc
  ${_unirecord_py_src}/convert_py.cc
  ${_unirecord_py_src}/convert_parts_py.cc
  ${_unirecord_py_src}/image_py.cc
  ${_unirecord_py_src}/loader_py.cc
  ${_unirecord_py_src}/loader_options_py.cc
  ${_unirecord_py_src}/coverage_py.cc
  ${_unirecord_py_src}/versions_py.cc
  ${_unirecord_py_src}/fields_py.cc
  ${_unirecord_py_src}/media_py.cc
  ${_unirecord_py_src}/query_py.cc
  ${_unirecord_py_src}/serve_py.cc)
target_link_libraries(_core PRIVATE unirecord)
target_compile_options(_core PRIVATE -Wall -Wextra)
set_target_properties(_core PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

# dlpack.h from libdlpack-dev when present; src/dlpack_abi.h otherwise.
find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(DLPACK_INCLUDE_DIR)
  target_include_directories(_core PRIVATE "${DLPACK_INCLUDE_DIR}")
  target_compile_definitions(_core PRIVATE UNIRECORD_HAVE_DLPACK_H=1)
endif()
