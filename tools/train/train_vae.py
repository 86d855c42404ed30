#!/usr/bin/env python3
"""Train the demo model's video VAE or audio VAE on the demo world.

  python3 tools/train/train_vae.py video --minutes 4 --log video.jsonl
  python3 tools/train/train_vae.py audio --minutes 4 --log audio.jsonl

Both read their weights from the demo snapshot (models/demo/snapshot; see
demo.py) and write them back there, with the latent statistics the engine
and the DiT use (latents_mean / latents_std, measured on the world at the
end), so a second run resumes. ComfyUI's own encode and decode are what is
trained, the same calls the pipeline makes: the video VAE on 22-frame clips
(two 17-frame encoder chunks and the decoder's overlap blend) and single
pictures (FL2VA anchors, Ref2VA pictures), the shapes' pixels weighted
(--boost) over the plain background; the audio VAE on one-second stereo
crops. The latent is perturbed before decoding (5 % of its spread)
so the decoder tolerates a DiT's imperfect latents. --fresh starts from
new weights at demo.py's config; with it, --encoder-ch, --encoder-blocks
and --encoder-mult widen the video encoder (new latents: the DiT has to
learn them again), and --pca-pull draws the picture steps' latents
towards their cells' whitened PCA codes (head_rank.PictureCode).
"""

import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import demo  # noqa: E402
import head_rank  # noqa: E402

R = demo.R


def intermediate_on(device):
    """ComfyUI decodes into a buffer on its 'intermediate device' (the CPU by
    the shim); training keeps the whole graph on the training device."""
    R.install_shims()
    sys.modules["comfy.model_management"].intermediate_device = lambda: torch.device(device)


def schedule(step, warmup, total_s, elapsed_s, base):
    w = min(1.0, (step + 1) / warmup)
    frac = min(1.0, elapsed_s / total_s)
    return base * w * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


class Log:
    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8") if path else None

    def write(self, **kv):
        line = json.dumps(kv)
        print(line, flush=True)
        if self.f:
            self.f.write(line + "\n")
            self.f.flush()


# ---------------------------------------------------------------- video

def video_batch(examples, rng, device, frames=22):
    """uint8 clips -> ([B,3,T,H,W] in [-1,1], same in [0,1])."""
    out = []
    for meta, arr in examples:
        f = arr["frames"]
        s = rng.randrange(0, f.shape[0] - frames + 1)
        out.append(f[s:s + frames])
    x = torch.from_numpy(np.stack(out)).to(device).permute(0, 4, 1, 2, 3).float()
    return x * (2.0 / 255.0) - 1.0, x / 255.0


def picture_batch(examples, device):
    out = []
    for meta, arr in examples:
        if "picture" in arr:
            out.append(arr["picture"])
        else:
            out.append(arr["frames"][0])
    x = torch.from_numpy(np.stack(out)).to(device).permute(0, 3, 1, 2)[:, :, None].float()
    return x * (2.0 / 255.0) - 1.0, x / 255.0


def object_weight(target, boost):
    """1 on the background, 1 + boost on the shapes: a clip is mostly its
    plain background (the median colour), and an unweighted loss is met by
    drawing the background alone (the first run's decoder greyed shapes)."""
    bg = target.flatten(2).median(dim=2).values.view(target.shape[0], 3, *([1] * (target.dim() - 2)))
    shape = ((target - bg).abs().amax(1, keepdim=True) > 0.05).float()
    return 1.0 + boost * shape


def video_loss(vae, x, target, noise, boost, amp, codes=None, pull=0.0):
    """Reconstruction (shapes weighted) and, with codes, the latents' pull
    towards them (--pca-pull)."""
    with torch.autocast(device_type=x.device.type, dtype=torch.bfloat16, enabled=amp):
        z = vae.encode(x)
        zn = z + noise * z.detach().std() * torch.randn_like(z)
        y = vae.decode(zn).float()
    d = y - target
    w = object_weight(target, boost)
    rec = ((d.abs() + d * d) * w).mean() / w.mean()
    loss = rec + 1e-5 * z.float().pow(2).mean()
    if codes is not None:
        loss = loss + pull * F.mse_loss(z.float(), codes)
    return loss, rec


def pulled_codes(code, target):
    """head_rank.PictureCode's codes of a picture batch in [0, 1]."""
    pics = (target[:, :, 0] * 255).round().byte().permute(0, 2, 3, 1).cpu().numpy()
    return torch.from_numpy(code(pics)).to(target.device)


def latent_stats(encode, batches):
    """Per-channel mean and std of raw latents over the batches."""
    s = s2 = n = 0
    with torch.no_grad():
        for b in batches:
            z = encode(b).double()
            dims = [d for d in range(z.dim()) if d != 1]
            s = s + z.sum(dims)
            s2 = s2 + z.pow(2).sum(dims)
            n += z.numel() // z.shape[1]
    mean = s / n
    std = (s2 / n - mean.pow(2)).clamp_min(1e-12).sqrt()
    return mean.tolist(), std.tolist()


def train_video(a, log):
    intermediate_on(a.device)
    vae = demo.build_video_vae(demo.part_dir(a.snapshot), device=a.device)
    code = head_rank.PictureCode() if a.pca_pull else None

    def step_loss(exs, rng, step):
        codes = None
        if step % 4 == 3:
            x, tgt = picture_batch(exs * 2, a.device)
            codes = pulled_codes(code, tgt) if code else None
        else:
            x, tgt = video_batch(exs, rng, a.device)
        loss, rec = video_loss(vae, x, tgt, a.noise, a.boost, a.amp, codes, a.pca_pull)

        def psnr():
            with torch.no_grad():
                mse = F.mse_loss(vae.decode(vae.encode(x)), tgt).item()
            return {"psnr": -10 * math.log10(max(mse, 1e-10))}
        return loss, rec, psnr

    def stats_batches(rng):
        exs = list(data.stream(a.seed + 1000, "train", count=64, workers=a.workers))
        return ([video_batch(exs[i:i + 8], rng, a.device)[0] for i in range(0, 64, 8)]
                + [picture_batch(exs[i:i + 16], a.device)[0] for i in range(0, 64, 16)])

    # the encoding side of ComfyUI's video VAE: frozen by --decoder-only
    encoder = (vae.encoder, vae.quant_conv) if a.decoder_only else ()
    train_loop(a, log, "video_vae", vae, 0, False, step_loss, stats_batches, demo.save_video_vae, encoder)


def train_loop(a, log, stage, vae, seed_offset, audio_only, step_loss, stats_batches, save, frozen=()):
    """The loop both VAEs share: a resumed stretch of the example stream,
    AdamW with warm-up and cosine decay for a.minutes, then the latent
    statistics measured on held-back examples and everything saved into
    the snapshot with the stage's training record. With frozen modules
    (the encoder), the latents a trained DiT learnt stay as they are, so
    the snapshot's latent statistics are kept rather than re-measured."""
    snap = a.snapshot
    vae.latents_mean.zero_()
    vae.latents_std.fill_(1.0)
    vae.train().requires_grad_(True)
    for m in frozen:
        m.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in vae.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.0)
    done = demo.trained(snap, stage)
    step0, start = int(done.get("steps", 0)), int(done.get("examples", 0))
    rng = random.Random(a.seed + seed_offset + step0)
    src = data.stream(a.seed + seed_offset, "train", start=start, workers=a.workers, audio_only=audio_only)
    t0, step, seen = time.time(), 0, 0
    while time.time() - t0 < a.minutes * 60:
        for g in opt.param_groups:
            g["lr"] = schedule(step, 200, a.minutes * 60, time.time() - t0, a.lr)
        exs = [next(src) for _ in range(a.batch)]
        seen += len(exs)
        loss, rec, extra = step_loss(exs, rng, step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(vae.parameters(), 1.0)
        opt.step()
        if step % 50 == 0:
            log.write(stage=stage, step=step0 + step, loss=float(rec), t=time.time() - t0, **extra())
        step += 1
    vae.eval()
    mean = std = None  # save keeps the snapshot's statistics
    if not frozen:
        mean, std = latent_stats(lambda b: vae.encode(b), stats_batches(rng))
    save(vae, snap, mean, std)
    # a decoder-only run leaves the latents as they were: its steps are
    # counted apart, so demo.encoder_steps (the DiT's example cache) keeps them
    apart = {"decoder_steps": int(done.get("decoder_steps", 0)) + step} if frozen else {}
    demo.record(snap, stage, steps=step0 + step, examples=start + seen,
                seconds=float(done.get("seconds", 0)) + time.time() - t0, loss=float(rec), **apart)
    log.write(stage=stage, done=True, steps=step0 + step, mean=(mean or [])[:4], std=(std or [])[:4])


# ---------------------------------------------------------------- audio

def audio_batch(examples, rng, device, seconds=1.0):
    n = int(seconds * 32000) // 800 * 800
    out = []
    for meta, arr in examples:
        w = arr["audio"]
        s = rng.randrange(0, max(1, w.shape[1] - n + 1)) // 800 * 800
        seg = w[:, s:s + n]
        if seg.shape[1] < n:
            seg = np.pad(seg, ((0, 0), (0, n - seg.shape[1])))
        out.append(seg)
    return torch.from_numpy(np.stack(out)).to(device)


def stft_loss(y, x):
    """Multi-resolution STFT loss per channel: spectral convergence (the
    magnitudes' L2 error relative to the target's) and the log magnitudes,
    floored 60 dB under the batch's loudest bin.

    The world's sounds are pure tones and silence: nearly every bin of the
    target is empty. A per-bin L1 of the magnitudes pushes all those bins
    down and only the tone's few bins up, and a log floor of 1e-5 makes
    faint noise in them dear: with both, overfit_vae.py's four crops plus
    white noise 43 dB under the tone scored 25.4 and silence 4.9, and
    every clip trained to one near-silent output (README, "The audio VAE
    collapsed"). The relative L2 weighs bins by their error energy, so the
    tone's bins lead, and under the relative floor faint noise costs nothing
    (the noisy crops score 0.05 now, silence 5.1).
    """
    y, x = y.reshape(-1, y.shape[-1]), x.reshape(-1, x.shape[-1])
    total = 0.0
    for n_fft in (256, 512, 1024, 2048):
        win = torch.hann_window(n_fft, device=x.device)
        sy = torch.stft(y, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        sx = torch.stft(x, n_fft, n_fft // 4, window=win, return_complex=True).abs()
        floor = (1e-3 * sx.amax()).clamp_min(1e-5)  # an all-silent batch keeps a floor
        total = total + (sy - sx).norm() / sx.norm().clamp_min(1e-3)
        total = total + F.l1_loss(torch.log(sy.clamp_min(floor)), torch.log(sx.clamp_min(floor)))
    return total


def audio_rec(y, x):
    return stft_loss(y, x) + 10 * F.l1_loss(y, x)


def audio_loss(avae, x, noise):
    z = avae.encode(x)
    zn = z + noise * z.detach().std() * torch.randn_like(z)
    y = avae.decode(zn)
    rec = audio_rec(y, x)
    return rec + 1e-5 * z.pow(2).mean(), rec


def train_audio(a, log):
    avae = demo.build_audio_vae(demo.part_dir(a.snapshot), device=a.device)

    def step_loss(exs, rng, step):
        loss, rec = audio_loss(avae, audio_batch(exs, rng, a.device), a.noise)
        return loss, rec, dict

    def stats_batches(rng):
        exs = list(data.stream(a.seed + 1007, "train", count=64, workers=a.workers, audio_only=True))
        return [audio_batch(exs[i:i + 16], rng, a.device, seconds=2.0) for i in range(0, 64, 16)]

    train_loop(a, log, "audio_vae", avae, 7, True, step_loss, stats_batches, demo.save_audio_vae)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("which", choices=("video", "audio"))
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--minutes", type=float, default=4.0)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--noise", type=float, default=0.05)
    p.add_argument("--boost", type=float, default=9.0, help="extra loss weight on the shapes' pixels")
    p.add_argument("--amp", type=int, default=1, help="bfloat16 autocast on a GPU (1) or not (0)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=6, help="data processes")
    p.add_argument("--fresh", action="store_true", help="start from new weights at demo.py's config")
    p.add_argument("--decoder-only", action="store_true",
                   help="video: train the decoder alone; the encoder, its latents and their statistics stay")
    demo.add_encoder_args(p)
    head_rank.add_pull_arg(p)
    p.add_argument("--log", default="")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    encoder = demo.encoder_from_args(p, a)
    if a.pca_pull and a.which != "video":
        p.error("--pca-pull draws a video VAE's picture latents to their PCA codes: give it with video")
    if a.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
    a.amp = bool(a.amp) and a.device.startswith("cuda")
    if a.fresh:
        demo.fresh_vae(a.which, a.snapshot, encoder)
    log = Log(a.log)
    (train_video if a.which == "video" else train_audio)(a, log)


if __name__ == "__main__":
    main()
