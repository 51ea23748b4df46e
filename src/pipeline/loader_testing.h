// Test helpers shared by the Loader's CPU and GPU tests: a small dataset of
// synthetic JPEGs and the decode layer's reference output for one record.
#ifndef UNIRECORD_SRC_PIPELINE_LOADER_TESTING_H_
#define UNIRECORD_SRC_PIPELINE_LOADER_TESTING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "unirecord/dataset.h"
#include "unirecord/loader.h"

namespace unirecord::loader_testing {

constexpr int kRecords = 37;  // not a multiple of any batch size the tests use
constexpr int kImageSize = 32;

struct TestDataset {
  std::string dir;
  std::vector<std::string> jpegs;  // by record id
};

// kRecords synthetic JPEGs of varied sizes and samplings, label id % 5 and
// path "class<label>/img<id>.jpg", as a two-shard dataset in a fresh
// temporary directory of this process; the `bad` ids hold `replacement` instead of a JPEG.
TestDataset WriteDataset(const std::string& name, const std::vector<uint64_t>& bad = {},
                         const std::string& replacement = "");

std::shared_ptr<const Dataset> OpenDataset(const std::string& dir);

// Batch 8, 32x32 images, seed 77, one thread.
LoaderOptions SmallOptions();

// The decode layer's output for record `id` of `epoch` in the options'
// transform and layout: PlanRandomResizedCrop + DecodeCropResized, or
// ImageDecoder::DecodeCenterCrop for kCenterCrop (without resize_shorter: the
// PlanCenterCrop window resized).
std::vector<uint8_t> ExpectedPixels(const std::string& jpeg, uint64_t id, uint64_t epoch,
                                    const LoaderOptions& options);

}  // namespace unirecord::loader_testing

#endif  // UNIRECORD_SRC_PIPELINE_LOADER_TESTING_H_
