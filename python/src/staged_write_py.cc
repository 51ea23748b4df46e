// unirecord.PartWriter and unirecord.StagedWrite: a dataset written as parts
// by any processes, committed by one.
#include "writer_py.h"

namespace unirecord_py {
namespace {

std::unique_ptr<PyPartWriter> NewPartWriter(const py::object& out, const py::object& schema, const py::object& name,
                                            const py::object& token, const py::object& part,
                                            const py::object& num_parts, const py::object& target_shard_bytes,
                                            const py::object& metadata, const py::object& classes,
                                            const py::object& blob_compression, const py::object& zstd_level,
                                            const py::object& threads, const py::object& sync,
                                            const py::object& blob_page_bytes, const py::object& scalar_page_bytes) {
  auto w = std::make_unique<PyPartWriter>();
  w->schema = ToSchema(schema);
  w->out_dir = PathArg("out", out);
  w->name = StrArg("name", name);
  const std::string token_text = StrArg("token", token);
  const uint32_t part_number = IntArgAs<uint32_t>("part", part);
  const uint32_t parts = IntArgAs<uint32_t>("num_parts", num_parts);
  WriterOptions o = WriterOptionsArgs(target_shard_bytes, blob_compression, zstd_level, threads, sync,
                                      blob_page_bytes, scalar_page_bytes);
  unirecord::Result<std::unique_ptr<unirecord::PartWriter>> r = Status::Internal("not created");
  {
    py::gil_scoped_release nogil;
    r = unirecord::PartWriter::Create(w->out_dir, w->name, token_text, part_number, parts, w->schema, o);
  }
  w->writer = Unwrap(std::move(r));
  SetMetadataArgs(*w, classes, metadata);
  return w;
}


}  // namespace

void RegisterStagedWrite(py::module_& m) {
  const WriterOptions w;  // PartWriter's defaults are Writer's
  py::class_<PyPartWriter> part_class(m, "PartWriter", R"doc(
Writes part PART of NUM_PARTS of a StagedWrite (its token) from any process
that sees OUT: Writer's calls and keywords, plus next_shard(). A part starts
with one shard; next_shard() cuts one (and target_shard_bytes=B, when set,
cuts as Writer does). finish() stages the part under hidden names in OUT
that StagedWrite.commit() takes; a part run again replaces its staged files
whole. Every part must get the same schema and metadata.
)doc");
  part_class
      .def(py::init(&NewPartWriter), py::arg("out"), py::arg("schema"), py::arg("name") = "data", py::kw_only(),
           py::arg("token"), py::arg("part"), py::arg("num_parts"),
           py::arg("target_shard_bytes") = w.target_shard_bytes, py::arg("metadata") = py::none(),
           py::arg("classes") = py::none(),
           py::arg("blob_compression") = unirecord::BlobCompressionName(w.default_blob_compression),
           py::arg("zstd_level") = w.zstd_level, py::arg("threads") = w.threads, py::arg("sync") = w.sync,
           py::arg("blob_page_bytes") = w.blob_page_bytes, py::arg("scalar_page_bytes") = w.scalar_page_bytes)
      .def("next_shard", [](PyPartWriter& p) { Check(p.Live().NextShard()); },
           "Ends the current shard (an empty one when nothing was written to it) and starts the next.")
      .def("finish", &PyPartWriter::Finish,
           "Completes the part's shards and stages them; returns the summary dict (records, shards, bytes, "
           "shard_paths and index_paths of the staged files).");
  DefineWriterMethods(part_class, "PartWriter");

  const unirecord::StagedWriteOptions sw;
  py::class_<PyStagedWrite>(m, "StagedWrite", R"doc(
The driver's side of a dataset written as NUM_PARTS parts by PartWriters in
any processes (a Dask, Spark or Ray job; docs/scale.md). Creating it takes
the writers' lock of NAME in OUT (RuntimeError naming the holder while
another writer has it) and picks `token`, which every PartWriter needs.
commit() verifies every staged shard (headers, footer, index checksums),
stamps the dataset's values into their headers and commits one manifest,
as Writer.finish(); a missing part, a damaged shard or mismatched schemas
commit nothing, with an error naming the part and file. abort() (or
dropping it) removes what the run staged and releases the lock.
default: with keep_committed(), the values of the fields the dataset has and
the parts' records lack (fields added to it later, add_fields): a dict
{field: value}, or one JSON object's text as urec's --default gives; the new
segment gets them as a field group. Without it such parts are refused at
commit() naming the fields.
)doc")
      .def(py::init([](const py::object& out, const py::object& name, const py::object& num_parts,
                       const py::object& threads, const py::object& sync, const py::object& default_values) {
             auto p = std::make_unique<PyStagedWrite>();
             unirecord::StagedWriteOptions o;
             o.threads = IntArgAs<int>("threads", threads, 0);
             o.sync = BoolArg("sync", sync);
             o.defaults = DefaultsArg(default_values);
             const std::string out_dir = PathArg("out", out), dataset = StrArg("name", name);
             const uint32_t parts = IntArgAs<uint32_t>("num_parts", num_parts);
             unirecord::Result<std::unique_ptr<unirecord::StagedWrite>> r = Status::Internal("not begun");
             {
               py::gil_scoped_release nogil;
               r = unirecord::StagedWrite::Begin(out_dir, dataset, parts, o);
             }
             p->staged = Unwrap(std::move(r));
             return p;
           }),
           py::arg("out"), py::arg("name"), py::arg("num_parts"), py::kw_only(), py::arg("threads") = sw.threads,
           py::arg("sync") = sw.sync, py::arg("default") = py::none())
      .def_property_readonly("token", [](PyStagedWrite& p) { return p.Live().token(); })
      .def_property_readonly("num_parts", [](PyStagedWrite& p) { return p.Live().num_parts(); })
      .def("add_report", [](PyStagedWrite& p, const py::object& label, const py::object& text) {
             Check(p.Live().AddReport(StrArg("label", label), FsNameBytes(text)));
           }, py::arg("label"), py::arg("text"), "A text report committed with the dataset (OUT/NAME.LABEL.gG.tsv).")
      .def("keep_committed", [](PyStagedWrite& p) { Check(p.Live().KeepCommitted()); },
           "Append instead of replacing: the committed dataset NAME's segments stay as they are and the parts "
           "become one new segment after them (without a dataset NAME, the parts are the dataset).")
      .def("commit", &PyStagedWrite::Commit,
           "Verifies and commits every part; returns the summary dict (records, shards, bytes, uuid, shard_paths, "
           "index_paths, report_paths, manifest_path, generation).")
      .def("abort", &PyStagedWrite::Abort, "Removes what the run staged and releases the lock.")
      .def("__enter__", [](PyStagedWrite& p) -> PyStagedWrite& { return p; }, py::return_value_policy::reference)
      .def("__exit__", [](PyStagedWrite& p, const py::object&, const py::object&, const py::object&) {
             p.Abort();  // after commit() a no-op
             return false;
           },
           py::arg("exc_type"), py::arg("exc"), py::arg("tb"));
}

}  // namespace unirecord_py
