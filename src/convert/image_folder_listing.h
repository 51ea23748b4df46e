// Lists a torchvision-style ImageFolder exactly as torchvision does.
#ifndef UNIRECORD_SRC_CONVERT_IMAGE_FOLDER_LISTING_H_
#define UNIRECORD_SRC_CONVERT_IMAGE_FOLDER_LISTING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/convert.h"
#include "unirecord/convert_parts.h"
#include "unirecord/status.h"

namespace unirecord {

struct ImageFolderListing {
  std::vector<std::string> classes;  // sorted sub-folder names
  // Every file: first those directly in the root, then the class folders'
  // in ImageFolder sample order.
  std::vector<ImageFolderFile> files;
  uint64_t candidates = 0;
};

// torchvision's IMG_EXTENSIONS test: the lower-cased name ends with one of
// .jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp.
bool HasImageExtension(std::string_view file_name);
// The video folders' (.mp4 .avi .mkv .webm .mov .m4v .mpg .mpeg .ogv) and
// audio folders' (.wav .flac .mp3 .ogg .opus .m4a .aac) files, as
// HasImageExtension tests them.
bool HasVideoExtension(std::string_view file_name);
bool HasAudioExtension(std::string_view file_name);

// classes = sorted sub-folders of `root` (symlinks followed); each class
// folder is walked recursively (symlinks followed, as os.walk(followlinks=
// True)); folders are visited in byte order of their paths and files in byte
// order of their names, as sorted(os.walk(...)) and sorted(fnames) do.
// Errors: NotFound when root is missing, InvalidArgument when it is not a
// folder or a symlink loops back to a parent folder, IOError when a folder
// cannot be read.
// `is_candidate`: which files are converted (the others are listed, as
// skipped).
Result<ImageFolderListing> ListImageFolder(const std::string& root,
                                           bool (*is_candidate)(std::string_view) = HasImageExtension);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_CONVERT_IMAGE_FOLDER_LISTING_H_
