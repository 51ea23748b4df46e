// unirecord._Loader: the native Loader, with batches handed to Python as
// DLPack capsules that borrow the loader's batch buffers (no copy). A buffer
// goes back to the loader's pool when the last tensor made from it is freed;
// until then the Loader never refills it (it fills the other free buffers),
// so a tensor's data never changes under it.
#include <pybind11/stl.h>

#include <array>
#include <mutex>

#include "common.h"
#include "dlpack_abi.h"
#include "unirecord/loader.h"

namespace unirecord_py {

using unirecord::Batch;
using unirecord::DeviceDType;
using unirecord::ImageLayout;
using unirecord::Loader;
using unirecord::LoaderOptions;
using unirecord::LoaderTransform;
using unirecord::OnBadRecord;
using unirecord::SamplerState;
using unirecord::Status;

namespace {

// Owns the Loader. A batch still referenced from Python does not need it:
// a Batch shares the loader's buffer pool (loader.h) and outlives its Loader.
struct LoaderBox {
  std::shared_ptr<PyDataset> ds;
  std::unique_ptr<Loader> loader;
  std::mutex mu;  // Next/SetEpoch/state/Restore come from one thread at a time
};

// One DLPack tensor of a batch; the batch (and so its buffer) lives while
// any of its tensors does.
struct TensorCtx {
  std::shared_ptr<const Batch> batch;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};
  DLManagedTensor managed{};
};

// May run on any thread, with or without the GIL: touches no Python object.
void DeleteTensor(DLManagedTensor* self) { delete static_cast<TensorCtx*>(self->manager_ctx); }

void DestroyCapsule(PyObject* capsule) {
  // A consumer renames the capsule "used_dltensor" and owns the tensor then.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  } else {
    PyErr_Clear();
  }
}

py::object MakeCapsule(const std::shared_ptr<const Batch>& batch, const void* data, DLDataType dtype,
                       std::vector<int64_t> shape, DLDevice device) {
  auto* ctx = new TensorCtx;
  ctx->batch = batch;
  int ndim = static_cast<int>(shape.size());
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    ctx->shape[i] = shape[i];
    ctx->strides[i] = stride;
    stride *= shape[i];
  }
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = const_cast<void*>(data);
  t.device = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = &DeleteTensor;
  PyObject* cap = PyCapsule_New(&ctx->managed, "dltensor", &DestroyCapsule);
  if (cap == nullptr) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(cap);
}

template <typename T>
T Take(py::dict& opts, const char* key, T fallback) {
  if (!opts.contains(key)) return fallback;
  T v = opts[key].cast<T>();
  PyDict_DelItemString(opts.ptr(), key);
  return v;
}

const char* OnBadRecordName(OnBadRecord on_bad_record) {
  return on_bad_record == OnBadRecord::kSkip ? "skip" : "raise";
}

const char* LayoutName(ImageLayout layout) { return layout == ImageLayout::kNCHW ? "NCHW" : "NHWC"; }

// The options of unirecord.Loader that map to LoaderOptions, with the values
// of a default-constructed LoaderOptions: the Python signature's defaults.
py::dict LoaderDefaults() {
  const LoaderOptions o;
  py::dict d;
  d["batch_size"] = o.batch_size;
  d["drop_last"] = o.drop_last;
  d["order"] = unirecord::SampleOrderName(o.sampler.order);
  d["seed"] = o.sampler.seed;
  d["num_shards"] = o.sampler.num_shards;
  d["shard_id"] = o.sampler.shard_id;
  d["block_size"] = o.sampler.block_size;
  d["window"] = o.sampler.window;
  d["sampler_drop_last"] = o.sampler.drop_last;
  d["size"] = o.image_size;
  d["resize"] = o.resize_shorter;
  d["scale_min"] = o.crop.scale_min;
  d["scale_max"] = o.crop.scale_max;
  d["ratio_min"] = o.crop.ratio_min;
  d["ratio_max"] = o.crop.ratio_max;
  d["flip_probability"] = o.crop.flip_probability;
  d["strict"] = o.decode.strict;
  d["apply_exif"] = o.decode.apply_exif;
  d["dct_scaling"] = o.decode.dct_scaling;
  d["max_pixels"] = o.decode.limits.max_pixels;
  d["layout"] = LayoutName(o.layout);
  d["image_field"] = o.image_field;
  d["label_field"] = o.label_field;
  d["path_field"] = o.path_field;
  d["threads"] = o.threads;
  d["prefetch"] = o.prefetch;
  d["on_error"] = OnBadRecordName(o.on_bad_record);
  d["max_consecutive_bad"] = o.max_consecutive_bad;
  d["cuda_mean"] = o.cuda.mean;
  d["cuda_std"] = o.cuda.std;
  return d;
}

LoaderOptions ParseOptions(py::dict opts) {
  LoaderOptions o;
  o.batch_size = Take<size_t>(opts, "batch_size", o.batch_size);
  o.drop_last = Take<bool>(opts, "drop_last", o.drop_last);
  o.sampler.order = Unwrap(unirecord::ParseSampleOrder(
      Take<std::string>(opts, "order", unirecord::SampleOrderName(o.sampler.order))));
  o.sampler.seed = Take<uint64_t>(opts, "seed", o.sampler.seed);
  o.sampler.num_shards = Take<uint32_t>(opts, "num_shards", o.sampler.num_shards);
  o.sampler.shard_id = Take<uint32_t>(opts, "shard_id", o.sampler.shard_id);
  o.sampler.block_size = Take<uint64_t>(opts, "block_size", o.sampler.block_size);
  o.sampler.window = Take<uint64_t>(opts, "window", o.sampler.window);
  o.sampler.drop_last = Take<bool>(opts, "sampler_drop_last", o.sampler.drop_last);
  if (opts.contains("subset")) o.subset = Take<std::vector<uint64_t>>(opts, "subset", {});
  std::string transform = Take<std::string>(opts, "transform", "random_resized_crop");
  if (transform == "random_resized_crop") o.transform = LoaderTransform::kRandomResizedCrop;
  else if (transform == "center_crop") o.transform = LoaderTransform::kCenterCrop;
  else RaiseStatus(Status::InvalidArgument("unknown transform '" + transform + "'"));
  o.image_size = Take<int>(opts, "size", o.image_size);
  o.resize_shorter = Take<int>(opts, "resize", o.resize_shorter);
  o.crop.scale_min = Take<double>(opts, "scale_min", o.crop.scale_min);
  o.crop.scale_max = Take<double>(opts, "scale_max", o.crop.scale_max);
  o.crop.ratio_min = Take<double>(opts, "ratio_min", o.crop.ratio_min);
  o.crop.ratio_max = Take<double>(opts, "ratio_max", o.crop.ratio_max);
  o.crop.flip_probability = Take<double>(opts, "flip_probability", o.crop.flip_probability);
  o.decode.strict = Take<bool>(opts, "strict", o.decode.strict);
  o.decode.apply_exif = Take<bool>(opts, "apply_exif", o.decode.apply_exif);
  o.decode.dct_scaling = Take<bool>(opts, "dct_scaling", o.decode.dct_scaling);
  o.decode.limits.max_pixels = Take<int64_t>(opts, "max_pixels", o.decode.limits.max_pixels);
  o.layout = Unwrap(unirecord::ParseImageLayout(Take<std::string>(opts, "layout", LayoutName(o.layout))));
  o.image_field = Take<std::string>(opts, "image_field", o.image_field);
  o.label_field = Take<std::string>(opts, "label_field", o.label_field);
  o.path_field = Take<std::string>(opts, "path_field", o.path_field);
  o.threads = Take<int>(opts, "threads", o.threads);
  o.prefetch = Take<int>(opts, "prefetch", o.prefetch);
  std::string on_error = Take<std::string>(opts, "on_error", OnBadRecordName(o.on_bad_record));
  if (on_error == "raise") o.on_bad_record = OnBadRecord::kRaise;
  else if (on_error == "skip") o.on_bad_record = OnBadRecord::kSkip;
  else RaiseStatus(Status::InvalidArgument("on_error must be 'raise' or 'skip', not '" + on_error + "'"));
  o.max_consecutive_bad = Take<int>(opts, "max_consecutive_bad", o.max_consecutive_bad);
  o.cuda.device = Take<int>(opts, "cuda_device", o.cuda.device);
  o.cuda.layout = o.layout;  // on a device the kernel makes the layout (the host batch stays NHWC)
  std::string dtype = Take<std::string>(opts, "cuda_dtype", "float32");
  if (dtype == "float32") o.cuda.dtype = DeviceDType::kFloat32;
  else if (dtype == "float16") o.cuda.dtype = DeviceDType::kFloat16;
  else if (dtype == "uint8") o.cuda.dtype = DeviceDType::kUint8;
  else RaiseStatus(Status::InvalidArgument("dtype must be uint8, float16 or float32 on the device, not " + dtype));
  o.cuda.normalize = Take<bool>(opts, "cuda_normalize", o.cuda.normalize);
  o.cuda.mean = Take<std::array<float, 3>>(opts, "cuda_mean", o.cuda.mean);
  o.cuda.std = Take<std::array<float, 3>>(opts, "cuda_std", o.cuda.std);
  o.cuda.consumer_stream = reinterpret_cast<void*>(Take<uintptr_t>(opts, "cuda_stream", 0));
  if (py::len(opts) != 0) {
    std::string keys;
    for (auto item : opts) keys += (keys.empty() ? "" : ", ") + py::str(item.first).cast<std::string>();
    RaiseStatus(Status::InvalidArgument("unknown loader option(s): " + keys));
  }
  return o;
}

class PyLoader {
 public:
  PyLoader(std::shared_ptr<PyDataset> ds, py::dict opts) {
    options_ = ParseOptions(opts);
    box_ = NewBox(std::move(ds));
  }

  ~PyLoader() {
    // Stops the decode threads; batches still referenced from Python keep
    // their buffers (Batch shares the loader's pool).
    py::gil_scoped_release nogil;
    box_.reset();
  }

  // None at the end of the epoch; else (images, labels or None, record_ids, epoch, index).
  py::object Next(uintptr_t wait_stream) {
    unirecord::Result<Batch> r = NextBatch();
    if (!r.ok()) {
      const Status& st = r.status();
      if (st.code() == unirecord::StatusCode::kFailedPrecondition) {
        // Every buffer of the pool is held by tensors still referenced from
        // Python (batches of earlier epochs included). FailedPrecondition
        // maps to RuntimeError.
        RaiseStatus(st.WithContext(
            "unirecord.Loader: every batch buffer is still referenced from Python (a batch's tensors share "
            "the loader's buffer until they are freed). Drop or .clone() batches you keep, or raise prefetch"));
      }
      RaiseStatus(st);
    }
    const auto batch = std::make_shared<const Batch>(std::move(r).value());
    const Batch& b = *batch;
    if (b.empty()) return py::none();
    const LoaderOptions& o = box_->loader->options();
    const int64_t n = static_cast<int64_t>(b.size()), h = b.height(), w = b.width();
    std::vector<int64_t> shape = b.layout() == ImageLayout::kNCHW ? std::vector<int64_t>{n, 3, h, w}
                                                                   : std::vector<int64_t>{n, h, w, 3};
    DLDevice cpu{kDLCPU, 0};
    py::object images;
    if (o.cuda.device >= 0) {
      if (wait_stream != 0 || o.cuda.consumer_stream == nullptr) {
        Check(b.WaitOn(reinterpret_cast<void*>(wait_stream)));
      }
      DLDataType dt{kDLFloat, 32, 1};
      if (o.cuda.dtype == DeviceDType::kFloat16) dt = DLDataType{kDLFloat, 16, 1};
      if (o.cuda.dtype == DeviceDType::kUint8) dt = DLDataType{kDLUInt, 8, 1};
      std::vector<int64_t> dshape = o.cuda.layout == ImageLayout::kNCHW ? std::vector<int64_t>{n, 3, h, w}
                                                                         : std::vector<int64_t>{n, h, w, 3};
      images = MakeCapsule(batch, b.device_images(), dt, dshape, DLDevice{kDLCUDA, o.cuda.device});
    } else {
      images = MakeCapsule(batch, b.images(), DLDataType{kDLUInt, 8, 1}, shape, cpu);
    }
    py::object labels = py::none();
    if (b.labels() != nullptr) labels = MakeCapsule(batch, b.labels(), DLDataType{kDLInt, 64, 1}, {n}, cpu);
    // Record ids are uint64; exposed as int64 (torch has no uint64; ids < 2^63).
    py::object ids = MakeCapsule(batch, b.record_ids(), DLDataType{kDLInt, 64, 1}, {n}, cpu);
    return py::make_tuple(images, labels, ids, b.epoch(), b.index());
  }

  void SetEpoch(uint64_t epoch) {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(box_->mu);
    box_->loader->SetEpoch(epoch);
  }
  uint64_t Epoch() {
    std::lock_guard<std::mutex> lock(box_->mu);
    return box_->loader->epoch();
  }
  py::dict State() {
    SamplerState s;
    {
      std::lock_guard<std::mutex> lock(box_->mu);
      s = box_->loader->state();
    }
    py::dict d;
    d["seed"] = s.seed;
    d["epoch"] = s.epoch;
    d["position"] = s.position;
    d["sampler_state"] = py::bytes(s.Serialize());
    return d;
  }
  void Restore(const py::bytes& serialized) {
    SamplerState s = Unwrap(SamplerState::Parse(std::string(serialized)));
    Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(box_->mu);
      st = box_->loader->Restore(s);
    }
    Check(st);
  }
  py::dict Stats() {
    unirecord::LoaderStats s = box_->loader->stats();
    py::dict d;
    d["batches"] = s.batches;
    d["samples"] = s.samples;
    d["skipped"] = s.skipped;
    d["read_s"] = s.read_s;
    d["decode_s"] = s.decode_s;
    d["upload_s"] = s.upload_s;
    d["wait_s"] = s.wait_s;
    d["wall_s"] = s.wall_s;
    d["images_per_s"] = s.images_per_s;
    d["batches_per_s"] = s.batches_per_s;
    d["last_bad_record"] = s.last_bad_record;
    d["threads"] = box_->loader->threads();
    return d;
  }
  void ResetStats() { box_->loader->ResetStats(); }
  uint64_t BatchesPerEpoch() const { return box_->loader->batches_per_epoch(); }
  int Threads() const { return box_->loader->threads(); }

 private:
  std::shared_ptr<LoaderBox> NewBox(std::shared_ptr<PyDataset> ds) {
    auto box = std::make_shared<LoaderBox>();
    box->ds = std::move(ds);
    unirecord::Result<std::unique_ptr<Loader>> r = Status::Internal("not created");
    {
      py::gil_scoped_release nogil;
      r = Loader::Create(box->ds->dataset, options_);
    }
    box->loader = Unwrap(std::move(r));
    return box;
  }

  unirecord::Result<Batch> NextBatch() {
    unirecord::Result<Batch> r = Status::Internal("no batch");
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(box_->mu);
    r = box_->loader->Next();
    return r;
  }

  LoaderOptions options_;
  std::shared_ptr<LoaderBox> box_;
};

}  // namespace

void RegisterLoader(py::module_& m) {
  // The defaults of LoaderOptions under the option names of _Loader.
  m.attr("_loader_defaults") = LoaderDefaults();
  py::class_<PyLoader>(m, "_Loader", "Native side of unirecord.Loader (internal).")
      .def(py::init<std::shared_ptr<PyDataset>, py::dict>(), py::arg("dataset"), py::arg("options"))
      .def("next", &PyLoader::Next, py::arg("wait_stream") = 0)
      .def("set_epoch", &PyLoader::SetEpoch, py::arg("epoch"))
      .def_property_readonly("epoch", &PyLoader::Epoch)
      .def("state", &PyLoader::State)
      .def("restore", &PyLoader::Restore, py::arg("sampler_state"))
      .def("stats", &PyLoader::Stats)
      .def("reset_stats", &PyLoader::ResetStats)
      .def_property_readonly("batches_per_epoch", &PyLoader::BatchesPerEpoch)
      .def_property_readonly("threads", &PyLoader::Threads);
}

}  // namespace unirecord_py
