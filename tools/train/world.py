#!/usr/bin/env python3
"""The demo world: synthetic clips a tiny MiniMax-H3 is trained on.

One or two flat shapes (circle, square, triangle) in one of 8 colours move on
one of 4 plain backgrounds, over a stereo 32 kHz soundtrack of one pitched
tone, clicks on each bounce, or silence. Every example is a pure function of
its seed (Python's random.Random, whose stream is stable across versions, so
the GPU machine makes the same bytes as this one), and its prompt is made
from templates with paraphrases: the prompts this file can write are the
demo model's whole vocabulary.

Tasks: T2VA (prompt only); FL2VA (the clip's own first and last frames are
the anchors); Ref2VA ("Picture 1" is the first object alone, the prompt says
what it does). Combinations listed in heldout.json never occur in the train
split; the heldout split is made only of them.

  python3 world.py --out DIR --split train --count 1000 --seed 1

writes DIR/examples.jsonl (one line per example: id, task, prompt, spec)
and DIR/<id>.npz: frames uint8 [F,H,W,3], audio float32 [2,N] (channels
first, as torchaudio), anchors uint8 [2,H,W,3] (FL2VA), picture uint8
[H,W,3] (Ref2VA).
"""

import argparse
import dataclasses
import json
import math
import os
import random
import re

import numpy as np

FPS = 24
SAMPLE_RATE = 32000
# The audio VAE's hop; a clip's soundtrack is round(F*40/24) latents long,
# the engine's AudioLatents, so it encodes to exactly the target length.
AUDIO_HOP = 800
# Output lengths the model can make (17n+5, the video VAE's chunking)
# between the 22 and 56 frames.
LENGTHS = (22, 39, 56)
# 128x128: both sides a multiple of the DiT's 32-px cell (16x VAE, 2x2
# patch), 4x4 cells per latent frame, so a 56-frame clip is 272 video rows;
# square so left/right and up/down travel alike.
CANVAS = (128, 128)

SHAPES = ("circle", "square", "triangle")
COLOURS = {
    "red": (220, 40, 40),
    "green": (40, 180, 60),
    "blue": (50, 90, 230),
    "yellow": (240, 210, 40),
    "orange": (245, 140, 30),
    "purple": (150, 60, 200),
    "white": (240, 240, 240),
    "cyan": (40, 200, 210),
}
BACKGROUNDS = {
    "black": (10, 10, 10),
    "navy": (20, 25, 60),
    "gray": (120, 120, 120),
    "cream": (235, 225, 200),
}
MOTIONS = ("left", "right", "up", "down", "still", "grow", "shrink", "bounce")
# Pitched sounds and their frequency in Hz; "clicks" and "silence" have none.
TONES = {"hum": 220.0, "tone": 440.0, "beep": 880.0}
SOUNDS = tuple(TONES) + ("clicks", "silence")
PANS = ("left", "center", "right")
TASKS = ("T2VA", "FL2VA", "Ref2VA")

# Constant-power pan positions: +-0.75 puts ~14 dB between the channels.
PAN_POSITION = {"left": -0.75, "center": 0.0, "right": 0.75}
TONE_AMPLITUDE = 0.3
CLICK_AMPLITUDE = 0.8
CLICK_HZ = 2500.0
CLICK_DECAY_S = 0.004
# Ramps at the clip's ends so a tone's start is not heard as a click.
FADE_S = 0.01
# Objects keep this many pixels from the edges and from each other, so a
# colour's pixels are one whole shape in every frame.
MARGIN = 3
SUPERSAMPLE = 4
# Half-extents as shares of the canvas's short side (ranges drawn
# uniformly). The video VAE packs each 16x16 patch into one latent cell,
# and a shape one or two cells wide comes back with its corners rounded
# off: through the VAE, triangles of 10-13 px half-extent (the sizes before
# the twelfth session) stayed triangles in 0-1 of 10 draws, of 24 px in 9
# (vae_shapes.py, README). So at the 128-px canvas a still shape spans
# about three cells, and grow and shrink pass through that size.
SIZE = (0.17, 0.21)
GROW_SIZE, GROW_SCALE = (0.11, 0.13), (1.6, 1.8)
SHRINK_SIZE, SHRINK_SCALE = (0.21, 0.25), (0.5, 0.6)
# Draws of a second object's path before a clip is drawn again.
SECOND_TRIES = 20

HELDOUT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heldout.json")


@dataclasses.dataclass(frozen=True)
class Thing:
    """One object. Its centre at frame t of F is (x0 + dx*u, y0 + dy*u - hop*
    |sin(pi*(t+phase)/period)|) with u = t/(F-1), its half-extent size0 *
    scale**u: every motion is a setting of these (left: dx < 0, grow: scale
    > 1, bounce: hop > 0 and the floor contacts where the sine is zero)."""

    shape: str
    colour: str
    motion: str
    x0: float
    y0: float
    size0: float
    dx: float = 0.0
    dy: float = 0.0
    scale: float = 1.0
    hop: float = 0.0
    period: float = 0.0
    phase: float = 0.0

    def at(self, t, frames):
        """Centre x, y and half-extent at frame t (a float)."""
        u = t / (frames - 1)
        y = self.y0 + self.dy * u
        if self.hop:
            y -= self.hop * abs(math.sin(math.pi * (t + self.phase) / self.period))
        return self.x0 + self.dx * u, y, self.size0 * self.scale**u

    def contacts(self, frames):
        """Frame times (floats) at which a bouncing object touches its floor."""
        if not self.hop:
            return []
        first = math.ceil(self.phase / self.period) * self.period - self.phase
        n = int(math.floor((frames - 1 - first) / self.period)) + 1
        return [first + k * self.period for k in range(max(n, 0))]

    def box(self, frames):
        """The bounding box (x0, y0, x1, y1) the object covers over the clip."""
        xs, ys = [], []
        for t in np.linspace(0, frames - 1, 4 * frames):
            cx, cy, h = self.at(float(t), frames)
            xs += [cx - h, cx + h]
            ys += [cy - h, cy + h]
        return min(xs), min(ys), max(xs), max(ys)


@dataclasses.dataclass(frozen=True)
class Clip:
    """One example's world: everything its frames, audio and prompt follow from."""

    width: int
    height: int
    frames: int
    background: str
    things: tuple
    sound: str
    pan: str
    task: str

    def audio_samples(self):
        return round(self.frames * SAMPLE_RATE / AUDIO_HOP / FPS) * AUDIO_HOP

    def to_json(self):
        d = dataclasses.asdict(self)
        d["things"] = [dataclasses.asdict(t) for t in self.things]
        return d

    @staticmethod
    def from_json(d):
        d = dict(d)
        d["things"] = tuple(Thing(**t) for t in d["things"])
        return Clip(**d)


def load_heldout(path=HELDOUT_PATH):
    """The held-out (colour, shape, motion) triples as a set of tuples."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    triples = {tuple(t) for t in doc["triples"]}
    for c, s, m in triples:
        if c not in COLOURS or s not in SHAPES or m not in MOTIONS:
            raise ValueError(f"{path}: unknown triple {c} {s} {m}; use the names in world.py")
    return triples


def triple(thing):
    return (thing.colour, thing.shape, thing.motion)


def sample_thing(rng, motion, frames, width, height):
    """A thing with the given motion whose whole path stays on the canvas."""
    side = min(width, height)
    size0 = rng.uniform(*SIZE) * side
    kw = {}
    if motion in ("left", "right", "up", "down"):
        travel = rng.uniform(0.3, 0.42) * side
        sign = -1 if motion in ("left", "up") else 1
        kw["dx" if motion in ("left", "right") else "dy"] = sign * travel
    elif motion == "grow":
        size0 = rng.uniform(*GROW_SIZE) * side
        kw["scale"] = rng.uniform(*GROW_SCALE)
    elif motion == "shrink":
        size0 = rng.uniform(*SHRINK_SIZE) * side
        kw["scale"] = rng.uniform(*SHRINK_SCALE)
    elif motion == "bounce":
        kw["hop"] = rng.uniform(0.22, 0.3) * side
        # At most 10.5 frames apart, so even a 22-frame clip has two contacts.
        kw["period"] = rng.uniform(8.0, 10.5)
        kw["phase"] = rng.uniform(0.0, kw["period"])
    thing = Thing(rng.choice(SHAPES), rng.choice(list(COLOURS)), motion, 0.0, 0.0, size0, **kw)
    x0, y0, x1, y1 = thing.box(frames)
    lo_x, hi_x = MARGIN - x0, width - MARGIN - x1
    lo_y, hi_y = MARGIN - y0, height - MARGIN - y1
    if lo_x > hi_x or lo_y > hi_y:
        return None
    return dataclasses.replace(thing, x0=rng.uniform(lo_x, hi_x), y0=rng.uniform(lo_y, hi_y))


def contacts_inside(thing, frames):
    """Contacts away from the clip's ends, where a track can show them."""
    return all(1.5 <= t <= frames - 2.5 for t in thing.contacts(frames))


def boxes_apart(a, b):
    return a[2] + MARGIN <= b[0] or b[2] + MARGIN <= a[0] or a[3] + MARGIN <= b[1] or b[3] + MARGIN <= a[1]


def valid(things, sound, frames, split, heldout):
    """The world's rules for a sampled clip (see sample_clip)."""
    if len({t.colour for t in things}) != len(things):
        return False
    if any(not contacts_inside(t, frames) for t in things):
        return False
    if sound == "clicks" and sum(t.motion == "bounce" for t in things) != 1:
        return False
    if len(things) == 2 and not boxes_apart(things[0].box(frames), things[1].box(frames)):
        return False
    held = [triple(t) in heldout for t in things]
    return held[0] if split == "heldout" else not any(held)


def sounds_for(things):
    """The sounds a clip may have: clicks follow a bouncing object, so they
    need exactly one (and are then as likely as the other sounds together)."""
    plain = list(TONES) + ["silence"]
    if sum(t.motion == "bounce" for t in things) == 1:
        return plain + ["clicks"] * len(plain)
    return plain


def second_thing(rng, things, frames, width, height, tries=SECOND_TRIES):
    """A thing whose path keeps apart from the first's: at the world's sizes
    two paths drawn independently meet in most draws, and a clip rejected
    for that would make two-object clips rare."""
    box = things[0].box(frames)
    for _ in range(tries):
        t = sample_thing(rng, rng.choice(MOTIONS), frames, width, height)
        if t is not None and boxes_apart(box, t.box(frames)):
            return t
    return None


def sample_clip(rng, split, heldout, task=None, canvas=CANVAS, two_share=None, task_shares=None):
    """A random clip of the split. Rules, enforced by rejection so every
    draw stays deterministic: distinct colours; the two objects' paths never
    meet; clicks only when exactly one object bounces; the train split never
    contains a held-out triple; a heldout clip's first object is one.
    two_share: the share of two-object clips, decided before the draws (a
    training option; the world's own share, about 15 %, is what rejection
    leaves of a third). task_shares: {task: weight} for the task's draw
    where none is given (a training option; the world's own: a third each)."""
    width, height = canvas
    if task is None and task_shares is not None:
        task = rng.choices(TASKS, weights=[task_shares.get(t, 0.0) for t in TASKS])[0]
    task = task or rng.choice(TASKS)
    two = None if two_share is None else rng.random() < two_share
    for _ in range(10000):
        frames = rng.choice(LENGTHS)
        count = rng.choice((1, 1, 2)) if two is None else 1 + two
        things = []
        for i in range(count):
            if split == "heldout" and i == 0:
                colour, shape, motion = rng.choice(sorted(heldout))
                t = sample_thing(rng, motion, frames, width, height)
                t = t and dataclasses.replace(t, colour=colour, shape=shape)
            else:
                t = second_thing(rng, things, frames, width, height) if things else \
                    sample_thing(rng, rng.choice(MOTIONS), frames, width, height)
            if t is None:
                break
            things.append(t)
        if len(things) != count:
            continue
        sound = rng.choice(sounds_for(things))
        if valid(things, sound, frames, split, heldout):
            background, pan = rng.choice(list(BACKGROUNDS)), rng.choice(PANS)
            return Clip(width, height, frames, background, tuple(things), sound, pan, task)
    raise RuntimeError(f"world: no valid {split} clip in 10000 draws; heldout.json may hold every combination")


# Paraphrases: each list's first entry is the canonical wording.
MOTION_WORDS = {
    "left": ["moves left", "slides to the left", "travels left"],
    "right": ["moves right", "slides to the right", "travels right"],
    "up": ["moves up", "rises", "floats upward"],
    "down": ["moves down", "sinks", "drops down"],
    "still": ["stays still", "sits still", "does not move"],
    "grow": ["grows", "gets bigger", "expands"],
    "shrink": ["shrinks", "gets smaller", "contracts"],
    "bounce": ["bounces", "bounces up and down", "hops"],
}
BACKGROUND_WORDS = ["on a {} background", "against a {} backdrop", "over a {} background"]
SOUND_WORDS = {
    "hum": ["a low hum", "a deep hum"],
    "tone": ["a middle tone", "a steady tone"],
    "beep": ["a high beep", "a high-pitched beep"],
    "clicks": ["clicks on each bounce", "a click at every bounce"],
}
SILENCE_WORDS = ["in silence", "with no sound"]
PAN_WORDS = {
    "left": ["on the left", "from the left"],
    "right": ["on the right", "from the right"],
    "center": ["in the center", "centered"],
}
PICTURE_WORDS = ["the object in Picture 1", "the shape from Picture 1", "the object shown in Picture 1"]


def article(word):
    return "an" if word[0] in "aeiou" else "a"


def prompt_for(clip, rng):
    """The clip's prompt, e.g. "a purple square moves right on a black
    background, a high beep on the left". Ref2VA names its first object only
    as Picture 1."""
    parts = []
    for i, t in enumerate(clip.things):
        if i == 0 and clip.task == "Ref2VA":
            noun = rng.choice(PICTURE_WORDS)
        else:
            noun = f"{article(t.colour)} {t.colour} {t.shape}"
        parts.append(f"{noun} {rng.choice(MOTION_WORDS[t.motion])}")
    scene = " and ".join(parts) + " " + rng.choice(BACKGROUND_WORDS).format(clip.background)
    if clip.sound == "silence":
        return f"{scene}, {rng.choice(SILENCE_WORDS)}"
    return f"{scene}, {rng.choice(SOUND_WORDS[clip.sound])} {rng.choice(PAN_WORDS[clip.pan])}"


def recoloured(prompt, mapping):
    """The prompt with the colour words in mapping ({old: new}) changed,
    each with its article ("a red" -> "an orange"): a wrong article would
    tell a changed prompt from a written one."""
    def sub(m):
        new = mapping[m.group(2)]
        return f"{article(new)} {new}"
    return re.sub(r"\b(a|an) (%s)\b" % "|".join(map(re.escape, mapping)), sub, prompt)


def binding_negative(clip, prompt):
    """A two-object clip's prompt with its colours bound to the wrong shapes
    and every other word kept: T2VA's two colours exchanged, Ref2VA's second
    object given Picture 1's colour (what the renders draw instead, README:
    eighteenth session). None for one object, and for FL2VA, whose anchors
    draw both objects."""
    if len(clip.things) != 2 or clip.task == "FL2VA":
        return None
    a, b = clip.things[0].colour, clip.things[1].colour
    return recoloured(prompt, {a: b, b: a} if clip.task == "T2VA" else {b: a})


def coverage(shape, cx, cy, h, xs, ys):
    """Fraction of each pixel the shape covers, from SUPERSAMPLE^2 samples;
    xs, ys are the sample coordinates (pixel centres at +0.5)."""
    dx, dy = xs - cx, ys - cy
    if shape == "circle":
        inside = dx * dx + dy * dy <= h * h
    elif shape == "square":
        inside = (np.abs(dx) <= h) & (np.abs(dy) <= h)
    else:  # triangle: apex up, base down, as wide as it is tall
        inside = (dy <= h) & (np.abs(dx) <= (dy + h) / 2)
    s = SUPERSAMPLE
    return inside.reshape(inside.shape[0] // s, s, inside.shape[1] // s, s).mean(axis=(1, 3))


def draw(canvas, shape, colour, cx, cy, h):
    """Blends one shape into a float [H,W,3] canvas, touching only its box."""
    height, width = canvas.shape[:2]
    x0, x1 = max(int(cx - h) - 1, 0), min(int(cx + h) + 2, width)
    y0, y1 = max(int(cy - h) - 1, 0), min(int(cy + h) + 2, height)
    if x0 >= x1 or y0 >= y1:
        return
    s = SUPERSAMPLE
    xs = x0 + (np.arange((x1 - x0) * s) + 0.5) / s
    ys = y0 + (np.arange((y1 - y0) * s) + 0.5) / s
    a = coverage(shape, cx, cy, h, xs[None, :], ys[:, None])[..., None]
    region = canvas[y0:y1, x0:x1]
    region[:] = region * (1 - a) + np.asarray(colour, np.float64) * a


def render_frames(clip):
    """uint8 [F,H,W,3]."""
    out = np.empty((clip.frames, clip.height, clip.width, 3), np.uint8)
    bg = np.asarray(BACKGROUNDS[clip.background], np.float64)
    for f in range(clip.frames):
        canvas = np.broadcast_to(bg, (clip.height, clip.width, 3)).copy()
        for t in clip.things:
            draw(canvas, t.shape, COLOURS[t.colour], *t.at(float(f), clip.frames))
        out[f] = np.clip(np.rint(canvas), 0, 255).astype(np.uint8)
    return out


def one_shape(width, height, background, shape, colour, cx, cy, h):
    """One shape (names of the world's) alone on a plain background. uint8 [H,W,3]."""
    canvas = np.broadcast_to(np.asarray(BACKGROUNDS[background], np.float64), (height, width, 3)).copy()
    draw(canvas, shape, COLOURS[colour], cx, cy, h)
    return np.clip(np.rint(canvas), 0, 255).astype(np.uint8)


def render_picture(clip):
    """Ref2VA's Picture 1: the first object alone, centred and large, on the
    clip's background. uint8 [H,W,3]."""
    t = clip.things[0]
    return one_shape(clip.width, clip.height, clip.background, t.shape, t.colour,
                     clip.width / 2, clip.height / 2, 0.3 * min(clip.width, clip.height))


def render_audio(clip):
    """float32 [2,N] at 32 kHz: the clip's sound, constant-power panned."""
    n = clip.audio_samples()
    t = np.arange(n) / SAMPLE_RATE
    mono = np.zeros(n)
    if clip.sound in TONES:
        mono = TONE_AMPLITUDE * np.sin(2 * np.pi * TONES[clip.sound] * t)
        fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / FADE_S)
        mono *= fade
    elif clip.sound == "clicks":
        bouncer = next(th for th in clip.things if th.motion == "bounce")
        for c in bouncer.contacts(clip.frames):
            dt = t - c / FPS
            on = dt >= 0
            mono[on] += CLICK_AMPLITUDE * np.exp(-dt[on] / CLICK_DECAY_S) * np.sin(2 * np.pi * CLICK_HZ * dt[on])
    theta = (PAN_POSITION[clip.pan] + 1) * np.pi / 4
    return np.stack([mono * np.cos(theta), mono * np.sin(theta)]).astype(np.float32)


def example(seed, index, split, heldout, task=None, canvas=CANVAS, two_share=None, task_shares=None):
    """Example `index` of a dataset seeded `seed`: (meta, arrays). Seeding by
    the string keeps each example independent of the count asked for."""
    rng = random.Random(f"demo-world:{seed}:{split}:{index}")
    clip = sample_clip(rng, split, heldout, task, canvas, two_share, task_shares)
    prompt = prompt_for(clip, rng)
    meta = {"id": f"{split}-{seed}-{index:06d}", "task": clip.task, "prompt": prompt, "spec": clip.to_json()}
    arrays = {"frames": render_frames(clip), "audio": render_audio(clip)}
    if clip.task == "FL2VA":
        arrays["anchors"] = np.stack([arrays["frames"][0], arrays["frames"][-1]])
    elif clip.task == "Ref2VA":
        arrays["picture"] = render_picture(clip)
    return meta, arrays


def parse_canvas(text):
    """WxH with both sides multiples of the DiT's 32-px cell."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"canvas {text!r} is not WxH, e.g. 128x128") from None
    if w < 32 or h < 32 or w % 32 or h % 32:
        raise argparse.ArgumentTypeError(
            f"canvas {text}: width and height must be multiples of 32 (the model's cell), e.g. 128x128"
        )
    return w, h


def parse_task_shares(text):
    """"t2va=0.3,fl2va=0.2,ref2va=0.5" (any case, weights need not add up
    to one) -> {task: weight}; a task left out is never drawn."""
    names = {t.lower(): t for t in TASKS}
    shares = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        task = names.get(name.strip().lower())
        try:
            value = float(weight)
        except ValueError:
            value = -1.0
        if task is None or task in shares or not (0 <= value < math.inf):
            raise argparse.ArgumentTypeError(
                f"task shares {text!r}: name each of {', '.join(names)} at most once, as name=weight, "
                "e.g. t2va=0.35,fl2va=0.25,ref2va=0.4")
        shares[task] = value
    if sum(shares.values()) <= 0:
        raise argparse.ArgumentTypeError(f"task shares {text!r}: at least one weight must be over 0")
    return shares


def write(out, split, count, seed, task=None, canvas=CANVAS):
    heldout = load_heldout()
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "examples.jsonl"), "w", encoding="utf-8") as index:
        for i in range(count):
            meta, arrays = example(seed, i, split, heldout, task, canvas)
            np.savez_compressed(os.path.join(out, meta["id"] + ".npz"), **arrays)
            index.write(json.dumps(meta) + "\n")


def object_cells(frames, background, latent_t, cell=16):
    """Which latent cells a clip's shapes cover, [latent_t, H/cell, W/cell]
    in {0, 1}: a pixel is a shape's where a channel differs from the plain
    background by more than 12 (of 255), a latent step covers its share of
    the frames in order, a cell its cell x cell pixels. The world's shapes
    fill a part of the 64 cells of a 128x128 frame (a tenth to two thirds
    of a clip's), so an unweighted loss is mostly the background's (the first DiT run drew the background and
    faint shapes): train_dit.py weighs the shapes' cells up."""
    f, h, w = frames.shape[:3]
    # per channel, a table of the 256 values far from the background's:
    # three lookups on the uint8 frames take a third of the time of their
    # int16 difference, and train_dit.py makes this for every example
    px = np.zeros((f, h, w), bool)
    for c in range(3):
        px |= (np.abs(np.arange(256) - int(background[c])) > 12)[frames[..., c]]
    return pixel_cells(px, latent_t, cell)


def pixel_cells(px, latent_t, cell=16):
    """Which latent cells hold any of the marked pixels px [F, H, W]: a
    latent step covers its share of the frames in order, a cell its cell x
    cell pixels ([latent_t, H/cell, W/cell] in {0, 1})."""
    f, h, w = px.shape
    cells = px.reshape(f, h // cell, cell, w // cell, cell).any(axis=(2, 4))
    return np.stack([part.any(0) for part in np.array_split(cells, latent_t, axis=0)]).astype(np.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for examples.jsonl and the .npz files")
    p.add_argument("--split", choices=("train", "heldout"), default="train")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--task", choices=TASKS, help="only this task (default: a random mix)")
    p.add_argument("--canvas", type=parse_canvas, default=CANVAS, help="WxH, multiples of 32 (default 128x128)")
    a = p.parse_args()
    write(a.out, a.split, a.count, a.seed, a.task, a.canvas)


if __name__ == "__main__":
    main()
