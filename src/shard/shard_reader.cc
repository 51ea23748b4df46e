#include "shard/shard_reader.h"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <new>
#include <vector>

#include "format/checksum.h"
#include "format/array_values.h"
#include "format/endian.h"
#include "format/file_names.h"
#include "format/fixed_parts.h"
#include "format/format_constants.h"
#include "unirecord/media_value.h"

namespace unirecord::shard {
namespace {

// Recently inflated scalar pages, per thread: Get stays const and lock-free,
// and sequential or block-shuffled reads inflate each page once.
constexpr size_t kPageCacheSlots = 4;
struct CachedPage {
  uint64_t serial = 0;
  uint32_t page = 0;
  std::shared_ptr<const DecodedPage> decoded;
};
thread_local std::array<CachedPage, kPageCacheSlots> t_page_cache;
thread_local size_t t_page_cache_next = 0;

std::atomic<uint64_t> g_next_serial{1};

// One decompression context per thread: ZSTD_decompress would create (and
// allocate) a fresh one on every call.
ZSTD_DCtx* ThreadDecompressor() {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  return context.get();
}

// Inflates one zstd frame into exactly `size` bytes at `out`.
bool Inflate(const uint8_t* in, uint64_t in_size, uint8_t* out, uint64_t size) {
  ZSTD_DCtx* context = ThreadDecompressor();
  if (context == nullptr) return false;
  const size_t n = ZSTD_decompressDCtx(context, out, size, in, in_size);
  return !ZSTD_isError(n) && n == size;
}

bool SameFields(const flatbuffers::Vector<int32_t>& stored, const std::vector<int>& expected) {
  if (stored.size() != expected.size()) return false;
  for (flatbuffers::uoffset_t i = 0; i < stored.size(); ++i) {
    if (stored.Get(i) != expected[i]) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<ShardReader>> ShardReader::Open(const std::string& file_path, bool verify_index,
                                                       const ShardFiles& files) {
  std::unique_ptr<ShardReader> r(new ShardReader());
  r->serial_ = g_next_serial.fetch_add(1);
  r->frame_only_ = files.frame_only;
  r->name_ = files.name.empty() ? file_path : files.name;
  const std::string& path = r->name_;  // in messages
  const std::string index_file = files.index_path.empty() ? format::IndexPathFor(file_path) : files.index_path;
  r->index_name_ = files.index_name.empty() ? index_file : files.index_name;
  const std::string& index_path = r->index_name_;  // in messages
  Result<io::MappedFile> mapped = io::MappedFile::Open(file_path);
  if (!mapped.ok()) return file_path == path ? mapped.status() : mapped.status().WithContext(path);
  r->shard_ = std::move(mapped).value();
  UREC_ASSIGN_OR_RETURN(format::FileFrame frame, format::ReadFrame(format::FileKind::kShard, r->shard_.data(), r->shard_.size(), path));
  r->major_ = frame.major;
  r->minor_ = frame.minor;
  UREC_ASSIGN_OR_RETURN(r->header_, format::ParseShardHeader(frame.header, frame.header_length, path));
  UREC_ASSIGN_OR_RETURN(r->footer_, format::VerifyShardFooter(frame.directory, frame.directory_length, path));
  r->header_end_ = frame.header_offset + frame.header_length;
  r->pages_begin_ = format::AlignUp(r->header_end_, format::kPageAlignment);
  r->pages_end_ = frame.directory_offset;
  r->footer_end_ = frame.directory_offset + frame.directory_length;
  const format::ShardHeaderValues& h = r->header_.values;
  auto corrupt = [&](const std::string& file, const std::string& what) {
    return Status::Corruption(file + ": " + what);
  };
  if (h.shard_count == 0 || h.shard_number >= h.shard_count) {
    return corrupt(path, "shard number " + std::to_string(h.shard_number) + " of " + std::to_string(h.shard_count));
  }
  if (r->footer_->record_count() != h.record_count) {
    return corrupt(path, "footer and header disagree on the record count");
  }

  Result<index::IndexReader> index = index::IndexReader::Open(index_file, verify_index);
  if (!index.ok()) {
    if (index.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(index_path + ": index of shard " + path + " not found");
    }
    return index.status();
  }
  r->index_ = std::move(index).value();
  const fb::IndexHeader& ih = r->index_.header();
  r->layout_ = index::FieldLayout::For(r->header_.schema, ih.entry_stride() != format::kNoRecordTableStride);
  const auto* index_uuid = ih.dataset_uuid()->bytes();
  for (size_t i = 0; i < h.uuid.size(); ++i) {
    if (index_uuid->Get(static_cast<flatbuffers::uoffset_t>(i)) != h.uuid[i]) {
      format::Uuid other;
      for (size_t j = 0; j < other.size(); ++j) other[j] = index_uuid->Get(static_cast<flatbuffers::uoffset_t>(j));
      return corrupt(index_path, "index of dataset " + format::UuidToString(other) + ", but shard " + path +
                                     " belongs to dataset " + format::UuidToString(h.uuid));
    }
  }
  if (ih.shard_number() != h.shard_number || ih.shard_count() != h.shard_count) {
    return corrupt(index_path, "index of shard " + std::to_string(ih.shard_number()) + " of " +
                                   std::to_string(ih.shard_count()) + ", but " + path + " is shard " +
                                   std::to_string(h.shard_number) + " of " + std::to_string(h.shard_count));
  }
  if (ih.shard_file_length() != r->shard_.size() || ih.shard_footer_checksum() != frame.directory_checksum) {
    return corrupt(index_path, "index does not match shard " + path + " (written for another version of it)");
  }
  if (ih.record_count() != h.record_count) return corrupt(index_path, "record count differs from the shard's");
  if (ih.entry_stride() != r->layout_.entry_stride || !SameFields(*ih.blob_fields(), r->layout_.blob_fields) ||
      !SameFields(*ih.indexed_fields(), r->layout_.indexed_fields)) {
    return corrupt(index_path, "record table layout does not match the shard's schema");
  }
  if (r->index_.list_fields() != r->layout_.list_fields) {
    return corrupt(index_path, "list index sections do not match the shard's indexed list fields");
  }
  if (!r->layout_.record_table) UREC_RETURN_IF_ERROR(r->CheckRowDirectory());
  return r;
}

Status ShardReader::CheckRowDirectory() {
  const auto* pages = footer_->pages();
  uint64_t next_row = 0;
  uniform_page_rows_ = pages->size() > 0 ? pages->Get(0)->row_count() : 0;
  for (uint32_t p = 0; p < pages->size(); ++p) {
    const fb::PageEntry& page = *pages->Get(p);
    if (page.kind() != fb::PageKind::Scalar || page.first_row() != next_row || page.row_count() == 0) {
      return Status::Corruption(path() + ": page directory does not cover the rows in order at page " +
                                std::to_string(p) + " (a shard without a record table finds its rows through it)");
    }
    // Pages of fixed-width rows hold the same count, the last one fewer.
    if (p + 1 < pages->size() ? page.row_count() != uniform_page_rows_ : page.row_count() > uniform_page_rows_) {
      uniform_page_rows_ = 0;
    }
    next_row += page.row_count();
  }
  if (next_row != records()) {
    return Status::Corruption(path() + ": page directory does not cover the rows in order: its pages hold " +
                              std::to_string(next_row) + " of " + std::to_string(records()) + " rows");
  }
  return Status::OK();
}

uint32_t ShardReader::PageOfRow(uint64_t row) const {
  if (uniform_page_rows_ > 0 && row < records()) return static_cast<uint32_t>(row / uniform_page_rows_);
  const auto* pages = footer_->pages();
  uint32_t lo = 0, hi = pages->size();  // the first page past `row` is in [lo, hi]
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (pages->Get(mid)->first_row() <= row) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo == 0 ? format::kNoScalarPage : lo - 1;
}

std::string ShardReader::RowContext(uint64_t row) const { return path() + ": row " + std::to_string(row); }

Status ShardReader::CheckPagesPresent() const {
  if (!frame_only_) return Status::OK();
  return Status::Internal(path() + ": read of a page of a shard that is not downloaded (only its frame is)");
}

Result<const uint8_t*> ShardReader::Entry(uint64_t row, bool verify) const {
  const uint8_t* entry = index_.entry(row);
  if (!layout_.record_table) return entry;  // nullptr: nothing to check
  if (verify && !index::EntryChecksumMatches(layout_, entry, row)) {
    return Status::Corruption(index_path() + ": record table entry of row " + std::to_string(row) +
                              " checksum mismatch");
  }
  return entry;
}

Result<BlobBytes> ShardReader::ReadBlob(const uint8_t* entry, uint64_t row, size_t slot, BlobCheck check) const {
  const index::BlobLocator b = index::LoadBlobLocator(layout_, entry, slot);
  const Field& field = header_.schema.field(static_cast<size_t>(layout_.blob_fields[slot]));
  MediaKind kind;
  const bool checks_itself = MediaKindOf(field.type, &kind);
  const bool verify = check == BlobCheck::kWhole || (check == BlobCheck::kRead && !checks_itself);
  UREC_RETURN_IF_ERROR(CheckPagesPresent());
  const char* bytes = reinterpret_cast<const char*>(shard_.data());
  if (b.stored_length > 0 && (b.offset < pages_begin_ || !format::RangeWithin(b.offset, b.stored_length, pages_end_))) {
    return Status::Corruption(RowContext(row) + ": blob '" + field.name + "' out of bounds");
  }
  // Before this library touches the blob's pages (checksum, inflate); a
  // plain unverified read touches nothing and stays free of system calls.
  if (b.stored_length > 0 && (verify || checks_itself || field.compression == BlobCompression::kZstd)) {
    UREC_RETURN_IF_ERROR(shard_.CheckNotTruncated());
  }
  std::string_view stored(b.stored_length == 0 ? "" : bytes + b.offset, b.stored_length);
  if (verify && format::Checksum(stored.data(), stored.size()) != b.checksum) {
    return Status::Corruption(RowContext(row) + ": blob '" + field.name + "' checksum mismatch");
  }
  if (field.compression != BlobCompression::kZstd) {
    if (b.raw_length != b.stored_length) {
      return Status::Corruption(RowContext(row) + ": blob '" + field.name + "' lengths disagree");
    }
    return BlobBytes{stored, std::nullopt};
  }
  // A compressed blob is exactly one zstd frame that declares its content
  // size (SPEC 6.2). Checking that before allocating raw_length bytes keeps
  // a damaged entry read with verify_checksums off from costing up to 4 GiB.
  if (b.raw_length > 0) {
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    const size_t frame_bytes = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
    if (declared != b.raw_length || ZSTD_isError(frame_bytes) || frame_bytes != stored.size()) {
      return Status::Corruption(RowContext(row) + ": blob '" + field.name +
                                "' is not one zstd frame of its raw_length");
    }
  }
  std::string raw;
  try {
    raw.resize(b.raw_length);
  } catch (const std::bad_alloc&) {
    return Status::IOError(RowContext(row) + ": cannot allocate " + std::to_string(b.raw_length) + " bytes");
  }
  if (!Inflate(reinterpret_cast<const uint8_t*>(stored.data()), stored.size(),
               reinterpret_cast<uint8_t*>(raw.data()), raw.size())) {
    return Status::Corruption(RowContext(row) + ": blob '" + field.name + "' does not inflate");
  }
  return BlobBytes{{}, std::move(raw)};
}

void ShardReader::PrefetchEntry(uint64_t row) const { __builtin_prefetch(index_.entry(row)); }

void ShardReader::PrefetchBlobs(uint64_t row, const std::vector<uint32_t>& slots) const {
  if (frame_only_) return;
  const uint8_t* entry = index_.entry(row);
  for (uint32_t slot : slots) {
    const index::BlobLocator b = index::LoadBlobLocator(layout_, entry, slot);
    if (b.offset < pages_begin_ || !format::RangeWithin(b.offset, b.stored_length, pages_end_)) continue;
    const uint8_t* bytes = shard_.data() + b.offset;
    const uint64_t length = std::min<uint64_t>(b.stored_length, kPrefetchBlobBytes);
    for (uint64_t at = 0; at < length; at += 64) __builtin_prefetch(bytes + at);
  }
}

Status ShardReader::CheckPageEntry(uint32_t page_number, const fb::PageEntry& page) const {
  const std::string where = path() + ": page " + std::to_string(page_number);
  if (page.offset() < pages_begin_ || page.offset() % format::kPageAlignment != 0 ||
      !format::RangeWithin(page.offset(), page.stored_length(), pages_end_)) {
    return Status::Corruption(where + " out of bounds");
  }
  if (page.kind() != fb::PageKind::Scalar && page.kind() != fb::PageKind::Blob) {
    return Status::Corruption(where + " has unknown kind " + std::to_string(static_cast<int>(page.kind())));
  }
  if (page.codec() != fb::Codec::None && page.codec() != fb::Codec::Zstd) {
    return Status::Corruption(where + " has unknown codec");
  }
  if ((page.codec() == fb::Codec::None && page.raw_length() != page.stored_length()) ||
      (page.kind() == fb::PageKind::Scalar && page.raw_length() > format::kMaxScalarPageBytes)) {
    return Status::Corruption(where + " has an impossible raw length");
  }
  return Status::OK();
}

Result<std::shared_ptr<const DecodedPage>> ShardReader::DecodePage(uint32_t page_number, bool verify) const {
  UREC_RETURN_IF_ERROR(CheckPagesPresent());
  const std::string where = path() + ": page " + std::to_string(page_number);
  if (page_number >= footer_->pages()->size()) return Status::Corruption(where + " does not exist");
  const fb::PageEntry& page = *footer_->pages()->Get(page_number);
  UREC_RETURN_IF_ERROR(CheckPageEntry(page_number, page));
  if (page.kind() != fb::PageKind::Scalar) return Status::Corruption(where + " is not a scalar page");
  UREC_RETURN_IF_ERROR(shard_.CheckNotTruncated());
  const uint8_t* stored = shard_.data() + page.offset();
  if (verify && format::Checksum(stored, page.stored_length()) != page.checksum()) {
    return Status::Corruption(where + " checksum mismatch");
  }
  auto decoded = std::make_shared<DecodedPage>();
  decoded->raw_size = page.raw_length();
  decoded->first_row = page.first_row();
  const uint8_t* raw = stored;  // a page stored raw is read where it lies, in the mapping
  if (page.codec() == fb::Codec::Zstd) {
    decoded->raw.reset(new (std::nothrow) uint8_t[decoded->raw_size == 0 ? 1 : decoded->raw_size]);
    if (decoded->raw == nullptr) {
      return Status::IOError(where + ": cannot allocate " + std::to_string(decoded->raw_size) + " bytes");
    }
    if (!Inflate(stored, page.stored_length(), decoded->raw.get(), decoded->raw_size)) {
      return Status::Corruption(where + " does not inflate");
    }
    raw = decoded->raw.get();
  }
  UREC_ASSIGN_OR_RETURN(decoded->view, format::ScalarPageView::Parse(raw, decoded->raw_size, header_.schema,
                                                                     layout_.column_fields, page.row_count(), where));
  return std::shared_ptr<const DecodedPage>(std::move(decoded));
}

bool PageBudget::Take(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || used > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void ShardReader::KeepDecodedPages(std::shared_ptr<PageBudget> budget) {
  if (footer_ == nullptr || footer_->pages() == nullptr || budget == nullptr) return;
  kept_pages_.reset(new KeptPage[footer_->pages()->size()]);
  page_budget_ = std::move(budget);
}

ShardReader::~ShardReader() {
  if (page_budget_ != nullptr) page_budget_->Give(kept_bytes_);
}

Result<std::shared_ptr<const DecodedPage>> ShardReader::ScalarPage(const uint8_t* entry, uint64_t row, bool verify,
                                                                   uint32_t* row_in_page) const {
  // Without a record table the directory, checked at open, locates the row.
  const uint32_t page_number =
      layout_.record_table ? format::LoadLE<uint32_t>(entry + format::kEntryScalarPageOffset) : PageOfRow(row);
  std::shared_ptr<const DecodedPage> decoded;
  for (const CachedPage& slot : t_page_cache) {
    if (slot.serial == serial_ && slot.page == page_number && slot.decoded != nullptr) decoded = slot.decoded;
  }
  // A page number past the directory is refused by DecodePage.
  KeptPage* kept = kept_pages_ != nullptr && page_number < footer_->pages()->size() ? &kept_pages_[page_number]
                                                                                     : nullptr;
  if (decoded == nullptr && kept != nullptr && kept->ready.load(std::memory_order_acquire) &&
      (kept->verified || !verify)) {
    decoded = kept->page;
  }
  if (decoded == nullptr) {
    UREC_ASSIGN_OR_RETURN(decoded, DecodePage(page_number, verify));
    // A page stored raw keeps only its view: its bytes are the mapping's.
    const uint64_t bytes = sizeof(DecodedPage) + (decoded->raw != nullptr ? decoded->raw_size : 0);
    if (kept != nullptr && page_budget_->Take(bytes)) {
      std::lock_guard<std::mutex> lock(keep_mu_);
      if (kept->ready.load(std::memory_order_relaxed)) {
        page_budget_->Give(bytes);  // another thread kept it first
      } else {
        kept->page = decoded;
        kept->verified = verify;
        kept->ready.store(true, std::memory_order_release);
        kept_bytes_ += bytes;
      }
    }
    CachedPage& slot = t_page_cache[t_page_cache_next];
    t_page_cache_next = (t_page_cache_next + 1) % kPageCacheSlots;
    slot = CachedPage{serial_, page_number, decoded};
  }
  const uint64_t page_row =
      layout_.record_table ? format::LoadLE<uint32_t>(entry + format::kEntryScalarRowOffset) : row - decoded->first_row;
  if (page_row >= decoded->view.rows() || uint64_t{decoded->first_row} + page_row != row) {
    return Status::Corruption(RowContext(row) + ": scalar locator points at the wrong row");
  }
  *row_in_page = static_cast<uint32_t>(page_row);
  return decoded;
}

Status ShardReader::Verify() const {
  UREC_RETURN_IF_ERROR(CheckPagesPresent());
  UREC_RETURN_IF_ERROR(shard_.CheckNotTruncated());
  UREC_RETURN_IF_ERROR(index_.VerifySections());
  UREC_RETURN_IF_ERROR(index_.VerifyPadding());
  // Pages: bounds, order, checksums, zero padding between them; scalar pages
  // inflate and cover every row.
  const auto* pages = footer_->pages();
  uint64_t previous_end = header_end_;
  uint64_t next_scalar_row = 0;
  for (uint32_t p = 0; p < pages->size(); ++p) {
    const fb::PageEntry& page = *pages->Get(p);
    UREC_RETURN_IF_ERROR(CheckPageEntry(p, page));
    if (page.offset() < previous_end) return Status::Corruption(path() + ": page " + std::to_string(p) + " overlaps the previous page");
    UREC_RETURN_IF_ERROR(format::CheckZeroPadding(shard_.data(), previous_end, page.offset(), path()));
    previous_end = page.offset() + page.stored_length();
    if (format::Checksum(shard_.data() + page.offset(), page.stored_length()) != page.checksum()) {
      return Status::Corruption(path() + ": page " + std::to_string(p) + " checksum mismatch");
    }
    if (page.kind() == fb::PageKind::Scalar) {
      if (page.first_row() != next_scalar_row) {
        return Status::Corruption(path() + ": scalar page " + std::to_string(p) + " does not continue the previous one");
      }
      next_scalar_row += page.row_count();
      UREC_RETURN_IF_ERROR(DecodePage(p, true).status());
    }
  }
  UREC_RETURN_IF_ERROR(format::CheckZeroPadding(shard_.data(), previous_end, pages_end_, path()));
  UREC_RETURN_IF_ERROR(format::CheckZeroPadding(shard_.data(), footer_end_, file_size() - format::kTrailerSize, path()));
  const bool has_columns = !layout_.column_fields.empty();
  if (has_columns && next_scalar_row != records()) {
    return Status::Corruption(path() + ": scalar pages cover " + std::to_string(next_scalar_row) + " of " +
                              std::to_string(records()) + " rows");
  }
  // Record table: every entry, blob and scalar locator.
  for (uint64_t row = 0; row < records(); ++row) {
    UREC_ASSIGN_OR_RETURN(const uint8_t* entry, Entry(row, true));
    for (size_t slot = 0; slot < layout_.blob_fields.size(); ++slot) {
      UREC_ASSIGN_OR_RETURN(const BlobBytes blob, ReadBlob(entry, row, slot, BlobCheck::kWhole));
      const Field& field = header_.schema.field(static_cast<size_t>(layout_.blob_fields[slot]));
      if (KindInfoOf(field.kind()).per_record_shape) {
        format::ParsedArray parsed;
        const Status shape = format::ParseVarArray(field, blob.mapped, &parsed);  // never compressed
        if (!shape.ok()) return Status::Corruption(RowContext(row) + ": " + shape.message());
      }
    }
    if (has_columns) {
      uint32_t page_row = 0;
      UREC_RETURN_IF_ERROR(ScalarPage(entry, row, true, &page_row).status());
    } else if (format::LoadLE<uint32_t>(entry + format::kEntryScalarPageOffset) != format::kNoScalarPage) {
      return Status::Corruption(RowContext(row) + ": scalar locator set but the schema has no scalar columns");
    }
  }
  // Sorted indexes: ordered, and each value equal to its row's entry.
  for (size_t slot = 0; slot < layout_.indexed_fields.size(); ++slot) {
    const FieldType type = header_.schema.field(static_cast<size_t>(layout_.indexed_fields[slot])).type;
    UREC_ASSIGN_OR_RETURN(const uint8_t* sorted, index_.SortedIndex(slot, true));
    std::vector<bool> seen(records(), false);
    const std::string where = index_path() + ": sorted index " + std::to_string(slot);
    uint64_t prev_value = 0;
    uint64_t prev_row = 0;
    for (uint64_t i = 0; i < records(); ++i) {
      const uint64_t row = format::LoadLE<uint32_t>(sorted + i * format::kSortedEntrySize);
      if (row >= records() || seen[row]) return Status::Corruption(where + ": bad row " + std::to_string(row));
      seen[row] = true;
      const uint64_t value = format::LoadLE<uint64_t>(index_.entry(row) + layout_.IndexedValueOffset(slot));
      if (i > 0 && (index::IndexedLess(type, value, prev_value) ||
                    (!index::IndexedLess(type, prev_value, value) && row < prev_row))) {
        return Status::Corruption(where + ": not sorted at entry " + std::to_string(i));
      }
      prev_value = value;
      prev_row = row;
    }
  }
  // List indexes (SPEC.md 8.4): structure (checked by ListIndex), and the
  // lengths and pairs equal to what the blobs hold.
  for (size_t slot = 0; slot < layout_.list_fields.size(); ++slot) {
    const size_t f = static_cast<size_t>(layout_.list_fields[slot]);
    const Field& field = header_.schema.field(f);
    const size_t blob_slot = static_cast<size_t>(layout_.blob_slot[f]);
    UREC_ASSIGN_OR_RETURN(const index::ListIndexView* list, index_.ListIndex(slot, true));
    const std::string where = index_path() + ": list index " + std::to_string(slot) + " (field '" + field.name + "')";
    std::vector<std::pair<int64_t, uint32_t>> pairs;
    std::vector<int64_t> values;
    const size_t width = FindType(field.type)->width;
    for (uint64_t row = 0; row < records(); ++row) {
      UREC_ASSIGN_OR_RETURN(const uint8_t* entry, Entry(row, true));
      UREC_ASSIGN_OR_RETURN(const BlobBytes blob, ReadBlob(entry, row, blob_slot, BlobCheck::kWhole));
      format::ParsedArray parsed;
      const Status shape = format::ParseVarArray(field, blob.mapped, &parsed);
      if (!shape.ok()) return Status::Corruption(RowContext(row) + ": " + shape.message());
      if (list->Length(row) != parsed.count) {
        return Status::Corruption(where + ": row " + std::to_string(row) + " has length " +
                                  std::to_string(list->Length(row)) + ", its value " + std::to_string(parsed.count));
      }
      values.resize(parsed.count);
      for (size_t i = 0; i < parsed.count; ++i) values[i] = ElementToInt64(field.type, parsed.data + i * width);
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
      for (int64_t v : values) pairs.emplace_back(v, static_cast<uint32_t>(row));
    }
    std::sort(pairs.begin(), pairs.end());
    if (pairs.size() != list->pair_count()) {
      return Status::Corruption(where + ": " + std::to_string(list->pair_count()) + " pairs, the values hold " +
                                std::to_string(pairs.size()));
    }
    uint64_t value = 0;
    for (uint64_t p = 0; p < pairs.size(); ++p) {
      while (value < list->value_count() && list->Start(value + 1) <= p) ++value;
      if (value >= list->value_count() || list->Value(value) != pairs[p].first || list->Row(p) != pairs[p].second) {
        return Status::Corruption(where + ": pair " + std::to_string(p) + " differs from the values");
      }
    }
  }
  return Status::OK();
}

}  // namespace unirecord::shard
