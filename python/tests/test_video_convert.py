"""Issue 45: unirecord.convert_videofolder / convert_audiofolder (urec convert
videofolder / audiofolder). Class folders as Kinetics, UCF-101 and
LibriSpeech ship them; each record keeps its stream's packets (not the
container), label and path; every file that cannot be used is a rejects row
naming it and the reason; the bytes do not depend on the thread count."""
import os

import pytest

import unirecord

import media_files


@pytest.fixture(scope="module")
def video_folder(tmp_path_factory):
    """Classes "jump" and "run" of good videos, plus one file per bad case."""
    src = tmp_path_factory.mktemp("kinetics") / "train"
    for cls in ("jump", "run"):
        (src / cls).mkdir(parents=True)
    media_files.make_video(str(src / "jump" / "a"), "h264", frames=24)
    media_files.make_video(str(src / "jump" / "b"), "vp9", frames=24)
    media_files.make_video(str(src / "run" / "c"), "mpeg4", frames=24)
    good = media_files.make_video(str(src / "run" / "d"), "h264", frames=24, audio="aac")
    data = open(good, "rb").read()
    bad = {
        "truncated.mp4": data[: len(data) // 3],
        "corrupt.mp4": bytes((b * 7 + 13) % 256 for b in data[:4000]),
        "empty.mp4": b"",
        "text.avi": b"this is not a video\n" * 20,
    }
    for name, content in bad.items():
        (src / "run" / name).write_bytes(content)
    os.replace(media_files.make_audio(str(src / "run" / "sound"), "aac", seconds=1.0), src / "run" / "sound.mp4")
    (src / "run" / "notes.txt").write_text("not a video extension")
    return src


def test_videofolder_records_hold_the_video_label_and_path(video_folder, tmp_path):
    report = unirecord.convert_videofolder(video_folder, tmp_path, threads=2)
    assert report["classes"] == ["jump", "run"]
    assert report["written"] == 4 and report["skipped"] == 1
    ds = unirecord.Dataset(tmp_path / "train")
    names = [f.name for f in ds.schema]
    assert names[:1] == ["video"] and {"label", "path", "video.width", "video.duration"} <= set(names)
    rows = [(ds[i]["path"], ds[i]["label"]) for i in range(len(ds))]
    assert rows == [("jump/a.mp4", 0), ("jump/b.webm", 0), ("run/c.avi", 1), ("run/d.mp4", 1)]
    assert ds[0]["video.width"] == 321 and ds[0]["video.height"] == 241


def test_each_unusable_file_is_a_rejects_row_naming_it_and_the_reason(video_folder, tmp_path):
    report = unirecord.convert_videofolder(video_folder, tmp_path, threads=2)
    reasons = dict((row[0], row[1]) if isinstance(row, (list, tuple)) else (row["path"], row["reason"])
                   for row in report["not_written"])
    assert set(reasons) == {"run/truncated.mp4", "run/corrupt.mp4", "run/empty.mp4", "run/text.avi",
                            "run/sound.mp4", "run/notes.txt"}
    assert report["rejected"] == 5
    assert "video" in reasons["run/sound.mp4"]  # no video stream
    assert reasons["run/notes.txt"].startswith("skipped: not a video extension")
    for name in ("run/truncated.mp4", "run/corrupt.mp4", "run/empty.mp4", "run/text.avi"):
        assert reasons[name], name
    tsv = open(report["rejects_path"]).read().splitlines()
    assert tsv[0] == "path\treason" and len(tsv) == 7


def test_strict_stops_at_the_first_rejected_file(video_folder, tmp_path):
    with pytest.raises(unirecord.CorruptRecordError, match="run/corrupt.mp4"):
        unirecord.convert_videofolder(video_folder, tmp_path, strict=True)


def test_the_bytes_do_not_depend_on_threads(video_folder, tmp_path):
    outs = []
    for threads in (1, 3):
        out = tmp_path / str(threads)
        unirecord.convert_videofolder(video_folder, out, threads=threads, num_shards=2, sync=False)
        outs.append({p.name: p.read_bytes() for p in sorted((out).iterdir()) if not p.name.endswith(".lock")})
    assert outs[0] == outs[1]


def test_audiofolder_reads_librispeech_transcripts(tmp_path):
    src = tmp_path / "LibriSpeech"
    chapter = src / "19" / "198"
    chapter.mkdir(parents=True)
    for k, codec in enumerate(("flac", "opus", "wav")):
        os.replace(media_files.make_audio(str(chapter / f"x{k}"), codec, seconds=0.5),
                   chapter / f"19-198-000{k}.{media_files.AUDIO_CODECS[codec][0][1:]}")
    (chapter / "19-198.trans.txt").write_text("19-198-0000 NORTHANGER ABBEY\n19-198-0001 THIS LITTLE WORK\n")
    report = unirecord.convert_audiofolder(src, tmp_path / "out", threads=2)
    assert report["written"] == 3 and report["rejected"] == 0
    ds = unirecord.Dataset(tmp_path / "out" / "LibriSpeech")
    got = {ds[i]["path"]: ds[i]["transcript"] for i in range(len(ds))}
    assert got == {"19/198/19-198-0000.flac": "NORTHANGER ABBEY", "19/198/19-198-0001.opus": "THIS LITTLE WORK",
                   "19/198/19-198-0002.wav": ""}
    assert ds[0]["audio.sample_rate"] == 44100
    skipped = [row for row in report["not_written"] if "trans.txt" in str(row)]
    assert len(skipped) == 1 and "transcript" in str(skipped[0])


def test_a_folder_without_videos_is_refused(tmp_path):
    (tmp_path / "src" / "cls").mkdir(parents=True)
    (tmp_path / "src" / "cls" / "x.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(ValueError, match="no video files"):
        unirecord.convert_videofolder(tmp_path / "src", tmp_path / "out")
