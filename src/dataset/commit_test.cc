// The writer's dataset-level commit (format/SPEC.md section 1.1): manifest,
// generations, the writers' lock and what readers open. Crashes at every
// step of a conversion are in src/convert/image_folder_crash_test.cc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "format/manifest.h"
#include "dataset/dataset_testing.h"
#include "format/checksum.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

const std::string kGoldenV1 = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden/v1";

Result<std::unique_ptr<Writer>> StartWriter(const std::string& dir, const std::string& name) {
  WriterOptions options;
  options.sync = false;
  return Writer::Create(dir, name, testing::SampleSchema(), options);
}

std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CommitTest, ASecondWriterOfTheSameDatasetFailsAtOnceNamingTheHolder) {
  testing::ScratchDir dir;
  auto first = StartWriter(dir.path(), "train");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = StartWriter(dir.path(), "train");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid()) + " host "), std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find(".train.lock"), std::string::npos) << second.status().message();
  EXPECT_TRUE(StartWriter(dir.path(), "val").ok());  // another dataset in the same folder
  ASSERT_TRUE((*first)->Finish().ok());
  EXPECT_EQ(Listing(dir.path()),
            (std::vector<std::string>{"train-00000-of-00001.g000001.uidx", "train-00000-of-00001.g000001.urec",
                                      "train.g000001.uver", "train.uset"}));
  EXPECT_TRUE(StartWriter(dir.path(), "train").ok());
}

TEST(CommitTest, AWriterInAnotherProcessHoldsTheLockUntilItDies) {
  testing::ScratchDir dir;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto writer = StartWriter(dir.path(), "train");
    const char answer = writer.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &answer, 1);
    ::pause();
    _exit(0);
  }
  char answer = 0;
  ASSERT_EQ(::read(ready[0], &answer, 1), 1);
  ASSERT_EQ(answer, 'y');
  auto blocked = StartWriter(dir.path(), "train");
  EXPECT_EQ(blocked.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(blocked.status().message().find("pid " + std::to_string(child) + " "), std::string::npos)
      << blocked.status().message();
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(StartWriter(dir.path(), "train").ok()) << "a killed holder's lock is free";
}

TEST(CommitTest, APreManifestDatasetOpensAndIsReplacedWhole) {
  testing::ScratchDir dir;
  fs::copy(kGoldenV1, dir.path());
  auto old = Dataset::Open(dir.path());
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ((*old)->uuid(), "25661647-a09f-8738-832b-a9cd1a5612e2");
  // A generation file no manifest names (a write killed before its commit)
  // is never opened.
  fs::copy_file(kGoldenV1 + "/golden-00000-of-00002.urec", dir / "golden-00000-of-00001.g000001.urec");
  ASSERT_TRUE(Dataset::Open(dir.path()).ok());

  auto summary = testing::WriteSample(dir.path(), "golden", 10, testing::SmallPages(3));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->generation, 2u);  // past the stray generation 1
  std::vector<std::string> expected = {"golden.uset", "golden.g000002.uver"};
  for (uint32_t s = 0; s < 3; ++s) {
    expected.push_back(format::ShardFileName("golden", 2, s, 3));
    expected.push_back(format::IndexPathFor(expected.back()));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Listing(dir.path()), expected);
  for (const std::string& path : {dir.path(), dir / "golden", dir / "golden.uset"}) {
    auto now = Dataset::Open(path);
    ASSERT_TRUE(now.ok()) << path << ": " << now.status().ToString();
    EXPECT_EQ((*now)->uuid(), summary->uuid);
    EXPECT_EQ((*now)->size(), 10u);
  }
}

// A re-write never truncates or rewrites a file a reader has mapped: the old
// generation is unlinked, so an open Dataset keeps reading it whole.
TEST(CommitTest, AnOpenDatasetKeepsReadingTheGenerationItOpened) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 30, testing::SmallPages(2)).ok());
  auto old = Dataset::Open(dir.path());
  ASSERT_TRUE(old.ok());
  auto replaced = testing::WriteSample(dir.path(), "train", 7, testing::SmallPages(3));
  ASSERT_TRUE(replaced.ok());
  ASSERT_EQ((*old)->size(), 30u);
  for (uint64_t id = 0; id < 30; ++id) {
    auto record = (*old)->Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
  }
  EXPECT_TRUE((*old)->Verify().ok());
  EXPECT_EQ((*Dataset::Open(dir.path()))->size(), 7u);
}

TEST(CommitTest, TheManifestBindsItsGeneration) {
  testing::ScratchDir dir;
  auto summary = testing::WriteSample(dir.path(), "train", 8, testing::SmallPages(2));
  ASSERT_TRUE(summary.ok());
  auto manifest = format::ReadManifest(dir.path(), "train");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->generation, 1u);
  EXPECT_EQ(manifest->shard_count, 2u);
  EXPECT_EQ(manifest->uuid, summary->uuid);
  const std::string text = testing::ReadBytes(dir / "train.uset");

  std::string flipped = text;
  flipped[text.find("shards 2") + 7] = '3';
  testing::WriteBytes(dir / "train.uset", flipped);
  auto damaged = Dataset::Open(dir.path());
  EXPECT_EQ(damaged.status().code(), StatusCode::kCorruption);
  EXPECT_NE(damaged.status().message().find("train.uset: manifest checksum mismatch"), std::string::npos)
      << damaged.status().message();

  format::Manifest other = *manifest;
  other.uuid = "00000000-0000-8000-8000-000000000000";
  testing::WriteBytes(dir / "train.uset", format::EncodeManifest(other));
  auto mismatched = Dataset::Open(dir / "train");
  EXPECT_EQ(mismatched.status().code(), StatusCode::kCorruption);
  EXPECT_NE(mismatched.status().message().find("but its shards hold dataset " + summary->uuid), std::string::npos)
      << mismatched.status().message();

  // A writer replaces a damaged manifest; it then keeps the files it cannot
  // place until the new commit.
  testing::WriteBytes(dir / "train.uset", flipped);
  auto again = testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->generation, 2u);
  auto reopened = Dataset::Open(dir.path());
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->size(), 5u);
  // Version 1 stays: its kept manifest is whole (2 shards, 2 indexes, kept
  // manifest), beside version 2 (shard, index, kept manifest) and NAME.uset.
  EXPECT_EQ(Listing(dir.path()).size(), 9u);
  DatasetOptions first;
  first.version = 1;
  auto version1 = Dataset::Open(dir / "train", first);
  ASSERT_TRUE(version1.ok()) << version1.status().ToString();
  EXPECT_EQ((*version1)->uuid(), summary->uuid);
}

// `body` (every line before the checksum) with its checksum line.
std::string Signed(const std::string& body) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(format::Checksum(body.data(), body.size())));
  return body + "checksum " + hex + "\n";
}

TEST(CommitTest, ManifestsDecodeStrictlyButIgnoreKeysOfLaterVersions) {
  format::Manifest manifest;
  manifest.generation = 12;
  manifest.shard_count = 3;
  manifest.uuid = "25661647-a09f-8738-832b-a9cd1a5612e2";
  manifest.reports = {"rejects"};
  const std::string text = format::EncodeManifest(manifest);
  const std::string body = text.substr(0, text.rfind("checksum "));
  EXPECT_EQ(text, Signed(body));
  auto decoded = format::DecodeManifest(text, "m.uset");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->generation, 12u);
  EXPECT_EQ(decoded->shard_count, 3u);
  EXPECT_EQ(decoded->uuid, manifest.uuid);
  EXPECT_EQ(decoded->reports, manifest.reports);
  EXPECT_TRUE(format::DecodeManifest(Signed(body + "added-later 1 2 3\n"), "m.uset").ok());
  for (const std::string& bad :
       {text.substr(0, text.size() - 5), Signed(body.substr(0, body.find("uuid "))), Signed("unirecord-manifest 2\n"),
        Signed(body + "shards 4\n"), Signed(body + "report Rejects\n"), std::string()}) {
    auto refused = format::DecodeManifest(bad, "m.uset");
    EXPECT_EQ(refused.status().code(), StatusCode::kCorruption) << bad;
    EXPECT_EQ(refused.status().message().rfind("m.uset: manifest ", 0), 0u) << refused.status().message();
  }
}

TEST(CommitTest, AManifestLargerThanTheCapIsRefusedBeforeDecoding) {
  testing::ScratchDir dir;
  format::Manifest manifest;
  manifest.generation = 1;
  manifest.shard_count = 1;
  manifest.uuid = "25661647-a09f-8738-832b-a9cd1a5612e2";
  const std::string text = format::EncodeManifest(manifest);
  const std::string body = text.substr(0, text.rfind("checksum "));
  // Valid but for its size: keys of a later version fill it past the cap.
  std::string padded = body;
  while (padded.size() <= format::kMaxManifestBytes) padded += "added-later " + std::string(100, 'x') + "\n";
  ASSERT_TRUE(format::DecodeManifest(Signed(padded), "m.uset").ok());
  testing::WriteBytes(dir / "train.uset", Signed(padded));
  auto refused = format::ReadManifest(dir.path(), "train");
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  EXPECT_NE(refused.status().message().find("train.uset: manifest larger than " +
                                            std::to_string(format::kMaxManifestBytes) + " bytes"),
            std::string::npos)
      << refused.status().message();
  testing::WriteBytes(dir / "train.uset", text);
  EXPECT_TRUE(format::ReadManifest(dir.path(), "train").ok());
}

TEST(CommitTest, AFolderWithTwoDatasetsOpensOneByName) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 6, testing::SmallPages(2)).ok());
  ASSERT_TRUE(testing::WriteSample(dir.path(), "val", 3, testing::SmallPages(1)).ok());
  auto both = Dataset::Open(dir.path());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(both.status().message().find("more than one dataset (train, val)"), std::string::npos)
      << both.status().message();
  auto val = Dataset::Open(dir / "val");
  ASSERT_TRUE(val.ok()) << val.status().ToString();
  EXPECT_EQ((*val)->size(), 3u);
}

TEST(CommitTest, ReportsAreCommittedWithTheGeneration) {
  testing::ScratchDir dir;
  Schema schema = testing::SampleSchema();
  WriterOptions options;
  options.sync = false;
  auto writer = Writer::Create(dir.path(), "train", schema, options);
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ((*writer)->AddReport("Rejects", "x").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE((*writer)->AddReport("rejects", "path\treason\n").ok());
  EXPECT_EQ((*writer)->AddReport("rejects", "again").code(), StatusCode::kInvalidArgument);
  RecordBuilder record(schema);
  ASSERT_TRUE(testing::FillSample(record, testing::SampleRecord(1)).ok());
  ASSERT_TRUE((*writer)->Write(record).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  const WriterSummary& summary = (*writer)->summary();
  ASSERT_EQ(summary.report_paths, std::vector<std::string>{dir / "train.rejects.g000001.tsv"});
  EXPECT_EQ(testing::ReadBytes(summary.report_paths[0]), "path\treason\n");
  EXPECT_EQ(format::ReadManifest(dir.path(), "train")->reports, std::vector<std::string>{"rejects"});
}

}  // namespace
}  // namespace unirecord
