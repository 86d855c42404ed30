#!/usr/bin/env python3
"""Train the demo model's DiT by flow matching on the demo world (T2VA).

  python3 tools/train/train_dit.py --examples 20000 --minutes 6 --log dit.jsonl

Reads the DiT and both VAEs from the demo snapshot (models/demo/snapshot),
writes the DiT back there (an exponential moving average of the weights,
decay --ema), so a second run resumes.

Every input is built by the reference code the parity tests pin, from the
world's raw frames, soundtrack and prompt:
  - prompt -> ids: SGLang's minimax_h3_text_only_ids (tools/fixtures/e2e/
    sglref.py) with the partition's tokenizer (HF AutoTokenizer);
  - ids -> Qwen3-VL states: HF Qwen3VLForConditionalGeneration, the state at
    the final norm's input after the first min(50, L) layers, as the
    official encode does (batched with right padding: causal attention
    keeps each prompt's states those of the prompt alone; checked below);
  - frames -> video latent, soundtrack -> audio latent: ComfyUI's encodes
    (posterior means, normalised by the snapshot's statistics);
  - the forward: ComfyUI's MiniMaxH3Model._forward, whose video sigma sets
    the audio sigma (sigma_a = shift(sigma_v; 12 -> 3)), as at inference.
The objective is the model's: x_s = (1 - s) x0 + s eps, velocity x0 - eps.
Video sigmas are drawn as the inference grid places them, s = 12b / (1 +
11b) for b uniform in (0, 1), so training sees the steps a render takes.
"""

import argparse
import inspect
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
from train_vae import Log, intermediate_on  # noqa: E402

R = demo.R
SHIFT_V, SHIFT_A = 12.0, 3.0


# ---------------------------------------------------------------- text

def text_states(part, prompts, device, batch=128):
    """prompt -> (Qwen3-VL states [L, 64] float32 on device, tags [L])."""
    sys.path.insert(0, os.path.join(demo.ROOT, "tools", "fixtures", "e2e"))
    import sglref
    from transformers import AutoTokenizer, Qwen3VLForConditionalGeneration

    ns = sglref.load()
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # the engine's Qwen runs in float32
    tok = AutoTokenizer.from_pretrained(os.path.join(part, "tokenizer"))
    model = Qwen3VLForConditionalGeneration.from_pretrained(os.path.join(part, "text_encoder"),
                                                            dtype=torch.float32).eval().to(device)
    lm = model.model.language_model
    lm.layers = torch.nn.ModuleList(list(lm.layers)[:min(50, len(lm.layers))])
    cap = {}
    lm.norm.register_forward_pre_hook(lambda mod, a: cap.update(final=a[0]))
    uniq = sorted(set(prompts))
    ids = {p: ns.presentation.minimax_h3_text_only_ids(tok, p) for p in uniq}
    out = {}

    def run(group):
        n = max(ids[p].shape[0] for p in group)
        x = torch.zeros(len(group), n, dtype=torch.long)
        mask = torch.zeros(len(group), n, dtype=torch.long)
        for i, p in enumerate(group):
            x[i, :ids[p].shape[0]] = ids[p]
            mask[i, :ids[p].shape[0]] = 1
        kw = dict(input_ids=x.to(device), attention_mask=mask.to(device))
        if "mm_token_type_ids" in inspect.signature(model.model.forward).parameters:
            kw["mm_token_type_ids"] = torch.zeros_like(kw["input_ids"])  # text only
        with torch.no_grad():
            model.model(**kw)
        return [cap["final"][i, :ids[p].shape[0]].float().clone() for i, p in enumerate(group)]

    for i in range(0, len(uniq), batch):
        group = uniq[i:i + batch]
        for p, h in zip(group, run(group)):
            out[p] = h
    alone = run([uniq[0]])[0]  # padding must not reach a prompt's states
    diff = float((alone - out[uniq[0]]).abs().max())
    assert diff < 1e-4, f"batched Qwen states differ from one prompt's by {diff}"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    return out, diff


# ---------------------------------------------------------------- latents

def encode_stream(examples, part, device, group_size=32):
    """(prompts, latents): each example's prompt and its (video, audio)
    latents, encoded in groups of one frame count; the frames are dropped
    as soon as they are encoded (20,000 clips would not fit in memory)."""
    intermediate_on(device)
    vae = demo.build_video_vae(part, device=device)
    avae = demo.build_audio_vae(part, device=device)
    prompts, lat, pending = [], [], {}

    def flush(group):
        fr = np.stack([arr["frames"] for _, arr in group])
        x = torch.from_numpy(fr).to(device).permute(0, 4, 1, 2, 3).float() * (2.0 / 255.0) - 1.0
        wav = torch.from_numpy(np.stack([arr["audio"] for _, arr in group])).to(device)
        with torch.no_grad():
            zv, za = vae.encode(x), avae.encode(wav)
        for j, (meta, _) in enumerate(group):
            prompts.append(meta["prompt"])
            lat.append((zv[j:j + 1].float().contiguous(), za[j:j + 1].float().contiguous()))

    for ex in examples:
        g = pending.setdefault(ex[1]["frames"].shape[0], [])
        g.append(ex)
        if len(g) == group_size:
            flush(g)
            g.clear()
    for g in pending.values():
        if g:
            flush(g)
    return prompts, lat


# ---------------------------------------------------------------- training

def flow_loss(model, ref, zv, za, ctx, tags, gen):
    b = torch.rand((), generator=gen).item() * 0.999 + 0.0005
    sv = SHIFT_V * b / (1 + (SHIFT_V - 1) * b)
    sa = ref.time_shift_sigma(sv, SHIFT_V, SHIFT_A)
    ev, ea = torch.randn_like(zv), torch.randn_like(za)
    xv, xa = (1 - sv) * zv + sv * ev, (1 - sa) * za + sa * ea
    ts = torch.tensor([sv * 1000.0], dtype=torch.float32, device=zv.device)
    out = model._forward([xv, xa], ts, ctx[None], transformer_options={},
                         minimax_payload={"text_token_tags": tags, "seed": 0})
    lv = F.mse_loss(-out[0], zv - ev)
    la = F.mse_loss(-out[1], za - ea)
    return lv + la, lv, la, sv


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--examples", type=int, default=20000)
    p.add_argument("--minutes", type=float, default=6.0)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--accum", type=int, default=4)
    p.add_argument("--ema", type=float, default=0.999)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", default="")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    if a.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    log = Log(a.log)
    part = demo.part_dir(a.snapshot)
    t0 = time.time()
    examples = data.stream(a.seed + 20, "train", count=a.examples, task="T2VA", workers=14)
    prompts, lat = encode_stream(examples, part, a.device)
    texts, diff = text_states(part, prompts, a.device)
    log.write(stage="dit", encoded=len(lat), prompts=len(texts), pad_diff=diff, t=time.time() - t0)
    ref = demo.dit_training_shims()
    model = demo.load_dit(a.snapshot, device=a.device)
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01, betas=(0.9, 0.99))
    done = demo.trained(a.snapshot, "dit")
    step0 = int(done.get("steps", 0))
    gen = torch.Generator().manual_seed(a.seed + step0)
    rng = random.Random(a.seed + step0)
    torch.manual_seed(a.seed + step0)
    t1, step, run = time.time(), 0, []
    budget = a.minutes * 60 - (t1 - t0)
    while time.time() - t1 < budget:
        warm = min(1.0, (step + 1) / 100)
        frac = min(1.0, (time.time() - t1) / budget)
        for g in opt.param_groups:
            g["lr"] = a.lr * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        opt.zero_grad(set_to_none=True)
        for _ in range(a.accum):
            i = rng.randrange(len(lat))
            ctx = texts[prompts[i]]
            tags = torch.ones(ctx.shape[0], dtype=torch.long)
            loss, lv, la, sv = flow_loss(model, ref, lat[i][0], lat[i][1], ctx, tags, gen)
            (loss / a.accum).backward()
            run.append((float(lv), float(la)))
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            d = min(a.ema, (1 + step) / (10 + step))
            for k, v in model.state_dict().items():
                ema[k].mul_(d).add_(v.detach(), alpha=1 - d)
        if step % 50 == 0:
            lv, la = np.mean([r[0] for r in run]), np.mean([r[1] for r in run])
            log.write(stage="dit", step=step0 + step, loss_video=float(lv), loss_audio=float(la),
                      lr=opt.param_groups[0]["lr"], t=time.time() - t0)
            run = []
        step += 1
    model.load_state_dict(ema)
    demo.save_dit(model, a.snapshot)
    demo.record(a.snapshot, "dit", steps=step0 + step, samples=int(done.get("samples", 0)) + step * a.accum,
                seconds=float(done.get("seconds", 0)) + time.time() - t1, examples=a.examples, tasks=["t2va"])
    log.write(stage="dit", done=True, steps=step0 + step, t=time.time() - t0)


if __name__ == "__main__":
    main()
