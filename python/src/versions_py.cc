// unirecord.versions, tag, untag, gc: the kept versions of a dataset
// (unirecord/versions.h).
#include <pybind11/stl.h>

#include "common.h"
#include "writer_py.h"
#include "unirecord/versions.h"

namespace unirecord_py {

void RegisterVersions(py::module_& m) {
  m.def(
      "versions",
      [](const py::object& path) {
        const std::string where = PathArg("path", path);
        unirecord::Result<unirecord::VersionList> listed = unirecord::Status::Internal("not listed");
        {
          py::gil_scoped_release nogil;
          listed = unirecord::ListVersions(where);
        }
        const unirecord::VersionList list = Unwrap(std::move(listed));
        for (const std::string& problem : list.tag_problems) Warn(problem);
        py::list out;
        for (const unirecord::VersionInfo& v : list.versions) {
          py::dict version;
          version["version"] = v.generation;
          version["latest"] = v.latest;
          version["tags"] = v.tags;
          version["committed_unix_s"] = v.committed_unix_s;
          version["segments"] = v.segments;
          version["shards"] = v.shards;
          version["uuid"] = v.uuid;
          out.append(version);
        }
        return out;
      },
      py::arg("path"),
      R"doc(The kept versions of the dataset at path (a folder, DIR/NAME or DIR/NAME.uset), oldest first:
dicts with version (its generation; Dataset(path, version=...) opens it), latest, tags,
committed_unix_s, segments, shards and uuid. A UserWarning names each line of a damaged tags
file (its tag is left out; every writer refuses the dataset until the file is repaired).)doc");
  m.def(
      "tag",
      [](const py::object& path, const py::object& tag, const py::object& version) {
        const uint64_t g = version.is_none() ? 0 : IntArgAs<uint64_t>("version", version, 1);
        Check(unirecord::TagVersion(PathArg("path", path), StrArg("tag", tag), g));
      },
      py::arg("path"), py::arg("tag"), py::arg("version") = py::none(),
      "Names kept version `version` (default the latest) `tag` (a-z 0-9 . _ -, starting with a letter); "
      "an existing tag moves. Tagged versions survive gc; Dataset(path, tag=...) opens one.");
  m.def(
      "untag",
      [](const py::object& path, const py::object& tag, const py::object& version) {
        const uint64_t g = version.is_none() ? 0 : IntArgAs<uint64_t>("version", version, 1);
        Check(unirecord::UntagVersion(PathArg("path", path), StrArg("tag", tag), g));
      },
      py::arg("path"), py::arg("tag"), py::arg("version") = py::none(),
      "Removes a tag; with version, only if the tag names that version (ValueError otherwise, and the tag "
      "stays). FileNotFoundError when there is no such tag.");
  m.def(
      "gc",
      [](const py::object& path, const py::object& keep, const py::object& keep_newer_than_s, const py::object& dry_run) {
        if (keep.is_none() && keep_newer_than_s.is_none()) {
          RaiseStatus(unirecord::Status::InvalidArgument(
              "gc: say which versions to keep: keep=N (the newest N) and/or keep_newer_than_s=S"));
        }
        unirecord::GcOptions options;
        if (!keep.is_none()) options.keep_last = IntArgAs<uint32_t>("keep", keep, 1);
        if (!keep_newer_than_s.is_none()) {
          options.keep_newer_than_s = IntArgAs<int64_t>("keep_newer_than_s", keep_newer_than_s, 0);
        }
        options.dry_run = BoolArg("dry_run", dry_run);
        const std::string where = PathArg("path", path);
        unirecord::Result<unirecord::GcSummary> collected = unirecord::Status::Internal("not collected");
        {
          py::gil_scoped_release nogil;
          collected = unirecord::CollectGarbage(where, options);
        }
        const unirecord::GcSummary summary = Unwrap(std::move(collected));
        py::dict out;
        out["removed"] = summary.removed;
        out["kept"] = summary.kept;
        out["files_removed"] = summary.files_removed;
        out["bytes_freed"] = summary.bytes_freed;
        return out;
      },
      py::arg("path"), py::kw_only(), py::arg("keep") = py::none(), py::arg("keep_newer_than_s") = py::none(),
      py::arg("dry_run") = false,
      R"doc(Removes old versions and the files only they use. keep: the newest N versions stay;
keep_newer_than_s: versions committed less than that many seconds ago stay (give at least one
rule; a version goes when every rule given lets it). The latest and tagged versions always stay.
Returns {removed, kept, files_removed, bytes_freed}.)doc");
  const unirecord::CompactOptions c;
  m.def(
      "compact",
      [](const py::object& path, const py::object& num_shards, const py::object& target_shard_bytes,
         const py::object& threads, const py::object& sync) {
        unirecord::CompactOptions options;
        options.num_shards = IntArgAs<uint32_t>("num_shards", num_shards);
        options.target_shard_bytes = IntArgAs<uint64_t>("target_shard_bytes", target_shard_bytes);
        options.threads = IntArgAs<int>("threads", threads, 0);
        options.sync = BoolArg("sync", sync);
        const std::string where = PathArg("path", path);
        unirecord::Result<unirecord::WriterSummary> compacted = unirecord::Status::Internal("not compacted");
        {
          py::gil_scoped_release nogil;
          compacted = unirecord::CompactDataset(where, options);
        }
        return SummaryDict(Unwrap(std::move(compacted)));
      },
      py::arg("path"), py::kw_only(), py::arg("num_shards") = c.num_shards,
      py::arg("target_shard_bytes") = c.target_shard_bytes, py::arg("threads") = c.threads, py::arg("sync") = c.sync,
      R"doc(Rewrites the latest version of the dataset at path as one segment and commits it as a new
version (the same records, ids, schema and metadata): after many appends, to keep the manifest
small. num_shards / target_shard_bytes as for Writer (default: shards of about 1 GiB). The versions
before stay until gc. Returns Writer.finish()'s summary dict.)doc");
}

}  // namespace unirecord_py
