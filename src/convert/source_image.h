// Reading one source file and deciding whether it can become a record.
#ifndef UNIRECORD_SRC_CONVERT_SOURCE_IMAGE_H_
#define UNIRECORD_SRC_CONVERT_SOURCE_IMAGE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "image/jpeg_transcode.h"
#include "unirecord/image.h"
#include "unirecord/status.h"

namespace unirecord {

// No real JPEG comes near this; a bigger file is refused before it is read
// (it would only be a way to exhaust memory).
inline constexpr uint64_t kMaxSourceFileBytes = uint64_t{1} << 30;

// Reads the whole file into *bytes (reusing its capacity). IOError for
// anything that is not a readable regular file (a FIFO is never opened for
// blocking reads), NotSupported for a file over kMaxSourceFileBytes.
Status ReadSourceFile(const std::string& path, std::string* bytes);

// A file the converter needs whole (annotations, a manifest, a schema), of
// at most kMaxSourceFileBytes: its error is "WHAT PATH: reason", with
// io::ReadFile's code (InvalidArgument for a directory, FIFO or device).
Status ReadConverterInput(const std::string& what, const std::string& path, std::string* text);

// The header of a source image that unirecord's decoders accept.
struct SourceImageInfo {
  ImageFormat format = ImageFormat::kUnknown;  // kJpeg or kPng, from the magic bytes
  JpegInfo jpeg;  // kJpeg
  PngInfo png;    // kPng
  int width() const { return format == ImageFormat::kPng ? png.width : jpeg.width; }
  int height() const { return format == ImageFormat::kPng ? png.height : jpeg.height; }
};

// The header of a JPEG or PNG that unirecord's decoders accept (told by its
// first bytes, whatever the file is called), or why not:
//  - InvalidArgument "empty file" / "not a JPEG or PNG: GIF image";
//  - Corruption for a malformed header or a file cut short (a JPEG without
//    an EOI marker at the end, and none in its second half followed only by
//    trailing bytes; a PNG that does not end with its IEND chunk);
//  - NotSupported for 12-bit, lossless and hierarchical JPEGs.
Result<SourceImageInfo> CheckSourceImage(std::string_view bytes);

// What a record stores for a source image that CheckSourceImage accepted.
struct StoredImage {
  image_internal::JpegLayout layout = image_internal::JpegLayout::kOriginal;
  // kOriginal when a transcode was asked for: TranscodeResult::reason.
  std::string kept_reason;
  uint64_t source_size = 0;
  uint64_t source_xxh3 = 0;  // XXH3-64, seed 0, of the source file's bytes
};

// Notes the source's size and XXH3, then, for a JPEG unless keep_original,
// replaces *bytes by its fast-layout transcode (TranscodeToFastLayout); a
// file the transcode refuses keeps its bytes and the reason. A PNG is stored
// as it is (layout kOriginal, no reason).
StoredImage PrepareStoredImage(std::string* bytes, ImageFormat format, bool keep_original);

// Whether a file CheckSourceImage accepted is within the size `limits`
// (NotSupported "JPEG is WxH, over the limit of ...", "PNG: output size
// ...") and plausible for its size: Corruption when `file_bytes` cannot code
// the blocks (JPEG: Huffman-coded files with a named subsampling) or rows
// (PNG: at deflate's best ratio) its header claims.
Status CheckSourceSize(const SourceImageInfo& info, uint64_t file_bytes, const DecodeLimits& limits);

// The short reason written to rejects.tsv for a failed ReadSourceFile or
// CheckSourceImage: "not a JPEG or PNG: GIF image", "truncated: ...",
// "corrupt: JPEG header: ...", "unsupported: 12-bit JPEG ...", "unreadable: ...".
std::string RejectReason(const Status& status);

}  // namespace unirecord

#endif  // UNIRECORD_SRC_CONVERT_SOURCE_IMAGE_H_
