// Write-then-read tests of the whole format: every field type, sharding
// modes, determinism, crash safety, opening by directory/glob/list, threads.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "dataset/dataset_testing.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

using testing::MakeTempDir;
using testing::SampleRecord;
using testing::SampleValues;
using testing::SmallPages;
using testing::WriteSample;

// Checks that record `id` of `ds` holds sample record `k`.
void ExpectSample(const Dataset& ds, uint64_t id, uint64_t k) {
  SCOPED_TRACE("id " + std::to_string(id) + " sample " + std::to_string(k));
  const SampleValues v = SampleRecord(k);
  auto record = ds.Get(id);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->id(), id);
  EXPECT_EQ(*record->GetBytes(0), v.image);
  EXPECT_EQ(*record->GetInt64(1), v.label);
  EXPECT_EQ(*record->GetString(2), v.path);
  EXPECT_EQ(*record->GetInt32(3), v.width);
  EXPECT_EQ(*record->GetInt64(3), v.width);  // int32 widens
  EXPECT_EQ(*record->GetFloat32(4), v.score);
  auto mean = record->GetArray(5);
  ASSERT_TRUE(mean.ok());
  ASSERT_EQ(mean->count, 3u);
  ASSERT_NE(mean->as<float>(), nullptr);
  EXPECT_EQ(mean->as<int32_t>(), nullptr);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(mean->as<float>()[i], v.mean[i]);
  EXPECT_EQ(*record->GetInt64("big"), v.big);
  EXPECT_EQ(*record->GetFloat64("ratio"), v.ratio);
  EXPECT_EQ(*record->GetBytes("mask"), v.mask);
  auto grid = record->GetArray("grid");
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid->shape.ToVector(), (std::vector<int64_t>{2, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(grid->as<int32_t>()[i], v.grid[i]);
  auto weights = record->GetArray("weights");
  ASSERT_TRUE(weights.ok());
  EXPECT_EQ(weights->as<double>()[0], v.weights[0]);
  EXPECT_EQ(weights->as<double>()[1], v.weights[1]);

  // The cheap accessors agree with Get.
  auto image = ds.GetBlob(id, 0);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->data(), v.image);
  EXPECT_TRUE(image->zero_copy());
  auto mask = ds.GetBlob(id, 8);
  ASSERT_TRUE(mask.ok());
  EXPECT_EQ(mask->data(), v.mask);
  EXPECT_FALSE(mask->zero_copy());
  EXPECT_EQ(*ds.GetIndexedInt64(id, 1), v.label);
  EXPECT_EQ(*ds.GetIndexedInt64(id, 3), v.width);
  EXPECT_EQ(*ds.GetIndexedFloat64(id, 4), v.score);
}

TEST(RoundTripTest, EveryFieldTypeRoundRobinShards) {
  const std::string dir = MakeTempDir();
  const uint64_t n = 103;
  const uint32_t shards = 4;
  auto summary = WriteSample(dir, "train", n, SmallPages(shards));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->records, n);
  EXPECT_EQ(summary->shards, shards);
  EXPECT_EQ(io::BaseName(summary->shard_paths[2]), "train-00002-of-00004.g000001.urec");
  EXPECT_EQ(io::BaseName(summary->index_paths[3]), "train-00003-of-00004.g000001.uidx");

  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->size(), n);
  EXPECT_EQ((*ds)->num_files(), shards);
  EXPECT_EQ((*ds)->schema(), testing::SampleSchema());
  EXPECT_EQ((*ds)->metadata().at("classes"), "a\nb\nc\nd\ne");
  EXPECT_EQ((*ds)->uuid(), summary->uuid);
  EXPECT_EQ((*ds)->uuid()[14], '8');  // RFC 9562 version 8
  // Round robin: sample k lives in shard k % 4 at row k / 4; ids are shard-major.
  const auto& infos = (*ds)->shards();
  for (uint64_t k = 0; k < n; ++k) ExpectSample(**ds, infos[k % shards].first_id + k / shards, k);
  EXPECT_GT(infos[0].blob_pages, 3u);
  EXPECT_GT(infos[0].scalar_pages, 3u);
  EXPECT_EQ(infos[0].index_entry_bytes, 8u + 2 * 24 + 3 * 8 + 8);
  Status verified = (*ds)->Verify();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

TEST(RoundTripTest, ContiguousShardsKeepWriteOrder) {
  const std::string dir = MakeTempDir();
  WriterOptions options = SmallPages(7);
  options.expected_records = 50;
  ASSERT_TRUE(WriteSample(dir, "c", 50, options).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ((*ds)->num_files(), 7u);
  for (uint64_t k = 0; k < 50; ++k) ExpectSample(**ds, k, k);
  EXPECT_EQ((*ds)->shards()[1].first_id, 50u * 1 / 7);
  EXPECT_TRUE((*ds)->Verify().ok());
}

TEST(RoundTripTest, ContiguousRejectsMoreThanExpected) {
  const std::string dir = MakeTempDir();
  WriterOptions options = SmallPages(2);
  options.expected_records = 3;
  auto written = WriteSample(dir, "c", 4, options);
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.status().message().find("expected_records"), std::string::npos);
}

TEST(RoundTripTest, FewerRecordsThanShardsLeavesEmptyShards) {
  const std::string dir = MakeTempDir();
  WriterOptions options = SmallPages(5);
  options.expected_records = 2;
  ASSERT_TRUE(WriteSample(dir, "few", 2, options).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->num_files(), 5u);
  for (uint64_t k = 0; k < 2; ++k) ExpectSample(**ds, k, k);
  EXPECT_TRUE((*ds)->Verify().ok());
}

TEST(RoundTripTest, TargetShardBytes) {
  const std::string dir = MakeTempDir();
  WriterOptions options = SmallPages(0);
  options.num_shards = 0;
  options.target_shard_bytes = 40 << 10;
  ASSERT_TRUE(WriteSample(dir, "sized", 120, options).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_GT((*ds)->num_files(), 2u);
  EXPECT_EQ((*ds)->size(), 120u);
  for (uint64_t k = 0; k < 120; ++k) ExpectSample(**ds, k, k);
  EXPECT_TRUE((*ds)->Verify().ok());
}

TEST(RoundTripTest, ZeroRecords) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "empty", 0, SmallPages(3)).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->size(), 0u);
  EXPECT_EQ((*ds)->num_files(), 3u);
  EXPECT_EQ((*ds)->Get(0).status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE((*ds)->Verify().ok());
}

TEST(RoundTripTest, ManyShards) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "many", 40, SmallPages(32)).ok());
  auto ds = Dataset::Open(dir + "/many-*.urec");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->num_files(), 32u);
  const auto& infos = (*ds)->shards();
  for (uint64_t k = 0; k < 40; ++k) ExpectSample(**ds, infos[k % 32].first_id + k / 32, k);
}

TEST(RoundTripTest, BlobOnlyAndScalarOnlySchemas) {
  for (bool blobs : {true, false}) {
    const std::string dir = MakeTempDir();
    Schema schema = blobs ? Schema::Make({Field::Bytes("b")}).value()
                          : Schema::Make({Field::Int64("x", true), Field::String("s")}).value();
    WriterOptions options;
    options.sync = false;
    auto writer = Writer::Create(dir, "d", schema, options);
    ASSERT_TRUE(writer.ok());
    RecordBuilder record(schema);
    for (int i = 0; i < 10; ++i) {
      if (blobs) {
        ASSERT_TRUE(record.SetBytesOwned(0, std::string(i, 'x')).ok());
      } else {
        ASSERT_TRUE(record.SetInt64(0, 9 - i).ok());
        ASSERT_TRUE(record.SetString(1, std::string(i, 's')).ok());
      }
      ASSERT_TRUE((*writer)->Write(record).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
    auto ds = Dataset::Open(dir);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    for (int i = 0; i < 10; ++i) {
      auto r = (*ds)->Get(i);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      if (blobs) {
        EXPECT_EQ(*r->GetBytes(0), std::string(i, 'x'));
      } else {
        EXPECT_EQ(*r->GetInt64(0), 9 - i);
        EXPECT_EQ(*r->GetString("s"), std::string(i, 's'));
      }
    }
    EXPECT_TRUE((*ds)->Verify().ok());
  }
}

TEST(RoundTripTest, DefaultBlobCompressionIsRecordedInSchema) {
  const std::string dir = MakeTempDir();
  Schema schema = Schema::Make({Field::Bytes("b")}).value();
  WriterOptions options;
  options.sync = false;
  options.default_blob_compression = BlobCompression::kZstd;
  auto writer = Writer::Create(dir, "z", schema, options);
  ASSERT_TRUE(writer.ok());
  RecordBuilder record(schema);
  ASSERT_TRUE(record.SetBytesOwned(0, std::string(10000, 'q')).ok());
  ASSERT_TRUE((*writer)->Write(record).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->schema().field(0).compression, BlobCompression::kZstd);
  EXPECT_EQ((*ds)->GetBlob(0, 0)->data(), std::string(10000, 'q'));
  EXPECT_LT((*ds)->shards()[0].blob_bytes, 1000u);
}

TEST(RoundTripTest, DeterministicBytes) {
  const std::string a = MakeTempDir();
  const std::string b = MakeTempDir();
  WriterOptions options = SmallPages(3);
  ASSERT_TRUE(WriteSample(a, "det", 60, options).ok());
  options.threads = 4;  // must not change a byte
  ASSERT_TRUE(WriteSample(b, "det", 60, options).ok());
  auto names = io::ListDirectory(a);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 8u);  // 3 shards, 3 indexes, the manifest and its kept copy
  for (const std::string& name : *names) {
    EXPECT_EQ(testing::ReadBytes(a + "/" + name), testing::ReadBytes(b + "/" + name)) << name;
  }
  // Different content gives a different dataset UUID.
  const std::string c = MakeTempDir();
  auto other = WriteSample(c, "det", 61, SmallPages(3));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->uuid, (*Dataset::Open(a))->uuid());
}

TEST(RoundTripTest, WriterDestroyedBeforeFinishLeavesNothing) {
  const std::string dir = MakeTempDir();
  {
    Schema schema = testing::SampleSchema();
    auto writer = Writer::Create(dir, "crash", schema, SmallPages(2));
    ASSERT_TRUE(writer.ok());
    RecordBuilder record(schema);
    for (uint64_t k = 0; k < 20; ++k) {
      SampleValues v = SampleRecord(k);
      ASSERT_TRUE(testing::FillSample(record, v).ok());
      ASSERT_TRUE((*writer)->Write(record).ok());
    }
    // What a crash now would leave, even under final names, must not open.
    auto listed = io::ListDirectory(dir);
    ASSERT_TRUE(listed.ok());
    std::vector<std::string> partial;
    for (const std::string& name : *listed) {
      if (name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0) partial.push_back(name);
    }
    ASSERT_EQ(partial.size(), 2u);  // hidden .urec files; indexes are written at Finish
    ASSERT_EQ(listed->size(), 3u);  // and the lock
    const std::string salvage = MakeTempDir();
    for (const std::string& name : partial) {
      const bool index = name.find(".uidx.") != std::string::npos;
      const std::string shard = name.find("-00000.") != std::string::npos ? "00000" : "00001";
      testing::WriteBytes(salvage + "/crash-" + shard + "-of-00002" + (index ? ".uidx" : ".urec"),
                          testing::ReadBytes(dir + "/" + name));
    }
    auto salvaged = Dataset::Open(salvage);
    ASSERT_FALSE(salvaged.ok());
    EXPECT_EQ(salvaged.status().code(), StatusCode::kCorruption);
    EXPECT_NE(salvaged.status().message().find("incomplete"), std::string::npos) << salvaged.status().ToString();
  }
  EXPECT_TRUE(io::ListDirectory(dir)->empty());
  EXPECT_EQ(Dataset::Open(dir).status().code(), StatusCode::kNotFound);
}

TEST(RoundTripTest, OpenOneShardOrAList) {
  const std::string dir = MakeTempDir();
  auto summary = WriteSample(dir, "parts", 30, SmallPages(3));
  ASSERT_TRUE(summary.ok());
  auto alone = Dataset::Open(summary->shard_paths[1]);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), StatusCode::kNotFound);
  EXPECT_NE(alone.status().message().find("parts-00000-of-00003.g000001.urec"), std::string::npos) << alone.status().message();
  EXPECT_NE(alone.status().message().find(dir), std::string::npos) << alone.status().message();

  DatasetOptions partial;
  partial.allow_partial = true;
  auto one = Dataset::Open(summary->shard_paths[1], partial);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)->size(), 10u);
  ExpectSample(**one, 0, 1);  // round robin: shard 1 row 0 is sample 1

  std::vector<std::string> reversed(summary->shard_paths.rbegin(), summary->shard_paths.rend());
  auto all = Dataset::Open(reversed);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ((*all)->size(), 30u);

  std::vector<std::string> twice = {summary->shard_paths[0], summary->shard_paths[0], summary->shard_paths[1]};
  EXPECT_EQ(Dataset::Open(twice).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Dataset::Open(dir + "/nothing-*.urec").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Dataset::Open(dir + "/missing.urec").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Dataset::Open(summary->index_paths[0]).status().code(), StatusCode::kInvalidArgument);
}

TEST(RoundTripTest, ConcurrentReads) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "mt", 200, WriterOptions()).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < 2000; ++i) {
        const uint64_t id = (i * 7919 + t * 13) % 200;
        auto r = (*ds)->Get(id);
        if (!r.ok() || *r->GetString(2) != SampleRecord(id).path || *r->GetInt64(1) != SampleRecord(id).label) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(WriterTest, RejectsBadRecordsAndCalls) {
  const std::string dir = MakeTempDir();
  Schema schema = testing::SampleSchema();
  auto writer = Writer::Create(dir, "w", schema, SmallPages(1));
  ASSERT_TRUE(writer.ok());
  RecordBuilder record(schema);
  EXPECT_EQ(record.SetInt32(1, 5).code(), StatusCode::kInvalidArgument);   // label is int64
  // A field index past the schema: OutOfRange, as the Dataset's getters (GetBlob(0, 99) below).
  EXPECT_EQ(record.SetInt64(99, 5).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(record.SetInt64("nope", 5).code(), StatusCode::kKeyNotFound);
  float two[2] = {1, 2};
  EXPECT_EQ(record.SetArray(5, two, 2).code(), StatusCode::kInvalidArgument);  // needs 3
  Status unset = (*writer)->Write(record);
  EXPECT_EQ(unset.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unset.message().find("'image'"), std::string::npos);
  SampleValues v = SampleRecord(1);
  ASSERT_TRUE(testing::FillSample(record, v).ok());
  ASSERT_TRUE((*writer)->Write(record).ok());
  EXPECT_EQ((*writer)->SetMetadata("late", "x").code(), StatusCode::kFailedPrecondition);
  RecordBuilder other(Schema::Make({Field::Int32("x")}).value());
  ASSERT_TRUE(other.SetInt32(0, 1).ok());
  EXPECT_EQ((*writer)->Write(other).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ((*writer)->Write(record).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Writer::Create(dir, "", schema).ok());
  EXPECT_FALSE(Writer::Create(dir, "a/b", schema).ok());
  WriterOptions both;
  both.num_shards = 2;
  both.target_shard_bytes = 100;
  EXPECT_EQ(Writer::Create(dir, "x", schema, both).status().code(), StatusCode::kInvalidArgument);
}

TEST(DatasetTest, AccessorErrors) {
  const std::string dir = MakeTempDir();
  ASSERT_TRUE(WriteSample(dir, "e", 5, SmallPages(1)).ok());
  auto ds = Dataset::Open(dir);
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->GetBlob(0, 1).status().code(), StatusCode::kInvalidArgument);  // label is not bytes
  const Status path_blob = (*ds)->GetBlob(0, 2).status();  // a string field, not indexed
  EXPECT_EQ(path_blob.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(path_blob.message(), "field 'path' is string, not bytes");
  EXPECT_EQ((*ds)->GetBlob(0, 99).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*ds)->GetBlob(5, 0).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*ds)->GetIndexedInt64(0, 2).status().code(), StatusCode::kInvalidArgument);   // path
  EXPECT_EQ((*ds)->GetIndexedInt64(0, 4).status().code(), StatusCode::kInvalidArgument);   // float
  EXPECT_EQ((*ds)->GetIndexedFloat64(0, 1).status().code(), StatusCode::kInvalidArgument); // int
  auto r = (*ds)->Get(1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->GetString(1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r->GetInt32(1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r->GetArray(1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r->GetInt64(5).status().code(), StatusCode::kInvalidArgument);  // array
  EXPECT_EQ(r->GetBytes("nope").status().code(), StatusCode::kKeyNotFound);
  EXPECT_EQ(r->GetBytes(42).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace unirecord
