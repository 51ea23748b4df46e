// unirecord.Field and unirecord.Schema.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "common.h"
#include "unirecord/schema.h"

namespace unirecord_py {

using unirecord::BlobCompression;
using unirecord::BlobCompressionName;
using unirecord::Field;
using unirecord::FieldType;
using unirecord::Schema;

namespace {

FieldType FieldTypeArg(const py::handle& obj) {
  std::string name;
  if (py::isinstance<py::str>(obj)) {
    return Unwrap(unirecord::ParseFieldType(obj.cast<std::string>()));
  } else if (obj.is(py::type::of(py::int_()))) {
    name = "int64";
  } else if (obj.is(py::type::of(py::float_()))) {
    name = "float64";
  } else if (obj.is(py::type::of(py::str()))) {
    name = "string";
  } else if (obj.is(py::type::of(py::bytes()))) {
    name = "bytes";
  } else if (py::hasattr(obj, "name") || py::hasattr(obj, "dtype")) {
    // numpy dtypes and scalar types: np.int32, np.dtype("float32")
    name = py::str(py::module_::import("numpy").attr("dtype")(obj).attr("name")).cast<std::string>();
  }
  unirecord::Result<FieldType> type = unirecord::ParseFieldType(name);
  if (type.ok()) return *type;
  PyErr_SetString(PyExc_TypeError, (type.status().message() + " (or int, float, str, bytes, a numpy dtype), not " +
                                    py::repr(obj).cast<std::string>())
                                       .c_str());
  throw py::error_already_set();
}

Field MakeField(const std::string& name, const py::handle& type, const py::handle& shape, const py::handle& indexed,
                const py::handle& compression) {
  Field f;
  f.name = name;
  f.type = FieldTypeArg(type);
  if (!shape.is_none()) {
    if (PyIndex_Check(shape.ptr())) {
      f.shape = {IntArgAs<int64_t>("shape", shape, unirecord::kVariableDim)};
    } else if (py::isinstance<py::sequence>(shape) && !py::isinstance<py::str>(shape)) {
      for (py::handle dim : shape) f.shape.push_back(IntArgAs<int64_t>("shape", dim, unirecord::kVariableDim));
    } else {
      IntArgAs<int64_t>("shape", shape, 1);  // raises the TypeError
    }
  }
  f.indexed = BoolArg("indexed", indexed);
  f.compression = Unwrap(unirecord::ParseBlobCompression(StrArg("compression", compression)));
  return f;
}

std::string FieldRepr(const Field& f) {
  std::string s = "Field('" + f.name + "', '" + unirecord::FieldTypeName(f.type) + "'";
  if (f.is_array()) {
    s += ", shape=(";
    for (size_t i = 0; i < f.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(f.shape[i]);
    s += f.shape.size() == 1 ? ",)" : ")";
  }
  if (f.indexed) s += ", indexed=True";
  if (f.compression != BlobCompression::kNone) s += ", compression='" + std::string(BlobCompressionName(f.compression)) + "'";
  return s + ")";
}

}  // namespace

// A schema from a Schema, a list of Fields, or a dict {name: type or Field}.
Schema ToSchema(const py::handle& obj) {
  if (py::isinstance<Schema>(obj)) return obj.cast<Schema>();
  std::vector<Field> fields;
  if (py::isinstance<py::dict>(obj)) {
    for (auto item : obj.cast<py::dict>()) {
      std::string name = StrArg("field name", item.first);
      if (py::isinstance<Field>(item.second)) {
        Field f = item.second.cast<Field>();
        f.name = name;
        fields.push_back(f);
      } else {
        fields.push_back(MakeField(name, item.second, py::none(), py::bool_(false), py::str("none")));
      }
    }
  } else if (py::isinstance<py::iterable>(obj) && !py::isinstance<py::str>(obj)) {
    for (auto item : obj) {
      if (!py::isinstance<Field>(item)) {
        throw py::type_error("a schema's list holds unirecord.Field values, not " +
                             py::repr(item).cast<std::string>());
      }
      fields.push_back(item.cast<Field>());
    }
  } else {
    throw py::type_error("schema must be a Schema, a list of Field or a dict {name: type or Field}, not " +
                         py::repr(obj).cast<std::string>());
  }
  return Unwrap(Schema::Make(std::move(fields)));
}

void RegisterSchema(py::module_& m) {
  py::class_<Field>(m, "Field", R"doc(
One field of a schema.

Field(name, type, shape=None, indexed=False, compression="none")

type: "uint8", "int8", "uint16", "int16", "uint32", "int32", "int64",
"float16", "float32", "float64", "bool", "string" or "bytes" (or the
Python/numpy types int, float, str, bytes, np.int32, ...). shape: the shape
of a numeric array field (e.g. (3,) or (28, 28)); -1 marks a dimension each
record sets: boxes (-1, 4), tokens (-1,), a mask (-1, -1). Write such a field
from a numpy array or nested lists; it reads back as a read-only zero-copy
numpy array. indexed: numeric scalars (not float16): stored in the index
so that reading it touches no page (use it for labels); or a (-1,) list of an
integer or bool type: the index gets a list index (format 1.2) that answers
`contains`, `any(... in [...])` and `len(...)` queries without reading blobs. compression: "none"
(bytes read zero-copy) or "zstd" (bytes only).
)doc")
      .def(py::init([](const py::object& name, const py::object& type, const py::object& shape,
                       const py::object& indexed, const py::object& compression) {
             return MakeField(StrArg("name", name), type, shape, indexed, compression);
           }),
           py::arg("name"), py::arg("type"), py::arg("shape") = py::none(), py::arg("indexed") = false,
           py::arg("compression") = "none")
      .def_readonly("name", &Field::name, "Field name.")
      .def_property_readonly("type", [](const Field& f) { return std::string(unirecord::FieldTypeName(f.type)); },
                             "Type name: 'uint8', ..., 'float64', 'bool', 'string' or 'bytes' (numpy's names).")
      .def_property_readonly("shape", [](const Field& f) { return py::tuple(py::cast(f.shape)); },
                             "Array shape, -1 where each record sets the extent; () for a scalar.")
      .def_readonly("indexed", &Field::indexed,
                    "Numeric scalars: stored inline in the index. (-1,) integer or bool lists: a list index "
                    "(format 1.2).")
      .def_property_readonly("compression", [](const Field& f) { return std::string(BlobCompressionName(f.compression)); },
                             "'none' or 'zstd' (bytes fields).")
      .def("__eq__", [](const Field& a, const py::object& b) {
        return py::isinstance<Field>(b) && a == b.cast<Field>();
      }, py::arg("other"))
      .def("__hash__", [](const Field& f) { return py::hash(py::str(FieldRepr(f))); })
      .def("__repr__", &FieldRepr)
      .def(py::pickle(
          [](const Field& f) {
            return py::make_tuple(f.name, unirecord::FieldTypeName(f.type), py::tuple(py::cast(f.shape)), f.indexed,
                                  BlobCompressionName(f.compression));
          },
          [](const py::tuple& t) {
            return MakeField(t[0].cast<std::string>(), t[1], t[2], t[3], t[4]);
          }));

  py::class_<Schema>(m, "Schema", R"doc(
The ordered, typed fields every record of a dataset has.

Schema(fields): a list of Field, or a dict {name: type or Field}, e.g.
Schema({"image": "bytes", "label": unirecord.Field("label", "int64", indexed=True)}).
Raises ValueError for an invalid schema (naming the field).
)doc")
      .def(py::init([](const py::object& fields) { return ToSchema(fields); }), py::arg("fields"))
      .def_property_readonly("fields", [](const Schema& s) { return s.fields(); }, "The fields, in order.")
      .def_property_readonly(
          "names",
          [](const Schema& s) {
            std::vector<std::string> names;
            for (const Field& f : s.fields()) names.push_back(f.name);
            return names;
          },
          "Field names, in order.")
      .def("__len__", &Schema::num_fields)
      .def("__iter__", [](const Schema& s) { return py::iter(py::cast(s.fields())); })
      .def("__contains__",
           [](const Schema& s, const py::object& name) {
             return py::isinstance<py::str>(name) && s.FieldIndex(name.cast<std::string>()) >= 0;
           },
           py::arg("name"))
      .def("__getitem__",
           [](const Schema& s, const py::object& key) -> Field {
             if (py::isinstance<py::str>(key)) {
               return s.field(Unwrap(s.FindField(key.cast<std::string>())));
             }
             if (PyBool_Check(key.ptr()) || !PyIndex_Check(key.ptr())) {
               throw py::type_error("schema keys are field names (str) or positions (int), not " +
                                    py::repr(key).cast<std::string>());
             }
             const py::int_ n(s.num_fields()), zero(0);
             py::int_ i = py::reinterpret_steal<py::int_>(PyNumber_Index(key.ptr()));
             py::int_ position = i < zero ? py::int_(i + n) : i;
             if (position < zero || !(position < n)) {
               throw py::index_error("field position " + py::repr(i).cast<std::string>() + " out of range for a schema of " +
                                     std::to_string(s.num_fields()) + " fields");
             }
             return s.field(position.cast<size_t>());
           },
           py::arg("key"))
      .def("__eq__", [](const Schema& a, const py::object& b) {
        return py::isinstance<Schema>(b) && a == b.cast<Schema>();
      }, py::arg("other"))
      .def("__repr__", [](const Schema& s) { return "Schema(" + s.ToString() + ")"; })
      .def("__str__", &Schema::ToString)
      .def(py::pickle([](const Schema& s) { return py::list(py::cast(s.fields())); },
                      [](const py::list& fields) { return ToSchema(fields); }));

  m.def("_to_schema", &ToSchema, py::arg("schema"));
}

}  // namespace unirecord_py
