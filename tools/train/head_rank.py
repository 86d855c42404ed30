#!/usr/bin/env python3
"""What a linear code of W numbers a latent cell gets out of the demo world:
the yardstick for the video VAE's plateau.

  python3 tools/train/head_rank.py --widths 24,96,256

The reference decoder (ComfyUI vae.py, ViT3DDecoder) draws each latent
cell's patch (16x16 pixels, 4 frames, RGB: 3,072 values) as proj_out of
its token's layer norm, an affine map: every patch a decoder of width W
draws lies in an affine subspace of dimension W at most. The patches'
mean and first W principal components span the subspace that loses
least on the examples they are fitted on, so their rebuild shows whether
the width can be what limits the decoder (W = the width), and, at W = 24,
what the VAE's 24 latent channels a cell carry when encoder and decoder
are no more than linear. The components are fitted on training-split
world examples (pictures as one frame, as the VAE decodes a picture;
clips as the first frame alone, then groups of four, as its latent
frames), and rebuild the held-out split's FL2VA anchors and whole clips,
scored as eval.py scores a render: the first-frame PSNR, colour and
direction, Picture 1's colour and shape. numpy only; a few minutes a
width on two cores.

With --snapshot, also what that snapshot's video VAE encoder keeps:
the anchors read out of its latents by the best affine map (readout),
against what its decoder draws (vae_ceiling.py), and how near its
latents sit to --pca-pull's target (torch, two more minutes).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import eval as ev  # noqa: E402
import measure  # noqa: E402

CELL, GROUP = 16, 4
# The training pictures PictureCode is fitted on, and readout with it.
PULL_COUNT, PULL_SEED = 300, 11


def patches(frames):
    """uint8 [F, H, W, 3] (F = 1 or 4) -> float [cells, F*16*16*3] in [0, 1]."""
    f, h, w, c = frames.shape
    x = frames.reshape(f, h // CELL, CELL, w // CELL, CELL, c).transpose(1, 3, 0, 2, 4, 5)
    return x.reshape(-1, f * CELL * CELL * c).astype(np.float64) / 255.0


def unpatch(rows, f, h, w):
    x = rows.reshape(h // CELL, w // CELL, f, CELL, CELL, 3).transpose(2, 0, 3, 1, 4, 5)
    return np.rint(np.clip(x.reshape(f, h, w, 3), 0, 1) * 255).astype(np.uint8)


def groups(frames):
    """A clip as the VAE's latent frames see it: the first frame, then fours
    (the last one padded with copies of the clip's last frame)."""
    out = [frames[:1]]
    for i in range(1, frames.shape[0], GROUP):
        g = frames[i:i + GROUP]
        out.append(np.concatenate([g, np.repeat(g[-1:], GROUP - g.shape[0], axis=0)]) if g.shape[0] < GROUP else g)
    return out


def picture_of(arr):
    """An example's picture as the VAE sees one (train_vae.picture_batch's
    choice): Picture 1 where it has one, else its first frame; [1, H, W, 3]."""
    return arr["picture"][None] if "picture" in arr else arr["frames"][:1]


class Basis:
    """Running mean and covariance of patches, then their principal axes."""

    def __init__(self, dim):
        self.n, self.s, self.ss = 0, np.zeros(dim), np.zeros((dim, dim))

    def add(self, rows):
        self.n += rows.shape[0]
        self.s += rows.sum(0)
        self.ss += rows.T @ rows

    def fit(self):
        """mean, and axes with their variances (vals), largest first."""
        self.mean = self.s / self.n
        cov = self.ss / self.n - np.outer(self.mean, self.mean)
        vals, vecs = np.linalg.eigh(cov)
        self.vals, self.axes = vals[::-1], vecs[:, ::-1]

    def rebuild(self, rows, width):
        a = self.axes[:, :width]
        return self.mean + ((rows - self.mean) @ a) @ a.T


class PictureCode:
    """The pull train_vae.py's --pca-pull gives a fresh video VAE: each
    latent cell of a picture drawn towards the first 24 principal
    components of world pictures' cells, whitened (unit variance, as the
    VAE's normalised latents). A linear code of that size already beats
    the VAE trained without it (README), and a target per cell is learnt
    faster than a code found through the decoder alone."""

    def __init__(self, count=PULL_COUNT, seed=PULL_SEED, width=24):
        basis = Basis(CELL * CELL * 3)
        for meta, arr in data.stream(seed, "train", count=count, workers=2):
            basis.add(patches(picture_of(arr)))
        basis.fit()
        self.mean, self.width = basis.mean, width
        self.proj = basis.axes[:, :width] / np.sqrt(basis.vals[:width])

    def __call__(self, pictures):
        """uint8 [B, H, W, 3] -> float32 [B, width, 1, H/16, W/16]."""
        b, h, w, _ = pictures.shape
        rows = np.concatenate([patches(p[None]) for p in pictures])
        c = ((rows - self.mean) @ self.proj).reshape(b, h // CELL, w // CELL, self.width)
        return c.transpose(0, 3, 1, 2)[:, :, None].astype(np.float32)


def readout(encode, train_pictures, anchors, code=None):
    """What an encoder's latents hold, whatever its decoder draws: the
    least-squares affine map from a cell's latent to its patch, fitted on
    training pictures; returns (the held-out anchors' PSNR through it, the
    R^2 of each of PictureCode's whitened codes read the same way from the
    latents: how near --pca-pull has drawn them). encode: uint8 [H, W, 3]
    -> [cells, channels], cells in patches' order."""
    lat = lambda p: np.c_[encode(p), np.ones(p.shape[0] * p.shape[1] // CELL ** 2)]  # noqa: E731
    x = np.concatenate([lat(p) for p in train_pictures])
    pix = np.linalg.lstsq(x, np.concatenate([patches(p[None]) for p in train_pictures]), rcond=None)[0]
    code = code or PictureCode()
    c = np.concatenate([code(p[None])[0, :, 0].reshape(code.width, -1).T for p in train_pictures])
    err = x @ np.linalg.lstsq(x, c, rcond=None)[0] - c
    r2 = 1 - (err ** 2).sum(0) / ((c - c.mean(0)) ** 2).sum(0)
    return [measure.psnr(unpatch(lat(a) @ pix, 1, *a.shape[:2])[0], a) for a in anchors], r2


def vae_encoder(snapshot):
    """A snapshot's video VAE as readout's encode (the reference encode of a
    picture, CPU; torch only here, so the rest stays numpy)."""
    import torch

    import demo
    torch.set_num_threads(1)
    vae = demo.build_video_vae(demo.part_dir(snapshot), device="cpu")

    def encode(picture):
        with torch.no_grad():
            z = np.asarray(demo.R.vae_encode(vae, picture[None]).float(), dtype=np.float64)
        return z.reshape(z.shape[0], -1).T
    return encode


def add_pull_arg(p):
    """--pca-pull, for train_vae.py and overfit_vae.py alike."""
    p.add_argument("--pca-pull", type=float, default=0.0,
                   help="video: weight of a pull of pictures' latents to their whitened PCA codes (head_rank.PictureCode)")


def fit(count, seed):
    one, four = Basis(CELL * CELL * 3), Basis(GROUP * CELL * CELL * 3)
    for meta, arr in data.stream(seed, "train", count=count, workers=2):
        one.add(patches(picture_of(arr)))
        for g in groups(arr["frames"]):
            (one if g.shape[0] == 1 else four).add(patches(g))
    one.fit()
    four.fit()
    return one, four


def rebuilt_clip(frames, one, four, width):
    out = []
    for g in groups(frames):
        basis = one if g.shape[0] == 1 else four
        out.append(unpatch(basis.rebuild(patches(g), width), g.shape[0], *frames.shape[1:3]))
    return np.concatenate(out)[:frames.shape[0]]


def report(width, one, four, examples):
    anchors, right, kept = [], [], []
    for meta, arr in examples:
        if meta["task"] == "FL2VA":
            a = arr["anchors"][0]
            anchors.append(measure.psnr(unpatch(one.rebuild(patches(a[None]), width), 1, *a.shape[:2])[0], a))
        checks = measure.score(meta, dict(arr, frames=rebuilt_clip(arr["frames"], one, four, width)))
        right.append(checks["colour"] and checks["motion"])
        if checks.get("picture") is not None:
            kept.append(checks["picture"])
    print(f"width {width:4d}: FL2VA anchors median {np.median(anchors):5.1f} dB, "
          f"{sum(p >= 25 for p in anchors)} of {len(anchors)} at 25 dB; clips: colour and direction right "
          f"{ev.percent(right)}, Picture 1 kept {ev.percent(kept)}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--widths", default="24,96,256")
    p.add_argument("--train", type=int, default=20, help="training-split examples the components are fitted on")
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--out", default="/tmp/head-rank", help="where eval.py's held-out examples are made (or found)")
    p.add_argument("--snapshot", default="", help="also what this snapshot's video VAE latents hold (readout)")
    a = p.parse_args()
    one, four = fit(a.train, a.seed)
    examples = ev.examples(os.path.join(a.out, "examples"), ev.HELDOUT_COUNT, ev.HELDOUT_SEED)
    if a.snapshot:
        train = [picture_of(arr)[0] for _, arr in data.stream(PULL_SEED, "train", count=PULL_COUNT, workers=2)]
        anchors = [arr["anchors"][0] for meta, arr in examples if meta["task"] == "FL2VA"]
        got, r2 = readout(vae_encoder(a.snapshot), train, anchors)
        print(f"{a.snapshot}: its latents read out linearly: FL2VA anchors median {np.median(got):5.1f} dB, "
              f"{sum(p >= 25 for p in got)} of {len(got)} at 25 dB; PictureCode's codes R^2 "
              f"{np.mean(r2):.3f} (first four {', '.join(f'{v:.3f}' for v in r2[:4])})", flush=True)
    for w in (int(x) for x in a.widths.split(",")):
        report(w, one, four, examples)


if __name__ == "__main__":
    main()
