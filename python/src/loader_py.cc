// unirecord._Loader: the native Loader, with batches handed to Python as
// DLPack capsules that borrow the loader's batch buffers (no copy). A buffer
// goes back to the loader's pool when the last tensor made from it is freed;
// until then the Loader never refills it (it fills the other free buffers),
// so a tensor's data never changes under it.
#include <pybind11/stl.h>
#include <unistd.h>

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common.h"
#include "dlpack_abi.h"
#include "unirecord/loader.h"

namespace unirecord_py {

using unirecord::Batch;
using unirecord::DeviceDType;
using unirecord::ImageLayout;
using unirecord::Loader;
using unirecord::LoaderOptions;
using unirecord::SamplerState;
using unirecord::Status;

namespace {

py::dict PackStateDict(const unirecord::PackState& pack) {
  py::dict d;
  d["pack_state"] = py::bytes(pack.Serialize());
  d["seed"] = pack.window.seed;
  d["epoch"] = pack.window.epoch;
  return d;
}

// The state dicts of every rank (a list): their "coverage" merged
// (MergeCoverage), or None when one of them has none.
py::object MergedCoverage(const py::handle& states) {
  std::vector<unirecord::CoverageDigest> digests;
  for (const py::handle item : states) {
    if (!PyDict_Check(item.ptr()) || !py::reinterpret_borrow<py::dict>(item).contains("coverage")) return py::none();
    digests.push_back(CoverageArg(py::reinterpret_borrow<py::dict>(item)["coverage"]));
  }
  return py::bytes(Unwrap(unirecord::MergeCoverage(digests)).Serialize());
}

// A packing loader's state_dict: "pack_state", and "seed" and "epoch" beside
// it, which must agree with it (an edited copy would resume elsewhere).
unirecord::PackState PackStateOf(const py::handle& state) {
  if (!PyDict_Check(state.ptr())) {
    throw py::type_error("a packing Loader's state is the dict state_dict() returned, not " +
                         std::string(Py_TYPE(state.ptr())->tp_name));
  }
  const py::dict d = py::reinterpret_borrow<py::dict>(state);
  const char* keys = " (keys of a packing Loader.state_dict(): pack_state, seed, epoch, coverage)";
  if (!d.contains("pack_state")) {
    RaiseStatus(Status::InvalidArgument(std::string("the state has no 'pack_state'") + keys));
  }
  py::object serialized = d["pack_state"];
  if (!PyBytes_Check(serialized.ptr())) {
    throw py::type_error("state['pack_state'] must be bytes (from Loader.state_dict()), not " +
                         std::string(Py_TYPE(serialized.ptr())->tp_name));
  }
  unirecord::PackState s = Unwrap(unirecord::PackState::Parse(serialized.cast<std::string>()));
  for (auto item : d) {
    const std::string key = py::str(item.first).cast<std::string>();
    if (key == "pack_state" || key == "coverage") continue;
    const uint64_t* held = key == "seed" ? &s.window.seed : key == "epoch" ? &s.window.epoch : nullptr;
    if (held == nullptr) RaiseStatus(Status::InvalidArgument("the state has an unknown key '" + key + "'" + keys));
    const uint64_t given = IntArgAs<uint64_t>("state['" + key + "']", item.second);
    if (given != *held) {
      RaiseStatus(Status::InvalidArgument("state['" + key + "'] is " + std::to_string(given) +
                                          " but its pack_state holds " + key + " " + std::to_string(*held)));
    }
  }
  return s;
}

// Owns the Loader. A batch still referenced from Python does not need it:
// a Batch shares the loader's buffer pool (loader.h) and outlives its Loader.
struct LoaderBox {
  std::vector<std::shared_ptr<PyDataset>> ds;  // several: a mixture
  std::unique_ptr<Loader> loader;
  std::mutex mu;  // Next/SetEpoch/state/Restore come from one thread at a time
};

// One DLPack tensor of a batch; the batch (and so its buffer) lives while
// any of its tensors does.
struct TensorCtx {
  std::shared_ptr<const Batch> batch;
  std::array<int64_t, 9> shape{};  // B and up to 8 dimensions of a field
  std::array<int64_t, 9> strides{};
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

// The DLPack type of a numeric element type, from its TypeInfo (numpy kind
// and width). bool goes as uint8 (DLPack 0.6, which torch 1.13 reads, has no
// bool); unirecord.Loader views it as torch.bool.
DLDataType DLTypeOf(unirecord::FieldType type) {
  const unirecord::TypeInfo& info = *unirecord::FindType(type);
  const uint8_t code = info.kind == 'f' ? uint8_t(kDLFloat) : info.kind == 'i' ? uint8_t(kDLInt) : uint8_t(kDLUInt);
  return DLDataType{code, static_cast<uint8_t>(8 * info.width), 1};
}

class PyLoader {
 public:
  PyLoader(std::vector<std::shared_ptr<PyDataset>> ds, py::dict opts) {
    options_ = ParseLoaderOptions(opts);
    box_ = NewBox(std::move(ds));
  }

  ~PyLoader() {
    if (getpid() != owner_pid_) {
      // A forked child (a DataLoader worker) freeing its copy of the parent's
      // loader, e.g. when its garbage collector breaks a cycle: the decode
      // threads exist only in the parent, so stopping them would wait forever
      // on their condition variables. The copy is left as it is.
      new std::shared_ptr<LoaderBox>(std::move(box_));
      return;
    }
    // Stops the decode threads; batches still referenced from Python keep
    // their buffers (Batch shares the loader's pool).
    py::gil_scoped_release nogil;
    box_.reset();
  }

  // None at the end of the epoch; else (images or None, labels or None,
  // record_ids, epoch, index, crops or None, {name: tensor or list} of the
  // batched fields with their NAME_lengths / NAME_offsets, None or a clip
  // loader's (frame_pts, clip_starts)).
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
    // A clip loader's: [n, (K,) 3, T, h, w] or [n, (K,) T, h, w, 3].
    const auto image_shape = [&](ImageLayout layout) {
      std::vector<int64_t> shape = {n};
      if (b.clips() > 1) shape.push_back(b.clips());
      if (layout == ImageLayout::kNCHW) shape.push_back(3);
      if (b.clip_frames() > 0) shape.push_back(b.clip_frames());
      shape.insert(shape.end(), {h, w});
      if (layout == ImageLayout::kNHWC) shape.push_back(3);
      return shape;
    };
    const std::vector<int64_t> shape = image_shape(b.layout());
    DLDevice cpu{kDLCPU, 0};
    // Where device memory is: the host device's is ordinary memory.
    const DLDevice device = o.cuda.host_emulation ? cpu : DLDevice{kDLCUDA, o.cuda.device};
    // The consumer's stream waits for the upload (images and fields; the
    // host device blocks until it has run).
    if (o.cuda.device >= 0 && (wait_stream != 0 || o.cuda.consumer_stream == nullptr)) {
      Check(b.WaitOn(reinterpret_cast<void*>(wait_stream)));
    }
    py::object images = py::none();
    if (b.images() == nullptr) {
      // No image field.
    } else if (o.cuda.device >= 0) {
      DLDataType dt{kDLFloat, 32, 1};
      if (o.cuda.dtype == DeviceDType::kFloat16) dt = DLDataType{kDLFloat, 16, 1};
      if (o.cuda.dtype == DeviceDType::kUint8) dt = DLDataType{kDLUInt, 8, 1};
      images = MakeCapsule(batch, b.device_images(), dt, image_shape(o.cuda.layout), device);
    } else {
      images = MakeCapsule(batch, b.images(), DLDataType{kDLUInt, 8, 1}, shape, cpu);
    }
    py::object labels = py::none();
    if (b.labels() != nullptr) labels = MakeCapsule(batch, b.labels(), DLDataType{kDLInt, 64, 1}, {n}, cpu);
    // Record ids are uint64; exposed as int64 (torch has no uint64; ids < 2^63).
    py::object ids = py::none();  // a packing loader's are per segment, among its fields
    if (b.record_ids() != nullptr) ids = MakeCapsule(batch, b.record_ids(), DLDataType{kDLInt, 64, 1}, {n}, cpu);
    py::object crops = py::none();
    if (b.crops() != nullptr) crops = MakeCapsule(batch, b.crops(), DLDataType{kDLInt, 32, 1}, {n, 5}, cpu);
    py::dict fields;
    for (const unirecord::BatchField& f : b.fields()) {
      if (f.kind == unirecord::FieldKind::kString || f.kind == unirecord::FieldKind::kBytes) {
        py::list values;
        for (std::string_view v : f.values) {
          if (f.kind == unirecord::FieldKind::kString) values.append(py::str(v.data(), v.size()));
          else values.append(py::bytes(v.data(), v.size()));
        }
        fields[py::str(f.name)] = values;
        continue;
      }
      // On a CUDA device the numeric fields were uploaded with the images
      // (the wait above covers them too).
      const bool on_device = f.device_data != nullptr;
      const DLDevice where = on_device ? device : cpu;
      fields[py::str(f.name)] = MakeCapsule(batch, on_device ? f.device_data : f.data, DLTypeOf(f.type), f.shape, where);
      if (f.lengths != nullptr) {
        fields[py::str(f.name + "_lengths")] = MakeCapsule(
            batch, on_device ? f.device_lengths : f.lengths, DLDataType{kDLInt, 64, 1}, f.lengths_shape, where);
      }
      if (f.offsets != nullptr) {
        fields[py::str(f.name + "_offsets")] =
            MakeCapsule(batch, on_device ? f.device_offsets : f.offsets, DLDataType{kDLInt, 64, 1}, {n + 1}, where);
      }
    }
    py::object clips = py::none();
    if (b.frame_pts() != nullptr) {
      std::vector<int64_t> per_clip = {n};
      if (b.clips() > 1) per_clip.push_back(b.clips());
      std::vector<int64_t> per_frame = per_clip;
      per_frame.push_back(b.clip_frames());
      clips = py::make_tuple(MakeCapsule(batch, b.frame_pts(), DLDataType{kDLInt, 64, 1}, per_frame, cpu),
                             MakeCapsule(batch, b.clip_starts(), DLDataType{kDLFloat, 64, 1}, per_clip, cpu));
    }
    return py::make_tuple(images, labels, ids, b.epoch(), b.index(), crops, fields, clips);
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
    unirecord::Result<unirecord::PackState> pack = Status::NotFound("not packing");
    std::string coverage;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(box_->mu);
      s = box_->loader->state();
      if (box_->loader->options().pack) pack = box_->loader->pack_state();
      coverage = box_->loader->coverage().Serialize();
    }
    py::dict d;
    if (box_->loader->options().pack) {
      d = PackStateDict(Unwrap(std::move(pack)));  // its window's sampler state travels inside
    } else {
      d["seed"] = s.seed;
      d["epoch"] = s.epoch;
      d["position"] = s.position;
      d["sampler_state"] = py::bytes(s.Serialize());
    }
    d["coverage"] = py::bytes(coverage);
    return d;
  }
  unirecord::CoverageDigest Coverage() {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(box_->mu);
    return box_->loader->coverage();
  }
  // A state() dict, perhaps from a checkpoint: "sampler_state" is the state;
  // "seed", "epoch" and "position" are shown beside it for people and must
  // agree with it (an edited copy would otherwise resume somewhere else).
  void Restore(const py::handle& state) {
    if (!PyDict_Check(state.ptr())) {
      throw py::type_error("load_state_dict takes the dict state_dict() returned, not " +
                           std::string(Py_TYPE(state.ptr())->tp_name));
    }
    const py::dict d = py::reinterpret_borrow<py::dict>(state);
    if (box_->loader->options().pack) return RestorePacked(d);
    if (!d.contains("sampler_state")) {
      RaiseStatus(Status::InvalidArgument("the state has no 'sampler_state' (keys of Loader.state_dict(): "
                                          "sampler_state, seed, epoch, position)"));
    }
    py::object serialized = d["sampler_state"];
    if (!PyBytes_Check(serialized.ptr())) {
      throw py::type_error("state['sampler_state'] must be bytes (from Loader.state_dict()), not " +
                           std::string(Py_TYPE(serialized.ptr())->tp_name));
    }
    SamplerState s = Unwrap(SamplerState::Parse(serialized.cast<std::string>()));
    for (auto item : d) {
      const std::string key = py::str(item.first).cast<std::string>();
      if (key == "sampler_state" || key == "coverage") continue;
      const uint64_t* held = key == "seed" ? &s.seed : key == "epoch" ? &s.epoch : key == "position" ? &s.position
                                                                                                     : nullptr;
      if (held == nullptr) {
        RaiseStatus(Status::InvalidArgument("the state has an unknown key '" + key +
                                            "' (keys of Loader.state_dict(): sampler_state, seed, epoch, position, "
                                            "coverage)"));
      }
      const uint64_t given = IntArgAs<uint64_t>("state['" + key + "']", item.second);
      if (given != *held) {
        RaiseStatus(Status::InvalidArgument(
            "state['" + key + "'] is " + std::to_string(given) + " but its sampler_state holds " + key + " " +
            std::to_string(*held) + ": the keys beside sampler_state only describe it; to start elsewhere, "
            "call set_epoch() instead of editing a state"));
      }
    }
    Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(box_->mu);
      st = box_->loader->Restore(s);
    }
    Check(st);
    CarryCoverage(d);
  }
  // A packing loader's state() dict: "pack_state", and "seed" and "epoch"
  // beside it, which must agree with it.
  void RestorePacked(const py::dict& d) {
    const unirecord::PackState s = PackStateOf(d);
    Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(box_->mu);
      st = box_->loader->Restore(s);
    }
    Check(st);
    CarryCoverage(d);
  }
  // A restored state's "coverage" (what the run delivered before it), when
  // it is this rank's own or every rank's merged; another rank's alone (an
  // elastic resume from one rank's state) cannot be carried, and the
  // loader's coverage() then counts the restore as uncarried.
  void CarryCoverage(const py::dict& d) {
    if (!d.contains("coverage")) return;
    const unirecord::CoverageDigest before = CoverageArg(d["coverage"]);
    const unirecord::SamplerOptions& o = options_.sampler;
    const bool own = before.num_shards == o.num_shards && before.shard_id == o.shard_id &&
                     before.num_workers == o.num_workers && before.worker_id == o.worker_id;
    if (before.num_shards != 0 && !own) return;
    Status st;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(box_->mu);
      st = box_->loader->ResumeCoverage(before);
    }
    // FailedPrecondition: restored at the epoch's start, nothing to carry.
    if (st.code() != unirecord::StatusCode::kFailedPrecondition) Check(st);
  }
  // The state_dicts of every rank of a run (a list), as one that restores
  // into any rank of any number of ranks, their coverage merged: a plain
  // loader's sampler states are one (ranks step in lockstep), a packing
  // loader's are combined (CombinePackStates).
  py::dict Combine(const py::handle& states) {
    if (!PyList_Check(states.ptr()) && !PyTuple_Check(states.ptr())) {
      throw py::type_error("the state_dicts of the ranks must be a list, not " +
                           std::string(Py_TYPE(states.ptr())->tp_name));
    }
    if (py::len(states) == 0) RaiseStatus(Status::InvalidArgument("load_state_dict: an empty list of state_dicts"));
    if (!box_->loader->options().pack) {
      py::dict combined;
      for (const py::handle item : states) {
        if (!PyDict_Check(item.ptr())) {
          throw py::type_error("load_state_dict takes the dicts state_dict() returned, not " +
                               std::string(Py_TYPE(item.ptr())->tp_name));
        }
        py::dict d = py::reinterpret_borrow<py::dict>(item);
        if (!d.contains("sampler_state")) {
          RaiseStatus(Status::InvalidArgument("a state has no 'sampler_state' (keys of Loader.state_dict(): "
                                              "sampler_state, seed, epoch, position, coverage)"));
        }
        if (combined.empty()) {
          for (auto kv : d) combined[kv.first] = kv.second;
        } else if (!d["sampler_state"].equal(combined["sampler_state"])) {
          RaiseStatus(Status::InvalidArgument(
              "load_state_dict: the ranks' sampler states differ: every rank of a run steps in lockstep and "
              "writes the same one; give the state_dicts of one step"));
        }
      }
      py::object coverage = MergedCoverage(states);
      if (coverage.is_none()) {
        if (combined.contains("coverage")) PyDict_DelItemString(combined.ptr(), "coverage");
      } else {
        combined["coverage"] = coverage;
      }
      return combined;
    }
    std::vector<unirecord::PackState> parsed;
    for (const py::handle item : states) parsed.push_back(PackStateOf(item));
    std::vector<std::shared_ptr<const unirecord::Dataset>> datasets;
    for (const auto& d : box_->ds) datasets.push_back(d->dataset);
    unirecord::Result<unirecord::PackState> combined = Status::Internal("not combined");
    {
      py::gil_scoped_release nogil;
      combined = unirecord::CombinePackStates(datasets, options_, parsed);
    }
    py::dict d = PackStateDict(Unwrap(std::move(combined)));
    py::object coverage = MergedCoverage(states);
    if (!coverage.is_none()) d["coverage"] = coverage;
    return d;
  }
  py::dict Stats() {
    unirecord::LoaderStats s = box_->loader->stats();
    py::dict d;
    d["batches"] = s.batches;
    d["samples"] = s.samples;
    d["skipped"] = s.skipped;
    d["read_s"] = s.read_s;
    d["decode_s"] = s.decode_s;
    d["frames_decoded"] = s.frames_decoded;
    d["upload_s"] = s.upload_s;
    d["uploads"] = s.uploads;
    d["wait_s"] = s.wait_s;
    d["wall_s"] = s.wall_s;
    d["images_per_s"] = s.images_per_s;
    d["batches_per_s"] = s.batches_per_s;
    d["last_bad_record"] = s.last_bad_record;
    d["threads"] = box_->loader->threads();
    if (box_->loader->options().pack) {
      d["documents"] = s.documents;
      d["tokens"] = s.tokens;
      d["padding"] = s.padding;
      d["overlong"] = s.overlong;
      d["cut_tokens"] = s.cut_tokens;
      d["dropped"] = s.dropped;
      d["empty"] = s.empty;
    }
    return d;
  }
  void ResetStats() { box_->loader->ResetStats(); }
  uint64_t BatchesPerEpoch() const { return box_->loader->batches_per_epoch(); }
  int Threads() const { return box_->loader->threads(); }

 private:
  std::shared_ptr<LoaderBox> NewBox(std::vector<std::shared_ptr<PyDataset>> ds) {
    auto box = std::make_shared<LoaderBox>();
    box->ds = std::move(ds);
    std::vector<std::shared_ptr<const unirecord::Dataset>> datasets;
    for (const auto& d : box->ds) datasets.push_back(d->dataset);
    unirecord::Result<std::unique_ptr<Loader>> r = Status::Internal("not created");
    {
      py::gil_scoped_release nogil;
      r = Loader::Create(std::move(datasets), options_);
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
  pid_t owner_pid_ = getpid();  // the process whose threads the loader runs
};

}  // namespace

void RegisterLoader(py::module_& m) {
  RegisterLoaderOptions(m);
  py::class_<PyLoader>(m, "_Loader", "Native side of unirecord.Loader (internal).")
      .def(py::init<std::vector<std::shared_ptr<PyDataset>>, py::dict>(), py::arg("datasets"), py::arg("options"))
      .def("next", &PyLoader::Next, py::arg("wait_stream") = 0)
      .def("set_epoch", &PyLoader::SetEpoch, py::arg("epoch"))
      .def_property_readonly("epoch", &PyLoader::Epoch)
      .def("state", &PyLoader::State)
      .def("restore", &PyLoader::Restore, py::arg("state"))
      .def("combine", &PyLoader::Combine, py::arg("states"))
      .def("coverage", &PyLoader::Coverage)
      .def("stats", &PyLoader::Stats)
      .def("reset_stats", &PyLoader::ResetStats)
      .def_property_readonly("batches_per_epoch", &PyLoader::BatchesPerEpoch)
      .def_property_readonly("threads", &PyLoader::Threads);
}

}  // namespace unirecord_py
