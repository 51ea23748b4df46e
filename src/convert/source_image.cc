#include "convert/source_image.h"

#include <cstdint>
#include <string>

#include "format/checksum.h"
#include "image/image_format.h"
#include "image/png_decoder.h"
#include "io/file.h"

namespace unirecord {
namespace {

// Some writers append bytes after the EOI marker (camera trailers, padding).
// Entropy-coded data never holds FF D9, so an EOI in the second half of the
// file means the image itself is complete.
bool HasEoiBeforeTrailer(std::string_view bytes) {
  const size_t eoi = bytes.rfind(std::string_view("\xFF\xD9", 2));
  return eoi != std::string_view::npos && eoi >= bytes.size() / 2;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

Status ReadSourceFile(const std::string& path, std::string* bytes) {
  const Status read = io::ReadFile(path, kMaxSourceFileBytes, bytes);
  if (read.ok()) return read;
  // The rejects report has the path in a column of its own: keep the reason.
  std::string reason = read.message();
  if (reason.rfind(path + ": ", 0) == 0) reason.erase(0, path.size() + 2);
  return Status(read.code() == StatusCode::kNotSupported ? StatusCode::kNotSupported : StatusCode::kIOError,
                reason);
}

Status ReadConverterInput(const std::string& what, const std::string& path, std::string* text) {
  // Not ReadSourceFile: its codes are a rejects row's. A directory, FIFO or
  // device given as the file stays InvalidArgument (bad usage: urec exits 2);
  // the FIFO is refused without waiting for a writer.
  const Status read = io::ReadFile(path, kMaxSourceFileBytes, text);
  if (!read.ok()) return Status(read.code(), what + " " + read.message());  // io's message starts with the path
  return Status::OK();
}

Result<SourceImageInfo> CheckSourceImage(std::string_view bytes) {
  if (bytes.empty()) return Status::InvalidArgument("empty file");
  SourceImageInfo info;
  info.format = SniffImageFormat(bytes);
  if (info.format == ImageFormat::kPng) {
    UREC_ASSIGN_OR_RETURN(info.png, ProbePng(bytes));
    if (!info.png.has_iend) return Status::Corruption("truncated: the PNG ends without its IEND chunk");
    return info;
  }
  if (info.format != ImageFormat::kJpeg) {
    return Status::InvalidArgument("not a JPEG or PNG: " + image_internal::DescribeFormat(bytes));
  }
  UREC_ASSIGN_OR_RETURN(info.jpeg, ProbeJpeg(bytes));
  // The size limits are the caller's (CheckSourceSize); here only what the
  // decoder can never read.
  const Status decodable = CheckDecodable(info.jpeg, {DecodeLimits().max_dimension, INT64_MAX});
  if (!decodable.ok()) return Status::NotSupported(decodable.message());
  if (!info.jpeg.has_eoi && !HasEoiBeforeTrailer(bytes)) {
    return Status::Corruption("truncated: the file ends without an EOI marker");
  }
  return info;
}

StoredImage PrepareStoredImage(std::string* bytes, ImageFormat format, bool keep_original) {
  StoredImage stored;
  stored.source_size = bytes->size();
  stored.source_xxh3 = format::Checksum(bytes->data(), bytes->size());
  if (keep_original || format != ImageFormat::kJpeg) return stored;
  Result<image_internal::TranscodeResult> transcode = image_internal::TranscodeToFastLayout(*bytes);
  if (!transcode.ok()) {
    stored.kept_reason = transcode.status().message();  // not reached after CheckSourceImage
  } else if (transcode->layout == image_internal::JpegLayout::kFast) {
    bytes->swap(transcode->jpeg);
    stored.layout = image_internal::JpegLayout::kFast;
  } else {
    stored.kept_reason = transcode->reason;
  }
  return stored;
}

Status CheckSourceSize(const SourceImageInfo& source, uint64_t file_bytes, const DecodeLimits& limits) {
  if (source.format == ImageFormat::kPng) {
    const Status size = image_internal::CheckPngSize(source.png, file_bytes, limits);
    if (size.code() == StatusCode::kInvalidArgument) return Status::NotSupported(size.message());
    return size;
  }
  const JpegInfo& info = source.jpeg;
  const Status within = CheckDecodable(info, limits);
  if (!within.ok()) return Status::NotSupported(within.message());
  // Huffman coding spends at least one bit on every 8x8 block of the first
  // component (its DC code), which is full-size in every named subsampling.
  // Fewer bytes than that: the header claims far more pixels than the data
  // holds (cut short, or a decompression bomb).
  if (info.arithmetic || info.subsampling == JpegSubsampling::kOther) return Status::OK();
  const uint64_t blocks = ((uint64_t(info.width) + 7) / 8) * ((uint64_t(info.height) + 7) / 8);
  if (file_bytes * 8 < blocks) {
    return Status::Corruption("JPEG header claims " + std::to_string(info.width) + "x" +
                              std::to_string(info.height) + " pixels (" + std::to_string(blocks) +
                              " blocks of 8x8), more than a " + std::to_string(file_bytes) +
                              "-byte file can code");
  }
  return Status::OK();
}

std::string RejectReason(const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kIOError: return "unreadable: " + m;
    case StatusCode::kNotSupported: return "unsupported: " + m;
    case StatusCode::kCorruption: return StartsWith(m, "truncated") ? m : "corrupt: " + m;
    default: return m;
  }
}

}  // namespace unirecord
