// unirecord.serve: the viewer of `urec serve` (unirecord/serve.h) started
// from Python, in this process's background threads.
#include <pybind11/pybind11.h>

#include "common.h"
#include "unirecord/serve.h"

namespace unirecord_py {

namespace {

struct PyServer {
  std::unique_ptr<unirecord::Server> server;

  unirecord::Server& get() const {
    if (server == nullptr) RaiseStatus(unirecord::Status::FailedPrecondition("the server was stopped"));
    return *server;
  }
  void Stop() {
    py::gil_scoped_release nogil;
    server.reset();
  }
};

}  // namespace

void RegisterServe(py::module_& m) {
  py::class_<PyServer>(m, "Server", "A running viewer (unirecord.serve); stop() or a with block ends it.")
      .def_property_readonly("url", [](const PyServer& s) { return s.get().url(); },
                             "The page's address, with ?token=... when there is one.")
      .def_property_readonly("host", [](const PyServer& s) { return s.get().host(); })
      .def_property_readonly("port", [](const PyServer& s) { return s.get().port(); })
      .def_property_readonly("token", [](const PyServer& s) { return s.get().token(); },
                             "The token requests must carry ('' on a loopback bind without one).")
      .def_property_readonly("running", [](const PyServer& s) { return s.server != nullptr; })
      .def("stop", &PyServer::Stop, "Stops serving (idempotent).")
      .def("__enter__", [](PyServer& s) -> PyServer& { return s; })
      .def("__exit__", [](PyServer& s, const py::object&, const py::object&, const py::object&) { s.Stop(); })
      .def("__repr__", [](const PyServer& s) {
        return s.server != nullptr ? "<unirecord.Server " + s.server->url() + ">" : std::string("<unirecord.Server stopped>");
      });
  m.def(
      "_serve",
      [](const std::shared_ptr<PyDataset>& dataset, const py::object& port, const py::object& bind,
         const py::object& token, const py::object& threads, const py::object& cache_bytes,
         const py::object& thumbnail_size, const py::object& box_format) {
        unirecord::ServeOptions options;
        options.port = IntArgAs<int>("port", port, 0, 65535);
        options.bind = StrArg("bind", bind);
        if (!token.is_none()) options.token = StrArg("token", token);
        options.threads = IntArgAs<int>("threads", threads, 1, 64);
        options.cache_bytes = IntArgAs<uint64_t>("cache_bytes", cache_bytes, uint64_t{1} << 20);
        options.thumbnail_size = IntArgAs<int>("thumbnail_size", thumbnail_size, 32, 512);
        options.box_format = Unwrap(unirecord::ParseBoxFormat(StrArg("box_format", box_format)));
        std::string path;
        for (const std::string& p : dataset->paths) path += (path.empty() ? "" : " ") + p;
        unirecord::Result<std::unique_ptr<unirecord::Server>> started = unirecord::Status::Internal("not started");
        {
          py::gil_scoped_release nogil;
          started = unirecord::Server::Start(dataset->dataset, path, options);
        }
        PyServer server;
        server.server = Unwrap(std::move(started));
        return server;
      },
      py::arg("dataset"), py::arg("port"), py::arg("bind"), py::arg("token"), py::arg("threads"),
      py::arg("cache_bytes"), py::arg("thumbnail_size"), py::arg("box_format"));
}

}  // namespace unirecord_py
