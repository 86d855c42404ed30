#!/usr/bin/env python3
"""Capacity probe for the demo model's video VAE: how far it overfits a
handful of world pictures (FL2VA anchors and Ref2VA pictures alike), on
the CPU, from the snapshot's weights with train_vae.py's own loss.

  python3 tools/train/overfit_vae.py --pictures 8 --steps 400 --lr 2e-3

A decoder that cannot fit eight pictures well cannot fit the world: the
figure to beat is the PSNR train_vae.py reaches on fresh examples. Prints
the whole picture's PSNR and the shapes' alone (pixels off the
background, object_weight's mask) every 25 steps; writes nothing.
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import demo  # noqa: E402
import train_vae  # noqa: E402


def psnrs(vae, x, target):
    with torch.no_grad():
        y = vae.decode(vae.encode(x))
    mask = train_vae.object_weight(target, 1.0) - 1
    shape_mse = (((y - target) ** 2) * mask).sum().item() / max(1.0, 3 * mask.sum().item())
    return -10 * math.log10(F.mse_loss(y, target).item()), -10 * math.log10(max(shape_mse, 1e-10))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--pictures", type=int, default=8)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--boost", type=float, default=9.0)
    a = p.parse_args()
    torch.manual_seed(0)
    train_vae.intermediate_on("cpu")
    vae = demo.build_video_vae(demo.part_dir(a.snapshot), device="cpu")
    vae.latents_mean.zero_()  # as train_vae's loop: raw latents
    vae.latents_std.fill_(1.0)
    vae.train().requires_grad_(True)
    x, target = train_vae.picture_batch(list(data.stream(5, "train", count=a.pictures, workers=1)), "cpu")
    opt = torch.optim.AdamW(vae.parameters(), lr=a.lr)
    t0 = time.time()
    for step in range(a.steps + 1):
        if step % 25 == 0:
            whole, shapes = psnrs(vae, x, target)
            print(f"step {step:4d}  {time.time() - t0:5.0f} s  PSNR {whole:5.2f} dB  shapes {shapes:5.2f} dB", flush=True)
        loss, _ = train_vae.video_loss(vae, x, target, 0.0, a.boost, False)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(vae.parameters(), 1.0)
        opt.step()


if __name__ == "__main__":
    main()
