#include "format/segment_metadata.h"

#include <string_view>

namespace unirecord::format {
namespace {

// `later` is `earlier`'s name list with names appended (EncodeNameList: one
// name a line), or the same list.
bool ExtendsNameList(std::string_view later, std::string_view earlier) {
  if (earlier.empty() || later == earlier) return true;
  return later.size() > earlier.size() && later.substr(0, earlier.size()) == earlier && later[earlier.size()] == '\n';
}

}  // namespace

std::string MetadataDifference(const Metadata& metadata, const Metadata& earlier, ClassList classes) {
  std::string differs;
  bool class_list_differs = false;
  Metadata keys = metadata;
  keys.insert(earlier.begin(), earlier.end());
  for (const auto& entry : keys) {
    const auto mine = metadata.find(entry.first);
    const auto theirs = earlier.find(entry.first);
    if (mine != metadata.end() && theirs != earlier.end()) {
      if (mine->second == theirs->second) continue;
      if (classes == ClassList::kMayGrow && entry.first == kClassesMetadataKey &&
          ExtendsNameList(mine->second, theirs->second)) {
        continue;
      }
    }
    differs += (differs.empty() ? "metadata '" : ", '") + entry.first + "'";
    class_list_differs |= entry.first == kClassesMetadataKey;
  }
  if (differs.empty()) return differs;
  return differs + (classes == ClassList::kMayGrow && class_list_differs
                        ? " (values differ or are missing; a class list may only gain names at its end)"
                        : " (values differ or are missing)");
}

}  // namespace unirecord::format
