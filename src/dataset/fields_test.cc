// Field groups (format/SPEC.md section 1.4): fields added, replaced and
// dropped without rewriting; read as one record with the shard's; every
// damaged column file or field-group line refused naming it; a writer
// stopped at any step leaves the dataset as before or after.
#include "unirecord/fields.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "dataset/commit.h"
#include "dataset/dataset_testing.h"
#include "format/checksum.h"
#include "format/format_constants.h"
#include "format/file_names.h"
#include "format/manifest.h"
#include "index/index_file.h"
#include "io/fault_injection.h"
#include "unirecord/dataset.h"
#include "unirecord/query.h"
#include "unirecord/staged_write.h"
#include "unirecord/versions.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kRecords = 60;

// The added fields' values: a pure function of the id.
float Quality(uint64_t id) { return static_cast<float>((id * 37) % 100) / 4.0f; }
std::string Caption(uint64_t id) { return "caption of " + std::to_string(id); }
std::string Thumb(uint64_t id) { return std::string(id % 5 == 0 ? 0 : 20 + id % 300, static_cast<char>('A' + id % 26)); }

Schema AddedSchema() {
  return *Schema::Make({Field::Float32("quality", /*indexed=*/true), Field::String("caption"), Field::Bytes("thumb"),
                        Field::Array("emb", FieldType::kInt32, {3})});
}

Status FillAdded(const Dataset&, uint64_t id, RecordBuilder& out) {
  UREC_RETURN_IF_ERROR(out.SetFloat32(0, Quality(id)));
  UREC_RETURN_IF_ERROR(out.SetString(1, Caption(id)));
  UREC_RETURN_IF_ERROR(out.SetBytesOwned(2, Thumb(id)));
  const int32_t emb[3] = {static_cast<int32_t>(id), -1, static_cast<int32_t>(id * 2)};
  return out.SetArray(3, emb, 3);
}

AddFieldsOptions SmallColumnPages() {
  AddFieldsOptions options;
  options.writer.blob_page_bytes = 1 << 10;
  options.writer.scalar_page_bytes = 256;
  options.writer.sync = false;
  options.commit.sync = false;
  return options;
}

Result<std::shared_ptr<Dataset>> OpenVersion(const std::string& path, uint64_t version) {
  DatasetOptions options;
  options.version = version;
  return Dataset::Open(path, options);
}

std::string Signed(const std::string& body) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(format::Checksum(body.data(), body.size())));
  return body + "checksum " + hex + "\n";
}

// Checks record `id` of `dataset` reads the sample's fields and the added ones.
void ExpectSampleAndAdded(const Dataset& dataset, uint64_t id) {
  SCOPED_TRACE("record " + std::to_string(id));
  auto record = dataset.Get(id);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  const testing::SampleValues v = testing::SampleRecord(id);
  EXPECT_TRUE(*record->GetBytes("image") == v.image);
  EXPECT_EQ(*record->GetInt64("big"), v.big);
  EXPECT_EQ(*record->GetString("path"), v.path);
  EXPECT_EQ(*record->GetFloat32("quality"), Quality(id));
  EXPECT_EQ(*record->GetString("caption"), Caption(id));
  EXPECT_EQ(*record->GetBytes("thumb"), Thumb(id));
  auto emb = record->GetArray("emb");
  ASSERT_TRUE(emb.ok());
  ASSERT_EQ(emb->count, 3u);
  EXPECT_EQ(emb->as<int32_t>()[2], static_cast<int32_t>(id * 2));
  const size_t quality = *dataset.schema().FindField("quality");
  EXPECT_EQ(*dataset.GetIndexedFloat64(id, quality), Quality(id));
  EXPECT_EQ(dataset.GetBlob(id, *dataset.schema().FindField("thumb"))->data(), Thumb(id));
}

class FieldsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriterOptions options = testing::SmallPages(3);
    options.expected_records = kRecords;  // contiguous: record k has id k
    auto written = testing::WriteSample(dir_, "train", kRecords, options);
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }

  Result<WriterSummary> Add() { return AddFields(path_, AddedSchema(), FillAdded, SmallColumnPages()); }

  // The column file of field group `group` beside shard `s` (of 3) of
  // segment generation 1.
  std::string ColumnFile(uint64_t group, uint32_t s) const {
    return io::JoinPath(dir_, format::ColumnFileName("train", 1, group, s, 3));
  }

  void RewriteManifest(const std::string& from, const std::string& to) {
    std::string text;
    ASSERT_TRUE(io::ReadFile(path_ + ".uset", 1 << 20, &text).ok());
    const std::string body = text.substr(0, text.rfind("checksum "));
    const size_t at = body.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << body;
    testing::WriteBytes(path_ + ".uset", Signed(body.substr(0, at) + to + body.substr(at + from.size())));
  }

  testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
  const std::string path_ = scratch_ / "train";
};

TEST_F(FieldsTest, AddedFieldsReadAsOneRecordWithTheShards) {
  auto before = Dataset::Open(path_);
  ASSERT_TRUE(before.ok());
  auto added = Add();
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->shard_paths.size(), 3u);
  EXPECT_EQ(added->shard_paths[1], ColumnFile(2, 1));
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = **dataset;
  EXPECT_EQ(d.version(), 2u);
  EXPECT_EQ(d.schema().num_fields(), testing::SampleSchema().num_fields() + 4);
  EXPECT_EQ(d.schema().field(11).name, "quality");
  EXPECT_NE(d.uuid(), (*before)->uuid()) << "new content, new dataset UUID";
  ASSERT_EQ(d.segments()[0].field_groups.size(), 1u);
  EXPECT_EQ(d.segments()[0].field_groups[0].fields,
            (std::vector<std::string>{"quality", "caption", "thumb", "emb"}));
  for (uint64_t id = 0; id < kRecords; ++id) ExpectSampleAndAdded(d, id);
  EXPECT_TRUE(d.Verify().ok());
  // A query on an added indexed field, and one across both files.
  auto query = Query::Parse("quality >= 20 and label == 1", d);
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  auto ids = query->Ids(d);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < kRecords; ++id) {
    if (Quality(id) >= 20 && testing::SampleRecord(id).label == 1) expected.push_back(id);
  }
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(*ids, expected);
  auto captions = Query::Parse("caption == \"caption of 7\"", d);
  ASSERT_TRUE(captions.ok());
  EXPECT_EQ(*captions->Ids(d), std::vector<uint64_t>{7});
  // The version before opens as it was, and the one opened before reads on.
  auto old = OpenVersion(path_, 1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ((*old)->schema(), testing::SampleSchema());
  EXPECT_EQ((*old)->uuid(), (*before)->uuid());
  EXPECT_EQ(*(*before)->Get(5)->GetInt64("big"), testing::SampleRecord(5).big);
}

// Fields that are all scalar-page columns: column files without a record
// table (SPEC.md 8.5), read, queried and verified as any other.
TEST_F(FieldsTest, ColumnFilesOfScalarFieldsHaveNoRecordTable) {
  const Schema scalars = *Schema::Make({Field::Float32("quality"), Field::String("caption")});
  auto added = AddFields(path_, scalars, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, Quality(id)));
    return out.SetString(1, Caption(id));
  }, SmallColumnPages());
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  for (uint32_t s = 0; s < 3; ++s) {
    auto index = index::IndexReader::Open(format::IndexPathFor(ColumnFile(2, s)), true);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(index->stride(), 0u);
  }
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = **dataset;
  for (uint64_t id = 0; id < kRecords; ++id) {
    auto record = d.Get(id);
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    EXPECT_EQ(*record->GetFloat32("quality"), Quality(id));
    EXPECT_EQ(*record->GetString("caption"), Caption(id));
    EXPECT_EQ(*record->GetString("path"), testing::SampleRecord(id).path);
  }
  EXPECT_TRUE(d.Verify().ok()) << d.Verify().ToString();
  auto query = Query::Parse("quality >= 20 and caption != \"caption of 3\"", d);
  ASSERT_TRUE(query.ok()) << query.status().ToString();
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < kRecords; ++id) {
    if (Quality(id) >= 20 && id != 3) expected.push_back(id);
  }
  EXPECT_EQ(*query->Ids(d), expected);
  // Writing them with a record table is still possible (readers before SPEC 8.5).
  AddFieldsOptions with_table = SmallColumnPages();
  with_table.writer.record_table = true;
  ASSERT_TRUE(AddFields(path_, scalars, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, Quality(id)));
    return out.SetString(1, Caption(id));
  }, with_table).ok());
  auto index = index::IndexReader::Open(format::IndexPathFor(ColumnFile(3, 0)), true);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_GT(index->stride(), 0u);
}

TEST_F(FieldsTest, AFlippedByteInAColumnIndexWithoutARecordTableIsAnErrorNamingIt) {
  const Schema scalars = *Schema::Make({Field::Float32("quality")});
  ASSERT_TRUE(AddFields(path_, scalars, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    return out.SetFloat32(0, Quality(id));
  }, SmallColumnPages()).ok());
  const std::string index = format::IndexPathFor(ColumnFile(2, 1));
  std::string bytes;
  ASSERT_TRUE(io::ReadFile(index, 1 << 24, &bytes).ok());
  for (size_t at : {format::kPreambleSize + 40, bytes.size() - format::kTrailerSize - 1}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x10;  // the header; the padding before the trailer
    testing::WriteBytes(index, damaged);
    auto opened = Dataset::Open(path_);
    const Status status = opened.ok() ? (*opened)->Verify() : opened.status();
    EXPECT_EQ(status.code(), StatusCode::kCorruption) << status.ToString();
    EXPECT_NE(status.message().find(index), std::string::npos) << status.ToString();
  }
}

TEST_F(FieldsTest, AGlobOfTheShardsLeavesTheColumnFilesOut) {
  ASSERT_TRUE(Add().ok());
  auto shards = Dataset::Open(io::JoinPath(dir_, "train-*.urec"));
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  EXPECT_EQ((*shards)->num_files(), 3u);
  EXPECT_EQ((*shards)->schema(), testing::SampleSchema());  // the shards' own fields: no manifest, no groups
  auto columns = Dataset::Open(io::JoinPath(dir_, "train-*.f000002.urec"));
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  EXPECT_EQ((*columns)->schema(), AddedSchema());  // a group's column files are a dataset of their own
  EXPECT_EQ((*columns)->size(), kRecords);
}

TEST_F(FieldsTest, AFieldAddedAgainReplacesTheOldOneInItsPlace) {
  ASSERT_TRUE(Add().ok());
  // Replace a field of the shards (label: int64 -> string) and an added one.
  const Schema replacing = *Schema::Make({Field::String("label"), Field::Float64("quality")});
  auto replaced = AddFields(path_, replacing, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetString(0, "L" + std::to_string(id)));
    return out.SetFloat64(1, -static_cast<double>(id));
  }, SmallColumnPages());
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Dataset& d = **dataset;
  EXPECT_EQ(d.schema().num_fields(), testing::SampleSchema().num_fields() + 4);
  EXPECT_EQ(d.schema().field(1).name, "label");
  EXPECT_EQ(d.schema().field(1).type, FieldType::kString);
  // A replaced field of the shards keeps its place; a replaced added field
  // moves to its new group's, the last.
  EXPECT_EQ(d.schema().field(11).name, "caption");
  EXPECT_EQ(d.schema().field(14).name, "quality");
  EXPECT_EQ(d.schema().field(14).type, FieldType::kFloat64);
  // The first group no longer supplies quality.
  ASSERT_EQ(d.segments()[0].field_groups.size(), 2u);
  EXPECT_EQ(d.segments()[0].field_groups[0].fields, (std::vector<std::string>{"caption", "thumb", "emb"}));
  auto record = d.Get(9);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(*record->GetString("label"), "L9");
  EXPECT_EQ(*record->GetFloat64("quality"), -9.0);
  EXPECT_EQ(*record->GetString("caption"), Caption(9));
  // Version 2 still has the first values.
  auto v2 = OpenVersion(path_, 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(*(*v2)->Get(9)->GetFloat32("quality"), Quality(9));
  EXPECT_EQ(*(*v2)->Get(9)->GetInt64("label"), testing::SampleRecord(9).label);
}

TEST_F(FieldsTest, DroppedFieldsAreHiddenAndTheirColumnFilesGoWithTheirVersions) {
  ASSERT_TRUE(Add().ok());
  // Drop every field of the group and one of the shards.
  auto dropped = DropFields(path_, {"quality", "caption", "thumb", "emb", "path"});
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ((*dataset)->schema().num_fields(), testing::SampleSchema().num_fields() - 1);
  EXPECT_FALSE((*dataset)->schema().FindField("path").ok());
  EXPECT_TRUE((*dataset)->segments()[0].field_groups.empty());
  EXPECT_EQ((*dataset)->segments()[0].dropped_fields.size(), 5u);
  EXPECT_EQ(*(*dataset)->Get(3)->GetInt64("big"), testing::SampleRecord(3).big);
  EXPECT_EQ(DropFields(path_, {"nope"}).status().code(), StatusCode::kKeyNotFound);
  std::vector<std::string> all;
  for (const Field& f : (*dataset)->schema().fields()) all.push_back(f.name);
  EXPECT_EQ(DropFields(path_, all).status().code(), StatusCode::kInvalidArgument);
  // Version 2 still shows them; its column files stay until gc drops it.
  EXPECT_TRUE(fs::exists(ColumnFile(2, 0)));
  GcOptions gc;
  gc.keep_last = 1;
  auto collected = CollectGarbage(path_, gc);
  ASSERT_TRUE(collected.ok()) << collected.status().ToString();
  EXPECT_FALSE(fs::exists(ColumnFile(2, 0)));
  EXPECT_FALSE(fs::exists(format::IndexPathFor(ColumnFile(2, 2))));
  // A field added again after a drop is read from its new group.
  ASSERT_TRUE(Add().ok());
  auto again = Dataset::Open(path_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto record = (*again)->Get(17);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(*record->GetString("caption"), Caption(17));
  EXPECT_EQ(*record->GetFloat32("quality"), Quality(17));
  EXPECT_FALSE(record->GetString("path").ok());
}

TEST_F(FieldsTest, AnAppendCarryingTheAddedFieldsJoinsWithoutAGroupAndEverySegmentGetsNewOnes) {
  ASSERT_TRUE(Add().ok());
  auto combined = Dataset::Open(path_);
  ASSERT_TRUE(combined.ok());
  const Schema schema = (*combined)->schema();
  WriterOptions options = testing::SmallPages(0);
  options.append = true;
  options.sync = false;
  // With every field it joins as a segment of its own.
  {
    auto writer = Writer::Create(dir_, "train", schema, options);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->SetMetadata("classes", "a\nb\nc\nd\ne").ok());
    ASSERT_TRUE((*writer)->SetMetadata("source", "train").ok());
    RecordBuilder record(schema);
    for (uint64_t id = kRecords; id < kRecords + 10; ++id) {
      const testing::SampleValues v = testing::SampleRecord(id);  // viewed until Write
      ASSERT_TRUE(testing::FillSample(record, v).ok());
      ASSERT_TRUE(record.SetFloat32("quality", Quality(id)).ok());
      ASSERT_TRUE(record.SetString("caption", Caption(id)).ok());
      ASSERT_TRUE(record.SetBytesOwned("thumb", Thumb(id)).ok());
      const int32_t emb[3] = {static_cast<int32_t>(id), -1, static_cast<int32_t>(id * 2)};
      ASSERT_TRUE(record.SetArray("emb", emb, 3).ok());
      ASSERT_TRUE((*writer)->Write(record).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  auto appended = Dataset::Open(path_);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  ASSERT_EQ((*appended)->segments().size(), 2u);
  EXPECT_TRUE((*appended)->segments()[1].field_groups.empty());
  for (uint64_t id : {0ull, 59ull, 60ull, 69ull}) ExpectSampleAndAdded(**appended, id);
  // A new field goes to both segments.
  const Schema more = *Schema::Make({Field::Int64("rank", true)});
  auto ranked = AddFields(path_, more, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    return out.SetInt64(0, static_cast<int64_t>(1000 - id));
  }, SmallColumnPages());
  ASSERT_TRUE(ranked.ok()) << ranked.status().ToString();
  auto both = Dataset::Open(path_);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ((*both)->segments()[1].field_groups.size(), 1u);
  const size_t rank = *(*both)->schema().FindField("rank");
  for (uint64_t id : {0ull, 65ull}) EXPECT_EQ(*(*both)->GetIndexedInt64(id, rank), static_cast<int64_t>(1000 - id));
  auto top = Query::Parse("rank >= 935", **both);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->Ids(**both)->size(), 66u);
}

// The files in `dir` (name -> bytes), the lock left out.
std::map<std::string, std::string> FilesOf(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || file.find(".lock") != std::string::npos) continue;
    std::string bytes;
    EXPECT_TRUE(io::ReadFile(entry.path().string(), 1 << 24, &bytes).ok()) << file;
    files[file] = std::move(bytes);
  }
  return files;
}

TEST_F(FieldsTest, PartsOfAStagedAddCommitTheBytesOfAddFields) {
  // Two segments (3 shards and some), each copied before the add.
  WriterOptions options = testing::SmallPages(0);
  options.target_shard_bytes = 1;  // a shard per record
  options.append = true;
  ASSERT_TRUE(testing::WriteSample(dir_, "train", 9, options).ok());
  const std::string parted = scratch_ / "parted";
  fs::create_directory(parted);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.is_regular_file()) fs::copy_file(entry.path(), parted / entry.path().filename());
  }
  ASSERT_TRUE(Add().ok());
  auto appended = Dataset::Open(parted + "/train");
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  const auto shards = static_cast<uint32_t>((*appended)->shards().size());
  ASSERT_GT(shards, 4u);
  // Parts of one shard each, written last to first.
  auto staged = BeginAddFields(parted, shards, SmallColumnPages().commit);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  for (uint32_t k = shards; k-- > 0;) {
    const FieldPart part{(*staged)->token(), k, shards, (*appended)->version(), k, k + 1};
    auto written = AddFieldsPart(parted + "/train", AddedSchema(), FillAdded, part, SmallColumnPages());
    ASSERT_TRUE(written.ok()) << written.status().ToString();
  }
  ASSERT_TRUE((*staged)->Commit().ok()) << (*staged)->summary().records;
  const std::map<std::string, std::string> added = FilesOf(dir_), in_parts = FilesOf(parted);
  ASSERT_EQ(added.size(), in_parts.size());
  for (const auto& [file, bytes] : added) {
    ASSERT_EQ(in_parts.count(file), 1u) << file;
    EXPECT_TRUE(in_parts.at(file) == bytes) << file;
  }
  // A part across the segments' boundary is refused, naming it.
  auto again = BeginAddFields(parted, 1, SmallColumnPages().commit);
  ASSERT_TRUE(again.ok());
  auto spanning = AddFieldsPart(parted + "/train", AddedSchema(), FillAdded, {(*again)->token(), 0, 1, 3, 2, 4},
                                SmallColumnPages());
  ASSERT_FALSE(spanning.ok());
  EXPECT_NE(spanning.status().message().find("part 0: shards [2, 4) span two segments"), std::string::npos)
      << spanning.status().message();
  // And so is, at the commit, a part that misses shards.
  ASSERT_TRUE(AddFieldsPart(parted + "/train", AddedSchema(), FillAdded, {(*again)->token(), 0, 1, 3, 0, 3},
                            SmallColumnPages()).ok());
  const Status short_commit = (*again)->Commit();
  EXPECT_NE(short_commit.message().find("the parts hold 3 shards, the dataset " + std::to_string(shards)),
            std::string::npos)
      << short_commit.message();
}

TEST_F(FieldsTest, SegmentsLeftOutGetTheDefaultsOrTheAddIsRefused) {
  // A second segment: new data that alone has a value.
  WriterOptions options = testing::SmallPages(0);
  options.append = true;
  options.sync = false;
  ASSERT_TRUE(testing::WriteSample(dir_, "train", 5, options).ok());
  const Schema score = *Schema::Make({Field::Float32("score", /*indexed=*/true)});
  AddFieldsOptions only_new = SmallColumnPages();
  only_new.segments = {1};
  std::vector<uint64_t> asked;
  const FieldValues values = [&](const Dataset&, uint64_t id, RecordBuilder& out) {
    asked.push_back(id);
    return out.SetFloat32(0, static_cast<float>(id));
  };
  auto refused = AddFields(path_, score, values, only_new);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("segments 0 get no values"), std::string::npos)
      << refused.status().message();
  only_new.segments = {2};
  EXPECT_NE(AddFields(path_, score, values, only_new).status().message().find("segment 2 does not exist"),
            std::string::npos);
  EXPECT_TRUE(asked.empty());
  only_new.segments = {1};
  only_new.defaults = [](const Dataset&, uint64_t, RecordBuilder& out) { return out.SetFloat32(0, -1.0f); };
  ASSERT_TRUE(AddFields(path_, score, values, only_new).ok());
  EXPECT_EQ(asked.size(), 5u);
  EXPECT_EQ(asked.front(), kRecords);
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const size_t field = *(*dataset)->schema().FindField("score");
  EXPECT_EQ(*(*dataset)->GetIndexedFloat64(0, field), -1.0);
  EXPECT_EQ(*(*dataset)->GetIndexedFloat64(kRecords - 1, field), -1.0);
  EXPECT_EQ(*(*dataset)->GetIndexedFloat64(kRecords + 4, field), static_cast<double>(kRecords + 4));
}

TEST_F(FieldsTest, ValuesThatFailCommitNothing) {
  auto failed = AddFields(path_, AddedSchema(), [](const Dataset& d, uint64_t id, RecordBuilder& out) {
    if (id == 33) return Status::InvalidArgument("no value");
    return FillAdded(d, id, out);
  }, SmallColumnPages());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("record 33: no value"), std::string::npos) << failed.status().message();
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok());
  EXPECT_EQ((*dataset)->version(), 1u);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".f0"), std::string::npos) << entry.path();
  }
}

// Arrays (FieldColumns) of every record: numeric columns of several widths,
// an indexed scalar (written record by record) and a bool array.
struct Arrays {
  explicit Arrays(uint64_t records) {
    for (uint64_t id = 0; id < records; ++id) {
      for (int j = 0; j < 3; ++j) u8.push_back(static_cast<uint8_t>(id * 7 + j));
      d.push_back(static_cast<double>(id) / 3);
      rank.push_back(static_cast<float>((id * 37) % 101));
      flag.push_back(static_cast<uint8_t>(id % 2));
      flag.push_back(static_cast<uint8_t>(id % 3 == 0));
    }
  }
  static Schema Columns() {
    return *Schema::Make({Field::Array("u8", FieldType::kUint8, {3}), Field::Float64("d"),
                          Field::Array("flag", FieldType::kBool, {2})});
  }
  static Schema Indexed() { return *Schema::Make({Field::Float32("rank", /*indexed=*/true)}); }
  // Field k of Columns() for records [first, first + count).
  FieldColumns OfColumns(uint64_t first, uint64_t count) const {
    return {first, count,
            {View(u8.data() + 3 * first, 3 * count), View(d.data() + first, 8 * count),
             View(flag.data() + 2 * first, 2 * count)}};
  }
  // The same values, set record by record.
  Status Set(uint64_t id, RecordBuilder& out) const {
    UREC_RETURN_IF_ERROR(out.SetValues(0, FieldType::kUint8, u8.data() + 3 * id, {3}));
    UREC_RETURN_IF_ERROR(out.SetFloat64(1, d[id]));
    return out.SetValues(2, FieldType::kBool, flag.data() + 2 * id, {2});
  }
  static std::string_view View(const void* data, size_t bytes) {
    return std::string_view(static_cast<const char*>(data), bytes);
  }
  std::vector<uint8_t> u8, flag;
  std::vector<double> d;
  std::vector<float> rank;
};

TEST_F(FieldsTest, ArraysAreWrittenColumnByColumnWithTheBytesOfAFunction) {
  // Two segments: 60 records in 3 shards, then 9 in shards of one record.
  WriterOptions options = testing::SmallPages(0);
  options.target_shard_bytes = 1;
  options.append = true;
  ASSERT_TRUE(testing::WriteSample(dir_, "train", 9, options).ok());
  const uint64_t records = kRecords + 9;
  const std::string by_column = scratch_ / "by_column";
  fs::create_directory(by_column);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.is_regular_file()) fs::copy_file(entry.path(), by_column / entry.path().filename());
  }
  const Arrays values(records);
  // Record by record into dir_, from arrays into by_column: scalar-page
  // columns, then an indexed field (record by record either way), then
  // one segment's values from arrays beside defaults, with a record table.
  auto set = [&](const Dataset&, uint64_t id, RecordBuilder& out) { return values.Set(id, out); };
  ASSERT_TRUE(AddFields(path_, Arrays::Columns(), set, SmallColumnPages()).ok());
  auto added = AddFields(by_column + "/train", Arrays::Columns(), values.OfColumns(0, records), SmallColumnPages());
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(added->records, records);
  const auto rank = [&](const Dataset&, uint64_t id, RecordBuilder& out) { return out.SetFloat32(0, values.rank[id]); };
  ASSERT_TRUE(AddFields(path_, Arrays::Indexed(), rank, SmallColumnPages()).ok());
  ASSERT_TRUE(AddFields(by_column + "/train", Arrays::Indexed(),
                        FieldColumns{0, records, {Arrays::View(values.rank.data(), 4 * records)}},
                        SmallColumnPages()).ok());
  AddFieldsOptions new_only = SmallColumnPages();
  new_only.segments = {1};
  new_only.writer.record_table = true;
  new_only.defaults = [&](const Dataset&, uint64_t id, RecordBuilder& out) { return values.Set(records - 1 - id, out); };
  ASSERT_TRUE(AddFields(path_, Arrays::Columns(), set, new_only).ok());
  ASSERT_TRUE(AddFields(by_column + "/train", Arrays::Columns(), values.OfColumns(kRecords, 9), new_only).ok());
  const std::map<std::string, std::string> expected = FilesOf(dir_), written = FilesOf(by_column);
  ASSERT_EQ(written.size(), expected.size());
  for (const auto& [file, bytes] : expected) {
    ASSERT_EQ(written.count(file), 1u) << file;
    EXPECT_TRUE(written.at(file) == bytes) << file;
  }
  auto dataset = Dataset::Open(by_column + "/train");
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_TRUE((*dataset)->Verify().ok());
  auto last = (*dataset)->Get(records - 1);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last->GetFloat64("d"), values.d[records - 1]);
  EXPECT_EQ(*last->GetFloat32("rank"), values.rank[records - 1]);
}

TEST_F(FieldsTest, ArraysThatDoNotFitAreRefusedNamingTheFieldOrRecord) {
  const Arrays values(kRecords);
  auto refused = [&](const Schema& fields, const FieldColumns& columns, const AddFieldsOptions& options) {
    auto added = AddFields(path_, fields, columns, options);
    EXPECT_FALSE(added.ok());
    return added.ok() ? std::string() : added.status().message();
  };
  const AddFieldsOptions options = SmallColumnPages();
  FieldColumns short_d = values.OfColumns(0, kRecords);
  short_d.columns[1].remove_suffix(8);
  EXPECT_NE(refused(Arrays::Columns(), short_d, options).find("the array of field 'd' holds 472 bytes, not 60 records of 8"),
            std::string::npos);
  FieldColumns two = values.OfColumns(0, kRecords);
  two.columns.pop_back();
  EXPECT_NE(refused(Arrays::Columns(), two, options).find("2 arrays for 3 fields"), std::string::npos);
  Arrays bad_bool(kRecords);
  bad_bool.flag[2 * 41 + 1] = 2;
  EXPECT_NE(refused(Arrays::Columns(), bad_bool.OfColumns(0, kRecords), options)
                .find("record 41: bool field 'flag' holds a byte other than 0 or 1"),
            std::string::npos);
  // Records the arrays lack: by columns, and record by record (an indexed field).
  EXPECT_NE(refused(Arrays::Columns(), values.OfColumns(1, kRecords - 1), options)
                .find("record 0: the arrays hold the values of records 1 to 60 (excluded)"),
            std::string::npos);
  EXPECT_NE(refused(Arrays::Indexed(), FieldColumns{0, 30, {Arrays::View(values.rank.data(), 4 * 30)}}, options)
                .find("record 30: the arrays hold the values of records 0 to 30 (excluded)"),
            std::string::npos);
  const Schema text = *Schema::Make({Field::String("text")});
  EXPECT_NE(refused(text, FieldColumns{0, kRecords, {""}}, options).find("field 'text' is string"), std::string::npos);
  // Values made for another version.
  AddFieldsOptions stale = options;
  stale.dataset_uuid = "00000000-0000-0000-0000-000000000000";
  auto meanwhile = AddFields(path_, Arrays::Columns(), values.OfColumns(0, kRecords), stale);
  ASSERT_FALSE(meanwhile.ok());
  EXPECT_EQ(meanwhile.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(meanwhile.status().message().find("another writer committed"), std::string::npos);
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok());
  EXPECT_EQ((*dataset)->version(), 1u) << "nothing committed";
  stale.dataset_uuid = (*dataset)->uuid();
  EXPECT_TRUE(AddFields(path_, Arrays::Columns(), values.OfColumns(0, kRecords), stale).ok());
}

// The values an append or a merge gives records without AddedSchema's fields.
Status SetDefaults(RecordBuilder& out) {
  UREC_RETURN_IF_ERROR(out.SetFloat32("quality", -1.0f));
  UREC_RETURN_IF_ERROR(out.SetString("caption", "none"));
  UREC_RETURN_IF_ERROR(out.SetBytesOwned("thumb", "?"));
  const int32_t emb[3] = {0, 0, 7};
  return out.SetArray("emb", emb, 3);
}

WriterOptions AppendOptions() {
  WriterOptions options = testing::SmallPages(0);
  options.append = true;
  return options;
}

// Copies the files of dataset folder `from` into a new folder `to`.
void CopyFolder(const std::string& from, const std::string& to) {
  fs::create_directory(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    if (entry.is_regular_file()) fs::copy_file(entry.path(), fs::path(to) / entry.path().filename());
  }
}

class AppendAfterAddTest : public FieldsTest {
 protected:
  // The documented order, in a copy of the dataset before the add: append 5
  // records, then add the fields, with values for segment 0 and the
  // defaults for the new one. Returns its records.
  std::vector<std::string> AppendThenAdd() {
    const std::string reference = scratch_ / "reference";
    CopyFolder(dir_, reference);
    EXPECT_TRUE(testing::WriteSample(reference, "train", 5, AppendOptions()).ok());
    AddFieldsOptions only_old = SmallColumnPages();
    only_old.segments = {0};
    only_old.defaults = [](const Dataset&, uint64_t, RecordBuilder& out) { return SetDefaults(out); };
    auto added = AddFields(reference + "/train", AddedSchema(), FillAdded, only_old);
    EXPECT_TRUE(added.ok()) << added.status().ToString();
    return *testing::DumpRecords(**Dataset::Open(reference + "/train"));
  }

  // Checks the dataset holds AppendThenAdd()'s records, the new segment's
  // defaults in a field group of its own, read through indexes and queries.
  void ExpectAppendedAfterAdd(const std::vector<std::string>& reference, uint32_t new_shards) {
    auto dataset = Dataset::Open(path_);
    ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
    const Dataset& d = **dataset;
    ASSERT_EQ(d.size(), kRecords + 5);
    EXPECT_EQ(*testing::DumpRecords(d), reference);
    ASSERT_EQ(d.segments().size(), 2u);
    const SegmentInfo& appended = d.segments()[1];
    ASSERT_EQ(appended.field_groups.size(), 1u);
    EXPECT_EQ(appended.field_groups[0].fields, (std::vector<std::string>{"quality", "caption", "thumb", "emb"}));
    EXPECT_EQ(appended.field_groups[0].paths.size(), new_shards);
    EXPECT_GT(appended.field_groups[0].generation, appended.generation);
    ExpectSampleAndAdded(d, kRecords - 1);
    auto record = d.Get(kRecords + 2);
    ASSERT_TRUE(record.ok());
    EXPECT_EQ(*record->GetFloat32("quality"), -1.0f);
    EXPECT_EQ(*record->GetString("caption"), "none");
    EXPECT_EQ(*record->GetBytes("thumb"), "?");
    EXPECT_EQ(record->GetArray("emb")->as<int32_t>()[2], 7);
    EXPECT_EQ(*record->GetString("path"), testing::SampleRecord(2).path);
    EXPECT_EQ(*d.GetIndexedFloat64(kRecords + 2, *d.schema().FindField("quality")), -1.0);
    auto defaulted = Query::Parse("quality < 0", d);
    ASSERT_TRUE(defaulted.ok());
    std::vector<uint64_t> ids(5);
    for (uint64_t k = 0; k < 5; ++k) ids[k] = kRecords + k;
    EXPECT_EQ(*defaulted->Ids(d), ids);
    EXPECT_TRUE(d.Verify().ok()) << d.Verify().ToString();
    // The version before the append opens as it was.
    auto before = OpenVersion(path_, d.version() - 2);
    ASSERT_TRUE(before.ok()) << before.status().ToString();
    EXPECT_EQ((*before)->size(), kRecords);
  }
};

TEST_F(AppendAfterAddTest, WithoutDefaultsItIsRefusedNamingTheFieldsAndTheWayThrough) {
  ASSERT_TRUE(Add().ok());
  auto refused = testing::WriteSample(dir_, "train", 5, AppendOptions());
  ASSERT_FALSE(refused.ok());
  const std::string message = refused.status().message();
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << message;
  EXPECT_NE(message.find("append to " + path_ + ": the records lack the fields quality, caption, thumb, emb"),
            std::string::npos) << message;
  EXPECT_NE(message.find("--default FIELD=VALUE"), std::string::npos) << message;
  EXPECT_EQ((*Dataset::Open(path_))->version(), 2u);
  // Defaults that do not set exactly those fields are refused too, naming them.
  WriterOptions options = AppendOptions();
  options.defaults = [](RecordBuilder& out) { return out.SetInt64("label", 1); };
  const Status unknown = testing::WriteSample(dir_, "train", 5, options).status();
  EXPECT_NE(unknown.message().find("the defaults: "), std::string::npos) << unknown.message();
  EXPECT_NE(unknown.message().find("no field named 'label'"), std::string::npos) << unknown.message();
  options.defaults = [](RecordBuilder& out) { return out.SetFloat32("quality", 0.0f); };
  const Status partial = testing::WriteSample(dir_, "train", 5, options).status();
  EXPECT_NE(partial.message().find("field 'caption' of record 0 is not set"), std::string::npos) << partial.message();
  EXPECT_EQ((*Dataset::Open(path_))->version(), 2u);
  // Defaults without an append, or for records that lack nothing.
  options.append = false;
  EXPECT_EQ(Writer::Create(dir_, "train", testing::SampleSchema(), options).status().code(),
            StatusCode::kInvalidArgument);
  options.append = true;
  const Status nothing = testing::WriteSample(scratch_ / "other", "train", 5, options).status();
  EXPECT_NE(nothing.message().find("no dataset there yet"), std::string::npos) << nothing.message();
}

TEST_F(AppendAfterAddTest, WithDefaultsTheNewSegmentGetsThemAsTheDocumentedOrderGives) {
  const std::vector<std::string> reference = AppendThenAdd();
  ASSERT_TRUE(Add().ok());
  WriterOptions options = AppendOptions();
  options.defaults = SetDefaults;
  auto appended = testing::WriteSample(dir_, "train", 5, options);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  ExpectAppendedAfterAdd(reference, 1);
  // A later add reaches both segments; a later append of the same records
  // takes the defaults again.
  ASSERT_TRUE(testing::WriteSample(dir_, "train", 5, options).ok());
  auto three = Dataset::Open(path_);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ((*three)->segments().size(), 3u);
  EXPECT_EQ(*(*three)->Get(kRecords + 7)->GetString("caption"), "none");
}

TEST_F(AppendAfterAddTest, AStagedAppendInPartsGetsTheDefaultsBesideEveryShard) {
  const std::vector<std::string> reference = AppendThenAdd();
  ASSERT_TRUE(Add().ok());
  StagedWriteOptions staged_options;
  staged_options.sync = false;
  staged_options.defaults = SetDefaults;
  auto staged = StagedWrite::Begin(dir_, "train", 2, staged_options);
  ASSERT_TRUE(staged.ok()) << staged.status().ToString();
  ASSERT_TRUE((*staged)->KeepCommitted().ok());
  const Schema schema = testing::SampleSchema();
  for (uint32_t k : {1u, 0u}) {  // records 0..2, 3..4; written last to first
    auto part = PartWriter::Create(dir_, "train", (*staged)->token(), k, 2, schema, testing::SmallPages(0));
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    ASSERT_TRUE((*part)->SetMetadata("classes", "a\nb\nc\nd\ne").ok());
    ASSERT_TRUE((*part)->SetMetadata("source", "train").ok());
    RecordBuilder record(schema);
    for (uint64_t id = k * 3; id < (k == 0 ? 3u : 5u); ++id) {
      const testing::SampleValues v = testing::SampleRecord(id);  // viewed until Write
      ASSERT_TRUE(testing::FillSample(record, v).ok());
      ASSERT_TRUE((*part)->Write(record).ok());
    }
    ASSERT_TRUE((*part)->Finish().ok());
  }
  const Status committed = (*staged)->Commit();
  ASSERT_TRUE(committed.ok()) << committed.ToString();
  ExpectAppendedAfterAdd(reference, 2);
}

TEST_F(AppendAfterAddTest, ASegmentThatLacksTheFieldsOfTheOthersIsRefusedAtOpenNamingIt) {
  ASSERT_TRUE(Add().ok());
  WriterOptions options = AppendOptions();
  options.defaults = SetDefaults;
  ASSERT_TRUE(testing::WriteSample(dir_, "train", 5, options).ok());
  // A manifest (well formed, its UUID its segments') whose new segment lacks
  // the group: no reader, loader or query gets past the open.
  auto manifest = format::ReadManifest(dir_, "train");
  ASSERT_TRUE(manifest.ok());
  std::vector<format::Segment> segments = manifest->segments;
  segments[1].groups.clear();
  testing::WriteBytes(path_ + ".uset", format::EncodeManifest(dataset::ManifestOf(manifest->generation, segments)));
  auto lacking = Dataset::Open(path_);
  ASSERT_FALSE(lacking.ok());
  EXPECT_EQ(lacking.status().code(), StatusCode::kCorruption);
  EXPECT_NE(lacking.status().message().find(": segment 1 has the fields image: bytes"), std::string::npos)
      << lacking.status().message();
  EXPECT_NE(lacking.status().message().find("emb: int32[3]"), std::string::npos) << lacking.status().message();
}

TEST_F(FieldsTest, MergeGivesInputsThatLackAddedFieldsTheDefaultsOrIsRefusedNamingThem) {
  ASSERT_TRUE(Add().ok());
  // The same fields in other groups (two adds of two fields each) merge as
  // they are, each segment with its own groups.
  const std::string grouped = scratch_ / "grouped";
  ASSERT_TRUE(testing::WriteSample(grouped, "train", 10, testing::SmallPages(1)).ok());
  for (const std::vector<size_t>& half : {std::vector<size_t>{0, 1}, std::vector<size_t>{2, 3}}) {
    const Schema schema = *Schema::Make({AddedSchema().field(half[0]), AddedSchema().field(half[1])});
    auto added = AddFields(grouped + "/train", schema, [&](const Dataset&, uint64_t id, RecordBuilder& out) {
      if (half[0] == 0) {
        UREC_RETURN_IF_ERROR(out.SetFloat32(0, Quality(id)));
        return out.SetString(1, Caption(id));
      }
      UREC_RETURN_IF_ERROR(out.SetBytesOwned(0, Thumb(id)));
      const int32_t emb[3] = {static_cast<int32_t>(id), -1, static_cast<int32_t>(id * 2)};
      return out.SetArray(1, emb, 3);
    }, SmallColumnPages());
    ASSERT_TRUE(added.ok()) << added.status().ToString();
  }
  StagedWriteOptions options;
  options.sync = false;
  auto same = MergeDatasets(scratch_ / "merged", "all", {path_, grouped + "/train"}, options);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  auto merged = Dataset::Open(scratch_ / "merged/all");
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)->segments()[1].field_groups.size(), 2u);
  ExpectSampleAndAdded(**merged, 3);
  EXPECT_EQ(*(*merged)->Get(kRecords + 3)->GetString("caption"), Caption(3));
  // An input without the fields: refused without defaults, naming them.
  const std::string plain = scratch_ / "plain";
  ASSERT_TRUE(testing::WriteSample(plain, "train", 10, testing::SmallPages(2)).ok());
  auto refused = MergeDatasets(scratch_ / "merged", "all", {plain + "/train", path_}, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("merge: the records of input 0 (" + plain +
                                            "/train) lack the fields quality, caption, thumb, emb"),
            std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("--default"), std::string::npos) << refused.status().message();
  // With them its segments get a group of defaults; the records equal those
  // of a merge with the fields added to it first (its values the defaults).
  const std::string filled = scratch_ / "filled";
  CopyFolder(plain, filled);
  ASSERT_TRUE(AddFields(filled + "/train", AddedSchema(),
                        [](const Dataset&, uint64_t, RecordBuilder& out) { return SetDefaults(out); },
                        SmallColumnPages()).ok());
  ASSERT_TRUE(MergeDatasets(scratch_ / "reference", "all", {filled + "/train", path_}, options).ok());
  options.defaults = SetDefaults;
  auto with_defaults = MergeDatasets(scratch_ / "merged", "all", {plain + "/train", path_}, options);
  ASSERT_TRUE(with_defaults.ok()) << with_defaults.status().ToString();
  auto defaulted = Dataset::Open(scratch_ / "merged/all");
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(*testing::DumpRecords(**defaulted), *testing::DumpRecords(**Dataset::Open(scratch_ / "reference/all")));
  EXPECT_EQ((*defaulted)->segments()[0].field_groups.size(), 1u);
  EXPECT_EQ(*(*defaulted)->Get(4)->GetString("caption"), "none");
  EXPECT_EQ(*(*defaulted)->Get(10 + 7)->GetString("caption"), Caption(7));
  EXPECT_TRUE((*defaulted)->Verify().ok());
  // Inputs that lack other fields, or whose fields are in another order.
  const std::string half = scratch_ / "half";
  CopyFolder(plain, half);
  const Schema first_two = *Schema::Make({AddedSchema().field(0), AddedSchema().field(1)});
  ASSERT_TRUE(AddFields(half + "/train", first_two, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetFloat32(0, Quality(id)));
    return out.SetString(1, Caption(id));
  }, SmallColumnPages()).ok());
  const Status different = MergeDatasets(scratch_ / "merged", "all", {half + "/train", path_, plain + "/train"},
                                         options).status();
  EXPECT_NE(different.message().find("must lack the same ones"), std::string::npos) << different.message();
  const std::string swapped = scratch_ / "swapped";
  CopyFolder(plain, swapped);
  const Schema other_order = *Schema::Make({AddedSchema().field(1), AddedSchema().field(0)});
  ASSERT_TRUE(AddFields(swapped + "/train", other_order, [](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_RETURN_IF_ERROR(out.SetString(0, Caption(id)));
    return out.SetFloat32(1, Quality(id));
  }, SmallColumnPages()).ok());
  const Status order = MergeDatasets(scratch_ / "merged", "all", {path_, swapped + "/train"}, options).status();
  EXPECT_NE(order.message().find("input 1 (" + swapped + "/train) has another schema"), std::string::npos)
      << order.message();
  EXPECT_EQ((*Dataset::Open(scratch_ / "merged/all"))->version(), (*defaulted)->version());
}

// --- Corruption: one case per new way to be wrong -----------------------------

TEST(FieldGroupManifestTest, EveryBadFieldGroupLineIsRefused) {
  const std::string uuid = "25661647-a09f-8738-832b-a9cd1a5612e2";
  const std::string head = "unirecord-manifest 2\ngeneration 4\nshards 1\nuuid " + uuid + "\nsegment 2 1 0 " + uuid + "\n";
  const std::string good = "fields 2 3 " + uuid + " a,b%2Cc\n";
  auto decoded = format::DecodeManifest(Signed(head + good + "drop 2 x%20y\n"), "m.uset");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->segments[0].groups.size(), 1u);
  EXPECT_EQ(decoded->segments[0].groups[0].fields, (std::vector<std::string>{"a", "b,c"}));
  EXPECT_EQ(decoded->segments[0].dropped, std::vector<std::string>{"x y"});
  EXPECT_EQ(format::EncodeManifest(*decoded).substr(0, 40), Signed(head + good + "drop 2 x%20y\n").substr(0, 40));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fields 2 3 " + uuid + "\n", "bad field group line"},
      {"fields 2 3 " + uuid + " a,,b\n", "bad field group line"},
      {"fields 2 3 " + uuid + " a,a\n", "bad field group line"},
      {"fields 2 3 " + uuid + " a%2c\n", "bad field group line"},
      {"fields 2 3 not-a-uuid a\n", "bad field group line"},
      {"fields 2 03 " + uuid + " a\n", "bad field group line"},
      {"fields 7 3 " + uuid + " a\n", "names no segment"},
      {"fields 2 2 " + uuid + " a\n", "is not after its segment"},
      {"fields 2 5 " + uuid + " a\n", "is not after its segment"},
      {good + "fields 2 3 " + uuid + " c\n", "is not after the segment's other groups"},
      {good + "fields 2 4 " + uuid + " b%2Cc\n", "supplies field 'b,c', as group 3 does"},
      {"drop 2 a\ndrop 2 b\n", "listed twice"},
      {"drop 9 a\n", "which the manifest does not list"},
      {"drop 2\n", "bad dropped fields line"},
  };
  for (const auto& [lines, problem] : cases) {
    SCOPED_TRACE(lines);
    auto refused = format::DecodeManifest(Signed(head + lines), "m.uset");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
    EXPECT_NE(refused.status().message().find("m.uset: manifest " ), std::string::npos) << refused.status().message();
    EXPECT_NE(refused.status().message().find(problem), std::string::npos) << refused.status().message();
  }
}

TEST_F(FieldsTest, AFlippedByteInAColumnFileIsAnErrorNamingIt) {
  ASSERT_TRUE(Add().ok());
  const std::string file = ColumnFile(2, 1);
  std::string bytes;
  ASSERT_TRUE(io::ReadFile(file, 1 << 24, &bytes).ok());
  bytes[format::kPreambleSize + 40] ^= 0x10;  // inside the header
  testing::WriteBytes(file, bytes);
  auto opened = Dataset::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find(file), std::string::npos) << opened.status().message();
}

TEST_F(FieldsTest, AFlippedPageByteInAColumnFileFailsItsReadsAndVerify) {
  ASSERT_TRUE(Add().ok());
  const std::string file = ColumnFile(2, 0);
  auto before = Dataset::Open(path_);
  ASSERT_TRUE(before.ok());
  const uint64_t header = 4096;  // past the header: the first pages
  std::string bytes;
  ASSERT_TRUE(io::ReadFile(file, 1 << 24, &bytes).ok());
  ASSERT_GT(bytes.size(), header + 64);
  bytes[header + 16] ^= 0x01;
  testing::WriteBytes(file, bytes);
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  const Status verified = (*dataset)->Verify();
  ASSERT_FALSE(verified.ok());
  EXPECT_NE(verified.message().find(file), std::string::npos) << verified.message();
  bool failed = false;
  for (uint64_t id = 0; id < (*dataset)->shards()[0].records; ++id) {
    auto record = (*dataset)->Get(id);
    if (record.ok()) continue;
    failed = true;
    EXPECT_NE(record.status().message().find(file), std::string::npos) << record.status().message();
  }
  EXPECT_TRUE(failed) << "no read of the damaged page failed";
}

TEST_F(FieldsTest, ADamagedShapePrefixInAColumnFileNamesTheColumnFile) {
  // A variable-shape array whose blob checksum is not verified (verify off):
  // its shape prefix is still checked before use, and the error names the
  // column file holding it, not the record's shard.
  auto tokens = Schema::Make({Field::Array("tokens", FieldType::kInt32, {kVariableDim})});
  ASSERT_TRUE(tokens.ok());
  constexpr int32_t kMark = 0x13572468;
  auto fill = [&](const Dataset&, uint64_t id, RecordBuilder& out) {
    const int32_t values[3] = {kMark + static_cast<int32_t>(id), 1, 2};
    return out.SetArray(0, values, 3);
  };
  ASSERT_TRUE(AddFields(path_, *tokens, fill, SmallColumnPages()).ok());
  const std::string file = ColumnFile(2, 0);
  std::string bytes;
  ASSERT_TRUE(io::ReadFile(file, 1 << 24, &bytes).ok());
  // Record 5's blob: extent 3, 4 bytes of zero padding, then its elements.
  const int32_t first = kMark + 5;
  std::string blob("\x03\0\0\0\0\0\0\0", 8);
  blob.append(reinterpret_cast<const char*>(&first), sizeof(first));
  const size_t at = bytes.find(blob);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 4] = 1;  // nonzero padding
  testing::WriteBytes(file, bytes);
  DatasetOptions unverified;
  unverified.verify_checksums = false;
  auto dataset = Dataset::Open(path_, unverified);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  auto record = (*dataset)->Get(5);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  auto array = record->GetArray((*dataset)->schema().num_fields() - 1);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), StatusCode::kCorruption);
  EXPECT_NE(array.status().message().find(file + ": row 5: "), std::string::npos) << array.status().message();
  EXPECT_NE(array.status().message().find("padding"), std::string::npos) << array.status().message();
  EXPECT_TRUE((*dataset)->Get(6)->GetArray((*dataset)->schema().num_fields() - 1).ok());
}

TEST_F(FieldsTest, AColumnFileOfAnotherRecordCountIsRefused) {
  ASSERT_TRUE(Add().ok());
  // Shard 0's column file in the place of shard 1's (same group, other rows).
  fs::copy_file(ColumnFile(2, 0), ColumnFile(2, 1), fs::copy_options::overwrite_existing);
  fs::copy_file(format::IndexPathFor(ColumnFile(2, 0)), format::IndexPathFor(ColumnFile(2, 1)),
                fs::copy_options::overwrite_existing);
  auto opened = Dataset::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find(ColumnFile(2, 1)), std::string::npos) << opened.status().message();
}

TEST_F(FieldsTest, AColumnFileOfAnotherDatasetIsRefused) {
  ASSERT_TRUE(Add().ok());
  auto dataset = Dataset::Open(path_);
  ASSERT_TRUE(dataset.ok());
  const std::string uuid = (*dataset)->segments()[0].field_groups[0].uuid;
  RewriteManifest(uuid, "00000000-0000-8000-8000-000000000000");
  auto opened = Dataset::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find(ColumnFile(2, 0) + ": column file of field group 2 holds dataset " + uuid),
            std::string::npos)
      << opened.status().message();
}

TEST_F(FieldsTest, AManifestNamingAFieldTheColumnFilesLackIsRefused) {
  ASSERT_TRUE(Add().ok());
  RewriteManifest(",emb\n", ",embedding\n");
  auto opened = Dataset::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruption);
  EXPECT_NE(opened.status().message().find("lacks field 'embedding'"), std::string::npos) << opened.status().message();
}

TEST_F(FieldsTest, AMissingColumnFileIsNotFoundNamingIt) {
  ASSERT_TRUE(Add().ok());
  fs::remove(ColumnFile(2, 2));
  auto opened = Dataset::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kNotFound);
  EXPECT_NE(opened.status().message().find(ColumnFile(2, 2) + ": column file missing"), std::string::npos)
      << opened.status().message();
}

// --- Crash: stopped or killed at every file-system step ------------------------

std::vector<std::string> Snapshot(const std::string& path, uint64_t version = 0) {
  auto dataset = OpenVersion(path, version);
  EXPECT_TRUE(dataset.ok()) << dataset.status().ToString();
  std::vector<std::string> seen;
  if (!dataset.ok()) return seen;
  seen.push_back((*dataset)->schema().ToString());
  for (uint64_t id = 0; id < (*dataset)->size(); ++id) {
    auto record = (*dataset)->Get(id);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    if (!record.ok()) break;
    auto quality = record->GetFloat32("quality");
    seen.push_back(std::to_string(*record->GetInt64("big")) + (quality.ok() ? std::to_string(*quality) : ""));
  }
  return seen;
}

// Runs `write` on dataset `work`/train (fresh(): a copy of the dataset before
// it) stopped, then killed, at every file-system step: the dataset opens as
// before or as after each time, its version `kept` as it was, and a rerun
// after "before" gives "after". Returns the steps.
std::vector<std::string> ExpectBeforeOrAfterAtEveryStep(const std::string& work, const std::function<void()>& fresh,
                                                        uint64_t kept, const std::function<Status()>& write) {
  fresh();
  const std::vector<std::string> old = Snapshot(work + "/train");
  const std::vector<std::string> old_kept = Snapshot(work + "/train", kept);
  std::vector<std::string> steps;
  {
    testing::CrashAtStep counter(testing::CrashAtStep::Mode::kCountOnly, 0);
    const Status done = write();
    EXPECT_TRUE(done.ok()) << done.ToString();
    steps = counter.log();
  }
  const std::vector<std::string> after = Snapshot(work + "/train");
  EXPECT_NE(after, old);
  for (auto mode : {testing::CrashAtStep::Mode::kFailFromStep, testing::CrashAtStep::Mode::kSigkillAtStep}) {
    // Killing a child at every step costs a fork each: every third step.
    const size_t stride = mode == testing::CrashAtStep::Mode::kSigkillAtStep ? 3 : 1;
    for (size_t step = 0; step < steps.size() && !::testing::Test::HasFatalFailure(); step += stride) {
      SCOPED_TRACE("stopped at step " + std::to_string(step) + ": " + steps[step]);
      fresh();
      if (mode == testing::CrashAtStep::Mode::kSigkillAtStep) {
        const pid_t child = ::fork();
        if (child == 0) {
          testing::CrashAtStep crash(mode, static_cast<int64_t>(step));
          _exit(write().ok() ? 0 : 3);
        }
        int status = 0;
        EXPECT_EQ(::waitpid(child, &status, 0), child) << "fork";
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
      } else {
        testing::CrashAtStep crash(mode, static_cast<int64_t>(step));
        (void)write();
      }
      const std::vector<std::string> seen = Snapshot(work + "/train");
      EXPECT_TRUE(seen == old || seen == after) << "a mix of before and after";
      EXPECT_EQ(Snapshot(work + "/train", kept), old_kept) << "version " << kept << " changed";
      if (seen == old) {
        const Status rerun = write();
        EXPECT_TRUE(rerun.ok()) << rerun.ToString();
        EXPECT_EQ(Snapshot(work + "/train"), after);
      }
    }
  }
  return steps;
}

TEST_F(FieldsTest, AddStoppedOrKilledAtEveryStepLeavesTheDatasetBeforeOrAfter) {
  const std::string work = scratch_ / "work";
  auto fresh = [&] {
    fs::remove_all(work);
    CopyFolder(dir_, work);
  };
  AddFieldsOptions synced = SmallColumnPages();  // every fsync a step too
  synced.writer.sync = true;
  synced.commit.sync = true;
  const std::vector<std::string> steps = ExpectBeforeOrAfterAtEveryStep(
      work, fresh, 1, [&] { return AddFields(work + "/train", AddedSchema(), FillAdded, synced).status(); });
  for (const char* kind : {"create ", "write ", "fsync ", "rename ", "unlink ", "lock "}) {
    EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [&](const std::string& s) { return s.rfind(kind, 0) == 0; }))
        << "no " << kind << "step";
  }
}

TEST_F(AppendAfterAddTest, AnAppendWithDefaultsStoppedOrKilledAtEveryStepLeavesTheDatasetBeforeOrAfter) {
  ASSERT_TRUE(Add().ok());
  const std::string work = scratch_ / "work";
  auto fresh = [&] {
    fs::remove_all(work);
    CopyFolder(dir_, work);
  };
  WriterOptions options = AppendOptions();
  options.defaults = SetDefaults;
  const std::vector<std::string> steps = ExpectBeforeOrAfterAtEveryStep(
      work, fresh, 2, [&] { return testing::WriteSample(work, "train", 5, options).status(); });
  // Among them the column files of the defaults.
  EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [](const std::string& s) {
    return s.rfind("rename ", 0) == 0 && s.find(".g000003.f000004.urec") != std::string::npos;
  }));
}

}  // namespace
}  // namespace unirecord
