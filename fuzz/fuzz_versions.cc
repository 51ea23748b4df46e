// Fuzz target for kept manifests and tags files (format/SPEC.md sections 1.1
// and 1.3): the input is "<flags byte><manifest>\0<tags file>" (without a
// NUL: all of it the manifest, no tags file).
//
// Once per process a dataset `train` of versions 1 and 2 is written; each
// input replaces, in a copy made of hard links, the kept manifest of version
// 1 (flags bit 0 clear) or of version 2 together with the committed one
// (set), and writes the tags file. (Run it with TMPDIR on a tmpfs: that
// copy is rebuilt for every input.) Then:
// - DecodeManifest either refuses (Corruption naming the file, a message of
//   printable ASCII) or gives uuids in their text form;
// - DecodeTags gives problems naming the file, printable, and tags of valid
//   names and versions that re-encode to a file without problems;
// - ListVersions, Dataset::Open by the version replaced and by tag, and a dry-run
//   CollectGarbage return a Status, never crash, and print nothing but
//   printable ASCII; a listed uuid is a UUID's text;
// - fail closed: a gc that runs had a tags file without a problem, every
//   tag naming a version it keeps; a Dataset opened by a tag is the version
//   the tag names.
// Never a crash, a hang or a sanitizer report.
//
// Seeds: fuzz/corpus/versions/ (fuzz/make_versions_seeds.sh).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "format/manifest.h"
#include "fuzz_dir.h"
#include "unirecord/dataset.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"

using namespace unirecord;
using unirecord::fuzz::Require;

namespace {

namespace fs = std::filesystem;

bool Printable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// A uuid a JSON printer or a Python string takes as it is: 36 of the
// characters of a UUID's text.
bool UuidLike(const std::string& s) {
  return s.size() == 36 && s.find_first_not_of("0123456789abcdef-") == std::string::npos;
}

// The temp directory's path is ASCII, so a whole message must be.
void RequirePrintable(const Status& status) {
  Require(Printable(status.message()), "an error message that is not printable ASCII");
}

// A new file at `path`, which Restore unlinked: never written through a link.
void WriteFile(const std::string& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(f);
}

// Versions 1 (3 records) and 2 (5) of `train` in `dir`.
void WriteDataset(const std::string& dir) {
  const Schema schema = *Schema::Make({Field::Int64("x")});
  for (int n : {3, 5}) {
    WriterOptions options;
    options.sync = false;
    auto writer = Writer::Create(dir, "train", schema, options);
    Require(writer.ok(), "the fixture dataset is not written");
    RecordBuilder record((*writer)->schema());
    for (int i = 0; i < n; ++i) {
      Require(record.SetInt64(0, i).ok() && (*writer)->Write(record).ok(), "a fixture record is not written");
    }
    Require((*writer)->Finish().ok(), "the fixture dataset is not committed");
  }
}

// The files an input replaces: the kept manifests and the committed one.
const char* const kReplaced[] = {"train.g000001.uver", "train.g000002.uver", "train.uset"};

// `work` back to `pristine`'s files as hard links (readers and cleanup only
// unlink them; WriteFile replaces them): the last input's files go, what is
// missing is linked again, the rest is already there.
void Restore(const std::string& pristine, const std::string& work, const std::vector<std::string>& files) {
  for (const char* name : kReplaced) ::unlink((work + "/" + name).c_str());
  ::unlink((work + "/train.utag").c_str());
  for (const std::string& name : files) {
    if (::link((pristine + "/" + name).c_str(), (work + "/" + name).c_str()) != 0) {
      Require(errno == EEXIST, "cannot link the fixture");
    }
  }
}

void CheckDecoders(const std::string& manifest, const std::string& tags_text, bool has_tags) {
  Result<format::Manifest> decoded = format::DecodeManifest(manifest, "m.uver");
  if (decoded.ok()) {
    Require(UuidLike(decoded->uuid), "a manifest decoded with a uuid that is not a UUID's text");
    for (const format::Segment& s : decoded->segments) Require(UuidLike(s.uuid), "a segment uuid not a UUID's text");
  } else {
    RequirePrintable(decoded.status());
    Require(decoded.status().code() == StatusCode::kCorruption, "a manifest error that is not Corruption");
    Require(decoded.status().message().rfind("m.uver: ", 0) == 0, "a manifest error that does not name the file");
  }
  if (!has_tags) return;
  const format::TagsFile tags = format::DecodeTags(tags_text, "t.utag");
  for (const std::string& problem : tags.problems) {
    Require(problem.rfind("t.utag: tags file ", 0) == 0, "a tags problem that does not name the file");
    Require(Printable(problem), "a tags problem that is not printable ASCII");
  }
  Require(tags.Sound().ok() == tags.problems.empty(), "Sound() disagrees with the problems");
  Require(tags.line_of.size() == tags.tags.size(), "a tag without its line");
  for (const auto& [tag, generation] : tags.tags) {
    Require(format::CheckTagName(tag).ok(), "a tag of a name no tag can have");
    Require(generation >= 1 && tags.line_of.count(tag) == 1, "a tag of version 0, or without its line");
  }
  const format::TagsFile again = format::DecodeTags(format::EncodeTags(tags.tags), "t.utag");
  Require(again.problems.empty() && again.tags == tags.tags, "the tags do not round-trip");
}

// The dataset-level reads and the gc's fail-closed promise.
void CheckDataset(const std::string& dir, uint64_t replaced, const std::string& tags_text, bool has_tags) {
  Result<VersionList> listed = ListVersions(dir);
  if (listed.ok()) {
    for (const VersionInfo& v : listed->versions) {
      Require(UuidLike(v.uuid), "a listed uuid that is not a UUID's text");
      for (const std::string& tag : v.tags) Require(format::CheckTagName(tag).ok(), "a listed tag of a bad name");
    }
    for (const std::string& problem : listed->tag_problems) Require(Printable(problem), "an unprintable warning");
  } else {
    RequirePrintable(listed.status());
  }
  DatasetOptions by_version;
  by_version.version = replaced;
  if (Result<std::shared_ptr<Dataset>> opened = Dataset::Open(dir, by_version); !opened.ok()) {
    RequirePrintable(opened.status());
  }
  const format::TagsFile tags = format::DecodeTags(has_tags ? tags_text : format::EncodeTags({}), "t.utag");
  std::vector<std::string> asked = {"absent"};  // refused before any shard opens
  if (!tags.tags.empty()) asked.push_back(tags.tags.rbegin()->first);
  for (const std::string& tag : asked) {
    DatasetOptions by_tag;
    by_tag.tag = tag;
    Result<std::shared_ptr<Dataset>> opened = Dataset::Open(dir, by_tag);
    if (!opened.ok()) {
      RequirePrintable(opened.status());
      continue;
    }
    Require(tags.tags.count(tag) == 1 && (*opened)->version() == tags.tags.at(tag),
            "a tag opened a version that no sound line names");
  }
  GcOptions gc;
  gc.keep_last = 1;
  gc.dry_run = true;
  Result<GcSummary> collected = CollectGarbage(dir, gc);
  if (!collected.ok()) {
    RequirePrintable(collected.status());
    return;
  }
  Require(tags.problems.empty(), "gc ran past a tags file with a line that does not read");
  const std::set<uint64_t> kept(collected->kept.begin(), collected->kept.end());
  for (const auto& [tag, generation] : tags.tags) Require(kept.count(generation) == 1, "gc lets a tagged version go");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzDir root;
  static const std::string pristine = root.path() + "/pristine";
  static const std::string work = root.path() + "/work";
  static const std::vector<std::string> files = [] {
    WriteDataset(pristine);
    fs::create_directory(work);
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(pristine)) names.push_back(entry.path().filename());
    return names;
  }();
  if (size == 0) return 0;
  const bool latest = (data[0] & 1) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t split = rest.find('\0');
  const std::string manifest(rest.substr(0, split));
  const bool has_tags = split != std::string_view::npos;
  const std::string tags = has_tags ? std::string(rest.substr(split + 1)) : std::string();
  CheckDecoders(manifest, tags, has_tags);

  Restore(pristine, work, files);
  WriteFile(work + (latest ? "/train.g000002.uver" : "/train.g000001.uver"), manifest);
  if (latest) WriteFile(work + "/train.uset", manifest);
  if (has_tags) WriteFile(work + "/train.utag", tags);
  CheckDataset(work, latest ? 2 : 1, tags, has_tags);
  return 0;
}
