// unirecord._core.add_fields, drop_fields: fields added, replaced and dropped
// without rewriting (unirecord/fields.h); python/unirecord/fields.py turns
// sequences, arrays and functions of the record into the per-record dicts.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>

#include "common.h"
#include "unirecord/fields.h"
#include "writer_py.h"

namespace unirecord_py {

namespace {

// fsync the column files and the directory (false: faster, not crash-safe).
unirecord::AddFieldsOptions Synced(bool sync) {
  unirecord::AddFieldsOptions options;
  options.writer.sync = sync;
  options.commit.sync = sync;
  return options;
}

}  // namespace

void RegisterFields(py::module_& m) {
  m.def(
      "add_fields",
      [](const py::object& path, const py::handle& schema_arg, const py::function& values, const std::string& uuid,
         bool sync) {
        const std::string where = PathArg("path", path);
        const Schema schema = ToSchema(schema_arg);
        const unirecord::AddFieldsOptions options = Synced(sync);
        // A Python exception raised by `values` (or by a bad value) stops the
        // add; it is raised again once AddFields has cleaned up.
        std::optional<py::error_already_set> raised;
        unirecord::Result<unirecord::WriterSummary> added = Status::Internal("not added");
        {
          py::gil_scoped_release nogil;
          added = unirecord::AddFields(
              where, schema, [&](const unirecord::Dataset& d, uint64_t id, RecordBuilder& out) -> Status {
                if (d.uuid() != uuid) {
                  return Status::FailedPrecondition(where + ": another writer committed while the values were "
                                                    "read from the version before; add the fields again");
                }
                py::gil_scoped_acquire gil;
                try {
                  const py::object record = values(id);
                  if (!PyDict_Check(record.ptr())) {
                    throw py::type_error("the values of record " + std::to_string(id) + " must be a dict, not " +
                                         std::string(Py_TYPE(record.ptr())->tp_name));
                  }
                  std::vector<std::unique_ptr<HeldBuffer>> held;
                  FillRecord(out, schema, py::reinterpret_borrow<py::dict>(record), &held,
                             "record " + std::to_string(id));
                  // Bytes are viewed until written: copy them in now.
                  for (size_t k = 0; k < schema.num_fields(); ++k) {
                    if (schema.field(k).type != unirecord::FieldType::kBytes) continue;
                    PyObject* raw = PyDict_GetItemString(record.ptr(), schema.field(k).name.c_str());
                    HeldBuffer buffer(raw);
                    Status copied = out.SetBytesOwned(k, std::string(buffer.bytes()));
                    if (!copied.ok()) return copied;
                  }
                  return Status::OK();
                } catch (py::error_already_set& e) {
                  // A value the field refuses: ValueError naming the record.
                  if (e.matches(PyExc_ValueError) || e.matches(PyExc_TypeError)) {
                    return Status::InvalidArgument("record " + std::to_string(id) + ": " +
                                                   py::str(e.value()).cast<std::string>());
                  }
                  raised.emplace(std::move(e));
                  return Status::Internal("stopped by a Python exception");
                }
              }, options);
        }
        if (raised) throw *raised;
        return SummaryDict(Unwrap(std::move(added)));
      },
      py::arg("path"), py::arg("schema"), py::arg("values"), py::arg("uuid"), py::arg("sync") = true,
      "Adds `schema`'s fields to the dataset at path; values(id) -> {field: value} for each record "
      "id in order; `uuid`: the dataset UUID the values were computed from (unirecord.add_fields "
      "wraps this).");
  m.def(
      "add_field_arrays",
      [](const py::object& path, const py::handle& schema_arg, const std::vector<py::array>& arrays,
         const std::string& uuid, bool sync) {
        const std::string where = PathArg("path", path);
        const Schema schema = ToSchema(schema_arg);
        if (arrays.size() != schema.num_fields()) throw py::value_error("add_field_arrays: one array per field");
        // Each array: C-contiguous, the field's dtype, shape (records, *field shape); checked here so
        // that the values below are read without the GIL.
        std::vector<const uint8_t*> data;
        std::vector<size_t> row_bytes;
        for (size_t k = 0; k < arrays.size(); ++k) {
          const unirecord::Field& f = schema.field(k);
          const py::array& a = arrays[k];
          std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
          if (!unirecord::IsNumeric(f.type) || f.has_variable_shape() ||
              py::str(a.dtype()).cast<std::string>() != unirecord::FindType(f.type)->name ||
              !(a.flags() & py::array::c_style) || shape.empty() ||
              std::vector<int64_t>(shape.begin() + 1, shape.end()) != f.shape) {
            throw py::value_error("add_field_arrays: field '" + f.name + "' needs a C-contiguous " +
                                  unirecord::FindType(f.type)->name + " array of shape (records, *" +
                                  f.name + ".shape)");
          }
          data.push_back(static_cast<const uint8_t*>(a.data()));
          row_bytes.push_back(static_cast<size_t>(f.num_elements()) * unirecord::NumericWidth(f.type));
        }
        const uint64_t records = arrays.empty() ? 0 : static_cast<uint64_t>(arrays[0].shape(0));
        unirecord::Result<unirecord::WriterSummary> added = Status::Internal("not added");
        {
          py::gil_scoped_release nogil;
          added = unirecord::AddFields(
              where, schema,
              [&](const unirecord::Dataset& d, uint64_t id, RecordBuilder& out) -> Status {
                if (d.uuid() != uuid || id >= records) {
                  return Status::FailedPrecondition(where + ": another writer committed while the values were "
                                                    "made for the version before; add the fields again");
                }
                for (size_t k = 0; k < data.size(); ++k) {
                  const unirecord::Field& f = schema.field(k);
                  UREC_RETURN_IF_ERROR(out.SetValues(k, f.type, data[k] + id * row_bytes[k], f.shape));
                }
                return Status::OK();
              },
              Synced(sync));
        }
        return SummaryDict(Unwrap(std::move(added)));
      },
      py::arg("path"), py::arg("schema"), py::arg("arrays"), py::arg("uuid"), py::arg("sync") = true,
      "add_fields of numpy arrays, one per field of `schema` (C-contiguous, the field's dtype, "
      "shape (records, *field shape)), read without the GIL.");
  m.def(
      "drop_fields",
      [](const py::object& path, const std::vector<std::string>& names) {
        const std::string where = PathArg("path", path);
        unirecord::Result<unirecord::WriterSummary> dropped = Status::Internal("not dropped");
        {
          py::gil_scoped_release nogil;
          dropped = unirecord::DropFields(where, names);
        }
        return SummaryDict(Unwrap(std::move(dropped)));
      },
      py::arg("path"), py::arg("names"),
      "Hides fields from the next version of the dataset at path (KeyError for an unknown one).");
}

}  // namespace unirecord_py
