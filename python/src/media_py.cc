// Video and audio field values in Python: Dataset[i]["video"] is a
// VideoStream (frames_at, frames_in), Dataset[i]["audio"] an AudioStream
// (samples), decoding through unirecord/media.h.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "common.h"
#include "media_py.h"
#include "unirecord/media.h"

namespace unirecord_py {

using unirecord::Blob;
using unirecord::MediaKind;
using unirecord::MediaValueView;
using unirecord::Status;

namespace {

// A media value read from a dataset: its bytes (kept alive), parsed.
struct StoredMedia {
  std::shared_ptr<unirecord::Dataset> dataset;  // keeps the mapping of `blob` open
  Blob blob;
  MediaValueView view;
  std::string what;  // "record 3 field 'video'"
};

struct PyVideoStream {
  StoredMedia media;
  unirecord::media::VideoDecodeOptions options;
  unirecord::media::VideoDecoder decoder;
  int64_t decoded_before = 0;  // by the decoders replaced when `rotate` changed
};

struct PyAudioStream {
  StoredMedia media;
  unirecord::media::AudioDecoder decoder;
};

py::dict Info(const MediaValueView& v) {
  const unirecord::MediaParams& m = v.params;
  py::dict info;
  info["kind"] = unirecord::MediaKindName(m.kind);
  info["codec"] = m.codec;
  info["time_base"] = py::make_tuple(m.time_base_num, m.time_base_den);
  info["duration"] = v.seconds();
  info["start_pts"] = m.start_pts;
  info["packets"] = v.packets.size();
  if (m.kind == MediaKind::kVideo) {
    info["width"] = m.width;
    info["height"] = m.height;
    info["rotation"] = m.rotation;
    info["pixel_format"] = m.pixel_format;
    info["frames"] = v.frames();
    info["fps"] = v.average_fps();
  } else {
    info["sample_rate"] = m.sample_rate;
    info["channels"] = m.channels;
    info["channel_layout"] = m.channel_layout;
    info["sample_format"] = m.sample_format;
  }
  return info;
}

// Decoded frames as a uint8 numpy array [T, H, W, 3] (copied out of `frames`).
py::array FramesArray(unirecord::media::VideoFrames&& frames) {
  py::array_t<uint8_t> out({static_cast<py::ssize_t>(frames.count), static_cast<py::ssize_t>(frames.height),
                            static_cast<py::ssize_t>(frames.width), py::ssize_t{3}});
  if (!frames.rgb.empty()) std::memcpy(out.mutable_data(), frames.rgb.data(), frames.rgb.size());
  return std::move(out);
}

void SetRotation(PyVideoStream& s, bool rotate) {
  if (s.options.apply_rotation == rotate) return;
  s.decoded_before += s.decoder.frames_decoded();
  s.options.apply_rotation = rotate;
  s.decoder = unirecord::media::VideoDecoder(s.options);
}

py::array FramesAt(PyVideoStream& s, const std::vector<int64_t>& indices, bool rotate) {
  SetRotation(s, rotate);
  unirecord::Result<unirecord::media::VideoFrames> frames = Status::Internal("not decoded");
  {
    py::gil_scoped_release nogil;
    frames = s.decoder.FramesAt(s.media.view, indices, s.media.what);
  }
  return FramesArray(Unwrap(std::move(frames)));
}

py::array FramesIn(PyVideoStream& s, double start_s, double end_s, bool rotate) {
  SetRotation(s, rotate);
  unirecord::Result<unirecord::media::VideoFrames> frames = Status::Internal("not decoded");
  {
    py::gil_scoped_release nogil;
    frames = s.decoder.FramesIn(s.media.view, start_s, end_s, s.media.what);
  }
  return FramesArray(Unwrap(std::move(frames)));
}

py::array Samples(PyAudioStream& s, double start_s, double seconds, const py::object& rate,
                  const py::object& channels, const std::string& dtype) {
  unirecord::media::AudioWindowOptions options;
  if (!rate.is_none()) options.rate = IntArgAs<int32_t>("rate", rate, 1, 768000);
  if (!channels.is_none()) options.channels = IntArgAs<int32_t>("channels", channels, 1, 64);
  if (dtype != "float32" && dtype != "int16") {
    throw py::value_error("dtype must be 'float32' or 'int16', not '" + dtype + "'");
  }
  options.type = dtype == "int16" ? unirecord::media::SampleType::kInt16 : unirecord::media::SampleType::kFloat32;
  unirecord::Result<unirecord::media::AudioSamples> window = Status::Internal("not decoded");
  {
    py::gil_scoped_release nogil;
    window = s.decoder.Window(s.media.view, start_s, seconds, options, s.media.what);
  }
  unirecord::media::AudioSamples samples = Unwrap(std::move(window));
  py::array out(py::dtype(dtype), std::vector<py::ssize_t>{samples.channels, static_cast<py::ssize_t>(samples.frames)});
  if (!samples.data.empty()) std::memcpy(out.mutable_data(), samples.data.data(), samples.data.size());
  return out;
}

py::tuple RemuxTuple(const StoredMedia& media) {
  unirecord::Result<unirecord::media::RemuxedFile> file = Status::Internal("not remuxed");
  {
    py::gil_scoped_release nogil;
    file = unirecord::media::Remux(media.view, media.what);
  }
  unirecord::media::RemuxedFile f = Unwrap(std::move(file));
  return py::make_tuple(py::bytes(f.bytes), f.extension);
}

}  // namespace

py::object MediaValue(const std::shared_ptr<unirecord::Dataset>& dataset, uint64_t id, size_t field) {
  StoredMedia media;
  media.dataset = dataset;
  const unirecord::Field& f = dataset->schema().field(field);
  media.what = "record " + std::to_string(id) + " field '" + f.name + "'";
  {
    unirecord::Result<Blob> blob = Status::Internal("not read");
    {
      py::gil_scoped_release nogil;
      blob = dataset->GetBlob(id, field);
    }
    media.blob = Unwrap(std::move(blob));
  }
  const Status parsed = unirecord::ParseMediaValue(media.blob.data(), media.what, &media.view);
  if (!parsed.ok()) RaiseStatus(parsed);
  if (f.type == unirecord::FieldType::kVideo) {
    auto stream = std::make_unique<PyVideoStream>();
    stream->media = std::move(media);
    return py::cast(std::move(stream));
  }
  auto stream = std::make_unique<PyAudioStream>();
  stream->media = std::move(media);
  return py::cast(std::move(stream));
}

void RegisterMedia(py::module_& m) {
  m.def(
      "demux",
      [](const py::object& source, const std::string& kind, int stream) {
        if (kind != "video" && kind != "audio") throw py::value_error("kind must be 'video' or 'audio', not '" + kind + "'");
        unirecord::media::DemuxOptions options;
        options.kind = kind == "video" ? MediaKind::kVideo : MediaKind::kAudio;
        options.stream = stream;
        unirecord::Result<std::string> stored = Status::Internal("not demuxed");
        if (PyObject_CheckBuffer(source.ptr())) {
          py::buffer_info buf = py::reinterpret_borrow<py::buffer>(source).request();
          const std::string_view bytes(static_cast<const char*>(buf.ptr), static_cast<size_t>(buf.size * buf.itemsize));
          py::gil_scoped_release nogil;
          stored = unirecord::media::Demux(bytes, options);
        } else {
          const std::string path = PathArg("source", source);
          py::gil_scoped_release nogil;
          stored = unirecord::media::DemuxFile(path, options);
        }
        return py::bytes(Unwrap(std::move(stored)));
      },
      py::arg("source"), py::arg("kind") = "video", py::arg("stream") = -1,
      "The media value (format/SPEC.md 6.4) of one stream of a container: source is its bytes or a path; "
      "stream -1 the best stream of kind, else the n-th. Writer.write takes the result for a field of that "
      "kind as it is (no second demux).");
  py::class_<PyVideoStream>(m, "VideoStream",
                            "A video field's value: its packets and parameters, decoded on demand "
                            "(docs/video-audio.md).")
      .def_property_readonly("info", [](const PyVideoStream& s) { return Info(s.media.view); },
                             "The stream's parameters: codec, width, height, rotation, pixel_format, frames, "
                             "fps, duration (s), time_base, start_pts, packets.")
      .def_property_readonly("pts", [](const PyVideoStream& s) { return s.media.view.PresentationTimestamps(); },
                             "The frames' presentation timestamps (time-base units), in presentation order.")
      .def_property_readonly(
          "frames_decoded", [](const PyVideoStream& s) { return s.decoded_before + s.decoder.frames_decoded(); },
          "Frames decoded so far: those asked for and those decoded to reach them.")
      .def("frames_at", &FramesAt, py::arg("indices"), py::arg("rotate") = false,
           "Frames by index in presentation order as uint8 [T, H, W, 3] RGB (PyAV's "
           "to_ndarray(format='rgb24')), decoded from the keyframe before the first; rotate: turn them "
           "upright by the stream's rotation.")
      .def("frames_in", &FramesIn, py::arg("start_s"), py::arg("end_s"), py::arg("rotate") = false,
           "Every frame presented in [start_s, end_s) seconds from the stream's start, as frames_at.")
      .def("remux", [](const PyVideoStream& s) { return RemuxTuple(s.media); },
           "A playable file of the packets: (bytes, extension such as '.mp4').")
      .def("__len__", [](const PyVideoStream& s) { return s.media.view.frames(); })
      .def("__repr__", [](const PyVideoStream& s) {
        const unirecord::MediaParams& p = s.media.view.params;
        return "<VideoStream " + p.codec + " " + std::to_string(p.width) + "x" + std::to_string(p.height) + ", " +
               std::to_string(s.media.view.frames()) + " frames, " + std::to_string(s.media.view.seconds()) + " s>";
      });
  py::class_<PyAudioStream>(m, "AudioStream",
                            "An audio field's value: its packets and parameters, decoded on demand "
                            "(docs/video-audio.md).")
      .def_property_readonly("info", [](const PyAudioStream& s) { return Info(s.media.view); },
                             "The stream's parameters: codec, sample_rate, channels, channel_layout, "
                             "sample_format, duration (s), time_base, start_pts, packets.")
      .def("samples", &Samples, py::arg("start_s"), py::arg("seconds"), py::arg("rate") = py::none(),
           py::arg("channels") = py::none(), py::arg("dtype") = "float32",
           "The window [start_s, start_s + seconds) as [channels, round(seconds * rate)] samples, resampled "
           "(libswresample) to rate and channels (None: the stream's); past the stream's end: zeros.")
      .def("remux", [](const PyAudioStream& s) { return RemuxTuple(s.media); },
           "A playable file of the packets: (bytes, extension such as '.flac').")
      .def("__repr__", [](const PyAudioStream& s) {
        const unirecord::MediaParams& p = s.media.view.params;
        return "<AudioStream " + p.codec + " " + std::to_string(p.sample_rate) + " Hz, " +
               std::to_string(p.channels) + " channels, " + std::to_string(s.media.view.seconds()) + " s>";
      });
}

}  // namespace unirecord_py
