// The writers' shared pieces of the binding: Writer and PartWriter are one
// template, PyWriterOf (writer_py.cc registers Writer, staged_write_py.cc
// PartWriter and StagedWrite); PyStagedWrite is also what a conversion in
// parts commits (convert_parts_py.cc).
#ifndef UNIRECORD_PYTHON_WRITER_PY_H_
#define UNIRECORD_PYTHON_WRITER_PY_H_

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "unirecord/staged_write.h"
#include "unirecord/writer.h"

namespace unirecord_py {

using unirecord::BlobCompression;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::RecordBuilder;
using unirecord::Schema;
using unirecord::Status;
using unirecord::Writer;
using unirecord::WriterOptions;

// A Py_buffer held until the record is written (RecordBuilder::SetBytes keeps views).
class HeldBuffer {
 public:
  explicit HeldBuffer(PyObject* obj) {
    if (PyObject_GetBuffer(obj, &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  std::string_view bytes() const {
    return {static_cast<const char*>(view_.buf), static_cast<size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
};

// Any numeric field's value as the field's dtype, then RecordBuilder::SetValues
// (writer_py.cc says how values are cast).
Status SetNumericValue(RecordBuilder& b, size_t index, const Field& f, const py::handle& value);
int64_t ToInt64(const Field& f, const py::handle& value);
double ToDouble(const Field& f, const py::handle& value);

// Sets every field of `schema` in `b` from `record`, a dict {field name:
// value} with a value for each field and no other key (Writer.write's
// rules); `held` keeps the buffers that bytes fields view until the record
// is written. Raises naming `where` ("record 3"; "": the caller names the
// record) and clears `b` on a bad value.
void FillRecord(RecordBuilder& b, const Schema& schema, const py::dict& record,
                std::vector<std::unique_ptr<HeldBuffer>>* held, const std::string& where);

// Sets the fields of `schema` in `out` from the dict get() returns (FillRecord,
// bytes copied in): a ValueError or TypeError (a value the field refuses)
// is InvalidArgument naming `where` ("record 7"; "": the caller names it); any other Python
// exception is kept in `*raised` (to raise again once the C++ call has
// cleaned up). Takes the GIL.
Status FillFromDict(const Schema& schema, const std::function<py::object()>& get, const std::string& where,
                    RecordBuilder& out, std::optional<py::error_already_set>* raised);

// The keyword default= of the appends (Writer, convert_*, StagedWrite):
// None, a dict {field: value} (Writer.write's values) or the text of one
// JSON object (urec's --default: unirecord::JsonFieldDefaults). A Python
// exception other than ValueError or TypeError becomes InvalidArgument too,
// naming its type. The dict is held (released under the GIL) as long as the
// FieldDefaults.
unirecord::FieldDefaults DefaultsArg(const py::object& value);

// The summary dict of Writer.finish(), PartWriter.finish(), StagedWrite.commit().
py::dict SummaryDict(const unirecord::WriterSummary& s);

// A Writer or a PartWriter (the same calls) with its Python state.
template <class W>
struct PyWriterOf {
  std::unique_ptr<W> writer;
  std::optional<RecordBuilder> builder;
  Schema schema;
  std::string out_dir, name;
  bool finished = false;
  bool aborted = false;
  py::dict summary;

  W& Live() {
    if (finished) RaiseStatus(Status::FailedPrecondition("Writer is already finished"));
    if (aborted || !writer) RaiseStatus(Status::FailedPrecondition("Writer was aborted; nothing was written"));
    return *writer;
  }

  void Write(const py::object& record_arg) {
    if (!PyDict_Check(record_arg.ptr())) {
      throw py::type_error("record must be a dict {field name: value}, not " +
                           std::string(Py_TYPE(record_arg.ptr())->tp_name));
    }
    W& w = Live();
    std::vector<std::unique_ptr<HeldBuffer>> held;
    FillRecord(*builder, schema, py::reinterpret_borrow<py::dict>(record_arg), &held,
               "record " + std::to_string(w.records_written()));
    Check(w.Write(*builder));
  }

  py::dict Finish() {
    W& w = Live();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = w.Finish();
    }
    if (!st.ok()) {
      aborted = true;
      writer.reset();  // removes the temporary files
      RaiseStatus(st);
    }
    finished = true;
    summary = SummaryDict(w.summary());
    return summary;
  }

  void Abort() {
    if (finished) return;
    aborted = true;
    py::gil_scoped_release nogil;
    writer.reset();
  }
};

using PyWriter = PyWriterOf<Writer>;
using PyPartWriter = PyWriterOf<unirecord::PartWriter>;

// WriterOptions from the keywords Writer and PartWriter share.
WriterOptions WriterOptionsArgs(const py::object& target_shard_bytes, const py::object& blob_compression,
                                const py::object& zstd_level, const py::object& threads, const py::object& sync,
                                const py::object& blob_page_bytes, const py::object& scalar_page_bytes);

// The Writer keywords metadata= and classes=, and the builder.
template <class W>
void SetMetadataArgs(PyWriterOf<W>& w, const py::object& classes, const py::object& metadata) {
  w.builder.emplace(w.writer->schema());
  if (!classes.is_none()) {
    std::vector<std::string> names;
    for (py::handle name : classes) names.push_back(FsNameBytes(name));
    Check(w.writer->SetMetadata(unirecord::kClassesMetadataKey, Unwrap(unirecord::EncodeNameList(names))));
  }
  if (!metadata.is_none()) {
    if (!PyDict_Check(metadata.ptr())) {
      throw py::type_error("metadata must be a dict {str: str or bytes}, not " + py::repr(metadata).cast<std::string>());
    }
    for (auto item : metadata.cast<py::dict>()) {
      std::string value;
      if (py::isinstance<py::bytes>(item.second)) value = item.second.cast<std::string>();
      else value = py::str(item.second).cast<std::string>();
      Check(w.writer->SetMetadata(StrArg("metadata key", item.first), value));
    }
  }
}

// Methods Writer and PartWriter share.
template <class W>
void DefineWriterMethods(py::class_<PyWriterOf<W>>& cls, const char* type_name) {
  using P = PyWriterOf<W>;
  cls.def("write", &P::Write, py::arg("record"),
          "Appends one record: a dict with a value for every field (bytes fields: bytes or any contiguous "
          "buffer; arrays: anything numpy converts to the field's shape). ValueError on a missing, extra or "
          "mistyped value (the writer stays usable).")
      .def(
          "set_metadata",
          [](P& w, const py::object& key, const py::object& value) {
            std::string v = py::isinstance<py::bytes>(value) ? value.cast<std::string>()
                                                              : py::str(value).cast<std::string>();
            Check(w.Live().SetMetadata(StrArg("key", key), v));
          },
          py::arg("key"), py::arg("value"), "Adds a metadata entry; only before the first write().")
      .def("abort", &P::Abort, "Deletes everything written so far (no-op after finish()).")
      .def_property_readonly("records_written",
                             [](const P& w) -> uint64_t { return w.writer ? w.writer->records_written() : 0; })
      .def_property_readonly("schema", [](const P& w) { return w.schema; })
      .def_property_readonly("closed", [](const P& w) { return w.finished || w.aborted; })
      .def_property_readonly("summary", [](const P& w) -> py::object {
        if (!w.finished) return py::none();
        return w.summary;
      }, "The summary dict after finish(), else None.")
      .def("__enter__", [](P& w) -> P& { return w; }, py::return_value_policy::reference)
      .def("__exit__",
           [](P& w, const py::object& exc_type, const py::object&, const py::object&) {
             if (exc_type.is_none()) {
               if (!w.finished && !w.aborted) w.Finish();
             } else {
               w.Abort();
             }
             return false;
           },
           py::arg("exc_type"), py::arg("exc"), py::arg("tb"))
      .def("__repr__", [type_name](const P& w) {
        return std::string("unirecord.") + type_name + "(" + py::repr(FsName(w.out_dir)).template cast<std::string>() +
               ", name=" + py::repr(FsName(w.name)).template cast<std::string>() + ", schema=" + w.schema.ToString() + ")";
      });
}

// unirecord.StagedWrite: the driver's side of a staged write.
struct PyStagedWrite {
  std::unique_ptr<unirecord::StagedWrite> staged;
  py::dict summary;

  unirecord::StagedWrite& Live() {
    if (!staged) RaiseStatus(Status::FailedPrecondition("StagedWrite is already committed or aborted"));
    return *staged;
  }
  py::dict Commit() {
    unirecord::StagedWrite& w = Live();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = w.Commit();
    }
    if (!st.ok()) {
      Abort();
      RaiseStatus(st);
    }
    summary = SummaryDict(w.summary());
    summary["report_paths"] = FsNames(w.summary().report_paths);
    staged.reset();
    return summary;
  }
  void Abort() {
    py::gil_scoped_release nogil;
    staged.reset();  // removes what the run staged, releases the lock
  }
};

}  // namespace unirecord_py

#endif  // UNIRECORD_PYTHON_WRITER_PY_H_
