#include "image/image_format.h"

#include <cstdio>
#include <string>

#include "unirecord/image.h"

namespace unirecord {
namespace image_internal {
namespace {

bool StartsWith(std::string_view bytes, size_t offset, std::string_view magic) {
  return bytes.size() >= offset + magic.size() && bytes.substr(offset, magic.size()) == magic;
}

}  // namespace

std::string DescribeFormat(std::string_view bytes) {
  if (bytes.empty()) return "empty input";
  if (StartsWith(bytes, 0, kPngSignature)) return "PNG image";
  if (StartsWith(bytes, 0, "GIF87a") || StartsWith(bytes, 0, "GIF89a")) return "GIF image";
  if (StartsWith(bytes, 0, "RIFF") && StartsWith(bytes, 8, "WEBP")) return "WebP image";
  if (StartsWith(bytes, 0, "BM")) return "BMP image";
  if (StartsWith(bytes, 0, std::string_view("II*\0", 4)) ||
      StartsWith(bytes, 0, std::string_view("MM\0*", 4)))
    return "TIFF image";
  if (StartsWith(bytes, 0, std::string_view("\0\0\0\x0cjP  ", 8)) ||
      StartsWith(bytes, 0, "\xff\x4f\xff\x51"))
    return "JPEG 2000 image";
  if (StartsWith(bytes, 0, "\xff\x0a") ||
      StartsWith(bytes, 0, std::string_view("\0\0\0\x0cJXL ", 8)))
    return "JPEG XL image";
  if (StartsWith(bytes, 4, "ftypavif") || StartsWith(bytes, 4, "ftypavis")) return "AVIF image";
  if (StartsWith(bytes, 4, "ftyphei") || StartsWith(bytes, 4, "ftypmif1")) return "HEIF image";
  if (StartsWith(bytes, 0, "%PDF")) return "PDF document";
  if (StartsWith(bytes, 0, "\x1f\x8b")) return "gzip data";
  char hex[64];
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() >= 4) {
    std::snprintf(hex, sizeof hex, "unknown data starting with %02x %02x %02x %02x", b[0], b[1],
                  b[2], b[3]);
  } else {
    std::snprintf(hex, sizeof hex, "unknown data of %zu bytes", bytes.size());
  }
  return hex;
}


}  // namespace image_internal

const char* ImageFormatName(ImageFormat f) {
  switch (f) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    default: return "unknown";
  }
}

ImageFormat SniffImageFormat(std::string_view bytes) {
  // SOI, as ProbeJpeg checks it.
  if (image_internal::StartsWith(bytes, 0, "\xff\xd8")) return ImageFormat::kJpeg;
  if (image_internal::StartsWith(bytes, 0, image_internal::kPngSignature)) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

Result<ImageInfo> ProbeImage(std::string_view bytes) {
  ImageInfo info;
  info.format = SniffImageFormat(bytes);
  switch (info.format) {
    case ImageFormat::kJpeg: {
      UREC_ASSIGN_OR_RETURN(JpegInfo jpeg, ProbeJpeg(bytes));
      info.width = jpeg.width;
      info.height = jpeg.height;
      info.exif_orientation = jpeg.exif_orientation;
      return info;
    }
    case ImageFormat::kPng: {
      UREC_ASSIGN_OR_RETURN(PngInfo png, ProbePng(bytes));
      info.width = png.width;
      info.height = png.height;
      return info;
    }
    default:
      return Status::InvalidArgument("not a JPEG or PNG: " + image_internal::DescribeFormat(bytes));
  }
}

}  // namespace unirecord
