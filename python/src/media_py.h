// Video and audio field values in Python (media_py.cc).
#ifndef UNIRECORD_PYTHON_MEDIA_PY_H_
#define UNIRECORD_PYTHON_MEDIA_PY_H_

#include <memory>

#include "common.h"

namespace unirecord_py {

// unirecord.VideoStream and unirecord.AudioStream.
void RegisterMedia(py::module_& m);
// The value of video or audio field `field` of record `id`: a VideoStream or AudioStream.
py::object MediaValue(const std::shared_ptr<unirecord::Dataset>& dataset, uint64_t id, size_t field);

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_MEDIA_PY_H_
