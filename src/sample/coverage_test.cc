#include "unirecord/coverage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "format/checksum.h"
#include "format/endian.h"
#include "format/format_constants.h"
#include "sample/coverage.h"

namespace unirecord {
namespace {

IdBitmap BitmapOf(const std::vector<uint64_t>& ids) {
  IdBitmap bitmap;
  for (uint64_t id : ids) EXPECT_TRUE(bitmap.Add(id));
  return bitmap;
}

TEST(IdDigestTest, OrderFreeAdditiveAndSensitiveToEachRecord) {
  const std::vector<uint64_t> ids = {5, 1, 9, 1ULL << 40, 3};
  IdDigest forward, backward, halves, first, second;
  for (uint64_t id : ids) forward.Add(id);
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) backward.Add(*it);
  halves.Add(ids.data(), ids.size());
  EXPECT_EQ(forward, backward);
  EXPECT_EQ(forward, halves);
  first.Add(ids.data(), 2);
  second.Add(ids.data() + 2, 3);
  first.Add(second);
  EXPECT_EQ(first, forward);
  first.Subtract(second);
  second.Add(ids.data(), 2);
  EXPECT_NE(first, forward);
  // One record repeated in place of another: same count, different sums.
  IdDigest swapped;
  for (uint64_t id : {5, 1, 9, 1, 3}) swapped.Add(id);
  EXPECT_EQ(swapped.count, forward.count);
  EXPECT_NE(swapped.sum1, forward.sum1);
  EXPECT_NE(swapped.sum2, forward.sum2);
}

TEST(IdDigestTest, SumsAreSplitMix64OfTheIdFrozen) {
  // format/SPEC.md section 13.3: the first two SplitMix64 outputs seeded with the id.
  IdDigest d;
  d.Add(0);
  EXPECT_EQ(d.sum1, 0xe220a8397b1dcdafULL);
  EXPECT_EQ(d.sum2, 0x6e789e6aa1b965f4ULL);
}

TEST(IdBitmapTest, MultiplicitiesSumsAndExcess) {
  IdBitmap a = BitmapOf({3, 3, 7, 1ULL << 33, 3});
  EXPECT_EQ(a.count(), 5u);
  EXPECT_EQ(a.Ids(), (std::vector<uint64_t>{3, 3, 3, 7, 1ULL << 33}));
  EXPECT_EQ(a.Ids(2), (std::vector<uint64_t>{3, 3}));
  IdBitmap range;
  ASSERT_TRUE(range.AddRange(2, 5));
  ASSERT_TRUE(range.AddRange((1ULL << 32) - 1, (1ULL << 32) + 1));  // across two high parts
  EXPECT_EQ(range.Ids(), (std::vector<uint64_t>{2, 3, 4, (1ULL << 32) - 1, 1ULL << 32}));
  ASSERT_TRUE(a.Add(range));
  EXPECT_EQ(a.count(), 10u);
  EXPECT_EQ(IdBitmap::Excess(a, BitmapOf({3, 4, 7, 7, 9})).Ids(),
            (std::vector<uint64_t>{2, 3, 3, 3, (1ULL << 32) - 1, 1ULL << 32, 1ULL << 33}));
  EXPECT_EQ(IdBitmap::Excess(BitmapOf({3, 4, 7, 7, 9}), a).Ids(), (std::vector<uint64_t>{7, 9}));
  EXPECT_TRUE(IdBitmap::Excess(a, a).empty());
  EXPECT_TRUE(a == BitmapOf(a.Ids()));
}

TEST(IdBitmapTest, RefusesMultiplicitiesPastTheLimit) {
  IdBitmap a;
  for (uint32_t i = 0; i < IdBitmap::kMaxMultiplicity; ++i) ASSERT_TRUE(a.Add(4));
  EXPECT_FALSE(a.Add(4));
  EXPECT_FALSE(a.AddRange(3, 6));
  EXPECT_FALSE(a.Add(BitmapOf({4})));
  EXPECT_EQ(a.count(), IdBitmap::kMaxMultiplicity);  // unchanged by the refusals
}

TEST(IdBitmapTest, BytesRoundTripAndDamageIsRefused) {
  IdBitmap a = BitmapOf({1, 2, 2, 70000, 1ULL << 35});
  ASSERT_TRUE(a.AddRange(100, 5000));
  const std::string bytes = a.Serialize();
  Result<IdBitmap> back = IdBitmap::Parse(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == a);
  EXPECT_TRUE(IdBitmap::Parse(IdBitmap().Serialize())->empty());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(IdBitmap::Parse(bytes.substr(0, cut)).status().code(), StatusCode::kInvalidArgument) << cut;
  }
  EXPECT_FALSE(IdBitmap::Parse(bytes + "x").ok());
  std::string many = bytes;
  format::StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(many.data()), IdBitmap::kMaxMultiplicity + 1);
  EXPECT_FALSE(IdBitmap::Parse(many).ok());
  // Layer 1 holding an id that layer 0 lacks.
  const std::string layer0 = BitmapOf({1}).Serialize(), layer1 = BitmapOf({2}).Serialize();
  std::string upside = std::string("\x02\0\0\0", 4) + layer0.substr(4) + layer1.substr(4);
  Result<IdBitmap> bad = IdBitmap::Parse(upside);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("layer 1"), std::string::npos) << bad.status().ToString();
  // A part that is not a Roaring bitmap.
  std::string garbage = layer0;
  garbage[16] ^= 0x55;
  EXPECT_FALSE(IdBitmap::Parse(garbage).ok());
}

TEST(IdBitmapTest, EveryOneByteChangeParsesCleanlyOrIsRefused) {
  // Array, bitset and run containers, in two high parts, two layers.
  IdBitmap a = BitmapOf({1, 9, 70000, 1ULL << 40});
  ASSERT_TRUE(a.AddRange(200000, 210000));
  for (uint64_t id = 300000; id < 320000; id += 3) ASSERT_TRUE(a.Add(id));
  ASSERT_TRUE(a.Add(BitmapOf({9, 70000})));
  const std::string bytes = a.Serialize();
  int refused = 0;
  for (size_t at = 0; at < bytes.size(); at += bytes.size() > 4000 && at > 200 ? 7 : 1) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string changed = bytes;
      changed[at] = static_cast<char>(changed[at] ^ flip);
      Result<IdBitmap> parsed = IdBitmap::Parse(changed);
      if (!parsed.ok()) {
        EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
        ++refused;
        continue;
      }
      // What parses is a consistent multiset: its bytes round-trip.
      EXPECT_EQ(IdBitmap::Parse(parsed->Serialize())->count(), parsed->count());
    }
  }
  EXPECT_GT(refused, 100);
}

CoverageDigest Planned(CoveragePlan plan, size_t rank = 0) {
  Result<std::vector<CoverageDigest>> digests = PlanCoverage(plan);
  EXPECT_TRUE(digests.ok()) << digests.status().ToString();
  return digests.ok() && rank < digests->size() ? (*digests)[rank] : CoverageDigest{};
}

TEST(CoverageDigestTest, BytesRoundTripWithAndWithoutIds) {
  CoveragePlan plan;
  plan.source_sizes = {90};
  plan.sampler.num_shards = 4;
  plan.sampler.seed = 3;
  plan.epoch = 2;
  for (CoverageDetail detail : {CoverageDetail::kDigest, CoverageDetail::kIds}) {
    plan.detail = detail;
    const CoverageDigest d = Planned(plan, 1);
    EXPECT_EQ(d.ids, detail == CoverageDetail::kIds);
    Result<CoverageDigest> back = CoverageDigest::Parse(d.Serialize());
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->Serialize(), d.Serialize());
    EXPECT_EQ(back->delivered.digest, d.delivered.digest);
    EXPECT_EQ(back->shard_id, 1u);
    EXPECT_EQ(back->epoch, 2u);
    EXPECT_TRUE(back->complete);
    if (d.ids) EXPECT_TRUE(*back->delivered.ids == *d.delivered.ids);
  }
}

TEST(CoverageDigestTest, DamagedOrForeignBytesAreRefused) {
  CoveragePlan plan;
  plan.source_sizes = {20};
  plan.detail = CoverageDetail::kIds;
  const std::string bytes = Planned(plan).Serialize();
  auto resealed = [](std::string b) {  // a fresh checksum over edited bytes
    const size_t body = b.size() - format::kCoverageChecksumSize;
    format::StoreLE<uint64_t>(reinterpret_cast<uint8_t*>(b.data()) + body, format::Checksum(b.data(), body));
    return b;
  };
  EXPECT_EQ(CoverageDigest::Parse(bytes.substr(0, 100)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CoverageDigest::Parse("XRCD" + bytes.substr(4)).status().code(), StatusCode::kInvalidArgument);
  for (size_t at : {size_t{8}, size_t{80}, bytes.size() - 20}) {
    std::string flipped = bytes;
    flipped[at] ^= 1;
    Result<CoverageDigest> r = CoverageDigest::Parse(flipped);
    ASSERT_FALSE(r.ok()) << at;
    EXPECT_NE(r.status().message().find("checksum"), std::string::npos) << r.status().ToString();
  }
  std::string version = bytes;
  version[format::kCoverageVersionOffset] = 9;
  EXPECT_EQ(CoverageDigest::Parse(resealed(version)).status().code(), StatusCode::kNotSupported);
  std::string flags = bytes;
  flags[format::kCoverageFlagsOffset] |= 8;
  EXPECT_EQ(CoverageDigest::Parse(resealed(flags)).status().code(), StatusCode::kInvalidArgument);
  std::string rank = bytes;
  rank[format::kCoverageShardIdOffset] = 1;  // rank 1 of 1
  EXPECT_EQ(CoverageDigest::Parse(resealed(rank)).status().code(), StatusCode::kInvalidArgument);
  std::string count = bytes;  // delivered's count no longer that of its bitmap
  count[format::kCoveragePartsOffset + format::kCoveragePartSize] ^= 1;
  Result<CoverageDigest> r = CoverageDigest::Parse(resealed(count));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bitmap holds"), std::string::npos) << r.status().ToString();
  std::string no_ids = bytes;  // the ids flag without its bitmaps' room
  EXPECT_FALSE(CoverageDigest::Parse(resealed(no_ids.substr(0, format::kCoverageIdsOffset + 8))).ok());
}

CoverageCheck Check(const std::vector<CoverageDigest>& digests) {
  Result<CoverageCheck> check = CheckCoverage(digests);
  EXPECT_TRUE(check.ok()) << check.status().ToString();
  return check.ok() ? *check : CoverageCheck{};
}

CoverageCheck CheckPlan(const CoveragePlan& plan) {
  Result<std::vector<CoverageDigest>> digests = PlanCoverage(plan);
  EXPECT_TRUE(digests.ok()) << digests.status().ToString();
  return digests.ok() ? Check(*digests) : CoverageCheck{};
}

TEST(CheckCoverageTest, PlannedRunsAreExactAcrossOrdersPaddingCutsMixturesAndResumes) {
  int cases = 0;
  for (uint64_t n : {1, 7, 90, 257}) {
    for (uint32_t shards : {1, 3, 4}) {
      for (SampleOrder order : {SampleOrder::kSequential, SampleOrder::kShuffle, SampleOrder::kBlockShuffle}) {
        for (bool drop_last : {false, true}) {
          for (CoverageDetail detail : {CoverageDetail::kDigest, CoverageDetail::kIds}) {
            for (uint32_t resume : {0u, 2u, 5u}) {
              CoveragePlan plan;
              plan.source_sizes = {n};
              plan.sampler.order = order;
              plan.sampler.block_size = 4;
              plan.sampler.window = 8;
              plan.sampler.seed = n + shards;
              plan.sampler.num_shards = shards;
              plan.sampler.drop_last = drop_last;
              plan.epoch = 1;
              plan.detail = detail;
              plan.stop = resume == 0 ? 0 : n / shards / 2 + 1;
              plan.resume_shards = resume;
              const CoverageCheck check = CheckPlan(plan);
              SCOPED_TRACE("n=" + std::to_string(n) + " shards=" + std::to_string(shards) + " resume=" +
                           std::to_string(resume) + " drop_last=" + std::to_string(drop_last));
              EXPECT_TRUE(check.ok) << check.message;
              EXPECT_EQ(check.records, n);
              EXPECT_EQ(check.ids, detail == CoverageDetail::kIds);
              EXPECT_EQ(check.deliveries + check.dropped, n + check.padding);
              ++cases;
            }
          }
        }
      }
    }
  }
  // Mixtures: weights, resampled epochs, each record as often as its counts say.
  for (uint32_t resume : {0u, 3u}) {
    CoveragePlan plan;
    plan.source_sizes = {90, 18, 5};
    plan.sampler.weights = {0.5, 0.3, 0.2};
    plan.sampler.epoch_size = 200;
    plan.sampler.num_shards = 4;
    plan.epoch = 3;
    plan.detail = CoverageDetail::kIds;
    plan.stop = resume ? 20 : 0;
    plan.resume_shards = resume;
    const CoverageCheck check = CheckPlan(plan);
    EXPECT_TRUE(check.ok) << check.message;
    EXPECT_EQ(check.records, 200u);
  }
  EXPECT_GT(cases, 400);
}

TEST(CheckCoverageTest, AResumeFromTheWrongPositionNamesTheRecords) {
  CoveragePlan plan;
  plan.source_sizes = {90};
  plan.sampler.num_shards = 4;
  plan.sampler.seed = 5;
  plan.detail = CoverageDetail::kIds;
  plan.stop = 8;  // the ranks consumed positions [0, 32)
  plan.resume_shards = 3;
  for (uint64_t position : {28, 35}) {
    plan.resume_position = position;
    const CoverageCheck check = CheckPlan(plan);
    EXPECT_FALSE(check.ok);
    // Resumed 4 positions early: those records twice; 3 late: those never.
    Sampler order = Sampler::Create(90, plan.sampler).value();
    std::vector<uint64_t> between;
    for (uint64_t p = std::min<uint64_t>(position, 32); p < std::max<uint64_t>(position, 32); ++p) {
      between.push_back(order.GlobalAt(p));
    }
    std::sort(between.begin(), between.end());
    EXPECT_EQ(position < 32 ? check.repeated_ids : check.missing_ids, between) << check.message;
    EXPECT_TRUE((position < 32 ? check.missing_ids : check.repeated_ids).empty()) << check.message;
    EXPECT_NE(check.message.find(position < 32 ? "4 repeated" : "3 missing"), std::string::npos) << check.message;
  }
  // The same by counts alone.
  plan.detail = CoverageDetail::kDigest;
  plan.resume_position = 35;
  const CoverageCheck counted = CheckPlan(plan);
  EXPECT_FALSE(counted.ok);
  EXPECT_FALSE(counted.ids);
  EXPECT_EQ(counted.missing, 3u);
  EXPECT_TRUE(counted.missing_ids.empty());
}

TEST(CheckCoverageTest, ARepeatedOrMissingDigestFailsAndSwappedRecordsAreCaught) {
  CoveragePlan plan;
  plan.source_sizes = {40};
  plan.sampler.num_shards = 2;
  plan.detail = CoverageDetail::kIds;
  std::vector<CoverageDigest> digests = PlanCoverage(plan).value();
  EXPECT_TRUE(Check(digests).ok);
  const CoverageCheck one = Check({digests[0]});
  EXPECT_FALSE(one.ok);
  EXPECT_EQ(one.missing, 20u);
  const CoverageCheck twice = Check({digests[0], digests[1], digests[1]});
  EXPECT_EQ(twice.repeated, 20u);
  EXPECT_EQ(twice.repeated_ids, digests[1].delivered.ids->Ids());
  // One record delivered in place of another, counts only: the sums see it.
  std::vector<CoverageDigest> swapped = digests;
  for (CoverageDigest& d : swapped) {
    d.ids = false;
    for (CoveragePart* part : {&d.expected, &d.delivered, &d.padding, &d.dropped, &d.cut}) part->ids.reset();
  }
  const uint64_t a = digests[0].delivered.ids->Ids()[0], b = digests[1].delivered.ids->Ids()[0];
  IdDigest out, in;
  out.Add(a);
  in.Add(b);
  swapped[0].delivered.digest.Subtract(out);
  swapped[0].delivered.digest.Add(in);
  const CoverageCheck check = Check(swapped);
  EXPECT_FALSE(check.ok);
  EXPECT_TRUE(check.mismatch);
  EXPECT_NE(check.message.find("counts agree"), std::string::npos) << check.message;
}

TEST(CheckCoverageTest, DigestsOfAnotherEpochOrOrderAreRefused) {
  CoveragePlan plan;
  plan.source_sizes = {40};
  const CoverageDigest d = Planned(plan);
  plan.epoch = 1;
  EXPECT_EQ(CheckCoverage({d, Planned(plan)}).status().code(), StatusCode::kInvalidArgument);
  plan.epoch = 0;
  plan.sampler.order = SampleOrder::kSequential;
  EXPECT_EQ(CheckCoverage({d, Planned(plan)}).status().code(), StatusCode::kInvalidArgument);
  plan.sampler.order = SampleOrder::kShuffle;
  plan.source_sizes = {41};
  EXPECT_EQ(CheckCoverage({d, Planned(plan)}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckCoverage({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(MergeCoverageTest, EveryRankOfOneRunOnce) {
  CoveragePlan plan;
  plan.source_sizes = {40};
  plan.sampler.num_shards = 3;
  std::vector<CoverageDigest> digests = PlanCoverage(plan).value();
  Result<CoverageDigest> merged = MergeCoverage(digests);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->num_shards, 0u);
  EXPECT_TRUE(Check({*merged}).ok);
  EXPECT_EQ(CoverageDigest::Parse(merged->Serialize())->num_shards, 0u);
  EXPECT_FALSE(MergeCoverage({digests[0], digests[1]}).ok());                // a rank missing
  EXPECT_FALSE(MergeCoverage({digests[0], digests[1], digests[1]}).ok());    // one twice
  EXPECT_FALSE(MergeCoverage({*merged}).ok());                               // merged already
}

TEST(CoverageTrackerTest, CarriesItsOwnRankOrAMergeOnce) {
  SamplerOptions o;
  o.num_shards = 2;
  o.shard_id = 1;
  Sampler sampler = Sampler::Create(40, o).value();
  sample::CoverageTracker fresh;
  fresh.Start(sampler, nullptr, CoverageDetail::kDigest, sampler.size());
  EXPECT_EQ(fresh.Carry(CoverageDigest{}).code(), StatusCode::kFailedPrecondition);  // nothing to carry
  // A rank's own digest at its state, then the restored run.
  std::vector<uint64_t> ids;
  for (uint64_t k = 0; k < 5; ++k) ids.push_back(sampler.At(k));
  fresh.Deliver(ids.data(), ids.size(), 0);
  const CoverageDigest before = fresh.Digest();
  ASSERT_TRUE(sampler.Seek(5).ok());
  Sampler restored = Sampler::Create(40, o).value();
  ASSERT_TRUE(restored.Restore(sampler.state()).ok());
  sample::CoverageTracker resumed;
  resumed.Start(restored, nullptr, CoverageDetail::kDigest, restored.size());
  EXPECT_EQ(resumed.Digest().uncarried, 1u);
  CoverageDigest other = before;
  other.shard_id = 0;
  Status refused = resumed.Carry(other);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("MergeCoverage"), std::string::npos) << refused.ToString();
  CoverageDigest later = before;
  later.epoch = 1;
  EXPECT_EQ(resumed.Carry(later).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(resumed.Carry(before).ok());
  EXPECT_EQ(resumed.Carry(before).code(), StatusCode::kFailedPrecondition);  // once
  const CoverageDigest after = resumed.Digest();
  EXPECT_EQ(after.uncarried, 0u);
  EXPECT_EQ(after.delivered.digest, before.delivered.digest);
}

}  // namespace
}  // namespace unirecord
