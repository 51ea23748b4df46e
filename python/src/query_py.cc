// Dataset.query / Dataset.count: the query language (docs/query.md) from Python.
#include <pybind11/numpy.h>

#include <cstring>

#include "common.h"
#include "unirecord/query.h"

namespace unirecord_py {

namespace {

using unirecord::Query;

// Parses and runs with the GIL released; raises (ValueError for a bad
// expression, its message showing the column) with the GIL held.
template <typename T, typename Run>
T RunQuery(const PyDataset& d, const std::string& expression, Run run) {
  unirecord::Result<T> result = unirecord::Status::Internal("query did not run");
  {
    py::gil_scoped_release nogil;
    auto query = Query::Parse(expression, *d.dataset);
    result = query.ok() ? run(*query) : unirecord::Result<T>(query.status());
  }
  return Unwrap(std::move(result));
}

}  // namespace

void RegisterQuery(py::module_& m) {
  auto dataset = py::reinterpret_borrow<py::class_<PyDataset, std::shared_ptr<PyDataset>>>(m.attr("Dataset"));
  dataset
      .def(
          "query",
          [](const PyDataset& d, const py::object& expression_arg) {
            const std::string expression = StrArg("expression", expression_arg);
            std::vector<uint64_t> ids = RunQuery<std::vector<uint64_t>>(
                d, expression, [&](const Query& q) { return q.Ids(*d.dataset); });
            py::array_t<uint64_t> out(static_cast<py::ssize_t>(ids.size()));
            if (!ids.empty()) std::memcpy(out.mutable_data(), ids.data(), ids.size() * sizeof(uint64_t));
            return out;
          },
          py::arg("expression"),
          "The ids of the records matching expression (e.g. 'label in [3, 7] and width >= 400'), "
          "ascending, as a numpy uint64 array. Indexed fields are searched in the sorted indexes, "
          "other scalar fields scanned; see docs/query.md. ValueError (with the column) for a bad "
          "expression.")
      .def(
          "count",
          [](const PyDataset& d, const py::object& expression_arg) {
            const std::string expression = StrArg("expression", expression_arg);
            return RunQuery<uint64_t>(d, expression, [&](const Query& q) { return q.Count(*d.dataset); });
          },
          py::arg("expression"), "The number of records matching expression (as len(ds.query(expression))).");
}

}  // namespace unirecord_py
