// Arguments from Python, checked as Python's own functions check theirs: a
// wrong type is a TypeError naming the argument, the type expected and the
// value given; a value out of range is a ValueError (IndexError for an index)
// naming the range. The binding takes its arguments as py::object and goes
// through these instead of letting pybind11 refuse them with its overload
// dump. The Python package checks its own arguments with the same functions
// (_core._int_arg, _core._bool_arg).
#include <Python.h>

#include <string>

#include "common.h"

namespace unirecord_py {

namespace {

std::string Shown(const py::handle& value) {
  std::string repr = py::repr(value).cast<std::string>();
  if (repr.size() > 80) repr = repr.substr(0, 77) + "...";
  return std::string(Py_TYPE(value.ptr())->tp_name) + " (" + repr + ")";
}

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

bool IsNumpyBool(const py::handle& value) {
  // Leaked on purpose: must outlive interpreter shutdown.
  static PyObject* numpy_bool = [] {
    try {
      return py::object(py::module_::import("numpy").attr("bool_")).release().ptr();
    } catch (py::error_already_set&) {
      return static_cast<PyObject*>(nullptr);
    }
  }();
  return numpy_bool != nullptr && PyObject_TypeCheck(value.ptr(), reinterpret_cast<PyTypeObject*>(numpy_bool));
}

}  // namespace

py::int_ IntArg(const std::string& name, const py::handle& value, const py::int_& minimum,
                const py::object& maximum) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    Raise(PyExc_TypeError, name + " must be an int, not " + Shown(value));
  }
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) throw py::error_already_set();
  py::int_ v = py::reinterpret_steal<py::int_>(index);
  const bool below = v < minimum;
  const bool above = !maximum.is_none() && v > maximum;
  if (below || above) {
    std::string allowed = maximum.is_none() ? ">= " + py::repr(minimum).cast<std::string>()
                                            : py::repr(minimum).cast<std::string>() + ".." +
                                                  py::repr(maximum).cast<std::string>();
    Raise(PyExc_ValueError, name + "=" + py::repr(v).cast<std::string>() + " is out of range (" + allowed + ")");
  }
  return v;
}

bool BoolArg(const std::string& name, const py::handle& value) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True;
  if (IsNumpyBool(value)) return PyObject_IsTrue(value.ptr()) == 1;
  Raise(PyExc_TypeError, name + " must be True or False, not " + Shown(value));
}

std::string StrArg(const std::string& name, const py::handle& value) {
  if (!PyUnicode_Check(value.ptr())) Raise(PyExc_TypeError, name + " must be a str, not " + Shown(value));
  return FsNameBytes(value);
}

std::string PathArg(const std::string& name, const py::handle& value) {
  PyObject* path = PyOS_FSPath(value.ptr());
  if (path == nullptr) {
    PyErr_Clear();
    Raise(PyExc_TypeError, name + " must be a path (str, bytes or os.PathLike), not " + Shown(value));
  }
  std::string bytes = FsNameBytes(py::reinterpret_steal<py::object>(path));
  if (bytes.find('\0') != std::string::npos) {
    Raise(PyExc_ValueError, name + " " + py::repr(value).cast<std::string>() + " holds a NUL character");
  }
  return bytes;
}

uint64_t IndexArg(const py::handle& index, uint64_t records) {
  if (!PyIndex_Check(index.ptr())) {
    Raise(PyExc_TypeError, "dataset indices must be integers, not " + Shown(index));
  }
  PyObject* as_int = PyNumber_Index(index.ptr());
  if (as_int == nullptr) throw py::error_already_set();
  py::int_ i = py::reinterpret_steal<py::int_>(as_int);
  const py::int_ n(records);
  const py::int_ zero(0);
  py::int_ id = i < zero ? py::int_(i + n) : i;
  if (id < zero || !(id < n)) {
    // The index as the caller wrote it, and the range it must be in.
    Raise(PyExc_IndexError, "record index " + py::repr(i).cast<std::string>() + " out of range for a dataset of " +
                                std::to_string(records) + " records (-" + std::to_string(records) + ".." +
                                std::to_string(static_cast<int64_t>(records) - 1) + ")");
  }
  return id.cast<uint64_t>();
}

void RegisterArgs(py::module_& m) {
  m.def("_int_arg", &IntArg, py::arg("name"), py::arg("value"), py::arg("minimum"), py::arg("maximum") = py::none(),
        "value as an int (an int or numpy integer; not a bool, str or float) within [minimum, maximum] "
        "(maximum None: no upper bound); TypeError / ValueError naming the argument otherwise.");
  m.def("_bool_arg", &BoolArg, py::arg("name"), py::arg("value"),
        "value as a bool (True, False or a numpy bool); TypeError naming the argument otherwise.");
  m.def("_index_arg", &IndexArg, py::arg("index"), py::arg("records"),
        "A sequence index (negative counts from the end) into `records` items as a position; TypeError "
        "for a non-integer, IndexError naming the range.");
}

}  // namespace unirecord_py
