// A re-conversion killed at any step (issue 12): the folder must then open as
// exactly the old dataset or exactly the new one, with the rejects report of
// the same conversion, every earlier version must still open as it was
// (format/SPEC.md section 1.3), and the next run must leave nothing else
// behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "convert/synthetic_images.h"
#include "format/manifest.h"
#include "format/file_names.h"
#include "io/fault_injection.h"
#include "unirecord/convert.h"
#include "unirecord/dataset.h"
#include "unirecord/staged_write.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using testing::CrashAtStep;

const std::string kName = "train";

// What a reader gets from a folder: every record's fields and the rejects
// report of the committed generation.
struct Snapshot {
  std::string uuid;
  std::vector<std::string> records;
  std::string rejects;
  bool operator==(const Snapshot& o) const { return uuid == o.uuid && records == o.records && rejects == o.rejects; }
};

// `version` 0: the latest.
Result<Snapshot> Read(const std::string& dir, uint64_t version = 0) {
  DatasetOptions options;
  options.version = version;
  UREC_ASSIGN_OR_RETURN(auto dataset, Dataset::Open(dir, options));
  Snapshot snapshot;
  snapshot.uuid = dataset->uuid();
  for (uint64_t id = 0; id < dataset->size(); ++id) {
    UREC_ASSIGN_OR_RETURN(Record r, dataset->Get(id));
    snapshot.records.push_back(std::string(*r.GetBytes("image")) + "|" + std::to_string(*r.GetInt64("label")) + "|" +
                               std::string(*r.GetString("path")) + "|" + std::to_string(*r.GetInt32("width")) + "x" +
                               std::to_string(*r.GetInt32("height")));
  }
  const uint64_t generation = dataset->version();
  snapshot.rejects = testing::ReadBytes(io::JoinPath(dir, format::ReportFileName(kName, generation, "rejects")));
  if (snapshot.rejects.empty()) return Status::NotFound("no rejects report for generation " + std::to_string(generation));
  return snapshot;
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

// After a successful run: the manifest and the files of the kept versions
// (each one's kept manifest, its segments' shards and indexes, its report),
// nothing else.
void ExpectOnlyTheKeptVersions(const std::string& dir) {
  auto manifest = format::ReadManifest(dir, kName);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  std::vector<format::Manifest> versions = {*manifest};
  for (const std::string& file : Listing(dir)) {
    const format::FileOfDataset of = format::ClassifyFile(file, kName);
    if (of.role != format::FileRole::kVersion) continue;
    auto kept = format::ReadVersionManifest(dir, kName, of.generation);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    versions.push_back(*kept);
  }
  std::set<std::string> expected = {format::ManifestFileName(kName)};
  for (const format::Manifest& version : versions) {
    expected.insert(format::VersionFileName(kName, version.generation));
    expected.insert(format::ReportFileName(kName, version.generation, "rejects"));
    for (const format::Segment& segment : version.segments) {
      for (uint32_t s = 0; s < segment.shard_count; ++s) {
        expected.insert(format::ShardFileName(kName, segment.generation, s, segment.shard_count));
        expected.insert(format::IndexPathFor(format::ShardFileName(kName, segment.generation, s, segment.shard_count)));
      }
    }
  }
  EXPECT_EQ(Listing(dir), expected);
}

// Turns a folder written today into the layout of the writers before
// manifests (the same bytes under generation 0's names, no manifest).
void MakePreManifestLayout(const std::string& dir, uint32_t shards) {
  auto manifest = format::ReadManifest(dir, kName);
  ASSERT_TRUE(manifest.ok());
  for (uint32_t s = 0; s < shards; ++s) {
    const std::string now = io::JoinPath(dir, format::ShardFileName(kName, manifest->generation, s, shards));
    const std::string then = io::JoinPath(dir, format::ShardFileName(kName, 0, s, shards));
    fs::rename(now, then);
    fs::rename(format::IndexPathFor(now), format::IndexPathFor(then));
  }
  fs::rename(io::JoinPath(dir, format::ReportFileName(kName, manifest->generation, "rejects")),
             io::JoinPath(dir, format::ReportFileName(kName, 0, "rejects")));
  fs::remove(io::JoinPath(dir, format::ManifestFileName(kName)));
  fs::remove(io::JoinPath(dir, format::VersionFileName(kName, manifest->generation)));
}

enum class Layout { kManifest, kPreManifest };

class ReconvertCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticFolderOptions synth;
    synth.classes = 2;
    synth.per_class = 3;
    synth.width = 48;
    synth.height = 32;
    synth.mix = true;  // rejects too
    synth.seed = 1;
    ASSERT_TRUE(WriteSyntheticImageFolder(old_src_, synth).ok());
    synth.per_class = 2;
    synth.mix = false;
    ASSERT_TRUE(WriteSyntheticImageFolder(append_src_, synth).ok());  // the old folder's classes
    synth.classes = 3;
    synth.per_class = 3;
    synth.mix = true;
    synth.seed = 2;
    ASSERT_TRUE(WriteSyntheticImageFolder(new_src_, synth).ok());
  }

  // The run under test: re-converting new_src_, or appending append_src_.
  Result<ConvertReport> ConvertNew(bool sync) {
    ConvertOptions options = Options(new_shards_, sync);
    options.append = append_;
    return ConvertImageFolder(append_ ? append_src_ : new_src_, work_, options);
  }

  static ConvertOptions Options(uint32_t shards, bool sync) {
    ConvertOptions options;
    options.name = kName;
    options.num_shards = shards;
    options.threads = 2;
    options.sync = sync;
    return options;
  }

  // A folder holding the old dataset (2 shards) in `layout`, and the dataset
  // the re-conversion into `new_shards` writes.
  void Prepare(Layout layout, uint32_t new_shards) {
    new_shards_ = new_shards;
    fs::remove_all(base_);
    ASSERT_TRUE(ConvertImageFolder(old_src_, base_, Options(2, false)).ok());
    if (layout == Layout::kPreManifest) MakePreManifestLayout(base_, 2);
    old_version_ = layout == Layout::kPreManifest ? 0 : 1;
    auto old_snapshot = Read(base_);
    ASSERT_TRUE(old_snapshot.ok()) << old_snapshot.status().ToString();
    old_ = *old_snapshot;
    const std::string reference = scratch_ / "reference";
    fs::remove_all(reference);
    if (append_) {
      fs::copy(base_, reference, fs::copy_options::recursive);
      ConvertOptions options = Options(new_shards, false);
      options.append = true;
      ASSERT_TRUE(ConvertImageFolder(append_src_, reference, options).ok());
    } else {
      ASSERT_TRUE(ConvertImageFolder(new_src_, reference, Options(new_shards, false)).ok());
    }
    auto new_snapshot = Read(reference);
    ASSERT_TRUE(new_snapshot.ok());
    new_ = *new_snapshot;
    ASSERT_FALSE(old_ == new_);
  }

  std::string FreshCopy() {
    fs::remove_all(work_);
    fs::copy(base_, work_, fs::copy_options::recursive);
    return work_;
  }

  // The steps of an uninterrupted re-conversion, one line each.
  std::vector<std::string> CountSteps() {
    FreshCopy();
    CrashAtStep counter(CrashAtStep::Mode::kCountOnly, 0);
    EXPECT_TRUE(ConvertNew(true).ok());
    return counter.log();
  }

  // The re-conversion stopped at `step`; then the checks, then a clean run.
  void CrashAt(int64_t step, CrashAtStep::Mode mode, const std::string& what) {
    SCOPED_TRACE("stopped at step " + std::to_string(step) + ": " + what);
    FreshCopy();
    if (mode == CrashAtStep::Mode::kSigkillAtStep) {
      const pid_t child = ::fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        CrashAtStep crash(mode, step);
        _exit(ConvertNew(true).ok() ? 0 : 3);
      }
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    } else {
      // Stopped after the commit (a failed unlink of the old generation), it
      // may still succeed: the checks below hold either way.
      CrashAtStep crash(mode, step);
      (void)ConvertNew(true);
    }
    auto seen = Read(work_);
    ASSERT_TRUE(seen.ok()) << seen.status().ToString();
    EXPECT_TRUE(*seen == old_ || *seen == new_) << "a mix of the old and new dataset";
    ExpectTheOldVersionIntact();
    if (!append_ || *seen == old_) {
      auto rerun = ConvertNew(false);
      ASSERT_TRUE(rerun.ok()) << rerun.status().ToString();
    } else {  // an append that committed is not run again: the next writer only cleans up
      auto next = StagedWrite::Begin(work_, kName, 1);
      ASSERT_TRUE(next.ok()) << next.status().ToString();
    }
    seen = Read(work_);
    ASSERT_TRUE(seen.ok()) << seen.status().ToString();
    EXPECT_TRUE(*seen == new_);
    ExpectTheOldVersionIntact();
    ExpectOnlyTheKeptVersions(work_);
  }

  // The version before the run (a layout before manifests keeps none).
  void ExpectTheOldVersionIntact() {
    if (old_version_ == 0) return;
    auto kept = Read(work_, old_version_);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_TRUE(*kept == old_) << "version " << old_version_ << " changed";
  }

  void CrashAtEveryStep(Layout layout, uint32_t new_shards, CrashAtStep::Mode mode) {
    Prepare(layout, new_shards);
    const std::vector<std::string> steps = CountSteps();
    for (const char* kind : {"create ", "write ", "fsync ", "rename ", "unlink ", "lock "}) {
      EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [&](const std::string& s) { return s.rfind(kind, 0) == 0; }))
          << "no " << kind << "step";
    }
    for (size_t step = 0; step < steps.size() && !HasFatalFailure(); ++step) {
      CrashAt(static_cast<int64_t>(step), mode, steps[step]);
    }
  }

  testing::ScratchDir scratch_;
  const std::string old_src_ = scratch_ / "old_src";
  const std::string new_src_ = scratch_ / "new_src";
  const std::string append_src_ = scratch_ / "append_src";
  bool append_ = false;
  const std::string base_ = scratch_ / "base";
  const std::string work_ = scratch_ / "work";
  uint32_t new_shards_ = 0;
  uint64_t old_version_ = 0;
  Snapshot old_, new_;
};

TEST_F(ReconvertCrashTest, SameShardCountStoppedAtEveryStep) {
  CrashAtEveryStep(Layout::kManifest, 2, CrashAtStep::Mode::kFailFromStep);
}

TEST_F(ReconvertCrashTest, FewerShardsStoppedAtEveryStep) {
  CrashAtEveryStep(Layout::kManifest, 1, CrashAtStep::Mode::kFailFromStep);
}

TEST_F(ReconvertCrashTest, MoreShardsStoppedAtEveryStep) {
  CrashAtEveryStep(Layout::kManifest, 3, CrashAtStep::Mode::kFailFromStep);
}

TEST_F(ReconvertCrashTest, PreManifestDatasetsStoppedAtEveryStep) {
  for (uint32_t shards : {1u, 2u, 3u}) {
    SCOPED_TRACE(std::to_string(shards) + " new shards");
    CrashAtEveryStep(Layout::kPreManifest, shards, CrashAtStep::Mode::kFailFromStep);
  }
}

// The in-process model checked against real kills: a forked child SIGKILLed
// at each step (no destructor, no error path runs).
// Appending (a new segment after the old one's, which stays in place):
// stopped or killed at every step, the folder holds the old dataset or the
// appended one, the old version is intact, and the next writer leaves only
// the kept versions' files.
TEST_F(ReconvertCrashTest, AppendStoppedOrKilledAtEveryStep) {
  append_ = true;
  CrashAtEveryStep(Layout::kManifest, 1, CrashAtStep::Mode::kFailFromStep);
  CrashAtEveryStep(Layout::kManifest, 1, CrashAtStep::Mode::kSigkillAtStep);
}

TEST_F(ReconvertCrashTest, KilledProcessAtEveryStep) {
  CrashAtEveryStep(Layout::kManifest, 3, CrashAtStep::Mode::kSigkillAtStep);
  CrashAtEveryStep(Layout::kPreManifest, 1, CrashAtStep::Mode::kSigkillAtStep);
}

// Issue 12 item 3: killed runs used to leave their temporaries for good.
TEST_F(ReconvertCrashTest, ThreeKilledRunsAndOneRerunLeaveNothingBehind) {
  Prepare(Layout::kManifest, 2);
  FreshCopy();
  // What writers before manifests left when killed.
  testing::WriteBytes(work_ + "/.train-0.99999.urec.partial", std::string(5000, 'x'));
  testing::WriteBytes(work_ + "/train.rejects.tsv.partial", "path\treason\n");
  for (int run = 0; run < 3; ++run) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // killed at its first rename: every temporary is written by then
      io::SetFaultHook([](io::FileOp op, const std::string&) {
        if (op == io::FileOp::kRename) ::raise(SIGKILL);
        return Status::OK();
      });
      _exit(ConvertImageFolder(new_src_, work_, Options(2, true)).ok() ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    const std::set<std::string> left = Listing(work_);
    const size_t partial = std::count_if(left.begin(), left.end(), [](const std::string& n) {
      return n.find(".tmp-") != std::string::npos;
    });
    // The part's shards and indexes (the rejects report comes at the commit,
    // after the part's renames).
    EXPECT_EQ(partial, 2u * 2) << "one killed run's temporaries (shards, indexes), not more";
    auto seen = Read(work_);
    ASSERT_TRUE(seen.ok());
    EXPECT_TRUE(*seen == old_);
  }
  ASSERT_TRUE(ConvertImageFolder(new_src_, work_, Options(2, false)).ok());
  ExpectOnlyTheKeptVersions(work_);
}

}  // namespace
}  // namespace unirecord
