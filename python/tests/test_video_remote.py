"""Issue 45, item 5: video clips and audio windows of a remote dataset equal
the local ones. A dataset of videos with a sound track (H.264 with B-frames,
VP9, MPEG-4; both streams of each file, Writer's path input) and a class
folder converted by convert_videofolder are served by nginx on 127.0.0.1
(tests/remote_servers.py); the Loader's clip and audio batches over the URL,
and the notebook decoder's frames (Dataset[i]["video"].frames_at), equal
those of the local copy byte for byte, and the remote files land in the
cache verified (docs/video-audio.md, "Remote datasets")."""
import os
import pathlib
import sys

import numpy as np
import pytest

import unirecord
from unirecord import AudioClip, Clip, Fields, RandomResizedCrop

import media_files

torch = pytest.importorskip("torch")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests"))
from remote_servers import Nginx  # noqa: E402

for _name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
    os.environ.pop(_name, None)  # requests to 127.0.0.1 must not leave through a proxy

CODECS = ("h264", "vp9", "mpeg4")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """www/av (video + audio fields, 2 shards), www/folder (convert_videofolder's
    class folders), and nginx serving www/."""
    www = tmp_path_factory.mktemp("www")
    src = tmp_path_factory.mktemp("src")
    schema = [unirecord.Field("video", "video"), unirecord.Field("audio", "audio"), unirecord.Field("label", "int64")]
    with unirecord.Writer(www / "av", schema, num_shards=2) as w:
        for k, codec in enumerate(CODECS * 2):
            path = media_files.make_video(str(src / f"{codec}{k}"), codec, width=64, height=48, frames=40,
                                          audio="aac" if codec != "vp9" else "opus")
            w.write({"video": pathlib.Path(path), "audio": pathlib.Path(path), "label": k})
    for codec in CODECS:
        (src / "folder" / codec).mkdir(parents=True)
        media_files.make_video(str(src / "folder" / codec / "a"), codec, width=48, height=32, frames=30)
    report = unirecord.convert_videofolder(src / "folder", www / "folder", threads=2)
    assert report["rejected"] == 0, report["not_written"]
    nginx = Nginx(www)
    yield {"www": www, "url": nginx.url}
    nginx.stop()


def batches(location, epochs=2, **kwargs):
    loader = unirecord.Loader(location, 2, True, seed=11, threads=2, transform=RandomResizedCrop(24),
                              fields=Fields(clip=Clip(frames=4, stride=2, clips_per_video=2),
                                            audio=AudioClip(seconds=0.4, rate=8000)), **kwargs)
    out = []
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for batch in loader:
            out.append({name: value.numpy().copy() for name, value in batch.items()
                        if isinstance(value, torch.Tensor)})
    return out


def test_remote_clips_and_windows_equal_the_local_ones(served, tmp_path):
    local = batches(served["www"] / "av")
    remote = batches(served["url"] + "/av/", remote=unirecord.Remote(cache_dir=tmp_path / "cache"))
    assert len(remote) == len(local) == 2 * 3
    for a, b in zip(local, remote):
        assert a.keys() == b.keys() and {"video", "audio", "audio_lengths", "frame_pts", "id"} <= a.keys()
        for name in a:
            assert np.array_equal(a[name], b[name]), name
    # What a remote read downloads today: whole shard files, each verified
    # and kept in the cache byte for byte (docs/video-audio.md).
    cached = {p.name: p for p in (tmp_path / "cache").rglob("*.urec") if p.parent.name == "data"}
    originals = {p.name: p for p in (served["www"] / "av").glob("*.urec")}
    assert sorted(cached) == sorted(originals)
    for name, path in originals.items():
        assert cached[name].read_bytes() == path.read_bytes(), name


def test_remote_frames_at_equal_the_local_ones(served, tmp_path):
    local = unirecord.Dataset(served["www"] / "folder" / "folder")
    remote = unirecord.Dataset(served["url"] + "/folder/", cache_dir=tmp_path / "cache")
    assert len(remote) == len(local) == len(CODECS)
    for i in range(len(local)):
        a, b = local[i]["video"], remote[i]["video"]
        assert a.pts == b.pts and a.info == b.info
        wanted = [0, len(a.pts) // 2, len(a.pts) - 1]
        assert np.array_equal(a.frames_at(wanted), b.frames_at(wanted)), local[i]["path"]
        assert remote[i]["path"] == local[i]["path"] and remote[i]["label"] == local[i]["label"]
