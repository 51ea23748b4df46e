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

// The whole add (AddFields), or with `part` (a dict of unirecord.FieldPart's
// members) one part of a staged add (AddFieldsPart), of `values` (a
// FieldValues or FieldColumns). `options`: Synced's, with the segments given
// values and the defaults.
template <typename Values>
unirecord::Result<unirecord::WriterSummary> Add(const std::string& where, const Schema& schema, const Values& values,
                                                const py::object& part, const unirecord::AddFieldsOptions& options) {
  if (part.is_none()) {
    py::gil_scoped_release nogil;
    return unirecord::AddFields(where, schema, values, options);
  }
  const py::dict p = part.cast<py::dict>();
  unirecord::FieldPart fp;
  fp.token = p["token"].cast<std::string>();
  fp.part = p["part"].cast<uint32_t>();
  fp.num_parts = p["num_parts"].cast<uint32_t>();
  fp.version = p["version"].cast<uint64_t>();
  fp.first_shard = p["first_shard"].cast<uint32_t>();
  fp.end_shard = p["end_shard"].cast<uint32_t>();
  py::gil_scoped_release nogil;
  return unirecord::AddFieldsPart(where, schema, values, fp, options);
}

// Synced(sync), with `segments` (None: all), `default` (None, or the dict
// of values every record of the other segments gets) and `uuid`, the
// dataset's the values were made for.
unirecord::AddFieldsOptions WithSegments(bool sync, const py::object& segments, const py::object& default_values,
                                         const Schema& schema, const std::string& uuid,
                                         std::optional<py::error_already_set>* raised) {
  unirecord::AddFieldsOptions options = Synced(sync);
  options.dataset_uuid = uuid;
  if (!segments.is_none()) options.segments = segments.cast<std::vector<uint32_t>>();
  if (!default_values.is_none()) {
    // Pointers: copies of Python objects would need the GIL; both outlive the add.
    const Schema* fields = &schema;
    const py::object* values = &default_values;
    options.defaults = [fields, values, raised](const unirecord::Dataset&, uint64_t id, RecordBuilder& out) {
      return FillFromDict(*fields, [values] { return *values; }, "", out, raised);  // AddFields names the record
    };
  }
  return options;
}

}  // namespace

void RegisterFields(py::module_& m) {
  m.def(
      "add_fields",
      [](const py::object& path, const py::handle& schema_arg, const py::function& values, const std::string& uuid,
         bool sync, const py::object& part, const py::object& segments, const py::object& default_values) {
        const std::string where = PathArg("path", path);
        const Schema schema = ToSchema(schema_arg);
        // A Python exception raised by `values` (or by a bad value) stops the
        // add; it is raised again once AddFields has cleaned up.
        std::optional<py::error_already_set> raised;
        const unirecord::AddFieldsOptions options =
            WithSegments(sync, segments, default_values, schema, uuid, &raised);
        const unirecord::FieldValues from_dicts = [&](const unirecord::Dataset&, uint64_t id, RecordBuilder& out) {
          return FillFromDict(schema, [&] { return values(id); }, "", out, &raised);  // AddFields names the record
        };
        unirecord::Result<unirecord::WriterSummary> added = Add(where, schema, from_dicts, part, options);
        if (raised) throw *raised;
        return SummaryDict(Unwrap(std::move(added)));
      },
      py::arg("path"), py::arg("schema"), py::arg("values"), py::arg("uuid"), py::arg("sync") = true,
      py::arg("part") = py::none(), py::arg("segments") = py::none(), py::arg("default") = py::none(),
      "Adds `schema`'s fields to the dataset at path; values(id) -> {field: value} for each record "
      "id in order; `uuid`: the dataset UUID the values were computed from; `part`: a dict (token, part, "
      "num_parts, version, first_shard, end_shard) to stage one part of _begin_add_fields' StagedWrite "
      "instead; `segments`: those whose records values() is called for (None: all), the others' get "
      "`default`, a dict (unirecord.add_fields wraps this).");
  m.def(
      "add_field_arrays",
      [](const py::object& path, const py::handle& schema_arg, const std::vector<py::array>& arrays,
         const std::string& uuid, bool sync, const py::object& part, uint64_t first_id, const py::object& segments,
         const py::object& default_values) {
        const std::string where = PathArg("path", path);
        const Schema schema = ToSchema(schema_arg);
        if (arrays.size() != schema.num_fields()) throw py::value_error("add_field_arrays: one array per field");
        // Each array: C-contiguous, the field's dtype, shape (records, *field shape); checked here so
        // that the values below are read without the GIL.
        unirecord::FieldColumns columns;
        columns.first_id = first_id;
        columns.records = arrays.empty() ? 0 : static_cast<uint64_t>(arrays[0].shape(0));
        for (size_t k = 0; k < arrays.size(); ++k) {
          const unirecord::Field& f = schema.field(k);
          const py::array& a = arrays[k];
          std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
          if (!unirecord::IsNumeric(f.type) || f.has_variable_shape() ||
              py::str(a.dtype()).cast<std::string>() != unirecord::FindType(f.type)->name ||
              !(a.flags() & py::array::c_style) || shape.empty() || static_cast<uint64_t>(shape[0]) != columns.records ||
              std::vector<int64_t>(shape.begin() + 1, shape.end()) != f.shape) {
            throw py::value_error("add_field_arrays: field '" + f.name + "' needs a C-contiguous " +
                                  unirecord::FindType(f.type)->name + " array of shape (records, *" +
                                  f.name + ".shape), as long as the others");
          }
          columns.columns.emplace_back(static_cast<const char*>(a.data()), static_cast<size_t>(a.nbytes()));
        }
        std::optional<py::error_already_set> raised;
        const unirecord::AddFieldsOptions options =
            WithSegments(sync, segments, default_values, schema, uuid, &raised);
        unirecord::Result<unirecord::WriterSummary> added = Add(where, schema, columns, part, options);
        if (raised) throw *raised;
        return SummaryDict(Unwrap(std::move(added)));
      },
      py::arg("path"), py::arg("schema"), py::arg("arrays"), py::arg("uuid"), py::arg("sync") = true,
      py::arg("part") = py::none(), py::arg("first_id") = 0, py::arg("segments") = py::none(),
      py::arg("default") = py::none(),
      "add_fields of numpy arrays, one per field of `schema` (C-contiguous, the field's dtype, "
      "shape (records, *field shape); row 0 is record `first_id`), read without the GIL; `segments` and "
      "`default` as add_fields'.");
  m.def(
      "_begin_add_fields",
      [](const py::object& path, uint32_t num_parts, int threads, bool sync) {
        const std::string where = PathArg("path", path);
        unirecord::StagedWriteOptions options;
        options.threads = threads;
        options.sync = sync;
        auto p = std::make_unique<PyStagedWrite>();
        unirecord::Result<std::unique_ptr<unirecord::StagedWrite>> begun = Status::Internal("not begun");
        {
          py::gil_scoped_release nogil;
          begun = unirecord::BeginAddFields(where, num_parts, options);
        }
        p->staged = Unwrap(std::move(begun));
        return p;
      },
      py::arg("path"), py::arg("num_parts"), py::arg("threads") = 1, py::arg("sync") = true,
      "The StagedWrite of an add in parts (add_fields(part=...) stages them) on the dataset at path: it holds "
      "the writers' lock; commit() commits the parts as a field group.");
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
