// ProbeJpeg: a bounds-checked walk over the JPEG markers up to the first SOS.
// It never touches entropy-coded data, so it costs microseconds; the colour
// space rules mirror libjpeg's (jdapimin.c) so the probe and the decoder agree.
#include <cstdio>
#include <string>

#include "image/image_format.h"
#include "image/jpeg_header.h"
#include "unirecord/image.h"

namespace unirecord {
namespace {

const unsigned char* U8(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

bool StartsWith(std::string_view bytes, size_t offset, std::string_view magic) {
  return bytes.size() >= offset + magic.size() && bytes.substr(offset, magic.size()) == magic;
}

uint32_t ReadU16(const unsigned char* p, bool big_endian) {
  return big_endian ? (p[0] << 8) | p[1] : (p[1] << 8) | p[0];
}
uint32_t ReadU32(const unsigned char* p, bool big_endian) {
  return big_endian ? (uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3]
                    : (uint32_t{p[3]} << 24) | (p[2] << 16) | (p[1] << 8) | p[0];
}

// Orientation tag (0x0112) of IFD0 in an APP1 "Exif\0\0" payload; 1 when
// absent or malformed (as PIL does, a bad EXIF block is ignored).
int ParseExifOrientation(std::string_view payload) {
  if (!StartsWith(payload, 0, std::string_view("Exif\0\0", 6))) return 1;
  std::string_view tiff = payload.substr(6);
  if (tiff.size() < 8) return 1;
  const unsigned char* t = U8(tiff);
  bool big_endian;
  if (t[0] == 'I' && t[1] == 'I') {
    big_endian = false;
  } else if (t[0] == 'M' && t[1] == 'M') {
    big_endian = true;
  } else {
    return 1;
  }
  if (ReadU16(t + 2, big_endian) != 42) return 1;
  uint64_t ifd = ReadU32(t + 4, big_endian);
  if (ifd + 2 > tiff.size()) return 1;
  uint32_t entries = ReadU16(t + ifd, big_endian);
  for (uint32_t i = 0; i < entries; ++i) {
    uint64_t e = ifd + 2 + uint64_t{i} * 12;
    if (e + 12 > tiff.size()) return 1;
    if (ReadU16(t + e, big_endian) != 0x0112) continue;
    if (ReadU16(t + e + 2, big_endian) != 3) return 1;  // must be SHORT
    uint32_t value = ReadU16(t + e + 8, big_endian);
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

bool IsSofMarker(int m) {
  return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

struct Component {
  int id, h, v;
};

JpegSubsampling NameSubsampling(const Component* c, int n) {
  if (n == 1) return JpegSubsampling::kGray;
  if (n < 3 || c[1].h != c[2].h || c[1].v != c[2].v) return JpegSubsampling::kOther;
  if (n == 4 && (c[3].h != c[0].h || c[3].v != c[0].v)) return JpegSubsampling::kOther;
  if (c[0].h % c[1].h != 0 || c[0].v % c[1].v != 0) return JpegSubsampling::kOther;
  int hr = c[0].h / c[1].h, vr = c[0].v / c[1].v;
  if (hr == 1 && vr == 1) return JpegSubsampling::k444;
  if (hr == 2 && vr == 1) return JpegSubsampling::k422;
  if (hr == 2 && vr == 2) return JpegSubsampling::k420;
  if (hr == 1 && vr == 2) return JpegSubsampling::k440;
  if (hr == 4 && vr == 1) return JpegSubsampling::k411;
  if (hr == 4 && vr == 2) return JpegSubsampling::k410;
  return JpegSubsampling::kOther;
}

// libjpeg's default_decompress_parms rules.
JpegColorSpace DecideColorSpace(const Component* c, int n, bool saw_jfif, bool saw_adobe,
                                int adobe_transform) {
  switch (n) {
    case 1:
      return JpegColorSpace::kGrayscale;
    case 3:
      if (saw_jfif) return JpegColorSpace::kYCbCr;
      if (saw_adobe) return adobe_transform == 0 ? JpegColorSpace::kRGB : JpegColorSpace::kYCbCr;
      if (c[0].id == 'R' && c[1].id == 'G' && c[2].id == 'B') return JpegColorSpace::kRGB;
      return JpegColorSpace::kYCbCr;
    case 4:
      if (saw_adobe && adobe_transform != 0) return JpegColorSpace::kYCCK;
      return JpegColorSpace::kCMYK;
    default:
      return JpegColorSpace::kUnknown;
  }
}

bool EndsWithEoi(std::string_view bytes) {
  size_t end = bytes.size();
  while (end > 0 && bytes[end - 1] == '\0') --end;  // some writers pad with zeros
  return end >= 2 && U8(bytes)[end - 2] == 0xFF && U8(bytes)[end - 1] == 0xD9;
}

// Reads a frame header (SOF `marker`'s `payload`) into `info` (size,
// components, process), the sampling factors of the first four components
// into `comps` and `layout`.
Status ParseFrameHeader(int marker, std::string_view payload, JpegInfo* info, Component comps[4],
                        image_internal::JpegHeaderLayout* layout) {
  const unsigned char* s = U8(payload);
  if (payload.size() < 6) return Status::Corruption("JPEG header: SOF segment too short");
  info->precision = s[0];
  info->height = (s[1] << 8) | s[2];
  info->width = (s[3] << 8) | s[4];
  info->components = s[5];
  if (payload.size() != 6 + 3 * size_t{s[5]}) {
    return Status::Corruption("JPEG header: SOF length does not match its component count");
  }
  if (info->components == 0) return Status::Corruption("JPEG header: zero components");
  for (int i = 0; i < info->components; ++i) {
    int h = s[6 + 3 * i + 1] >> 4, v = s[6 + 3 * i + 1] & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4) {
      return Status::Corruption("JPEG header: bogus sampling factors " + std::to_string(h) +
                                "x" + std::to_string(v) + " of component " +
                                std::to_string(i));
    }
    if (i < 4) {
      comps[i] = {s[6 + 3 * i], h, v};
      layout->h_samp[i] = h;
      layout->v_samp[i] = v;
    }
  }
  const int kind = marker & 0x0F;  // 0 baseline, 1 ext, 2 prog, 3 lossless, 5-7 hier.
  info->arithmetic = marker >= 0xC8;
  if (kind == 0 && !info->arithmetic) {
    info->process = JpegProcess::kBaseline;
  } else if (kind == 1 || kind == 9) {
    info->process = JpegProcess::kExtendedSequential;
  } else if (kind == 2 || kind == 10) {
    info->process = JpegProcess::kProgressive;
  } else if (kind == 3 || kind == 11) {
    info->process = JpegProcess::kLossless;
  } else {
    info->process = JpegProcess::kHierarchical;
  }
  info->progressive = info->process == JpegProcess::kProgressive;
  return Status::OK();
}

}  // namespace

const char* JpegColorSpaceName(JpegColorSpace c) {
  switch (c) {
    case JpegColorSpace::kGrayscale: return "grayscale";
    case JpegColorSpace::kYCbCr: return "YCbCr";
    case JpegColorSpace::kRGB: return "RGB";
    case JpegColorSpace::kCMYK: return "CMYK";
    case JpegColorSpace::kYCCK: return "YCCK";
    case JpegColorSpace::kUnknown: break;
  }
  return "unknown";
}

const char* JpegSubsamplingName(JpegSubsampling s) {
  switch (s) {
    case JpegSubsampling::kGray: return "gray";
    case JpegSubsampling::k444: return "4:4:4";
    case JpegSubsampling::k422: return "4:2:2";
    case JpegSubsampling::k420: return "4:2:0";
    case JpegSubsampling::k440: return "4:4:0";
    case JpegSubsampling::k411: return "4:1:1";
    case JpegSubsampling::k410: return "4:1:0";
    case JpegSubsampling::kOther: break;
  }
  return "other";
}

Result<JpegInfo> ProbeJpeg(std::string_view bytes) {
  return image_internal::ProbeJpegHeader(bytes, nullptr);
}

Result<JpegInfo> image_internal::ProbeJpegHeader(std::string_view bytes,
                                                 JpegHeaderLayout* layout) {
  JpegHeaderLayout unused;
  if (layout == nullptr) layout = &unused;
  const unsigned char* b = U8(bytes);
  const size_t n = bytes.size();
  if (n < 2 || b[0] != 0xFF || b[1] != 0xD8) {
    return Status::InvalidArgument("not a JPEG: " + image_internal::DescribeFormat(bytes));
  }
  JpegInfo info;
  Component comps[4] = {};
  int ncomps = 0;
  bool saw_sof = false, saw_jfif = false, saw_exif = false;
  size_t p = 2;
  for (;;) {
    // Find the next marker as libjpeg's next_marker does: skip junk bytes
    // (counted) and any run of 0xFF fill bytes; FF 00 is junk too.
    int marker = -1;
    while (p < n) {
      if (b[p] != 0xFF) {
        ++info.header_junk_bytes;
        ++p;
        continue;
      }
      while (p < n && b[p] == 0xFF) ++p;
      if (p >= n) break;
      if (b[p] == 0x00) {
        info.header_junk_bytes += 2;
        ++p;
        continue;
      }
      marker = b[p++];
      break;
    }
    if (marker < 0) {
      return Status::Corruption(saw_sof ? "JPEG header: data ends before the first scan (SOS)"
                                        : "JPEG header: data ends before the frame header (SOF)");
    }
    if (marker == 0xD8) return Status::Corruption("JPEG header: two SOI markers");
    if (marker == 0xD9) {
      return Status::Corruption(saw_sof ? "JPEG header: EOI before the first scan (SOS)"
                                        : "JPEG header: no frame header (SOF) before EOI");
    }
    if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) continue;  // no length
    if (p + 2 > n) return Status::Corruption("JPEG header: truncated marker segment");
    const size_t length = (size_t{b[p]} << 8) | b[p + 1];
    if (length < 2 || p + length > n) {
      char what[80];
      std::snprintf(what, sizeof what, "JPEG header: marker 0x%02X segment runs past the end",
                    marker);
      return Status::Corruption(what);
    }
    std::string_view payload = bytes.substr(p + 2, length - 2);
    const unsigned char* s = U8(payload);
    p += length;

    if (IsSofMarker(marker)) {
      if (saw_sof) return Status::Corruption("JPEG header: two frame headers (SOF)");
      saw_sof = true;
      layout->sof_payload = p - length + 2;
      UREC_RETURN_IF_ERROR(ParseFrameHeader(marker, payload, &info, comps, layout));
      ncomps = info.components < 4 ? info.components : 4;
    } else if (marker == 0xDA) {
      layout->scan_components = payload.empty() ? 0 : s[0];
      layout->scan_data = p;
      break;  // entropy-coded data follows: the header is complete
    } else if (marker == 0xDD) {
      layout->restart_interval = payload.size() >= 2 ? (s[0] << 8) | s[1] : 0;
      info.has_restart_markers = layout->restart_interval != 0;
    } else if (marker == 0xE0) {
      if (StartsWith(payload, 0, std::string_view("JFIF\0", 5))) saw_jfif = true;
    } else if (marker == 0xE1) {
      if (!saw_exif && StartsWith(payload, 0, std::string_view("Exif\0\0", 6))) {
        saw_exif = true;
        info.exif_orientation = ParseExifOrientation(payload);
      }
    } else if (marker == 0xEE) {
      // libjpeg reads the transform only from a complete 12-byte segment.
      if (payload.size() >= 12 && StartsWith(payload, 0, "Adobe")) {
        info.has_adobe_marker = true;
        info.adobe_transform = s[11];
      }
    }
  }
  if (!saw_sof) return Status::Corruption("JPEG header: no frame header (SOF) before the first scan");
  if (info.width == 0) return Status::Corruption("JPEG header: zero image width");
  info.color_space = DecideColorSpace(comps, info.components, saw_jfif, info.has_adobe_marker,
                                      info.adobe_transform);
  info.subsampling = NameSubsampling(comps, info.components <= 4 ? ncomps : 0);
  info.has_eoi = EndsWithEoi(bytes);
  return info;
}

Status CheckDecodable(const JpegInfo& info, const DecodeLimits& limits) {
  if (info.process == JpegProcess::kLossless) {
    return Status::NotSupported("lossless JPEG (SOF3/SOF11, " + std::to_string(info.precision) +
                                "-bit) is not supported");
  }
  if (info.process == JpegProcess::kHierarchical) {
    return Status::NotSupported("hierarchical JPEG is not supported");
  }
  if (info.precision != 8) {
    return Status::NotSupported(std::to_string(info.precision) +
                                "-bit JPEG is not supported (8-bit only)");
  }
  if (info.components != 1 && info.components != 3 && info.components != 4) {
    return Status::NotSupported("JPEG with " + std::to_string(info.components) +
                                " components is not supported (1, 3 or 4)");
  }
  if (info.height == 0) {
    return Status::NotSupported("JPEG with height 0 in its frame header (DNL marker) is not supported");
  }
  if (info.width > limits.max_dimension || info.height > limits.max_dimension) {
    return Status::InvalidArgument("JPEG is " + std::to_string(info.width) + "x" +
                                   std::to_string(info.height) + ", over the limit of " +
                                   std::to_string(limits.max_dimension) + " pixels a side");
  }
  if (int64_t{info.width} * info.height > limits.max_pixels) {
    return Status::InvalidArgument("JPEG is " + std::to_string(info.width) + "x" +
                                   std::to_string(info.height) + ", over the limit of " +
                                   std::to_string(limits.max_pixels) + " pixels");
  }
  return Status::OK();
}

Status CheckOutputSize(int width, int height, const DecodeLimits& limits) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) return Status::InvalidArgument("output size " + size + " is empty");
  if (width > limits.max_dimension || height > limits.max_dimension) {
    return Status::InvalidArgument("output size " + size + " is over the limit of " +
                                   std::to_string(limits.max_dimension) + " pixels a side");
  }
  if (int64_t{width} * height > limits.max_pixels) {
    return Status::InvalidArgument("output size " + size + " is over the limit of " +
                                   std::to_string(limits.max_pixels) + " pixels");
  }
  return Status::OK();
}

}  // namespace unirecord
