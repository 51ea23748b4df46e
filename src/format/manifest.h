// The manifest NAME.uset (format/SPEC.md section 1.1): the one small file
// whose rename commits a generation of a dataset.
#ifndef UNIRECORD_FORMAT_MANIFEST_H_
#define UNIRECORD_FORMAT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "unirecord/status.h"

namespace unirecord::format {

struct Manifest {
  uint64_t generation = 0;           // >= 1
  uint32_t shard_count = 0;          // 1 .. kMaxShards
  std::string uuid;                  // the dataset UUID, text form
  std::vector<std::string> reports;  // labels of the reports committed with it
};

std::string EncodeManifest(const Manifest& manifest);
// `path` names the file in errors (Corruption).
Result<Manifest> DecodeManifest(const std::string& text, const std::string& path);
// Reads and decodes DIR/NAME.uset; NotFound when there is none.
Result<Manifest> ReadManifest(const std::string& dir, const std::string& name);

}  // namespace unirecord::format

#endif  // UNIRECORD_FORMAT_MANIFEST_H_
