// The Loader's batching of any field (LoaderOptions::fields, pipeline/
// batch_fields.h): every kind against the records read with Dataset::Get,
// padded and jagged, boxes against the mapping written out here, datasets
// without images, the refusals. Python's test_loader_fields.py compares the
// same against a torch DataLoader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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

constexpr int kRecords = 23;
constexpr int kSize = 24;

// Record i (written i-th; the writer spreads records over two shards, so
// its id differs: WrittenIndex reads i back from the path): a JPEG of (40 + 7i) x (30 + 5i), label i % 4, tokens int32 of
// length i % 6 (values 100 i + j), i % 4 boxes (some outside the image),
// category_id 10 i + b per box (box 2 left of the image), a uint8 (-1, -1) grid of (i % 3) x (i % 5),
// a float32 (2) fixed array, a float64 score, a string and a bytes field.
std::string WriteDataset(bool with_image) {
  const std::string dir = testing::MakeTempDir() + (with_image ? "/det" : "/tokens");
  std::vector<Field> fields = {Field::Int64("label", /*indexed=*/true),
                               Field::Array("tokens", FieldType::kInt32, {kVariableDim}),
                               Field::Array("boxes", FieldType::kFloat32, {kVariableDim, 4}),
                               Field::Array("category_id", FieldType::kInt64, {kVariableDim}),
                               Field::Array("grid", FieldType::kUint8, {kVariableDim, kVariableDim}),
                               Field::Array("mean", FieldType::kFloat32, {2}),
                               Field::Float64("score"),
                               Field::String("path"),
                               Field::Bytes("blob")};
  if (with_image) fields.insert(fields.begin(), Field::Bytes("image"));
  Result<Schema> schema = Schema::Make(fields);
  EXPECT_TRUE(schema.ok()) << schema.status().ToString();
  WriterOptions options;
  options.num_shards = 2;
  options.sync = false;
  Result<std::unique_ptr<Writer>> writer = Writer::Create(dir, "fields", *schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  RecordBuilder record(*schema);
  for (int i = 0; i < kRecords; ++i) {
    record.Clear();
    if (with_image) {
      SyntheticJpegSpec spec;
      spec.width = 40 + 7 * i;
      spec.height = 30 + 5 * i;
      spec.seed = static_cast<uint64_t>(i);
      Result<std::string> jpeg = EncodeSyntheticJpeg(spec);
      EXPECT_TRUE(jpeg.ok());
      EXPECT_TRUE(record.SetBytesOwned("image", *std::move(jpeg)).ok());
    }
    EXPECT_TRUE(record.SetInt64("label", i % 4).ok());
    std::vector<int32_t> tokens;
    for (int j = 0; j < i % 6; ++j) tokens.push_back(100 * i + j);
    EXPECT_TRUE(record.SetValues("tokens", FieldType::kInt32, tokens.data(), {int64_t(tokens.size())}).ok());
    std::vector<float> boxes;
    std::vector<int64_t> categories;
    for (int b = 0; b < i % 4; ++b) {
      // xywh; box 3 lies left of the image (dropped by every crop).
      const float width = 40.0f + 7 * i, height = 30.0f + 5 * i;
      const float x = b == 2 ? -50.0f : width * b / 4 + 0.5f, y = height * b / 5 + 0.25f;
      boxes.insert(boxes.end(), {x, y, width / 2, height / 2 + b});
      categories.push_back(10 * i + b);
    }
    EXPECT_TRUE(record.SetValues("boxes", FieldType::kFloat32, boxes.data(), {int64_t(categories.size()), 4}).ok());
    EXPECT_TRUE(record.SetValues("category_id", FieldType::kInt64, categories.data(),
                                 {int64_t(categories.size())}).ok());
    std::vector<uint8_t> grid(size_t(i % 3) * (i % 5));
    for (size_t k = 0; k < grid.size(); ++k) grid[k] = uint8_t(i + k);
    EXPECT_TRUE(record.SetValues("grid", FieldType::kUint8, grid.data(), {i % 3, i % 5}).ok());
    const float mean[2] = {0.5f * i, -1.0f * i};
    EXPECT_TRUE(record.SetArray("mean", mean, 2).ok());
    EXPECT_TRUE(record.SetFloat64("score", 0.25 * i).ok());
    EXPECT_TRUE(record.SetString("path", "img" + std::to_string(i)).ok());
    EXPECT_TRUE(record.SetBytesOwned("blob", std::string(size_t(i % 3), char('a' + i % 26))).ok());
    Status written = (*writer)->Write(record);
    EXPECT_TRUE(written.ok()) << written.ToString();
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  return dir;
}

using loader_testing::OpenDataset;

LoaderOptions FieldOptions() {
  LoaderOptions options = loader_testing::SmallOptions();
  options.batch_size = 5;
  options.image_size = kSize;
  options.resize_shorter = 28;
  options.threads = 3;
  options.fields = {"tokens", "grid", "mean", "score", "path", "blob"};
  options.pad_value = 7;
  return options;
}

int64_t WrittenIndex(const Dataset& ds, uint64_t id) {
  Result<Record> record = ds.Get(id);
  EXPECT_TRUE(record.ok());
  return std::stoll(std::string(record->GetString("path")->substr(3)));
}

template <typename T>
std::vector<T> Values(const ArrayView& view) {
  const T* p = static_cast<const T*>(view.data);
  return std::vector<T>(p, p + view.count);
}

// Every field of every batch of an epoch against Dataset::Get.
void CheckEpoch(const std::shared_ptr<const Dataset>& ds, const LoaderOptions& options, bool with_image) {
  Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  size_t samples = 0;
  for (;;) {
    Result<Batch> batch = (*loader)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    if (batch->empty()) break;
    const size_t n = batch->size();
    samples += n;
    EXPECT_EQ(batch->images() != nullptr, with_image);
    EXPECT_EQ(batch->crops() != nullptr, with_image);
    const BatchField* tokens = batch->field("tokens");
    const BatchField* grid = batch->field("grid");
    const BatchField* mean = batch->field("mean");
    const BatchField* score = batch->field("score");
    const BatchField* path = batch->field("path");
    const BatchField* blob = batch->field("blob");
    ASSERT_TRUE(tokens && grid && mean && score && path && blob);
    EXPECT_EQ(batch->field("label"), nullptr);
    EXPECT_EQ(mean->shape, (std::vector<int64_t>{int64_t(n), 2}));
    EXPECT_EQ(score->shape, (std::vector<int64_t>{int64_t(n)}));
    const bool pad = options.ragged == RaggedLayout::kPad;
    int64_t max_tokens = 0, max_rows = 0, max_cols = 0;
    for (size_t i = 0; i < n; ++i) {
      const int64_t id = WrittenIndex(*ds, batch->record_ids()[i]);
      max_tokens = std::max(max_tokens, id % 6);
      max_rows = std::max(max_rows, id % 3);
      max_cols = std::max(max_cols, id % 5);
    }
    if (pad) {
      EXPECT_EQ(tokens->shape, (std::vector<int64_t>{int64_t(n), max_tokens}));
      EXPECT_EQ(tokens->lengths_shape, (std::vector<int64_t>{int64_t(n)}));
      EXPECT_EQ(grid->shape, (std::vector<int64_t>{int64_t(n), max_rows, max_cols}));
      EXPECT_EQ(grid->lengths_shape, (std::vector<int64_t>{int64_t(n), 2}));
    } else {
      EXPECT_EQ(tokens->offsets[0], 0);
      EXPECT_EQ(tokens->lengths, nullptr);
      EXPECT_EQ(tokens->shape, (std::vector<int64_t>{tokens->offsets[n]}));
      EXPECT_EQ(grid->offsets[0], 0);
      EXPECT_EQ(grid->shape, (std::vector<int64_t>{grid->offsets[n]}));
    }
    for (size_t i = 0; i < n; ++i) {
      Result<Record> record = ds->Get(batch->record_ids()[i]);
      ASSERT_TRUE(record.ok());
      const uint64_t id = uint64_t(WrittenIndex(*ds, batch->record_ids()[i]));
      EXPECT_EQ(batch->labels()[i], int64_t(id % 4));
      const std::vector<int32_t> want_tokens = Values<int32_t>(*record->GetArray("tokens"));
      const auto* t = static_cast<const int32_t*>(tokens->data);
      const ArrayView grid_view = *record->GetArray("grid");
      const std::vector<uint8_t> want_grid = Values<uint8_t>(grid_view);
      const auto* g = static_cast<const uint8_t*>(grid->data);
      if (pad) {
        EXPECT_EQ(tokens->lengths[i], int64_t(want_tokens.size()));
        for (int64_t j = 0; j < max_tokens; ++j) {
          EXPECT_EQ(t[i * max_tokens + j], j < int64_t(want_tokens.size()) ? want_tokens[j] : 7) << id;
        }
        EXPECT_EQ(grid->lengths[2 * i], grid_view.shape[0]);
        EXPECT_EQ(grid->lengths[2 * i + 1], grid_view.shape[1]);
        for (int64_t r = 0; r < max_rows; ++r) {
          for (int64_t c = 0; c < max_cols; ++c) {
            const bool inside = r < grid_view.shape[0] && c < grid_view.shape[1];
            EXPECT_EQ(g[(i * max_rows + r) * max_cols + c], inside ? want_grid[r * grid_view.shape[1] + c] : 7);
          }
        }
      } else {
        EXPECT_EQ(std::vector<int32_t>(t + tokens->offsets[i], t + tokens->offsets[i + 1]), want_tokens);
        EXPECT_EQ(std::vector<uint8_t>(g + grid->offsets[i], g + grid->offsets[i + 1]), want_grid);
        EXPECT_EQ(grid->lengths[2 * i], grid_view.shape[0]);
        EXPECT_EQ(grid->lengths[2 * i + 1], grid_view.shape[1]);
      }
      EXPECT_EQ(static_cast<const float*>(mean->data)[2 * i], 0.5f * id);
      EXPECT_EQ(static_cast<const float*>(mean->data)[2 * i + 1], -1.0f * id);
      EXPECT_EQ(static_cast<const double*>(score->data)[i], 0.25 * id);
      EXPECT_EQ(path->values[i], "img" + std::to_string(id));
      EXPECT_EQ(blob->values[i], std::string(id % 3, char('a' + id % 26)));
    }
  }
  EXPECT_EQ(samples, size_t(kRecords));
}

TEST(BatchFieldsTest, PaddedAndJaggedEqualTheRecords) {
  const std::string dir = WriteDataset(true);
  LoaderOptions options = FieldOptions();
  CheckEpoch(OpenDataset(dir), options, true);
  options.ragged = RaggedLayout::kJagged;
  CheckEpoch(OpenDataset(dir), options, true);
}

// WriteDataset(true)'s records written again with image, label and path
// only, in the same order (so with the same ids), then the other fields
// added from `full` as a field group (format/SPEC.md section 1.4): the same
// dataset with its fields across a shard and its column files.
std::string WriteSplitDataset(const Dataset& full) {
  const std::string dir = testing::MakeTempDir() + "/split";
  const Schema base = *Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path")});
  WriterOptions options;
  options.num_shards = 2;
  options.sync = false;
  auto writer = Writer::Create(dir, "fields", base, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  std::vector<uint64_t> id_of(kRecords);  // by write order
  for (uint64_t id = 0; id < full.size(); ++id) id_of[size_t(WrittenIndex(full, id))] = id;
  RecordBuilder record(base);
  for (uint64_t id : id_of) {
    Result<Record> r = full.Get(id);
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(record.SetBytesOwned(0, std::string(*r->GetBytes("image"))).ok());
    EXPECT_TRUE(record.SetInt64(1, *r->GetInt64("label")).ok());
    EXPECT_TRUE(record.SetString(2, *r->GetString("path")).ok());
    EXPECT_TRUE((*writer)->Write(record).ok());
  }
  EXPECT_TRUE((*writer)->Finish().ok());
  std::vector<Field> added;
  for (const Field& f : full.schema().fields()) {
    if (!base.FindField(f.name).ok()) added.push_back(f);
  }
  AddFieldsOptions add;
  add.writer.sync = false;
  add.commit.sync = false;
  auto summary = AddFields(dir + "/fields", *Schema::Make(added), [&](const Dataset&, uint64_t id, RecordBuilder& out) {
    UREC_ASSIGN_OR_RETURN(Record r, full.Get(id));
    for (size_t k = 0; k < out.schema().num_fields(); ++k) {
      const Field& f = out.schema().field(k);
      if (f.is_array()) {
        UREC_ASSIGN_OR_RETURN(ArrayView v, r.GetArray(f.name));
        UREC_RETURN_IF_ERROR(out.SetValues(k, v.type, v.data, v.shape.ToVector()));
      } else if (f.type == FieldType::kFloat64) {
        UREC_RETURN_IF_ERROR(out.SetFloat64(k, *r.GetFloat64(f.name)));
      } else {
        UREC_ASSIGN_OR_RETURN(std::string_view bytes, r.GetBytes(f.name));
        UREC_RETURN_IF_ERROR(out.SetBytesOwned(k, std::string(bytes)));
      }
    }
    return Status::OK();
  });
  EXPECT_TRUE(summary.ok()) << summary.status().ToString();
  return dir;
}

// Batches of fields read across a shard and its column files equal those of
// the same fields stored in the shard: images, labels, ids and every field.
TEST(BatchFieldsTest, FieldsAcrossShardAndColumnFilesBatchAsInOneShard) {
  const std::shared_ptr<const Dataset> full = OpenDataset(WriteDataset(true));
  const std::shared_ptr<const Dataset> split = OpenDataset(WriteSplitDataset(*full));
  ASSERT_EQ(split->schema().num_fields(), full->schema().num_fields());
  ASSERT_EQ(split->segments()[0].field_groups.size(), 1u);
  for (RaggedLayout ragged : {RaggedLayout::kPad, RaggedLayout::kJagged}) {
    LoaderOptions options = FieldOptions();
    options.ragged = ragged;
    options.boxes_field = "boxes";
    options.box_aligned = {"category_id"};
    auto a = Loader::Create(full, options);
    auto b = Loader::Create(split, options);
    ASSERT_TRUE(a.ok() && b.ok()) << b.status().ToString();
    for (size_t batches = 0;; ++batches) {
      Result<Batch> x = (*a)->Next();
      Result<Batch> y = (*b)->Next();
      ASSERT_TRUE(x.ok() && y.ok()) << y.status().ToString();
      ASSERT_EQ(x->size(), y->size());
      if (x->empty()) {
        EXPECT_GT(batches, 3u);
        break;
      }
      const size_t n = x->size();
      EXPECT_EQ(std::memcmp(x->record_ids(), y->record_ids(), n * sizeof(uint64_t)), 0);
      EXPECT_EQ(std::memcmp(x->labels(), y->labels(), n * sizeof(int64_t)), 0);
      EXPECT_EQ(std::memcmp(x->images(), y->images(), n * 3 * size_t(kSize) * kSize), 0);
      ASSERT_EQ(x->fields().size(), y->fields().size());
      for (size_t k = 0; k < x->fields().size(); ++k) {
        const BatchField& f = x->fields()[k];
        const BatchField& g = y->fields()[k];
        SCOPED_TRACE(f.name);
        EXPECT_EQ(f.name, g.name);
        EXPECT_EQ(f.shape, g.shape);
        EXPECT_EQ(f.lengths_shape, g.lengths_shape);
        EXPECT_EQ(f.values, g.values);
        int64_t count = 1;
        for (int64_t d : f.shape) count *= d;
        if (f.data != nullptr && f.offsets == nullptr) {
          EXPECT_EQ(std::memcmp(f.data, g.data, size_t(count) * NumericWidth(f.type)), 0);
        }
        if (f.offsets != nullptr) {
          EXPECT_EQ(std::memcmp(f.offsets, g.offsets, (n + 1) * sizeof(int64_t)), 0);
          EXPECT_EQ(std::memcmp(f.data, g.data, size_t(f.offsets[n]) * NumericWidth(f.type)), 0);
        }
        int64_t lengths = 1;
        for (int64_t d : f.lengths_shape) lengths *= d;
        if (f.lengths != nullptr) {
          EXPECT_EQ(std::memcmp(f.lengths, g.lengths, size_t(lengths) * sizeof(int64_t)), 0);
        }
      }
    }
  }
}

TEST(BatchFieldsTest, DatasetWithoutImages) {
  const std::string dir = WriteDataset(false);
  LoaderOptions options = FieldOptions();
  options.image_field = "";
  CheckEpoch(OpenDataset(dir), options, false);
  options.ragged = RaggedLayout::kJagged;
  options.threads = 1;
  CheckEpoch(OpenDataset(dir), options, false);
}

// The Loader checks a shard for truncation once per claim of samples, not
// per read (io::TruncationCheckScope): a shard truncated in place under its
// mapping is still a Corruption naming it, never SIGBUS, with and without
// images (1 and 16 samples per claim).
TEST(BatchFieldsTest, ShardTruncatedInPlaceIsAnErrorNotACrash) {
  for (bool with_image : {false, true}) {
    const std::string dir = WriteDataset(with_image);
    std::shared_ptr<const Dataset> ds = OpenDataset(dir);
    for (const ShardInfo& shard : ds->shards()) ASSERT_EQ(::truncate(shard.path.c_str(), 4096), 0);
    LoaderOptions options = FieldOptions();
    if (!with_image) options.image_field = "";
    Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
    ASSERT_TRUE(loader.ok()) << loader.status().ToString();
    Result<Batch> batch = (*loader)->Next();
    ASSERT_FALSE(batch.ok());
    EXPECT_EQ(batch.status().code(), StatusCode::kCorruption) << batch.status().ToString();
    EXPECT_NE(batch.status().message().find("truncated in place from "), std::string::npos)
        << batch.status().message();
    EXPECT_NE(batch.status().message().find(".urec"), std::string::npos) << batch.status().message();
  }
}

// The box mapping written out once more, in the most direct form.
std::vector<float> MapReference(const float* box, const int32_t* crop, BoxFormat format) {
  double x0 = box[0], y0 = box[1], x1 = box[2], y1 = box[3];
  if (format == BoxFormat::kXYWH) x1 += x0, y1 += y0;
  const double sx = double(kSize) / crop[2], sy = double(kSize) / crop[3];
  double a = (x0 - crop[0]) * sx, b = (x1 - crop[0]) * sx;
  if (crop[4]) a = kSize - a, b = kSize - b, std::swap(a, b);
  auto clip = [](double v) { return std::min(std::max(v, 0.0), double(kSize)); };
  const double c = clip((y0 - crop[1]) * sy), d = clip((y1 - crop[1]) * sy);
  a = clip(a), b = clip(b);
  if (!(b > a && d > c)) return {};
  if (format == BoxFormat::kXYWH) return {float(a), float(c), float(b - a), float(d - c)};
  return {float(a), float(c), float(b), float(d)};
}

TEST(BatchFieldsTest, BoxesFollowTheCropAndDropWithTheirCategories) {
  const std::string dir = WriteDataset(true);
  for (BoxFormat format : {BoxFormat::kXYWH, BoxFormat::kXYXY}) {
    for (LoaderTransform transform : {LoaderTransform::kRandomResizedCrop, LoaderTransform::kCenterCrop}) {
      const std::shared_ptr<const Dataset> ds = OpenDataset(dir);
      LoaderOptions options = FieldOptions();
      options.fields = {};
      options.transform = transform;
      options.boxes_field = "boxes";
      options.box_format = format;
      options.box_aligned = {"category_id"};
      options.pad_value = -1;
      Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
      ASSERT_TRUE(loader.ok()) << loader.status().ToString();
      size_t kept_total = 0, dropped_total = 0;
      for (;;) {
        Result<Batch> batch = (*loader)->Next();
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        if (batch->empty()) break;
        const BatchField* boxes = batch->field("boxes");
        const BatchField* categories = batch->field("category_id");
        ASSERT_TRUE(boxes && categories);
        ASSERT_EQ(boxes->shape.size(), 3u);
        const int64_t max_boxes = boxes->shape[1];
        EXPECT_EQ(categories->shape, (std::vector<int64_t>{int64_t(batch->size()), max_boxes}));
        for (size_t i = 0; i < batch->size(); ++i) {
          const int32_t* crop = batch->crops() + 5 * i;
          Result<Record> record = ds->Get(batch->record_ids()[i]);
          const uint64_t id = uint64_t(WrittenIndex(*ds, batch->record_ids()[i]));
          const std::vector<float> stored = Values<float>(*record->GetArray("boxes"));
          std::vector<float> want;
          std::vector<int64_t> want_categories;
          for (size_t b = 0; b < stored.size() / 4; ++b) {
            const std::vector<float> mapped = MapReference(&stored[4 * b], crop, format);
            if (mapped.empty()) {
              ++dropped_total;
              continue;
            }
            want.insert(want.end(), mapped.begin(), mapped.end());
            want_categories.push_back(int64_t(10 * id + b));
          }
          kept_total += want_categories.size();
          ASSERT_EQ(boxes->lengths[i], int64_t(want_categories.size())) << id;
          ASSERT_EQ(categories->lengths[i], int64_t(want_categories.size())) << id;
          const float* got = static_cast<const float*>(boxes->data) + i * max_boxes * 4;
          const int64_t* got_categories = static_cast<const int64_t*>(categories->data) + i * max_boxes;
          for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-4) << id;
          for (size_t k = 0; k < want_categories.size(); ++k) EXPECT_EQ(got_categories[k], want_categories[k]);
          for (int64_t k = int64_t(want_categories.size()); k < max_boxes; ++k) {
            EXPECT_EQ(got_categories[k], -1);
            EXPECT_EQ(got[4 * k], -1.0f);
          }
        }
      }
      EXPECT_GT(kept_total, 0u);
      // Box 2 of every record with 3 boxes at least (read as xyxy it is not empty).
      if (format == BoxFormat::kXYWH) EXPECT_GT(dropped_total, 0u);
    }
  }
}

TEST(BatchFieldsTest, MapBoxesShiftsScalesFlipsAndClips) {
  // A 100 x 50 window at (10, 20) resized to 200 x 100: scale 2.
  CropWindow window{10, 20, 100, 50, false};
  const float in[12] = {10, 20, 50, 25,  // the window's top-left quarter
                        0, 0, 5, 5,      // outside: dropped
                        100, 60, 50, 30};  // crosses the right edge: clipped
  float out[12];
  uint8_t keep[3];
  ASSERT_EQ(MapBoxes(window, 200, 100, BoxFormat::kXYWH, in, 3, out, keep), 2u);
  EXPECT_EQ(std::vector<uint8_t>(keep, keep + 3), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(std::vector<float>(out, out + 8), (std::vector<float>{0, 0, 100, 50, 180, 80, 20, 20}));
  window.flip = true;
  ASSERT_EQ(MapBoxes(window, 200, 100, BoxFormat::kXYWH, in, 3, out, keep), 2u);
  EXPECT_EQ(std::vector<float>(out, out + 8), (std::vector<float>{100, 0, 100, 50, 0, 80, 20, 20}));
  const float nan_box[4] = {NAN, 0, 10, 10};
  EXPECT_EQ(MapBoxes(window, 200, 100, BoxFormat::kXYXY, nan_box, 1, out, keep), 0u);
}

TEST(BatchFieldsTest, ResumeAndRanksKeepTheFields) {
  const std::string dir = WriteDataset(true);
  const std::shared_ptr<const Dataset> ds = OpenDataset(dir);
  LoaderOptions options = FieldOptions();
  options.sampler.num_shards = 4;
  std::vector<uint64_t> all;
  for (uint32_t rank = 0; rank < 4; ++rank) {
    options.sampler.shard_id = rank;
    Result<std::unique_ptr<Loader>> first = Loader::Create(ds, options);
    ASSERT_TRUE(first.ok());
    Result<Batch> batch = (*first)->Next();
    ASSERT_TRUE(batch.ok() && !batch->empty());
    const SamplerState state = (*first)->state();
    std::vector<std::vector<int32_t>> expected;
    std::vector<uint64_t> expected_ids;
    for (;;) {
      Result<Batch> b = (*first)->Next();
      ASSERT_TRUE(b.ok());
      if (b->empty()) break;
      const BatchField* tokens = b->field("tokens");
      const auto* t = static_cast<const int32_t*>(tokens->data);
      expected.emplace_back(t, t + b->size() * tokens->shape[1]);
      expected_ids.insert(expected_ids.end(), b->record_ids(), b->record_ids() + b->size());
    }
    Result<std::unique_ptr<Loader>> resumed = Loader::Create(ds, options);
    ASSERT_TRUE(resumed.ok());
    ASSERT_TRUE((*resumed)->Restore(state).ok());
    for (size_t k = 0;; ++k) {
      Result<Batch> b = (*resumed)->Next();
      ASSERT_TRUE(b.ok());
      if (b->empty()) {
        EXPECT_EQ(k, expected.size());
        break;
      }
      const BatchField* tokens = b->field("tokens");
      const auto* t = static_cast<const int32_t*>(tokens->data);
      ASSERT_LT(k, expected.size());
      EXPECT_EQ(std::vector<int32_t>(t, t + b->size() * tokens->shape[1]), expected[k]);
    }
    all.insert(all.end(), batch->record_ids(), batch->record_ids() + batch->size());
    all.insert(all.end(), expected_ids.begin(), expected_ids.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), size_t(kRecords));  // the ranks cover every record
}

TEST(BatchFieldsTest, RefusesBadFieldOptions) {
  const std::string dir = WriteDataset(true);
  const std::shared_ptr<const Dataset> ds = OpenDataset(dir);
  auto refused = [&](LoaderOptions options, StatusCode code, const std::string& words) {
    Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, options);
    ASSERT_FALSE(loader.ok());
    EXPECT_EQ(loader.status().code(), code) << loader.status().ToString();
    EXPECT_NE(loader.status().message().find(words), std::string::npos) << loader.status().ToString();
  };
  LoaderOptions options = FieldOptions();
  options.fields = {"nope"};
  refused(options, StatusCode::kKeyNotFound, "nope");
  options.fields = {"tokens", "tokens"};
  refused(options, StatusCode::kInvalidArgument, "named twice");
  {  // naming the image field in `fields` is harmless: it is batched as the images
    LoaderOptions with_image = options;
    with_image.fields = {"image", "tokens"};
    Result<std::unique_ptr<Loader>> loader = Loader::Create(ds, with_image);
    ASSERT_TRUE(loader.ok()) << loader.status().ToString();
    Result<Batch> batch = (*loader)->Next();
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_EQ(batch->fields().size(), 1u);
    EXPECT_EQ(batch->fields()[0].name, "tokens");
    EXPECT_NE(batch->images(), nullptr);
  }
  options.fields = {"tokens"};
  options.pad_value = 0.5;
  refused(options, StatusCode::kInvalidArgument, "pad_value");
  options.pad_value = 0;
  options.boxes_field = "tokens";
  refused(options, StatusCode::kInvalidArgument, "float32 (-1, 4)");
  options.boxes_field = "boxes";
  options.box_aligned = {"mean"};
  refused(options, StatusCode::kInvalidArgument, "box_aligned");
  options.boxes_field = "";
  options.box_aligned = {"category_id"};
  refused(options, StatusCode::kInvalidArgument, "without a boxes field");
  options = FieldOptions();
  options.image_field = "";
  options.boxes_field = "boxes";
  refused(options, StatusCode::kInvalidArgument, "needs an image field");
  options.boxes_field = "";
  options.masks = {"grid"};
  refused(options, StatusCode::kInvalidArgument, "needs an image field");
  options = FieldOptions();
  options.masks = {"tokens"};
  refused(options, StatusCode::kInvalidArgument, "a mask is a uint8 (height, width) array");
  EXPECT_EQ(*ParseRaggedLayout("jagged"), RaggedLayout::kJagged);
  EXPECT_FALSE(ParseRaggedLayout("ragged").ok());
  EXPECT_EQ(*ParseBoxFormat("xyxy"), BoxFormat::kXYXY);
  EXPECT_FALSE(ParseBoxFormat("cxcywh").ok());
}

// A box count that disagrees with an aligned field is a bad record: named,
// and skipped with on_bad_record = kSkip.
TEST(BatchFieldsTest, MisalignedBoxesAreBadRecords) {
  const std::string dir = testing::MakeTempDir() + "/misaligned";
  Result<Schema> schema = Schema::Make({Field::Bytes("image"), Field::Array("boxes", FieldType::kFloat32, {-1, 4}),
                                        Field::Array("category_id", FieldType::kInt64, {-1})});
  WriterOptions wo;  // one shard: ids are the written order
  wo.sync = false;
  auto writer = Writer::Create(dir, "m", *schema, wo);
  ASSERT_TRUE(writer.ok());
  RecordBuilder record(*schema);
  for (int i = 0; i < 4; ++i) {
    SyntheticJpegSpec spec;
    spec.width = spec.height = 48;
    record.Clear();
    ASSERT_TRUE(record.SetBytesOwned("image", *EncodeSyntheticJpeg(spec)).ok());
    const float box[4] = {1, 1, 5, 5};
    const int64_t categories[2] = {1, 2};
    ASSERT_TRUE(record.SetValues("boxes", FieldType::kFloat32, box, {1, 4}).ok());
    ASSERT_TRUE(record.SetValues("category_id", FieldType::kInt64, categories, {i == 2 ? 2 : 1}).ok());
    ASSERT_TRUE((*writer)->Write(record).ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  LoaderOptions options;
  options.image_size = 16;
  options.batch_size = 4;
  // A label field named but missing is an error; the default one, missing,
  // means no labels (this dataset has none, as a COCO conversion's).
  options.label_field = "labels";
  options.boxes_field = "boxes";
  Result<std::unique_ptr<Loader>> misnamed = Loader::Create(OpenDataset(dir), options);
  ASSERT_FALSE(misnamed.ok());
  EXPECT_NE(misnamed.status().message().find("labels"), std::string::npos) << misnamed.status().ToString();
  options.label_field = LoaderOptions().label_field;
  options.box_aligned = {"category_id"};
  options.sampler.order = SampleOrder::kSequential;
  auto loader = Loader::Create(OpenDataset(dir), options);
  ASSERT_TRUE(loader.ok()) << loader.status().ToString();
  Result<Batch> batch = (*loader)->Next();
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.status().message().find("record 2"), std::string::npos) << batch.status().ToString();
  EXPECT_NE(batch.status().message().find("'category_id' has 2 rows"), std::string::npos);
  options.on_bad_record = OnBadRecord::kSkip;
  loader = Loader::Create(OpenDataset(dir), options);
  ASSERT_TRUE(loader.ok());
  batch = (*loader)->Next();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->labels(), nullptr);
  EXPECT_EQ(std::vector<uint64_t>(batch->record_ids(), batch->record_ids() + 4), (std::vector<uint64_t>{0, 1, 3, 3}));
  EXPECT_EQ((*loader)->stats().skipped, 1u);
}

}  // namespace
}  // namespace unirecord
