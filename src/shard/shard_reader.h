// One opened shard: its mapped .urec and .uidx, checked against each other
// (format/SPEC.md section 11), plus the per-read helpers the Dataset uses.
#ifndef UNIRECORD_SHARD_SHARD_READER_H_
#define UNIRECORD_SHARD_SHARD_READER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "fb/unirecord_generated.h"
#include "format/format_constants.h"
#include "format/header_codec.h"
#include "format/scalar_page.h"
#include "index/index_file.h"
#include "index/record_table.h"
#include "io/file.h"
#include "unirecord/status.h"

namespace unirecord::shard {

// The bytes of one blob as stored: a view into the mapped shard, or the
// inflated copy of a compressed blob (the Dataset makes either a Blob).
struct BlobBytes {
  std::string_view mapped;
  std::optional<std::string> inflated;
};

// An inflated, validated scalar page.
struct DecodedPage {
  std::unique_ptr<uint8_t[]> raw;  // null for a page stored raw: the view reads the mapping
  uint64_t raw_size = 0;
  uint32_t first_row = 0;
  format::ScalarPageView view;
};

// The bytes of decoded scalar pages the readers of one dataset may keep for
// all threads to share (DatasetOptions::page_cache_bytes).
class PageBudget {
 public:
  explicit PageBudget(uint64_t limit) : limit_(limit) {}
  // Takes `bytes` of the budget; false, taking nothing, past the limit.
  bool Take(uint64_t bytes);
  void Give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

// Where Open finds the index and what the files are called in messages: a
// remote dataset's cached files are named by their URLs.
struct ShardFiles {
  std::string index_path;  // "": the .uidx beside the shard
  std::string name;        // names the shard in messages and path(); "": its path
  std::string index_name;  // names the index likewise
  // Only the shard's frame (preamble, header, footer, trailer) is real; the
  // pages are a hole (a remote shard not downloaded). Reads of pages refuse.
  bool frame_only = false;
};

// What a blob read checks against the blob's checksum.
enum class BlobCheck {
  kNone,   // nothing (verify_checksums off)
  kWhole,  // every byte (Verify, query scans)
  // A read (Get, GetBlob): every byte, but of a video or audio value, which
  // checks its header, table and extradata as it is parsed and each packet
  // before a decoder or muxer gets it (SPEC.md 6.4), so that a clip of a
  // two-hour video neither hashes nor maps in the whole video.
  kRead,
};

class ShardReader {
 public:
  // Opens `path` and the .uidx beside it; checks both frames, headers and
  // their agreement (and every index section's checksum when
  // `verify_index`). The schema is that of this shard's header.
  static Result<std::unique_ptr<ShardReader>> Open(const std::string& path, bool verify_index,
                                                   const ShardFiles& files = {});
  ~ShardReader();  // gives back the budget its kept pages took

  const std::string& path() const { return name_; }
  const std::string& index_path() const { return index_name_; }
  const format::ShardHeaderContents& header() const { return header_; }
  uint64_t header_length() const { return header_end_ - format::kHeaderOffset; }
  const fb::ShardFooter& footer() const { return *footer_; }
  const index::IndexReader& index() const { return index_; }
  const index::FieldLayout& layout() const { return layout_; }
  uint64_t records() const { return index_.records(); }
  uint64_t file_size() const { return shard_.size(); }
  uint16_t major() const { return major_; }
  uint16_t minor() const { return minor_; }

  // Entry of `row`, its checksum verified when `verify`; nullptr when the
  // shard has no record table (format/SPEC.md 8.5; layout().record_table).
  Result<const uint8_t*> Entry(uint64_t row, bool verify) const;

  // The stored bytes of blob `slot` of the entry, bounds-checked, checked
  // against its checksum as `check` says, inflated if the field is compressed.
  Result<BlobBytes> ReadBlob(const uint8_t* entry, uint64_t row, size_t slot, BlobCheck check) const;

  // Memory-latency hints for a reader that knows the rows it reads next
  // (the Loader, within a claim of samples): PrefetchEntry starts loading
  // row's record-table entry; PrefetchBlobs reads that entry (so call it a
  // row after PrefetchEntry) and starts loading the first
  // kPrefetchBlobBytes of each of its blobs in `slots`. Only CPU prefetch
  // instructions, which never fault; nothing is checked or returned, so
  // the read that follows checks everything as usual. `row` < records().
  static constexpr uint64_t kPrefetchBlobBytes = 16 << 10;
  void PrefetchEntry(uint64_t row) const;
  void PrefetchBlobs(uint64_t row, const std::vector<uint32_t>& slots) const;

  // From now on a scalar page decoded for a read is kept for every thread
  // while `budget` allows: a read at random then inflates a page once, not
  // once per record. The first pages decoded stay (with reads at random,
  // which ones matters little; sequential reads hit the per-thread cache).
  // Call before reads begin.
  void KeepDecodedPages(std::shared_ptr<PageBudget> budget);

  // The scalar page holding `row` (kept pages, then a per-thread cache of
  // recently used ones); `entry` is Entry(row)'s.
  Result<std::shared_ptr<const DecodedPage>> ScalarPage(const uint8_t* entry, uint64_t row, bool verify,
                                                        uint32_t* row_in_page) const;

  // Deep check of this shard (SPEC.md section 11, deep verify).
  Status Verify() const;

  // "PATH: row R", the start of every error about one record.
  std::string RowContext(uint64_t row) const;

 private:
  Result<std::shared_ptr<const DecodedPage>> DecodePage(uint32_t page_number, bool verify) const;
  Status CheckPageEntry(uint32_t page_number, const fb::PageEntry& page) const;

  Status CheckPagesPresent() const;
  // Without a record table (SPEC.md 8.5): the directory holds scalar pages
  // only, covering the rows in order; PageOfRow finds a row's page in it.
  Status CheckRowDirectory();
  uint32_t PageOfRow(uint64_t row) const;
  // CheckRowDirectory's: the rows of every page when all but the last hold
  // the same number and the last no more (pages of fixed-width rows), else 0.
  uint32_t uniform_page_rows_ = 0;

  io::MappedFile shard_;
  index::IndexReader index_;
  std::string name_;
  std::string index_name_;
  bool frame_only_ = false;
  format::ShardHeaderContents header_;
  const fb::ShardFooter* footer_ = nullptr;
  index::FieldLayout layout_;
  uint64_t header_end_ = 0;
  uint64_t pages_begin_ = 0;  // first byte a page may use
  uint64_t pages_end_ = 0;    // the footer's offset
  uint64_t footer_end_ = 0;
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  uint64_t serial_ = 0;  // distinguishes readers in the per-thread page cache
  // KeepDecodedPages': one slot per page of the directory, set once.
  struct KeptPage {
    std::atomic<bool> ready{false};
    bool verified = false;  // its checksum was checked (reads that verify need that)
    std::shared_ptr<const DecodedPage> page;
  };
  std::shared_ptr<PageBudget> page_budget_;
  std::unique_ptr<KeptPage[]> kept_pages_;
  mutable std::mutex keep_mu_;
  mutable uint64_t kept_bytes_ = 0;  // under keep_mu_
};

}  // namespace unirecord::shard

#endif  // UNIRECORD_SHARD_SHARD_READER_H_
