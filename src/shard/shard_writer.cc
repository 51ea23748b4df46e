#include "shard/shard_writer.h"

#include "format/array_values.h"
#include "format/endian.h"
#include "format/fixed_parts.h"
#include "format/format_constants.h"

namespace unirecord::shard {

ShardWriter::ShardWriter(const ShardContext& context, uint32_t shard_number)
    : context_(context),
      shard_number_(shard_number),
      index_(context.schema, context.layout),
      scalar_page_(context.schema, context.layout.column_fields),
      column_values_(context.layout.column_fields.size()),
      zstd_(ZSTD_createCCtx(), ZSTD_freeCCtx) {}

ShardWriter::~ShardWriter() = default;

Result<std::unique_ptr<ShardWriter>> ShardWriter::Create(const ShardContext& context, uint32_t shard_number,
                                                         std::string shard_temp_path,
                                                         std::string index_temp_path) {
  std::unique_ptr<ShardWriter> w(new ShardWriter(context, shard_number));
  if (w->zstd_ == nullptr) return Status::Internal("zstd: cannot create a compression context");
  w->shard_temp_path_ = std::move(shard_temp_path);
  w->index_temp_path_ = std::move(index_temp_path);
  UREC_ASSIGN_OR_RETURN(w->file_, io::WritableFile::Create(w->shard_temp_path_));
  // SPEC.md section 10: the header's size is fixed now; its bytes come last.
  w->header_length_ = format::BuildShardHeader(context.schema, context.metadata, format::ShardHeaderValues{}).size();
  UREC_RETURN_IF_ERROR(w->file_.Append(std::string(format::kPreambleSize + w->header_length_, '\0')));
  UREC_RETURN_IF_ERROR(w->file_.PadTo(format::kPageAlignment));
  return w;
}

Status ShardWriter::AddBlob(const std::string_view& data, BlobCompression compression, uint64_t alignment,
                            index::BlobLocator* locator) {
  std::string_view stored = data;
  if (compression == BlobCompression::kZstd) {
    compressed_.resize(ZSTD_compressBound(data.size()));
    size_t n = ZSTD_compressCCtx(zstd_.get(), compressed_.data(), compressed_.size(), data.data(), data.size(),
                                 context_.pages.zstd_level);
    if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
    stored = std::string_view(compressed_.data(), n);
  }
  if (stored.size() > format::kMaxBlobBytes) {
    return Status::InvalidArgument("blob of " + std::to_string(stored.size()) + " bytes exceeds the 4 GiB - 1 limit");
  }
  locator->stored_length = static_cast<uint32_t>(stored.size());
  locator->raw_length = static_cast<uint32_t>(data.size());
  locator->checksum = format::Checksum(stored.data(), stored.size());
  if (stored.empty()) {
    locator->offset = 0;
    return Status::OK();
  }
  const uint64_t row = index_.rows() - 1;
  // SPEC.md 6.3: an array's blob starts at a multiple of `alignment`, so its
  // elements are aligned in the mapping (page starts are multiples of it).
  const uint64_t padding = (alignment - file_.offset() % alignment) % alignment;
  if (blob_page_open_ &&
      file_.offset() + padding - blob_page_start_ + stored.size() > context_.pages.blob_page_bytes) {
    UREC_RETURN_IF_ERROR(CloseBlobPage());
  }
  if (blob_page_open_ && padding > 0) {
    static constexpr char kZeros[format::kArrayBlobAlignment] = {};
    blob_page_checksum_.Update(kZeros, padding);
    UREC_RETURN_IF_ERROR(file_.Append(kZeros, padding));
  }
  if (!blob_page_open_) {
    UREC_RETURN_IF_ERROR(file_.PadTo(format::kPageAlignment));
    blob_page_open_ = true;
    blob_page_start_ = file_.offset();
    blob_page_first_row_ = row;
    blob_page_rows_ = 0;
    blob_page_last_row_ = UINT64_MAX;
    blob_page_checksum_.Reset();
  }
  if (blob_page_last_row_ != row) {
    blob_page_last_row_ = row;
    ++blob_page_rows_;
  }
  locator->offset = file_.offset();
  blob_page_checksum_.Update(stored.data(), stored.size());
  return file_.Append(stored.data(), stored.size());
}

Status ShardWriter::CloseBlobPage() {
  if (!blob_page_open_) return Status::OK();
  blob_page_open_ = false;
  const uint64_t length = file_.offset() - blob_page_start_;
  pages_.emplace_back(blob_page_start_, length, length, blob_page_checksum_.Digest(),
                      static_cast<uint32_t>(blob_page_first_row_), blob_page_rows_, fb::PageKind::Blob,
                      fb::Codec::None);
  ++stats_.blob_page_count;
  stats_.blob_bytes += length;
  return Status::OK();
}

Status ShardWriter::FlushScalarPage() {
  const uint32_t rows = scalar_page_.rows();
  if (rows == 0) return Status::OK();
  // Pages are contiguous ranges: the open blob page ends here.
  UREC_RETURN_IF_ERROR(CloseBlobPage());
  const std::string raw = scalar_page_.Finish();
  compressed_.resize(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compressCCtx(zstd_.get(), compressed_.data(), compressed_.size(), raw.data(), raw.size(),
                               context_.pages.zstd_level);
  if (ZSTD_isError(n)) return Status::Internal(std::string("zstd: ") + ZSTD_getErrorName(n));
  // SPEC.md 8.5: without a record table, a page zstd would not make a 4 KiB
  // block shorter is stored raw (pages start at 4 KiB): no longer a file,
  // and a read of it inflates nothing.
  const bool stored_raw =
      !context_.layout.record_table && format::AlignUp(n, format::kPageAlignment) ==
                                           format::AlignUp(raw.size(), format::kPageAlignment);
  const std::string_view stored = stored_raw ? std::string_view(raw) : std::string_view(compressed_.data(), n);
  UREC_RETURN_IF_ERROR(file_.PadTo(format::kPageAlignment));
  const uint32_t page_number = static_cast<uint32_t>(pages_.size());
  pages_.emplace_back(file_.offset(), stored.size(), raw.size(), format::Checksum(stored.data(), stored.size()),
                      static_cast<uint32_t>(scalar_page_first_row_), rows, fb::PageKind::Scalar,
                      stored_raw ? fb::Codec::None : fb::Codec::Zstd);
  ++stats_.scalar_page_count;
  stats_.scalar_raw_bytes += raw.size();
  stats_.scalar_stored_bytes += stored.size();
  UREC_RETURN_IF_ERROR(file_.Append(stored.data(), stored.size()));
  for (uint32_t i = 0; context_.layout.record_table && i < rows; ++i) {
    uint8_t* entry = index_.entry(scalar_page_first_row_ + i);
    format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, page_number);
    format::StoreLE<uint32_t>(entry + format::kEntryScalarRowOffset, i);
  }
  scalar_page_first_row_ += rows;
  return Status::OK();
}

Status ShardWriter::BeforeRow(uint64_t row_bytes) {
  if (index_.rows() >= UINT32_MAX) {
    return Status::InvalidArgument("shard " + std::to_string(shard_number_) + " is full (2^32 - 1 records)");
  }
  // A scalar page's string offsets are u32 (SPEC.md section 12): start a new
  // page before a row that would overflow them, refuse a row that alone would.
  if (row_bytes > format::kMaxScalarPageBytes / 2) {
    return Status::InvalidArgument("record's non-blob fields total " + std::to_string(row_bytes) +
                                   " bytes, over the 2 GiB limit");
  }
  if (scalar_page_.raw_size() + row_bytes > format::kMaxScalarPageBytes / 2) return FlushScalarPage();
  return Status::OK();
}

Status ShardWriter::Add(const format::RecordValues& record) {
  const index::FieldLayout& layout = context_.layout;
  uint64_t row_bytes = 0;
  for (int f : layout.column_fields) row_bytes += record.slots[static_cast<size_t>(f)].value.size();
  UREC_RETURN_IF_ERROR(BeforeRow(row_bytes));
  uint8_t* entry = index_.AppendEntry();  // nullptr without a record table: nothing to store
  if (entry != nullptr) format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, format::kNoScalarPage);
  for (size_t slot = 0; slot < layout.blob_fields.size(); ++slot) {
    const size_t f = static_cast<size_t>(layout.blob_fields[slot]);
    index::BlobLocator locator;
    const Field& field = context_.schema.field(f);
    const uint64_t alignment = KindInfoOf(field.kind()).per_record_shape ? format::kArrayBlobAlignment : 1;
    UREC_RETURN_IF_ERROR(AddBlob(record.slots[f].value, field.compression, alignment, &locator));
    index::StoreBlobLocator(layout, entry, slot, locator);
    if (layout.list_slot[f] >= 0) {
      // SPEC.md 8.4: the list's elements, widened, for the list index.
      format::ParsedArray parsed;
      UREC_RETURN_IF_ERROR(format::ParseVarArray(field, record.slots[f].value, &parsed));
      const size_t width = FindType(field.type)->width;
      list_values_.resize(parsed.count);
      for (size_t i = 0; i < parsed.count; ++i) list_values_[i] = ElementToInt64(field.type, parsed.data + i * width);
      index_.AddList(static_cast<size_t>(layout.list_slot[f]), list_values_.data(), list_values_.size());
    }
  }
  for (size_t slot = 0; slot < layout.indexed_fields.size(); ++slot) {
    const size_t f = static_cast<size_t>(layout.indexed_fields[slot]);
    format::StoreLE<uint64_t>(entry + layout.IndexedValueOffset(slot), record.slots[f].indexed_bits);
  }
  if (!layout.column_fields.empty()) {
    for (size_t c = 0; c < layout.column_fields.size(); ++c) {
      column_values_[c] = record.slots[static_cast<size_t>(layout.column_fields[c])].value;
    }
    scalar_page_.AddRow(column_values_);
    if (scalar_page_.raw_size() >= context_.pages.scalar_page_bytes) UREC_RETURN_IF_ERROR(FlushScalarPage());
  }
  return Status::OK();
}

bool ShardWriter::TakesColumns(const ShardContext& context) {
  const index::FieldLayout& layout = context.layout;
  if (!layout.blob_fields.empty() || !layout.indexed_fields.empty() || layout.column_fields.empty()) return false;
  for (int f : layout.column_fields) {
    const Field& field = context.schema.field(static_cast<size_t>(f));
    if (!IsNumeric(field.type) || field.has_variable_shape() || field.num_elements() == 0) return false;
  }
  return true;
}

Result<uint64_t> ShardWriter::AddColumns(const std::vector<std::string_view>& columns, uint64_t count) {
  if (!TakesColumns(context_) || columns.size() != context_.layout.column_fields.size()) {
    return Status::Internal("shard writer: rows from columns need fixed-width numeric columns only");
  }
  if (count == 0) return uint64_t{0};
  uint64_t row_bytes = 0;
  for (int f : context_.layout.column_fields) {
    const Field& field = context_.schema.field(static_cast<size_t>(f));
    row_bytes += format::FixedValueBytes(field);
  }
  UREC_RETURN_IF_ERROR(BeforeRow(row_bytes));
  // Add row by row writes the page after the row that fills it, and before
  // a row that would overflow it (BeforeRow, on the next call): the rows up
  // to the first such point, found by bisection (both grow with the rows).
  const uint64_t page_bytes = context_.pages.scalar_page_bytes;
  const auto ends_page = [&](uint64_t rows) {
    const uint64_t size = scalar_page_.raw_size_after(rows);
    return size >= page_bytes || size + row_bytes > format::kMaxScalarPageBytes / 2;
  };
  uint64_t low = 1, high = std::min<uint64_t>(count, UINT32_MAX - index_.rows());
  if (ends_page(low)) {
    high = low;
  } else if (ends_page(high)) {
    while (high - low > 1) {  // ends_page(high) and not ends_page(low)
      const uint64_t mid = low + (high - low) / 2;
      (ends_page(mid) ? high : low) = mid;
    }
  }
  const uint64_t rows = high;
  for (uint64_t i = 0; i < rows; ++i) {
    uint8_t* entry = index_.AppendEntry();  // nullptr without a record table
    if (entry != nullptr) format::StoreLE<uint32_t>(entry + format::kEntryScalarPageOffset, format::kNoScalarPage);
  }
  scalar_page_.AddRows(columns, static_cast<uint32_t>(rows));
  if (scalar_page_.raw_size() >= page_bytes) UREC_RETURN_IF_ERROR(FlushScalarPage());
  return rows;
}

Status ShardWriter::Close() {
  UREC_RETURN_IF_ERROR(FlushScalarPage());
  UREC_RETURN_IF_ERROR(CloseBlobPage());
  stats_.record_count = index_.rows();
  UREC_RETURN_IF_ERROR(file_.PadTo(format::kFlatBufferAlignment));
  const std::string footer = format::BuildShardFooter(pages_, stats_);
  format::TrailerFields trailer;
  trailer.minor = context_.schema.RequiredMinorVersion();
  trailer.directory_offset = file_.offset();
  trailer.directory_length = footer.size();
  trailer.directory_checksum = format::Checksum(footer.data(), footer.size());
  footer_checksum_ = trailer.directory_checksum;
  UREC_RETURN_IF_ERROR(file_.Append(footer));
  UREC_RETURN_IF_ERROR(file_.PadTo(format::kFlatBufferAlignment));
  uint8_t trailer_bytes[format::kTrailerSize];
  format::EncodeTrailer(format::FileKind::kShard, trailer, trailer_bytes);
  UREC_RETURN_IF_ERROR(file_.Append(trailer_bytes, sizeof(trailer_bytes)));
  shard_file_length_ = file_.offset();
  UREC_RETURN_IF_ERROR(file_.Close());
  pages_ = std::vector<fb::PageEntry>();
  // A writer keeps its closed shards until Finish: their compression
  // state (about 1 MB with zstd's context) goes now (docs/scale.md).
  zstd_.reset();
  compressed_ = std::string();
  column_values_ = std::vector<std::string_view>();
  UREC_ASSIGN_OR_RETURN(index_file_length_, index_.WriteFile(index_temp_path_));
  return Status::OK();
}

Status WriteShardHeader(const std::string& path, const Schema& schema, const format::Metadata& metadata,
                        const format::ShardHeaderValues& values, uint64_t header_length, bool sync) {
  const std::string header = format::BuildShardHeader(schema, metadata, values);
  if (header.size() != header_length) {
    return Status::Internal(path + ": shard header changed size between placeholder and final");
  }
  format::PreambleFields preamble;
  preamble.minor = schema.RequiredMinorVersion();
  preamble.header_length = header.size();
  preamble.header_checksum = format::Checksum(header.data(), header.size());
  uint8_t preamble_bytes[format::kPreambleSize];
  format::EncodePreamble(format::FileKind::kShard, preamble, preamble_bytes);
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::OpenExisting(path));
  UREC_RETURN_IF_ERROR(file.WriteAt(format::kHeaderOffset, header.data(), header.size()));
  UREC_RETURN_IF_ERROR(file.WriteAt(0, preamble_bytes, sizeof(preamble_bytes)));
  if (sync) UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

Status ShardWriter::Finalize(const format::ShardHeaderValues& shard_values, const format::IndexHeaderValues& index_values,
                             bool sync) {
  UREC_RETURN_IF_ERROR(
      WriteShardHeader(shard_temp_path_, context_.schema, context_.metadata, shard_values, header_length_, sync));
  UREC_RETURN_IF_ERROR(index_.PatchHeader(index_temp_path_, index_values));
  if (sync) {
    UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::OpenExisting(index_temp_path_));
    UREC_RETURN_IF_ERROR(file.Sync());
    UREC_RETURN_IF_ERROR(file.Close());
  }
  return Status::OK();
}

}  // namespace unirecord::shard
