#include "convert/source_path.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace unirecord::convert_internal {
namespace {

// realpath(3) of `path`, or "" when it has none (missing, a dangling link, ...).
std::string RealPath(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(realpath(path.c_str(), nullptr), &std::free);
  return resolved ? std::string(resolved.get()) : std::string();
}

}  // namespace

std::string CheckSourcePathText(std::string_view path, const std::string& what, const std::string& folder) {
  if (path.empty()) return what + " is empty";
  for (size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c < 0x20 || c == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof(code), "0x%02X", c);
      return what + " '" + MessageText(path) + "' holds the control character " + code + " at byte " +
             std::to_string(i) + (c == 0 ? " (a NUL: the file read would not be the one named)" : "");
    }
  }
  if (path.front() == '/') {
    return what + " '" + MessageText(path) + "' is absolute: it must be relative to " + folder;
  }
  // Lexically: each ".." climbs one folder; above the root is outside it.
  int depth = 0;
  size_t begin = 0;
  while (begin <= path.size()) {
    const size_t end = std::min(path.find('/', begin), path.size());
    const std::string_view part = path.substr(begin, end - begin);
    if (part == "..") {
      if (--depth < 0) return what + " '" + MessageText(path) + "' leaves " + folder + " ('..')";
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    begin = end + 1;
  }
  return "";
}

SourceRoot::SourceRoot(const std::string& root, bool follow_links_outside)
    : root_(root), resolved_root_(RealPath(root)), follow_links_outside_(follow_links_outside) {}

Result<std::string> SourceRoot::Resolve(const std::string& relative) const {
  const std::string path = root_ + "/" + relative;
  if (follow_links_outside_ || resolved_root_.empty()) return path;
  std::string resolved = RealPath(path);
  if (resolved.empty()) return path;  // the read says why it cannot be read
  const bool inside = resolved_root_ == "/" ||
                      (resolved.size() > resolved_root_.size() &&
                       resolved.compare(0, resolved_root_.size(), resolved_root_) == 0 &&
                       resolved[resolved_root_.size()] == '/');
  if (!inside) {
    return Status::InvalidArgument("leaves the source folder: resolves to " + MessageText(resolved) + ", outside " +
                                   MessageText(resolved_root_) +
                                   " (a symbolic link; follow_links_outside / --follow-links-outside allows it)");
  }
  return resolved;
}

}  // namespace unirecord::convert_internal
