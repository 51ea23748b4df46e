// ConvertImageFolder: a torchvision ImageFolder into a unirecord dataset.
//
// Reading, checking and transcoding files is the slow part, so worker threads do it into
// a small ring of slots while the calling thread hands the slots, strictly in
// folder order, to the Writer. The output therefore never depends on the
// thread count.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "convert/image_folder_listing.h"
#include "convert/source_image.h"
#include "unirecord/convert.h"
#include "unirecord/schema.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kDefaultShardBytes = uint64_t{1} << 30;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One file as the workers leave it for the writing thread.
struct Slot {
  bool ready = false;
  std::string bytes;  // what the record stores (see `stored`)
  Result<SourceImageInfo> info = Status::Internal("slot not filled");  // the source's header
  StoredImage stored;
};

// Reads and checks listing.files[i] on `threads` workers into a ring of
// slots; Take(i) hands them out in order. Workers never run more than the
// ring's size ahead of the consumer, which bounds memory.
class OrderedFileReader {
 public:
  OrderedFileReader(const std::string& root, const std::vector<ImageFolderFile>& files, int threads,
                    bool keep_original)
      : root_(root), files_(files), keep_original_(keep_original), slots_(static_cast<size_t>(std::clamp(threads * 4, 8, 256))) {
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Work(); });
  }

  ~OrderedFileReader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    can_claim_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Waits for file i (i must be 0, 1, 2, ... in turn) and lends its slot
  // until Release().
  Slot& Take(size_t i) {
    Slot& slot = slots_[i % slots_.size()];
    std::unique_lock<std::mutex> lock(mutex_);
    if (!slot.ready) {
      consumer_waits_for_ = i;
      slot_ready_.wait(lock, [&] { return slot.ready; });
      consumer_waits_for_ = kNobody;
    }
    return slot;
  }

  void Release(size_t i) {
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[i % slots_.size()].ready = false;
      consumed_ = i + 1;
      // Waking idle readers per file costs more than the reading itself when
      // the data is cached: wake them once a quarter of the ring is free.
      wake = idle_workers_ > 0 && consumed_ + slots_.size() - next_ >= slots_.size() / 4;
    }
    if (wake) can_claim_.notify_all();
  }

 private:
  void Work() {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++idle_workers_;
        can_claim_.wait(lock, [&] {
          return stop_ || next_ >= files_.size() || next_ < consumed_ + slots_.size();
        });
        --idle_workers_;
        if (stop_ || next_ >= files_.size()) return;
        i = next_++;
      }
      // The slot is ours alone: the consumer released it before we could
      // claim i, and it waits for ready before touching it again.
      Slot& slot = slots_[i % slots_.size()];
      const ImageFolderFile& file = files_[i];
      if (file.is_candidate) {
        Status read = ReadSourceFile(root_ + "/" + file.path, &slot.bytes);
        slot.info = read.ok() ? CheckSourceImage(slot.bytes) : Result<SourceImageInfo>(read);
        if (slot.info.ok()) slot.stored = PrepareStoredImage(&slot.bytes, slot.info->format, keep_original_);
      }
      bool wake;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        slot.ready = true;
        wake = consumer_waits_for_ == i;
      }
      if (wake) slot_ready_.notify_one();
    }
  }

  const std::string& root_;
  const std::vector<ImageFolderFile>& files_;
  const bool keep_original_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable can_claim_;
  std::condition_variable slot_ready_;
  static constexpr size_t kNobody = SIZE_MAX;
  size_t next_ = 0;      // the next file to claim
  size_t consumed_ = 0;  // files released by the consumer
  size_t consumer_waits_for_ = kNobody;
  int idle_workers_ = 0;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Escapes what would break a TSV row: backslash, tab, newline, CR.
std::string TsvEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

// The rejects report: a header row, then one "path<TAB>reason" row per file.
std::string RejectsTsv(const std::vector<ConvertRejection>& rows) {
  std::string text = "path\treason\n";
  for (const ConvertRejection& r : rows) text += TsvEscape(r.path) + "\t" + TsvEscape(r.reason) + "\n";
  return text;
}

std::string SkipReason(const ImageFolderFile& file) {
  if (file.label < 0) return "skipped: not inside a class folder";
  const size_t slash = file.path.rfind('/');
  const size_t dot = file.path.rfind('.');
  const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return "skipped: not an image extension (" + (has_extension ? file.path.substr(dot) : std::string("none")) + ")";
}

// Takes out of `listing` the class folders whose names the class list cannot
// hold (a newline: EncodeNameList stores one name a line), with their files,
// and renumbers the other classes' labels. Returns a row per file taken out
// (a row for the folder itself when it holds none) and counts them into
// `report`: image files as rejected, others as skipped.
std::vector<ConvertRejection> TakeOutUnstorableClasses(ImageFolderListing* listing, ConvertReport* report) {
  const char* kReason = "class folder name holds a newline, which the class list (one name a line) cannot store";
  std::vector<int64_t> new_label(listing->classes.size(), -1);
  std::vector<std::string> kept;
  for (size_t c = 0; c < listing->classes.size(); ++c) {
    if (listing->classes[c].find('\n') != std::string::npos) continue;
    new_label[c] = static_cast<int64_t>(kept.size());
    kept.push_back(listing->classes[c]);
  }
  std::vector<ConvertRejection> rows;
  if (kept.size() == listing->classes.size()) return rows;
  std::vector<bool> has_files(listing->classes.size(), false);
  std::vector<ImageFolderFile> files;
  for (ImageFolderFile& file : listing->files) {
    if (file.label < 0 || new_label[static_cast<size_t>(file.label)] >= 0) {
      if (file.label >= 0) file.label = new_label[static_cast<size_t>(file.label)];
      files.push_back(std::move(file));
      continue;
    }
    has_files[static_cast<size_t>(file.label)] = true;
    if (file.is_candidate) {
      ++report->rejected;
      --listing->candidates;
      rows.push_back({file.path, kReason});
    } else {
      ++report->skipped;
      rows.push_back({file.path, std::string("skipped: ") + kReason});
    }
  }
  for (size_t c = 0; c < listing->classes.size(); ++c) {
    if (new_label[c] < 0 && !has_files[c]) {
      ++report->skipped;
      rows.push_back({listing->classes[c] + "/", std::string("skipped: an empty ") + kReason});
    }
  }
  listing->files = std::move(files);
  listing->classes = std::move(kept);
  return rows;
}

// Absolute, symlinks resolved as far as the path exists.
Result<std::string> ResolvePath(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  const fs::path resolved = ec ? fs::path() : fs::weakly_canonical(absolute, ec);
  if (ec) return Status::IOError("cannot resolve " + path + ": " + ec.message());
  return resolved.string();
}

Status CheckOutputOutsideSource(const std::string& src, const std::string& out) {
  UREC_ASSIGN_OR_RETURN(const std::string s, ResolvePath(src));
  UREC_ASSIGN_OR_RETURN(const std::string o, ResolvePath(out));
  if (o == s || (o.size() > s.size() && o.compare(0, s.size(), s) == 0 && o[s.size()] == '/')) {
    return Status::InvalidArgument("output folder " + out + " is inside the source folder " + src +
                                   ": it would be read as a class folder");
  }
  return Status::OK();
}

std::string DefaultName(const std::string& src) {
  Result<std::string> resolved = ResolvePath(src);
  const std::string base = resolved.ok() ? fs::path(*resolved).filename().string() : "";
  return base.empty() ? "data" : base;
}

Result<WriterOptions> MakeWriterOptions(const ConvertOptions& options, uint64_t candidates) {
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  if (options.num_shards > candidates) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(candidates) + " image files found: some shards would be empty");
  }
  WriterOptions w;
  if (options.num_shards > 0) {
    w.num_shards = options.num_shards;
    w.expected_records = std::max<uint64_t>(candidates, 1);  // contiguous split in folder order
  } else {
    w.target_shard_bytes = options.target_shard_bytes > 0 ? options.target_shard_bytes : kDefaultShardBytes;
  }
  w.sync = options.sync;
  return w;
}

Result<Schema> ImageFolderSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", /*indexed=*/true), Field::String("path"),
                       Field::Int32("width", /*indexed=*/true), Field::Int32("height", /*indexed=*/true),
                       Field::Int32("jpeg_layout"), Field::Int64("source_size"), Field::Int64("source_xxh3")});
}

}  // namespace

Result<ConvertReport> ConvertImageFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options) {
  const Clock::time_point start = Clock::now();
  UREC_ASSIGN_OR_RETURN(const int threads, ResolveThreadCount(options.threads, "threads"));
  UREC_ASSIGN_OR_RETURN(ImageFolderListing listing, ListImageFolder(src));
  ConvertReport report;
  report.not_written = TakeOutUnstorableClasses(&listing, &report);
  if (listing.classes.empty()) return Status::InvalidArgument("no class sub-folders in " + src);
  if (listing.candidates == 0) {
    return Status::InvalidArgument("no image files (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp) in the class folders of " + src);
  }
  UREC_RETURN_IF_ERROR(CheckOutputOutsideSource(src, out));
  UREC_ASSIGN_OR_RETURN(WriterOptions writer_options, MakeWriterOptions(options, listing.candidates));
  UREC_ASSIGN_OR_RETURN(Schema schema, ImageFolderSchema());

  report.name = options.name.empty() ? DefaultName(src) : options.name;
  report.classes = listing.classes;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, Writer::Create(out, report.name, schema, writer_options));
  UREC_ASSIGN_OR_RETURN(std::string class_list, EncodeNameList(listing.classes));
  UREC_RETURN_IF_ERROR(writer->SetMetadata(kClassesMetadataKey, class_list));

  const size_t kImage = 0, kLabel = 1, kPath = 2, kWidth = 3, kHeight = 4, kLayout = 5, kSourceSize = 6,
               kSourceXxh3 = 7;
  RecordBuilder record(schema);
  ConvertProgress progress;
  progress.files_total = listing.candidates;
  Clock::time_point last_progress = start;
  auto report_progress = [&] {
    if (!options.on_progress) return;
    progress.written = report.written;
    progress.rejected = report.rejected;
    progress.bytes = report.image_bytes;
    progress.seconds = SecondsSince(start);
    options.on_progress(progress);
  };

  {
    OrderedFileReader reader(src, listing.files, threads, options.keep_original);
    for (size_t i = 0; i < listing.files.size(); ++i) {
      const ImageFolderFile& file = listing.files[i];
      Slot& slot = reader.Take(i);
      if (file.is_candidate && slot.info.ok()) {
        const Status size = CheckSourceSize(*slot.info, slot.bytes.size(), options.limits);
        if (!size.ok()) slot.info = size;
      }
      if (!file.is_candidate) {
        ++report.skipped;
        report.not_written.push_back({file.path, SkipReason(file)});
      } else if (!slot.info.ok()) {
        if (options.strict) {
          return Status::Corruption(src + "/" + file.path + ": " + RejectReason(slot.info.status()) +
                                    " (strict mode stops at the first rejected file)");
        }
        ++report.rejected;
        report.not_written.push_back({file.path, RejectReason(slot.info.status())});
      } else {
        UREC_RETURN_IF_ERROR(record.SetBytes(kImage, slot.bytes));
        UREC_RETURN_IF_ERROR(record.SetInt64(kLabel, file.label));
        UREC_RETURN_IF_ERROR(record.SetString(kPath, file.path));
        UREC_RETURN_IF_ERROR(record.SetInt32(kWidth, slot.info->width()));
        UREC_RETURN_IF_ERROR(record.SetInt32(kHeight, slot.info->height()));
        const StoredImage& stored = slot.stored;
        UREC_RETURN_IF_ERROR(record.SetInt32(kLayout, static_cast<int32_t>(stored.layout)));
        UREC_RETURN_IF_ERROR(record.SetInt64(kSourceSize, static_cast<int64_t>(stored.source_size)));
        UREC_RETURN_IF_ERROR(record.SetInt64(kSourceXxh3, static_cast<int64_t>(stored.source_xxh3)));
        UREC_RETURN_IF_ERROR(writer->Write(record));
        ++report.written;
        report.image_bytes += slot.bytes.size();
        report.source_bytes += stored.source_size;
        if (slot.info->format == ImageFormat::kPng) {
          ++report.png;
        } else if (stored.layout == image_internal::JpegLayout::kFast) {
          ++report.transcoded;
        } else {
          ++report.kept_original;
          if (!stored.kept_reason.empty()) ++report.kept_original_reasons[stored.kept_reason];
        }
      }
      reader.Release(i);
      if (file.is_candidate) {
        ++progress.files_done;
        if (options.on_progress && SecondsSince(last_progress) >= 0.1) {
          last_progress = Clock::now();
          report_progress();
        }
      }
    }
  }
  // Committed with the shards, by the same rename.
  UREC_RETURN_IF_ERROR(writer->AddReport("rejects", RejectsTsv(report.not_written)));
  UREC_RETURN_IF_ERROR(writer->Finish());
  const WriterSummary& summary = writer->summary();
  report.shards = summary.shards;
  report.output_bytes = summary.bytes;
  report.uuid = summary.uuid;
  report.shard_paths = summary.shard_paths;
  report.rejects_path = summary.report_paths.front();
  report.seconds = SecondsSince(start);
  report_progress();
  return report;
}

}  // namespace unirecord
