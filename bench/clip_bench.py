#!/usr/bin/env python3
"""Video clips and audio windows: the native Loader against what a user
writes by hand, in the same run (issue 45's goals; bench/README.md, "Video
and audio clips").

  PYTHONPATH=build/python /usr/bin/python3 bench/clip_bench.py [--videos 12] [--rounds 3] \
      [--threads-list 1,2] [--json bench/results/clip_bench_video.json] [--memory-minutes 120]

Video rows: 16-frame clips at stride 2, RandomResizedCrop(112) + flip, from
10-second 480p (854x480, 30 fps) H.264 videos with 2-second GOPs (B-frames,
libx264's defaults), batches of 8, uint8 [B, T, H, W, C]:
  unirecord  Loader(fields=Fields(clip=Clip(16, 2))) with `threads` threads;
  pyav_seek  a torch DataLoader (num_workers = threads) whose Dataset seeks
             with PyAV to the keyframe before the clip's first frame and
             decodes forward to its last (the best a user writes by hand),
             then torchvision's RandomResizedCrop + flip on the clip tensor;
  read_video the same DataLoader with torchvision.io.read_video of the whole
             file (its clip cut afterwards).
Audio rows: 2-second windows at 16 kHz mono float32 from FLAC and Opus
(30-second files at 48 kHz stereo), batches of 32:
  unirecord  Loader(fields=Fields(audio=AudioClip(2.0, 16000)));
  torchaudio torchaudio.load(frame_offset=, num_frames=) + Resample in a
             DataLoader (when python3-torchaudio is installed; else left out).
Each row is the median clips/s (windows/s) of --rounds runs, rounds
interleaved so all see the same load; the load average is recorded. Both
sides run on the same `threads` cores (sched_setaffinity, inherited by the
DataLoader's workers and by FFmpeg's threads in PyAV).
Re-encoded rows (the way past the decode floor, measured): the same videos
re-encoded by ffmpeg into 16-frame GOPs and/or 256-line frames, loaded by
unirecord, against pyav_seek on the original files in the same rounds, with
each variant's size and (at the original size) PSNR against the original.
Memory: a --memory-minutes long 320x240 video (two hours by default: a
2-minute piece repeated without re-encoding) and the 2-minute piece alone,
each sampled for 300 clips: the process's RSS after 30 and after 300 clips.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
import media_files  # noqa: E402

FRAMES, STRIDE, SIZE, BATCH = 16, 2, 112, 8
AUDIO_SECONDS, AUDIO_RATE, AUDIO_BATCH = 2.0, 16000, 32


def make_videos(folder, count, seconds=10, fps=30, width=854, height=480):
    os.makedirs(os.path.join(folder, "clips"), exist_ok=True)
    for i in range(count):
        path = os.path.join(folder, "clips", f"v{i:03d}")
        # Noise keeps the frames from compressing to nothing; each video its own hue.
        media_files.run_ffmpeg(
            ["-f", "lavfi", "-i", f"testsrc2=size={width}x{height}:rate={fps}:duration={seconds}",
             "-vf", f"noise=alls=12:allf=t+u,hue=H={i}*0.3", "-c:v", "libx264", "-preset", "veryfast",
             "-g", str(2 * fps), "-keyint_min", str(2 * fps), "-sc_threshold", "0", "-pix_fmt", "yuv420p",
             path + ".mp4"])
    return folder


def make_audio(folder, count, codec, seconds=30):
    os.makedirs(os.path.join(folder, "sounds"), exist_ok=True)
    for i in range(count):
        media_files.make_audio(os.path.join(folder, "sounds", f"a{i:03d}"), codec, seconds=seconds, rate=48000,
                               channels=2)
    return folder


# ---------------------------------------------------------------- unirecord --

def unirecord_clips(dataset, threads, epochs):
    import unirecord
    from unirecord import Clip, Fields, RandomResizedCrop

    loader = unirecord.Loader(dataset, BATCH, True, threads=threads, transform=RandomResizedCrop(SIZE),
                              fields=Fields(clip=Clip(frames=FRAMES, stride=STRIDE), layout="NHWC"))
    return run_epochs(loader, epochs, lambda b: len(b["id"]))


def unirecord_audio(dataset, threads, epochs):
    import unirecord
    from unirecord import AudioClip, Fields

    loader = unirecord.Loader(dataset, AUDIO_BATCH, True, threads=threads,
                              fields=Fields(audio=AudioClip(seconds=AUDIO_SECONDS, rate=AUDIO_RATE)))
    return run_epochs(loader, epochs, lambda b: len(b["id"]))


def run_epochs(loader, epochs, count):
    """Samples/s over `epochs` epochs after a warm-up epoch."""
    for epoch in range(epochs + 1):
        if hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)
        if epoch == 1:
            start, samples = time.perf_counter(), 0
        for batch in loader:
            if epoch >= 1:
                samples += count(batch)
    return samples / (time.perf_counter() - start)


# ------------------------------------------------------------------- peers --

class PyAVClips:
    """A clip per video, as a user writes it with PyAV: seek to the keyframe
    at or before the clip's first frame, decode forward to its last."""

    def __init__(self, files, whole_file=False):
        self.files = files
        self.whole_file = whole_file
        import torchvision.transforms as T
        self.crop = T.Compose([T.RandomResizedCrop(SIZE, antialias=True), T.RandomHorizontalFlip()])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import torch
        frames = self.read_video(i) if self.whole_file else self.seek_and_decode(i)
        clip = torch.from_numpy(frames).permute(0, 3, 1, 2)  # T, C, H, W: one crop for all frames
        return self.crop(clip).permute(0, 2, 3, 1).contiguous()

    def seek_and_decode(self, i):
        import av
        import numpy as np
        with av.open(self.files[i]) as container:
            stream = container.streams.video[0]
            total = stream.frames
            first = random.randrange(0, total - (FRAMES - 1) * STRIDE)
            rate = stream.average_rate
            tb = stream.time_base
            # Frame index -> pts at a constant rate (these videos are CFR).
            pts_of = lambda k: int(round(k / rate / tb)) + (stream.start_time or 0)  # noqa: E731
            wanted = {pts_of(first + t * STRIDE) for t in range(FRAMES)}
            last = max(wanted)
            container.seek(pts_of(first), stream=stream, backward=True, any_frame=False)
            out = {}
            for frame in container.decode(stream):
                if frame.pts in wanted:
                    out[frame.pts] = frame.to_ndarray(format="rgb24")
                if frame.pts >= last:
                    break
            return np.stack([out[p] for p in sorted(out)])

    def read_video(self, i):
        import torchvision
        frames, _, _ = torchvision.io.read_video(self.files[i], pts_unit="sec", output_format="THWC")
        first = random.randrange(0, frames.shape[0] - (FRAMES - 1) * STRIDE)
        return frames[first:first + (FRAMES - 1) * STRIDE + 1:STRIDE].numpy()


class TorchaudioWindows:
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        import torchaudio
        info = torchaudio.info(self.files[i])
        length = int(AUDIO_SECONDS * info.sample_rate)
        offset = random.randrange(0, info.num_frames - length)
        wave, rate = torchaudio.load(self.files[i], frame_offset=offset, num_frames=length)
        wave = torchaudio.functional.resample(wave.mean(0, keepdim=True), rate, AUDIO_RATE)
        return wave


def dataloader_rate(dataset, workers, epochs, batch):
    import torch

    def seed(worker_id):
        random.seed(1000 + worker_id)

    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=workers,
                                         persistent_workers=workers > 0, worker_init_fn=seed)
    return run_epochs(loader, epochs, len)


def pin(threads):
    """Both sides on the same `threads` cores: this process (the native
    loader's threads) and the DataLoader's workers, which inherit it."""
    os.sched_setaffinity(0, sorted(ALL_CORES)[:threads])


ALL_CORES = os.sched_getaffinity(0)


# ------------------------------------------------------------------ memory --

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def sampled_rss(dataset_path, threads, clips=300):
    """The process's RSS (MiB) after 30 and after `clips` clips of a loader
    over `dataset_path` (one video), and the frames it decoded."""
    import unirecord
    from unirecord import Clip, Fields, RandomResizedCrop, Sampler

    loader = unirecord.Loader(unirecord.Dataset(dataset_path), 1, True, threads=threads,
                              transform=RandomResizedCrop(SIZE), fields=Fields(clip=Clip(frames=FRAMES, stride=STRIDE)),
                              sampler=Sampler(epoch_size=clips))
    rss = []
    start = time.perf_counter()
    for k, _ in enumerate(loader):
        if k + 1 in (30, clips):
            rss.append(rss_mb())
    return {"rss_mb_after_30_clips": rss[0], f"rss_mb_after_{clips}_clips": rss[1],
            "clips_per_s": clips / (time.perf_counter() - start), "frames_decoded": loader.stats()["frames_decoded"]}


def memory_row(tmp, minutes, threads):
    """A `minutes`-long 320x240 video (a 2-minute piece encoded once, then
    repeated by ffmpeg's concat demuxer without re-encoding) against the
    2-minute piece alone, each converted and sampled for 300 clips."""
    import unirecord

    piece = os.path.join(tmp, "piece.mp4")
    media_files.run_ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=120",
                            "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-pix_fmt", "yuv420p", piece])
    row = {"video_minutes": minutes}
    for name, repeats in (("short", 1), ("long", max(1, round(minutes / 2)))):
        folder = os.path.join(tmp, name, "videos")
        os.makedirs(folder, exist_ok=True)
        video = os.path.join(folder, name + ".mp4")
        listing = os.path.join(tmp, name + ".txt")
        with open(listing, "w") as f:
            f.write(f"file '{piece}'\n" * repeats)
        media_files.run_ffmpeg(["-f", "concat", "-safe", "0", "-i", listing, "-c", "copy", video])
        unirecord.convert_videofolder(os.path.dirname(folder), os.path.join(tmp, name + "_out"), threads=threads)
        sampled = sampled_rss(os.path.join(tmp, name + "_out", name), threads)
        row[name] = {"minutes": 2 * repeats, "stored_mb": os.path.getsize(video) / 1e6, **sampled}
        os.remove(video)
    return row


# ------------------------------------------------------------- re-encoded --

# (name, GOP frames, frame height): what a convert-time re-encode would store.
REENCODINGS = (("gop16", 16, 480), ("gop60_256p", 60, 256), ("gop16_256p", 16, 256))


def psnr(reencoded, original):
    """ffmpeg's PSNR (average, dB) of `reencoded` against `original`, same size."""
    done = subprocess.run([media_files.ffmpeg(), "-hide_banner", "-i", reencoded, "-i", original,
                           "-lavfi", "psnr", "-f", "null", "-"], capture_output=True, text=True, check=True)
    line = [l for l in done.stderr.splitlines() if "PSNR" in l and "average:" in l][-1]
    return float(line.split("average:")[1].split()[0])


def reencoded_rows(tmp, files, threads_list, rounds, epochs):
    """The way past the decode floor, measured (issue 45's note): each video
    re-encoded by ffmpeg (libx264 veryfast, crf 23) into short GOPs and/or a
    smaller frame, converted and loaded by unirecord, against the PyAV peer on
    the original files in the same rounds; with each variant's size and, at
    the original size, its PSNR against the original."""
    import unirecord

    rows = []
    original_bytes = sum(os.path.getsize(f) for f in files)
    for name, gop, height in REENCODINGS:
        folder = os.path.join(tmp, name, "clips")
        os.makedirs(folder, exist_ok=True)
        quality = []
        for f in files:
            out = os.path.join(folder, os.path.basename(f))
            media_files.run_ffmpeg(["-i", f, "-vf", f"scale=-2:{height}", "-c:v", "libx264", "-preset", "veryfast",
                                    "-crf", "23", "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0",
                                    "-pix_fmt", "yuv420p", out])
            if height == 480:
                quality.append(psnr(out, f))
        unirecord.convert_videofolder(os.path.join(tmp, name), os.path.join(tmp, name + "_out"), threads=2)
        dataset = unirecord.Dataset(os.path.join(tmp, name + "_out", name))
        for threads in threads_list:
            pin(threads)
            rates = {"unirecord_reencoded": [], "pyav_seek_original": []}
            for _ in range(rounds):
                rates["unirecord_reencoded"].append(unirecord_clips(dataset, threads, epochs))
                rates["pyav_seek_original"].append(dataloader_rate(PyAVClips(files), threads, epochs, BATCH))
            row = {"kind": "reencoded", "variant": name, "gop": gop, "height": height, "threads": threads,
                   "load_average": os.getloadavg(),
                   "size_vs_original": sum(os.path.getsize(os.path.join(folder, os.path.basename(f)))
                                           for f in files) / original_bytes,
                   "psnr_db_vs_original": statistics.median(quality) if quality else None,
                   **{k: statistics.median(v) for k, v in rates.items()}, "runs": rates}
            row["vs_pyav_seek_original"] = row["unirecord_reencoded"] / row["pyav_seek_original"]
            print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
            rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--videos", type=int, default=12)
    parser.add_argument("--audio-files", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads-list", default="1,2")
    parser.add_argument("--memory-minutes", type=float, default=120)
    parser.add_argument("--read-video-files", type=int, default=4,
                        help="read_video rows decode this many whole files a run (seconds each)")
    parser.add_argument("--skip", default="", help="comma-separated: video,audio,memory,reencoded")
    parser.add_argument("--json")
    args = parser.parse_args()
    import unirecord

    skip = set(filter(None, args.skip.split(",")))
    threads_list = [int(t) for t in args.threads_list.split(",")]
    tmp = tempfile.mkdtemp(prefix="clip_bench_")
    result = {"load_average_before": os.getloadavg(), "cores": os.cpu_count(), "rows": []}
    try:
        if not {"video", "reencoded"} <= skip:
            make_videos(os.path.join(tmp, "v"), args.videos)
            unirecord.convert_videofolder(os.path.join(tmp, "v"), os.path.join(tmp, "v_out"), threads=2)
            dataset = unirecord.Dataset(os.path.join(tmp, "v_out", "v"))
            files = [os.path.join(tmp, "v", dataset[i]["path"]) for i in range(len(dataset))]
            for threads in threads_list if "video" not in skip else []:
                pin(threads)
                rates = {"unirecord": [], "pyav_seek": [], "read_video": []}
                for _ in range(args.rounds):
                    rates["unirecord"].append(unirecord_clips(dataset, threads, args.epochs))
                    rates["pyav_seek"].append(dataloader_rate(PyAVClips(files), threads, args.epochs, BATCH))
                    rates["read_video"].append(
                        dataloader_rate(PyAVClips(files[:args.read_video_files], True), threads, 1, 2))
                row = {"kind": "video", "threads": threads, "load_average": os.getloadavg(),
                       **{name: statistics.median(r) for name, r in rates.items()}, "runs": rates}
                row["vs_pyav_seek"] = row["unirecord"] / row["pyav_seek"]
                row["vs_read_video"] = row["unirecord"] / row["read_video"]
                print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
                result["rows"].append(row)
            if "reencoded" not in skip:
                result["rows"] += reencoded_rows(tmp, files, threads_list, args.rounds, args.epochs)
        if "audio" not in skip:
            try:
                import torchaudio  # noqa: F401
                have_torchaudio = True
            except ImportError:
                have_torchaudio = False
            for codec in ("flac", "opus"):
                folder = make_audio(os.path.join(tmp, codec), args.audio_files, codec)
                unirecord.convert_audiofolder(folder, os.path.join(tmp, codec + "_out"), threads=2)
                dataset = unirecord.Dataset(os.path.join(tmp, codec + "_out", codec))
                files = [os.path.join(folder, dataset[i]["path"]) for i in range(len(dataset))]
                for threads in threads_list:
                    pin(threads)
                    rates = {"unirecord": [], "torchaudio": []}
                    for _ in range(args.rounds):
                        rates["unirecord"].append(unirecord_audio(dataset, threads, 5))
                        if have_torchaudio:
                            rates["torchaudio"].append(
                                dataloader_rate(TorchaudioWindows(files), threads, 5, AUDIO_BATCH))
                    row = {"kind": "audio", "codec": codec, "threads": threads, "load_average": os.getloadavg(),
                           **{name: statistics.median(r) for name, r in rates.items() if r}, "runs": rates}
                    if have_torchaudio:
                        row["vs_torchaudio"] = row["unirecord"] / row["torchaudio"]
                    print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
                    result["rows"].append(row)
        pin(max(threads_list))
        if "memory" not in skip:
            row = {"kind": "memory", **memory_row(tmp, args.memory_minutes, max(threads_list))}
            print(json.dumps(row), flush=True)
            result["rows"].append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["load_average_after"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
