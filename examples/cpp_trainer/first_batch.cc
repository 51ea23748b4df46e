// Prints the shape of a dataset's first batch. scripts/test-example.sh builds
// it with nothing but `pkg-config --cflags --libs --static unirecord`.
#include <cstdio>

#include "unirecord/loader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: first_batch DATASET\n");
    return 2;
  }
  auto dataset = unirecord::Dataset::Open(argv[1]);
  if (!dataset.ok()) {
    std::fprintf(stderr, "%s\n", dataset.status().ToString().c_str());
    return 1;
  }
  unirecord::LoaderOptions options;
  options.batch_size = 4;
  options.image_size = 32;
  auto loader = unirecord::Loader::Create(*dataset, options);
  if (!loader.ok()) {
    std::fprintf(stderr, "%s\n", loader.status().ToString().c_str());
    return 1;
  }
  auto batch = (*loader)->Next();
  if (!batch.ok()) {
    std::fprintf(stderr, "%s\n", batch.status().ToString().c_str());
    return 1;
  }
  std::printf("first batch: %zu x %d x %d x %d, label[0] = %lld\n", batch->size(), batch->height(),
              batch->width(), batch->channels(), static_cast<long long>(batch->labels()[0]));
  return 0;
}
