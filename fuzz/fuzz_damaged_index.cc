// Fuzz target for queries over a damaged index (issue 22): the input is a
// set of byte changes inside the sorted-index and list-index sections of the
// query dataset.
//
// Input layout:
//   byte 0        bit 0: verify_checksums
//   then, per 5 bytes: a position (u32 LE, taken modulo the bytes of all the
//                 sorted-index sections of both index files, in order) and a
//                 value XORed into that byte
// The dataset of fuzz_query is written once per process, its index files
// kept; each input rewrites them with its changes, opens the dataset afresh
// and runs a fixed set of expressions (Ids, Count, CountBy "label"). With
// verify_checksums, each answer must equal the undamaged dataset's or be a
// Corruption naming the .uidx file and "sorted index" or "list index"
// (SPEC sections 8.4 and 11):
// a wrong answer aborts. Without, any Status will do; none may crash, hang or
// trip a sanitizer.
//
// Seeds: fuzz/corpus/damaged_index/.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_dir.h"
#include "fuzz_query_dataset.h"
#include "index/index_file.h"
#include "query/query_testing.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"

namespace {

using namespace unirecord;

const char* const kExpressions[] = {"label == 1",  "label in [0, 2] or label < -5", "score > 0",
                                    "not (score >= 0.5)", "width between 2 and 8 and label != 0",
                                    "label == 1 and path == 'dir1/1'", "tags contains 1",
                                    "any(tags in [0, -9223372036854775808]) or len(tags) >= 3",
                                    "not tags contains 2 and label != 0"};

struct Section {
  size_t file;
  uint64_t offset, length;
};

struct Sound {
  fuzz::FuzzDir dir;
  std::vector<std::string> index_paths;
  std::vector<std::string> index_bytes;
  std::vector<Section> sections;
  uint64_t section_bytes = 0;
  std::vector<std::string> answers;  // per expression

  Sound() {
    std::shared_ptr<Dataset> ds = fuzz::WriteQueryDataset(dir.path());
    for (const ShardInfo& shard : ds->shards()) {
      index_paths.push_back(shard.index_path);
      std::ifstream in(shard.index_path, std::ios::binary);
      index_bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      auto reader = index::IndexReader::Open(shard.index_path, true);
      fuzz::Require(reader.ok(), "index open");
      const auto* list = reader->header().sections();
      for (flatbuffers::uoffset_t i = 1; i < list->size(); ++i) {
        sections.push_back({index_paths.size() - 1, list->Get(i)->offset(), list->Get(i)->length()});
        section_bytes += list->Get(i)->length();
      }
    }
    fuzz::Require(section_bytes > 0, "no sorted index");
    for (const char* expression : kExpressions) {
      auto answer = testing::QueryAnswers(*ds, expression);
      fuzz::Require(answer.ok(), "a query failed on the sound dataset");
      answers.push_back(*answer);
    }
  }
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  fuzz::Require(out.good(), "write index");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Sound sound;
  if (size < 1) return 0;
  DatasetOptions options;
  options.verify_checksums = (data[0] & 1) != 0;
  std::vector<std::string> files = sound.index_bytes;
  for (size_t p = 1; p + 5 <= size; p += 5) {
    uint64_t at = (static_cast<uint64_t>(data[p]) | static_cast<uint64_t>(data[p + 1]) << 8 |
                   static_cast<uint64_t>(data[p + 2]) << 16 | static_cast<uint64_t>(data[p + 3]) << 24) %
                  sound.section_bytes;
    for (const Section& s : sound.sections) {
      if (at < s.length) {
        files[s.file][s.offset + at] = static_cast<char>(files[s.file][s.offset + at] ^ data[p + 4]);
        break;
      }
      at -= s.length;
    }
  }
  for (size_t f = 0; f < files.size(); ++f) WriteFile(sound.index_paths[f], files[f]);
  auto ds = Dataset::Open(sound.dir.path(), options);
  if (!ds.ok()) {
    // Open reads no sorted index, but checks each list index's counts against
    // its length (SPEC section 8.4): a damaged count fails there, by name.
    fuzz::Require(ds.status().code() == StatusCode::kCorruption &&
                      ds.status().message().find(".uidx: list index ") != std::string::npos,
                  "open failed other than on a list index's counts");
    return 0;
  }
  for (size_t e = 0; e < std::size(kExpressions); ++e) {
    auto answer = testing::QueryAnswers(**ds, kExpressions[e]);
    if (!options.verify_checksums) continue;
    if (answer.ok()) {
      fuzz::Require(*answer == sound.answers[e], "a wrong answer over a damaged sorted index");
    } else {
      const std::string& message = answer.status().message();
      fuzz::Require(answer.status().code() == StatusCode::kCorruption, "an error that is not Corruption");
      fuzz::Require(message.find(".uidx: sorted index ") != std::string::npos ||
                        message.find(".uidx: list index ") != std::string::npos,
                    "an error naming no file and section");
    }
  }
  return 0;
}
