#!/usr/bin/env python3
"""How large a shape must be for the video VAE to keep it: the share of
circles, squares and triangles that measure.py still reads as their shape
after a still clip of one of them goes through the VAE alone, by size.

  python3 tools/train/vae_shapes.py --snapshot FULL --sizes 10,13,16,20,24 --count 10

Each draw: one shape of the world (a random colour, background and place,
the given half-extent in pixels) on the world's canvas (128x128), held for 8
frames, through the reference encode and decode (CPU), then shape_in over
the decoded frames as measure.picture_kept reads a Ref2VA clip. The VAE
packs each 16x16 patch into one latent cell, so a shape of one or two cells
loses its corners: this says at which size the world's shapes survive,
which caps Ref2VA's "colour and shape kept" whatever the DiT learns.
"""

import argparse
import os
import random
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402
import measure  # noqa: E402
import world  # noqa: E402
from vae_ceiling import all_frames  # noqa: E402

SIDE = world.CANVAS[0]
FRAMES = 8


def still_clip(rng, shape, half):
    """(uint8 [FRAMES, SIDE, SIDE, 3], colour name): one shape held still."""
    colour = rng.choice(list(world.COLOURS))
    background = rng.choice(list(world.BACKGROUNDS))
    cx, cy = rng.uniform(half + 4, SIDE - half - 4), rng.uniform(half + 4, SIDE - half - 4)
    frame = world.one_shape(SIDE, SIDE, background, shape, colour, cx, cy, half)
    return np.repeat(frame[None], FRAMES, 0), colour


def kept(vae, frames, colour, shape):
    with torch.no_grad():
        decoded = demo.R.vae_decode(vae, demo.R.vae_encode(vae, frames))
    return measure.shape_in(measure.labels(all_frames(decoded)), colour) == shape


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT, help="a snapshot in the full layout")
    p.add_argument("--sizes", default="10,13,16,20,24", help="half-extents in pixels, comma separated")
    p.add_argument("--count", type=int, default=10, help="draws per shape and size")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    vae = demo.R.load_video_vae(os.path.join(demo.part_dir(a.snapshot), "video_vae"))
    rng = random.Random(a.seed)
    for half in (float(s) for s in a.sizes.split(",")):
        shares = []
        for shape in world.SHAPES:
            hits = 0
            for _ in range(a.count):
                frames, colour = still_clip(rng, shape, half)
                hits += kept(vae, frames, colour, shape)
            shares.append(f"{shape} {hits}/{a.count}")
        print(f"half-extent {half:4.0f} px ({half / SIDE:.2f} of the side): " + ", ".join(shares), flush=True)


if __name__ == "__main__":
    main()
