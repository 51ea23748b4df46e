#include "index/index_file.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "format/fixed_parts.h"

namespace unirecord::index {

using format::FileKind;

IndexBuilder::IndexBuilder(const Schema& schema, const FieldLayout& layout)
    : schema_(schema), layout_(layout), lists_(layout.list_fields.size()) {}

uint8_t* IndexBuilder::AppendEntry() {
  if (!layout_.record_table) {
    ++rows_;
    return nullptr;
  }
  table_.resize(table_.size() + layout_.entry_stride, 0);
  ++rows_;
  return table_.data() + table_.size() - layout_.entry_stride;
}

format::IndexHeaderValues IndexBuilder::FillKnown(format::IndexHeaderValues values) const {
  values.record_count = rows_;
  values.entry_stride = layout_.entry_stride;
  values.blob_fields.assign(layout_.blob_fields.begin(), layout_.blob_fields.end());
  values.indexed_fields.assign(layout_.indexed_fields.begin(), layout_.indexed_fields.end());
  values.sections = sections_;
  return values;
}

Result<uint64_t> IndexBuilder::WriteFile(const std::string& path) {
  for (uint64_t row = 0; layout_.record_table && row < rows_; ++row) SealEntry(layout_, entry(row), row);

  // Section offsets depend only on the header size, which the placeholder fixes.
  sections_.assign(1 + layout_.indexed_fields.size() + layout_.list_fields.size(), fb::IndexSection());
  header_length_ = format::BuildIndexHeader(FillKnown({})).size();
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(path));
  std::string zeros(format::kPreambleSize + header_length_, '\0');
  UREC_RETURN_IF_ERROR(file.Append(zeros));
  UREC_RETURN_IF_ERROR(file.PadTo(format::kSectionAlignment));

  sections_[0] = fb::IndexSection(file.offset(), table_.size(), format::Checksum(table_.data(), table_.size()),
                                  -1, fb::SectionKind::RecordTable);
  UREC_RETURN_IF_ERROR(file.Append(table_.data(), table_.size()));

  std::vector<std::pair<uint64_t, uint64_t>> sorted(rows_);
  std::vector<uint8_t> bytes;
  for (size_t slot = 0; slot < layout_.indexed_fields.size(); ++slot) {
    const FieldType type = schema_.field(static_cast<size_t>(layout_.indexed_fields[slot])).type;
    for (uint64_t row = 0; row < rows_; ++row) {
      sorted[row] = {format::LoadLE<uint64_t>(entry(row) + layout_.IndexedValueOffset(slot)), row};
    }
    std::sort(sorted.begin(), sorted.end(), [type](const auto& a, const auto& b) {
      if (IndexedLess(type, a.first, b.first)) return true;
      if (IndexedLess(type, b.first, a.first)) return false;
      return a.second < b.second;
    });
    bytes.resize(rows_ * format::kSortedEntrySize);
    for (uint64_t i = 0; i < rows_; ++i) {
      format::StoreLE<uint32_t>(bytes.data() + i * format::kSortedEntrySize, static_cast<uint32_t>(sorted[i].second));
    }
    UREC_RETURN_IF_ERROR(file.PadTo(format::kSectionAlignment));
    sections_[1 + slot] = fb::IndexSection(file.offset(), bytes.size(), format::Checksum(bytes.data(), bytes.size()),
                                           layout_.indexed_fields[slot], fb::SectionKind::SortedIndex);
    UREC_RETURN_IF_ERROR(file.Append(bytes.data(), bytes.size()));
  }
  // SPEC.md 8.4 (format 1.2): one list index per list field, after the sorted indexes.
  for (size_t slot = 0; slot < layout_.list_fields.size(); ++slot) {
    const std::string list = lists_[slot].Build(rows_);
    UREC_RETURN_IF_ERROR(file.PadTo(format::kSectionAlignment));
    sections_[1 + layout_.indexed_fields.size() + slot] =
        fb::IndexSection(file.offset(), list.size(), format::Checksum(list.data(), list.size()),
                         layout_.list_fields[slot], fb::SectionKind::ListIndex);
    UREC_RETURN_IF_ERROR(file.Append(list));
  }
  UREC_RETURN_IF_ERROR(file.PadTo(format::kFlatBufferAlignment));
  UREC_RETURN_IF_ERROR(file.Append(std::string(format::kTrailerSize, '\0')));
  table_ = std::vector<uint8_t>();
  const uint64_t length = file.offset();
  UREC_RETURN_IF_ERROR(file.Close());
  return length;
}

Status IndexBuilder::PatchHeader(const std::string& path, format::IndexHeaderValues values) const {
  return WriteIndexHeader(path, IndexMinorVersion(schema_, layout_.entry_stride), FillKnown(std::move(values)),
                          header_length_);
}

uint16_t IndexMinorVersion(const Schema& schema, uint32_t entry_stride) {
  const uint16_t minor = schema.RequiredMinorVersion();
  return entry_stride == format::kNoRecordTableStride ? std::max(minor, format::kFormatMinorNoRecordTable) : minor;
}

Status WriteIndexHeader(const std::string& path, uint16_t minor, const format::IndexHeaderValues& values,
                        uint64_t header_length) {
  const std::string header = format::BuildIndexHeader(values);
  if (header.size() != header_length) {
    return Status::Internal(path + ": index header changed size between placeholder and final");
  }
  format::PreambleFields preamble;
  preamble.minor = minor;
  preamble.header_length = header.size();
  preamble.header_checksum = format::Checksum(header.data(), header.size());
  uint8_t preamble_bytes[format::kPreambleSize];
  format::EncodePreamble(FileKind::kIndex, preamble, preamble_bytes);
  format::TrailerFields trailer;
  trailer.minor = preamble.minor;
  trailer.directory_offset = format::kHeaderOffset;
  trailer.directory_length = header.size();
  trailer.directory_checksum = preamble.header_checksum;
  uint8_t trailer_bytes[format::kTrailerSize];
  format::EncodeTrailer(FileKind::kIndex, trailer, trailer_bytes);

  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::OpenExisting(path));
  UREC_RETURN_IF_ERROR(file.WriteAt(format::kHeaderOffset, header.data(), header.size()));
  UREC_RETURN_IF_ERROR(file.WriteAt(file.offset() - format::kTrailerSize, trailer_bytes, sizeof(trailer_bytes)));
  UREC_RETURN_IF_ERROR(file.WriteAt(0, preamble_bytes, sizeof(preamble_bytes)));
  return file.Close();
}

format::IndexHeaderValues IndexHeaderValuesOf(const fb::IndexHeader& h) {
  format::IndexHeaderValues v;
  const auto* uuid = h.dataset_uuid()->bytes();
  for (size_t i = 0; i < v.uuid.size(); ++i) v.uuid[i] = uuid->Get(static_cast<flatbuffers::uoffset_t>(i));
  v.shard_number = h.shard_number();
  v.shard_count = h.shard_count();
  v.record_count = h.record_count();
  v.first_id = h.first_id();
  v.dataset_record_count = h.dataset_record_count();
  v.shard_file_length = h.shard_file_length();
  v.shard_footer_checksum = h.shard_footer_checksum();
  v.entry_stride = h.entry_stride();
  v.blob_fields.assign(h.blob_fields()->begin(), h.blob_fields()->end());
  v.indexed_fields.assign(h.indexed_fields()->begin(), h.indexed_fields()->end());
  for (const fb::IndexSection* section : *h.sections()) v.sections.push_back(*section);
  return v;
}

Result<IndexReader> IndexReader::Open(const std::string& path, bool verify_sections) {
  IndexReader reader;
  UREC_ASSIGN_OR_RETURN(reader.file_, io::MappedFile::Open(path));
  const uint8_t* data = reader.file_.data();
  const uint64_t size = reader.file_.size();
  UREC_ASSIGN_OR_RETURN(format::FileFrame frame, format::ReadFrame(FileKind::kIndex, data, size, path));
  UREC_ASSIGN_OR_RETURN(reader.header_, format::VerifyIndexHeader(frame.header, frame.header_length, path));
  reader.header_length_ = frame.header_length;
  const fb::IndexHeader& h = *reader.header_;
  auto corrupt = [&](const std::string& what) { return Status::Corruption(path + ": " + what); };

  const auto* sections = h.sections();
  const size_t indexed = h.indexed_fields()->size();
  // List index sections (format 1.2) follow the sorted indexes.
  if (sections->size() < 1 + indexed) return corrupt("index has the wrong number of sections");
  const uint64_t body_begin = frame.header_offset + frame.header_length;
  const uint64_t body_end = size - format::kTrailerSize;
  const bool has_table = h.entry_stride() != format::kNoRecordTableStride;
  if (!has_table && (h.blob_fields()->size() > 0 || indexed > 0)) {
    return corrupt("no record table (entry stride 0) but blob or indexed fields");
  }
  if (has_table && h.entry_stride() < format::kEntryScalarLocatorSize + format::kEntryChecksumSize) {
    return corrupt("record table entry stride too small");
  }
  for (flatbuffers::uoffset_t i = 0; i < sections->size(); ++i) {
    const fb::IndexSection* s = sections->Get(i);
    const std::string name = "index section " + std::to_string(i);
    const bool is_table = i == 0;
    if (i > indexed) {
      // A list index: fields ascending (schema order), never an indexed scalar.
      if (s->kind() != fb::SectionKind::ListIndex || s->field() < 0 ||
          (!reader.list_fields_.empty() && s->field() <= reader.list_fields_.back()) ||
          std::find(h.indexed_fields()->begin(), h.indexed_fields()->end(), s->field()) != h.indexed_fields()->end()) {
        return corrupt(name + " has the wrong kind or field");
      }
    } else if (s->kind() != (is_table ? fb::SectionKind::RecordTable : fb::SectionKind::SortedIndex) ||
               s->field() != (is_table ? -1 : h.indexed_fields()->Get(i - 1))) {
      return corrupt(name + " has the wrong kind or field");
    }
    if (s->offset() < body_begin || s->offset() % format::kSectionAlignment != 0 ||
        !format::RangeWithin(s->offset(), s->length(), body_end)) {
      return corrupt(name + " out of bounds");
    }
    if (i > indexed) {
      const std::string where = path + ": list index " + std::to_string(reader.lists_.size()) + " (index section " +
                                std::to_string(i) + ", field " + std::to_string(s->field()) + ")";
      UREC_ASSIGN_OR_RETURN(ListIndexView view, ListIndexView::Parse(data + s->offset(), s->length(),
                                                                      h.record_count(), where));
      reader.lists_.push_back(view);
      reader.list_fields_.push_back(s->field());
      continue;
    }
    // Overflow-safe: records * width must equal the length (0 for an absent table).
    const uint64_t width = is_table ? h.entry_stride() : format::kSortedEntrySize;
    if (width == 0 ? s->length() != 0 : s->length() / width != h.record_count() || s->length() % width != 0) {
      return corrupt(name + " length does not match " + std::to_string(h.record_count()) + " records");
    }
    const uint8_t* begin = data + s->offset();
    if (is_table) {
      reader.record_table_ = has_table ? begin : nullptr;
    } else {
      reader.sorted_.push_back(begin);
    }
  }
  reader.sorted_checks_ = std::make_unique<SortedChecks>(reader.sorted_.size());
  reader.list_checks_ = std::make_unique<SortedChecks>(reader.lists_.size());
  if (verify_sections) UREC_RETURN_IF_ERROR(reader.VerifySections());
  return reader;
}

Status IndexReader::VerifyPadding() const {
  uint64_t previous_end = format::kHeaderOffset + header_length_;
  for (const fb::IndexSection* s : *header_->sections()) {
    if (s->offset() < previous_end) return Status::Corruption(path() + ": index sections overlap");
    UREC_RETURN_IF_ERROR(format::CheckZeroPadding(file_.data(), previous_end, s->offset(), path()));
    previous_end = s->offset() + s->length();
  }
  return format::CheckZeroPadding(file_.data(), previous_end, file_.size() - format::kTrailerSize, path());
}

Status IndexReader::VerifySection(size_t section) const {
  const fb::IndexSection* s = header_->sections()->Get(static_cast<flatbuffers::uoffset_t>(section));
  const size_t sorted = header_->indexed_fields()->size();
  const std::string name = section == 0        ? std::string("record table")
                           : section <= sorted ? "sorted index " + std::to_string(section - 1)
                                               : "list index " + std::to_string(section - 1 - sorted);
  if (format::Checksum(file_.data() + s->offset(), s->length()) == s->checksum()) {
    if (section <= sorted) return Status::OK();
    return lists_[section - 1 - sorted].CheckStructure(path() + ": " + name + " (index section " +
                                                       std::to_string(section) + ", field " +
                                                       std::to_string(s->field()) + ")");
  }
  return Status::Corruption(path() + ": " + name + " checksum mismatch (index section " + std::to_string(section) +
                            (section == 0 ? std::string() : ", field " + std::to_string(s->field())) + ", bytes " +
                            std::to_string(s->offset()) + ".." + std::to_string(s->offset() + s->length()) + ")");
}

Status IndexReader::VerifySections() const {
  for (size_t i = 0; i < header_->sections()->size(); ++i) UREC_RETURN_IF_ERROR(VerifySection(i));
  return Status::OK();
}

Result<const uint8_t*> IndexReader::SortedIndex(size_t i, bool verify) const {
  if (verify) {
    std::call_once(sorted_checks_->once[i], [&] { sorted_checks_->status[i] = VerifySection(1 + i); });
    UREC_RETURN_IF_ERROR(sorted_checks_->status[i]);
  }
  return sorted_[i];
}

Result<const ListIndexView*> IndexReader::ListIndex(size_t i, bool verify) const {
  if (verify) {
    const size_t section = 1 + sorted_.size() + i;
    std::call_once(list_checks_->once[i], [&] { list_checks_->status[i] = VerifySection(section); });
    UREC_RETURN_IF_ERROR(list_checks_->status[i]);
  }
  return &lists_[i];
}

}  // namespace unirecord::index
