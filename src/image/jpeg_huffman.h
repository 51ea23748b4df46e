// Internal: our own entropy decoder for baseline sequential Huffman scans
// (issue 20), and libjpeg-turbo's coefficients to check it by.
//
// It decodes the single interleaved scan of a sequential Huffman JPEG (the
// fast layout, docs/image.md) into the quantized DCT coefficients that
// jpeg_read_coefficients would give. Every restart segment is un-stuffed
// first (memchr for 0xFF); then two segments at a time are decoded in one
// loop, a step of one and a step of the other in turn, each from its own
// 64-bit bit buffer, refilled without a branch or per-byte marker checks
// once per five look-ups, so that the core overlaps the two serial chains
// (look-up -> code length -> shift). One table look-up (11 bits) resolves
// an AC code with its run, size and value, and the next symbol as well when
// both fit the look-up width.
//
// It never guesses: anything it does not decode exactly as libjpeg-turbo
// does (another coding process, a code that runs past its segment's data,
// extra bytes before a marker, a misnumbered marker, a bad code, a
// coefficient index past 63, ...) is kRejected, and the caller is to use
// libjpeg's decoder, which reports or recovers as it always has.
// jpeg_huffman_test.cc and fuzz/fuzz_jpeg_huffman.cc check it against
// ReadLibjpegCoefficients. JpegDecoder uses it for files in the fast layout
// through OwnEntropyDecoder (bench/README.md, "Own Huffman decoder").
#ifndef UNIRECORD_SRC_IMAGE_JPEG_HUFFMAN_H_
#define UNIRECORD_SRC_IMAGE_JPEG_HUFFMAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct jpeg_decompress_struct;

namespace unirecord::image_internal {

// The coefficients of every component, in libjpeg's whole-image layout:
// blocks_high rows of blocks_wide blocks (the component's blocks rounded up
// to its sampling factors, as jpeg_read_coefficients allocates them), 64
// coefficients per block in natural (row-major) order.
struct JpegCoefficients {
  struct Component {
    int blocks_wide = 0;
    int blocks_high = 0;
    std::vector<int16_t> coef;  // blocks_wide * blocks_high * 64
  };
  std::vector<Component> components;
};

enum class OwnHuffmanResult {
  kDecoded,       // *out holds exactly libjpeg's coefficients
  kNotBaseline,   // not one sequential 8-bit Huffman scan of every component
  kRejected,      // data ours does not decode exactly; use libjpeg's decoder
  kHeaderError,   // libjpeg could not read the header
};

// Buffers reused from image to image.
struct OwnHuffmanScratch {
  std::vector<uint8_t> segment;      // the restart segments, un-stuffed, one after another
  std::vector<size_t> segment_ends;  // where each ends in `segment`
};

// Where each block of an MCU lies in a JpegCoefficients: at `first` for
// MCU (0, 0), `mcu_column` and `mcu_row` coefficients further per MCU
// across and down; blocks in libjpeg's MCU order (components in scan order,
// each one's blocks row by row).
struct McuOrder {
  struct Block {
    const int16_t* first;
    size_t mcu_column, mcu_row;
  };
  Block blocks[10];  // D_MAX_BLOCKS_IN_MCU
  int blocks_in_mcu = 0;
  int64_t mcus_per_row = 0, mcu_rows = 0;
};

// Our decoder in libjpeg-turbo's place for the scan of a started
// decompressor: Install, called after jpeg_start_decompress, decodes the
// whole scan into coefficients and, only when that is exact (kDecoded),
// points cinfo->entropy->decode_mcu at a function that hands libjpeg those
// coefficients MCU by MCU, moves the data source to the scan's EOI marker
// and keeps `this` in cinfo->client_data. libjpeg's IDCT, upsampling,
// colour conversion, cropping and skipping run unchanged. Anything else
// (not one sequential 8-bit Huffman scan of every component, data ours
// rejects, more than `max_bytes` of coefficients) leaves the decompressor
// untouched, and libjpeg decodes, warns and recovers as it always has.
//
// decode_mcu's place and signature in struct jpeg_entropy_decoder
// (jpegint.h) are those of libjpeg 6b, which every libjpeg-turbo keeps;
// jpeg_huffman.cc pins them with static_asserts, and jpeg_create_decompress
// checks the library's version and struct size at run time.
class OwnEntropyDecoder {
 public:
  bool Install(jpeg_decompress_struct* cinfo, size_t max_bytes);
  bool installed() const { return installed_; }  // the last Install's answer

 private:
  static int DecodeMcu(jpeg_decompress_struct* cinfo, short (**mcu)[64]);

  OwnHuffmanScratch scratch_;
  JpegCoefficients coefficients_;
  McuOrder order_;
  int64_t mcu_x_ = 0, mcu_y_ = 0;  // the next MCU libjpeg asks for
  bool installed_ = false;
};

// The scan described by a decompressor that jpeg_read_header left at SOS
// (data = its first entropy-coded byte), decoded by ours (jpeg_huffman.cc).
// kRejected, before allocating, when the coefficients would take more than
// max_bytes. *eoi: where the EOI marker that ends the scan starts in
// `data`; *order (when not null): where each MCU's blocks lie in *out.
OwnHuffmanResult DecodeScan(const jpeg_decompress_struct& cinfo, const uint8_t* data, size_t size,
                            size_t max_bytes, OwnHuffmanScratch* scratch, JpegCoefficients* out,
                            size_t* eoi, McuOrder* order);

// A component's blocks across or down, rounded up to whole MCUs, as
// jpeg_read_coefficients allocates them.
int RoundedBlocks(unsigned int blocks, int sampling);

// Reads the header with libjpeg (jpeg_read_header), then decodes the scan
// with our decoder into *out.
OwnHuffmanResult DecodeCoefficientsOwn(std::string_view jpeg, OwnHuffmanScratch* scratch,
                                       JpegCoefficients* out);

// libjpeg-turbo's coefficients (jpeg_read_coefficients), the reference.
// False, with *error set, on a libjpeg error; *warnings counts its warnings.
bool ReadLibjpegCoefficients(std::string_view jpeg, JpegCoefficients* out, int* warnings,
                             std::string* error);

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_JPEG_HUFFMAN_H_
