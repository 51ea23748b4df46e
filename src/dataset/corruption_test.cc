// One test per way a dataset can be damaged or mixed up: each must give a
// clear error that names the file, never a crash (format/SPEC.md section 11).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "dataset/dataset_testing.h"
#include "format/endian.h"
#include "format/fixed_parts.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "index/index_file.h"
#include "index/record_table.h"
#include "io/file.h"
#include "unirecord/dataset.h"

namespace unirecord {
namespace {

using testing::ReadBytes;
using testing::WriteBytes;

// Where the parts of an intact file are.
struct FileMap {
  format::FileFrame frame;
  std::vector<fb::PageEntry> pages;             // shards
  std::vector<fb::IndexSection> sections;       // indexes
  uint64_t size = 0;
};

FileMap MapFile(const std::string& path, format::FileKind kind) {
  const std::string bytes = ReadBytes(path);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  FileMap map;
  map.size = bytes.size();
  auto frame = format::ReadFrame(kind, data, bytes.size(), path);
  EXPECT_TRUE(frame.ok()) << frame.status().ToString();
  map.frame = *frame;
  if (kind == format::FileKind::kShard) {
    auto footer = format::VerifyShardFooter(frame->directory, frame->directory_length, path);
    for (const fb::PageEntry* p : *(*footer)->pages()) map.pages.push_back(*p);
  } else {
    auto header = format::VerifyIndexHeader(frame->header, frame->header_length, path);
    for (const fb::IndexSection* s : *(*header)->sections()) map.sections.push_back(*s);
  }
  return map;
}

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    auto summary = testing::WriteSample(dir_, "c", 40, testing::SmallPages(2));
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    shard0_ = summary->shard_paths[0];
    index0_ = summary->index_paths[0];
    shard1_ = summary->shard_paths[1];
    index1_ = summary->index_paths[1];
  }

  // Flips one bit of byte `offset` of `path`.
  static void Flip(const std::string& path, uint64_t offset) {
    std::string bytes = ReadBytes(path);
    ASSERT_LT(offset, bytes.size());
    bytes[offset] = static_cast<char>(bytes[offset] ^ 0x10);
    WriteBytes(path, bytes);
  }

  // Open fails with `code` and a message naming `file` and containing `words`.
  void ExpectOpenFails(StatusCode code, const std::string& file, const std::string& words,
                       DatasetOptions options = {}) {
    auto ds = Dataset::Open(dir_, options);
    ASSERT_FALSE(ds.ok()) << "opened despite damage to " << file;
    ExpectError(ds.status(), code, file, words);
  }

  static void ExpectError(const Status& status, StatusCode code, const std::string& file, const std::string& words) {
    EXPECT_EQ(status.code(), code) << status.ToString();
    EXPECT_NE(status.message().find(io::BaseName(file)), std::string::npos) << status.ToString();
    EXPECT_NE(status.message().find(words), std::string::npos) << status.ToString();
  }

  std::shared_ptr<Dataset> OpenOk(DatasetOptions options = {}) {
    auto ds = Dataset::Open(dir_, options);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }

  std::string dir_, shard0_, index0_, shard1_, index1_;
};

TEST_F(CorruptionTest, TruncatedShard) {
  const std::string intact = ReadBytes(shard0_);
  for (size_t keep : {intact.size() - 1, intact.size() / 2, size_t{100}, size_t{0}}) {
    WriteBytes(shard0_, intact.substr(0, keep));
    ExpectOpenFails(StatusCode::kCorruption, shard0_, keep < 96 ? "too short" : "truncated or incomplete shard");
  }
}

TEST_F(CorruptionTest, TruncatedIndex) {
  const std::string intact = ReadBytes(index0_);
  WriteBytes(index0_, intact.substr(0, intact.size() - 8));
  ExpectOpenFails(StatusCode::kCorruption, index0_, "truncated or incomplete index");
  WriteBytes(index0_, intact.substr(0, 10));
  ExpectOpenFails(StatusCode::kCorruption, index0_, "too short for an index");
}

// SPEC.md section 11, files change only by rename: a dataset rewritten under the same
// names while open keeps serving the files it mapped.
TEST_F(CorruptionTest, ShardsReplacedByRenameWhileOpenKeepServingTheOldFiles) {
  std::shared_ptr<Dataset> ds = OpenOk();
  ASSERT_NE(ds, nullptr);
  std::vector<std::string> before;
  for (uint64_t id = 0; id < ds->size(); ++id) before.emplace_back(ds->GetBlob(id, 0)->data());
  const std::string other = testing::MakeTempDir();
  WriterOptions contiguous = testing::SmallPages(2);
  contiguous.expected_records = 60;  // other records in each shard than the round-robin original
  auto summary = testing::WriteSample(other, "c", 60, contiguous);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  for (const std::string& path : {summary->shard_paths[0], summary->index_paths[0], summary->shard_paths[1],
                                  summary->index_paths[1], summary->manifest_path}) {
    ASSERT_TRUE(io::RenameFile(path, io::JoinPath(dir_, io::BaseName(path))).ok());
  }
  for (uint64_t id = 0; id < ds->size(); ++id) {
    Result<Blob> blob = ds->GetBlob(id, 0);
    ASSERT_TRUE(blob.ok()) << blob.status().ToString();
    EXPECT_EQ(blob->data(), before[id]) << id;
    EXPECT_TRUE(ds->Get(id).ok()) << id;
  }
  EXPECT_TRUE(ds->Verify().ok());
  EXPECT_EQ(OpenOk()->size(), 60u);  // a new open sees the new files
}

// Truncating a mapped file in place is outside the contract, but a read of
// its lost pages is an error naming the file, not SIGBUS.
TEST_F(CorruptionTest, ShardTruncatedInPlaceWhileOpenIsAnErrorNotACrash) {
  std::shared_ptr<Dataset> ds = OpenOk();
  ASSERT_NE(ds, nullptr);
  ASSERT_EQ(::truncate(shard0_.c_str(), 4096), 0);  // same inode; the pages after 4 KiB are gone
  int refused = 0;
  for (uint64_t id = 0; id < ds->size(); ++id) {
    for (Status status : {ds->GetBlob(id, 0).status(), ds->Get(id).status()}) {
      if (status.ok()) continue;
      ++refused;
      ExpectError(status, StatusCode::kCorruption, shard0_, "truncated in place from ");
    }
  }
  EXPECT_GT(refused, 0);
  ExpectError(ds->Verify(), StatusCode::kCorruption, shard0_, "reopen the dataset");
}

TEST_F(CorruptionTest, UnfinishedShardWithZeroPreamble) {
  std::string bytes = ReadBytes(shard0_);
  std::memset(bytes.data(), 0, format::kPreambleSize);
  WriteBytes(shard0_, bytes);
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "incomplete shard");
}

TEST_F(CorruptionTest, WrongMagic) {
  std::string bytes = ReadBytes(shard1_);
  std::memcpy(bytes.data(), "NOTUREC!", 8);
  WriteBytes(shard1_, bytes);
  ExpectOpenFails(StatusCode::kCorruption, shard1_, "bad magic");
}

TEST_F(CorruptionTest, IndexInPlaceOfShard) {
  WriteBytes(shard0_, ReadBytes(index0_));
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "is a unirecord index file, not a shard");
}

TEST_F(CorruptionTest, FutureMajorVersion) {
  for (bool shard : {true, false}) {
    SetUp();
    const std::string path = shard ? shard0_ : index1_;
    std::string bytes = ReadBytes(path);
    auto* data = reinterpret_cast<uint8_t*>(bytes.data());
    format::StoreLE<uint16_t>(data + format::kPreambleMajorOffset, 2);
    format::StoreLE<uint64_t>(data + format::kPreambleChecksumOffset,
                              XXH3_64bits(data, format::kPreambleChecksumOffset));
    WriteBytes(path, bytes);
    ExpectOpenFails(StatusCode::kNotSupported, path, "format version 2.0 is not supported");
  }
}

TEST_F(CorruptionTest, FlippedPreamble) {
  Flip(shard0_, format::kPreambleHeaderLengthOffset);
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "preamble checksum mismatch");
}

TEST_F(CorruptionTest, FlippedHeader) {
  Flip(shard1_, format::kHeaderOffset + 20);
  ExpectOpenFails(StatusCode::kCorruption, shard1_, "header checksum mismatch");
}

TEST_F(CorruptionTest, FlippedFooter) {
  FileMap map = MapFile(shard0_, format::FileKind::kShard);
  Flip(shard0_, map.frame.directory_offset + map.frame.directory_length / 2);
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "footer checksum mismatch");
}

TEST_F(CorruptionTest, FlippedTrailer) {
  const uint64_t trailer = MapFile(shard0_, format::FileKind::kShard).size - format::kTrailerSize;
  Flip(shard0_, trailer + format::kTrailerDirectoryLengthOffset);
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "trailer checksum mismatch");
  SetUp();
  Flip(shard0_, trailer + format::kTrailerMagicOffset + 3);
  // Damaged in place, not cut: the rest of the trailer still checks out.
  ExpectOpenFails(StatusCode::kCorruption, shard0_, "bad trailer magic");
  SetUp();
  Flip(index0_, MapFile(index0_, format::FileKind::kIndex).size - format::kTrailerSize +
                    format::kTrailerMagicOffset);
  ExpectOpenFails(StatusCode::kCorruption, index0_, "bad trailer magic");
}

TEST_F(CorruptionTest, FlippedScalarPage) {
  FileMap map = MapFile(shard0_, format::FileKind::kShard);
  const fb::PageEntry* scalar = nullptr;
  for (const auto& p : map.pages) {
    if (p.kind() == fb::PageKind::Scalar && scalar == nullptr) scalar = &p;
  }
  ASSERT_NE(scalar, nullptr);
  const uint32_t page_number = static_cast<uint32_t>(scalar - map.pages.data());
  Flip(shard0_, scalar->offset() + scalar->stored_length() / 2);
  auto ds = OpenOk();  // pages are checked when read, not at open
  ASSERT_NE(ds, nullptr);
  // Shard 0 comes first, so its row r is id r.
  ExpectError(ds->Get(scalar->first_row()).status(), StatusCode::kCorruption, shard0_,
              "page " + std::to_string(page_number) + " checksum mismatch");
  // The blast radius (SPEC 11): Get fails for that page's rows only; blobs
  // and indexed values of every record stay readable.
  ASSERT_LT(scalar->row_count(), 20u);  // shard 0 has 20 rows: other pages exist
  for (uint64_t id = 0; id < 20; ++id) {
    const bool in_page = id >= scalar->first_row() && id < scalar->first_row() + scalar->row_count();
    EXPECT_EQ(ds->Get(id).ok(), !in_page) << id;
    EXPECT_TRUE(ds->GetBlob(id, 0).ok()) << id;
    EXPECT_TRUE(ds->GetIndexedInt64(id, 1).ok()) << id;
  }
  ExpectError(ds->Verify(), StatusCode::kCorruption, shard0_, "checksum mismatch");
  // Without verification the damage surfaces as a decode error or wrong values, never a crash.
  DatasetOptions unchecked;
  unchecked.verify_checksums = false;
  auto loose = OpenOk(unchecked);
  for (uint64_t id = 0; id < loose->size(); ++id) (void)loose->Get(id);
}

TEST_F(CorruptionTest, FlippedBlob) {
  auto index = index::IndexReader::Open(index0_, true);
  ASSERT_TRUE(index.ok());
  auto layout = index::FieldLayout::For(testing::SampleSchema());
  const index::BlobLocator image = index::LoadBlobLocator(layout, index->entry(1), 0);
  ASSERT_GT(image.stored_length, 10u);
  Flip(shard0_, image.offset + 5);
  auto ds = OpenOk();
  ExpectError(ds->GetBlob(1, 0).status(), StatusCode::kCorruption, shard0_, "row 1: blob 'image' checksum mismatch");
  ExpectError(ds->Get(1).status(), StatusCode::kCorruption, shard0_, "blob 'image' checksum mismatch");
  EXPECT_TRUE(ds->GetBlob(2, 0).ok());  // other records stay readable
  ExpectError(ds->Verify(), StatusCode::kCorruption, shard0_, "checksum mismatch");
}

TEST_F(CorruptionTest, FlippedBlobPageOfCompressedBlob) {
  auto index = index::IndexReader::Open(index0_, true);
  auto layout = index::FieldLayout::For(testing::SampleSchema());
  const index::BlobLocator mask = index::LoadBlobLocator(layout, index->entry(1), 1);
  ASSERT_GT(mask.stored_length, 4u);
  Flip(shard0_, mask.offset + mask.stored_length / 2);
  auto ds = OpenOk();
  ExpectError(ds->GetBlob(1, 8).status(), StatusCode::kCorruption, shard0_, "blob 'mask' checksum mismatch");
  DatasetOptions unchecked;
  unchecked.verify_checksums = false;
  auto loose = OpenOk(unchecked);
  (void)loose->GetBlob(1, 8);  // may inflate to garbage or fail; must not crash
}

TEST_F(CorruptionTest, CompressedBlobWithWrongRawLength) {
  // A record table entry claiming a 3.5 GiB raw_length for a zstd blob.
  FileMap map = MapFile(index0_, format::FileKind::kIndex);
  const auto layout = index::FieldLayout::For(testing::SampleSchema());
  const uint64_t row = 1;
  const uint64_t entry_offset = map.sections[0].offset() + row * layout.entry_stride;
  std::string bytes = ReadBytes(index0_);
  auto* entry = reinterpret_cast<uint8_t*>(&bytes[entry_offset]);
  index::BlobLocator mask = index::LoadBlobLocator(layout, entry, 1);
  ASSERT_GT(mask.raw_length, 0u);
  mask.raw_length = 0xE0000000u;
  index::StoreBlobLocator(layout, entry, 1, mask);
  WriteBytes(index0_, bytes);
  auto ds = OpenOk();
  ExpectError(ds->GetBlob(row, 8).status(), StatusCode::kCorruption, index0_,
              "record table entry of row 1 checksum mismatch");
  // Even with the entry's checksum unchecked, the blob is refused before its
  // raw_length is allocated: its zstd frame declares another size.
  index::SealEntry(layout, entry, row);
  WriteBytes(index0_, bytes);
  DatasetOptions unchecked;
  unchecked.verify_checksums = false;
  auto loose = OpenOk(unchecked);
  ExpectError(loose->GetBlob(row, 8).status(), StatusCode::kCorruption, shard0_,
              "blob 'mask' is not one zstd frame of its raw_length");
}

TEST_F(CorruptionTest, WidenedInt32OutsideInt32IsRefusedEvenUnverified) {
  // The indexed int32 field 'width' (field 3) is stored widened to 64 bits.
  FileMap map = MapFile(index0_, format::FileKind::kIndex);
  const auto layout = index::FieldLayout::For(testing::SampleSchema());
  const uint64_t row = 2;
  const size_t width = 3;
  ASSERT_GE(layout.indexed_slot[width], 0);
  std::string bytes = ReadBytes(index0_);
  uint8_t* entry = reinterpret_cast<uint8_t*>(&bytes[map.sections[0].offset() + row * layout.entry_stride]);
  format::StoreLE<uint64_t>(entry + layout.IndexedValueOffset(static_cast<size_t>(layout.indexed_slot[width])),
                            uint64_t{20890720927991});
  index::SealEntry(layout, entry, row);  // as if the damage were written with a valid checksum
  WriteBytes(index0_, bytes);
  for (bool verify : {true, false}) {
    DatasetOptions options;
    options.verify_checksums = verify;
    auto ds = OpenOk(options);
    ASSERT_NE(ds, nullptr);
    auto record = ds->Get(row);  // shard 0 comes first: its row r is id r
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    for (Status status : {record->GetInt32(width).status(), record->GetInt64(width).status(),
                          ds->GetIndexedInt64(row, width).status()}) {
      ExpectError(status, StatusCode::kCorruption, "", "int32 field 'width' holds 20890720927991");
    }
    EXPECT_TRUE(ds->Get(row + 1)->GetInt32(width).ok());
  }
}

TEST_F(CorruptionTest, FlippedPaddingFoundByVerify) {
  // Padding is covered by no checksum; Verify() still reads every byte.
  FileMap map = MapFile(shard0_, format::FileKind::kShard);
  Flip(shard0_, map.frame.header_offset + map.frame.header_length + 1);
  auto ds = OpenOk();
  ExpectError(ds->Verify(), StatusCode::kCorruption, shard0_, "nonzero padding byte");
  SetUp();
  FileMap index = MapFile(index0_, format::FileKind::kIndex);
  Flip(index0_, index.size - format::kTrailerSize - 1);
  ds = OpenOk();
  if (index.sections.back().offset() + index.sections.back().length() < index.size - format::kTrailerSize) {
    ExpectError(ds->Verify(), StatusCode::kCorruption, index0_, "nonzero padding byte");
  }
}

TEST_F(CorruptionTest, FlippedIndexPreambleHeaderTrailer) {
  Flip(index0_, format::kPreambleHeaderChecksumOffset);
  ExpectOpenFails(StatusCode::kCorruption, index0_, "preamble checksum mismatch");
  SetUp();
  Flip(index0_, format::kHeaderOffset + 30);
  ExpectOpenFails(StatusCode::kCorruption, index0_, "header checksum mismatch");
  SetUp();
  Flip(index0_, MapFile(index0_, format::FileKind::kIndex).size - format::kTrailerSize + 1);
  ExpectOpenFails(StatusCode::kCorruption, index0_, "trailer checksum mismatch");
}

TEST_F(CorruptionTest, FlippedRecordTable) {
  FileMap map = MapFile(index1_, format::FileKind::kIndex);
  const fb::IndexSection& table = map.sections[0];
  const uint32_t stride = index::FieldLayout::For(testing::SampleSchema()).entry_stride;
  const uint64_t row = 3;
  Flip(index1_, table.offset() + row * stride + 9);
  auto ds = OpenOk();  // entries are checked when read
  const uint64_t id = ds->shards()[1].first_id + row;
  ExpectError(ds->Get(id).status(), StatusCode::kCorruption, index1_,
              "record table entry of row 3 checksum mismatch");
  ExpectError(ds->GetIndexedInt64(id, 1).status(), StatusCode::kCorruption, index1_, "row 3");
  EXPECT_TRUE(ds->Get(id + 1).ok());
  ExpectError(ds->Verify(), StatusCode::kCorruption, index1_, "record table checksum mismatch");
  DatasetOptions eager;
  eager.verify_index_at_open = true;
  ExpectOpenFails(StatusCode::kCorruption, index1_, "record table checksum mismatch", eager);
}

TEST_F(CorruptionTest, FlippedSortedIndex) {
  FileMap map = MapFile(index0_, format::FileKind::kIndex);
  ASSERT_EQ(map.sections.size(), 4u);  // record table + label, width, score
  Flip(index0_, map.sections[2].offset() + 8);
  auto ds = OpenOk();
  ExpectError(ds->Verify(), StatusCode::kCorruption, index0_, "sorted index 1 checksum mismatch");
  DatasetOptions eager;
  eager.verify_index_at_open = true;
  ExpectOpenFails(StatusCode::kCorruption, index0_, "sorted index 1 checksum mismatch", eager);
}

class TwoDatasetsTest : public CorruptionTest {
 protected:
  void SetUp() override {
    CorruptionTest::SetUp();
    other_dir_ = testing::MakeTempDir();
    auto other = testing::WriteSample(other_dir_, "c", 41, testing::SmallPages(2));
    ASSERT_TRUE(other.ok());
    other_ = *other;
  }
  std::string other_dir_;
  WriterSummary other_;
};

TEST_F(TwoDatasetsTest, IndexOfAnotherDataset) {
  WriteBytes(index0_, ReadBytes(other_.index_paths[0]));
  ExpectOpenFails(StatusCode::kCorruption, index0_, "index of dataset " + other_.uuid);
}

TEST_F(TwoDatasetsTest, ShardFromAnotherDataset) {
  WriteBytes(shard1_, ReadBytes(other_.shard_paths[1]));
  WriteBytes(index1_, ReadBytes(other_.index_paths[1]));
  ExpectOpenFails(StatusCode::kCorruption, shard1_, "belongs to dataset " + other_.uuid);
}

TEST_F(TwoDatasetsTest, ShardCountsDiffer) {
  const std::string third = testing::MakeTempDir();
  auto three = testing::WriteSample(third, "c", 40, testing::SmallPages(3));
  ASSERT_TRUE(three.ok());
  auto ds = Dataset::Open(std::vector<std::string>{shard0_, three->shard_paths[1]});
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), StatusCode::kCorruption);
  EXPECT_NE(ds.status().message().find("3 shards"), std::string::npos) << ds.status().ToString();
}

TEST_F(CorruptionTest, MissingShard) {
  io::RemoveFileIfExists(shard1_);
  io::RemoveFileIfExists(index1_);
  ExpectOpenFails(StatusCode::kNotFound, shard1_, "shard missing");
}

TEST_F(CorruptionTest, MissingIndex) {
  io::RemoveFileIfExists(index0_);
  ExpectOpenFails(StatusCode::kNotFound, index0_, "index of shard");
}

TEST_F(CorruptionTest, RenamedFilesStillOpen) {
  // Identity lives inside the files, not in their names. (The manifest names
  // its files: renamed ones open by glob or by list.)
  ASSERT_TRUE(io::RenameFile(shard0_, dir_ + "/renamed-a.urec").ok());
  ASSERT_TRUE(io::RenameFile(index0_, dir_ + "/renamed-a.uidx").ok());
  EXPECT_EQ(Dataset::Open(dir_).status().code(), StatusCode::kInvalidArgument);  // c.uset and another .urec
  ASSERT_TRUE(Dataset::Open(std::vector<std::string>{dir_ + "/renamed-a.urec", shard1_}).ok());
  auto ds = Dataset::Open(dir_ + "/*.urec");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->size(), 40u);
  EXPECT_EQ((*ds)->shards()[0].path, dir_ + "/renamed-a.urec");
}

// Single-bit flips spread over both files (every byte with
// UREC_FLIP_STRIDE=1, best under a sanitizer build): never a crash, whatever
// the reader is asked to do with the damaged files.
// Flips one bit of every stride-th byte of a shard and of an index
// (UREC_FLIP_STRIDE=1: every byte, about a minute). Nothing crashes,
// and every flip is detected (format/SPEC.md section 11): Open fails, or a
// deep Verify does, whether or not reads verify checksums. No byte escapes:
// checksums cover every byte of both files except padding, which Verify
// requires to be zero.
TEST_F(CorruptionTest, FlipSweepDetectsEveryFlip) {
  const char* stride_env = std::getenv("UREC_FLIP_STRIDE");
  const uint64_t stride = stride_env != nullptr ? std::max(1, std::atoi(stride_env)) : 331;
  for (const std::string& path : {shard0_, index0_}) {
    const std::string intact = ReadBytes(path);
    for (uint64_t offset = 0; offset < intact.size(); offset += stride) {
      std::string bytes = intact;
      bytes[offset] = static_cast<char>(bytes[offset] ^ (1 << (offset % 8)));
      WriteBytes(path, bytes);
      for (bool verify : {true, false}) {
        DatasetOptions options;
        options.verify_checksums = verify;
        auto ds = Dataset::Open(dir_, options);
        if (!ds.ok()) {
          // A damaged major version reads as a newer file (section 3).
          const bool major = offset >= format::kPreambleMajorOffset && offset < format::kPreambleMajorOffset + 2;
          EXPECT_EQ(ds.status().code(), major ? StatusCode::kNotSupported : StatusCode::kCorruption)
              << ds.status().ToString();
          continue;
        }
        for (uint64_t id = 0; id < (*ds)->size(); ++id) {
          if (auto r = (*ds)->Get(id); r.ok()) {
            (void)r->GetString(2);
            (void)r->GetArray(9);
          }
        }
        const Status verified = (*ds)->Verify();
        EXPECT_FALSE(verified.ok()) << "flip of bit " << offset % 8 << " of byte " << offset << " of "
                                    << io::BaseName(path) << " undetected (verify_checksums " << verify << ")";
        EXPECT_EQ(verified.code(), StatusCode::kCorruption) << verified.ToString();
      }
    }
    WriteBytes(path, intact);
  }
}

}  // namespace
}  // namespace unirecord
