// cpp_trainer: trains a tiny CNN with libtorch on batches from unirecord's
// native Loader, and prints the loss going down.
//
//   cpp_trainer DATASET [--steps 300] [--batch 32] [--size 64] [--threads 0]
//                       [--lr 0.01] [--expect-decrease]
//
// DATASET is what `urec convert imagefolder` wrote (fields image, label;
// metadata "classes"). The loader decodes RandomResizedCrop + flip straight
// into its batch buffers; each batch becomes a tensor without a copy
// (from_blob), then float NCHW on the training device.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "unirecord/dataset.h"
#include "unirecord/loader.h"
#include "unirecord/schema.h"

namespace {

struct Args {
  std::string dataset;
  int steps = 300;
  size_t batch = 32;
  int size = 64;
  int threads = 0;
  double lr = 0.01;
  bool expect_decrease = false;
};

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--steps" && (v = value())) args->steps = std::atoi(v);
    else if (a == "--batch" && (v = value())) args->batch = std::strtoul(v, nullptr, 10);
    else if (a == "--size" && (v = value())) args->size = std::atoi(v);
    else if (a == "--threads" && (v = value())) args->threads = std::atoi(v);
    else if (a == "--lr" && (v = value())) args->lr = std::atof(v);
    else if (a == "--expect-decrease") args->expect_decrease = true;
    else if (a[0] != '-' && args->dataset.empty()) args->dataset = a;
    else return false;
  }
  return !args->dataset.empty() && args->steps > 0 && args->batch > 0 && args->size >= 16;
}

struct TinyCnnImpl : torch::nn::Module {
  explicit TinyCnnImpl(int64_t classes)
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).stride(2).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(32, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv1(x));
    x = torch::relu(conv2(x));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc(x);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc;
};
TORCH_MODULE(TinyCnn);

int Fail(const unirecord::Status& status) {
  std::fprintf(stderr, "cpp_trainer: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fprintf(stderr, "usage: cpp_trainer DATASET [--steps N] [--batch N] [--size PX] [--threads N] "
                         "[--lr X] [--expect-decrease]\n");
    return 2;
  }
  auto dataset = unirecord::Dataset::Open(args.dataset);
  if (!dataset.ok()) return Fail(dataset.status());
  const auto classes_it = (*dataset)->metadata().find(unirecord::kClassesMetadataKey);
  const int64_t classes = classes_it == (*dataset)->metadata().end()
                              ? 0
                              : static_cast<int64_t>(unirecord::DecodeNameList(classes_it->second).size());
  if (classes < 2) return Fail(unirecord::Status::InvalidArgument("dataset has fewer than 2 classes"));

  unirecord::LoaderOptions options;
  options.batch_size = args.batch;
  options.image_size = args.size;
  options.threads = args.threads;
  options.sampler.seed = 1;
  options.crop.scale_min = 0.35;  // small images: keep most of the picture
  auto loader = unirecord::Loader::Create(*dataset, options);
  if (!loader.ok()) return Fail(loader.status());

  const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::manual_seed(0);
  TinyCnn model(classes);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(args.lr).momentum(0.9));
  const auto mean = torch::tensor({0.485f, 0.456f, 0.406f}, device).view({1, 3, 1, 1}) * 255;
  const auto stdev = torch::tensor({0.229f, 0.224f, 0.225f}, device).view({1, 3, 1, 1}) * 255;

  std::printf("cpp_trainer: %llu records, %lld classes, %d loader threads, device %s\n",
              static_cast<unsigned long long>((*dataset)->size()), static_cast<long long>(classes),
              (*loader)->threads(), device.is_cuda() ? "cuda" : "cpu");
  const int window = std::max(1, std::min(20, args.steps / 4));
  double first_sum = 0, last_sum = 0, running = 0;
  int step = 0;
  for (uint64_t epoch = 0; step < args.steps; ++epoch) {
    (*loader)->SetEpoch(epoch);
    for (; step < args.steps; ++step) {
      auto batch = (*loader)->Next();
      if (!batch.ok()) return Fail(batch.status());
      if (batch->empty()) break;
      const int64_t n = static_cast<int64_t>(batch->size());
      // Views of the loader's buffer; the .to()/.clone() copies happen before the batch is released.
      torch::Tensor images = torch::from_blob(const_cast<uint8_t*>(batch->images()),
                                              {n, args.size, args.size, 3}, torch::kUInt8);
      torch::Tensor labels = torch::from_blob(const_cast<int64_t*>(batch->labels()), {n}, torch::kInt64);
      torch::Tensor x = (images.to(device).permute({0, 3, 1, 2}).to(torch::kFloat32) - mean) / stdev;
      torch::Tensor y = labels.clone().to(device);
      batch->Release();

      optimizer.zero_grad();
      torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
      loss.backward();
      optimizer.step();
      const double value = loss.item<double>();
      running = step == 0 ? value : 0.9 * running + 0.1 * value;
      if (step < window) first_sum += value;
      if (step >= args.steps - window) last_sum += value;
      if (step % 20 == 0 || step == args.steps - 1) {
        std::printf("step %4d  epoch %llu  loss %.4f  (smoothed %.4f)\n", step,
                    static_cast<unsigned long long>(epoch), value, running);
      }
    }
  }
  const double first = first_sum / window, last = last_sum / window;
  const unirecord::LoaderStats stats = (*loader)->stats();
  std::printf("mean loss: first %d steps %.4f, last %d steps %.4f; loader %.0f images/s, waited %.2f s\n",
              window, first, window, last, stats.images_per_s, stats.wait_s);
  if (args.expect_decrease && !(last < first)) {
    std::fprintf(stderr, "cpp_trainer: the loss did not go down\n");
    return 1;
  }
  return 0;
}
