// StagedWrite: commits a dataset whose parts PartWriters staged in other
// processes (staged_write.h; format/SPEC.md section 1.1).
#include <map>

#include "dataset/commit.h"
#include "dataset/field_defaults.h"
#include "dataset/segment_links.h"
#include "dataset/shard_access.h"
#include "format/dataset_uuid.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/segment_metadata.h"
#include "index/index_file.h"
#include "shard/shard_reader.h"
#include "shard/shard_writer.h"
#include "unirecord/dataset.h"
#include "unirecord/staged_write.h"
#include "unirecord/writer.h"
#include "util/threads.h"

namespace unirecord {
namespace {

// One staged shard on its way into the dataset.
struct StagedShard {
  uint32_t part = 0;
  uint32_t shard_in_part = 0;
  // AddFieldGroup(): the committed segment it sits beside, and its shard there.
  uint32_t segment = 0;
  uint32_t shard_in_segment = 0;
  std::string staged_path;  // the .urec as the part staged it
  std::string path;         // its generation name
  // From the verified files:
  format::ShardHeaderValues header;
  format::IndexHeaderValues index;
  uint64_t shard_header_length = 0;
  uint64_t index_header_length = 0;
  uint64_t index_file_length = 0;
  uint64_t scalar_pages = 0;
};

bool SamePageSettings(const format::ShardHeaderValues& a, const format::ShardHeaderValues& b) {
  return a.blob_page_bytes == b.blob_page_bytes && a.scalar_page_bytes == b.scalar_page_bytes &&
         a.zstd_level == b.zstd_level;
}

// "" when `schema` equals `reference_schema` and `metadata` may follow
// `reference_metadata` (format::MetadataDifference); else what differs:
// "schema S (REFERENCE: R)" or "metadata 'classes', 'x' (values differ or
// are missing)" ("classes" is the class list: what merge and append users
// most often get wrong).
std::string SchemaOrMetadataDifference(const Schema& schema, const format::Metadata& metadata,
                                       const Schema& reference_schema, const format::Metadata& reference_metadata,
                                       const std::string& reference, format::ClassList classes) {
  if (schema != reference_schema) {
    return "schema " + schema.ToString() + " (" + reference + ": " + reference_schema.ToString() + ")";
  }
  return format::MetadataDifference(metadata, reference_metadata, classes);
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
  bool keep_committed = false;
  bool add_fields = false;  // AddFieldGroup(): the parts are the new fields of the segments' shards
  WriterSummary summary;

  // KeepCommitted(): the committed dataset's segments, in place (those of
  // the layout before manifests linked to generation names from
  // `*next_generation` on); NotFound-free: none when there is no dataset.
  Result<std::shared_ptr<Dataset>> KeptSegments(std::vector<format::Segment>* segments, uint64_t* next_generation) {
    Result<std::shared_ptr<Dataset>> committed = Dataset::Open(InDir(name));
    if (!committed.ok()) {
      if (committed.status().code() == StatusCode::kNotFound && !io::PathExists(InDir(format::ManifestFileName(name)))) {
        return std::shared_ptr<Dataset>();
      }
      return committed.status();
    }
    const Dataset& d = **committed;
    for (const SegmentInfo& segment : d.segments()) {
      format::Segment named = dataset::AsSegment(segment, segment.generation, segment.first_id);
      if (!dataset::NamedInPlace(d, segment, out_dir, name)) {
        named.generation = (*next_generation)++;
        UREC_RETURN_IF_ERROR(dataset::LinkSegment(d, segment, out_dir, name, &named, next_generation, options.sync,
                                         &summary.bytes_written));
      }
      segments->push_back(std::move(named));
    }
    return committed;
  }

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
    s->scalar_pages = r.footer().scalar_page_count();
    if (s->header.shard_number != s->shard_in_part || s->header.shard_count != part.shards) {
      return Status::Corruption("staged write: " + Describe(*s) + " says it is shard " +
                                std::to_string(s->header.shard_number) + " of " + std::to_string(s->header.shard_count) +
                                " of its part");
    }
    return reader;
  }

  // Step 3 of a commit (SPEC.md 1.1): the staged shards get their generation
  // names, are verified and stamped with the dataset's values; then step 4.
  Status CommitParts() {
    UREC_ASSIGN_OR_RETURN(const std::vector<dataset::PartFile> parts, ReadPartFiles());
    std::vector<StagedShard> shards = StagedShardsOf(parts);
    std::vector<format::Segment> segments;  // kept before the new one
    uint64_t new_generation = generation;
    std::shared_ptr<Dataset> committed;
    if (keep_committed || add_fields) {
      UREC_ASSIGN_OR_RETURN(committed, KeptSegments(&segments, &new_generation));
    }
    if (add_fields) UREC_RETURN_IF_ERROR(PlaceBesideSegments(committed.get(), segments, &shards));
    UREC_RETURN_IF_ERROR(RenameToGenerationNames(segments, new_generation, &shards));
    UREC_ASSIGN_OR_RETURN(const format::ShardHeaderContents dataset_header, VerifyShards(parts, &shards));
    Schema lacking;  // the fields the new records lack of the dataset they join
    if (!add_fields) {
      UREC_ASSIGN_OR_RETURN(lacking, LackingOfNewRecords(committed.get(), dataset_header));
    }
    UREC_RETURN_IF_ERROR(CheckRecordCounts(parts, shards, committed.get()));
    const Runs runs = PlanRuns(shards, dataset_header);
    UREC_RETURN_IF_ERROR(StampShards(shards, dataset_header, runs));
    if (add_fields) {
      return CommitFieldGroup(*committed, dataset_header.schema, std::move(segments), shards, runs.uuids,
                              new_generation);
    }
    return CommitNewSegment(committed.get(), std::move(segments), shards, runs, lacking, new_generation);
  }

  // The staged shards of `parts`, in order, under their staged names.
  std::vector<StagedShard> StagedShardsOf(const std::vector<dataset::PartFile>& parts) const {
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
    return shards;
  }

  // Step 3 first renames: once a staged file has its generation name, no
  // late attempt of its part can replace it. Adding fields, the names are
  // those of column files beside `segments`; else of the new segment.
  Status RenameToGenerationNames(const std::vector<format::Segment>& segments, uint64_t new_generation,
                                 std::vector<StagedShard>* shards) const {
    const uint32_t count = static_cast<uint32_t>(shards->size());
    for (uint32_t n = 0; n < count; ++n) {
      StagedShard& s = (*shards)[n];
      s.path = add_fields ? InDir(format::ColumnFileName(name, segments[s.segment].generation, new_generation,
                                                         s.shard_in_segment, segments[s.segment].shard_count))
                          : InDir(format::ShardFileName(name, new_generation, n, count));
      const std::string staged_index = InDir(format::StagedIndexFileName(name, token, s.part, s.shard_in_part));
      for (const auto& [from, to] : {std::make_pair(staged_index, format::IndexPathFor(s.path)),
                                     std::make_pair(s.staged_path, s.path)}) {
        Status moved = io::RenameFile(from, to);
        if (!moved.ok()) return Status(moved.code(), "staged write: " + Describe(s) + ": " + moved.message());
      }
    }
    return Status::OK();
  }

  // Verifies every shard (Verify). Shard 0's schema, metadata and page
  // settings are the dataset's (its header is returned); every other shard
  // must have the same.
  Result<format::ShardHeaderContents> VerifyShards(const std::vector<dataset::PartFile>& parts,
                                                   std::vector<StagedShard>* shards) const {
    format::ShardHeaderContents dataset_header;
    {
      UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> first, Verify(&(*shards)[0], parts[0]));
      dataset_header = first->header();
    }
    UREC_RETURN_IF_ERROR(ParallelFor(shards->size(), options.threads, "staged write: threads", [&](size_t n) -> Status {
      if (n == 0) return Status::OK();
      StagedShard& s = (*shards)[n];
      UREC_ASSIGN_OR_RETURN(std::unique_ptr<shard::ShardReader> reader, Verify(&s, parts[s.part]));
      const format::ShardHeaderContents& h = reader->header();
      std::string differs = SchemaOrMetadataDifference(h.schema, h.metadata, dataset_header.schema,
                                                       dataset_header.metadata, "part 0", format::ClassList::kEqual);
      if (differs.empty() && !SamePageSettings(h.values, dataset_header.values)) {
        differs = "page settings (blob_page_bytes, scalar_page_bytes, zstd_level)";
      }
      if (!differs.empty()) {
        return Status::InvalidArgument("staged write: " + Describe(s) + " has another " + differs +
                                       " than part 0 shard 0");
      }
      return Status::OK();
    }));
    return dataset_header;
  }

  // Every part holds the records its part file says; adding fields, every
  // shard as many as the `committed` shard it sits beside.
  Status CheckRecordCounts(const std::vector<dataset::PartFile>& parts, const std::vector<StagedShard>& shards,
                           const Dataset* committed) const {
    std::vector<uint64_t> part_records(parts.size(), 0);
    for (const StagedShard& s : shards) {
      part_records[s.part] += s.header.record_count;
      if (!add_fields) continue;
      const ShardInfo& beside =
          committed->shards()[committed->segments()[s.segment].first_shard + s.shard_in_segment];
      if (s.header.record_count != beside.records) {
        return Status::InvalidArgument("add fields to " + InDir(name) + ": " + Describe(s) + " has " +
                                       std::to_string(s.header.record_count) + " records, its shard " + beside.path +
                                       " " + std::to_string(beside.records));
      }
    }
    for (const dataset::PartFile& part : parts) {
      if (part_records[part.part] != part.records) {
        return Status::Corruption("staged write: part " + std::to_string(part.part) + " holds " +
                                  std::to_string(part_records[part.part]) + " records, its part file says " +
                                  std::to_string(part.records));
      }
    }
    return Status::OK();
  }

  // The dataset's values, as Writer::Finish computes them; adding fields,
  // each segment's column files are a dataset of their own (SPEC.md 1.4): a
  // run. Without added fields there is one run, the new segment.
  struct Runs {
    std::vector<uint32_t> run_of;     // per shard: its run
    std::vector<uint32_t> numbers;    // per shard: its number in its run
    std::vector<uint64_t> first_ids;  // per shard: its first record's id in its run
    std::vector<uint64_t> records;    // per run
    std::vector<uint32_t> shards;     // per run
    std::vector<format::Uuid> uuids;  // per run
  };
  Runs PlanRuns(const std::vector<StagedShard>& shards, const format::ShardHeaderContents& dataset_header) const {
    const uint32_t count = static_cast<uint32_t>(shards.size());
    Runs runs;
    runs.run_of.assign(count, 0);
    for (uint32_t n = 1; n < count; ++n) {
      runs.run_of[n] = runs.run_of[n - 1] + (add_fields && shards[n].segment != shards[n - 1].segment ? 1 : 0);
    }
    const size_t run_count = count == 0 ? 0 : runs.run_of[count - 1] + 1;
    std::vector<std::vector<format::ShardDigest>> digests(run_count);
    runs.first_ids.assign(count, 0);
    runs.numbers.assign(count, 0);
    runs.records.assign(run_count, 0);
    runs.shards.assign(run_count, 0);
    for (uint32_t n = 0; n < count; ++n) {
      const StagedShard& s = shards[n];
      const uint32_t r = runs.run_of[n];
      digests[r].push_back({s.header.record_count, s.index.shard_footer_checksum, s.index.sections.at(0).checksum()});
      runs.first_ids[n] = runs.records[r];
      runs.numbers[n] = runs.shards[r]++;
      runs.records[r] += s.header.record_count;
    }
    for (size_t r = 0; r < run_count; ++r) {
      runs.uuids.push_back(format::DeriveDatasetUuid(digests[r], dataset_header.schema, dataset_header.metadata,
                                                     dataset_header.values));
    }
    return runs;
  }

  // Writes each shard's and index's header with the values of its run.
  Status StampShards(const std::vector<StagedShard>& shards, const format::ShardHeaderContents& dataset_header,
                     const Runs& runs) const {
    return ParallelFor(shards.size(), options.threads, "staged write: threads", [&](size_t n) -> Status {
      const StagedShard& s = shards[n];
      const uint32_t r = runs.run_of[n];
      format::ShardHeaderValues header = s.header;
      header.uuid = runs.uuids[r];
      header.shard_number = runs.numbers[n];
      header.shard_count = runs.shards[r];
      UREC_RETURN_IF_ERROR(shard::WriteShardHeader(s.path, dataset_header.schema, dataset_header.metadata, header,
                                                   s.shard_header_length, options.sync));
      format::IndexHeaderValues index = s.index;
      index.uuid = runs.uuids[r];
      index.shard_number = runs.numbers[n];
      index.shard_count = runs.shards[r];
      index.first_id = runs.first_ids[n];
      index.dataset_record_count = runs.records[r];
      const std::string index_path = format::IndexPathFor(s.path);
      UREC_RETURN_IF_ERROR(index::WriteIndexHeader(
          index_path, index::IndexMinorVersion(dataset_header.schema, index.entry_stride), index, s.index_header_length));
      if (options.sync) {
        UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::OpenExisting(index_path));
        UREC_RETURN_IF_ERROR(file.Sync());
        UREC_RETURN_IF_ERROR(file.Close());
      }
      return Status::OK();
    });
  }

  // Commits the stamped `shards` as a new segment after the kept `segments`
  // of `committed` (with the defaults of the `lacking` fields) and fills in
  // the summary. An append of nothing adds no segment (its empty shard is
  // removed at cleanup).
  Status CommitNewSegment(const Dataset* committed, std::vector<format::Segment> segments,
                          const std::vector<StagedShard>& shards, const Runs& runs, const Schema& lacking,
                          uint64_t new_generation) {
    const uint64_t kept_records = committed != nullptr ? committed->size() : 0;
    if (committed != nullptr) {
      for (const ShardInfo& shard : committed->shards()) {
        summary.bytes += shard.file_bytes + shard.index_bytes;
      }
    }
    const uint64_t new_records = runs.records.empty() ? 0 : runs.records[0];
    const bool new_segment = segments.empty() || new_records > 0;
    for (size_t k = 0; k < segments.size(); ++k) {
      for (uint32_t j = 0; j < segments[k].shard_count; ++j) {
        const std::string path = InDir(format::ShardFileName(name, segments[k].generation, j, segments[k].shard_count));
        summary.shard_paths.push_back(path);
        summary.index_paths.push_back(format::IndexPathFor(path));
      }
    }
    for (const StagedShard& s : shards) {
      if (!new_segment) break;
      summary.shard_paths.push_back(s.path);
      summary.index_paths.push_back(format::IndexPathFor(s.path));
      summary.bytes += s.index.shard_file_length + s.index_file_length;
      summary.bytes_written += s.index.shard_file_length + s.index_file_length;
    }
    uint64_t commit_generation = new_generation;
    if (new_segment) {
      const uint32_t count = static_cast<uint32_t>(shards.size());
      segments.push_back(
          format::Segment{new_generation, count, kept_records, format::UuidToString(runs.uuids[0]), {}, {}});
      if (lacking.num_fields() > 0) {
        UREC_RETURN_IF_ERROR(AddDefaults(shards, lacking, ++commit_generation, &segments.back()));
      }
    }
    UREC_RETURN_IF_ERROR(CommitSegments(commit_generation, std::move(segments)));
    summary.records = kept_records + (new_segment ? new_records : 0);
    return Status::OK();
  }

  // Gives the new `segment` (of the stamped `shards`) the defaults of the
  // `lacking` fields: a field group at `generation`, after the segment's
  // (SPEC.md 1.4). The parts' staged names are free again (their files
  // have their generation names): the group is staged as part 0 of 1.
  Status AddDefaults(const std::vector<StagedShard>& shards, const Schema& lacking, uint64_t generation,
                     format::Segment* segment) {
    dataset::DefaultGroup group{out_dir, name, token, 0, 1, segment->generation, generation, {}, 0, options.sync};
    for (const StagedShard& s : shards) {
      group.records.push_back(s.header.record_count);
      group.scalar_pages += s.scalar_pages;
    }
    const uint64_t before = summary.bytes_written;
    Result<format::FieldGroup> written =
        dataset::WriteDefaultGroup(group, lacking, options.defaults, &summary.bytes_written);
    if (!written.ok()) {
      return Status(written.status().code(), "append to " + InDir(name) + ": " + written.status().message());
    }
    summary.bytes += summary.bytes_written - before;
    segment->groups.push_back(std::move(*written));
    return Status::OK();
  }

  // The fields the new records (shards of `header`) lack of the `committed`
  // dataset they are appended to, which options.defaults gives them (none
  // without a dataset); InvalidArgument naming what differs unless their
  // schema is the dataset's or its first fields, their metadata may follow
  // its, and the defaults fit.
  Result<Schema> LackingOfNewRecords(const Dataset* committed, const format::ShardHeaderContents& header) const {
    std::string where = "append to " + InDir(name);
    Schema lacking;
    if (committed == nullptr) {
      where = keep_committed ? where + " (no dataset there yet)" : "write " + InDir(name) + " (not an append)";
    } else {
      std::optional<Schema> lacks = dataset::LackingFields(header.schema, committed->schema());
      const std::string differs =
          !lacks ? "schema " + header.schema.ToString() + " (the dataset's: " + committed->schema().ToString() + ")"
                 : format::MetadataDifference(header.metadata, committed->metadata(), format::ClassList::kMayGrow);
      if (!differs.empty()) return Status::InvalidArgument(where + ": the new records have another " + differs);
      lacking = std::move(*lacks);
    }
    UREC_RETURN_IF_ERROR(dataset::CheckDefaults(where, "the new records", "the dataset", lacking, options.defaults));
    return lacking;
  }

  // Steps 3 (the reports) and 4 with the files in place.
  Status CommitSegments(uint64_t generation, std::vector<format::Segment> segments) {
    dataset::PendingGeneration pending;
    pending.generation = generation;
    pending.segments = std::move(segments);
    pending.reports = reports;
    pending.sync = options.sync;
    return dataset::CommitGeneration(out_dir, name, pending, &summary);
  }

  // AddFieldGroup(): the parts' shards, in order, are beside the shards of
  // `committed`'s segments, in order, and no part spans two segments; sets
  // each shard's segment and its shard there.
  Status PlaceBesideSegments(const Dataset* committed, const std::vector<format::Segment>& segments,
                             std::vector<StagedShard>* shards) const {
    const std::string where = "add fields to " + InDir(name) + ": ";
    if (committed == nullptr) return Status::FailedPrecondition(where + "there is no committed dataset");
    const size_t total = committed->shards().size();
    if (shards->size() != total) {
      return Status::InvalidArgument(where + "the parts hold " + std::to_string(shards->size()) +
                                     " shards, the dataset " + std::to_string(total) +
                                     " (every shard of every segment gets the fields)");
    }
    uint32_t segment = 0, shard_in_segment = 0;
    for (size_t n = 0; n < total; ++n) {
      StagedShard& s = (*shards)[n];
      if (shard_in_segment == segments[segment].shard_count) {
        ++segment;
        shard_in_segment = 0;
        if (s.shard_in_part != 0) {
          return Status::InvalidArgument(where + "part " + std::to_string(s.part) + " spans segments " +
                                         std::to_string(segment - 1) + " and " + std::to_string(segment) +
                                         " (a part holds shards of one segment)");
        }
      }
      s.segment = segment;
      s.shard_in_segment = shard_in_segment++;
    }
    return Status::OK();
  }

  // Commits the stamped column files `shards` (of `schema`) as field group `generation`
  // of every segment (UUID uuids[k] for segment k's): fields of the
  // same name in earlier groups are superseded (a group left with none is
  // no longer named).
  Status CommitFieldGroup(const Dataset& committed, const Schema& schema, std::vector<format::Segment> segments,
                          const std::vector<StagedShard>& shards, const std::vector<format::Uuid>& uuids,
                          uint64_t generation) {
    std::vector<std::string> fields;
    for (const Field& f : schema.fields()) fields.push_back(f.name);
    for (size_t k = 0; k < segments.size(); ++k) {
      std::vector<format::FieldGroup> groups;
      for (format::FieldGroup& group : segments[k].groups) {
        std::vector<std::string> kept;
        for (std::string& f : group.fields) {
          if (std::find(fields.begin(), fields.end(), f) == fields.end()) kept.push_back(std::move(f));
        }
        group.fields = std::move(kept);
        if (!group.fields.empty()) groups.push_back(std::move(group));
      }
      groups.push_back(format::FieldGroup{generation, format::UuidToString(uuids[k]), fields});
      segments[k].groups = std::move(groups);
    }
    for (const StagedShard& s : shards) {
      summary.shard_paths.push_back(s.path);
      summary.index_paths.push_back(format::IndexPathFor(s.path));
      summary.bytes_written += s.index.shard_file_length + s.index_file_length;
    }
    summary.bytes = summary.bytes_written;
    UREC_RETURN_IF_ERROR(CommitSegments(generation, std::move(segments)));
    summary.records = committed.size();
    return Status::OK();
  }
};

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
  std::string token = dataset::NewToken();
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

Status StagedWrite::KeepCommitted() {
  if (impl_->done) return Status::FailedPrecondition("staged write: KeepCommitted after Commit");
  if (impl_->add_fields) return Status::FailedPrecondition("staged write: KeepCommitted after AddFieldGroup");
  impl_->keep_committed = true;
  return Status::OK();
}

Status StagedWrite::AddFieldGroup() {
  if (impl_->done) return Status::FailedPrecondition("staged write: AddFieldGroup after Commit");
  if (impl_->options.defaults) {
    return Status::InvalidArgument("staged write: StagedWriteOptions::defaults are an append's or a merge's; an add "
                                   "of fields takes AddFieldsOptions::defaults");
  }
  if (impl_->keep_committed) return Status::FailedPrecondition("staged write: AddFieldGroup after KeepCommitted");
  impl_->add_fields = true;
  return Status::OK();
}
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
