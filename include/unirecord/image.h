// The image layer: JPEG probe, crop planning and crop-before-decode.
//
// A training sample goes through three steps, each cheap:
//   1. ProbeJpeg(bytes)            -> JpegInfo      (header only, no pixels)
//   2. PlanRandomResizedCrop(info) -> CropWindow    (or PlanCenterCrop)
//   3. decoder.DecodeCropResized(bytes, window, w, h, slot, slot_size)
// Step 3 decodes only the rows and columns the window needs (libjpeg-turbo's
// skip/crop scanline API), picks a DCT scale when the window is much larger
// than the output, resizes with antialiased bilinear (torchvision's
// antialias=True semantics) and writes uint8 RGB straight into the caller's
// buffer in DecodeOptions::layout (HWC, or CHW planes as torchvision's
// PILToTensor), with the horizontal flip folded into the write.
// SampleDecoder (sample_decoder.h) runs the three steps for one record.
// PNGs go through ImageDecoder (below): the format is sniffed from the bytes,
// libpng reads the rows down to the window's last, and the same crop /
// resize / flip stage writes the output.
//
// Output is always 3-channel RGB: grayscale is replicated, CMYK/YCCK are
// converted (Adobe-inverted CMYK detected from the APP14 marker). 12-bit,
// lossless and hierarchical JPEGs and non-JPEG data are refused with a
// NotSupported / InvalidArgument error that names the format.
//
// Nothing here throws; an ImageDecoder is not thread-safe (use one per thread).
#ifndef UNIRECORD_IMAGE_H_
#define UNIRECORD_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "unirecord/status.h"

namespace unirecord {

// ---------------------------------------------------------------- probe ----

// Colour space of the stored components, decided as libjpeg does (JFIF/Adobe
// markers, component ids).
enum class JpegColorSpace { kGrayscale, kYCbCr, kRGB, kCMYK, kYCCK, kUnknown };

// Chroma subsampling named from the sampling factors of components 1..3
// relative to the luma (component 0). kOther covers unusual mixes, e.g.
// Y 2x2 / Cb 2x1 / Cr 1x2.
enum class JpegSubsampling { kGray, k444, k422, k420, k440, k411, k410, kOther };

// Coding process from the SOF marker.
enum class JpegProcess {
  kBaseline,               // SOF0
  kExtendedSequential,     // SOF1 (Huffman) or SOF9 (arithmetic)
  kProgressive,            // SOF2 (Huffman) or SOF10 (arithmetic)
  kLossless,               // SOF3 / SOF11
  kHierarchical,           // SOF5-7 / SOF13-15
};

const char* JpegColorSpaceName(JpegColorSpace c);    // "YCbCr", "CMYK", ...
const char* JpegSubsamplingName(JpegSubsampling s);  // "4:2:0", "gray", ...

struct JpegInfo {
  int width = 0;
  int height = 0;
  int components = 0;     // 1 (gray), 3 (YCbCr/RGB) or 4 (CMYK/YCCK)
  int precision = 8;      // bits per sample: 8, 12 (unsupported) or 16 (lossless)
  JpegColorSpace color_space = JpegColorSpace::kUnknown;
  JpegSubsampling subsampling = JpegSubsampling::kOther;
  JpegProcess process = JpegProcess::kBaseline;
  bool progressive = false;
  bool arithmetic = false;
  bool has_adobe_marker = false;
  int adobe_transform = -1;      // APP14 transform byte, -1 without the marker
  int exif_orientation = 1;      // EXIF tag 0x0112, 1..8; 1 when absent/invalid
  bool has_restart_markers = false;  // a DRI segment with a non-zero interval
  // The data ends with an EOI marker (FF D9), ignoring trailing zero bytes.
  // False means the file was most likely cut short; see ProbeJpeg.
  bool has_eoi = false;
  // Bytes that libjpeg would skip with an "extraneous bytes" warning while
  // reading the header (junk between segments).
  int header_junk_bytes = 0;

  // Width/height as a viewer shows them once the EXIF orientation is
  // applied (swapped for orientations 5..8).
  int display_width() const { return exif_orientation >= 5 ? height : width; }
  int display_height() const { return exif_orientation >= 5 ? width : height; }
  // The size crop windows refer to: the display size when the decoder
  // applies EXIF (DecodeOptions::apply_exif), else the stored size.
  int window_width(bool apply_exif) const { return apply_exif ? display_width() : width; }
  int window_height(bool apply_exif) const { return apply_exif ? display_height() : height; }
};

// Parses the JPEG header (markers up to the first SOS, plus a look at the
// last bytes for EOI) without decoding any pixel. Cost: microseconds.
//
// Errors:
//  - InvalidArgument "not a JPEG: PNG image" (also GIF, WebP, BMP, TIFF,
//    JPEG 2000, JPEG XL, HEIF/AVIF, empty input, or the first bytes in hex);
//  - Corruption when the header is malformed (no SOF before SOS or end of
//    data, segment lengths past the end, zero width/height, bad component
//    count or sampling factors).
// Detects: format, frame header facts, EXIF orientation, Adobe transform,
// a missing EOI. Does NOT detect: damaged entropy-coded data, a file cut
// after its EOI-less scans but padded, missing Huffman/quantisation tables
// (found only by decoding). 12-bit, lossless and hierarchical files probe
// successfully (the info says what they are); CheckDecodable refuses them.
Result<JpegInfo> ProbeJpeg(std::string_view bytes);

// Limits that guard against decompression bombs (headers that claim huge
// images) before any large allocation.
struct DecodeLimits {
  int max_dimension = 65500;                 // libjpeg's own hard limit
  int64_t max_pixels = int64_t{1} << 27;     // 134 Mpx: 7680x4320 fits
};

// OK when ImageDecoder can decode a JPEG with this header: 8-bit, not
// lossless/hierarchical, 1/3/4 components, within `limits`. Otherwise
// NotSupported (naming the feature, e.g. "12-bit JPEG") or InvalidArgument
// (over the limits).
Status CheckDecodable(const JpegInfo& info, const DecodeLimits& limits = {});

// OK when an output image of width x height pixels is within `limits` (the
// bounds of what is decoded), so callers check before allocating it.
// InvalidArgument naming the size and the limit otherwise.
Status CheckOutputSize(int width, int height, const DecodeLimits& limits = {});

// --------------------------------------------------------- crop planning ---

// A rectangle of the image in display orientation (what PIL shows without
// exif_transpose, or with it when DecodeOptions::apply_exif is set), plus
// whether the output is mirrored left-right.
struct CropWindow {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool flip = false;
};

// torchvision.transforms.RandomResizedCrop(size, scale, ratio) followed by
// RandomHorizontalFlip(flip_probability).
struct RandomResizedCropParams {
  double scale_min = 0.08;
  double scale_max = 1.0;
  double ratio_min = 3.0 / 4.0;
  double ratio_max = 4.0 / 3.0;
  double flip_probability = 0.5;
};

// torchvision's RandomResizedCrop.get_params on a width x height image (the
// display size, see JpegInfo::display_width): up to 10 attempts drawing an
// area fraction uniformly from [scale_min, scale_max] and a log-uniform aspect
// ratio; the first that fits is placed uniformly; otherwise a central crop
// clamped to the ratio bounds. Random numbers come from a counter-based
// generator keyed by (seed, epoch, record_id): the same triple gives the same
// window on every machine, thread and call.
CropWindow PlanRandomResizedCrop(int width, int height, const RandomResizedCropParams& params,
                                 uint64_t seed, uint64_t epoch, uint64_t record_id);
// On info.width x info.height, the stored size: right for the default
// DecodeOptions (apply_exif off). With apply_exif, pass info.display_width()
// and info.display_height() to the overload above.
CropWindow PlanRandomResizedCrop(const JpegInfo& info, const RandomResizedCropParams& params,
                                 uint64_t seed, uint64_t epoch, uint64_t record_id);

// torchvision Resize(resize_shorter) + CenterCrop(size): the window of the
// original image that maps onto the size x size output. Resizing the window
// to size x size then equals resize-then-crop up to resampling at the window
// edges. Requires size <= resize_shorter (else the window would need
// padding; the window is then clamped to the image).
CropWindow PlanCenterCrop(int width, int height, int size, int resize_shorter);
CropWindow PlanCenterCrop(const JpegInfo& info, int size, int resize_shorter);  // stored size

// ---------------------------------------------------------------- decode ---

// How pixels are laid out: one image is HWC or CHW, a batch of them NHWC or
// NCHW (torchvision's PILToTensor gives CHW).
enum class ImageLayout : uint8_t {
  kNHWC,  // packed RGB rows: [batch,] height, width, 3
  kNCHW,  // three planes R, G, B: [batch,] 3, height, width
};

// "NHWC" | "NCHW"; parse returns InvalidArgument for another name.
const char* ImageLayoutName(ImageLayout layout);
Result<ImageLayout> ParseImageLayout(std::string_view name);

struct DecodeOptions {
  // Strict: any libjpeg warning (corrupt or truncated data) fails the decode.
  // Lenient (default, like PIL/torchvision): warnings are counted in
  // DecodeStats and the recovered pixels are returned.
  bool strict = false;
  // Apply the EXIF orientation: windows are in display orientation and are
  // mapped into the stored orientation before decoding. Off by default, as
  // in torchvision's ImageFolder (PIL's loader ignores EXIF).
  bool apply_exif = false;
  // Let DecodeCropResized decode at a DCT scale M/8 when the window is at
  // least twice the output size (as Pillow's draft mode).
  bool dct_scaling = true;
  // The layout DecodeCropResized and DecodeCenterCrop write: packed RGB
  // (HWC) or three planes (CHW), made by the resizer's last pass (no extra
  // pass over the image). Decode and DecodeCrop always return packed RGB.
  ImageLayout layout = ImageLayout::kNHWC;
  // Entropy-decode files in the fast layout (docs/image.md) with
  // unirecord's Huffman decoder, which gives libjpeg-turbo's coefficients
  // exactly in about 0.7x its time at ImageNet's entropy, and leave any scan
  // it does not decode exactly to libjpeg-turbo. Off: libjpeg-turbo's
  // decoder everywhere (for comparison).
  bool own_entropy_decoder = true;
  DecodeLimits limits;
};

struct DecodeStats {
  int warnings = 0;              // libjpeg warnings (lenient mode)
  std::string first_warning;     // libjpeg's message for the first one
  int scale_num = 8;             // DCT scale used: scale_num / 8
  int decoded_width = 0;         // columns libjpeg produced (iMCU-aligned)
  int decoded_height = 0;        // rows libjpeg produced
  // Restart segments decoded for a file in the fast layout (docs/image.md);
  // 0 when the whole scan up to the region's last row was decoded.
  int restart_segments = 0;
  // The scan was entropy-decoded by unirecord's decoder, not libjpeg's
  // (DecodeOptions::own_entropy_decoder).
  bool own_entropy_decoder = false;
};

// An owned RGB image, HWC, rows packed (stride = 3 * width).
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;
};

// ------------------------------------------------------- other formats ---

// What an image blob holds, told from its first bytes (the magic), never
// from a file name: ImageNet has PNGs named .JPEG.
enum class ImageFormat : uint8_t { kUnknown, kJpeg, kPng };
const char* ImageFormatName(ImageFormat f);  // "JPEG", "PNG", "unknown"
ImageFormat SniffImageFormat(std::string_view bytes);

// A PNG's IHDR, read without inflating any pixel.
struct PngInfo {
  int width = 0;
  int height = 0;
  int bit_depth = 8;       // 1, 2, 4, 8 or 16
  int color_type = 0;      // PNG's: 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA
  bool interlaced = false; // Adam7
  // The data ends with the IEND chunk (ignoring nothing: PNG has no
  // trailers). False means the file was most likely cut short.
  bool has_iend = false;
};

// Parses the signature and the IHDR chunk. InvalidArgument "not a PNG: ..."
// (naming the format found, as ProbeJpeg does) or Corruption for a bad IHDR
// (zero size, a bit depth the colour type does not allow, unknown methods).
Result<PngInfo> ProbePng(std::string_view bytes);

// What crop planning needs of any image the decoders read.
struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;   // stored size
  int height = 0;
  // JPEG's EXIF orientation; 1 for PNG (PIL's convert ignores an eXIf chunk).
  int exif_orientation = 1;

  int window_width(bool apply_exif) const { return apply_exif && exif_orientation >= 5 ? height : width; }
  int window_height(bool apply_exif) const { return apply_exif && exif_orientation >= 5 ? width : height; }
};

// ProbeJpeg or ProbePng by the magic; InvalidArgument "not a JPEG or PNG:
// GIF image" (or the first bytes in hex) for anything else.
Result<ImageInfo> ProbeImage(std::string_view bytes);

// The decoder: JPEG and PNG behind one interface. Each call sniffs the bytes
// (SniffImageFormat) and runs the matching reader, then the same crop /
// resize / flip stage. Create one per thread and pass it every image; it
// keeps its libjpeg and libpng state and scratch buffers between calls.
// Every call resets the error state first, so a failed image does not affect
// the next one. Bytes that are neither JPEG nor PNG are InvalidArgument "not
// a JPEG or PNG: GIF image" (or the first bytes in hex).
//
// PNGs decode as PIL's Image.open(...).convert("RGB") does, byte for byte:
// alpha and tRNS are dropped (no compositing), palette indices past the
// PLTE map to gray (i, i, i), 1/2/4-bit gray is scaled to 0..255, 16-bit
// RGB(A) and gray + alpha keep the high byte, and 16-bit gray is clipped to
// 255 (PIL opens it as mode "I"). Gamma, ICC profiles and sBIT are ignored,
// as PIL does. PNGs have no DCT scaling and no EXIF: dct_scaling and
// apply_exif do not change them. Rows below the window are not inflated
// (non-interlaced files) unless `strict`, which reads to IEND and fails on
// any libpng warning (a CRC error in an ancillary chunk, extra data).
// `stats` are filled for JPEGs only.
// Not thread-safe: one per thread.
class ImageDecoder {
 public:
  explicit ImageDecoder(const DecodeOptions& options = {});
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  const DecodeOptions& options() const { return options_; }

  // The whole image (display orientation when apply_exif).
  Result<RgbImage> Decode(std::string_view bytes, DecodeStats* stats = nullptr);

  // Exactly the window, no DCT scaling and no resize; byte-identical to
  // Decode() then cropping (and mirroring when window.flip).
  Result<RgbImage> DecodeCrop(std::string_view bytes, const CropWindow& window,
                              DecodeStats* stats = nullptr);

  // The window resized to out_width x out_height (antialiased bilinear, as
  // torchvision's Resize(antialias=True)), mirrored when window.flip, written
  // as uint8 RGB into `out` in options().layout (packed HWC by default),
  // which must hold out_size >= out_width * out_height * 3 bytes.
  Status DecodeCropResized(std::string_view bytes, const CropWindow& window, int out_width,
                           int out_height, uint8_t* out, size_t out_size,
                           DecodeStats* stats = nullptr);

  // torchvision's Resize(resize_shorter) + CenterCrop(size) as RGB size x
  // size in `out` (options().layout; out_size >= size * size * 3): decodes only the
  // rows/columns the kept pixels' filter taps read and resamples them with
  // the whole-image resize's weights, so the result equals torchvision's
  // byte for byte. For a JPEG, when DCT scaling applies (the window is at
  // least twice `size`) or size > resize_shorter, it is PlanCenterCrop +
  // DecodeCropResized instead (close to, not equal to, torchvision).
  Status DecodeCenterCrop(std::string_view bytes, int size, int resize_shorter, uint8_t* out,
                          size_t out_size, DecodeStats* stats = nullptr);

 private:
  class PngDecoder;  // libpng and its buffers (src/image/png_decoder.h)
  struct Decoders;   // the JPEG decoder and the PNG one (src/image/image_decoder.cc)
  DecodeOptions options_;
  std::unique_ptr<Decoders> decoders_;
};

// --------------------------------------------------------------- encode ---

// Packed RGB (width x height, rows without padding, rgb_size bytes) as an
// 8-bit RGB PNG at zlib level `compression_level` (0..9: 0 stores the rows
// unfiltered and uncompressed, the fastest; 9 is the smallest), which
// decoders read back exactly: `urec show`'s contact sheets and
// the viewer's thumbnails (unirecord/serve.h). InvalidArgument for a size
// that does not match `rgb_size` or libpng's refusal.
Result<std::string> EncodePngRgb(const uint8_t* rgb, size_t rgb_size, int width, int height,
                                 int compression_level = 6);

}  // namespace unirecord

#endif  // UNIRECORD_IMAGE_H_
