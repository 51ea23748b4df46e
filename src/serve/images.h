// The viewer's pictures, as PNG: a record's image at thumbnail size, decoded
// at that size by the crop-before-decode path (ImageDecoder::
// DecodeCropResized on the whole image, with DCT scaling: never a full
// decode then a resize), and the crops the training transform feeds for a
// seed and epoch (SampleDecoder, as the Loader and `urec show` make them).
#ifndef UNIRECORD_SRC_SERVE_IMAGES_H_
#define UNIRECORD_SRC_SERVE_IMAGES_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/image.h"
#include "unirecord/sample_decoder.h"

namespace unirecord::serve {

// The size a width x height image is shown at in a size x size square:
// aspect kept, never enlarged, at least 1 x 1.
void FitInSquare(int width, int height, int size, int* out_width, int* out_height);

// A training crop: which transform, its output size, seed and epoch.
struct CropRequest {
  SampleTransform transform = SampleTransform::kRandomResizedCrop;
  int size = 224;
  uint64_t seed = 0;
  uint64_t epoch = 0;
};

class Images {
 public:
  // `path` names the dataset in errors (SampleSource::Describe).
  Images(std::shared_ptr<const Dataset> dataset, std::string path);

  // Record `id`'s bytes field `field` fitted in size x size, as PNG.
  Result<std::string> Thumbnail(uint64_t id, size_t field, int size);

  // The crop `crop` gives record `id`'s image field `field`, as PNG.
  Result<std::string> Crop(uint64_t id, size_t field, const CropRequest& crop);
  // Its window in the image (no pixel decoded), for boxes mapped onto it.
  Result<CropWindow> CropWindowOf(uint64_t id, size_t field, const CropRequest& crop);

 private:
  // An ImageDecoder of the pool, returned to it when the lease ends.
  class Lease;
  std::unique_ptr<ImageDecoder> TakeDecoder();
  void ReturnDecoder(std::unique_ptr<ImageDecoder> decoder);
  Result<SampleSource> SourceOf(size_t field) const;

  std::shared_ptr<const Dataset> dataset_;
  std::string path_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ImageDecoder>> decoders_;  // idle ones
};

}  // namespace unirecord::serve

#endif  // UNIRECORD_SRC_SERVE_IMAGES_H_
