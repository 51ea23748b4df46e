"""Issue 45: video clips in the native Loader. A video folder of every codec
(H.264 with B-frames, HEVC, VP9, MPEG-4, AV1, 10-bit, variable frame rate,
rotation metadata; media_files.py makes them with ffmpeg) is converted with
unirecord.convert_videofolder; the Loader's clips are checked frame by frame
against PyAV (python3-av, the same FFmpeg): each frame, cropped and resized
as the batch's crop says, equals torchvision's resized_crop of PyAV's
to_ndarray(format="rgb24") frame of the same timestamp, byte for byte; with
the identity crop it is PyAV's frame itself. The frames decoded are at most
those from the keyframe before each clip's first frame to its last; clips
are a function of (seed, epoch, record). The device batches are
test_video_device.py's (no ffmpeg or PyAV needed there, for GPU machines)."""
import os

import numpy as np
import pytest

import unirecord
from unirecord import Clip, Fields, RandomResizedCrop

import media_files

torch = pytest.importorskip("torch")
av = pytest.importorskip("av")
F = pytest.importorskip("torchvision.transforms.functional")
from PIL import Image  # noqa: E402
from torchvision.transforms import InterpolationMode  # noqa: E402

# name -> make_video's arguments; 321x241 unless said.
VIDEOS = {
    "h264": dict(codec="h264"),
    "hevc": dict(codec="hevc"),
    "vp9": dict(codec="vp9"),
    "mpeg4": dict(codec="mpeg4"),
    "av1": dict(codec="av1"),
    "hevc10": dict(codec="hevc", pix_fmt="yuv420p10le"),
    "vfr": dict(codec="h264", vfr=True),
    "rotated": dict(codec="h264", rotate=90),
}
SQUARE = 64  # the identity-crop videos' size


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    """(dataset, {record id: source file}, src folder): the videos above in
    class folders "odd" (321x241) and "square" (64x64, each codec)."""
    root = tmp_path_factory.mktemp("videos")
    src = root / "src"
    for folder in ("odd", "square"):
        (src / folder).mkdir(parents=True)
    for name, kwargs in VIDEOS.items():
        media_files.make_video(str(src / "odd" / name), frames=40, **kwargs)
    for codec in media_files.VIDEO_CODECS:
        media_files.make_video(str(src / "square" / codec), codec=codec, width=SQUARE, height=SQUARE, frames=30)
    report = unirecord.convert_videofolder(src, root / "out", threads=2)
    assert report["rejected"] == 0, report["not_written"]
    dataset = unirecord.Dataset(root / "out" / "src")
    files = {i: os.path.join(src, dataset[i]["path"]) for i in range(len(dataset))}
    return dataset, files, src


def pyav_frames(path):
    """{pts: rgb24 frame} of the file's video stream, as PyAV decodes it."""
    with av.open(path) as container:
        return {f.pts: f.to_ndarray(format="rgb24") for f in container.decode(video=0)}


def rotation_of(path):
    """The video's make_video(rotate=) (its "rotate" tag, which PyAV 10 does
    not show), in degrees."""
    name = os.path.splitext(os.path.basename(path))[0]
    return VIDEOS.get(name, {}).get("rotate") or 0 if "/odd/" in path else 0


def clip_loader(dataset, size, clip, seed=0, **kwargs):
    kwargs.setdefault("transform", RandomResizedCrop(size))
    return unirecord.Loader(dataset, kwargs.pop("batch_size", 4), kwargs.pop("shuffle", True), seed=seed,
                            threads=kwargs.pop("threads", 2), fields=Fields(clip=clip, layout="NHWC"), **kwargs)


def reference_clip(frames, pts, crop, size, rotate):
    """PyAV's frames of `pts`, turned upright as ffmpeg's autorotate turns
    them (the tag's degrees counter-clockwise: `ffmpeg -i rotated.mp4`
    gives np.rot90 of PyAV's frame exactly), then torchvision's
    resized_crop of the batch's window and its flip."""
    out = []
    x, y, w, h, flip = (int(v) for v in crop)
    for p in pts:
        frame = np.rot90(frames[int(p)], k=rotate // 90) if rotate else frames[int(p)]
        image = F.resized_crop(Image.fromarray(np.ascontiguousarray(frame)), y, x, h, w, [size, size],
                               interpolation=InterpolationMode.BILINEAR)
        out.append(np.asarray(F.hflip(image) if flip else image))
    return np.stack(out)


def test_identity_crops_give_pyavs_frames_of_every_codec(videos):
    dataset, files, _ = videos
    square = [i for i in range(len(dataset)) if dataset[i]["path"].startswith("square/")]
    assert len(square) == len(media_files.VIDEO_CODECS)
    crop = RandomResizedCrop(SQUARE, scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=False)
    loader = clip_loader(dataset, SQUARE, Clip(frames=5, stride=3), transform=crop, sampler=unirecord.Sampler(
        subset=square))
    seen = 0
    for batch in loader:
        for k in range(len(batch["id"])):
            path = files[int(batch["id"][k])]
            frames = pyav_frames(path)
            assert batch["crop"][k].tolist() == [0, 0, SQUARE, SQUARE, 0]
            for t, p in enumerate(batch["frame_pts"][k].tolist()):
                assert np.array_equal(batch["video"][k, t].numpy(), frames[p]), (path, p)
            seen += 1
    assert seen == len(square)


def test_random_crops_of_odd_sizes_equal_torchvision_on_pyav_frames(videos):
    dataset, files, _ = videos
    odd = [i for i in range(len(dataset)) if dataset[i]["path"].startswith("odd/")]
    loader = clip_loader(dataset, 56, Clip(frames=4, stride=2), seed=3, sampler=unirecord.Sampler(subset=odd))
    for epoch in range(2):
        loader.set_epoch(epoch)
        for batch in loader:
            assert batch["video"].shape[1:] == (4, 56, 56, 3)
            for k in range(len(batch["id"])):
                path = files[int(batch["id"][k])]
                want = reference_clip(pyav_frames(path), batch["frame_pts"][k].tolist(), batch["crop"][k].tolist(),
                                      56, rotation_of(path))
                got = batch["video"][k].numpy()
                assert np.array_equal(got, want), (path, epoch, int(np.abs(got.astype(int) - want).max()))


def test_rotation_metadata_turns_frames_upright(videos):
    dataset, files, _ = videos
    i = next(i for i in range(len(dataset)) if dataset[i]["path"] == "odd/rotated.mp4")
    assert rotation_of(files[i]) == 90
    assert dataset[i]["video.rotation"] == 270  # counter-clockwise, as the media layer stores it
    loader = clip_loader(dataset, 32, Clip(frames=2), sampler=unirecord.Sampler(subset=[i]), batch_size=1)
    batch = next(iter(loader))
    # Planned on the upright frame: 241 wide, 321 high.
    x, y, w, h, _ = batch["crop"][0].tolist()
    assert x + w <= 241 and y + h <= 321
    unrotated = clip_loader(dataset, 32, Clip(frames=2, apply_rotation=False),
                            sampler=unirecord.Sampler(subset=[i]), batch_size=1)
    x, y, w, h, _ = next(iter(unrotated))["crop"][0].tolist()
    assert x + w <= 321 and y + h <= 241


def keyframe_to_last_bound(path, clip_pts):
    """Frames from the keyframe at or before the clip's first frame to its
    last frame, in presentation order: what decoding the clip needs."""
    with av.open(path) as container:
        packets = [(p.pts, p.is_keyframe) for p in container.demux(video=0) if p.pts is not None]
    pts = sorted(p for p, _ in packets)
    keyframes = sorted(p for p, key in packets if key)
    first, last = min(clip_pts), max(clip_pts)
    start = max(k for k in keyframes if k <= first)
    return sum(1 for p in pts if start <= p <= last), len(pts)


def test_only_the_frames_a_clip_needs_are_decoded(videos):
    dataset, files, _ = videos
    for i in range(len(dataset)):
        loader = clip_loader(dataset, 32, Clip(frames=3, stride=2), seed=i, batch_size=1, threads=1,
                             sampler=unirecord.Sampler(subset=[i]))
        batch = next(iter(loader))
        bound, total = keyframe_to_last_bound(files[i], batch["frame_pts"][0].tolist())
        decoded = loader.stats()["frames_decoded"]
        assert 3 <= decoded <= bound, (files[i], decoded, bound)
        assert decoded < total, files[i]  # 40 frames, GOPs of 12: never the whole video


def test_clips_depend_on_seed_epoch_and_record_only(videos):
    dataset, _, _ = videos
    runs = []
    for threads in (1, 3):
        loader = clip_loader(dataset, 24, Clip(frames=4, stride=2), seed=5, threads=threads, shuffle=False)
        loader.set_epoch(1)
        runs.append([(b["frame_pts"].clone(), b["video"].clone(), b["crop"].clone()) for b in loader])
    for a, b in zip(*runs):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    other = clip_loader(dataset, 24, Clip(frames=4, stride=2), seed=5, shuffle=False)
    other.set_epoch(2)
    starts = [b["frame_pts"].clone() for b in other]
    assert any(not torch.equal(x[0], y) for x, y in zip(runs[0], starts))


def test_centred_clips_and_several_clips_per_video(videos):
    dataset, files, _ = videos
    i = next(i for i in range(len(dataset)) if dataset[i]["path"] == "odd/h264.mp4")
    pts = sorted(pyav_frames(files[i]))  # 40 frames
    loader = clip_loader(dataset, 16, Clip(frames=4, stride=2, centre=True, clips_per_video=3), batch_size=1,
                         sampler=unirecord.Sampler(subset=[i]), transform=unirecord.CenterCrop(16, resize=20))
    batch = next(iter(loader))
    assert batch["video"].shape == (1, 3, 4, 16, 16, 3)
    # Spans of 7 frames: starts 0, 17 (16.5 rounded) and 33 of the 34 that fit.
    assert batch["frame_pts"][0].tolist() == [[pts[s + 2 * t] for t in range(4)] for s in (0, 17, 33)]


def test_variable_frame_rate_clips_by_time(videos):
    dataset, files, _ = videos
    i = next(i for i in range(len(dataset)) if dataset[i]["path"] == "odd/vfr.mp4")
    with av.open(files[i]) as container:
        stream = container.streams.video[0]
        base = float(stream.time_base)
        pts = sorted(f.pts for f in container.decode(video=0))
    loader = clip_loader(dataset, 16, Clip(frames=6, fps=12.0), batch_size=1, sampler=unirecord.Sampler(subset=[i]))
    for epoch in range(5):
        loader.set_epoch(epoch)
        got = next(iter(loader))["frame_pts"][0].tolist()
        assert all(p in pts for p in got)
        # Some time t0 while the first frame is shown has each frame i the
        # last one shown at t0 + i/12 s (found on a grid of 1/100 unit).
        first = pts.index(got[0])
        shown_until = pts[first + 1] if first + 1 < len(pts) else pts[first] + 1

        def shown_at(t):
            return max(p for p in pts if p <= t + 1e-9)

        starts = [pts[first] + k * (shown_until - pts[first]) / 100 for k in range(100)]
        assert any(all(shown_at(t0 + i / 12 / base) == p for i, p in enumerate(got)) for t0 in starts), got


def test_clip_options_are_checked_when_made():
    with pytest.raises(ValueError, match="frames"):
        Clip(frames=0)
    with pytest.raises(ValueError, match="clips_per_video"):
        Clip(clips_per_video=65)
    with pytest.raises(TypeError, match="stride"):
        Clip(stride="2")
    with pytest.raises(TypeError, match="Fields.clip"):
        Fields(clip=dict(frames=4))
    assert Clip() == Clip(frames=16, stride=2)


def test_a_clip_loader_refuses_a_field_that_is_not_video(videos):
    dataset, _, _ = videos
    with pytest.raises(ValueError, match="'path' is not a video field"):
        unirecord.Loader(dataset, 2, True, fields=Fields(clip=Clip(field="path")))
