"""Test media made at test time with the `ffmpeg` command: videos of every
codec the video tests cover (H.264 with B-frames, HEVC, VP9, MPEG-4, AV1,
odd sizes, 10-bit, variable frame rate, rotation metadata) and audio files
(AAC, Opus, FLAC, MP3, WAV). Nothing is checked in: each file is a few
kilobytes and takes well under a second to encode.

Not a conftest.py (see urec_fixtures.py); the video tests, tests/cli and
bench/clip_bench.py import it by path."""
import os
import shutil
import subprocess

# codec -> (container extension, ffmpeg encoder arguments). Small GOPs, so a
# clip's first sampled frame is rarely a keyframe and the decoder must start
# at the keyframe before it.
VIDEO_CODECS = {
    "h264": (".mp4", ["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "12", "-keyint_min", "12",
                      "-sc_threshold", "0"]),
    "hevc": (".mp4", ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "keyint=12:min-keyint=12:bframes=2:log-level=error",
                      "-tag:v", "hvc1"]),
    "vp9": (".webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "12", "-b:v", "300k"]),
    "mpeg4": (".avi", ["-c:v", "mpeg4", "-g", "12", "-bf", "2", "-q:v", "4"]),
    "av1": (".mkv", ["-c:v", "libaom-av1", "-cpu-used", "8", "-usage", "realtime", "-g", "12", "-b:v", "300k"]),
}

# codec -> (extension, ffmpeg encoder arguments)
AUDIO_CODECS = {
    "aac": (".m4a", ["-c:a", "aac", "-b:a", "96k"]),
    "opus": (".opus", ["-c:a", "libopus", "-b:a", "48k"]),
    "flac": (".flac", ["-c:a", "flac"]),
    "mp3": (".mp3", ["-c:a", "libmp3lame", "-b:a", "96k"]),
    "wav": (".wav", ["-c:a", "pcm_s16le"]),
}


def ffmpeg():
    """The ffmpeg binary (Debian's, the FFmpeg the library links)."""
    path = shutil.which("ffmpeg")
    if path is None:
        raise RuntimeError("the video tests need the ffmpeg command (apt-get install ffmpeg)")
    return path


def run_ffmpeg(args):
    subprocess.run([ffmpeg(), "-hide_banner", "-loglevel", "error", "-y", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_video(path, codec="h264", width=321, height=241, frames=48, fps=24, pix_fmt="yuv420p", rotate=None,
               vfr=False, audio=None, ext=None):
    """A video of `frames` frames of ffmpeg's testsrc2 (moving, so every frame
    differs) at `path` + the codec's extension; returns the file's path.
    rotate: degrees of display-matrix rotation metadata (90, 180, 270).
    vfr: timestamps that are not evenly spaced (frames at 1/fps and 3/fps
    steps alternately). audio: an AUDIO_CODECS name to add a sine track.
    ext: another container than the codec's.
    H.264 and HEVC at an odd size are 4:4:4 (their encoders refuse odd 4:2:0)."""
    default_ext, encoder = VIDEO_CODECS[codec]
    ext = ext or default_ext
    out = path + ext
    if codec in ("h264", "hevc") and (width % 2 or height % 2) and pix_fmt.startswith("yuv420p"):
        # libx264 and libx265 refuse odd sizes in 4:2:0; 4:4:4 has no such rule.
        pix_fmt = pix_fmt.replace("yuv420p", "yuv444p")
    # testsrc2 draws even sizes only: drawn a pixel larger, scaled to the size.
    args = ["-f", "lavfi", "-i", f"testsrc2=size={width + width % 2}x{height + height % 2}:rate={fps}:"
            f"duration={frames / fps}"]
    if audio:
        args += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={frames / fps}"]
    filters = [f"scale={width}:{height}", f"format={pix_fmt}"]
    if vfr:
        # Every other frame held three times as long: pts 0, 1, 4, 5, 8, ...
        filters.insert(0, "setpts='N+2*floor(N/2)'")
        args += ["-fps_mode", "vfr"]
    args += ["-vf", ",".join(filters), "-frames:v", str(frames), *encoder]
    if audio:
        args += AUDIO_CODECS[audio][1]
    if vfr:
        args += ["-video_track_timescale", str(fps)] if ext == ".mp4" else []
    if rotate is not None:
        # Written as the container's display matrix: the pixels stay as encoded.
        tmp = out + ".norot" + ext
        run_ffmpeg(args + [tmp])
        # FFmpeg 5's mov muxer writes the "rotate" tag as the display matrix
        # (6 has -display_rotation instead).
        run_ffmpeg(["-i", tmp, "-c", "copy", "-metadata:s:v:0", f"rotate={rotate}", out])
        os.remove(tmp)
        return out
    run_ffmpeg(args + [out])
    return out


def make_audio(path, codec="flac", seconds=3.0, rate=44100, channels=2):
    """`seconds` of a sine (a different pitch per channel) at `path` + the
    codec's extension; returns the file's path."""
    ext, encoder = AUDIO_CODECS[codec]
    out = path + ext
    layout = {1: "mono", 2: "stereo"}[channels]
    args = ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate={rate}:duration={seconds}"]
    if channels == 2:
        args += ["-f", "lavfi", "-i", f"sine=frequency=660:sample_rate={rate}:duration={seconds}",
                 "-filter_complex", "[0:a][1:a]amerge=inputs=2[a]", "-map", "[a]"]
    run_ffmpeg(args + ["-ac", str(channels), "-channel_layout", layout, *encoder, out])
    return out


def pyav_frames(path, stream_rotation=False):
    """Every frame of the file's video stream as PyAV decodes it:
    {pts: rgb24 ndarray (H, W, 3)}. (PyAV ignores rotation metadata.)"""
    import av

    frames = {}
    with av.open(path) as container:
        for frame in container.decode(video=0):
            frames[frame.pts] = frame.to_ndarray(format="rgb24")
    return frames
