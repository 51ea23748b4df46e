// MergeDatasets (writer.h): one dataset from the segments of several,
// linked rather than copied (format/SPEC.md section 1.1).
#include "dataset/commit.h"
#include "dataset/field_defaults.h"
#include "dataset/segment_links.h"
#include "dataset/shard_access.h"
#include "format/file_names.h"
#include "format/format_constants.h"
#include "format/segment_metadata.h"
#include "unirecord/dataset.h"
#include "unirecord/writer.h"

namespace unirecord {
namespace {

// The fields the merge's inputs lack of the one with the most fields (the
// first such: the widest), which `defaults` gives them; (*lacks)[k] says
// whether input k lacks them. InvalidArgument naming the inputs unless every
// input has the widest one's first fields, those that lack fields lack the
// same ones, and the defaults fit.
Result<Schema> LackingOfInputs(const std::vector<std::string>& inputs,
                               const std::vector<std::shared_ptr<Dataset>>& opened, const FieldDefaults& defaults,
                               std::vector<bool>* lacks) {
  auto input = [&](size_t k) { return "input " + std::to_string(k) + " (" + inputs[k] + ")"; };
  size_t widest = 0;
  for (size_t k = 1; k < opened.size(); ++k) {
    if (opened[k]->schema().num_fields() > opened[widest]->schema().num_fields()) widest = k;
  }
  const Schema& all = opened[widest]->schema();
  lacks->assign(opened.size(), false);
  Schema lacking;
  std::string whose;  // the inputs that lack it
  for (size_t k = 0; k < opened.size(); ++k) {
    const std::optional<Schema> of = dataset::LackingFields(opened[k]->schema(), all);
    if (!of) {
      return Status::InvalidArgument("merge: " + input(k) + " has another schema " + opened[k]->schema().ToString() +
                                     " (" + input(widest) + ": " + all.ToString() +
                                     "); datasets merge only with the same fields and metadata, or with fields "
                                     "some added later (at the end of theirs) that the others lack");
    }
    if (of->num_fields() == 0) continue;
    if (!whose.empty() && *of != lacking) {
      return Status::InvalidArgument("merge: the records of " + input(k) + " lack the fields " + of->FieldNames() +
                                     " of " + input(widest) + ", those of " + whose + " the fields " +
                                     lacking.FieldNames() + "; inputs that lack fields must lack the same ones "
                                     "(merge in steps, or add the fields first)");
    }
    (*lacks)[k] = true;
    whose += (whose.empty() ? "" : ", ") + input(k);
    lacking = *of;
  }
  UREC_RETURN_IF_ERROR(dataset::CheckDefaults("merge", "the records of " + (whose.empty() ? "the inputs" : whose),
                                              input(widest), lacking, defaults));
  return lacking;
}

}  // namespace

Result<WriterSummary> MergeDatasets(const std::string& out_dir, const std::string& name,
                                    const std::vector<std::string>& inputs, const StagedWriteOptions& options) {
  if (inputs.empty()) return Status::InvalidArgument("merge: no input datasets");
  UREC_RETURN_IF_ERROR(dataset::CheckDatasetName(name, "merge"));
  std::vector<std::shared_ptr<Dataset>> opened;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Result<std::shared_ptr<Dataset>> input = Dataset::Open(inputs[k]);
    if (!input.ok()) return Status(input.status().code(), "merge: input " + std::to_string(k) + ": " + input.status().message());
    // The inputs' segments follow one another: each input's first segment
    // must carry what may follow the input before it (its last segment's).
    const std::string differs =
        opened.empty() ? std::string()
                       : format::MetadataDifference(dataset_internal::ShardAccess::Frame(**input, 0).header().metadata,
                                                    opened.back()->metadata(), format::ClassList::kMayGrow);
    if (!differs.empty()) {
      return Status::InvalidArgument("merge: input " + std::to_string(k) + " (" + inputs[k] + ") has another " + differs +
                                     "; datasets merge only with the same fields and metadata");
    }
    opened.push_back(std::move(*input));
  }
  std::vector<bool> lacks;
  UREC_ASSIGN_OR_RETURN(const Schema lacking, LackingOfInputs(inputs, opened, options.defaults, &lacks));
  // A token in the lock file: the field groups of defaults are staged under it.
  const std::string token = dataset::NewToken();
  UREC_ASSIGN_OR_RETURN(dataset::DatasetLock locked, dataset::LockDataset(out_dir, name, "merge", token));
  WriterSummary summary;
  Status status = [&]() -> Status {
    // Every input's segments, kept in place when they are this dataset's
    // own files, else linked under new generations.
    uint64_t next_generation = locked.generation;
    std::vector<format::Segment> segments;
    uint64_t first_id = 0;
    for (size_t k = 0; k < opened.size(); ++k) {
      const std::shared_ptr<Dataset>& input = opened[k];
      for (const SegmentInfo& segment : input->segments()) {
        format::Segment named = dataset::AsSegment(segment, segment.generation, first_id);
        if (!dataset::NamedInPlace(*input, segment, out_dir, name)) {
          named.generation = next_generation++;
          UREC_RETURN_IF_ERROR(dataset::LinkSegment(*input, segment, out_dir, name, &named, &next_generation, options.sync,
                                           &summary.bytes_written));
        }
        if (lacks[k]) {
          dataset::DefaultGroup group{out_dir, name, token, 0, 1, named.generation, next_generation++, {}, 0,
                                      options.sync};
          for (uint32_t j = 0; j < segment.shards; ++j) {
            group.records.push_back(input->shards()[segment.first_shard + j].records);
            group.scalar_pages += input->shards()[segment.first_shard + j].scalar_pages;
          }
          const uint64_t before = summary.bytes_written;
          Result<format::FieldGroup> written =
              dataset::WriteDefaultGroup(group, lacking, options.defaults, &summary.bytes_written);
          if (!written.ok()) return Status(written.status().code(), "merge: " + written.status().message());
          summary.bytes += summary.bytes_written - before;
          named.groups.push_back(std::move(*written));
        }
        const uint64_t g = named.generation;
        for (uint32_t j = 0; j < segment.shards; ++j) {
          const ShardInfo& shard = input->shards()[segment.first_shard + j];
          const std::string path = io::JoinPath(out_dir, format::ShardFileName(name, g, j, segment.shards));
          summary.shard_paths.push_back(path);
          summary.index_paths.push_back(format::IndexPathFor(path));
          summary.bytes += shard.file_bytes + shard.index_bytes;
        }
        segments.push_back(std::move(named));
        first_id += segment.records;
      }
    }
    if (segments.size() > format::kMaxShards) return Status::InvalidArgument("merge: more than " + std::to_string(format::kMaxShards) + " segments");
    if (options.sync) UREC_RETURN_IF_ERROR(io::SyncDirectory(out_dir));
    dataset::PendingGeneration pending;
    pending.generation = std::max(locked.generation, next_generation - 1);
    pending.segments = std::move(segments);
    pending.sync = options.sync;
    UREC_RETURN_IF_ERROR(dataset::CommitGeneration(out_dir, name, pending, &summary));
    summary.records = first_id;
    return Status::OK();
  }();
  dataset::ReleaseDataset(out_dir, name, &locked.lock);
  if (!status.ok()) return status;
  return summary;
}

}  // namespace unirecord
