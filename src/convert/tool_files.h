// Internal, in unirecord_tools_support (linked into urec; not in the installed
// library): whole files as urec reads and writes them, through the io layer,
// so that urec's errors are the library's (naming the file and the failing
// call) without urec reaching into io/file.h.
#ifndef UNIRECORD_SRC_CONVERT_TOOL_FILES_H_
#define UNIRECORD_SRC_CONVERT_TOOL_FILES_H_

#include <initializer_list>
#include <string>
#include <string_view>

#include "unirecord/status.h"

namespace unirecord {

// The image file at `path`, read whole as the converters read a source image:
// a regular file of at most 1 GiB (kMaxSourceFileBytes, convert/source_image.h;
// a directory, FIFO or device is refused before reading, a larger file is
// NotSupported). `urec decode`'s input.
Status ReadImageFile(const std::string& path, std::string* bytes);

// `pieces`, one after another, written to `path` (created or truncated) and
// closed. `urec decode -o`, `urec show`'s sheet and legend.
Status WriteWholeFile(const std::string& path, std::initializer_list<std::string_view> pieces);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_CONVERT_TOOL_FILES_H_
