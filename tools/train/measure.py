#!/usr/bin/env python3
"""Measures what a demo-world clip shows and sounds like, from its pixels
and samples alone: the metrics of issue 15's Done-when.

Video: each pixel is named by the nearest of the world's 8 colours and 4
backgrounds (within COLOUR_TOLERANCE, else unnamed); a colour is visible
when it covers MIN_PIXELS per frame on average; its centroid and area per
frame give the motion, its mask's fill of its bounding box the shape.
Audio: silence by level, clicks by how peaky the envelope is, otherwise the
pitch of the spectrum's peak named within a semitone; the pan side by the
channels' RMS ratio; click onsets against the bounces seen in the video.

  python3 measure.py --examples DIR [--rendered DIR2]

scores every example of DIR/examples.jsonl (world.py's output) on its own
arrays, or on a model's renders, DIR2/<id>.mp4 (read through ffmpeg) or
DIR2/<id>.npz (frames uint8 [F,H,W,3], audio float32 [2,N]), and prints the
pass rate of each check.
"""

import argparse
import json
import math
import os

import numpy as np

import clipio
import world

# Euclidean RGB distance within which a pixel is named by its nearest world
# colour: the nearest wins (white and cream are only 43 apart), the bound
# leaves edge blends and noise unnamed.
COLOUR_TOLERANCE = 40.0
MIN_PIXELS = 24
# Motion thresholds, as fractions of the canvas's short side and as area
# ratios; the world makes travel >= 0.3, size ratio >= 1.7 (area 2.9).
STILL_TRAVEL = 0.1
GROW_AREA = 1.6
BOUNCE_SWING = 0.08
# Shape by fill of the bounding box: square 1, circle pi/4, triangle 1/2.
SQUARE_FILL, TRIANGLE_FILL = 0.89, 0.64
SILENCE_RMS = 0.01
# Fraction of 10-ms envelope frames above half the peak: ~1 for a held tone,
# a few percent for clicks.
CLICK_DENSITY = 0.5
PAN_DB = 3.0
ONSET_HOP = 64  # samples: 2 ms at 32 kHz
ONSET_REFRACTORY_S = 0.04
FL2VA_PSNR_DB = 25.0

NAMES = list(world.COLOURS) + list(world.BACKGROUNDS)
PALETTE = np.array([world.COLOURS.get(n) or world.BACKGROUNDS[n] for n in NAMES], np.float32)


def labels(frames):
    """Index into NAMES of each pixel's colour, -1 where none is near.
    frames uint8 [...,3] -> int [...]. Distances are taken once per distinct
    RGB value: a clip has far fewer of them than pixels."""
    rgb = np.asarray(frames, np.uint8)
    packed = (rgb[..., 0].astype(np.int32) << 16) | (rgb[..., 1].astype(np.int32) << 8) | rgb[..., 2]
    values, inverse = np.unique(packed, return_inverse=True)
    x = np.stack([values >> 16, (values >> 8) & 255, values & 255], -1).astype(np.float32)
    d = np.sqrt(((x[:, None, :] - PALETTE) ** 2).sum(-1))
    idx = d.argmin(-1)
    named = np.where(d[np.arange(len(x)), idx] <= COLOUR_TOLERANCE, idx, -1)
    return named[inverse].reshape(packed.shape)


def colours_seen(frames, lab=None):
    """Object colours covering MIN_PIXELS per frame on average, as a set."""
    lab = labels(frames) if lab is None else lab
    lab = lab.reshape((-1,) + lab.shape[-2:])
    return {n for i, n in enumerate(world.COLOURS) if (lab == i).sum() / len(lab) >= MIN_PIXELS}


def background_of(frames):
    """The most common background colour's name."""
    lab = labels(frames)
    counts = [(lab == NAMES.index(n)).sum() for n in world.BACKGROUNDS]
    return list(world.BACKGROUNDS)[int(np.argmax(counts))]


def track(lab, colour):
    """Centroid x, y and pixel area per frame of one colour; NaN centroids
    where it is absent. lab int [F,H,W] -> three float [F]."""
    mask = lab == NAMES.index(colour)
    area = mask.sum(axis=(1, 2)).astype(np.float64)
    ys, xs = np.arange(mask.shape[1]), np.arange(mask.shape[2])
    with np.errstate(invalid="ignore", divide="ignore"):
        cx = (mask.sum(axis=1) * xs).sum(axis=1) / area
        cy = (mask.sum(axis=2) * ys).sum(axis=1) / area
    return cx, cy, area


def turning_points(y, swing):
    """(index, +1 for a maximum or -1 for a minimum) of each extremum of y
    that y leaves by at least swing: hysteresis, so jitter makes none."""
    out, lo, hi, direction, ext = [], 0, 0, 0, 0
    for i in range(1, len(y)):
        if direction == 0:  # until y has moved by swing, the trend is unknown
            lo, hi = (i if y[i] < y[lo] else lo), (i if y[i] > y[hi] else hi)
            if y[hi] - y[lo] >= swing:
                direction = 1 if hi > lo else -1
                ext = max(hi, lo)
        elif (y[i] - y[ext]) * direction > 0:
            ext = i
        elif (y[ext] - y[i]) * direction >= swing:
            out.append((ext, direction))
            direction, ext = -direction, i
    return out


def filled(v, area):
    """v with the frames where the colour is (nearly) absent interpolated
    from their neighbours; None when it is absent at either end."""
    ok = area >= MIN_PIXELS / 4
    if not ok[0] or not ok[-1]:
        return None
    return np.interp(np.arange(len(v)), np.flatnonzero(ok), v[ok])


def change(v):
    """Mean of the last eighth of v minus that of the first: the whole
    clip's change, steadier than two single frames of a render."""
    k = max(1, len(v) // 8)
    return v[-k:].mean() - v[:k].mean()


def motion_of(cx, cy, area, side):
    """The world's motion name for a track; None when the colour is missing
    in the first or last frame."""
    y = filled(cy, area)
    if y is None:
        return None
    if len(turning_points(y, BOUNCE_SWING * side)) >= 2:
        return "bounce"
    ratio = math.exp(change(np.log(np.maximum(area, 1))))
    if ratio >= GROW_AREA:
        return "grow"
    if ratio <= 1 / GROW_AREA:
        return "shrink"
    dx, dy = change(filled(cx, area)), change(y)
    if math.hypot(dx, dy) < STILL_TRAVEL * side:
        return "still"
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def bounce_frames(cy, area, side):
    """Frames where a bouncing track is lowest (its floor contacts)."""
    y = filled(cy, area)
    return [] if y is None else [i for i, kind in turning_points(y, BOUNCE_SWING * side) if kind == 1]


def denoised(mask):
    """mask without pixels that have fewer than 2 of 4 neighbours set."""
    p = np.pad(mask, 1).astype(np.int8)
    n = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
    return mask & (n >= 2)


def shape_of(mask):
    """circle, square or triangle from a 2-D mask's fill of its bounding
    box; None for a mask too small to tell."""
    m = denoised(mask)
    ys, xs = np.nonzero(m)
    if len(xs) < MIN_PIXELS:
        return None
    fill = len(xs) / ((xs.max() - xs.min() + 1) * (ys.max() - ys.min() + 1))
    if fill >= SQUARE_FILL:
        return "square"
    return "circle" if fill >= TRIANGLE_FILL else "triangle"


def shape_in(lab, colour):
    """The shape most frames show for one colour."""
    votes = [shape_of(f == NAMES.index(colour)) for f in lab]
    votes = [v for v in votes if v]
    return max(set(votes), key=votes.count) if votes else None


def envelope(mono, hop):
    n = len(mono) // hop
    return np.sqrt((mono[: n * hop].reshape(n, hop) ** 2).mean(axis=1))


def sound_of(audio):
    """silence, clicks, or the tone's name (hum/tone/beep); None for a pitch
    more than a semitone from all three. audio float [2,N]."""
    mono = np.asarray(audio, np.float64).mean(axis=0)
    if math.sqrt((mono**2).mean()) < SILENCE_RMS and np.abs(mono).max() < 10 * SILENCE_RMS:
        return "silence"
    env = envelope(mono, world.SAMPLE_RATE // 100)
    if (env > 0.5 * env.max()).mean() < CLICK_DENSITY:
        return "clicks"
    f = pitch_of(mono)
    name = min(world.TONES, key=lambda k: abs(semitones(f, world.TONES[k])))
    return name if abs(semitones(f, world.TONES[name])) <= 1 else None


def semitones(f, ref):
    return 12 * math.log2(f / ref)


def pitch_of(mono):
    """Frequency in Hz of the spectrum's peak (Hann window, parabolic
    interpolation between bins)."""
    spec = np.abs(np.fft.rfft(mono * np.hanning(len(mono))))
    k = int(np.argmax(spec[1:-1])) + 1
    a, b, c = np.log(spec[k - 1 : k + 2] + 1e-12)
    k += 0.5 * (a - c) / (a - 2 * b + c)
    return k * world.SAMPLE_RATE / len(mono)


def pan_of(audio):
    """left, right or center by the channels' RMS ratio."""
    rms = np.sqrt((np.asarray(audio, np.float64) ** 2).mean(axis=1)) + 1e-12
    db = 20 * math.log10(rms[0] / rms[1])
    return "left" if db > PAN_DB else "right" if db < -PAN_DB else "center"


def click_times(audio):
    """Onset times in seconds of the clicks: the envelope rising through a
    quarter of its peak, at most one per ONSET_REFRACTORY_S."""
    env = envelope(np.abs(np.asarray(audio, np.float64)).mean(axis=0), ONSET_HOP)
    above = env >= 0.25 * env.max()
    out = []
    for i in np.flatnonzero(above[1:] & ~above[:-1]) + 1:
        t = i * ONSET_HOP / world.SAMPLE_RATE
        if not out or t - out[-1] >= ONSET_REFRACTORY_S:
            out.append(t)
    return out


def clicks_match(clicks, bounces, tol_frames=1.0):
    """Each bounce frame has one click within tol_frames, and no click is spare."""
    if len(clicks) != len(bounces):
        return False
    return all(abs(c * world.FPS - b) <= tol_frames for c, b in zip(sorted(clicks), sorted(bounces)))


def psnr(a, b):
    """PSNR in dB of two uint8 images (inf when equal)."""
    mse = ((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2).mean()
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def score(meta, arrays):
    """Named checks of one example's arrays against what its spec asked:
    colour, motion, sound (pitch, clicks or silence), pan, and the task's
    anchor (FL2VA) or picture (Ref2VA). Returns {check: bool}."""
    clip = world.Clip.from_json(meta["spec"])
    lab = labels(arrays["frames"])
    side = min(clip.width, clip.height)
    seen = colours_seen(arrays["frames"], lab)
    checks = {"colour": all(t.colour in seen for t in clip.things)}
    checks["motion"] = all(motion_of(*track(lab, t.colour), side) == t.motion for t in clip.things)
    checks["sound"] = sound_of(arrays["audio"]) == clip.sound
    if clip.sound != "silence":
        checks["pan"] = pan_of(arrays["audio"]) == clip.pan
    if clip.sound == "clicks":
        bounces = []
        for t in clip.things:
            if t.motion == "bounce":
                _, cy, area = track(lab, t.colour)
                bounces += bounce_frames(cy, area, side)
        checks["clicks"] = clicks_match(click_times(arrays["audio"]), bounces)
    if clip.task == "FL2VA":
        checks["anchor"] = psnr(arrays["frames"][0], arrays["anchors"][0]) >= FL2VA_PSNR_DB
    if clip.task == "Ref2VA":
        checks["picture"] = picture_kept(arrays["picture"], lab)
    return checks


def picture_kept(picture, lab):
    """Picture 1's object colour is in the clip with the same shape."""
    colours = colours_seen(picture[None])
    if len(colours) != 1:
        return False
    (colour,) = colours
    want = shape_of(labels(picture) == NAMES.index(colour))
    return want is not None and shape_in(lab, colour) == want


def rendered(folder, example_id):
    """A render's frames and audio: <id>.mp4 (the engine's output) or <id>.npz."""
    mp4 = os.path.join(folder, example_id + ".mp4")
    if os.path.exists(mp4):
        frames, audio = clipio.read_mp4(mp4)
        return {"frames": frames, "audio": audio}
    npz = os.path.join(folder, example_id + ".npz")
    if not os.path.exists(npz):
        raise SystemExit(f"measure: no render of {example_id} in {folder}; render it to {example_id}.mp4 there")
    with np.load(npz) as z:
        return {"frames": z["frames"], "audio": z["audio"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--examples", required=True, help="world.py's output folder")
    p.add_argument("--rendered", help="folder of <id>.mp4 or <id>.npz renders to score instead of the examples' own arrays")
    a = p.parse_args()
    totals = {}
    with open(os.path.join(a.examples, "examples.jsonl"), encoding="utf-8") as f:
        for line in f:
            meta = json.loads(line)
            arrays = dict(np.load(os.path.join(a.examples, meta["id"] + ".npz")))
            if a.rendered:
                arrays.update(rendered(a.rendered, meta["id"]))
            for k, v in score(meta, arrays).items():
                totals.setdefault(k, []).append(v)
    for k, v in totals.items():
        print(f"{k}: {sum(v)}/{len(v)} = {100 * sum(v) / len(v):.1f} %")


if __name__ == "__main__":
    main()
