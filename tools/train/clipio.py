"""MP4 in and out for the demo world, through the ffmpeg command.

read_mp4 gives a render back as the arrays measure.py scores: the engine's
output is an MP4, so the evaluation reads exactly what a creator gets.
write_mp4 encodes the way the app does (media/encode.go: libx264 yuv420p
CRF 18, AAC at the audio's rate), so the tests can show that the metrics
survive the codec.
"""

import json
import os
import subprocess

import numpy as np

import world


class FFmpegError(RuntimeError):
    pass


def run(args, data=None):
    p = subprocess.run(args, input=data, capture_output=True, check=False)
    if p.returncode != 0:
        tail = p.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise FFmpegError(f"{args[0]} failed on {args[-1]}: {' '.join(tail)}")
    return p.stdout


def probe_size(path):
    """(width, height) of the first video stream."""
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
               "stream=width,height", "-of", "json", path])
    s = json.loads(out)["streams"]
    if not s:
        raise FFmpegError(f"{path} has no video stream; give the MP4 the engine wrote")
    return s[0]["width"], s[0]["height"]


def read_mp4(path):
    """frames uint8 [F,H,W,3] and audio float32 [2,N] at 32 kHz (zeros
    when the file has no sound)."""
    w, h = probe_size(path)
    raw = run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"])
    frames = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
    try:
        pcm = run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-ac", "2",
                   "-ar", str(world.SAMPLE_RATE), "pipe:1"])
    except FFmpegError:
        pcm = b""
    audio = np.frombuffer(pcm, np.float32).reshape(-1, 2).T.copy()
    if audio.shape[1] == 0:
        audio = np.zeros((2, round(len(frames) * world.SAMPLE_RATE / world.FPS)), np.float32)
    return frames, audio


def write_mp4(path, frames, audio):
    """Encodes frames [F,H,W,3] and audio [2,N] as the app's MP4 writer does."""
    pcm = path + ".f32"
    np.ascontiguousarray(audio.T, np.float32).tofile(pcm)
    try:
        encode(path, pcm, frames)
    finally:
        os.remove(pcm)


def encode(path, pcm, frames):
    _, h, w, _ = frames.shape
    run(["ffmpeg", "-v", "error", "-y",
         "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-framerate", str(world.FPS), "-i", "pipe:0",
         "-f", "f32le", "-ar", str(world.SAMPLE_RATE), "-ac", "2", "-i", pcm,
         "-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-b:a", "192k",
         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "medium", "-crf", "18", path],
        np.ascontiguousarray(frames, np.uint8).tobytes())


def write_png(path, image):
    """Writes uint8 [H,W,3] as an 8-bit RGB PNG (lossless), for the
    pictures a render takes (FL2VA anchors, Ref2VA's Picture 1)."""
    h, w, _ = image.shape
    run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}", "-i", "pipe:0",
         "-frames:v", "1", "-pix_fmt", "rgb24", path], np.ascontiguousarray(image, np.uint8).tobytes())
