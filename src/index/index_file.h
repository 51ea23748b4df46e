// The .uidx index file (format/SPEC.md section 8): building it at the end of
// a shard, patching its header when the dataset is finished, and opening and
// checking it for reading.
#ifndef UNIRECORD_INDEX_INDEX_FILE_H_
#define UNIRECORD_INDEX_INDEX_FILE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fb/unirecord_generated.h"
#include "format/header_codec.h"
#include "index/list_index.h"
#include "index/record_table.h"
#include "io/file.h"
#include "unirecord/schema.h"
#include "unirecord/status.h"

namespace unirecord::index {

// Collects a shard's record table in memory; WriteFile() writes the index with
// a placeholder header, PatchHeader() fills it in once the dataset is known.
class IndexBuilder {
 public:
  IndexBuilder(const Schema& schema, const FieldLayout& layout);

  // A zeroed entry for the next row; valid until the next AppendEntry.
  // nullptr, counting the row, when the layout has no record table.
  uint8_t* AppendEntry();
  uint8_t* entry(uint64_t row) { return table_.data() + row * layout_.entry_stride; }
  uint64_t rows() const { return rows_; }
  // The list of the last appended row for list field `slot` (FieldLayout::list_slot).
  void AddList(size_t slot, const int64_t* values, size_t count) {
    lists_[slot].AddRow(static_cast<uint32_t>(rows_ - 1), values, count);
  }

  // Seals every entry, sorts the indexed values and writes the file. Frees
  // the table. The header and trailer stay zero until PatchHeader. Returns
  // the file's length.
  Result<uint64_t> WriteFile(const std::string& path);

  uint64_t record_table_checksum() const { return sections_.empty() ? 0 : sections_[0].checksum(); }

  // Writes the final header (`values` minus the parts this builder knows:
  // record count, stride, field lists, sections), preamble and trailer.
  Status PatchHeader(const std::string& path, format::IndexHeaderValues values) const;

 private:
  format::IndexHeaderValues FillKnown(format::IndexHeaderValues values) const;

  const Schema& schema_;
  const FieldLayout& layout_;
  std::vector<uint8_t> table_;
  uint64_t rows_ = 0;
  uint64_t header_length_ = 0;
  std::vector<fb::IndexSection> sections_;
  std::vector<ListIndexBuilder> lists_;
};

// The minor version an index says (SPEC.md 14): its schema's, at least
// kFormatMinorNoRecordTable without a record table (`entry_stride` 0).
uint16_t IndexMinorVersion(const Schema& schema, uint32_t entry_stride);

// Writes `values` as the header of the index file at `path` (preamble,
// header, trailer; format/SPEC.md section 8), whose header space is
// `header_length` bytes: Internal when the built header's size differs.
Status WriteIndexHeader(const std::string& path, uint16_t minor, const format::IndexHeaderValues& values,
                        uint64_t header_length);

// The values of a verified index header (IndexReader::header()).
format::IndexHeaderValues IndexHeaderValuesOf(const fb::IndexHeader& header);

// A mapped, checked index file.
class IndexReader {
 public:
  // Checks preamble, trailer, header (checksum + verifier), and that every
  // section lies in the file and has the size its header implies; with
  // `verify_sections`, also hashes every section.
  static Result<IndexReader> Open(const std::string& path, bool verify_sections);

  const std::string& path() const { return file_.path(); }
  uint64_t file_size() const { return file_.size(); }
  const fb::IndexHeader& header() const { return *header_; }
  uint64_t header_length() const { return header_length_; }
  uint64_t records() const { return header_->record_count(); }
  uint32_t stride() const { return header_->entry_stride(); }
  // Entry of `row` (< records(), not checked); nullptr without a record
  // table (its stride is 0).
  const uint8_t* entry(uint64_t row) const { return record_table_ + row * stride(); }
  // The sorted index of the i-th indexed field: `records()` u32 rows. With
  // `verify`, the section's checksum is checked the first time it is asked
  // for (once per section for the life of this reader, thread-safe); a
  // mismatch is Corruption naming the file and the section, every time.
  Result<const uint8_t*> SortedIndex(size_t i, bool verify) const;
  // The list index of the i-th list field (FieldLayout::list_fields order;
  // format/SPEC.md section 8.4). Its length was checked at open; with
  // `verify`, its checksum and structure are checked the first time it is
  // asked for, as SortedIndex's checksum.
  Result<const ListIndexView*> ListIndex(size_t i, bool verify) const;
  // Schema fields of the list index sections, in order.
  const std::vector<int>& list_fields() const { return list_fields_; }

  // Checks every section's checksum.
  Status VerifySections() const;
  // Every byte outside header, sections and trailer is zero.
  Status VerifyPadding() const;

 private:
  io::MappedFile file_;
  const fb::IndexHeader* header_ = nullptr;
  uint64_t header_length_ = 0;
  const uint8_t* record_table_ = nullptr;
  std::vector<const uint8_t*> sorted_;
  std::vector<ListIndexView> lists_;
  std::vector<int> list_fields_;

  // SortedIndex's once-per-section checks (held by pointer: a reader moves).
  struct SortedChecks {
    explicit SortedChecks(size_t n) : once(n), status(n) {}
    std::vector<std::once_flag> once;
    std::vector<Status> status;
  };
  Status VerifySection(size_t section) const;
  std::unique_ptr<SortedChecks> sorted_checks_;
  std::unique_ptr<SortedChecks> list_checks_;
};

}  // namespace unirecord::index

#endif  // UNIRECORD_INDEX_INDEX_FILE_H_
