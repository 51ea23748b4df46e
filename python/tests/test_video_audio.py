"""Issue 45: audio windows in the native Loader (Fields(audio=AudioClip)).
Audio folders of AAC, Opus, FLAC, MP3 and WAV (media_files.py) converted
with unirecord.convert_audiofolder; each batched window equals the media
layer's decode of the same window (AudioStream.samples: FFmpeg's decoder and
libswresample, checked against FFmpeg by python/tests/test_media.py), with
lengths for windows past the end; a video's clip gets the audio window that
starts at its first frame."""
import os

import numpy as np
import pytest

import unirecord
from unirecord import AudioClip, Clip, Fields, RandomResizedCrop

import media_files

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def sounds(tmp_path_factory):
    root = tmp_path_factory.mktemp("sounds")
    for codec in media_files.AUDIO_CODECS:
        (root / "src" / codec).mkdir(parents=True)
        for k, seconds in enumerate((3.0, 1.2)):  # the second one shorter than a window
            media_files.make_audio(str(root / "src" / codec / f"s{k}"), codec, seconds=seconds,
                                   rate=44100 if k else 48000, channels=2 - k)
    report = unirecord.convert_audiofolder(root / "src", root / "out", threads=2)
    assert report["rejected"] == 0, report["not_written"]
    return unirecord.Dataset(root / "out" / "src")


def loader(dataset, audio, **kwargs):
    return unirecord.Loader(dataset, kwargs.pop("batch_size", 4), kwargs.pop("shuffle", False), threads=2,
                            fields=Fields(audio=audio, **kwargs.pop("fields", {})), **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_centred_windows_equal_the_media_layers_decode(sounds, dtype):
    audio = AudioClip(seconds=2.0, rate=16000, channels=1, dtype=dtype, centre=True)
    seen = 0
    for batch in loader(sounds, audio):
        assert batch["audio"].shape[1:] == (1, 32000) and str(batch["audio"].dtype) == "torch." + dtype
        for k, record in enumerate(batch["id"].tolist()):
            stream = sounds[record]["audio"]
            start = max(0.0, (stream.info["duration"] - 2.0) / 2)
            want = stream.samples(start, 2.0, rate=16000, channels=1, dtype=dtype)
            assert np.array_equal(batch["audio"][k].numpy(), want), sounds[record]["path"]
            valid = batch["audio_lengths"][k].item()
            if stream.info["duration"] >= 2.0:
                assert valid == 32000
            else:  # 1.2 s: the rest is zeros
                assert 18000 < valid < 20000 and not batch["audio"][k, :, valid:].any()
            seen += 1
    assert seen == len(sounds)


def test_random_windows_are_keyed_by_seed_epoch_and_record(sounds):
    audio = AudioClip(seconds=1.0, rate=8000, channels=2)
    def epoch_of(seed, epoch):
        l = loader(sounds, audio, seed=seed, shuffle=True)
        l.set_epoch(epoch)
        return {int(i): w.clone() for b in l for i, w in zip(b["id"], b["audio"])}
    a, b, c = epoch_of(1, 0), epoch_of(1, 0), epoch_of(1, 1)
    assert all(torch.equal(a[i], b[i]) for i in a)
    assert any(not torch.equal(a[i], c[i]) for i in a)
    assert next(iter(a.values())).shape == (2, 8000)


def test_a_loader_naming_an_audio_field_the_dataset_lacks_is_refused(tmp_path):
    (tmp_path / "src" / "a").mkdir(parents=True)
    media_files.make_video(str(tmp_path / "src" / "a" / "v"), "h264", frames=24, audio="aac")
    unirecord.convert_videofolder(tmp_path / "src", tmp_path / "v")
    dataset = unirecord.Dataset(tmp_path / "v" / "src")
    assert "audio" not in [f.name for f in dataset.schema]  # a video folder keeps the video stream only
    with pytest.raises((KeyError, ValueError), match="audio"):
        unirecord.Loader(dataset, 1, True, fields=Fields(clip=Clip(frames=4), audio=AudioClip()))


def test_video_and_audio_fields_of_one_record(tmp_path):
    """A dataset written with both streams of one file (Writer, the media
    layer's path input): each clip's window starts at its clip_start."""
    path = media_files.make_video(str(tmp_path / "v"), "h264", frames=72, audio="aac")
    schema = [unirecord.Field("video", "video"), unirecord.Field("audio", "audio")]
    with unirecord.Writer(tmp_path / "out", schema) as w:
        for _ in range(3):
            w.write({"video": open(path, "rb").read(), "audio": open(path, "rb").read()})
    dataset = unirecord.Dataset(tmp_path / "out")
    l = unirecord.Loader(dataset, 3, True, seed=4, threads=2, transform=RandomResizedCrop(32),
                         fields=Fields(clip=Clip(frames=4, stride=3, clips_per_video=2),
                                       audio=AudioClip(seconds=0.5, rate=16000)))
    batch = next(iter(l))
    assert batch["audio"].shape == (3, 2, 1, 8000) and batch["audio_lengths"].shape == (3, 2)
    for k in range(3):
        for c in range(2):
            # A fresh AudioStream a window (one reused carries its resampler's history on).
            stream = dataset[int(batch["id"][k])]["audio"]
            start = float(batch["clip_start"][k, c])
            want = stream.samples(start, 0.5, rate=16000, channels=1)
            assert np.array_equal(batch["audio"][k, c].numpy(), want), (k, c, start)


def test_audio_options_are_checked_when_made():
    with pytest.raises(ValueError, match="seconds"):
        AudioClip(seconds=0)
    with pytest.raises(ValueError, match="dtype"):
        AudioClip(dtype="float64")
    with pytest.raises(ValueError, match="rate"):
        AudioClip(rate=10)
