// StagedWrite + PartWriter (staged_write.h): parts written in any order, by any
// attempt, commit to the bytes a Writer gives the same records; anything
// missing, damaged or mismatched commits nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dataset/commit.h"
#include "dataset/dataset_testing.h"
#include "format/file_names.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/staged_write.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kRecords = 60;

WriterOptions PartOptions() {
  WriterOptions options = testing::SmallPages(0);
  options.sync = false;
  return options;
}

// Writes records [begin, end) as part `part`, cutting a shard before each
// record in `cuts`.
Status WritePart(const std::string& dir, const std::string& token, uint32_t part, uint32_t parts, uint64_t begin,
                 uint64_t end, const std::vector<uint64_t>& cuts, const Schema& schema = testing::SampleSchema()) {
  UREC_ASSIGN_OR_RETURN(auto writer, PartWriter::Create(dir, "train", token, part, parts, schema, PartOptions()));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("classes", "a\nb\nc\nd\ne"));
  UREC_RETURN_IF_ERROR(writer->SetMetadata("source", "train"));
  RecordBuilder record(writer->schema());
  for (uint64_t k = begin; k < end; ++k) {
    if (std::find(cuts.begin(), cuts.end(), k) != cuts.end()) UREC_RETURN_IF_ERROR(writer->NextShard());
    const testing::SampleValues values = testing::SampleRecord(k);  // SetBytes keeps a view
    UREC_RETURN_IF_ERROR(testing::FillSample(record, values));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  return writer->Finish();
}

std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

StagedWriteOptions NoSync() {
  StagedWriteOptions options;
  options.sync = false;
  options.threads = 2;
  return options;
}

// The reference: a Writer's contiguous split of the 60 records into 4 shards
// of 15 (expected_records mode keeps Write order).
std::map<std::string, std::string> Reference(const std::string& dir) {
  WriterOptions options = testing::SmallPages(4);
  options.expected_records = kRecords;
  EXPECT_TRUE(testing::WriteSample(dir, "train", kRecords, options).ok());
  return Files(dir);
}

TEST(StagedWriteTest, PartsInAnyOrderAndRetriedCommitTheBytesOfAWriter) {
  testing::ScratchDir reference_dir, dir;
  const auto reference = Reference(reference_dir.path());
  auto staged = StagedWrite::Begin(dir.path(), "train", 3, NoSync());
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  const std::string token = (*staged)->token();
  // Part 2 first; part 1 holds two shards; part 0 is written twice (a retry).
  ASSERT_TRUE(WritePart(dir.path(), token, 2, 3, 45, 60, {}).ok());
  ASSERT_TRUE(WritePart(dir.path(), token, 1, 3, 15, 45, {30}).ok());
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 3, 0, 15, {}).ok());
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 3, 0, 15, {}).ok());
  Status committed = (*staged)->Commit();
  ASSERT_TRUE(committed.ok()) << committed.ToString();
  EXPECT_EQ((*staged)->summary().records, kRecords);
  EXPECT_EQ((*staged)->summary().shards, 4u);
  const auto files = Files(dir.path());
  ASSERT_EQ(files.size(), reference.size());
  for (const auto& [name, bytes] : reference) {
    ASSERT_TRUE(files.count(name)) << name;
    const std::string& got = files.at(name);
    size_t at = 0;
    while (at < got.size() && at < bytes.size() && got[at] == bytes[at]) ++at;

    EXPECT_TRUE(got == bytes) << name << " differs from the Writer's at byte " << at << " of " << got.size() << " / "
                              << bytes.size();
  }
  auto dataset = Dataset::Open(dir.path(), {});
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_TRUE((*dataset)->Verify().ok());
}

TEST(StagedWriteTest, AMissingPartCommitsNothingAndTheOldDatasetStays) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 10, testing::SmallPages(1)).ok());
  const auto before = Files(dir.path());
  {
    auto staged = StagedWrite::Begin(dir.path(), "train", 2, NoSync());
    ASSERT_TRUE(staged.ok());
    ASSERT_TRUE(WritePart(dir.path(), (*staged)->token(), 0, 2, 0, 30, {}).ok());
    Status committed = (*staged)->Commit();
    EXPECT_EQ(committed.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(committed.message().find("part 1 of 2 is not complete"), std::string::npos) << committed.message();
  }
  EXPECT_EQ(Files(dir.path()), before);  // staged files of part 0 gone too
}

TEST(StagedWriteTest, AShardFailingVerificationCommitsNothingAndIsNamed) {
  testing::ScratchDir dir;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 10, testing::SmallPages(1)).ok());
  const auto before = Files(dir.path());
  auto staged = StagedWrite::Begin(dir.path(), "train", 2, NoSync());
  ASSERT_TRUE(staged.ok());
  const std::string token = (*staged)->token();
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 2, 0, 30, {}).ok());
  ASSERT_TRUE(WritePart(dir.path(), token, 1, 2, 30, 60, {}).ok());
  // One byte of part 1's shard footer changes: its checksum in the trailer fails.
  const std::string shard = dir.path() + "/" + format::StagedShardFileName("train", token, 1, 0);
  std::string bytes;
  ASSERT_TRUE(io::ReadFile(shard, 1 << 30, &bytes).ok());
  bytes[bytes.size() - 100] ^= 0x5a;
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << bytes;
  Status committed = (*staged)->Commit();
  EXPECT_EQ(committed.code(), StatusCode::kCorruption) << committed.ToString();
  EXPECT_NE(committed.message().find("part 1 shard 0"), std::string::npos) << committed.message();
  EXPECT_NE(committed.message().find("fails verification"), std::string::npos) << committed.message();
  staged->reset();
  EXPECT_EQ(Files(dir.path()), before);
}

TEST(StagedWriteTest, PartsWithDifferentSchemasOrMetadataAreRefused) {
  testing::ScratchDir dir;
  auto staged = StagedWrite::Begin(dir.path(), "train", 2, NoSync());
  ASSERT_TRUE(staged.ok());
  const std::string token = (*staged)->token();
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 2, 0, 30, {}).ok());
  auto other = PartWriter::Create(dir.path(), "train", token, 1, 2, testing::SampleSchema(), PartOptions());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->SetMetadata("classes", "x\ny").ok());
  ASSERT_TRUE((*other)->Finish().ok());
  Status committed = (*staged)->Commit();
  EXPECT_EQ(committed.code(), StatusCode::kInvalidArgument) << committed.ToString();
  EXPECT_NE(committed.message().find("part 1 shard 0"), std::string::npos) << committed.message();
  EXPECT_NE(committed.message().find("metadata"), std::string::npos) << committed.message();
  EXPECT_FALSE(io::PathExists(dir.path() + "/train.uset"));
}

TEST(StagedWriteTest, ASecondRunIsRefusedWhileTheFirstHoldsTheLockAndStaleStagedFilesAreIgnored) {
  testing::ScratchDir dir;
  std::string stale_token;
  {
    auto first = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
    ASSERT_TRUE(first.ok());
    auto second = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("being written by another writer"), std::string::npos);
    stale_token = (*first)->token();
  }  // dropped without Commit, as a killed driver
  auto staged = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
  ASSERT_TRUE(staged.ok());
  EXPECT_NE((*staged)->token(), stale_token);
  // A late task of the abandoned run (a Dask task runs on after its driver
  // is gone) finishes its part now: refused, and it leaves nothing behind.
  const Status late = WritePart(dir.path(), stale_token, 0, 1, 0, 10, {});
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition) << late.ToString();
  EXPECT_NE(late.message().find("staged write " + stale_token + " of dataset 'train'"), std::string::npos) << late.ToString();
  EXPECT_NE(late.message().find("is over"), std::string::npos) << late.ToString();
  for (const auto& [name, bytes] : Files(dir.path())) EXPECT_EQ(name.find(stale_token), std::string::npos) << name;
  Status committed = (*staged)->Commit();
  EXPECT_EQ(committed.code(), StatusCode::kFailedPrecondition) << committed.ToString();
  // A killed driver leaves its run's files, this one included: the next
  // writer removes them.
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 5, testing::SmallPages(1)).ok());
  for (const auto& [name, bytes] : Files(dir.path())) EXPECT_EQ(name.find(stale_token), std::string::npos) << name;
}

TEST(StagedWriteTest, APartStagesOnlyWhileItsStagedWriteIsUnderWay) {
  testing::ScratchDir dir;
  auto staged = StagedWrite::Begin(dir.path(), "train", 2, NoSync());
  ASSERT_TRUE(staged.ok());
  const std::string token = (*staged)->token();
  EXPECT_TRUE(dataset::StagedWriteUnderWay(dir.path(), "train", token));
  EXPECT_FALSE(dataset::StagedWriteUnderWay(dir.path(), "train", token + "1"));
  // Part 0 in time; then the run fails (its driver gives up: the
  // StagedWrite goes without a Commit, removing what was staged) and part 1
  // writes all its files after that cleanup (a task that ran on).
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 2, 0, 30, {}).ok());
  staged->reset();
  EXPECT_FALSE(dataset::StagedWriteUnderWay(dir.path(), "train", token));
  auto late = PartWriter::Create(dir.path(), "train", token, 1, 2, testing::SampleSchema(), PartOptions());
  ASSERT_TRUE(late.ok());
  RecordBuilder record((*late)->schema());
  const testing::SampleValues values = testing::SampleRecord(30);
  ASSERT_TRUE(testing::FillSample(record, values).ok());
  ASSERT_TRUE((*late)->Write(record).ok());
  const Status finished = (*late)->Finish();
  EXPECT_EQ(finished.code(), StatusCode::kFailedPrecondition) << finished.ToString();
  late->reset();
  EXPECT_EQ(Files(dir.path()).size(), 0u);  // the lock file goes with its holder
  // A committed run is over too.
  auto again = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(WritePart(dir.path(), (*again)->token(), 0, 1, 0, 10, {}).ok());
  ASSERT_TRUE((*again)->Commit().ok());
  EXPECT_EQ(WritePart(dir.path(), (*again)->token(), 0, 1, 0, 10, {}).code(), StatusCode::kFailedPrecondition);
}

TEST(StagedWriteTest, AKilledDriversRunIsUnderWayUntilTheNextWriterTakesTheLock) {
  testing::ScratchDir dir;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a driver killed right after Begin: no destructor runs
    auto staged = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
    const std::string token = staged.ok() ? (*staged)->token() : "";
    (void)!::write(pipe_fds[1], token.data(), token.size());
    ::raise(SIGKILL);
  }
  ::close(pipe_fds[1]);
  char buffer[64] = {};
  const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_GT(n, 0);
  const std::string token(buffer, static_cast<size_t>(n));
  // Its tasks still stage (their files are the next writer's to remove) ...
  EXPECT_TRUE(dataset::StagedWriteUnderWay(dir.path(), "train", token));
  ASSERT_TRUE(WritePart(dir.path(), token, 0, 1, 0, 10, {}).ok());
  // ... until the next writer takes the lock and cleans up.
  auto next = StagedWrite::Begin(dir.path(), "train", 1, NoSync());
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(dataset::StagedWriteUnderWay(dir.path(), "train", token));
  EXPECT_EQ(WritePart(dir.path(), token, 0, 1, 10, 20, {}).code(), StatusCode::kFailedPrecondition);
  for (const auto& [name, bytes] : Files(dir.path())) EXPECT_EQ(name.find(token), std::string::npos) << name;
}

TEST(StagedWriteTest, PartWriterRefusesBadArguments) {
  testing::ScratchDir dir;
  const Schema schema = testing::SampleSchema();
  EXPECT_EQ(PartWriter::Create(dir.path(), "train", "12a", 0, 1, schema).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PartWriter::Create(dir.path(), "train", "12", 2, 2, schema).status().code(), StatusCode::kInvalidArgument);
  WriterOptions round_robin;
  round_robin.num_shards = 2;
  EXPECT_EQ(PartWriter::Create(dir.path(), "train", "12", 0, 1, schema, round_robin).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PartWriter::Create(dir.path() + "/missing", "train", "12", 0, 1, schema).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(StagedWrite::Begin(dir.path(), "train", 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace unirecord

namespace unirecord {
namespace {

// A one-part dataset of records [begin, end) with a cut at each of `cuts`.
void WriteDataset(const std::string& dir, uint64_t begin, uint64_t end, const std::vector<uint64_t>& cuts) {
  auto staged = StagedWrite::Begin(dir, "train", 1, NoSync());
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  ASSERT_TRUE(WritePart(dir, (*staged)->token(), 0, 1, begin, end, cuts).ok());
  ASSERT_TRUE((*staged)->Commit().ok());
}

// Every record of `dataset` is SampleRecord(first + id): its image, path and big value.
void ExpectSampleRecords(const Dataset& dataset, uint64_t first, uint64_t count) {
  ASSERT_EQ(dataset.size(), count);
  for (uint64_t id = 0; id < count; ++id) {
    auto record = dataset.Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    const testing::SampleValues values = testing::SampleRecord(first + id);
    EXPECT_EQ(*record->GetBytes("image"), values.image) << id;
    EXPECT_EQ(*record->GetString("path"), values.path) << id;
    EXPECT_EQ(*record->GetInt64("big"), values.big) << id;
  }
}

// The inode of `path`: a hard link shares it.
ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(MergeTest, MergedDatasetsKeepTheirInputsShardsAndMismatchesAreRefused) {
  testing::ScratchDir a, b, merged, other;
  WriteDataset(a.path(), 0, 40, {20});
  WriteDataset(b.path(), 40, 60, {});
  auto summary = MergeDatasets(merged.path(), "train", {a.path(), b.path()}, NoSync());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->records, 60u);
  EXPECT_EQ(summary->shards, 3u);
  EXPECT_EQ(summary->bytes_written, 0u);  // hard links: nothing rewritten
  auto dataset = Dataset::Open(merged.path());
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ExpectSampleRecords(**dataset, 0, 60);
  ASSERT_EQ((*dataset)->segments().size(), 2u);
  EXPECT_EQ((*dataset)->segments()[1].first_id, 40u);
  auto input_a = Dataset::Open(a.path());
  ASSERT_TRUE(input_a.ok());
  EXPECT_EQ((*dataset)->segments()[0].uuid, (*input_a)->uuid());
  for (uint32_t s = 0; s < 2; ++s) {
    EXPECT_EQ(Inode((*dataset)->shards()[s].path), Inode((*input_a)->shards()[s].path));
    EXPECT_EQ(Inode((*dataset)->shards()[s].index_path), Inode((*input_a)->shards()[s].index_path));
  }
  EXPECT_TRUE((*dataset)->Verify().ok());
  const auto inputs = Files(a.path());

  // Another class list: refused, naming the input and the key; nothing committed.
  auto writer = Writer::Create(other.path(), "train", testing::SampleSchema(), PartOptions());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->SetMetadata("classes", "x\ny").ok());
  ASSERT_TRUE((*writer)->SetMetadata("source", "train").ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  const auto before = Files(merged.path());
  auto refused = MergeDatasets(merged.path(), "train", {a.path(), other.path()}, NoSync());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("input 1 (" + other.path() + ")"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("metadata 'classes'"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(Files(merged.path()) == before);
  EXPECT_TRUE(Files(a.path()) == inputs);  // inputs are linked, never changed

  // Merged into itself (its own files stay in place) and then with b again.
  auto again = MergeDatasets(merged.path(), "train", {merged.path(), b.path()}, NoSync());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto twice = Dataset::Open(merged.path());
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  EXPECT_EQ((*twice)->size(), 80u);
  EXPECT_EQ((*twice)->segments().size(), 3u);
  for (uint32_t s = 0; s < 3; ++s) EXPECT_EQ((*twice)->shards()[s].path, (*dataset)->shards()[s].path);
}

}  // namespace
}  // namespace unirecord

namespace unirecord {
namespace {

TEST(AppendTest, AWriterAppendsASegmentWithoutCopyingTheOldShards) {
  testing::ScratchDir dir;
  WriterOptions first = testing::SmallPages(2);
  first.expected_records = 30;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 30, first).ok());
  auto old = Dataset::Open(dir.path());
  ASSERT_TRUE(old.ok());
  const auto old_files = Files(dir.path());
  std::vector<ino_t> old_inodes;
  for (const ShardInfo& shard : (*old)->shards()) old_inodes.push_back(Inode(shard.path));

  WriterOptions options = PartOptions();
  options.append = true;
  auto writer = Writer::Create(dir.path(), "train", testing::SampleSchema(), options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto second = Writer::Create(dir.path(), "train", testing::SampleSchema(), options);
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);  // appenders take turns
  ASSERT_TRUE((*writer)->SetMetadata("classes", "a\nb\nc\nd\ne").ok());
  ASSERT_TRUE((*writer)->SetMetadata("source", "train").ok());
  RecordBuilder record((*writer)->schema());
  for (uint64_t k = 30; k < 60; ++k) {
    const testing::SampleValues values = testing::SampleRecord(k);
    ASSERT_TRUE(testing::FillSample(record, values).ok());
    ASSERT_TRUE((*writer)->Write(record).ok());
  }
  Status finished = (*writer)->Finish();
  ASSERT_TRUE(finished.ok()) << finished.ToString();
  const WriterSummary& summary = (*writer)->summary();
  EXPECT_EQ(summary.records, 60u);
  EXPECT_EQ(summary.generation, 2u);
  EXPECT_EQ(summary.shards, 3u);
  EXPECT_LT(summary.bytes_written, summary.bytes);  // only the new segment

  auto appended = Dataset::Open(dir.path());
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  ExpectSampleRecords(**appended, 0, 60);
  ASSERT_EQ((*appended)->segments().size(), 2u);
  EXPECT_EQ((*appended)->segments()[0].uuid, (*old)->uuid());
  EXPECT_EQ((*appended)->segments()[1].first_id, 30u);
  for (size_t s = 0; s < old_inodes.size(); ++s) EXPECT_EQ(Inode((*appended)->shards()[s].path), old_inodes[s]);
  const auto new_files = Files(dir.path());
  for (const auto& [name, bytes] : old_files) {  // no old shard or index changed
    if (name.find(".urec") != std::string::npos || name.find(".uidx") != std::string::npos) {
      EXPECT_TRUE(new_files.at(name) == bytes) << name;
    }
  }
  EXPECT_TRUE((*old)->Verify().ok());  // the old version, open before, still reads
  EXPECT_EQ((*old)->size(), 30u);
  DatasetOptions version1;
  version1.version = 1;
  auto kept = Dataset::Open(dir.path(), version1);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  ExpectSampleRecords(**kept, 0, 30);

  // Another class list: nothing committed.
  auto odd = Writer::Create(dir.path(), "train", testing::SampleSchema(), options);
  ASSERT_TRUE(odd.ok());
  ASSERT_TRUE((*odd)->SetMetadata("classes", "x").ok());
  Status refused = (*odd)->Finish();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("metadata 'classes'"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("append to " + dir.path() + "/train"), std::string::npos) << refused.message();
  auto now = Dataset::Open(dir.path());
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)->size(), 60u);
}

}  // namespace
}  // namespace unirecord
