// Internal: torchvision's Resize / CenterCrop size arithmetic, shared by the
// center-crop planner and the exact center-crop decode.
#ifndef UNIRECORD_SRC_IMAGE_CROP_GEOMETRY_H_
#define UNIRECORD_SRC_IMAGE_CROP_GEOMETRY_H_

namespace unirecord::image_internal {

// Python's round(): halves go to the even neighbour.
int RoundHalfEven(double v);

// torchvision Resize(shorter) on a width x height image: the shorter side
// becomes `shorter`, the longer one int(shorter * long / short).
void ResizedSize(int width, int height, int shorter, int* resized_width, int* resized_height);

// torchvision CenterCrop(size): the first kept index along an axis `extent` long.
inline int CenterCropOffset(int extent, int size) { return RoundHalfEven((extent - size) / 2.0); }

}  // namespace unirecord::image_internal

#endif  // UNIRECORD_SRC_IMAGE_CROP_GEOMETRY_H_
