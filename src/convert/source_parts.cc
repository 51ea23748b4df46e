// PlanSource, ConvertSourcePart and CommitSource: COCO, JSON Lines and CSV
// conversions in parts (unirecord/convert_parts.h), over the converters'
// PreparedConversion (convert/file_records.h).
#include <string>
#include <vector>

#include "convert/file_records.h"
#include "unirecord/convert.h"
#include "unirecord/convert_parts.h"

namespace unirecord {
namespace {

Result<convert_internal::PreparedConversion> Prepare(const ConvertSource& source, const std::string& out,
                                                     const ConvertOptions& options) {
  switch (source.format) {
    case SourceFormat::kCoco: return convert_internal::PrepareCoco(source.input, source.images, out, options);
    case SourceFormat::kJsonl:
      return convert_internal::PrepareManifest(source.input, source.schema, options, /*csv=*/false);
    case SourceFormat::kCsv:
      return convert_internal::PrepareManifest(source.input, source.schema, options, /*csv=*/true);
    case SourceFormat::kVideoFolder:
      return convert_internal::PrepareMediaFolder(source.input, out, options, MediaKind::kVideo);
    case SourceFormat::kAudioFolder:
      return convert_internal::PrepareMediaFolder(source.input, out, options, MediaKind::kAudio);
  }
  return Status::InvalidArgument("unknown source format " + std::to_string(static_cast<int>(source.format)));
}

}  // namespace

Result<SourcePlan> PlanSource(const ConvertSource& source, const std::string& out, const ConvertOptions& options) {
  if (options.num_shards == 0) {
    return Status::InvalidArgument(source.input + ": a conversion in parts needs num_shards (its parts are runs of "
                                   "whole shards)");
  }
  UREC_ASSIGN_OR_RETURN(convert_internal::PreparedConversion c, Prepare(source, out, options));
  SourcePlan plan;
  plan.out = out;
  plan.name = c.name;
  plan.allow_empty = options.allow_empty;
  plan.shard_starts = std::move(c.shard_starts);
  plan.head = std::move(c.head);
  return plan;
}

Result<ConvertReport> ConvertSourcePart(const ConvertSource& source, const std::string& out,
                                        const std::string& plan_name, const std::string& token, uint32_t first_shard,
                                        uint32_t end_shard, uint32_t part, uint32_t num_parts,
                                        const ConvertOptions& options) {
  UREC_ASSIGN_OR_RETURN(const convert_internal::PreparedConversion c, Prepare(source, out, options));
  if (c.name != plan_name) {
    return Status::InvalidArgument(source.input + ": this part's options name the dataset '" + c.name +
                                   "', the plan '" + plan_name + "'");
  }
  return convert_internal::WritePreparedShards(c, out, token, first_shard, end_shard, part, num_parts, options);
}

Result<ConvertReport> CommitSource(StagedWrite& staged, const SourcePlan& plan, const std::vector<ConvertReport>& parts) {
  return convert_internal::CommitParts(staged, {plan.out, plan.name, plan.allow_empty}, plan.head, parts);
}

}  // namespace unirecord
