// Status -> Python exception: the one mapping of the binding (and the
// library's warnings -> Python warnings).
#include <Python.h>

#include "common.h"

namespace unirecord_py {

namespace {
PyObject* g_corrupt_record_error = nullptr;  // unirecord.CorruptRecordError
PyObject* g_not_supported_error = nullptr;   // unirecord.NotSupportedError
}  // namespace

void RaiseStatus(const unirecord::Status& status) {
  using unirecord::StatusCode;
  PyObject* type = PyExc_RuntimeError;
  std::string message = status.message();
  switch (status.code()) {
    case StatusCode::kInvalidArgument: type = PyExc_ValueError; break;
    case StatusCode::kNotFound: type = PyExc_FileNotFoundError; break;
    case StatusCode::kKeyNotFound: type = PyExc_KeyError; break;
    case StatusCode::kIOError: type = PyExc_OSError; break;
    case StatusCode::kUnavailable: type = PyExc_ConnectionError; break;
    case StatusCode::kCorruption: type = g_corrupt_record_error; break;
    case StatusCode::kNotSupported: type = g_not_supported_error; break;
    case StatusCode::kOutOfRange: type = PyExc_IndexError; break;
    case StatusCode::kFailedPrecondition: type = PyExc_RuntimeError; break;
    case StatusCode::kInternal:
      type = PyExc_RuntimeError;
      message = "internal error in unirecord (please report it): " + message;
      break;
    case StatusCode::kOk:
      type = PyExc_SystemError;
      message = "RaiseStatus called with an OK status";
      break;
  }
  if (type == nullptr) type = PyExc_RuntimeError;  // before RegisterErrors: cannot happen
  // A message may quote a file name that is not UTF-8: its bytes show as \xNN.
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  PyErr_SetObject(type, text);
  Py_DECREF(text);
  throw py::error_already_set();
}

void Warn(const std::string& message) {
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace");
  if (text == nullptr) throw py::error_already_set();
  // stacklevel 1: the Python line that called into the binding.
  py::module_::import("warnings").attr("warn")(py::reinterpret_steal<py::str>(text), py::handle(PyExc_UserWarning), 1);
}

void RegisterErrors(py::module_& m) {
  g_corrupt_record_error = PyErr_NewExceptionWithDoc(
      "unirecord.CorruptRecordError",
      "Raised when on-disk data fails a checksum or bounds check, or an image cannot be decoded\n"
      "because its bytes are damaged. An OSError; the message names the file and the record.",
      PyExc_OSError, nullptr);
  g_not_supported_error = PyErr_NewExceptionWithDoc(
      "unirecord.NotSupportedError",
      "Raised for valid input that unirecord does not support (e.g. a 12-bit JPEG, a newer\n"
      "format major version, the CUDA path in a build without CUDA). A ValueError.",
      PyExc_ValueError, nullptr);
  if (g_corrupt_record_error == nullptr || g_not_supported_error == nullptr) {
    throw py::error_already_set();
  }
  m.attr("CorruptRecordError") = py::handle(g_corrupt_record_error);
  m.attr("NotSupportedError") = py::handle(g_not_supported_error);
  // For the tests: raises the exception a status code maps to.
  m.def(
      "_raise_status",
      [](int code, const std::string& message) {
        RaiseStatus(unirecord::Status(static_cast<unirecord::StatusCode>(code), message));
      },
      py::arg("code"), py::arg("message"));
}

py::str FsName(std::string_view name) {
  PyObject* s = PyUnicode_DecodeFSDefaultAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::list FsNames(const std::vector<std::string>& names) {
  py::list out;
  for (const std::string& name : names) out.append(FsName(name));
  return out;
}

std::string FsNameBytes(const py::handle& obj) {
  if (py::isinstance<py::bytes>(obj)) return obj.cast<std::string>();
  PyObject* b = PyUnicode_EncodeFSDefault(py::str(obj).ptr());
  if (b == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::bytes>(b).cast<std::string>();
}

}  // namespace unirecord_py
