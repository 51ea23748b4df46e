#include "convert/file_records.h"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <unistd.h>

#include "convert/source_path.h"
#include "unirecord/media.h"
#include "dataset/field_defaults.h"
#include "format/file_names.h"
#include "io/file.h"
#include "unirecord/dataset.h"
#include "util/threads.h"

namespace unirecord::convert_internal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One file as the workers leave it for the writing thread.
struct Slot {
  bool ready = false;
  std::string bytes;  // what the record stores (see `stored`)
  Result<SourceImageInfo> info = Status::Internal("slot not filled");  // the source's header
  StoredImage stored;
  // ImageRecordHooks::media: the file's media value and its size.
  Result<std::string> media = Status::Internal("slot not filled");
  uint64_t source_size = 0;
};

// Reads and checks listing.files[i] on `threads` workers into a ring of
// slots; Take(i) hands them out in order. Workers never run more than the
// ring's size ahead of the consumer, which bounds memory.
class OrderedFileReader {
 public:
  OrderedFileReader(const std::string& root, const std::vector<ImageFolderFile>& files, int threads,
                    bool keep_original, bool read_files, bool follow_links_outside, std::optional<MediaKind> media)
      : root_(root, follow_links_outside), files_(files), keep_original_(keep_original), read_files_(read_files),
        media_(media), slots_(static_cast<size_t>(std::clamp(threads * 4, 8, 256))) {
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
      if (file.is_candidate && read_files_) {
        // The path policy (convert/source_path.h): links resolved, inside the root.
        const Result<std::string> path = root_.Resolve(file.path);
        const Status read = path.ok() ? ReadSourceFile(*path, &slot.bytes) : path.status();
        if (media_) {
          slot.source_size = slot.bytes.size();
          slot.media = read.ok() ? media::Demux(slot.bytes, {*media_, -1, file.path}) : Result<std::string>(read);
          slot.bytes.clear();
        } else {
          slot.info = read.ok() ? CheckSourceImage(slot.bytes) : Result<SourceImageInfo>(read);
          if (slot.info.ok()) slot.stored = PrepareStoredImage(&slot.bytes, slot.info->format, keep_original_);
        }
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

  const SourceRoot root_;
  const std::vector<ImageFolderFile>& files_;
  const bool keep_original_;
  const bool read_files_;  // false: records without an image, nothing to read
  const std::optional<MediaKind> media_;
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

}  // namespace

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The rejects report: a header row, then one "path<TAB>reason" row per file.
std::string RejectsTsv(const std::vector<ConvertRejection>& rows) {
  std::string text = "path\treason\n";
  for (const ConvertRejection& r : rows) text += TsvEscape(r.path) + "\t" + TsvEscape(r.reason) + "\n";
  return text;
}

std::string DefaultName(const std::string& src) {
  Result<std::string> resolved = ResolvePath(src);
  const std::string base = resolved.ok() ? fs::path(*resolved).filename().string() : "";
  return base.empty() ? "data" : base;
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

namespace {

// The image fields every converter's records have, by name.
struct ImageFieldIndexes {
  size_t image, width, height, jpeg_layout, source_size, source_xxh3;
};

Result<ImageFieldIndexes> FindImageFields(const Schema& schema, const std::string& image_field) {
  ImageFieldIndexes f{};
  UREC_ASSIGN_OR_RETURN(f.image, schema.FindField(image_field));
  UREC_ASSIGN_OR_RETURN(f.width, schema.FindField("width"));
  UREC_ASSIGN_OR_RETURN(f.height, schema.FindField("height"));
  UREC_ASSIGN_OR_RETURN(f.jpeg_layout, schema.FindField("jpeg_layout"));
  UREC_ASSIGN_OR_RETURN(f.source_size, schema.FindField("source_size"));
  UREC_ASSIGN_OR_RETURN(f.source_xxh3, schema.FindField("source_xxh3"));
  return f;
}

// WriteImagePart's records, through `writer`, counted into `report`.
Status WriteImageRecords(const std::string& root, const std::vector<ImageFolderFile>& files,
                         const std::vector<size_t>& shard_starts, const ConvertOptions& options,
                         const Schema& schema, const ImageRecordHooks& hooks, PartWriter& writer,
                         ConvertReport* report) {
  const Clock::time_point start = Clock::now();
  UREC_ASSIGN_OR_RETURN(const int threads, ResolveThreadCount(options.threads, "threads"));
  const bool with_image = !hooks.image_field.empty();
  ImageFieldIndexes f{};
  if (hooks.media) {
    UREC_ASSIGN_OR_RETURN(f.image, schema.FindField(hooks.image_field));
  } else if (with_image) {
    UREC_ASSIGN_OR_RETURN(f, FindImageFields(schema, hooks.image_field));
  }
  RecordBuilder record(schema);
  ConvertProgress progress;
  for (const ImageFolderFile& file : files) progress.files_total += file.is_candidate ? 1 : 0;
  Clock::time_point last_progress = start;
  auto report_progress = [&] {
    if (!options.on_progress) return;
    progress.written = report->written;
    progress.rejected = report->rejected;
    progress.bytes = report->image_bytes;
    progress.seconds = SecondsSince(start);
    options.on_progress(progress);
  };

  OrderedFileReader reader(root, files, threads, options.keep_original, with_image, options.follow_links_outside,
                           hooks.media);
  size_t next_shard = 1;
  for (size_t i = 0; i < files.size(); ++i) {
    const ImageFolderFile& file = files[i];
    while (next_shard < shard_starts.size() && shard_starts[next_shard] == i) {
      UREC_RETURN_IF_ERROR(writer.NextShard());
      ++next_shard;
    }
    Slot& slot = reader.Take(i);
    std::string reject;
    if (file.is_candidate && hooks.invalid) reject = hooks.invalid(i);
    if (file.is_candidate && hooks.media && reject.empty()) {
      if (slot.media.ok() && hooks.prepare_media) {
        const Status prepared = hooks.prepare_media(i, &*slot.media);
        if (!prepared.ok()) slot.media = prepared;
      }
      if (!slot.media.ok()) reject = RejectReason(slot.media.status());
    } else if (file.is_candidate && with_image && reject.empty()) {
      if (slot.info.ok()) {
        const Status size = CheckSourceSize(*slot.info, slot.bytes.size(), options.limits);
        if (!size.ok()) slot.info = size;
      }
      if (!slot.info.ok()) {
        reject = RejectReason(slot.info.status());
      } else if (hooks.reject) {
        reject = hooks.reject(i, *slot.info);
      }
    }
    if (!file.is_candidate) {
      ++report->skipped;
      report->not_written.push_back({file.path, hooks.skip_reason(i)});
    } else if (!reject.empty()) {
      if (options.strict) {
        const std::string where = hooks.strict_name ? hooks.strict_name(i) : root + "/" + file.path;
        return Status::Corruption(where + ": " + reject + " (strict mode stops at the first rejection)");
      }
      ++report->rejected;
      report->not_written.push_back({file.path, reject});
    } else if (!with_image) {
      UREC_RETURN_IF_ERROR(hooks.fill(i, record));
      UREC_RETURN_IF_ERROR(writer.Write(record));
      ++report->written;
    } else if (hooks.media) {
      UREC_RETURN_IF_ERROR(record.SetMediaValue(f.image, *slot.media));
      UREC_RETURN_IF_ERROR(hooks.fill(i, record));
      UREC_RETURN_IF_ERROR(writer.Write(record));
      ++report->written;
      report->image_bytes += slot.media->size();
      report->source_bytes += slot.source_size;
      *slot.media = std::string();  // the ring's memory is the values in flight, not every value seen
    } else {
      const StoredImage& stored = slot.stored;
      UREC_RETURN_IF_ERROR(record.SetBytes(f.image, slot.bytes));
      UREC_RETURN_IF_ERROR(record.SetInt32(f.width, slot.info->width()));
      UREC_RETURN_IF_ERROR(record.SetInt32(f.height, slot.info->height()));
      UREC_RETURN_IF_ERROR(record.SetInt32(f.jpeg_layout, static_cast<int32_t>(stored.layout)));
      UREC_RETURN_IF_ERROR(record.SetInt64(f.source_size, static_cast<int64_t>(stored.source_size)));
      UREC_RETURN_IF_ERROR(record.SetInt64(f.source_xxh3, static_cast<int64_t>(stored.source_xxh3)));
      UREC_RETURN_IF_ERROR(hooks.fill(i, record));
      UREC_RETURN_IF_ERROR(writer.Write(record));
      ++report->written;
      report->image_bytes += slot.bytes.size();
      report->source_bytes += stored.source_size;
      if (slot.info->format == ImageFormat::kPng) {
        ++report->png;
      } else if (stored.layout == image_internal::JpegLayout::kFast) {
        ++report->transcoded;
      } else {
        ++report->kept_original;
        if (!stored.kept_reason.empty()) ++report->kept_original_reasons[stored.kept_reason];
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
  // Shards whose starts lie at the end (none of the files left).
  for (; next_shard < shard_starts.size(); ++next_shard) UREC_RETURN_IF_ERROR(writer.NextShard());
  report_progress();
  return Status::OK();
}

}  // namespace

Result<ConvertReport> WriteImagePart(const PartTarget& target, const std::string& root,
                                     const std::vector<ImageFolderFile>& files,
                                     const std::vector<size_t>& shard_starts, const ConvertOptions& options,
                                     const ImageRecordHooks& hooks) {
  const Clock::time_point start = Clock::now();
  WriterOptions writer_options;
  if (shard_starts.empty()) {
    writer_options.target_shard_bytes = options.target_shard_bytes > 0 ? options.target_shard_bytes : kDefaultShardBytes;
  }
  writer_options.sync = options.sync;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<PartWriter> writer,
                        PartWriter::Create(target.out, target.name, target.token, target.part, target.num_parts,
                                           target.schema, writer_options));
  for (const auto& [key, value] : target.metadata) UREC_RETURN_IF_ERROR(writer->SetMetadata(key, value));
  ConvertReport report;
  UREC_RETURN_IF_ERROR(WriteImageRecords(root, files, shard_starts, options, target.schema, hooks, *writer, &report));
  UREC_RETURN_IF_ERROR(writer->Finish());
  report.name = target.name;
  report.shards = writer->summary().shards;
  report.output_bytes = writer->summary().bytes;
  report.shard_paths = writer->summary().shard_paths;
  report.seconds = SecondsSince(start);
  return report;
}

namespace {

// Where a conversion that wrote no record leaves its rejects report: a name
// no dataset file has (never removed by a writer); the next conversion of
// NAME into OUT that commits removes it.
std::string NothingWrittenReportPath(const std::string& out, const std::string& name) {
  return io::JoinPath(out, name + ".rejected.tsv");
}

// The error of a conversion that wrote no record: the rejects report goes to
// NothingWrittenReportPath, and the message names it with the count and the
// first reasons.
Status NothingWritten(const std::string& out, const std::string& name, const std::vector<ConvertRejection>& rows) {
  const std::string report = NothingWrittenReportPath(out, name);
  const std::string temporary = io::JoinPath(out, format::TemporaryReportFileName(name, ::getpid(), "rejected"));
  Status saved = [&]() -> Status {
    UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(temporary));
    UREC_RETURN_IF_ERROR(file.Append(RejectsTsv(rows)));
    UREC_RETURN_IF_ERROR(file.Close());
    return io::RenameFile(temporary, report);
  }();
  if (!saved.ok()) io::RemoveFileIfExists(temporary);
  std::string first;
  for (size_t i = 0; i < rows.size() && i < 3; ++i) {
    first += (i ? "; " : "") + rows[i].path + ": " + rows[i].reason;
  }
  if (first.size() > 400) first = first.substr(0, 397) + "...";
  return Status::InvalidArgument(
      "dataset " + name + " in " + out + ": no record written, every input was rejected (" +
      std::to_string(rows.size()) + " rows" + (first.empty() ? "" : ", first: " + first) + "); nothing committed; " +
      (saved.ok() ? "the rejects report is " + report : "the rejects report could not be saved: " + saved.message()) +
      " (allow_empty / --allow-empty commits an empty dataset)");
}

}  // namespace

Result<ConvertReport> CommitParts(StagedWrite& staged, const CommitTarget& target, ConvertReport report,
                                  const std::vector<ConvertReport>& parts) {
  for (const ConvertReport& part : parts) {
    report.written += part.written;
    report.rejected += part.rejected;
    report.skipped += part.skipped;
    report.image_bytes += part.image_bytes;
    report.source_bytes += part.source_bytes;
    report.transcoded += part.transcoded;
    report.kept_original += part.kept_original;
    report.png += part.png;
    report.annotations += part.annotations;
    for (const auto& [reason, count] : part.kept_original_reasons) report.kept_original_reasons[reason] += count;
    report.not_written.insert(report.not_written.end(), part.not_written.begin(), part.not_written.end());
    report.seconds = std::max(report.seconds, part.seconds);
  }
  if (report.written == 0 && !target.allow_empty) {
    return NothingWritten(target.out, target.name, report.not_written);  // `staged` goes: nothing is committed
  }
  // Committed with the shards, by the same rename.
  UREC_RETURN_IF_ERROR(staged.AddReport("rejects", RejectsTsv(report.not_written)));
  UREC_RETURN_IF_ERROR(staged.Commit());
  io::RemoveFileIfExists(NothingWrittenReportPath(target.out, target.name));  // it described an earlier, failed run
  const WriterSummary& summary = staged.summary();
  report.shards = summary.shards;
  report.output_bytes = summary.bytes;
  report.uuid = summary.uuid;
  report.shard_paths = summary.shard_paths;
  report.rejects_path = summary.report_paths.front();
  return report;
}

namespace {

// `c`'s files [begin, end) with their shard starts from `starts` (each
// relative to begin) as part `part` of `num_parts`.
Result<ConvertReport> WritePreparedRange(const PreparedConversion& c, const std::string& out, const std::string& token,
                                         size_t begin, size_t end, std::vector<size_t> starts, uint32_t part,
                                         uint32_t num_parts, const ConvertOptions& options) {
  // A local run writes them all: no copy of the list then.
  const bool whole = begin == 0 && end == c.files.size();
  std::vector<ImageFolderFile> slice;
  if (!whole) {
    slice.assign(c.files.begin() + static_cast<std::ptrdiff_t>(begin), c.files.begin() + static_cast<std::ptrdiff_t>(end));
  }
  const std::vector<ImageFolderFile>& files = whole ? c.files : slice;
  ImageRecordHooks hooks = c.hooks;
  if (begin > 0) {  // the hooks index the whole input
    if (c.hooks.fill) hooks.fill = [&c, begin](size_t i, RecordBuilder& r) { return c.hooks.fill(begin + i, r); };
    if (c.hooks.reject) {
      hooks.reject = [&c, begin](size_t i, const SourceImageInfo& info) { return c.hooks.reject(begin + i, info); };
    }
    if (c.hooks.skip_reason) hooks.skip_reason = [&c, begin](size_t i) { return c.hooks.skip_reason(begin + i); };
    if (c.hooks.invalid) hooks.invalid = [&c, begin](size_t i) { return c.hooks.invalid(begin + i); };
    if (c.hooks.prepare_media) {
      hooks.prepare_media = [&c, begin](size_t i, std::string* value) { return c.hooks.prepare_media(begin + i, value); };
    }
    if (c.hooks.strict_name) hooks.strict_name = [&c, begin](size_t i) { return c.hooks.strict_name(begin + i); };
  }
  const PartTarget target{out, c.name, token, part, num_parts, c.schema, c.metadata};
  UREC_ASSIGN_OR_RETURN(ConvertReport report, WriteImagePart(target, c.root, files, starts, options, hooks));
  if (c.finish_part) c.finish_part(&report);
  return report;
}

}  // namespace

Result<ConvertReport> ConvertPrepared(const PreparedConversion& c, const std::string& out, const ConvertOptions& options) {
  if (options.extend_classes) {
    return Status::InvalidArgument("extend_classes: only an image folder has a class list to extend");
  }
  std::vector<size_t> starts = c.shard_starts;
  if (!starts.empty()) starts.pop_back();  // a part lists where its shards start
  return ConvertLocally(out, c.name, options, c.schema, c.files.size(), c.head,
                        [&](const std::string& token, uint32_t part, uint32_t num_parts, const ConvertOptions& o) {
                          return WritePreparedRange(c, out, token, 0, c.files.size(), starts, part, num_parts, o);
                        });
}

Result<ConvertReport> WritePreparedShards(const PreparedConversion& c, const std::string& out, const std::string& token,
                                          uint32_t first_shard, uint32_t end_shard, uint32_t part, uint32_t num_parts,
                                          const ConvertOptions& options) {
  const size_t shards = c.shard_starts.empty() ? 0 : c.shard_starts.size() - 1;
  if (shards == 0) return Status::InvalidArgument(c.name + ": a conversion in parts needs num_shards");
  if (first_shard >= end_shard || end_shard > shards || part >= num_parts) {
    return Status::InvalidArgument(c.name + ": shards [" + std::to_string(first_shard) + ", " +
                                   std::to_string(end_shard) + ") as part " + std::to_string(part) + " of " +
                                   std::to_string(num_parts) + ", of a plan of " + std::to_string(shards) + " shards");
  }
  const size_t begin = c.shard_starts[first_shard], end = c.shard_starts[end_shard];
  std::vector<size_t> starts;
  for (uint32_t s = first_shard; s < end_shard; ++s) starts.push_back(c.shard_starts[s] - begin);
  return WritePreparedRange(c, out, token, begin, end, std::move(starts), part, num_parts, options);
}


Result<ConvertReport> ConvertLocally(const std::string& out, const std::string& name, const ConvertOptions& options,
                                     const Schema& schema, uint64_t files_total, ConvertReport head,
                                     const PartFunction& write_part) {
  const Clock::time_point start = Clock::now();
  if (options.defaults && !options.append) {
    return Status::InvalidArgument("defaults (--default) are for the fields an append's records lack: they need "
                                   "append (--append)");
  }
  StagedWriteOptions staged_options;
  staged_options.sync = options.sync;
  staged_options.defaults = options.defaults;
  const std::string existing = out + "/" + name;
  bool append = false;
  if (options.append) {
    Result<std::shared_ptr<Dataset>> old = Dataset::Open(existing);
    if (!old.ok() && old.status().code() != StatusCode::kNotFound) return old.status();
    append = old.ok();
    // Records that lack fields the dataset added later are refused now, not
    // once converted (the commit checks again, and the rest of the schema).
    if (const std::optional<Schema> lacking = append ? dataset::LackingFields(schema, (*old)->schema()) : std::nullopt) {
      UREC_RETURN_IF_ERROR(
          dataset::CheckDefaults("append to " + existing, "the new records", "the dataset", *lacking, options.defaults));
    }
  }
  const uint32_t parts = 1;
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<StagedWrite> staged, StagedWrite::Begin(out, name, parts, staged_options));
  if (append) UREC_RETURN_IF_ERROR(staged->KeepCommitted());
  ConvertOptions part_options = options;
  part_options.on_progress = nullptr;  // the last report comes after the commit
  if (options.on_progress) {
    part_options.on_progress = [&](const ConvertProgress& p) {
      if (p.files_done < p.files_total) options.on_progress(p);
    };
  }
  UREC_ASSIGN_OR_RETURN(ConvertReport part, write_part(staged->token(), parts - 1, parts, part_options));
  UREC_ASSIGN_OR_RETURN(ConvertReport report, CommitParts(*staged, CommitTarget{out, name, options.allow_empty},
                                                          std::move(head), {std::move(part)}));
  report.seconds = SecondsSince(start);
  if (options.on_progress) {
    ConvertProgress done;
    done.files_total = done.files_done = files_total;
    done.written = report.written;
    done.rejected = report.rejected;
    done.bytes = report.image_bytes;
    done.seconds = report.seconds;
    options.on_progress(done);
  }
  return report;
}

}  // namespace unirecord::convert_internal
