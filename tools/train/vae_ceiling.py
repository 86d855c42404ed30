#!/usr/bin/env python3
"""How close the video VAE alone comes to the held-out FL2VA anchors: the
ceiling of eval.py's first-frame PSNR, since a render's first frame is the
VAE's decode of what the DiT made.

  python3 tools/train/vae_ceiling.py --out /tmp/eval50   # the eval.py folder

For each held-out FL2VA example, the first anchor through the snapshot's
video VAE (the reference ComfyUI encode and decode, CPU) as a picture and
as the first frame of its clip's first 22 frames, and, where eval.py left
a render of it in --out/renders, the render's first frame: PSNR against
the anchor, medians and each example's. Then every held-out clip whole
through the VAE, scored as eval.py scores a render: the ceilings of
"colour and direction right" and of "Ref2VA colour+shape kept".
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402
import eval as ev  # noqa: E402
import measure  # noqa: E402


def all_frames(decoded):
    """[3, F, H, W] in [0, 1] -> uint8 [F, H, W, 3], as the engine writes them."""
    return np.rint(np.asarray(decoded).transpose(1, 2, 3, 0) * 255).clip(0, 255).astype(np.uint8)


def first_frame(decoded):
    return all_frames(decoded)[0]


def clip_ceilings(vae, examples):
    """{task: [(colour and direction right, Picture 1 kept or None)]} for
    each example's whole clip through the VAE alone."""
    out = {}
    for meta, arrays in examples:
        with torch.no_grad():
            frames = all_frames(demo.R.vae_decode(vae, demo.R.vae_encode(vae, arrays["frames"])))
        checks = measure.score(meta, dict(arrays, frames=frames))
        out.setdefault(meta["task"], []).append((checks["colour"] and checks["motion"], checks.get("picture")))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="eval.py's folder (its examples are made there if absent)")
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--count", type=int, default=ev.HELDOUT_COUNT)
    p.add_argument("--summary", default="", help="also write the medians and counts here as JSON (vae_trials.sh ranks by it)")
    a = p.parse_args()
    vae = demo.R.load_video_vae(os.path.join(demo.part_dir(a.snapshot), "video_vae"))
    rows = {"picture": [], "clip": [], "render": []}
    examples = ev.examples(os.path.join(a.out, "examples"), a.count, ev.HELDOUT_SEED)
    for meta, arrays in examples:
        if meta["task"] != "FL2VA":
            continue
        anchor = arrays["anchors"][0]
        with torch.no_grad():
            pic = first_frame(demo.R.vae_decode(vae, demo.R.vae_encode(vae, anchor[None])))
            clip = first_frame(demo.R.vae_decode(vae, demo.R.vae_encode(vae, arrays["frames"][:22])))
        rows["picture"].append(measure.psnr(pic, anchor))
        rows["clip"].append(measure.psnr(clip, anchor))
        if os.path.exists(os.path.join(a.out, "renders", meta["id"] + ".mp4")):
            r = measure.rendered(os.path.join(a.out, "renders"), meta["id"])
            rows["render"].append(measure.psnr(r["frames"][0], anchor))
    names = {"picture": "the anchor as a picture through the VAE",
             "clip": "its clip's first frame through the VAE",
             "render": "eval.py's render, first frame"}
    for k, v in rows.items():
        if v:
            print(f"{names[k]:42s} median {np.median(v):5.1f} dB  ({len(v)}: "
                  + " ".join(f"{x:.1f}" for x in v) + ")")
    summary = {k + "_median": float(np.median(v)) for k, v in rows.items() if v}
    for task, got in clip_ceilings(vae, examples).items():
        line = f"{task} clips through the VAE: colour and direction right {ev.percent([g[0] for g in got])}"
        kept = [g[1] for g in got if g[1] is not None]
        print(line + (f", Picture 1's colour and shape kept {ev.percent(kept)}" if kept else ""))
        summary[task + "_right"] = [int(sum(g[0] for g in got)), len(got)]
        if kept:
            summary["picture1_kept"] = [int(sum(kept)), len(kept)]
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
