// Golden files (tests/data/golden/, see its README.md): a version 1.0 dataset
// that must keep decoding to the values below, in the pre-manifest layout
// (v1/) and as today's writer commits it (v1-manifest/: the manifest and
// generation-named shards), and damaged files that must keep failing with
// the errors below, whatever the code becomes.
//
// Regenerate (only when the format version changes):
//   UREC_WRITE_GOLDEN=1 build/src/format/golden_test --gtest_filter=GoldenTest.Regenerate
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>

#include "format/manifest.h"
#include "dataset/dataset_testing.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/fixed_parts.h"
#include "format/header_codec.h"
#include "format/format_constants.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "unirecord/fields.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

const std::string kGoldenDir = std::string(UNIRECORD_TEST_DATA_DIR) + "/golden";

using GoldenRow = testing::SampleValues;

// The v1 dataset's records, in id order (contiguous sharding: 2 shards of 3).
const std::vector<GoldenRow>& Rows() {
  static const std::vector<GoldenRow> rows = {
      {"\xff\xd8\xff\xe0JFIF-0", 0, "cat/0.jpg", 640, 0.5f, {0.1f, 0.2f, 0.3f}, 1, 1.0, "mask-0", {1, 2, 3, 4}, {0.0, 1.0}},
      {"", -1, "", 0, -0.0f, {0, 0, 0}, INT64_MIN, -2.5, "", {0, 0, 0, 0}, {-1.0, 1e300}},
      {std::string(5000, '\x42'), 7, "dog/\xc3\xa9t\xc3\xa9.jpg", -3, INFINITY, {1, 2, 3}, INT64_MAX, 3.25,
       std::string(3000, 'm'), {-1, -2, -3, -4}, {2.0, 3.0}},
      {std::string("a\0b", 3), 2, "bird/3.jpg", 1, 1.5f, {4, 5, 6}, 42, 0.125, "m", {5, 6, 7, 8}, {4.0, 5.0}},
      {"x", 2, "bird/4.jpg", 2, -7.75f, {7, 8, 9}, -42, 1e-9, "mm", {9, 10, 11, 12}, {6.0, 7.0}},
      {std::string(300, '\0'), 1, "cat/5.jpg", 480, 100.0f, {-1, -2, -3}, 0, -0.0, "", {0, 1, 0, 1}, {8.0, 9.0}},
  };
  return rows;
}

// The dataset as the writer commits it: NAME.uset naming generation 1 and
// NAME-SSSSS-of-NNNNN.g000001.{urec,uidx}.
Result<WriterSummary> WriteGoldenGeneration(const std::string& dir, const std::string& name, uint32_t shards) {
  Schema schema = testing::SampleSchema();
  WriterOptions options = testing::SmallPages(shards);
  options.expected_records = Rows().size();
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, name, schema, options));
  UREC_RETURN_IF_ERROR(writer->SetMetadata(kClassesMetadataKey, "cat\ndog\nbird"));
  RecordBuilder record(schema);
  for (const GoldenRow& row : Rows()) {
    UREC_RETURN_IF_ERROR(testing::FillSample(record, row));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return writer->summary();
}

Status WriteGolden(const std::string& dir, const std::string& name, uint32_t shards) {
  UREC_ASSIGN_OR_RETURN(const WriterSummary summary, WriteGoldenGeneration(dir, name, shards));
  // The golden folders v1/ and bad/ keep the layout of the first writers (generation 0,
  // no manifest): what datasets written before manifests look like.
  return testing::ToPreManifestLayout(dir, name, summary);
}

// Format 1.2 (SPEC.md sections 1.2 and 1.3): the golden dataset as
// generation 1, then rows 0 and 2 appended as a second segment (generation
// 2), and version 1 tagged "first".
Status WriteGoldenSegments(const std::string& dir) {
  UREC_RETURN_IF_ERROR(WriteGoldenGeneration(dir, "golden", 2).status());
  Schema schema = testing::SampleSchema();
  WriterOptions options = testing::SmallPages(0);
  options.append = true;
  options.sync = false;
  UREC_ASSIGN_OR_RETURN(auto writer, Writer::Create(dir, "golden", schema, options));
  UREC_RETURN_IF_ERROR(writer->SetMetadata(kClassesMetadataKey, "cat\ndog\nbird"));
  RecordBuilder record(schema);
  for (size_t row : {0, 2}) {
    UREC_RETURN_IF_ERROR(testing::FillSample(record, Rows()[row]));
    UREC_RETURN_IF_ERROR(writer->Write(record));
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  return TagVersion(dir + "/golden", "first", 1);
}

// The fields golden v1_2-fields adds to row k (SPEC.md section 1.4).
float GoldenQuality(uint64_t k) { return static_cast<float>(k) * 1.5f - 2.0f; }
std::string GoldenCaption(uint64_t k) { return k == 1 ? "" : "caption " + std::to_string(k); }

// Format 1.2 field groups: the golden dataset as generation 1; quality
// (float32, indexed) and caption added (generation 2); label replaced by a
// string (generation 3); path dropped (generation 4).
Status WriteGoldenFields(const std::string& dir) {
  UREC_RETURN_IF_ERROR(WriteGoldenGeneration(dir, "golden", 2).status());
  AddFieldsOptions options;
  options.writer.blob_page_bytes = 8 << 10;
  options.writer.scalar_page_bytes = 512;
  options.writer.sync = false;
  options.writer.record_table = true;  // as field groups were first written (v1_2-columns: without)
  options.commit.sync = false;
  const Schema added = *Schema::Make({Field::Float32("quality", true), Field::String("caption")});
  UREC_RETURN_IF_ERROR(AddFields(dir + "/golden", added, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, GoldenQuality(id)));
    return out.SetString(1, GoldenCaption(id));
  }, options).status());
  const Schema label = *Schema::Make({Field::String("label")});
  UREC_RETURN_IF_ERROR(AddFields(dir + "/golden", label, [](const Dataset& d, uint64_t id, RecordBuilder& out) {
    UREC_ASSIGN_OR_RETURN(const int64_t old, d.GetIndexedInt64(id, 1));
    return out.SetString(0, "label " + std::to_string(old));
  }, options).status());
  StagedWriteOptions commit;
  commit.sync = false;
  return DropFields(dir + "/golden", {"path"}, commit).status();
}

// Column files without a record table (SPEC.md 8.5): the golden dataset as
// generation 1; quality (float32, not indexed), caption and a fixed-shape
// array added as AddFields writes them by default (generation 2).
float GoldenSharpness(uint64_t k) { return static_cast<float>(k) * -0.25f; }
Status WriteGoldenColumns(const std::string& dir) {
  UREC_RETURN_IF_ERROR(WriteGoldenGeneration(dir, "golden", 2).status());
  AddFieldsOptions options;
  options.writer.scalar_page_bytes = 64;  // several pages a column file: rows are found through the directory
  options.writer.sync = false;
  options.commit.sync = false;
  const Schema added = *Schema::Make({Field::Float32("quality"), Field::String("caption"),
                                      Field::Array("sharpness", FieldType::kFloat32, {2})});
  return AddFields(dir + "/golden", added, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, GoldenQuality(id)));
    UREC_RETURN_IF_ERROR(out.SetString(1, GoldenCaption(id)));
    const float sharpness[2] = {GoldenSharpness(id), -GoldenSharpness(id)};
    return out.SetArray(2, sharpness, 2);
  }, options).status();
}

// A damaged copy of the one-shard dataset `good/`: what is done to it, and
// how a reader must fail.
struct BadCase {
  const char* name;
  StatusCode code;
  const char* message_part;  // besides the file name
  bool fails_at_open;         // else Verify() must fail
};

const std::vector<BadCase>& BadCases() {
  static const std::vector<BadCase> cases = {
      {"truncated", StatusCode::kCorruption, "truncated or incomplete shard", true},
      {"unfinished", StatusCode::kCorruption, "incomplete shard", true},
      {"wrong-magic", StatusCode::kCorruption, "bad magic", true},
      {"future-major-version", StatusCode::kNotSupported, "format version 2.0 is not supported", true},
      {"flipped-header", StatusCode::kCorruption, "header checksum mismatch", true},
      {"flipped-footer", StatusCode::kCorruption, "footer checksum mismatch", true},
      {"flipped-trailer", StatusCode::kCorruption, "trailer checksum mismatch", true},
      {"flipped-index-header", StatusCode::kCorruption, "header checksum mismatch", true},
      {"missing-index", StatusCode::kNotFound, "index of shard", true},
      {"flipped-record-table", StatusCode::kCorruption, "record table checksum mismatch", false},
      {"flipped-blob", StatusCode::kCorruption, "checksum mismatch", false},
  };
  return cases;
}

// Applies `bad.name` to the one-shard dataset at shard/index.
void Damage(const BadCase& bad, const std::string& shard, const std::string& index) {
  std::string s = testing::ReadBytes(shard);
  std::string x = testing::ReadBytes(index);
  auto* sd = reinterpret_cast<uint8_t*>(s.data());
  auto* xd = reinterpret_cast<uint8_t*>(x.data());
  auto frame = format::ReadFrame(format::FileKind::kShard, sd, s.size(), shard);
  ASSERT_TRUE(frame.ok());
  const std::string name = bad.name;
  if (name == "truncated") s.resize(s.size() - 100);
  if (name == "unfinished") std::memset(sd, 0, format::kPreambleSize);
  if (name == "wrong-magic") std::memcpy(sd, "GIF89a!!", 8);
  if (name == "future-major-version") {
    format::StoreLE<uint16_t>(sd + format::kPreambleMajorOffset, 2);
    format::StoreLE<uint64_t>(sd + format::kPreambleChecksumOffset, format::Checksum(sd, format::kPreambleChecksumOffset));
  }
  if (name == "flipped-header") sd[format::kHeaderOffset + 40] ^= 1;
  if (name == "flipped-footer") sd[frame->directory_offset + 16] ^= 1;
  if (name == "flipped-trailer") sd[s.size() - format::kTrailerSize + 2] ^= 1;
  if (name == "flipped-index-header") xd[format::kHeaderOffset + 40] ^= 1;
  if (name == "flipped-record-table") {
    auto iframe = format::ReadFrame(format::FileKind::kIndex, xd, x.size(), index);
    ASSERT_TRUE(iframe.ok());
    xd[format::AlignUp(iframe->header_offset + iframe->header_length, format::kSectionAlignment) + 70] ^= 1;
  }
  if (name == "flipped-blob") sd[format::AlignUp(frame->header_offset + frame->header_length, format::kPageAlignment) + 3] ^= 1;
  testing::WriteBytes(shard, s);
  if (name == "missing-index") {
    io::RemoveFileIfExists(index);
  } else {
    testing::WriteBytes(index, x);
  }
}

void ExpectGoodValues(const Dataset& ds) {
  ASSERT_EQ(ds.size(), Rows().size());
  for (uint64_t id = 0; id < ds.size(); ++id) {
    SCOPED_TRACE("id " + std::to_string(id));
    const GoldenRow& row = Rows()[id];
    auto r = ds.Get(id);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r->GetBytes("image"), row.image);
    EXPECT_EQ(*r->GetInt64("label"), row.label);
    EXPECT_EQ(*r->GetString("path"), row.path);
    EXPECT_EQ(*r->GetInt32("width"), row.width);
    const float score = *r->GetFloat32("score");
    EXPECT_EQ(std::memcmp(&score, &row.score, sizeof(float)), 0);  // bit-exact, -0.0 included
    EXPECT_EQ(std::memcmp(r->GetArray("mean")->data, row.mean, sizeof(row.mean)), 0);
    EXPECT_EQ(*r->GetInt64("big"), row.big);
    const double ratio = *r->GetFloat64("ratio");
    EXPECT_EQ(std::memcmp(&ratio, &row.ratio, sizeof(double)), 0);
    EXPECT_EQ(*r->GetBytes("mask"), row.mask);
    EXPECT_EQ(std::memcmp(r->GetArray("grid")->data, row.grid, sizeof(row.grid)), 0);
    EXPECT_EQ(std::memcmp(r->GetArray("weights")->data, row.weights, sizeof(row.weights)), 0);
    EXPECT_EQ(*ds.GetIndexedInt64(id, 1), row.label);
  }
}

TEST(GoldenTest, Regenerate) {
  if (std::getenv("UREC_WRITE_GOLDEN") == nullptr) GTEST_SKIP() << "set UREC_WRITE_GOLDEN=1 to rewrite the golden files";
  std::filesystem::remove_all(kGoldenDir + "/v1");
  std::filesystem::remove_all(kGoldenDir + "/v1-manifest");
  std::filesystem::remove_all(kGoldenDir + "/bad");
  std::filesystem::create_directories(kGoldenDir + "/v1");
  ASSERT_TRUE(WriteGolden(kGoldenDir + "/v1", "golden", 2).ok());
  std::filesystem::create_directories(kGoldenDir + "/v1-manifest");
  ASSERT_TRUE(WriteGoldenGeneration(kGoldenDir + "/v1-manifest", "golden", 2).ok());
  std::filesystem::remove(kGoldenDir + "/v1-manifest/" + format::LockFileName("golden"));
  std::filesystem::remove(kGoldenDir + "/v1-manifest/" + format::VersionFileName("golden", 1));  // a 1.1 writer's
  std::filesystem::remove_all(kGoldenDir + "/v1_2-segments");
  std::filesystem::create_directories(kGoldenDir + "/v1_2-segments");
  ASSERT_TRUE(WriteGoldenSegments(kGoldenDir + "/v1_2-segments").ok());
  std::filesystem::remove(kGoldenDir + "/v1_2-segments/" + format::LockFileName("golden"));
  std::filesystem::remove_all(kGoldenDir + "/v1_2-fields");
  std::filesystem::create_directories(kGoldenDir + "/v1_2-fields");
  ASSERT_TRUE(WriteGoldenFields(kGoldenDir + "/v1_2-fields").ok());
  std::filesystem::remove(kGoldenDir + "/v1_2-fields/" + format::LockFileName("golden"));
  std::filesystem::remove_all(kGoldenDir + "/v1_2-columns");
  std::filesystem::create_directories(kGoldenDir + "/v1_2-columns");
  ASSERT_TRUE(WriteGoldenColumns(kGoldenDir + "/v1_2-columns").ok());
  std::filesystem::remove(kGoldenDir + "/v1_2-columns/" + format::LockFileName("golden"));
  for (const BadCase& bad : BadCases()) {
    const std::string dir = kGoldenDir + "/bad/" + bad.name;
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(WriteGolden(dir, "bad", 1).ok());
    Damage(bad, dir + "/bad-00000-of-00001.urec", dir + "/bad-00000-of-00001.uidx");
  }
}

TEST(GoldenTest, Version1DatasetDecodes) {
  auto ds = Dataset::Open(kGoldenDir + "/v1");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->num_files(), 2u);
  EXPECT_EQ((*ds)->schema(), testing::SampleSchema());
  EXPECT_EQ(DecodeNameList((*ds)->metadata().at(kClassesMetadataKey)),
            (std::vector<std::string>{"cat", "dog", "bird"}));
  EXPECT_EQ((*ds)->uuid(), "25661647-a09f-8738-832b-a9cd1a5612e2");
  ExpectGoodValues(**ds);
  Status verified = (*ds)->Verify();
  EXPECT_TRUE(verified.ok()) << verified.ToString();
}

TEST(GoldenTest, TodaysWriterReproducesTheGoldenBytes) {
  // Not a format requirement (a newer zstd may compress differently), but a
  // change here means the writer's output changed: look before regenerating.
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteGolden(dir, "golden", 2).ok());
  for (const char* name : {"golden-00000-of-00002.urec", "golden-00000-of-00002.uidx",
                           "golden-00001-of-00002.urec", "golden-00001-of-00002.uidx"}) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + name), testing::ReadBytes(kGoldenDir + "/v1/" + name)) << name;
  }
}

const char* const kManifestFiles[] = {"golden.uset",
                                      "golden-00000-of-00002.g000001.urec", "golden-00000-of-00002.g000001.uidx",
                                      "golden-00001-of-00002.g000001.urec", "golden-00001-of-00002.g000001.uidx"};

TEST(GoldenTest, ManifestDatasetDecodes) {
  const std::string dir = kGoldenDir + "/v1-manifest";
  auto manifest = format::ReadManifest(dir, "golden");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->generation, 1u);
  EXPECT_EQ(manifest->shard_count, 2u);
  EXPECT_EQ(manifest->uuid, "25661647-a09f-8738-832b-a9cd1a5612e2");  // the content is v1's
  EXPECT_TRUE(manifest->reports.empty());
  // The manifest's bytes as SPEC.md section 1.1 spells them; the checksum is
  // XXH3-64 of the 85 bytes before it, as libxxhash computes it.
  EXPECT_EQ(testing::ReadBytes(dir + "/golden.uset"),
            "unirecord-manifest 1\ngeneration 1\nshards 2\nuuid 25661647-a09f-8738-832b-a9cd1a5612e2\n"
            "checksum 76af989adb2ebb73\n");
  for (const std::string& open : {dir, dir + "/golden", dir + "/golden.uset"}) {
    SCOPED_TRACE(open);
    auto ds = Dataset::Open(open);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_EQ((*ds)->num_files(), 2u);
    EXPECT_EQ((*ds)->uuid(), manifest->uuid);
    ExpectGoodValues(**ds);
    Status verified = (*ds)->Verify();
    EXPECT_TRUE(verified.ok()) << verified.ToString();
  }
}

TEST(GoldenTest, TodaysWriterReproducesTheManifestAndGenerationBytes) {
  // The manifest's bytes are the format (SPEC.md section 1.1); the shards'
  // are v1's, under their generation names.
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteGoldenGeneration(dir, "golden", 2).ok());
  for (const char* name : kManifestFiles) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + name), testing::ReadBytes(kGoldenDir + "/v1-manifest/" + name))
        << name;
  }
  EXPECT_EQ(testing::ReadBytes(dir + "/golden-00000-of-00002.g000001.urec"),
            testing::ReadBytes(kGoldenDir + "/v1/golden-00000-of-00002.urec"));
}

// The files of v1_2-segments, by name.
std::map<std::string, std::string> FolderBytes(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string()[0] == '.') continue;  // the lock file
    files[entry.path().filename()] = testing::ReadBytes(entry.path());
  }
  return files;
}

// `write` into a new folder gives exactly the files of golden folder `golden`.
void ExpectWriterReproduces(const std::function<Status(const std::string&)>& write, const std::string& golden) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(write(dir).ok());
  const auto written = FolderBytes(dir);
  const auto expected = FolderBytes(kGoldenDir + "/" + golden);
  ASSERT_EQ(written.size(), expected.size());
  for (const auto& [name, bytes] : expected) {
    ASSERT_EQ(written.count(name), 1u) << name;
    EXPECT_TRUE(written.at(name) == bytes) << name;
  }
}

TEST(GoldenTest, SegmentsAndVersionsDecode) {
  const std::string dir = kGoldenDir + "/v1_2-segments";
  const std::string manifest = testing::ReadBytes(dir + "/golden.uset");
  EXPECT_EQ(manifest.rfind("unirecord-manifest 2\ngeneration 2\nshards 3\nuuid ", 0), 0u) << manifest;
  EXPECT_NE(manifest.find("\nsegment 1 2 0 25661647-a09f-8738-832b-a9cd1a5612e2\nsegment 2 1 6 "), std::string::npos)
      << manifest;
  EXPECT_EQ(testing::ReadBytes(dir + "/golden.g000001.uver"),
            testing::ReadBytes(kGoldenDir + "/v1-manifest/golden.uset"));  // version 1 is the 1.1 dataset
  EXPECT_EQ(testing::ReadBytes(dir + "/golden.g000002.uver"), manifest);
  auto latest = Dataset::Open(dir);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), 2u);
  ASSERT_EQ((*latest)->size(), 8u);
  ASSERT_EQ((*latest)->segments().size(), 2u);
  EXPECT_EQ(*(*latest)->Get(6)->GetString("path"), Rows()[0].path);
  EXPECT_EQ(*(*latest)->Get(7)->GetInt64("big"), Rows()[2].big);
  EXPECT_TRUE((*latest)->Verify().ok());
  for (const char* tag : {"", "first"}) {
    DatasetOptions options;
    options.version = *tag ? 0 : 1;
    options.tag = tag;
    auto first = Dataset::Open(dir, options);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_EQ((*first)->uuid(), "25661647-a09f-8738-832b-a9cd1a5612e2");
    ExpectGoodValues(**first);
  }
}

TEST(GoldenTest, TodaysWriterReproducesTheSegmentsAndVersionsBytes) {
  ExpectWriterReproduces(WriteGoldenSegments, "v1_2-segments");
}

TEST(GoldenTest, FieldGroupsDecode) {
  const std::string dir = kGoldenDir + "/v1_2-fields";
  const std::string manifest = testing::ReadBytes(dir + "/golden.uset");
  EXPECT_EQ(manifest.rfind("unirecord-manifest 2\ngeneration 4\nshards 2\nuuid ", 0), 0u) << manifest;
  EXPECT_NE(manifest.find("\nsegment 1 2 0 25661647-a09f-8738-832b-a9cd1a5612e2\nfields 1 2 "), std::string::npos)
      << manifest;
  EXPECT_NE(manifest.find(" quality,caption\nfields 1 3 "), std::string::npos) << manifest;
  EXPECT_NE(manifest.find(" label\ndrop 1 path\n"), std::string::npos) << manifest;
  auto latest = Dataset::Open(dir);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  const Dataset& d = **latest;
  EXPECT_EQ(d.version(), 4u);
  EXPECT_EQ(d.schema().ToString(),
            "image: bytes, label: string, width: int32 (indexed), score: float32 (indexed), mean: float32[3], "
            "big: int64, ratio: float64, mask: bytes (zstd), grid: int32[2,2], weights: float64[2], "
            "quality: float32 (indexed), caption: string");
  ASSERT_EQ(d.size(), Rows().size());
  for (uint64_t k = 0; k < d.size(); ++k) {
    auto record = d.Get(k);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    EXPECT_TRUE(*record->GetBytes("image") == Rows()[k].image);
    EXPECT_EQ(*record->GetString("label"), "label " + std::to_string(Rows()[k].label));
    EXPECT_EQ(*record->GetFloat32("quality"), GoldenQuality(k));
    EXPECT_EQ(*record->GetString("caption"), GoldenCaption(k));
    EXPECT_EQ(*record->GetInt64("big"), Rows()[k].big);
  }
  EXPECT_TRUE(d.Verify().ok());
  // Version 1 is the dataset as first written; 2 has both fields added.
  DatasetOptions options;
  options.version = 1;
  auto first = Dataset::Open(dir, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ExpectGoodValues(**first);
  options.version = 2;
  auto second = Dataset::Open(dir, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*(*second)->Get(4)->GetInt64("label"), Rows()[4].label);
  EXPECT_EQ(*(*second)->Get(4)->GetString("path"), Rows()[4].path);
  EXPECT_EQ(*(*second)->GetIndexedFloat64(4, 11), GoldenQuality(4));
}

TEST(GoldenTest, TodaysWriterReproducesTheFieldGroupsBytes) {
  ExpectWriterReproduces(WriteGoldenFields, "v1_2-fields");
}

TEST(GoldenTest, ColumnFilesWithoutARecordTableDecode) {
  const std::string dir = kGoldenDir + "/v1_2-columns";
  auto latest = Dataset::Open(dir);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  const Dataset& d = **latest;
  EXPECT_EQ(d.version(), 2u);
  ASSERT_EQ(d.size(), Rows().size());
  for (uint64_t k = 0; k < d.size(); ++k) {
    auto record = d.Get(k);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    EXPECT_EQ(*record->GetInt64("label"), Rows()[k].label);
    EXPECT_EQ(*record->GetFloat32("quality"), GoldenQuality(k));
    EXPECT_EQ(*record->GetString("caption"), GoldenCaption(k));
    EXPECT_EQ(record->GetArray("sharpness")->as<float>()[1], -GoldenSharpness(k));
  }
  EXPECT_TRUE(d.Verify().ok()) << d.Verify().ToString();
  for (uint32_t s = 0; s < 2; ++s) {
    // The index: minor 2, entry stride 0, an empty record table; the column file itself says 1.0.
    const std::string column = dir + "/" + format::ColumnFileName("golden", 1, 2, s, 2);
    const std::string index = testing::ReadBytes(format::IndexPathFor(column));
    const auto* data = reinterpret_cast<const uint8_t*>(index.data());
    EXPECT_EQ(format::LoadLE<uint16_t>(data + format::kPreambleMinorOffset), format::kFormatMinorNoRecordTable);
    auto frame = format::ReadFrame(format::FileKind::kIndex, data, index.size(), column);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    auto header = format::VerifyIndexHeader(frame->header, frame->header_length, column);
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ((*header)->entry_stride(), 0u);
    EXPECT_EQ((*header)->sections()->Get(0)->length(), 0u);
    EXPECT_EQ(format::LoadLE<uint16_t>(reinterpret_cast<const uint8_t*>(testing::ReadBytes(column).data()) +
                                       format::kPreambleMinorOffset),
              0);
  }
}

TEST(GoldenTest, TodaysWriterReproducesTheColumnFilesWithoutARecordTable) {
  ExpectWriterReproduces(WriteGoldenColumns, "v1_2-columns");
}

TEST(GoldenTest, DamagedFilesFail) {
  for (const BadCase& bad : BadCases()) {
    SCOPED_TRACE(bad.name);
    const std::string dir = kGoldenDir + "/bad/" + bad.name;
    ASSERT_TRUE(io::IsDirectory(dir)) << dir << " missing: regenerate the golden files";
    auto ds = Dataset::Open(dir);
    Status status = ds.ok() ? (*ds)->Verify() : ds.status();
    EXPECT_EQ(ds.ok(), !bad.fails_at_open) << status.ToString();
    EXPECT_EQ(status.code(), bad.code) << status.ToString();
    EXPECT_NE(status.message().find("bad-00000-of-00001.u"), std::string::npos) << status.ToString();
    EXPECT_NE(status.message().find(bad.message_part), std::string::npos) << status.ToString();
  }
}

}  // namespace
}  // namespace unirecord
