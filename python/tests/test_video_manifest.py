"""Issue 45: video and audio columns in JSON Lines / CSV manifests, with
optional start/end seconds per row: several records of one long file, each
keeping only the packets its range needs (from the keyframe at or before
start to the last frame presented at or before end), with the file's own
timestamps; rows whose range the stream lacks are rejects rows."""
import json

import numpy as np
import pytest

import unirecord

import media_files

av = pytest.importorskip("av")


def schema_file(path, fields):
    path.write_text(json.dumps({"fields": fields}))
    return path


@pytest.fixture(scope="module")
def long_video(tmp_path_factory):
    root = tmp_path_factory.mktemp("manifest")
    path = media_files.make_video(str(root / "long"), "h264", frames=96, width=64, height=48)  # 4 s, GOPs of 12
    with av.open(path) as c:
        stream = c.streams.video[0]
        base = float(stream.time_base)
        packets = sorted((p.pts, p.is_keyframe) for p in c.demux(stream) if p.pts is not None)
    with av.open(path) as c:
        frames = {f.pts: f.to_ndarray(format="rgb24") for f in c.decode(video=0)}
    return root, path, base, packets, frames


def test_rows_of_one_long_video_keep_the_packets_of_their_range(long_video):
    root, path, base, packets, frames = long_video
    ranges = [(0.0, 1.0), (1.6, 2.4), (3.1, 3.9)]
    lines = [{"clip": "long.mp4", "start": s, "end": e, "label": k} for k, (s, e) in enumerate(ranges)]
    lines.append({"clip": "long.mp4", "start": 9.0, "end": 10.0, "label": 9})  # past the stream's end
    (root / "clips.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    schema = schema_file(root / "schema.json", [{"name": "clip", "type": "video"}, {"name": "start", "type": "float64"},
                                                {"name": "end", "type": "float64"}, {"name": "label", "type": "int64"}])
    report = unirecord.convert_jsonl(root / "clips.jsonl", root / "out", schema=schema)
    assert report["written"] == 3 and report["rejected"] == 1
    assert "line 4" in str(report["not_written"]) and "no packet" in str(report["not_written"])
    ds = unirecord.Dataset(root / "out" / "clips")
    keyframes = [p for p, key in packets if key]
    for k, (s, e) in enumerate(ranges):
        record = ds[k]
        assert (record["start"], record["end"], record["label"], record["path"]) == (s, e, k, "long.mp4")
        stream = record["clip"]
        kept = list(stream.pts)
        wanted = [p for p, _ in packets if s / base - 1e-6 <= p <= e / base + 1e-6]
        assert set(wanted) <= set(kept), k
        assert kept[0] == max(p for p in keyframes if p <= s / base + 1e-6), k  # from the keyframe before start
        assert len(kept) < len(packets)
        got = stream.frames_at([kept.index(p) for p in wanted])
        for i, p in enumerate(wanted):
            assert np.array_equal(got[i], frames[p]), (k, p)


def test_an_audio_column_in_a_csv_manifest_with_start(tmp_path):
    media_files.make_audio(str(tmp_path / "talk"), "flac", seconds=3.0, rate=16000, channels=1)
    (tmp_path / "m.csv").write_text("audio,start,text\ntalk.flac,0.5,hello\ntalk.flac,2.0,world\n")
    schema = schema_file(tmp_path / "s.json", [{"name": "audio", "type": "audio"}, {"name": "start", "type": "float32"},
                                               {"name": "text", "type": "string"}])
    report = unirecord.convert_csv(tmp_path / "m.csv", tmp_path / "out", schema=schema)
    assert report["written"] == 2
    ds = unirecord.Dataset(tmp_path / "out" / "m")
    # Kept from the packet holding start - 0.2 s (the pre-roll; a FLAC packet
    # here is 0.256 s) to the end of the 3 s stream.
    assert 3.0 - 0.5 < ds[0]["audio.duration"] <= 3.0 - 0.5 + 0.2 + 0.256
    assert ds[1]["audio.duration"] < ds[0]["audio.duration"] and ds[1]["text"] == "world"


def test_schema_files_with_media_columns_are_checked(tmp_path):
    (tmp_path / "m.jsonl").write_text("")
    bad = {
        "two files": [{"name": "a", "type": "video"}, {"name": "b", "type": "image"}],
        "path taken": [{"name": "a", "type": "audio"}, {"name": "path", "type": "string"}],
        "start not numeric": [{"name": "a", "type": "video"}, {"name": "start", "type": "string"}],
    }
    for why, fields in bad.items():
        schema = schema_file(tmp_path / "s.json", fields)
        with pytest.raises(ValueError, match="schema file"):
            unirecord.convert_jsonl(tmp_path / "m.jsonl", tmp_path / "out", schema=schema)
