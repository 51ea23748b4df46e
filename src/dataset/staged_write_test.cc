// StagedWrite + PartWriter (staged_write.h): parts written in any order, by any
// attempt, commit to the bytes a Writer gives the same records; anything
// missing, damaged or mismatched commits nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dataset/commit.h"
#include "dataset/test_util.h"
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

TEST(MergeTest, MergedDatasetsEqualOneWrittenWholeAndMismatchesAreRefused) {
  testing::ScratchDir a, b, whole, merged, other;
  WriteDataset(a.path(), 0, 40, {20});
  WriteDataset(b.path(), 40, 60, {});
  {
    auto staged = StagedWrite::Begin(whole.path(), "train", 2, NoSync());
    ASSERT_TRUE(staged.ok());
    ASSERT_TRUE(WritePart(whole.path(), (*staged)->token(), 0, 2, 0, 40, {20}).ok());
    ASSERT_TRUE(WritePart(whole.path(), (*staged)->token(), 1, 2, 40, 60, {}).ok());
    ASSERT_TRUE((*staged)->Commit().ok());
  }
  auto summary = MergeDatasets(merged.path(), "train", {a.path(), b.path()}, NoSync());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->records, 60u);
  EXPECT_EQ(summary->shards, 3u);
  EXPECT_TRUE(Files(merged.path()) == Files(whole.path()));
  const auto inputs = Files(a.path());

  // Another class list: refused, naming the key; nothing committed.
  auto writer = Writer::Create(other.path(), "train", testing::SampleSchema(), PartOptions());
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->SetMetadata("classes", "x\ny").ok());
  ASSERT_TRUE((*writer)->SetMetadata("source", "train").ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  const auto before = Files(merged.path());
  auto refused = MergeDatasets(merged.path(), "train", {a.path(), other.path()}, NoSync());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("part 1 shard 0"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("metadata 'classes'"), std::string::npos) << refused.status().message();
  EXPECT_TRUE(Files(merged.path()) == before);
  EXPECT_TRUE(Files(a.path()) == inputs);  // inputs are copied, never changed
}

}  // namespace
}  // namespace unirecord

namespace unirecord {
namespace {

// The shard and index files' bytes, in name order (generations aside).
std::vector<std::string> ShardBytes(const std::string& dir) {
  std::vector<std::string> bytes;
  for (const auto& [name, data] : Files(dir)) {
    if (name.find(".urec") != std::string::npos || name.find(".uidx") != std::string::npos) bytes.push_back(data);
  }
  return bytes;
}

TEST(AppendTest, AWriterAppendsANewGenerationWhoseIdsContinue) {
  testing::ScratchDir dir, reference;
  WriterOptions first = testing::SmallPages(2);
  first.expected_records = 30;
  ASSERT_TRUE(testing::WriteSample(dir.path(), "train", 30, first).ok());
  auto old = Dataset::Open(dir.path());
  ASSERT_TRUE(old.ok());

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
  EXPECT_EQ((*writer)->summary().records, 60u);
  EXPECT_EQ((*writer)->summary().generation, 2u);

  // The same as the 60 records written as two parts, cut where they were.
  auto staged = StagedWrite::Begin(reference.path(), "train", 2, NoSync());
  ASSERT_TRUE(staged.ok());
  ASSERT_TRUE(WritePart(reference.path(), (*staged)->token(), 0, 2, 0, 30, {15}).ok());
  ASSERT_TRUE(WritePart(reference.path(), (*staged)->token(), 1, 2, 30, 60, {}).ok());
  ASSERT_TRUE((*staged)->Commit().ok());
  EXPECT_TRUE(ShardBytes(dir.path()) == ShardBytes(reference.path()));
  EXPECT_TRUE((*old)->Verify().ok());  // the old generation, open before, still reads
  EXPECT_EQ((*old)->size(), 30u);

  // Another class list: nothing committed.
  auto odd = Writer::Create(dir.path(), "train", testing::SampleSchema(), options);
  ASSERT_TRUE(odd.ok());
  ASSERT_TRUE((*odd)->SetMetadata("classes", "x").ok());
  Status refused = (*odd)->Finish();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("metadata 'classes'"), std::string::npos) << refused.message();
  auto now = Dataset::Open(dir.path());
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)->size(), 60u);
}

}  // namespace
}  // namespace unirecord
