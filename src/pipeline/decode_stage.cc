#include "pipeline/decode_stage.h"

#include <utility>

namespace unirecord::pipeline {
namespace {

class ImageDecode final : public DecodeStage {
 public:
  ImageDecode(std::unique_ptr<SampleDecoder> decoder, bool frame_size)
      : decoder_(std::move(decoder)), frame_size_(frame_size) {}

  size_t sample_bytes() const override { return decoder_->options().output_bytes(); }

  Status Decode(std::string_view media, const SampleKey& key, uint8_t* out, SampleImage* shown) override {
    const SampleDecoderOptions& options = decoder_->options();
    UREC_RETURN_IF_ERROR(
        decoder_->Decode(media, key.seed, key.epoch, key.record, out, sample_bytes(), &shown->window));
    shown->output_size = options.image_size;
    if (frame_size_) {
      UREC_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(media));
      shown->width = info.window_width(options.decode.apply_exif);
      shown->height = info.window_height(options.decode.apply_exif);
    }
    return Status::OK();
  }

 private:
  std::unique_ptr<SampleDecoder> decoder_;
  bool frame_size_;
};

}  // namespace

Result<std::unique_ptr<DecodeStage>> CreateImageDecode(const SampleDecoderOptions& options, bool frame_size) {
  UREC_ASSIGN_OR_RETURN(std::unique_ptr<SampleDecoder> decoder, SampleDecoder::Create(options));
  return std::unique_ptr<DecodeStage>(new ImageDecode(std::move(decoder), frame_size));
}

}  // namespace unirecord::pipeline
