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
#include "unirecord/dataset.h"
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

// Shard s starts at candidate floor(s * n / N) of the n candidates (shard 0
// at the first file): the file index of each start, N + 1 entries.
std::vector<size_t> ShardStarts(const std::vector<ImageFolderFile>& files, uint64_t candidates, uint32_t shards) {
  std::vector<size_t> starts(shards + 1, files.size());
  starts[0] = 0;
  uint32_t next = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < files.size() && next < shards; ++i) {
    if (!files[i].is_candidate) continue;
    while (next < shards && seen == static_cast<uint64_t>(static_cast<unsigned __int128>(candidates) * next / shards)) {
      starts[next++] = i;
    }
    ++seen;
  }
  return starts;
}

Result<Schema> ImageFolderSchema() {
  return Schema::Make({Field::Bytes("image"), Field::Int64("label", /*indexed=*/true), Field::String("path"),
                       Field::Int32("width", /*indexed=*/true), Field::Int32("height", /*indexed=*/true),
                       Field::Int32("jpeg_layout"), Field::Int64("source_size"), Field::Int64("source_xxh3")});
}

}  // namespace

Result<ImageFolderPlan> PlanImageFolder(const std::string& src, const std::string& out,
                                        const ConvertOptions& options) {
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "threads").status());
  if (options.num_shards > 0 && options.target_shard_bytes > 0) {
    return Status::InvalidArgument("give a shard count or a shard size, not both");
  }
  UREC_ASSIGN_OR_RETURN(ImageFolderListing listing, ListImageFolder(src));
  ConvertReport left_out;
  ImageFolderPlan plan;
  plan.left_out = TakeOutUnstorableClasses(&listing, &left_out);
  plan.left_out_rejected = left_out.rejected;
  plan.left_out_skipped = left_out.skipped;
  if (listing.classes.empty()) return Status::InvalidArgument("no class sub-folders in " + src);
  if (listing.candidates == 0) {
    return Status::InvalidArgument("no image files (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp) in the class folders of " + src);
  }
  UREC_RETURN_IF_ERROR(CheckOutputOutsideSource(src, out));
  if (options.num_shards > listing.candidates) {
    return Status::InvalidArgument("num_shards " + std::to_string(options.num_shards) + " is more than the " +
                                   std::to_string(listing.candidates) + " image files found: some shards would be empty");
  }
  plan.name = options.name.empty() ? DefaultName(src) : options.name;
  plan.classes = std::move(listing.classes);
  plan.candidates = listing.candidates;
  if (options.num_shards > 0) plan.shard_starts = ShardStarts(listing.files, listing.candidates, options.num_shards);
  plan.files = std::move(listing.files);
  return plan;
}

ImageFolderPart PartOfPlan(const ImageFolderPlan& plan, uint32_t first_shard, uint32_t end_shard, uint32_t part,
                           uint32_t num_parts) {
  ImageFolderPart p;
  p.classes = plan.classes;
  p.part = part;
  p.num_parts = num_parts;
  if (plan.shard_starts.empty()) {
    p.files = plan.files;
    return p;
  }
  const size_t begin = plan.shard_starts.at(first_shard), end = plan.shard_starts.at(end_shard);
  p.files.assign(plan.files.begin() + static_cast<std::ptrdiff_t>(begin), plan.files.begin() + static_cast<std::ptrdiff_t>(end));
  for (uint32_t s = first_shard; s < end_shard; ++s) p.shard_starts.push_back(plan.shard_starts[s] - begin);
  return p;
}

Result<ConvertReport> ConvertImageFolderPart(const std::string& src, const ImageFolderPart& part,
                                             const std::string& out, const std::string& name,
                                             const std::string& token, const ConvertOptions& options) {
  const Clock::time_point start = Clock::now();
  UREC_ASSIGN_OR_RETURN(const int threads, ResolveThreadCount(options.threads, "threads"));
  for (size_t i = 0; i < part.shard_starts.size(); ++i) {
    if (part.shard_starts[i] > part.files.size() || (i > 0 && part.shard_starts[i] < part.shard_starts[i - 1]) ||
        (i == 0 && part.shard_starts[0] != 0)) {
      return Status::InvalidArgument("image folder part " + std::to_string(part.part) +
                                     ": shard_starts must start at 0 and rise within its files");
    }
  }
  for (const ImageFolderFile& file : part.files) {
    if (file.label >= static_cast<int64_t>(part.classes.size()) || (file.is_candidate && file.label < 0)) {
      return Status::InvalidArgument("image folder part " + std::to_string(part.part) + ": " + file.path +
                                     " has label " + std::to_string(file.label) + " of " +
                                     std::to_string(part.classes.size()) + " classes");
    }
  }
  WriterOptions writer_options;
  if (part.shard_starts.empty()) {
    writer_options.target_shard_bytes = options.target_shard_bytes > 0 ? options.target_shard_bytes : kDefaultShardBytes;
  }
  writer_options.sync = options.sync;
  UREC_ASSIGN_OR_RETURN(Schema schema, ImageFolderSchema());
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<PartWriter> writer,
                        PartWriter::Create(out, name, token, part.part, part.num_parts, schema, writer_options));
  UREC_ASSIGN_OR_RETURN(std::string class_list, EncodeNameList(part.classes));
  UREC_RETURN_IF_ERROR(writer->SetMetadata(kClassesMetadataKey, class_list));

  const size_t kImage = 0, kLabel = 1, kPath = 2, kWidth = 3, kHeight = 4, kLayout = 5, kSourceSize = 6,
               kSourceXxh3 = 7;
  ConvertReport report;
  RecordBuilder record(schema);
  ConvertProgress progress;
  for (const ImageFolderFile& file : part.files) progress.files_total += file.is_candidate ? 1 : 0;
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
    OrderedFileReader reader(src, part.files, threads, options.keep_original);
    size_t next_shard = 1;
    for (size_t i = 0; i < part.files.size(); ++i) {
      const ImageFolderFile& file = part.files[i];
      while (next_shard < part.shard_starts.size() && part.shard_starts[next_shard] == i) {
        UREC_RETURN_IF_ERROR(writer->NextShard());
        ++next_shard;
      }
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
    // Shards whose starts lie at the end (none of the part's files left).
    for (; next_shard < part.shard_starts.size(); ++next_shard) UREC_RETURN_IF_ERROR(writer->NextShard());
  }
  UREC_RETURN_IF_ERROR(writer->Finish());
  report.name = name;
  report.classes = part.classes;
  report.shards = writer->summary().shards;
  report.output_bytes = writer->summary().bytes;
  report.shard_paths = writer->summary().shard_paths;
  report.seconds = SecondsSince(start);
  report_progress();
  return report;
}

Result<ConvertReport> CommitImageFolder(StagedWrite& staged, const ImageFolderPlan& plan,
                                        const std::vector<ConvertReport>& parts) {
  ConvertReport report;
  report.name = plan.name;
  report.classes = plan.classes;
  report.rejected = plan.left_out_rejected;
  report.skipped = plan.left_out_skipped;
  report.not_written = plan.left_out;
  for (const ConvertReport& part : parts) {
    report.written += part.written;
    report.rejected += part.rejected;
    report.skipped += part.skipped;
    report.image_bytes += part.image_bytes;
    report.source_bytes += part.source_bytes;
    report.transcoded += part.transcoded;
    report.kept_original += part.kept_original;
    report.png += part.png;
    for (const auto& [reason, count] : part.kept_original_reasons) report.kept_original_reasons[reason] += count;
    report.not_written.insert(report.not_written.end(), part.not_written.begin(), part.not_written.end());
    report.seconds = std::max(report.seconds, part.seconds);
  }
  // Committed with the shards, by the same rename.
  UREC_RETURN_IF_ERROR(staged.AddReport("rejects", RejectsTsv(report.not_written)));
  UREC_RETURN_IF_ERROR(staged.Commit());
  const WriterSummary& summary = staged.summary();
  report.shards = summary.shards;
  report.output_bytes = summary.bytes;
  report.uuid = summary.uuid;
  report.shard_paths = summary.shard_paths;
  report.rejects_path = summary.report_paths.front();
  return report;
}

Result<ConvertReport> ConvertImageFolder(const std::string& src, const std::string& out,
                                         const ConvertOptions& options) {
  const Clock::time_point start = Clock::now();
  UREC_ASSIGN_OR_RETURN(ImageFolderPlan plan, PlanImageFolder(src, out, options));
  StagedWriteOptions staged_options;
  staged_options.sync = options.sync;
  const std::string existing = out + "/" + plan.name;
  bool append = false;
  if (options.append) {
    Result<std::shared_ptr<Dataset>> old = Dataset::Open(existing);
    if (!old.ok() && old.status().code() != StatusCode::kNotFound) return old.status();
    append = old.ok();
  }
  const uint32_t parts = append ? 2 : 1;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<StagedWrite> staged, StagedWrite::Begin(out, plan.name, parts, staged_options));
  if (append) {
    UREC_RETURN_IF_ERROR(StageDatasetCopy(out, plan.name, staged->token(), 0, parts, existing, options.sync));
  }
  ImageFolderPart whole;
  whole.part = parts - 1;
  whole.num_parts = parts;
  whole.classes = plan.classes;
  whole.files = std::move(plan.files);
  whole.shard_starts = plan.shard_starts;
  if (!whole.shard_starts.empty()) whole.shard_starts.pop_back();  // a part lists where its shards start
  ConvertOptions part_options = options;
  part_options.on_progress = nullptr;  // reported below, once the commit is done
  if (options.on_progress) {
    part_options.on_progress = [&](const ConvertProgress& p) {
      if (p.files_done < p.files_total) options.on_progress(p);
    };
  }
  UREC_ASSIGN_OR_RETURN(ConvertReport part, ConvertImageFolderPart(src, whole, out, plan.name, staged->token(), part_options));
  UREC_ASSIGN_OR_RETURN(ConvertReport report, CommitImageFolder(*staged, plan, {std::move(part)}));
  report.seconds = SecondsSince(start);
  if (options.on_progress) {
    ConvertProgress done;
    done.files_total = done.files_done = plan.candidates;
    done.written = report.written;
    done.rejected = report.rejected;
    done.bytes = report.image_bytes;
    done.seconds = report.seconds;
    options.on_progress(done);
  }
  return report;
}

}  // namespace unirecord
