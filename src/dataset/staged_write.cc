// StagedWrite: commits a dataset whose parts PartWriters staged in other
// processes (staged_write.h; format/SPEC.md section 1.1).
#include <map>
#include <random>

#include "dataset/commit.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "index/index_file.h"
#include "shard/shard_reader.h"
#include "shard/shard_writer.h"
#include "unirecord/dataset.h"
#include "unirecord/staged_write.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

// 18 decimal digits from the system's random source.
std::string NewToken() {
  std::random_device random;
  const uint64_t value = (static_cast<uint64_t>(random()) << 32) ^ random();
  std::string digits = std::to_string(value % 1000000000000000000ull);
  return std::string(18 - digits.size(), '0') + digits;
}

// One staged shard on its way into the dataset.
struct StagedShard {
  uint32_t part = 0;
  uint32_t shard_in_part = 0;
  std::string staged_path;  // the .urec as the part staged it
  std::string path;         // its generation name
  // From the verified files:
  format::ShardHeaderValues header;
  format::IndexHeaderValues index;
  uint64_t shard_header_length = 0;
  uint64_t index_header_length = 0;
  uint64_t index_file_length = 0;
};

// Copies `from` to a new file `to` (through io, so crash tests see it).
Status CopyWholeFile(const std::string& from, const std::string& to, bool sync) {
  UREC_ASSIGN_OR_RETURN(io::MappedFile source, io::MappedFile::Open(from));
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(to));
  if (source.size() > 0) UREC_RETURN_IF_ERROR(file.Append(source.data(), source.size()));
  if (sync) UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

bool SamePageSettings(const format::ShardHeaderValues& a, const format::ShardHeaderValues& b) {
  return a.blob_page_bytes == b.blob_page_bytes && a.scalar_page_bytes == b.scalar_page_bytes &&
         a.zstd_level == b.zstd_level;
}

}  // namespace

struct StagedWrite::Impl {
  std::string out_dir;
  std::string name;
  uint32_t num_parts = 0;
  std::string token;
  StagedWriteOptions options;
  io::FileLock lock;
  uint64_t generation = 0;
  std::vector<std::pair<std::string, std::string>> reports;
  bool done = false;
  WriterSummary summary;

  std::string InDir(const std::string& file) const { return io::JoinPath(out_dir, file); }

  // "part K shard J (staged as FILE)": how every error names a shard.
  static std::string Describe(const StagedShard& s) {
    return "part " + std::to_string(s.part) + " shard " + std::to_string(s.shard_in_part) + " (staged as " +
           s.staged_path + ")";
  }

  Result<std::vector<dataset::PartFile>> ReadPartFiles() const {
    std::vector<dataset::PartFile> parts;
    uint64_t shards = 0;
    for (uint32_t k = 0; k < num_parts; ++k) {
      const std::string path = InDir(format::StagedPartFileName(name, token, k));
      std::string text;
      Status read = io::ReadFile(path, 4096, &text);
      if (read.code() == StatusCode::kNotFound) {
        return Status::FailedPrecondition("staged write: part " + std::to_string(k) + " of " +
                                          std::to_string(num_parts) + " is not complete (no " + path + ")");
      }
      UREC_RETURN_IF_ERROR(read);
      UREC_ASSIGN_OR_RETURN(dataset::PartFile part, dataset::DecodePartFile(text, path));
      if (part.part != k || part.parts != num_parts) {
        return Status::Corruption(path + ": part " + std::to_string(part.part) + " of " + std::to_string(part.parts) +
                                  ", expected part " + std::to_string(k) + " of " + std::to_string(num_parts));
      }
      shards += part.shards;
      parts.push_back(part);
    }
    if (shards > format::kMaxShards) {
      return Status::InvalidArgument("staged write: the parts hold " + std::to_string(shards) + " shards, over " +
                                     std::to_string(format::kMaxShards));
    }
    return parts;
  }

  // Opens a shard at its generation name with the reader's checks (frames,
  // headers and footer, index sections' checksums, shard and index agree).
  Result<std::unique_ptr<shard::ShardReader>> Verify(StagedShard* s, const dataset::PartFile& part) const {
    Result<std::unique_ptr<shard::ShardReader>> reader = shard::ShardReader::Open(s->path, /*verify_index=*/true);
    if (!reader.ok()) {
      return Status(reader.status().code(), "staged write: " + Describe(*s) + " fails verification: " +
                                                reader.status().message());
    }
    const shard::ShardReader& r = **reader;
    s->index_file_length = r.index().file_size();
    s->header = r.header().values;
    s->index = index::IndexHeaderValuesOf(r.index().header());
    s->shard_header_length = r.header_length();
    s->index_header_length = r.index().header_length();
    if (s->header.shard_number != s->shard_in_part || s->header.shard_count != part.shards) {
      return Status::Corruption("staged write: " + Describe(*s) + " says it is shard " +
                                std::to_string(s->header.shard_number) + " of " + std::to_string(s->header.shard_count) +
                                " of its part");
    }
    return reader;
  }

  Status CommitParts() {
    UREC_ASSIGN_OR_RETURN(const std::vector<dataset::PartFile> parts, ReadPartFiles());
    std::vector<StagedShard> shards;
    for (const dataset::PartFile& part : parts) {
      for (uint32_t j = 0; j < part.shards; ++j) {
        StagedShard s;
        s.part = part.part;
        s.shard_in_part = j;
        s.staged_path = InDir(format::StagedShardFileName(name, token, part.part, j));
        shards.push_back(std::move(s));
      }
    }
    const uint32_t count = static_cast<uint32_t>(shards.size());
    // Step 3 first renames: once a staged file has its generation name, no
    // late attempt of its part can replace it.
    for (uint32_t n = 0; n < count; ++n) {
      StagedShard& s = shards[n];
      s.path = InDir(format::ShardFileName(name, generation, n, count));
      const std::string staged_index = InDir(format::StagedIndexFileName(name, token, s.part, s.shard_in_part));
      for (const auto& [from, to] : {std::make_pair(staged_index, format::IndexPathFor(s.path)),
                                     std::make_pair(s.staged_path, s.path)}) {
        Status moved = io::RenameFile(from, to);
        if (!moved.ok()) return Status(moved.code(), "staged write: " + Describe(s) + ": " + moved.message());
      }
    }
    // Shard 0's schema, metadata and page settings are the dataset's; every
    // other shard must have the same.
    format::ShardHeaderContents dataset_header;
    {
      UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> first, Verify(&shards[0], parts[0]));
      dataset_header = first->header();
    }
    // "classes" is the class list: what merge and append users most often get wrong.
    const std::string entry_names_note = " (values differ or are missing)";
    UREC_RETURN_IF_ERROR(ParallelFor(count, options.threads, "staged write: threads", [&](size_t n) -> Status {
      if (n == 0) return Status::OK();
      StagedShard& s = shards[n];
      UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> reader, Verify(&s, parts[s.part]));
      const format::ShardHeaderContents& h = reader->header();
      std::string differs;
      if (h.schema != dataset_header.schema) {
        differs = "schema " + h.schema.ToString() + " (part 0: " + dataset_header.schema.ToString() + ")";
      } else if (h.metadata != dataset_header.metadata) {
        std::map<std::string, std::string> all = h.metadata;
        all.insert(dataset_header.metadata.begin(), dataset_header.metadata.end());
        for (const auto& entry : all) {
          const auto mine = h.metadata.find(entry.first);
          const auto first = dataset_header.metadata.find(entry.first);
          if (mine == h.metadata.end() || first == dataset_header.metadata.end() || mine->second != first->second) {
            differs += (differs.empty() ? "metadata '" : ", '") + entry.first + "'";
          }
        }
        differs += entry_names_note;
      } else if (!SamePageSettings(h.values, dataset_header.values)) {
        differs = "page settings (blob_page_bytes, scalar_page_bytes, zstd_level)";
      }
      if (!differs.empty()) {
        return Status::InvalidArgument("staged write: " + Describe(s) + " has another " + differs +
                                       " than part 0 shard 0");
      }
      return Status::OK();
    }));
    std::vector<uint64_t> part_records(parts.size(), 0);
    for (const StagedShard& s : shards) part_records[s.part] += s.header.record_count;
    for (const dataset::PartFile& part : parts) {
      if (part_records[part.part] != part.records) {
        return Status::Corruption("staged write: part " + std::to_string(part.part) + " holds " +
                                  std::to_string(part_records[part.part]) + " records, its part file says " +
                                  std::to_string(part.records));
      }
    }
    // The dataset's values, as Writer::Finish computes them.
    std::vector<format::ShardDigest> digests;
    std::vector<uint64_t> first_ids(count + 1, 0);
    for (uint32_t n = 0; n < count; ++n) {
      const StagedShard& s = shards[n];
      digests.push_back({s.header.record_count, s.index.shard_footer_checksum, s.index.sections.at(0).checksum()});
      first_ids[n + 1] = first_ids[n] + s.header.record_count;
    }
    format::ShardHeaderValues page_settings = dataset_header.values;
    const format::Uuid uuid =
        format::DeriveDatasetUuid(digests, dataset_header.schema, dataset_header.metadata, page_settings);
    const uint16_t minor = dataset_header.schema.RequiredMinorVersion();
    UREC_RETURN_IF_ERROR(ParallelFor(count, options.threads, "staged write: threads", [&](size_t n) -> Status {
      StagedShard& s = shards[n];
      format::ShardHeaderValues header = s.header;
      header.uuid = uuid;
      header.shard_number = static_cast<uint32_t>(n);
      header.shard_count = count;
      UREC_RETURN_IF_ERROR(shard::WriteShardHeader(s.path, dataset_header.schema, dataset_header.metadata, header,
                                                   s.shard_header_length, options.sync));
      format::IndexHeaderValues index = s.index;
      index.uuid = uuid;
      index.shard_number = static_cast<uint32_t>(n);
      index.shard_count = count;
      index.first_id = first_ids[n];
      index.dataset_record_count = first_ids[count];
      const std::string index_path = format::IndexPathFor(s.path);
      UREC_RETURN_IF_ERROR(index::WriteIndexHeader(index_path, minor, index, s.index_header_length));
      if (options.sync) {
        UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::OpenExisting(index_path));
        UREC_RETURN_IF_ERROR(file.Sync());
        UREC_RETURN_IF_ERROR(file.Close());
      }
      return Status::OK();
    }));
    for (const StagedShard& s : shards) {
      summary.shard_paths.push_back(s.path);
      summary.index_paths.push_back(format::IndexPathFor(s.path));
      summary.bytes += s.index.shard_file_length + s.index_file_length;
    }
    dataset::PendingGeneration pending;
    pending.generation = generation;
    pending.shard_count = count;
    pending.uuid = format::UuidToString(uuid);
    pending.reports = reports;
    pending.sync = options.sync;
    UREC_RETURN_IF_ERROR(dataset::CommitGeneration(out_dir, name, pending, &summary));
    summary.records = first_ids[count];
    return Status::OK();
  }
};

Status StageDatasetCopy(const std::string& out_dir, const std::string& name, const std::string& token, uint32_t part,
                        uint32_t num_parts, const std::string& source, bool sync) {
  UREC_RETURN_IF_ERROR(dataset::CheckDatasetName(name, "staged copy"));
  if (!format::IsStagingToken(token) || num_parts == 0 || num_parts > format::kMaxShards || part >= num_parts) {
    return Status::InvalidArgument("staged copy: token '" + token + "', part " + std::to_string(part) + " of " +
                                   std::to_string(num_parts));
  }
  UREC_ASSIGN_OR_RETURN(std::shared_ptr<Dataset> dataset, Dataset::Open(source));
  const std::string attempt = std::to_string(static_cast<unsigned long>(std::random_device()())) + "c";
  auto in_dir = [&](const std::string& file) { return io::JoinPath(out_dir, file); };
  std::vector<std::pair<std::string, std::string>> moves;  // attempt name -> staged name
  Status status;
  const std::vector<ShardInfo>& shards = dataset->shards();
  for (uint32_t s = 0; s < shards.size() && status.ok(); ++s) {
    for (const bool index : {true, false}) {
      const std::string from = index ? shards[s].index_path : shards[s].path;
      const std::string to = in_dir(index ? format::PartAttemptIndexFileName(name, token, part, attempt, s)
                                          : format::PartAttemptShardFileName(name, token, part, attempt, s));
      moves.emplace_back(to, in_dir(index ? format::StagedIndexFileName(name, token, part, s)
                                          : format::StagedShardFileName(name, token, part, s)));
      status = CopyWholeFile(from, to, sync);
      if (!status.ok()) break;
    }
  }
  if (status.ok()) {
    for (const auto& [from, to] : moves) {
      status = io::RenameFile(from, to);
      if (!status.ok()) break;
    }
  }
  const std::string part_file = in_dir(format::PartAttemptPartFileName(name, token, part, attempt));
  if (status.ok()) {
    status = dataset::WriteWholeFile(
        part_file,
        dataset::EncodePartFile({part, num_parts, static_cast<uint32_t>(shards.size()), dataset->size()}), sync);
  }
  if (status.ok()) status = io::RenameFile(part_file, in_dir(format::StagedPartFileName(name, token, part)));
  if (!status.ok()) {
    for (const auto& move : moves) io::RemoveFileIfExists(move.first);
    io::RemoveFileIfExists(part_file);
    return Status(status.code(), "staged copy of " + source + ": " + status.message());
  }
  return sync ? io::SyncDirectory(out_dir) : Status::OK();
}

Result<WriterSummary> MergeDatasets(const std::string& out_dir, const std::string& name,
                                    const std::vector<std::string>& inputs, const StagedWriteOptions& options) {
  if (inputs.empty()) return Status::InvalidArgument("merge: no input datasets");
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<StagedWrite> staged,
                        StagedWrite::Begin(out_dir, name, static_cast<uint32_t>(inputs.size()), options));
  for (uint32_t k = 0; k < inputs.size(); ++k) {
    UREC_RETURN_IF_ERROR(StageDatasetCopy(out_dir, name, staged->token(), k, static_cast<uint32_t>(inputs.size()),
                                          inputs[k], options.sync));
  }
  UREC_RETURN_IF_ERROR(staged->Commit());
  return staged->summary();
}

StagedWrite::StagedWrite(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StagedWrite::~StagedWrite() { dataset::ReleaseDataset(impl_->out_dir, impl_->name, &impl_->lock); }

Result<std::unique_ptr<StagedWrite>> StagedWrite::Begin(const std::string& out_dir, const std::string& name,
                                                        uint32_t num_parts, const StagedWriteOptions& options) {
  UREC_RETURN_IF_ERROR(dataset::CheckDatasetName(name, "staged write"));
  if (num_parts == 0 || num_parts > format::kMaxShards) {
    return Status::InvalidArgument("staged write: num_parts " + std::to_string(num_parts) + " is not in 1.." +
                                   std::to_string(format::kMaxShards));
  }
  UREC_RETURN_IF_ERROR(ResolveThreadCount(options.threads, "staged write: threads").status());
  // The lock file names the token while this run holds it: parts stage
  // only then (dataset::StagedWriteUnderWay).
  std::string token = NewToken();
  UREC_ASSIGN_OR_RETURN(dataset::DatasetLock locked, dataset::LockDataset(out_dir, name, "staged write", token));
  auto impl = std::make_unique<Impl>();
  impl->out_dir = out_dir;
  impl->name = name;
  impl->num_parts = num_parts;
  impl->token = std::move(token);
  impl->options = options;
  impl->lock = std::move(locked.lock);
  impl->generation = locked.generation;
  return std::unique_ptr<StagedWrite>(new StagedWrite(std::move(impl)));
}

const std::string& StagedWrite::token() const { return impl_->token; }
uint32_t StagedWrite::num_parts() const { return impl_->num_parts; }

Status StagedWrite::AddReport(const std::string& label, std::string text) {
  if (impl_->done) return Status::FailedPrecondition("staged write: AddReport after Commit");
  UREC_RETURN_IF_ERROR(dataset::CheckReportLabel(label, impl_->reports, "staged write"));
  impl_->reports.emplace_back(label, std::move(text));
  return Status::OK();
}

Status StagedWrite::Commit() {
  Impl& w = *impl_;
  if (w.done) return Status::FailedPrecondition("staged write: Commit called twice");
  w.done = true;
  const Status status = w.CommitParts();
  dataset::ReleaseDataset(w.out_dir, w.name, &w.lock);
  return status;
}

const WriterSummary& StagedWrite::summary() const { return impl_->summary; }

}  // namespace unirecord
