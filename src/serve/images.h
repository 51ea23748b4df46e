// The viewer's pictures, as PNG: a record's image at thumbnail size, decoded
// at that size by the crop-before-decode path (ImageDecoder::
// DecodeCropResized on the whole image, with DCT scaling: never a full
// decode then a resize), a grid page's thumbnails in one atlas, and the
// crops the training transform feeds for a seed and epoch (SampleDecoder,
// as the Loader and `urec show` make them).
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

// A page of thumbnails as one picture (an atlas), so that a browser asks
// once for a grid page's images. Its cells are all cell_width x
// cell_height, the largest width and the largest height of its thumbnails
// (at most the thumbnail size): cell k of the page's n at
// x = (k % kAtlasColumns) * cell_width, y = (k / kAtlasColumns) * cell_height,
// its thumbnail (Images::ThumbnailPixels, exactly) in the cell's top-left
// width x height, the rest black; a cell whose thumbnail could not be made
// is black and carries its error.
inline constexpr int kAtlasColumns = 8;
// An atlas's bound, checked before anything is decoded as if every cell
// were size x size: 8 Mi pixels, 24 MiB of RGB (200 cells of 200 x 200, the
// grid's largest page at the default size of 160; 32 of 512 x 512).
inline constexpr uint64_t kMaxAtlasPixels = uint64_t{1} << 23;

struct AtlasCell {
  uint64_t id = 0;
  int x = 0, y = 0, width = 0, height = 0;
  std::string error;  // empty when the thumbnail is there
};

struct Atlas {
  int width = 0, height = 0;
  int cell_width = 0, cell_height = 0;
  std::vector<AtlasCell> cells;
  std::string png;
};

class Images {
 public:
  // `path` names the dataset in errors (SampleSource::Describe).
  Images(std::shared_ptr<const Dataset> dataset, std::string path);

  // Record `id`'s bytes field `field` fitted in size x size (FitInSquare),
  // decoded at that size; as PNG.
  Result<RgbImage> ThumbnailPixels(uint64_t id, size_t field, int size);
  Result<std::string> Thumbnail(uint64_t id, size_t field, int size);

  // The thumbnails of records `ids` (at most kMaxAtlasPixels / size^2 of
  // them) in one atlas.
  Result<Atlas> ThumbnailAtlas(const std::vector<uint64_t>& ids, size_t field, int size);

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
