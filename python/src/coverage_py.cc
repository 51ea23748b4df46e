// unirecord.Coverage and unirecord.check_coverage: a loader's coverage
// digest (unirecord/coverage.h) and the check that the ranks' digests
// together delivered the epoch exactly.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "common.h"
#include "unirecord/coverage.h"

namespace unirecord_py {

using unirecord::CoverageDigest;
using unirecord::Status;

namespace {

py::object IdsOf(const unirecord::CoveragePart& part) {
  if (!part.ids) return py::none();
  const std::vector<uint64_t> ids = part.ids->Ids();
  return py::array_t<uint64_t>(static_cast<py::ssize_t>(ids.size()), ids.data());
}

std::vector<CoverageDigest> DigestsArg(const py::handle& digests) {
  if (PyUnicode_Check(digests.ptr()) || PyBytes_Check(digests.ptr()) || !PySequence_Check(digests.ptr())) {
    throw py::type_error("the digests must be a list of unirecord.Coverage (one per rank), not " +
                         std::string(Py_TYPE(digests.ptr())->tp_name));
  }
  std::vector<CoverageDigest> out;
  for (const py::handle item : digests) out.push_back(CoverageArg(item));
  return out;
}

std::string Repr(const CoverageDigest& d) {
  const std::string rank = d.num_shards == 0 ? "merged" : "rank " + std::to_string(d.shard_id) + "/" +
                                                              std::to_string(d.num_shards);
  return "unirecord.Coverage(epoch " + std::to_string(d.epoch) + ", " + rank + ", " +
         std::to_string(d.delivered.digest.count) + " delivered of " + std::to_string(d.expected.digest.count) +
         (d.complete ? ", complete" : ", unfinished") + (d.ids ? ", with ids)" : ")");
}

}  // namespace

CoverageDigest CoverageArg(const py::handle& item) {
  if (py::isinstance<CoverageDigest>(item)) return item.cast<CoverageDigest>();
  if (PyBytes_Check(item.ptr())) return Unwrap(CoverageDigest::Parse(item.cast<std::string>()));
  throw py::type_error("a coverage digest is a unirecord.Coverage (Loader.coverage()) or its bytes, not " +
                       std::string(Py_TYPE(item.ptr())->tp_name));
}

void RegisterCoverage(py::module_& m) {
  py::class_<CoverageDigest>(m, "Coverage",
                             "What one loader (rank) delivered of an epoch: Loader.coverage(). Pickles as its bytes.")
      .def_readonly("epoch", &CoverageDigest::epoch)
      .def_readonly("seed", &CoverageDigest::seed)
      .def_readonly("num_shards", &CoverageDigest::num_shards)
      .def_readonly("shard_id", &CoverageDigest::shard_id)
      .def_readonly("complete", &CoverageDigest::complete)
      .def_readonly("skipped", &CoverageDigest::skipped)
      .def_readonly("uncarried", &CoverageDigest::uncarried)
      .def_readonly("has_ids", &CoverageDigest::ids)
      .def_property_readonly("expected", [](const CoverageDigest& d) { return d.expected.digest.count; })
      .def_property_readonly("delivered", [](const CoverageDigest& d) { return d.delivered.digest.count; })
      .def_property_readonly("padding", [](const CoverageDigest& d) { return d.padding.digest.count; })
      .def_property_readonly("dropped",
                             [](const CoverageDigest& d) { return d.dropped.digest.count + d.cut.digest.count; })
      .def_property_readonly("digest", [](const CoverageDigest& d) {
        return py::make_tuple(d.delivered.digest.count, d.delivered.digest.sum1, d.delivered.digest.sum2);
      })
      .def("ids", [](const CoverageDigest& d) { return IdsOf(d.delivered); })
      .def("to_bytes", [](const CoverageDigest& d) { return py::bytes(d.Serialize()); })
      .def(py::pickle([](const CoverageDigest& d) { return py::bytes(d.Serialize()); },
                      [](const py::bytes& b) { return Unwrap(CoverageDigest::Parse(b.cast<std::string>())); }))
      .def("__repr__", &Repr);

  py::class_<unirecord::CoverageCheck>(m, "CoverageCheck", "The answer of unirecord.check_coverage().")
      .def_readonly("ok", &unirecord::CoverageCheck::ok)
      .def_readonly("records", &unirecord::CoverageCheck::records)
      .def_readonly("deliveries", &unirecord::CoverageCheck::deliveries)
      .def_readonly("padding", &unirecord::CoverageCheck::padding)
      .def_readonly("dropped", &unirecord::CoverageCheck::dropped)
      .def_readonly("missing", &unirecord::CoverageCheck::missing)
      .def_readonly("repeated", &unirecord::CoverageCheck::repeated)
      .def_readonly("mismatch", &unirecord::CoverageCheck::mismatch)
      .def_readonly("has_ids", &unirecord::CoverageCheck::ids)
      .def_readonly("missing_ids", &unirecord::CoverageCheck::missing_ids)
      .def_readonly("repeated_ids", &unirecord::CoverageCheck::repeated_ids)
      .def_readonly("skipped", &unirecord::CoverageCheck::skipped)
      .def_readonly("uncarried", &unirecord::CoverageCheck::uncarried)
      .def_readonly("unfinished", &unirecord::CoverageCheck::unfinished)
      .def_readonly("message", &unirecord::CoverageCheck::message)
      .def("__bool__", [](const unirecord::CoverageCheck& c) { return c.ok; })
      .def("__repr__", [](const unirecord::CoverageCheck& c) {
        return "unirecord.CoverageCheck(ok=" + std::string(c.ok ? "True" : "False") + ": " + c.message + ")";
      });

  m.def(
      "check_coverage",
      [](const py::handle& digests) {
        const std::vector<CoverageDigest> parsed = DigestsArg(digests);
        unirecord::Result<unirecord::CoverageCheck> check = Status::Internal("not checked");
        {
          py::gil_scoped_release nogil;
          check = unirecord::CheckCoverage(parsed);
        }
        return Unwrap(std::move(check));
      },
      py::arg("digests"));
  m.def(
      "merge_coverage", [](const py::handle& digests) { return Unwrap(unirecord::MergeCoverage(DigestsArg(digests))); },
      py::arg("digests"));
}

}  // namespace unirecord_py
