// Links and copies of a committed segment's files under new names
// (segment_links.h).
#include "dataset/segment_links.h"

#include <random>

#include "format/file_names.h"
#include "io/file.h"

namespace unirecord::dataset {
namespace {

// Copies `from` to a new file `to` (through io, so crash tests see it).
Status CopyWholeFile(const std::string& from, const std::string& to, bool sync) {
  UREC_ASSIGN_OR_RETURN(io::MappedFile source, io::MappedFile::Open(from));
  UREC_ASSIGN_OR_RETURN(io::WritableFile file, io::WritableFile::Create(to));
  if (source.size() > 0) UREC_RETURN_IF_ERROR(file.Append(source.data(), source.size()));
  if (sync) UREC_RETURN_IF_ERROR(file.Sync());
  return file.Close();
}

}  // namespace

std::string NewToken() {
  std::random_device random;
  const uint64_t value = (static_cast<uint64_t>(random()) << 32) ^ random();
  std::string digits = std::to_string(value % 1000000000000000000ull);
  return std::string(18 - digits.size(), '0') + digits;
}

Status LinkSegment(const Dataset& dataset, const SegmentInfo& segment, const std::string& out_dir,
                   const std::string& name, format::Segment* named, uint64_t* next_generation, bool sync,
                   uint64_t* copied) {
  auto link = [&](const std::string& from, const std::string& to) -> Status {
    if (io::LinkFile(from, to).ok()) return Status::OK();
    UREC_ASSIGN_OR_RETURN(io::MappedFile source, io::MappedFile::Open(from));
    *copied += source.size();
    return CopyWholeFile(from, to, sync);
  };
  for (uint32_t j = 0; j < segment.shards; ++j) {
    const ShardInfo& shard = dataset.shards()[segment.first_shard + j];
    const std::string to = io::JoinPath(out_dir, format::ShardFileName(name, named->generation, j, segment.shards));
    UREC_RETURN_IF_ERROR(link(shard.index_path, format::IndexPathFor(to)));
    UREC_RETURN_IF_ERROR(link(shard.path, to));
  }
  for (size_t g = 0; g < segment.field_groups.size(); ++g) {
    named->groups[g].generation = (*next_generation)++;
    for (uint32_t j = 0; j < segment.shards; ++j) {
      const std::string& from = segment.field_groups[g].paths[j];
      const std::string to = io::JoinPath(
          out_dir, format::ColumnFileName(name, named->generation, named->groups[g].generation, j, segment.shards));
      UREC_RETURN_IF_ERROR(link(format::IndexPathFor(from), format::IndexPathFor(to)));
      UREC_RETURN_IF_ERROR(link(from, to));
    }
  }
  return Status::OK();
}

bool NamedInPlace(const Dataset& dataset, const SegmentInfo& segment, const std::string& out_dir,
                  const std::string& name) {
  if (segment.generation == 0) return false;
  const ShardInfo& first = dataset.shards()[segment.first_shard];
  return first.path == io::JoinPath(out_dir, format::ShardFileName(name, segment.generation, 0, segment.shards));
}

}  // namespace unirecord::dataset
