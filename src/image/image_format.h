// Internal: telling image formats apart by their magic bytes.
#ifndef UNIRECORD_SRC_IMAGE_IMAGE_FORMAT_H_
#define UNIRECORD_SRC_IMAGE_IMAGE_FORMAT_H_

#include <string>
#include <string_view>

namespace unirecord::image_internal {

// The PNG signature, the file's first 8 bytes.
inline constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};

// The format `bytes` starts with, for error messages: "PNG image", "GIF
// image", ..., "empty input", or the first bytes in hex.
std::string DescribeFormat(std::string_view bytes);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_IMAGE_FORMAT_H_
