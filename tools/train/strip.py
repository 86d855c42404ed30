#!/usr/bin/env python3
"""A strip of frames for the README: five prompts of the demo world, one
per kind of motion (travel, still, grow, shrink, bounce), rendered with our
Go engine as the README's first command renders (the demo model's own
canvas, length and steps), six frames across each clip in a row under its
prompt.

  python3 strip.py [--binary bin/h3studio] [--out strip-out] [--png docs/demo-strip.png]

Renders stay in --out and are reused while the binary and request are the
same (eval.py's records), so a rerun after new weights renders again.
Needs Pillow for the captions (python3-pil).
"""

import argparse
import os

import numpy as np

import clipio
import eval as ev
import world

# (colour, shape, motion, background, sound, pan): combinations seen in
# training (none is held out), each colour, background and sound varied.
SCENES = [
    ("red", "circle", "right", "navy", "beep", "left"),
    ("yellow", "square", "still", "gray", "hum", "center"),
    ("cyan", "triangle", "grow", "black", "tone", "right"),
    ("green", "circle", "shrink", "cream", "silence", "center"),
    ("purple", "square", "bounce", "black", "clicks", "center"),
]
FRAMES_PER_ROW = 6
# Render seeds of the five prompts: fixed, so the strip is reproducible.
SEED_BASE = 7
GAP, CAPTION = 4, 20
PAPER, INK = (28, 28, 30), (230, 230, 230)


class Canonical:
    """Stands in for world.prompt_for's random source: the first (the
    canonical) wording of every phrase."""

    @staticmethod
    def choice(options):
        return options[0]


def prompt(scene):
    """The scene's prompt in the world's own words."""
    colour, shape, motion, background, sound, pan = scene
    thing = world.Thing(shape, colour, motion, 0.0, 0.0, 0.0)
    clip = world.Clip(*world.CANVAS, 56, background, (thing,), sound, pan, "T2VA")
    return world.prompt_for(clip, Canonical)


def frames_across(frames, count=FRAMES_PER_ROW):
    """count frames evenly spaced from the first to the last."""
    idx = np.linspace(0, len(frames) - 1, count).round().astype(int)
    return [frames[i] for i in idx]


def compose(rows, font):
    """rows: [(caption, [uint8 [H,W,3]])] -> a PIL image, each row's
    caption above its frames."""
    from PIL import Image, ImageDraw

    h, w, _ = rows[0][1][0].shape
    n = len(rows[0][1])
    width = GAP + n * (w + GAP)
    height = GAP + len(rows) * (CAPTION + h + GAP)
    sheet = Image.new("RGB", (width, height), PAPER)
    draw = ImageDraw.Draw(sheet)
    for r, (caption, frames) in enumerate(rows):
        y = GAP + r * (CAPTION + h + GAP)
        draw.text((GAP, y + 2), caption, fill=INK, font=font)
        for c, f in enumerate(frames):
            sheet.paste(Image.fromarray(f), (GAP + c * (w + GAP), y + CAPTION))
    return sheet


def caption_font():
    try:
        from PIL import ImageFont
    except ImportError:
        raise SystemExit("strip: the captions need Pillow; install python3-pil (Debian) or pip3 install pillow") from None
    try:
        return ImageFont.truetype("DejaVuSans.ttf", 13)
    except OSError:
        return ImageFont.load_default()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ev.ROOT, "bin", "h3studio"), help="the h3studio to render with (make build)")
    p.add_argument("--out", default="strip-out", help="folder for the renders and their records")
    p.add_argument("--png", default=os.path.join(ev.ROOT, "docs", "demo-strip.png"), help="the strip to write")
    a = p.parse_args()
    font = caption_font()
    if not os.access(a.binary, os.X_OK):
        raise SystemExit(f"strip: no h3studio at {a.binary}; run make build or pass --binary")
    held = world.load_heldout()
    os.makedirs(a.out, exist_ok=True)
    digest = ev.file_digest(a.binary)
    rows = []
    for i, scene in enumerate(SCENES):
        if scene[:3] in held:
            raise SystemExit(f"strip: {scene[:3]} is held out of training (heldout.json); pick a trained combination")
        text, name = prompt(scene), f"strip-{i}"
        args = ["render", "-p", text, "--seed", str(SEED_BASE + i), "-o", os.path.join(a.out, name + ".mp4")]
        key = ev.render_key(digest, args)
        seconds = ev.cached_seconds(a.out, name, key)
        if seconds is None:
            seconds = ev.render(a.binary, args, [], a.out, name, key)
        print(f"{name}: {seconds:.1f} s  {text}")
        frames, _ = clipio.read_mp4(os.path.join(a.out, name + ".mp4"))
        rows.append((text, frames_across(frames)))
    compose(rows, font).save(a.png)
    print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
