// The manifest NAME.uset (format/SPEC.md section 1.1): the one small file
// whose rename commits a generation of a dataset; its segments (1.2); the
// kept manifests of earlier versions and the tags naming them (1.3).
#ifndef UNIRECORD_FORMAT_MANIFEST_H_
#define UNIRECORD_FORMAT_MANIFEST_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::format {

// Fields added to a segment after it was written (SPEC.md section 1.4): the
// column files NAME-SSSSS-of-NNNNN.gGGGGGG.fFFFFFF.urec beside its shards,
// G = the segment's generation, F = `generation`, rows 1:1 with the shard's.
struct FieldGroup {
  uint64_t generation = 0;          // > the segment's, <= the manifest's; ascending per segment
  std::string uuid;                 // its column files' UUID, text form
  std::vector<std::string> fields;  // those it supplies, in its files' schema order

  bool operator==(const FieldGroup& o) const {
    return generation == o.generation && uuid == o.uuid && fields == o.fields;
  }
};

// A run of shards written together: files
// NAME-SSSSS-of-NNNNN.gGGGGGG.urec for s < shard_count, G = generation,
// whose headers hold `uuid`, shard numbers within the segment and ids from 0.
struct Segment {
  uint64_t generation = 0;  // >= 1, <= the manifest's; distinct per segment
  uint32_t shard_count = 0;
  uint64_t first_id = 0;  // global id of its first record
  std::string uuid;       // its shards' UUID, text form
  std::vector<FieldGroup> groups;  // by generation; a later one's field supersedes an earlier source's
  std::vector<std::string> dropped;  // fields of its shards that are hidden

  bool operator==(const Segment& o) const {
    return generation == o.generation && shard_count == o.shard_count && first_id == o.first_id && uuid == o.uuid &&
           groups == o.groups && dropped == o.dropped;
  }
};

struct Manifest {
  uint64_t generation = 0;           // >= 1
  uint32_t shard_count = 0;          // 1 .. kMaxShards, over all segments
  std::string uuid;                  // the dataset UUID, text form
  std::vector<Segment> segments;     // >= 1, by first id
  std::vector<std::string> reports;  // labels of the reports committed with it

  // A dataset of one segment whose files carry this generation: what every
  // manifest before format 1.2 commits.
  static Manifest OneSegment(uint64_t generation, uint32_t shard_count, const std::string& uuid);
};

// The dataset UUID of `segments`: the one segment's own UUID, else their
// digest (SPEC.md sections 1.2 and 1.4).
std::string DatasetUuidOf(const std::vector<Segment>& segments);

// Manifest 1 when the manifest is one segment of its own generation without
// field groups or dropped fields (the bytes of format 1.1), else manifest 2
// with segment lines.
std::string EncodeManifest(const Manifest& manifest);
// `path` names the file in errors (Corruption).
Result<Manifest> DecodeManifest(const std::string& text, const std::string& path);
// Reads and decodes DIR/NAME.uset; NotFound when there is none.
Result<Manifest> ReadManifest(const std::string& dir, const std::string& name);
// Reads and decodes the kept manifest of `generation`, DIR/NAME.gGGGGGG.uver;
// Corruption when it names another generation.
Result<Manifest> ReadVersionManifest(const std::string& dir, const std::string& name, uint64_t generation);

// NAME.utag: tag -> generation.
using Tags = std::map<std::string, uint64_t>;
// InvalidArgument unless `tag` is 1..64 of [a-z0-9._-], starts with a
// letter (so no tag reads as a version number).
Status CheckTagName(const std::string& tag);
std::string EncodeTags(const Tags& tags);

// What a tags file says (SPEC.md section 1.3): the tags of its sound lines,
// and one problem (naming the file and the line) per line that does not
// read; a wrong first line or checksum is one problem and leaves no tag, a
// tag named twice leaves neither line's. Readers use `tags` and warn with
// `problems`; writers refuse a file with any (Sound), so that no tag stops
// protecting its version without a word.
struct TagsFile {
  std::string path;
  Tags tags;
  std::map<std::string, size_t> line_of;  // tag -> its line (the first line is 1)
  std::vector<std::string> problems;
  // OK, or Corruption with the first problem, how many more there are and
  // the way out.
  Status Sound() const;
};
TagsFile DecodeTags(const std::string& text, const std::string& path);
// An empty TagsFile when DIR/NAME.utag does not exist; an error only when
// it cannot be read.
Result<TagsFile> ReadTags(const std::string& dir, const std::string& name);
// Moves the tags naming a generation not in `kept` from `file->tags` to its
// problems (a tag names a version that is kept).
void CheckTagsAgainst(const std::set<uint64_t>& kept, TagsFile* file);
// The generation `tag` names in `file`, or `version` when `tag` is empty (0:
// the latest). InvalidArgument for a name no tag can have, or when `version`
// is given and the tag names another; NotFound for an unknown tag of a sound
// file, Corruption (naming the damage) for one the file's sound lines lack;
// messages start with `where`.
Result<uint64_t> ResolveVersion(const TagsFile& file, const std::string& tag, uint64_t version,
                                const std::string& where);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_MANIFEST_H_
