// The read plan: a loader reads and verifies only the fields its later
// stages use. A loader of labels over a JPEG dataset touches no image byte
// (a damaged image goes unseen with verify_checksums on, while a loader of
// the images reports it), and a field added in a column file is read only
// by loaders that batch it.
#include "pipeline/read_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "convert/synthetic_images.h"
#include "pipeline/loader_testing.h"
#include "unirecord/fields.h"
#include "unirecord/loader.h"
#include "unirecord/writer.h"
#include "util/files_testing.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using namespace loader_testing;

constexpr uint64_t kDamaged = 9;

// Flips a byte in the middle of `value` in whichever of `files` holds it;
// returns that file.
std::string Damage(const std::vector<std::string>& files, const std::string& value) {
  std::string damaged;
  for (const std::string& path : files) {
    std::string bytes = testing::ReadBytes(path);
    const size_t at = bytes.find(value);
    if (at == std::string::npos) continue;
    EXPECT_TRUE(damaged.empty()) << "in two files";
    bytes[at + value.size() / 2] ^= 0x5a;
    testing::WriteBytes(path, bytes);
    damaged = path;
  }
  EXPECT_FALSE(damaged.empty()) << "in no file";
  return damaged;
}

std::vector<std::string> ShardFiles(const Dataset& dataset) {
  std::vector<std::string> paths;
  for (const ShardInfo& shard : dataset.shards()) paths.push_back(shard.path);
  return paths;
}

// kRecords small JPEGs, a label that is not indexed (read from the scalar
// page) and a note per record (a blob).
std::string WriteUnindexedLabels(std::vector<std::string>* notes) {
  const std::string dir = testing::MakeTempDir() + "/unindexed";
  const Schema schema =
      *Schema::Make({Field::Bytes("image"), Field::Int64("label", /*indexed=*/false), Field::Bytes("note")});
  WriterOptions options;
  options.sync = false;
  auto writer = Writer::Create(dir, "test", schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(schema);
  for (int i = 0; i < kRecords; ++i) {
    SyntheticJpegSpec spec;
    spec.width = 40 + i;
    spec.height = 36;
    spec.seed = static_cast<uint64_t>(i);
    notes->push_back("<the note of record " + std::to_string(i) + ">");
    EXPECT_TRUE(record.SetBytesOwned(0, *EncodeSyntheticJpeg(spec)).ok());
    EXPECT_TRUE(record.SetInt64(1, i % 5).ok());
    EXPECT_TRUE(record.SetBytes(2, notes->back()).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

// Every batch of epoch 0: the first error, else OK, with the labels and
// record ids seen (in order).
Status ReadEpoch(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options, std::vector<int64_t>* labels,
                 std::vector<uint64_t>* ids) {
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(std::move(dataset), options));
  for (;;) {
    UREC_ASSIGN_OR_RETURN(Batch batch, loader->Next());
    if (batch.empty()) return Status::OK();
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch.labels() != nullptr) labels->push_back(batch.labels()[i]);
      ids->push_back(batch.record_ids()[i]);
    }
  }
}

LoaderOptions LabelsOnly() {
  LoaderOptions options = SmallOptions();
  options.image_field.clear();
  options.sampler.order = SampleOrder::kSequential;
  return options;
}

TEST(ReadPlanTest, ALoaderOfLabelsTouchesNoImageByte) {
  TestDataset data = WriteDataset("labels_only");
  Damage(ShardFiles(*OpenDataset(data.dir)), data.jpegs[kDamaged]);
  std::shared_ptr<const Dataset> dataset = OpenDataset(data.dir);
  ASSERT_TRUE(dataset->options().verify_checksums);

  std::vector<int64_t> labels;
  std::vector<uint64_t> ids;
  Status read = ReadEpoch(dataset, LabelsOnly(), &labels, &ids);
  ASSERT_TRUE(read.ok()) << read.ToString();
  ASSERT_EQ(ids.size(), size_t(kRecords));
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], i);
    EXPECT_EQ(labels[i], int64_t(i % 5));
  }

  // A loader that uses the images reads the damage: with the image path
  // (image and label alone) and through Records (a batched field).
  LoaderOptions images = SmallOptions();
  images.sampler.order = SampleOrder::kSequential;
  LoaderOptions images_and_paths = images;
  images_and_paths.fields = {"path"};
  for (const LoaderOptions& options : {images, images_and_paths}) {
    labels.clear();
    ids.clear();
    Status damaged = ReadEpoch(dataset, options, &labels, &ids);
    EXPECT_EQ(damaged.code(), StatusCode::kCorruption) << damaged.ToString();
    EXPECT_NE(damaged.message().find("record " + std::to_string(kDamaged)), std::string::npos) << damaged.message();
  }
  fs::remove_all(data.dir);
}

TEST(ReadPlanTest, AFieldAddedInAColumnFileIsReadOnlyWhenBatched) {
  TestDataset data = WriteDataset("column_file");
  AddFieldsOptions add;
  add.writer.sync = false;
  add.commit.sync = false;
  auto thumb = [](uint64_t id) { return "<the thumbnail of record " + std::to_string(id) + ">"; };
  auto added = AddFields(data.dir + "/test", *Schema::Make({Field::Bytes("thumb")}),
                         [&](const Dataset&, uint64_t id, RecordBuilder& out) {
                           return out.SetBytesOwned(0, thumb(id));
                         }, add);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  std::shared_ptr<const Dataset> dataset = OpenDataset(data.dir);
  ASSERT_EQ(dataset->segments()[0].field_groups.size(), 1u);
  const std::string column_file = Damage(dataset->segments()[0].field_groups[0].paths, thumb(kDamaged));
  dataset = OpenDataset(data.dir);

  std::vector<int64_t> labels;
  std::vector<uint64_t> ids;
  LoaderOptions paths = LabelsOnly();
  paths.fields = {"path"};
  Status read = ReadEpoch(dataset, paths, &labels, &ids);
  EXPECT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(ids.size(), size_t(kRecords));

  LoaderOptions thumbs = LabelsOnly();
  thumbs.fields = {"thumb"};
  Status damaged = ReadEpoch(dataset, thumbs, &labels, &ids);
  EXPECT_EQ(damaged.code(), StatusCode::kCorruption) << damaged.ToString();
  EXPECT_NE(damaged.message().find("record " + std::to_string(kDamaged)), std::string::npos) << damaged.message();
  EXPECT_NE(damaged.message().find(column_file), std::string::npos) << damaged.message();
  fs::remove_all(data.dir);
}

// Image and label alone (no batched field): a label that is not indexed is
// read from its scalar page, not with the whole record.
TEST(ReadPlanTest, AnImageLoaderReadsALabelThatIsNotIndexedAlone) {
  std::vector<std::string> notes;
  const std::string dir = WriteUnindexedLabels(&notes);
  Damage(ShardFiles(*OpenDataset(dir)), notes[kDamaged]);
  std::shared_ptr<const Dataset> dataset = OpenDataset(dir);
  ASSERT_EQ(dataset->Get(kDamaged).status().code(), StatusCode::kCorruption);  // the whole record
  LoaderOptions images = SmallOptions();
  images.sampler.order = SampleOrder::kSequential;
  std::vector<int64_t> labels;
  std::vector<uint64_t> ids;
  Status read = ReadEpoch(dataset, images, &labels, &ids);
  ASSERT_TRUE(read.ok()) << read.ToString();
  ASSERT_EQ(labels.size(), size_t(kRecords));
  for (size_t i = 0; i < labels.size(); ++i) EXPECT_EQ(labels[i], int64_t(ids[i] % 5));
  fs::remove_all(fs::path(dir).parent_path());
}

}  // namespace
}  // namespace unirecord
