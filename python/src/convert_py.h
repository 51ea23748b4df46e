// The converters' shared pieces of the binding: their options from the
// keywords and their report as a dict (convert_py.cc), which the conversion
// in parts (convert_parts_py.cc) takes and gives too.
#ifndef UNIRECORD_PYTHON_CONVERT_PY_H_
#define UNIRECORD_PYTHON_CONVERT_PY_H_

#include "common.h"
#include "unirecord/convert.h"

namespace unirecord_py {

unirecord::ConvertOptions ConvertOptionsArgs(const py::object& name, const py::object& num_shards,
                                             const py::object& target_shard_bytes, const py::object& threads,
                                             const py::object& strict, const py::object& keep_original,
                                             const py::object& sync, const py::object& max_pixels,
                                             const py::object& follow_links_outside, const py::object& allow_empty,
                                             const py::object& append = py::bool_(false),
                                             const py::object& extend_classes = py::bool_(false));

py::dict ReportDict(const unirecord::ConvertReport& rep);

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_CONVERT_PY_H_
