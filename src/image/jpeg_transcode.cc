// TranscodeToFastLayout: jpeg_read_coefficients -> jpeg_write_coefficients.
//
// As everywhere libjpeg is called, setjmp and the libjpeg calls live in a
// function with plain-C locals (libjpeg_errors.h); the output grows in a
// malloc'd buffer that the caller frees whatever happened.
#include "image/jpeg_transcode.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <jpeglib.h>
#include <jerror.h>

#include "image/libjpeg_errors.h"
#include "unirecord/image.h"

namespace unirecord::image_internal {
namespace {

// A memory destination whose buffer survives a longjmp out of libjpeg
// (jpeg_mem_dest's grown buffers would leak or dangle on an error).
struct GrowingDestination {
  jpeg_destination_mgr pub;  // first member
  unsigned char* buffer;     // malloc'd; owned by the caller
  size_t capacity;
};

void InitDestination(j_compress_ptr) {}
void TermDestination(j_compress_ptr) {}

// Called when the buffer is full: doubles it.
boolean GrowDestination(j_compress_ptr cinfo) {
  auto* dest = reinterpret_cast<GrowingDestination*>(cinfo->dest);
  const size_t grown = dest->capacity * 2;
  auto* bigger = static_cast<unsigned char*>(std::realloc(dest->buffer, grown));
  if (bigger == nullptr) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
  dest->pub.next_output_byte = bigger + dest->capacity;
  dest->pub.free_in_buffer = grown - dest->capacity;
  dest->buffer = bigger;
  dest->capacity = grown;
  return TRUE;
}

// The APPn and COM segments before the frame header (SOFn). The output
// holds all of them before its frame header, so a source with any after it
// is kept as it was: readers may treat those differently (Pillow reads ICC
// chunks only up to SOF).
int MetadataSegmentsBeforeFrame(std::string_view jpeg) {
  int count = 0;
  size_t i = 2;  // after SOI
  while (i + 4 <= jpeg.size() && static_cast<uint8_t>(jpeg[i]) == 0xFF) {
    const int marker = static_cast<uint8_t>(jpeg[i + 1]);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    const bool frame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame || marker == 0xDA) break;
    if ((marker >= 0xE0 && marker <= 0xEF) || marker == 0xFE) ++count;
    i += 2 + ((static_cast<uint8_t>(jpeg[i + 2]) << 8) | static_cast<uint8_t>(jpeg[i + 3]));
  }
  return count;
}

struct TranscodeJob {
  const unsigned char* data;
  unsigned long size;
  GrowingDestination dest;
  size_t output_size;     // bytes written, once finished
  // Why nothing was written although libjpeg read the file: bytes after its
  // EOI marker, or more APPn/COM segments than before its frame header.
  size_t trailing_bytes;
  int segments_before_frame;
  int segments;
};

// Returns false with err->message set on a libjpeg error or warning.
bool RunLibjpegTranscode(jpeg_decompress_struct* src, jpeg_compress_struct* dst, LibjpegErrors* err,
                         TranscodeJob* job) {
  src->err = InitLibjpegErrors(err, /*strict=*/true);
  dst->err = &err->pub;
  if (setjmp(err->jump)) {
    jpeg_destroy_compress(dst);  // no-ops on a struct not created yet (zeroed)
    jpeg_destroy_decompress(src);
    return false;
  }
  jpeg_create_decompress(src);
  jpeg_create_compress(dst);
  jpeg_mem_src(src, job->data, job->size);
  for (int m = 0; m < 16; ++m) jpeg_save_markers(src, JPEG_APP0 + m, 0xFFFF);
  jpeg_save_markers(src, JPEG_COM, 0xFFFF);
  jpeg_read_header(src, TRUE);
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(src);
  job->trailing_bytes = src->src->bytes_in_buffer;
  for (jpeg_saved_marker_ptr m = src->marker_list; m != nullptr; m = m->next) ++job->segments;
  if (job->trailing_bytes > 0 || job->segments > job->segments_before_frame) {
    jpeg_destroy_compress(dst);
    jpeg_destroy_decompress(src);
    return true;
  }

  dst->dest = &job->dest.pub;
  job->dest.pub.init_destination = InitDestination;
  job->dest.pub.empty_output_buffer = GrowDestination;
  job->dest.pub.term_destination = TermDestination;
  job->dest.pub.next_output_byte = job->dest.buffer;
  job->dest.pub.free_in_buffer = job->dest.capacity;
  jpeg_copy_critical_parameters(src, dst);
  dst->optimize_coding = TRUE;
  dst->arith_code = FALSE;
  // The source's own JFIF/Adobe segments are copied below with the others.
  dst->write_JFIF_header = FALSE;
  dst->write_Adobe_marker = FALSE;
  dst->restart_in_rows = 0;
  dst->restart_interval = static_cast<unsigned int>(FastLayoutRestartInterval(FastLayoutMcusPerRow(
      static_cast<int>(src->image_width), src->num_components, src->max_h_samp_factor)));
  jpeg_write_coefficients(dst, coefficients);
  for (jpeg_saved_marker_ptr m = src->marker_list; m != nullptr; m = m->next) {
    jpeg_write_marker(dst, m->marker, m->data, m->data_length);
  }
  jpeg_finish_compress(dst);
  job->output_size = job->dest.capacity - job->dest.pub.free_in_buffer;
  jpeg_finish_decompress(src);
  jpeg_destroy_compress(dst);
  jpeg_destroy_decompress(src);
  return true;
}

TranscodeResult Refused(const char* reason, std::string detail) {
  TranscodeResult result;
  result.reason = reason;
  result.detail = std::move(detail);
  return result;
}

}  // namespace

int FastLayoutMcusPerRow(int width, int components, int max_h_samp_factor) {
  const int mcu_width = components == 1 ? 8 : 8 * max_h_samp_factor;
  return (width + mcu_width - 1) / mcu_width;
}

int FastLayoutRestartInterval(int mcus_per_row) {
  int best = 1;
  for (int k = 2; k <= mcus_per_row && k < 8; ++k) {  // a divisor nearer 4 than 1 is below 8
    if (mcus_per_row % k == 0 && std::abs(k - 4) < std::abs(best - 4)) best = k;
  }
  return best;
}

Result<TranscodeResult> TranscodeToFastLayout(std::string_view jpeg) {
  UREC_ASSIGN_OR_RETURN(JpegInfo info, ProbeJpeg(jpeg));
  if (info.precision != 8) {
    return Refused("not 8-bit", std::to_string(info.precision) + "-bit samples");
  }
  const Status decodable = CheckDecodable(info);
  if (!decodable.ok()) return Refused("not decodable", decodable.message());

  jpeg_decompress_struct src;
  jpeg_compress_struct dst;
  LibjpegErrors err;
  TranscodeJob job{};
  std::memset(&src, 0, sizeof src);
  std::memset(&dst, 0, sizeof dst);
  job.data = reinterpret_cast<const unsigned char*>(jpeg.data());
  job.size = static_cast<unsigned long>(jpeg.size());
  job.segments_before_frame = MetadataSegmentsBeforeFrame(jpeg);
  // Room for the source plus its restart markers and table changes, mostly.
  job.dest.capacity = jpeg.size() + jpeg.size() / 8 + 4096;
  job.dest.buffer = static_cast<unsigned char*>(std::malloc(job.dest.capacity));
  if (job.dest.buffer == nullptr) return Status::Internal("out of memory for a JPEG transcode");
  const bool ok = RunLibjpegTranscode(&src, &dst, &err, &job);
  TranscodeResult result;
  if (!ok) {
    result = Refused(err.warnings > 0 ? "libjpeg warning" : "libjpeg error", err.message);
  } else if (job.trailing_bytes > 0) {
    result = Refused("data after EOI", std::to_string(job.trailing_bytes) +
                                           " bytes after the EOI marker (e.g. an MPO's second image)");
  } else if (job.segments > job.segments_before_frame) {
    result = Refused("metadata after SOF", std::to_string(job.segments - job.segments_before_frame) +
                                               " APPn/COM segments after the frame header");
  } else {
    result.layout = JpegLayout::kFast;
    result.jpeg.assign(reinterpret_cast<const char*>(job.dest.buffer), job.output_size);
  }
  std::free(job.dest.buffer);
  return result;
}

}  // namespace unirecord::image_internal
