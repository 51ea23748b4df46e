"""Video clips and audio windows on a device (cuda_check.DEVICES: the host
device in every build, CUDA in bench/run_gpu.sh): each clip, converted by the
images' kernel as one image of its frames stacked, makes [B, (K,) 3, T, H, W],
the CPU loader's NCHW clips normalised; the audio windows and the frames'
timestamps are the CPU loader's. Built from the golden media values in
tests/data (a 32x32 H.264 with B-frames, a 0.5 s FLAC), so a GPU machine
without ffmpeg or PyAV runs it too."""
import pathlib

import pytest

import unirecord
from unirecord import AudioClip, Clip, Fields, RandomResizedCrop

torch = pytest.importorskip("torch")
import cuda_check  # noqa: E402 (needs torch)

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "golden" / "v1_3-media"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("device") / "clips"
    clip = (GOLDEN / "clip.urmv").read_bytes()
    tone = (GOLDEN / "tone.urmv").read_bytes()
    with unirecord.Writer(out, {"clip": "video", "tone": "audio", "label": "int64"}) as w:
        for k in range(6):
            w.write({"clip": clip, "tone": tone, "label": k})
    return unirecord.Dataset(out)


@pytest.mark.parametrize("device", cuda_check.DEVICES)
@pytest.mark.parametrize("clips", [1, 2])
def test_device_batches_are_the_cpu_clips_normalised(dataset, device, clips):
    cuda_check.require(device)
    fields = Fields(clip=Clip(field="clip", frames=3, stride=2, clips_per_video=clips),
                    audio=AudioClip(field="tone", seconds=0.25, rate=8000))
    kw = dict(threads=2, transform=RandomResizedCrop(24), fields=fields, seed=2)
    cpu = unirecord.Loader(dataset, 4, True, **kw)
    dev = unirecord.Loader(dataset, 4, True, device=device, **kw)
    shape = (1, 1, 3, 1, 1, 1) if clips > 1 else (1, 3, 1, 1, 1)
    mean = torch.tensor(unirecord.IMAGENET_MEAN).view(shape) * 255
    std = torch.tensor(unirecord.IMAGENET_STD).view(shape) * 255
    batches = 0
    for epoch in range(2):
        cpu.set_epoch(epoch)
        dev.set_epoch(epoch)
        for a, b in zip(cpu, dev, strict=False):
            n = len(a["id"])
            assert a["clip"].shape == ((n, 2, 3, 3, 24, 24) if clips > 1 else (n, 3, 3, 24, 24))
            assert a["clip"].dtype == torch.uint8
            assert b["clip"].shape == a["clip"].shape and b["clip"].dtype == torch.float32
            assert torch.allclose(b["clip"].cpu(), (a["clip"].float() - mean) / std, atol=1e-5)
            for name in ("id", "frame_pts", "tone", "tone_lengths"):
                assert torch.equal(a[name], b[name].cpu()), name
            batches += 1
    assert batches == 2 * 2  # 6 records, batches of 4, two epochs: none lost to zip
