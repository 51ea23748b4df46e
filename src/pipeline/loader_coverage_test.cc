// Loader::coverage(): the digests of real loaders (ranks stepping in
// lockstep) check exactly across drop_last, padding, subsets, mixtures, exact
// and elastic resume, and fail, naming the records, when a run repeats or
// skips some. The packing loader's are in packed_loader_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "pipeline/loader_testing.h"
#include "unirecord/coverage.h"
#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

constexpr int kNumbers = 53;

// kNumbers records of one int64 field "x" (no image), in three shards.
std::string WriteNumbers(const std::string& name, int count = kNumbers) {
  const std::string dir = testing::MakeTempDir() + "/" + name;
  const Schema schema = Schema::Make({Field::Int64("x")}).value();
  WriterOptions options;
  options.sync = false;
  options.num_shards = 3;
  options.expected_records = static_cast<uint64_t>(count);
  std::unique_ptr<Writer> writer = Writer::Create(dir, name, schema, options).value();
  RecordBuilder record(schema);
  for (int i = 0; i < count; ++i) {
    record.Clear();
    EXPECT_TRUE(record.SetInt64(0, i).ok());
    EXPECT_TRUE(writer->Write(record).ok());
  }
  EXPECT_TRUE(writer->Finish().ok());
  return dir;
}

const std::string& NumbersDir() {
  static const std::string dir = WriteNumbers("numbers");
  return dir;
}

LoaderOptions NumberOptions() {
  LoaderOptions o;
  o.batch_size = 4;
  o.threads = 2;
  o.image_field.clear();
  o.fields = {"x"};
  o.sampler.seed = 7;
  o.coverage = CoverageDetail::kIds;
  return o;
}

std::vector<std::unique_ptr<Loader>> Ranks(LoaderOptions o, uint32_t ranks,
                                           const std::vector<std::string>& dirs = {NumbersDir()}) {
  std::vector<std::unique_ptr<Loader>> out;
  o.sampler.num_shards = ranks;
  for (uint32_t r = 0; r < ranks; ++r) {
    o.sampler.shard_id = r;
    std::vector<std::shared_ptr<const Dataset>> datasets;
    for (const std::string& dir : dirs) datasets.push_back(*Dataset::Open(dir));
    Result<std::unique_ptr<Loader>> loader = Loader::Create(datasets, o);
    EXPECT_TRUE(loader.ok()) << loader.status().ToString();
    out.push_back(std::move(loader).value());
  }
  return out;
}

// `batches` data-parallel steps (every rank one batch; 0: to the epoch's
// end); the ids each delivered, counted.
void Step(std::vector<std::unique_ptr<Loader>>& ranks, size_t batches, std::map<uint64_t, int>* seen) {
  for (size_t b = 0; batches == 0 || b < batches; ++b) {
    bool any = false;
    for (auto& loader : ranks) {
      Result<Batch> batch = loader->Next();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      for (size_t i = 0; i < batch->size(); ++i) ++(*seen)[batch->record_ids()[i]];
      any = any || !batch->empty();
    }
    if (!any) return;
  }
}

// Every rank's digest, through its bytes (as ranks gather them).
std::vector<CoverageDigest> Digests(const std::vector<std::unique_ptr<Loader>>& ranks) {
  std::vector<CoverageDigest> out;
  for (const auto& loader : ranks) out.push_back(*CoverageDigest::Parse(loader->coverage().Serialize()));
  return out;
}

CoverageCheck Check(const std::vector<CoverageDigest>& digests) {
  Result<CoverageCheck> check = CheckCoverage(digests);
  EXPECT_TRUE(check.ok()) << check.status().ToString();
  return check.ok() ? *check : CoverageCheck{};
}

TEST(LoaderCoverageTest, EveryRankOfAnEpochChecksExactly) {
  for (uint32_t ranks : {1, 3, 4}) {
    for (bool drop_last : {false, true}) {
      for (bool sampler_drop_last : {false, true}) {
        for (CoverageDetail detail : {CoverageDetail::kDigest, CoverageDetail::kIds}) {
          SCOPED_TRACE(std::to_string(ranks) + " ranks, drop_last " + std::to_string(drop_last) + "/" +
                       std::to_string(sampler_drop_last));
          LoaderOptions o = NumberOptions();
          o.drop_last = drop_last;
          o.sampler.drop_last = sampler_drop_last;
          o.coverage = detail;
          auto loaders = Ranks(o, ranks);
          for (auto& loader : loaders) loader->SetEpoch(2);
          std::map<uint64_t, int> seen;
          Step(loaders, 0, &seen);
          const std::vector<CoverageDigest> digests = Digests(loaders);
          const CoverageCheck check = Check(digests);
          EXPECT_TRUE(check.ok) << check.message;
          EXPECT_TRUE(std::all_of(digests.begin(), digests.end(), [](const CoverageDigest& d) { return d.complete; }));
          uint64_t delivered = 0;
          for (const auto& [id, count] : seen) delivered += count;
          EXPECT_EQ(check.deliveries, delivered);
          EXPECT_EQ(check.records, uint64_t{kNumbers});
          EXPECT_EQ(check.deliveries - check.padding + check.dropped, uint64_t{kNumbers});
          if (!drop_last && !sampler_drop_last) {
            EXPECT_EQ(check.padding, (kNumbers + ranks - 1) / ranks * ranks - kNumbers);
          }
          if (detail == CoverageDetail::kIds) {
            std::vector<uint64_t> ids;
            for (const auto& [id, count] : seen) ids.insert(ids.end(), count, id);
            IdBitmap all;
            for (const CoverageDigest& d : digests) ASSERT_TRUE(all.Add(*d.delivered.ids));
            EXPECT_EQ(all.Ids(), ids);  // the bitmaps hold exactly the batches' ids
          }
        }
      }
    }
  }
}

TEST(LoaderCoverageTest, AnUnfinishedEpochAndAMissingRankAreReported) {
  auto loaders = Ranks(NumberOptions(), 2);
  std::map<uint64_t, int> seen;
  Step(loaders, 3, &seen);
  CoverageCheck check = Check(Digests(loaders));
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.missing, uint64_t{kNumbers} - 24);
  EXPECT_EQ(check.unfinished, (std::vector<uint32_t>{0, 1}));
  EXPECT_NE(check.message.find("not at its end"), std::string::npos) << check.message;
  Step(loaders, 0, &seen);
  check = Check({loaders[0]->coverage()});
  EXPECT_FALSE(check.ok);
  const CoverageDigest rank1 = loaders[1]->coverage();  // its padding repeats a record of rank 0's
  EXPECT_EQ(check.missing_ids, IdBitmap::Excess(*rank1.delivered.ids, *rank1.padding.ids).Ids());
  // A new epoch starts a new digest; the old one was the whole epoch.
  EXPECT_TRUE(Check(Digests(loaders)).ok);
  loaders[0]->SetEpoch(1);
  EXPECT_EQ(loaders[0]->coverage().delivered.digest.count, 0u);
  EXPECT_EQ(loaders[0]->ResumeCoverage(CoverageDigest{}).code(), StatusCode::kFailedPrecondition);
}

// A run of `ranks` stopped after `stop` steps: the state (any rank's) and
// every rank's digest at that point.
struct Stopped {
  SamplerState state;
  std::vector<CoverageDigest> digests;
};

Stopped StopAfter(const LoaderOptions& o, uint32_t ranks, size_t stop, std::map<uint64_t, int>* seen) {
  auto loaders = Ranks(o, ranks);
  for (auto& loader : loaders) loader->SetEpoch(1);
  Step(loaders, stop, seen);
  return {*SamplerState::Parse(loaders[ranks - 1]->state().Serialize()), Digests(loaders)};
}

// A run of `ranks` restored at `state`, each carrying `carried(rank)`, to the epoch's end.
template <typename Carried>
std::vector<CoverageDigest> ResumeToTheEnd(const LoaderOptions& o, uint32_t ranks, const SamplerState& state,
                                           Carried carried, std::map<uint64_t, int>* seen) {
  auto loaders = Ranks(o, ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    EXPECT_TRUE(loaders[r]->Restore(state).ok());
    EXPECT_EQ(loaders[r]->coverage().uncarried, 1u);
    if (const CoverageDigest* before = carried(r)) {
      Status st = loaders[r]->ResumeCoverage(*before);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  }
  Step(loaders, 0, seen);
  return Digests(loaders);
}

TEST(LoaderCoverageTest, ResumeOnTheSameRanksCarriesEachRanksOwnDigest) {
  const LoaderOptions o = NumberOptions();
  std::map<uint64_t, int> seen;
  const Stopped stopped = StopAfter(o, 3, 2, &seen);
  const CoverageCheck check = Check(ResumeToTheEnd(
      o, 3, stopped.state, [&](uint32_t r) { return &stopped.digests[r]; }, &seen));
  EXPECT_TRUE(check.ok) << check.message;
  // Not carried: each restore is named, and the records before it are missing.
  std::map<uint64_t, int> again;
  const CoverageCheck lost =
      Check(ResumeToTheEnd(o, 3, stopped.state, [](uint32_t) -> const CoverageDigest* { return nullptr; }, &again));
  EXPECT_FALSE(lost.ok);
  EXPECT_EQ(lost.uncarried, 3u);
  EXPECT_EQ(lost.missing, 24u);
  EXPECT_NE(lost.message.find("did not carry"), std::string::npos) << lost.message;
  // Another rank's digest alone does not carry into this one.
  auto loaders = Ranks(o, 3);
  ASSERT_TRUE(loaders[0]->Restore(stopped.state).ok());
  EXPECT_EQ(loaders[0]->ResumeCoverage(stopped.digests[1]).code(), StatusCode::kInvalidArgument);
}

TEST(LoaderCoverageTest, ElasticResumeCarriesEveryRanksDigestMerged) {
  for (auto [ranks, next] : {std::pair<uint32_t, uint32_t>{4, 3}, {2, 5}, {3, 1}}) {
    for (size_t stop : {1, 3}) {
      LoaderOptions o = NumberOptions();
      std::map<uint64_t, int> seen;
      const Stopped stopped = StopAfter(o, ranks, stop, &seen);
      const CoverageDigest merged = *CoverageDigest::Parse(MergeCoverage(stopped.digests)->Serialize());
      o.batch_size = 5;  // the new run's batch size may differ too
      const std::vector<CoverageDigest> digests =
          ResumeToTheEnd(o, next, stopped.state, [&](uint32_t) { return &merged; }, &seen);
      const CoverageCheck check = Check(digests);
      EXPECT_TRUE(check.ok) << ranks << " -> " << next << " after " << stop << ": " << check.message;
      // Each record once, but the padding the new partition adds.
      uint64_t extra = 0;
      for (const auto& [id, count] : seen) extra += static_cast<uint64_t>(count - 1);
      EXPECT_EQ(seen.size(), uint64_t{kNumbers});
      EXPECT_EQ(extra, check.padding);
    }
  }
}

TEST(LoaderCoverageTest, AResumeFromAnotherStepThanItsDigestsIsCaughtByRecord) {
  const LoaderOptions o = NumberOptions();
  std::map<uint64_t, int> unused;
  const Stopped early = StopAfter(o, 4, 1, &unused);  // positions [0, 16) read
  const Stopped late = StopAfter(o, 4, 2, &unused);   // positions [0, 32) read
  const CoverageDigest early_merged = *MergeCoverage(early.digests), late_merged = *MergeCoverage(late.digests);
  Sampler order = *Sampler::Create(kNumbers, o.sampler);
  order.SetEpoch(1);
  std::vector<uint64_t> between;  // the records of positions [16, 32)
  for (uint64_t p = 16; p < 32; ++p) between.push_back(order.GlobalAt(p));
  std::sort(between.begin(), between.end());
  // The state of step 1 with the digests of step 2: those records twice.
  const CoverageCheck twice = Check(ResumeToTheEnd(o, 3, early.state, [&](uint32_t) { return &late_merged; }, &unused));
  EXPECT_FALSE(twice.ok);
  EXPECT_EQ(twice.repeated_ids, between) << twice.message;
  EXPECT_TRUE(twice.missing_ids.empty()) << twice.message;
  // The state of step 2 with the digests of step 1: those records never.
  const CoverageCheck never = Check(ResumeToTheEnd(o, 3, late.state, [&](uint32_t) { return &early_merged; }, &unused));
  EXPECT_FALSE(never.ok);
  EXPECT_EQ(never.missing_ids, between) << never.message;
  EXPECT_TRUE(never.repeated_ids.empty()) << never.message;
}

TEST(LoaderCoverageTest, MixturesExpectTheWeightedCountsAndSubsetsTheirIds) {
  const std::string small = WriteNumbers("small", 9);
  LoaderOptions o = NumberOptions();
  o.sampler.weights = {0.4, 0.6};
  o.sampler.epoch_size = 70;  // the small dataset about 42 times over 9 records: 4 or 5 each
  auto loaders = Ranks(o, 3, {NumbersDir(), small});
  std::map<uint64_t, int> seen;
  Step(loaders, 0, &seen);
  const CoverageCheck check = Check(Digests(loaders));
  EXPECT_TRUE(check.ok) << check.message;
  EXPECT_EQ(check.records, 70u);
  const CoverageDigest d = loaders[0]->coverage();
  std::map<uint64_t, int> expected;
  for (uint64_t id : d.expected.ids->Ids()) ++expected[id];
  int from_small = 0;
  for (const auto& [id, count] : expected) {
    if (id >= kNumbers) {
      from_small += count;
      EXPECT_TRUE(count == 4 || count == 5) << id;
    }
  }
  EXPECT_EQ(from_small, 42);
  // A subset (one id twice): those ids, as often as listed.
  LoaderOptions subset = NumberOptions();
  subset.subset = std::vector<uint64_t>{5, 9, 9, 40, 2, 17, 33};
  auto subset_loaders = Ranks(subset, 2);
  Step(subset_loaders, 0, &seen);
  const CoverageCheck listed = Check(Digests(subset_loaders));
  EXPECT_TRUE(listed.ok) << listed.message;
  EXPECT_EQ(subset_loaders[1]->coverage().expected.ids->Ids(), (std::vector<uint64_t>{2, 5, 9, 9, 17, 33, 40}));
  // Another subset is another epoch: its digests do not check together.
  subset.subset = std::vector<uint64_t>{5, 9, 40, 2, 17, 33, 1};
  EXPECT_FALSE(CheckCoverage({subset_loaders[0]->coverage(), Ranks(subset, 2)[1]->coverage()}).ok());
}

TEST(LoaderCoverageTest, ReplacedBadRecordsAreMissingAndTheirReplacementsRepeated) {
  const loader_testing::TestDataset data = loader_testing::WriteDataset("coverage_bad", {6}, "not a jpeg");
  LoaderOptions o = loader_testing::SmallOptions();
  o.on_bad_record = OnBadRecord::kSkip;
  o.coverage = CoverageDetail::kIds;
  std::unique_ptr<Loader> loader = Loader::Create(loader_testing::OpenDataset(data.dir), o).value();
  for (;;) {
    Result<Batch> batch = loader->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (batch->empty()) break;
  }
  const CoverageCheck check = Check({loader->coverage()});
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.skipped, 1u);
  EXPECT_EQ(check.missing_ids, (std::vector<uint64_t>{6}));
  EXPECT_EQ(check.repeated, 1u);
  EXPECT_NE(check.message.find("on_bad_record skip"), std::string::npos) << check.message;
}

TEST(LoaderCoverageTest, NoCoverageRecordsNothing) {
  LoaderOptions o = NumberOptions();
  o.coverage = CoverageDetail::kNone;
  auto loaders = Ranks(o, 1);
  std::map<uint64_t, int> seen;
  Step(loaders, 0, &seen);
  const CoverageDigest d = loaders[0]->coverage();
  EXPECT_EQ(d.delivered.digest.count, 0u);
  EXPECT_FALSE(d.ids);
  EXPECT_EQ(Check({d}).missing, uint64_t{kNumbers});
}

}  // namespace
}  // namespace unirecord
