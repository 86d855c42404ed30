#!/usr/bin/env python3
"""Capacity probe for the demo model's VAEs: how far one overfits a handful
of world examples, on the CPU, with train_vae.py's own loss.

  python3 tools/train/overfit_vae.py video --count 8 --steps 300 --lr 2e-3 --fresh
  python3 tools/train/overfit_vae.py audio --count 4 --steps 300 --lr 1e-3 --fresh

A VAE that cannot fit eight examples well cannot fit the world. Video: world
pictures (FL2VA anchors and Ref2VA pictures alike); prints the PSNR of the
whole picture and of the shapes alone (pixels off the background,
object_weight's mask), and how many pictures keep their object's shape
as eval.py's Picture 1 check reads it. Audio: one-second stereo crops; prints the loss and
how many reconstructions keep their sound (measure.sound_of: silence,
clicks or the tone within a semitone) and their pan (measure.pan_of).
--fresh starts from new weights at demo.py's config (in a temporary copy
of the snapshot); without it, from the snapshot's. --freeze-encoder
trains the decoder alone; --decoder-heads N gives the video VAE a new ViT
decoder of N heads of 64 on the snapshot's encoder (how far a wider
decoder gets on the snapshot's latents); with --fresh, --encoder-ch C,
--encoder-blocks N and --encoder-mult a,b,c,d give the new video VAE's
convolutional encoder C base channels, N residual blocks a stage and the
stages' multipliers (the snapshot's: 64, 1, 1,1,1,2); --pca-pull W adds
train_vae.py's pull of the latents to PCA codes; --heldout N also reports the
PSNR of N pictures it does not train on. --device cuda runs it on the GPU
machine (on the two CPU cores, 64 pictures at 512 wide take 7 s a step).
Writes nothing.
"""

import argparse
import math
import os
import random
import shutil
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import demo  # noqa: E402
import head_rank  # noqa: E402
import measure  # noqa: E402
import train_vae  # noqa: E402


def shapes_kept(y, target):
    """How many pictures come back with their object's colour and shape,
    by eval.py's own Picture 1 check (measure.picture_kept)."""
    def uint8(t):  # [B, 3, 1, H, W] in [0, 1] -> [B, H, W, 3]
        return (t.detach().float().cpu()[:, :, 0] * 255).round().clamp(0, 255).byte().permute(0, 2, 3, 1).numpy()
    pairs = list(zip(uint8(y), uint8(target)))
    kept = sum(measure.picture_kept(want, measure.labels(got[None])) for got, want in pairs)
    return f"{kept}/{len(pairs)}"


def video_probe(vae, x, target):
    with torch.no_grad():
        y = vae.decode(vae.encode(x))
    mask = train_vae.object_weight(target, 1.0) - 1
    shape_mse = (((y - target) ** 2) * mask).sum().item() / max(1.0, 3 * mask.sum().item())
    whole = -10 * math.log10(F.mse_loss(y, target).item())
    return (f"PSNR {whole:5.2f} dB  shapes {-10 * math.log10(max(shape_mse, 1e-10)):5.2f} dB"
            f"  shape kept {shapes_kept(y, target)}")


def audio_probe(avae, x):
    with torch.no_grad():
        y = avae.decode(avae.encode(x))
    _, rec = train_vae.audio_loss(avae, x, 0.0)
    x, y = x.cpu(), y.cpu()
    pairs = [((measure.sound_of(a.numpy()), measure.pan_of(a.numpy())),
              (measure.sound_of(b.numpy()), measure.pan_of(b.numpy()))) for a, b in zip(x, y)]
    sound = sum(want[0] == got[0] for want, got in pairs)
    pan = sum(want[1] == got[1] for want, got in pairs)
    # which crops went wrong, and how: a collapse shows as one answer for all
    missed = " ".join(f"{w[0]}/{w[1]}->{g[0]}/{g[1]}" for w, g in pairs if w != g)
    return (f"loss {float(rec):6.3f}  sound kept {sound}/{len(x)}  pan kept {pan}/{len(x)}"
            f"  rms {float(y.pow(2).mean().sqrt()):.3f}  {missed}")


def silence_check(x):
    """The reconstruction loss of a silent output against that of the crops
    themselves with white noise 43 dB under a tone: a loss that scores
    silence lower trains a decoder towards silence."""
    g = torch.Generator().manual_seed(0)
    noisy = x + 1e-3 * torch.randn(x.shape, generator=g).to(x.device)
    quiet, near = (float(train_vae.audio_rec(y, x)) for y in (torch.zeros_like(x), noisy))
    return f"loss of silence {quiet:.3f}, of the crops + noise at 1e-3 {near:.3f}"


def build(a, snap):
    train_vae.intermediate_on(a.device)
    part = demo.part_dir(snap)
    if a.which == "video":
        vae = demo.build_video_vae(part, device=a.device)
        exs = list(data.stream(5, "train", count=a.count + a.heldout, workers=1))
        x, target = train_vae.picture_batch(exs[:a.count], a.device)
        probe = (lambda: video_probe(vae, x, target))
        if a.heldout:
            hx, ht = train_vae.picture_batch(exs[a.count:], a.device)
            probe = (lambda: video_probe(vae, x, target) + "  other pictures: " + video_probe(vae, hx, ht))
        codes = train_vae.pulled_codes(head_rank.PictureCode(), target) if a.pca_pull else None
        return vae, lambda: train_vae.video_loss(vae, x, target, 0.0, a.boost, False, codes, a.pca_pull)[0], probe
    avae = demo.build_audio_vae(part, device=a.device)
    exs = list(data.stream(5, "train", count=a.count, workers=1, audio_only=True))
    x = train_vae.audio_batch(exs, random.Random(5), a.device)
    print(silence_check(x), flush=True)
    return avae, lambda: train_vae.audio_loss(avae, x, 0.0)[0], lambda: audio_probe(avae, x)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("which", choices=("video", "audio"))
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--fresh", action="store_true", help="new weights at demo.py's config")
    p.add_argument("--count", type=int, default=8, help="examples to overfit")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--boost", type=float, default=9.0, help="video: extra weight on the shapes' pixels")
    p.add_argument("--freeze-encoder", action="store_true", help="train the decoder alone (video: on the snapshot's encoder)")
    demo.add_decoder_args(p)
    head_rank.add_pull_arg(p)
    demo.add_encoder_args(p)
    p.add_argument("--device", default="cpu", help="cpu (the probe's home), or cuda on the GPU machine")
    p.add_argument("--heldout", type=int, default=0, help="video: also the PSNR of this many other pictures")
    a = p.parse_args()
    encoder = demo.encoder_from_args(p, a)
    torch.manual_seed(0)
    tmp = tempfile.mkdtemp() if a.fresh or a.decoder_heads else None
    try:
        snap = a.snapshot
        if tmp:
            snap = os.path.join(tmp, "snapshot")
            shutil.copytree(a.snapshot, snap)
        if a.decoder_heads:
            demo.new_decoder(snap, a.decoder_heads)
        elif a.fresh:
            demo.fresh_vae(a.which, snap, encoder)
        vae, loss_fn, probe = build(a, snap)
        vae.latents_mean.zero_()  # as train_vae's loop: raw latents
        vae.latents_std.fill_(1.0)
        vae.train().requires_grad_(True)
        if a.freeze_encoder:  # the decoder alone learns, from fixed latents
            frozen = (vae.encoder, vae.quant_conv) if a.which == "video" else (vae.encoder, vae.pre_block, vae.mean_proj)
            for m in frozen:
                m.requires_grad_(False)
        opt = torch.optim.AdamW([q for q in vae.parameters() if q.requires_grad], lr=a.lr)
        t0 = time.time()
        for step in range(a.steps + 1):
            if step % 25 == 0:
                print(f"step {step:4d}  {time.time() - t0:5.0f} s  {probe()}", flush=True)
            loss = loss_fn()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(vae.parameters(), 1.0)
            opt.step()
    finally:
        if tmp:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
