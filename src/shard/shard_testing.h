// Helpers of the shard layer's own tests (shard_writer_test.cc,
// shard_reader_test.cc): one shard and its index written with ShardWriter
// alone (no Writer, no manifest), and surgical edits of the written files
// that keep every checksum but the one a test means to break.
#ifndef UNIRECORD_SHARD_SHARD_TESTING_H_
#define UNIRECORD_SHARD_SHARD_TESTING_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/array_values.h"
#include "format/checksum.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/fixed_parts.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "index/index_file.h"
#include "index/record_table.h"
#include "shard/shard_reader.h"
#include "shard/shard_writer.h"
#include "util/files_testing.h"

namespace unirecord::shard::testing {

using unirecord::testing::ReadBytes;
using unirecord::testing::WriteBytes;

// Fields: 0 image bytes, 1 label int64 (indexed), 2 path string and 3 score
// float32 (scalar-page columns), 4 text bytes (zstd), 5 tokens int32[-1]
// (blobs: image, text, tokens).
inline Schema TestSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", true), Field::String("path"),
                       Field::Float32("score"), Field::Bytes("text", BlobCompression::kZstd),
                       Field::Array("tokens", FieldType::kInt32, {-1})})
      .value();
}

// Scalar-page columns only (path, score): a shard that needs no record
// table (SPEC.md 8.5).
inline Schema ColumnOnlySchema() { return Schema::Make({Field::String("path"), Field::Float32("score")}).value(); }

// Fixed-width numeric columns only, of widths that leave padding between
// them in a scalar page: rows ShardWriter::AddColumns takes. Their values
// are TestRecordValues' generic ones.
inline Schema NumericColumnSchema() {
  return Schema::Make({Field::Array("u8", FieldType::kUint8, {3}), Field::Float64("d"), Field::Int32("i"),
                       Field::Array("flag", FieldType::kBool, {2}), Field::Float32("score")})
      .value();
}

// Blobs and scalars only: no scalar-page column.
inline Schema NoColumnSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", true)}).value();
}

// Record k's values, a pure function of k.
struct TestValues {
  std::string image;
  int64_t label = 0;
  std::string path;
  float score = 0;
  std::string text;
  std::vector<int32_t> tokens;
};

inline TestValues TestRecord(uint64_t k) {
  TestValues v;
  v.image.resize(50 + (k * 613) % 900);
  for (size_t i = 0; i < v.image.size(); ++i) v.image[i] = static_cast<char>((k * 29 + i * 13) & 0xFF);
  v.label = static_cast<int64_t>((k * 7) % 5) - 2;  // repeats, out of order: the sorted index has work
  v.path = "class" + std::to_string(k % 3) + "/img_" + std::to_string(k) + ".jpg";
  v.score = static_cast<float>(k) * 0.5f;
  // Compressible but not one repeated byte, so that zstd codes a real block.
  for (uint64_t i = 0; i < 40 + k % 9; ++i) v.text += "word" + std::to_string((i * k) % 11) + " ";
  for (uint64_t i = 0; i < k % 6; ++i) v.tokens.push_back(static_cast<int32_t>(k * 100 + i));
  return v;
}

// One record's values as ShardWriter takes them (what RecordBuilder makes).
class TestRecordValues {
 public:
  TestRecordValues(const Schema& schema, uint64_t k) : values_(schema), v_(TestRecord(k)) {
    for (size_t f = 0; f < schema.num_fields(); ++f) {
      const Field& field = schema.field(f);
      format::RecordValues::Slot& slot = values_.slots[f];
      slot.set = true;
      if (field.name == "image") {
        slot.value = v_.image;
      } else if (field.name == "label") {
        format::StoreLE<int64_t>(slot.scalar, v_.label);
        slot.value = std::string_view(reinterpret_cast<const char*>(slot.scalar), 8);
        slot.indexed_bits = format::IndexedBitsOf(field.type, slot.scalar);
      } else if (field.name == "path") {
        slot.value = v_.path;
      } else if (field.name == "score") {
        std::memcpy(slot.scalar, &v_.score, 4);
        slot.value = std::string_view(reinterpret_cast<const char*>(slot.scalar), 4);
      } else if (field.name == "text") {
        slot.value = v_.text;
      } else if (field.name == "tokens") {
        format::EncodeVarArray(field, {static_cast<int64_t>(v_.tokens.size())},
                               std::string_view(reinterpret_cast<const char*>(v_.tokens.data()), 4 * v_.tokens.size()),
                               &slot.owned);
        slot.value = slot.owned;
      } else {
        // Any other field: a fixed-shape numeric, bytes a function of k and f.
        slot.owned.resize(NumericWidth(field.type) * static_cast<size_t>(field.num_elements()));
        for (size_t j = 0; j < slot.owned.size(); ++j) {
          slot.owned[j] = static_cast<char>(field.type == FieldType::kBool ? (k + j) % 2 : (k * 31 + f * 7 + j) & 0xFF);
        }
        slot.value = slot.owned;
      }
    }
  }
  const format::RecordValues& values() const { return values_; }

 private:
  format::RecordValues values_;
  TestValues v_;
};

inline format::Uuid TestUuid(uint8_t seed) {
  format::Uuid uuid{};
  for (size_t i = 0; i < uuid.size(); ++i) uuid[i] = static_cast<uint8_t>(seed * 17 + i);
  return uuid;
}

struct ShardSpec {
  Schema schema = TestSchema();
  uint64_t records = 30;
  PageSettings pages{4 << 10, 256, 3};  // small: a few dozen records span many pages
  format::Metadata metadata{{"classes", "a\nb"}};
  // false: no record table where the schema allows it (SPEC.md 8.5).
  bool record_table = true;
  // > 0: the rows go through ShardWriter::AddColumns (the schema allows
  // it), at most this many a call; 0: Add, row by row.
  uint64_t column_chunk = 0;
  // Applied to the values ShardWriter::Finalize writes (the ones a Writer
  // would give: shard 0 of 1 of dataset TestUuid(1)).
  std::function<void(format::ShardHeaderValues&, format::IndexHeaderValues&)> edit;
};

struct WrittenShard {
  std::string shard_path;
  std::string index_path;
  uint64_t shard_file_length = 0;
  uint64_t footer_checksum = 0;
};

// Writes the shard DIR/NAME-00000-of-00001.g000001.urec and its index.
inline Result<WrittenShard> WriteTestShard(const std::string& dir, const ShardSpec& spec) {
  ShardContext context;
  context.schema = spec.schema;
  context.layout = index::FieldLayout::For(spec.schema, spec.record_table);
  context.pages = spec.pages;
  context.metadata = spec.metadata;
  WrittenShard out;
  out.shard_path = dir + "/" + format::ShardFileName("t", 1, 0, 1);
  out.index_path = format::IndexPathFor(out.shard_path);
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<ShardWriter> writer,
                        ShardWriter::Create(context, 0, out.shard_path, out.index_path));
  if (spec.column_chunk == 0) {
    for (uint64_t k = 0; k < spec.records; ++k) {
      UREC_RETURN_IF_ERROR(writer->Add(TestRecordValues(spec.schema, k).values()));
    }
  } else {
    std::vector<std::string> columns(spec.schema.num_fields());
    for (uint64_t k = 0; k < spec.records; ++k) {
      const TestRecordValues row(spec.schema, k);
      for (size_t f = 0; f < columns.size(); ++f) columns[f] += row.values().slots[f].value;
    }
    std::vector<std::string_view> rest(columns.begin(), columns.end());
    for (uint64_t done = 0; done < spec.records;) {
      UREC_ASSIGN_OR_RETURN(const uint64_t added,
                            writer->AddColumns(rest, std::min(spec.column_chunk, spec.records - done)));
      if (added == 0) return Status::Internal("AddColumns added no row");
      for (size_t f = 0; f < rest.size(); ++f) rest[f].remove_prefix(added * (columns[f].size() / spec.records));
      done += added;
    }
  }
  UREC_RETURN_IF_ERROR(writer->Close());
  format::ShardHeaderValues header;
  header.uuid = TestUuid(1);
  header.shard_number = 0;
  header.shard_count = 1;
  header.record_count = writer->records();
  header.blob_page_bytes = spec.pages.blob_page_bytes;
  header.scalar_page_bytes = spec.pages.scalar_page_bytes;
  header.zstd_level = spec.pages.zstd_level;
  format::IndexHeaderValues index;
  index.uuid = header.uuid;
  index.shard_number = 0;
  index.shard_count = 1;
  index.first_id = 0;
  index.dataset_record_count = writer->records();
  index.shard_file_length = writer->shard_file_length();
  index.shard_footer_checksum = writer->footer_checksum();
  if (spec.edit) spec.edit(header, index);
  UREC_RETURN_IF_ERROR(writer->Finalize(header, index, /*sync=*/false));
  out.shard_file_length = writer->shard_file_length();
  out.footer_checksum = writer->footer_checksum();
  return out;
}

// --- Edits of written files ----------------------------------------------

// Rewrites the index header with `edit` applied to its values, after
// recomputing every section's checksum from the file's bytes (so that an
// edit of the record table or a sorted index stays undetected by them).
inline void ResealIndex(const std::string& index_path,
                        const std::function<void(format::IndexHeaderValues&)>& edit = {}) {
  const std::string bytes = ReadBytes(index_path);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  Result<format::FileFrame> frame = format::ReadFrame(format::FileKind::kIndex, data, bytes.size(), index_path);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  Result<const fb::IndexHeader*> header = format::VerifyIndexHeader(frame->header, frame->header_length, index_path);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  format::IndexHeaderValues values = index::IndexHeaderValuesOf(**header);
  for (fb::IndexSection& s : values.sections) {
    s = fb::IndexSection(s.offset(), s.length(), format::Checksum(data + s.offset(), s.length()), s.field(), s.kind());
  }
  if (edit) edit(values);
  const Status written = index::WriteIndexHeader(index_path, frame->minor, values, frame->header_length);
  ASSERT_TRUE(written.ok()) << written.ToString();
}

// Where the record table and the sorted indexes are in an index file.
inline std::vector<fb::IndexSection> IndexSections(const std::string& index_path) {
  Result<index::IndexReader> reader = index::IndexReader::Open(index_path, false);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return {};
  return index::IndexHeaderValuesOf(reader->header()).sections;
}

// Edits record table entry `row` in place (`edit` gets the entry's bytes),
// then seals it (entry checksum) and the index (section checksums).
inline void EditEntry(const std::string& index_path, const index::FieldLayout& layout, uint64_t row,
                      const std::function<void(uint8_t*)>& edit) {
  std::string bytes = ReadBytes(index_path);
  const fb::IndexSection table = IndexSections(index_path).at(0);
  uint8_t* entry = reinterpret_cast<uint8_t*>(bytes.data()) + table.offset() + row * layout.entry_stride;
  edit(entry);
  index::SealEntry(layout, entry, row);
  WriteBytes(index_path, bytes);
  ResealIndex(index_path);
}

// Rewrites the shard's footer with `edit` applied to its page entries (the
// footer keeps its size), then its trailer's checksum and the index's copy
// of it, so that only what the edit changed is wrong.
inline void EditPages(const std::string& shard_path, const std::string& index_path,
                      const std::function<void(std::vector<fb::PageEntry>&)>& edit) {
  std::string bytes = ReadBytes(shard_path);
  auto* data = reinterpret_cast<uint8_t*>(bytes.data());
  Result<format::FileFrame> frame = format::ReadFrame(format::FileKind::kShard, data, bytes.size(), shard_path);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  Result<const fb::ShardFooter*> footer = format::VerifyShardFooter(frame->directory, frame->directory_length, shard_path);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  std::vector<fb::PageEntry> pages;
  for (const fb::PageEntry* p : *(*footer)->pages()) pages.push_back(*p);
  edit(pages);
  // The entries are structs inside the footer: write them over in place.
  for (size_t p = 0; p < pages.size(); ++p) {
    const uint8_t* at = reinterpret_cast<const uint8_t*>((*footer)->pages()->Get(static_cast<flatbuffers::uoffset_t>(p)));
    std::memcpy(data + (at - data), &pages[p], sizeof(fb::PageEntry));
  }
  format::TrailerFields trailer;
  trailer.directory_offset = frame->directory_offset;
  trailer.directory_length = frame->directory_length;
  trailer.directory_checksum = format::Checksum(data + frame->directory_offset, frame->directory_length);
  trailer.major = frame->major;
  trailer.minor = frame->minor;
  format::EncodeTrailer(format::FileKind::kShard, trailer, data + bytes.size() - format::kTrailerSize);
  WriteBytes(shard_path, bytes);
  ResealIndex(index_path, [&](format::IndexHeaderValues& v) { v.shard_footer_checksum = trailer.directory_checksum; });
}

// Flips bit 4 of byte `offset` of `path`.
inline void FlipByte(const std::string& path, uint64_t offset) {
  std::string bytes = ReadBytes(path);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x10);
  WriteBytes(path, bytes);
}

}  // namespace unirecord::shard::testing

#endif  // UNIRECORD_SHARD_SHARD_TESTING_H_
