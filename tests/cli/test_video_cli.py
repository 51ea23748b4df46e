"""Issue 45: urec convert videofolder / audiofolder: the records, the report
line, the rejects report naming each unusable file, --strict, and the
parameter fields urec query sees."""
import os
import subprocess
import sys

import pytest

from conftest import UREC, require_urec

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "tests"))
import media_files  # noqa: E402


@pytest.fixture(autouse=True)
def _urec():
    require_urec()


def urec(*args, check=True):
    return subprocess.run([UREC, *map(str, args)], capture_output=True, text=True, check=check)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    src = tmp_path_factory.mktemp("ucf") / "ucf"
    for cls in ("ApplyEyeMakeup", "Archery"):
        (src / cls).mkdir(parents=True)
    media_files.make_video(str(src / "ApplyEyeMakeup" / "v1"), "h264", frames=24, width=96, height=64)
    media_files.make_video(str(src / "Archery" / "v2"), "vp9", frames=48, width=96, height=64)
    good = media_files.make_video(str(src / "Archery" / "v3"), "h264", frames=24, width=96, height=64)
    data = open(good, "rb").read()
    (src / "Archery" / "cut.mp4").write_bytes(data[: len(data) // 4])
    return src


def test_convert_videofolder_writes_records_and_names_rejects(folder, tmp_path):
    r = urec("convert", "videofolder", folder, tmp_path, "--threads", "2")
    assert "3 written, 1 rejected, 0 skipped" in r.stdout, r.stdout
    rejects = [p for p in os.listdir(tmp_path) if "rejects" in p]
    rows = open(tmp_path / rejects[0]).read().splitlines()
    assert rows[0] == "path\treason" and rows[1].startswith("Archery/cut.mp4\t") and len(rows) == 2
    q = urec("query", tmp_path / "ucf", "video.frames >= 40")
    assert "1" in q.stdout  # v2 alone has 48 frames


def test_strict_fails_naming_the_file(folder, tmp_path):
    r = urec("convert", "videofolder", folder, tmp_path, "--strict", check=False)
    assert r.returncode != 0 and "Archery/cut.mp4" in r.stderr


def test_convert_audiofolder(tmp_path):
    src = tmp_path / "speech" / "spk1"
    src.mkdir(parents=True)
    media_files.make_audio(str(src / "a"), "flac", seconds=0.5)
    media_files.make_audio(str(src / "b"), "mp3", seconds=0.5)
    r = urec("convert", "audiofolder", tmp_path / "speech", tmp_path / "out")
    assert "2 written, 0 rejected" in r.stdout, r.stdout


def test_bench_measures_clips(folder, tmp_path):
    urec("convert", "videofolder", folder, tmp_path)
    import json

    r = urec("bench", tmp_path / "ucf", "--clip-frames", "4", "--clip-stride", "2", "--size", "32", "--batch", "2",
             "--threads", "1", "--json")
    out = json.loads(r.stdout)
    assert out["samples"] == 3 and out["images_per_s"] > 0
    assert out["stages"]["frames_decoded"] >= 3 * 4
    text = urec("bench", tmp_path / "ucf", "--clip-frames", "4", "--size", "32", "--batch", "2").stdout
    assert "clips/s" in text and "frames decoded" in text


def test_show_draws_each_clip_as_a_strip_of_its_frames(folder, tmp_path):
    from PIL import Image

    urec("convert", "videofolder", folder, tmp_path)
    r = urec("show", tmp_path / "ucf", "--clip-frames", "5", "--clip-stride", "3", "--size", "40",
             "--transform", "train", "--seed", "7", "-o", tmp_path / "strips.png")
    assert "3 clips of 5 frames" in r.stdout, r.stdout
    sheet = Image.open(tmp_path / "strips.png")
    assert sheet.size == (4 + 5 * 44, 4 + 3 * (40 + 14 + 4))
    rows = open(tmp_path / "strips.tsv").read().splitlines()
    assert rows[0].split("\t")[:4] == ["row", "id", "label", "frame_pts"] and len(rows) == 4
    pts = [int(p) for p in rows[1].split("\t")[3].split(",")]
    assert len(pts) == 5 and pts == sorted(pts)
