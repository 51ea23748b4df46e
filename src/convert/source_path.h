// Internal to the convert layer: the one path policy of every converter
// (docs/cli.md, "What the converters accept"). A source file is named by a
// path relative to its root: the image folder, COCO's images folder, or the
// folder of a JSON Lines / CSV manifest.
#ifndef UNIRECORD_SRC_CONVERT_SOURCE_PATH_H_
#define UNIRECORD_SRC_CONVERT_SOURCE_PATH_H_

#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord::convert_internal {

// A path given as text (a COCO file_name, a manifest's image value): "" when
// it is usable, else why not: empty, absolute, holding a control character
// (NUL, newline, ... U+001F, DEL: what would open one file and record
// another name, or break a report's row), or with a ".." that climbs above
// the root ("imgs/../../x.jpg"; "a/../b.jpg" stays inside and is kept).
// `what` names the value in the reason ("'file_name'", "the image path"),
// `folder` its root ("the images folder", "the manifest's folder").
// Paths listed from an image folder come from the folder itself and are
// checked only by SourceRoot.
std::string CheckSourcePathText(std::string_view path, const std::string& what, const std::string& folder);

// The root of a conversion, resolved once. Resolve() gives the file to
// read for a path relative to it: the path with every symbolic link
// resolved (realpath), which must lie inside the resolved root, unless
// follow_links_outside (ConvertOptions) lets links lead anywhere.
class SourceRoot {
 public:
  SourceRoot(const std::string& root, bool follow_links_outside);

  // ROOT/relative resolved, or InvalidArgument saying where it leads
  // ("leaves the source folder: resolves to /x/secret.jpg, outside /data/
  // images; ..."). A path that does not resolve (missing, a dangling link)
  // is given back as ROOT/relative, for the read to report.
  Result<std::string> Resolve(const std::string& relative) const;

 private:
  std::string root_;           // as given
  std::string resolved_root_;  // realpath of root_; empty if it has none
  bool follow_links_outside_;
};

}  // namespace unirecord::convert_internal

#endif  // UNIRECORD_SRC_CONVERT_SOURCE_PATH_H_
