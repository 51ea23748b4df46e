#include "convert/image_folder_listing.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace unirecord {
namespace {

struct DirEntry {
  std::string name;
  bool is_dir = false;
};

struct FolderId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FolderId& o) const { return dev == o.dev && ino == o.ino; }
};

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

// Entries of one folder, symlinks resolved; a broken symlink counts as a
// file (os.walk lists it among the files too).
Status ReadFolder(const std::string& path, std::vector<DirEntry>* entries) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(path.c_str()), closedir);
  if (!dir) return Status::IOError("cannot read folder " + path + ": " + std::strerror(errno));
  entries->clear();
  errno = 0;
  while (const dirent* e = readdir(dir.get())) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    DirEntry entry{e->d_name, e->d_type == DT_DIR};
    if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
      struct stat st;
      entry.is_dir = stat(JoinPath(path, entry.name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    entries->push_back(std::move(entry));
    errno = 0;
  }
  if (errno != 0) return Status::IOError("cannot read folder " + path + ": " + std::strerror(errno));
  return Status::OK();
}

Result<FolderId> IdentifyFolder(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::IOError("cannot stat " + path + ": " + std::strerror(errno));
  return FolderId{st.st_dev, st.st_ino};
}

struct FolderFiles {
  std::string rel_dir;
  std::vector<std::string> files;
};

// Collects every folder below root/rel_dir (itself included) with its files.
// `ancestors` holds the folders on the current path, to stop symlink loops.
Status WalkClassFolder(const std::string& root, const std::string& rel_dir, std::vector<FolderId>& ancestors,
                       std::vector<FolderFiles>* out) {
  const std::string path = JoinPath(root, rel_dir);
  UREC_ASSIGN_OR_RETURN(FolderId id, IdentifyFolder(path));
  if (std::find(ancestors.begin(), ancestors.end(), id) != ancestors.end()) {
    return Status::InvalidArgument("symlink loop: " + path + " leads back to one of its parent folders");
  }
  std::vector<DirEntry> entries;
  UREC_RETURN_IF_ERROR(ReadFolder(path, &entries));
  FolderFiles here{rel_dir, {}};
  std::vector<std::string> subfolders;
  for (DirEntry& e : entries) (e.is_dir ? subfolders : here.files).push_back(std::move(e.name));
  out->push_back(std::move(here));
  ancestors.push_back(id);
  for (const std::string& sub : subfolders) {
    UREC_RETURN_IF_ERROR(WalkClassFolder(root, rel_dir + "/" + sub, ancestors, out));
  }
  ancestors.pop_back();
  return Status::OK();
}

}  // namespace

namespace {

// The lower-cased name ends with one of `extensions`.
template <size_t N>
bool HasExtension(std::string_view file_name, const char* const (&extensions)[N]) {
  std::string lower(file_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; });
  for (const char* ext : extensions) {
    const size_t n = std::strlen(ext);
    if (lower.size() >= n && lower.compare(lower.size() - n, n, ext) == 0) return true;
  }
  return false;
}

}  // namespace

bool HasImageExtension(std::string_view file_name) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".ppm", ".bmp",
                                            ".pgm", ".tif",  ".tiff", ".webp"};
  return HasExtension(file_name, kExtensions);
}

bool HasVideoExtension(std::string_view file_name) {
  static const char* const kExtensions[] = {".mp4", ".avi", ".mkv", ".webm", ".mov",
                                            ".m4v", ".mpg", ".mpeg", ".ogv"};
  return HasExtension(file_name, kExtensions);
}

bool HasAudioExtension(std::string_view file_name) {
  static const char* const kExtensions[] = {".wav", ".flac", ".mp3", ".ogg", ".opus", ".m4a", ".aac"};
  return HasExtension(file_name, kExtensions);
}

Result<ImageFolderListing> ListImageFolder(const std::string& root, bool (*is_candidate)(std::string_view)) {
  struct stat st;
  if (stat(root.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound("source folder " + root + " does not exist");
    return Status::IOError("cannot stat " + root + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(root + " is not a folder");

  std::vector<DirEntry> top;
  UREC_RETURN_IF_ERROR(ReadFolder(root, &top));
  std::sort(top.begin(), top.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  ImageFolderListing listing;
  for (const DirEntry& e : top) {
    if (e.is_dir) {
      listing.classes.push_back(e.name);
    } else {
      listing.files.push_back({e.name, -1, false});
    }
  }

  std::vector<FolderId> ancestors;
  UREC_ASSIGN_OR_RETURN(FolderId root_id, IdentifyFolder(root));
  ancestors.push_back(root_id);
  for (size_t label = 0; label < listing.classes.size(); ++label) {
    std::vector<FolderFiles> folders;
    UREC_RETURN_IF_ERROR(WalkClassFolder(root, listing.classes[label], ancestors, &folders));
    std::sort(folders.begin(), folders.end(),
              [](const FolderFiles& a, const FolderFiles& b) { return a.rel_dir < b.rel_dir; });
    for (FolderFiles& folder : folders) {
      std::sort(folder.files.begin(), folder.files.end());
      for (const std::string& name : folder.files) {
        const bool candidate = is_candidate(name);
        listing.candidates += candidate;
        listing.files.push_back({folder.rel_dir + "/" + name, static_cast<int64_t>(label), candidate});
      }
    }
  }
  return listing;
}

}  // namespace unirecord
