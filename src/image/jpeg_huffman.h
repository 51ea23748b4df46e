// Internal: our own entropy decoder for baseline sequential Huffman scans
// (issue 20's experiment), and libjpeg-turbo's coefficients to check it by.
//
// It decodes the single interleaved scan of a sequential Huffman JPEG (the
// fast layout, docs/image.md) into the quantized DCT coefficients that
// jpeg_read_coefficients would give. Every restart segment is un-stuffed
// first (memchr for 0xFF); then two segments at a time are decoded in one
// loop, a symbol of one and a symbol of the other in turn, each from its own
// 64-bit bit buffer refilled without per-byte marker checks, so that the
// core overlaps the two serial chains (look-up -> code length -> shift).
// One table look-up (11 bits) resolves short codes and, for AC codes, run,
// size and value together when code and value bits fit the look-up width.
//
// It never guesses: anything it does not decode exactly as libjpeg-turbo
// does (another coding process, a code that runs past its segment's data,
// extra bytes before a marker, a misnumbered marker, a bad code, a
// coefficient index past 63, ...) is kRejected, and the caller is to use
// libjpeg's decoder, which reports or recovers as it always has.
// jpeg_huffman_test.cc and fuzz/fuzz_jpeg_huffman.cc check it against
// ReadLibjpegCoefficients. It is not in the decode path: it did not reach the
// issue's speed bar (bench/README.md, "Own Huffman decoder").
#ifndef UNIRECORD_SRC_IMAGE_JPEG_HUFFMAN_H_
#define UNIRECORD_SRC_IMAGE_JPEG_HUFFMAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
