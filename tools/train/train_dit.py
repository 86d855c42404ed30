#!/usr/bin/env python3
"""Train the demo model's DiT by flow matching on the demo world's three
tasks (T2VA, FL2VA, Ref2VA: one DiT serves both partitions).

  python3 tools/train/train_dit.py --examples 12000 --minutes 8 --ranks 4 --log dit.jsonl

Reads the DiT and both VAEs from the demo snapshot (models/demo/snapshot),
writes the DiT back there (an exponential moving average of the weights,
decay --ema), so a second run resumes with new examples.

Every input is built by the reference code the parity tests pin, from the
world's raw prompt, frames, soundtrack, anchors and picture (inputs.py):
SGLang's presentations and canvases, HF's tokenizer, image processor and
Qwen3-VL, ComfyUI's VAE encodes; the forward is ComfyUI's
MiniMaxH3Model._forward, whose video sigma sets the audio sigma
(sigma_a = shift(sigma_v; 12 -> 3)) as at inference. The objective is the
model's: x_s = (1 - s) x0 + s eps, velocity x0 - eps. Video sigmas are
drawn as the inference grid places them, s = 12b / (1 + 11b) for b uniform
in (0, 1), so training sees the steps a render takes.

The reference forward takes one clip at a time; packed.py runs --batch
clips through it at once (its parts recorded per clip, then the refiner,
blocks and final layer on the clips packed together, attention masked per
clip; test_packed.py checks it against the forward alone). --ranks
processes share the GPU, each with its own examples, and average their
gradients through gloo every step (data parallel; 3.7 M parameters).
"""

import argparse
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import demo  # noqa: E402
import packed  # noqa: E402
import text_encoder  # noqa: E402
import world  # noqa: E402
from making import Maker, PoolGrower  # noqa: E402
from train_vae import Log  # noqa: E402

R = demo.R
SHIFT_V, SHIFT_A = 12.0, 3.0


# ---------------------------------------------------------------- inputs

def with_layouts(items):
    """Each item's PackedLayout in its payload: _forward reuses a payload's
    layout of its signature (as ComfyUI's extra_conds prebuilds it for a
    sampling run), one per clip rather than per step."""
    ref = demo.R.load_ref("model.py")
    for it in items:
        zv, za = it["lat"]
        # a binding negative's prompt may tokenize to another length: its own layout
        for part in (it, it.get("negative")):
            if part:
                ex = part["extra"]
                ex["layout"] = ref.PackedLayout(part["states"].shape[0], zv.shape[2], zv.shape[3], zv.shape[4],
                                                za.shape[-1], keyframes=ex.get("keyframes"), refs=ex.get("refs"))
    return items


# ---------------------------------------------------------------- state kept between calls

# --state DIR keeps, on the machine, what a run would otherwise lose when
# its call ends: each rank's prepared examples (making them took a quarter
# of a call) and the optimizer with the live (not averaged) weights, so the
# next call on the same machine goes on where this one stopped, without a
# warm-up. The snapshot stays the checkpoint that lasts.

def vae_version(snap):
    """The VAEs' training steps that moved their latents: the kept examples'
    latents are theirs, and stale once an encoder has trained on (a
    decoder-only run beside the DiT leaves them good)."""
    return [demo.encoder_steps(snap, s) for s in ("video_vae", "audio_vae")]


def inputs_version(snap, text=False):
    """What made the kept examples' inputs: the VAEs' encoder steps (their
    latents) and the text encoder's steps (their Qwen states), or, when
    the text encoder trains (text), "text": restate makes their states
    again every step from their entries, which its training leaves good."""
    return vae_version(snap) + ["text" if text else int(demo.trained(snap, "text_encoder").get("steps", 0))]


def items_path(state, rank, world_size):
    """Where a rank's kept examples live on the machine ("": none kept)."""
    return os.path.join(state, "items-%d-of-%d.pt" % (rank, world_size)) if state else ""


def cached_items(state, rank, world_size, vaes):
    """(the cache's path, the items kept there by encodes of these VAEs)."""
    path = items_path(state, rank, world_size)
    if not path or not os.path.exists(path):
        return path, []
    # each tensor back where making.Maker put it (latents on the GPU, tags on
    # the host, where _forward reads them): the file never leaves the machine
    kept = torch.load(path)
    return path, kept["items"] if kept["vaes"] == vaes else []


def keep_items(path, items, keep, vaes):
    """The newest `keep` items, saved to path (layouts dropped: they hold
    the reference module's classes)."""
    items = items[-keep:]
    if path:
        bare = [without_layouts(it) for it in items]
        torch.save({"vaes": vaes, "items": bare}, path + ".tmp")
        os.replace(path + ".tmp", path)
    return items


def without_layouts(item):
    """The item and its negative without their layouts (keep_items)."""
    def bare(part):
        return dict(part, extra={k: v for k, v in part["extra"].items() if k != "layout"})
    out = bare(item)
    if item.get("negative"):
        out["negative"] = bare(item["negative"])
    return out


def load_state(state, step0, model, opt, text=None):
    """Whether the last call's optimizer and live weights were loaded: only
    when they belong to the snapshot's DiT (the same step count and tensors:
    grow_dit.py deepens it without a step) and the call trained the text
    encoder as this one does (text: its layers)."""
    path = os.path.join(state, "optimizer.pt") if state else ""
    if not path or not os.path.exists(path):
        return False
    st = torch.load(path, map_location="cpu")
    if st["step"] != step0 or (st.get("text") is None) != (text is None):
        return False
    if {k: tuple(v.shape) for k, v in st["live"].items()} != {k: tuple(v.shape) for k, v in model.state_dict().items()}:
        return False
    model.load_state_dict(st["live"])
    if text is not None:
        text.load_state_dict(st["text"])
    opt.load_state_dict(st["opt"])
    return True


def save_state(state, step, model, opt, text=None):
    if state:
        path = os.path.join(state, "optimizer.pt")
        torch.save({"step": step, "live": model.state_dict(), "opt": opt.state_dict(),
                    "text": text.state_dict() if text is not None else None}, path + ".tmp")
        os.replace(path + ".tmp", path)


# ---------------------------------------------------------------- training

def noisy(ref, item, gen, seed):
    """One clip at a training sigma: (the packed forward's clip, its velocity
    target, the draws (sigma, video noise, audio noise)). Video sigmas follow
    the inference grid (module docstring)."""
    zv, za = item["lat"]
    b = torch.rand((), generator=gen).item() * 0.999 + 0.0005
    draws = (SHIFT_V * b / (1 + (SHIFT_V - 1) * b), torch.randn_like(zv), torch.randn_like(za))
    return at_sigma(ref, item, *draws, seed) + (draws,)


def at_sigma(ref, item, sv, ev, ea, seed):
    """The clip at video sigma sv (the audio's follows) with noise ev, ea."""
    zv, za = item["lat"]
    sa = ref.time_shift_sigma(sv, SHIFT_V, SHIFT_A)
    xv, xa = (1 - sv) * zv + sv * ev, (1 - sa) * za + sa * ea
    # on the host: _forward reads the timestep only as Python floats, and
    # from a GPU tensor each read would wait for the GPU (two a clip)
    ts = torch.tensor([sv * 1000.0], dtype=torch.float32)
    payload = dict(item["extra"], text_token_tags=item["tags"], seed=seed)
    return (xv, xa, ts, item["states"], payload), (zv - ev, za - ea)


def video_weights(item, shape, boost=0.0, key_boost=0.0):
    """The weight of each of a clip's video latent values in the loss
    (flow_loss normalises them to a mean of 1): 1, plus boost on the
    shapes' cells (world.object_cells), plus key_boost on the latent steps
    of an FL2VA clip's keyframes. A render's first frame is the DiT's copy
    of the anchor it is given, and that copy, not the VAE, now costs the
    held-out first frames 2.1 dB (README, fifteenth session). The world's
    anchors are a clip's first and last frames: latent steps 0 and T-1."""
    w = 1.0 + boost * item["cells"].expand(shape)
    keys = item["extra"].get("keyframes") or []
    if key_boost and keys:
        steps = sorted({0 if k["resolved_frame_index"] == 0 else shape[2] - 1 for k in keys})
        w[:, :, steps] += key_boost
    return w


# The binding term (flow_loss's bind): on a two-object clip, the loss on its
# shapes' cells with its binding negative's prompt (world.binding_negative:
# the colours on the wrong shapes), the same noise and sigma, should be at
# least BIND_MARGIN times the loss with its own prompt; the shortfall is the
# term. The motion probe measures that ratio: 1.10 on the shipped DiT at
# sigma 0.7-0.85, where a one-shape clip's wrong colour costs 1.25-1.76. A
# margin at the foot of that range asks of two shapes what one already
# gives. Under BIND_MIN_SIGMA the noisy clip itself shows the colours (a
# wrong colour word costs a one-shape clip 6 % at 0.5), and nothing there
# is for the prompt to decide.
BIND_MARGIN = 1.25
BIND_MIN_SIGMA = 0.6


def cell_loss(out, target, cells):
    """The video loss on the shapes' latent cells (motion_probe's measure)."""
    cells = cells.expand(target.shape)
    return ((-out - target).pow(2) * cells).sum() / cells.sum().clamp(min=1)


def flow_loss(model, ref, batch, gen, rng, boost=0.0, key_boost=0.0, bind=0.0):
    """(loss, its video and audio parts, the binding term) of the clips,
    through one packed forward: the mean flow-matching loss, plus bind times
    the binding term (above) of the two-object clips that carry a negative,
    whose negatives ride the same forward."""
    drawn = [noisy(ref, it, gen, rng.randrange(1 << 30)) for it in batch]
    pairs = [k for k, (_, _, d) in enumerate(drawn)
             if bind and batch[k].get("negative") and d[0] >= BIND_MIN_SIGMA]
    negs = [at_sigma(ref, dict(batch[k], **batch[k]["negative"]), *drawn[k][2], drawn[k][0][4]["seed"])[0]
            for k in pairs]
    outs = packed.velocity(model, ref, [c for c, _, _ in drawn] + negs)
    lv = la = 0.0
    for (ov, oa), (_, (tv, ta), _), it in zip(outs, drawn, batch):
        w = video_weights(it, tv.shape, boost, key_boost)
        lv = lv + ((-ov - tv).pow(2) * w).mean() / w.mean()
        la = la + F.mse_loss(-oa, ta)
    hinge = torch.zeros((), device=batch[0]["lat"][0].device)
    for (neg_out, _), k in zip(outs[len(batch):], pairs):
        target, cells = drawn[k][1][0], batch[k]["cells"]
        own = cell_loss(outs[k][0], target, cells)
        hinge = hinge + F.relu(BIND_MARGIN * own - cell_loss(neg_out, target, cells))
    hinge = hinge / max(1, len(pairs))
    n = len(batch)
    return (lv + la) / n + bind * hinge, lv / n, la / n, hinge


def restate(text, batch, negatives):
    """The batch with each clip's states made again by the text encoder
    being trained (text_encoder.TextLayers, from the entry making.Maker kept),
    and its negative's too when the binding term reads them."""
    parts = list(batch) + ([it["negative"] for it in batch if it.get("negative")] if negatives else [])
    parts = list({id(p): p for p in parts}.values())  # a clip drawn twice is encoded once
    made = {id(p): dict(p, states=st) for p, st in zip(parts, text([p["text"] for p in parts]))}
    out = []
    for it in batch:
        new = made[id(it)]
        if negatives and it.get("negative"):
            new["negative"] = made[id(it["negative"])]
        out.append(new)
    return out


def reduce_grads(params, world, stop):
    """Average the ranks' gradients (one flat buffer through gloo on the
    host: the model is small) and agree on stopping (any rank's clock)."""
    params = list(params)
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads] + [torch.tensor([float(stop)], device=grads[0].device)]).cpu()
    dist.all_reduce(flat)
    flat = flat.to(grads[0].device)
    off = 0
    for p, g in zip(params, grads):
        n = g.numel()
        p.grad = (flat[off:off + n] / world).view_as(p)
        off += n
    return float(flat[-1]) > 0


def stream_seed(seed):
    """The world seed of the DiT's example stream for --seed: a call's pool
    is this stream's indices from the snapshot's examples_seen on
    (motion_probe.py --pool-last reads it back)."""
    return seed + 20


def rank_share(examples, ranks, rank, seen, cold=0):
    """(its first stream index, how many it makes before training, how
    many in all) of a rank's share of a call's new examples: the call's
    are the stream's `examples` indices from `seen` on, in one block a
    rank; with cold, the grower goes on from start + first."""
    share = examples // ranks
    return seen + rank * share, min(cold, share) if cold else share, share


def make_items(a, rank, part, tasks, rng, seen, log, t0):
    """This rank's examples: its share of the new ones, made and encoded,
    after those the last call on this machine kept (--state), with their
    layouts, and their text encoder entries on the GPU when it trains;
    and, with --cold, the PoolGrower that makes the rest of its share
    beside the training (None without)."""
    world = a.ranks
    start, first, share = rank_share(a.examples, world, rank, seen, a.cold)

    def stream(at, count):
        return data.stream(stream_seed(a.seed), "train", start=at, count=count,
                           workers=max(1, a.workers // world), two_share=a.two_share, task_shares=a.task_share)

    vaes = inputs_version(a.snapshot, text=a.text_lr > 0)
    cache, old = cached_items(a.state, rank, world, vaes)
    spent = {}
    maker = Maker(part, a.device, tasks, rng, spent=spent, negatives=a.bind > 0, text=a.text_lr > 0)
    made = maker.make(stream(start, first))
    items = finish_items(a, keep_items(cache, old + made, a.keep, vaes))
    counts = {t: sum(1 for it in items if it["task"] == t) for t in sorted(tasks)}
    log.write(stage="dit", rank=rank, items=len(items), kept=len(old), tasks=counts,
              negatives=sum(1 for it in items if it.get("negative")), t=time.time() - t0,
              making=rounded(spent))
    if first == share:
        maker.close()
        return items, None
    # the grower's own draws (FL2VA's keyframes): the training loop's rng stays as it was
    maker.rng = random.Random("%d:%d:grow" % (a.seed, rank))
    return items, PoolGrower(maker, stream(start + first, share - first), items, lambda new: finish_items(a, new))


def finish_items(a, items):
    """The items with their layouts, and their text encoder entries on the
    GPU when it trains."""
    items = with_layouts(items)
    if a.text_lr:
        for it in items:
            for piece in (it, it.get("negative")):
                if piece and "text" in piece:
                    piece["text"] = {k: v.to(a.device) for k, v in piece["text"].items()}
    return items


def stop_growing(a, rank, grower, items, log):
    """The grower stopped, and the pool it grew kept for the next call."""
    grown = grower.stop()
    keep_items(items_path(a.state, rank, a.ranks), items, a.keep, inputs_version(a.snapshot, text=a.text_lr > 0))
    log.write(stage="dit", rank=rank, grown=grown, items=len(items), making=rounded(grower.maker.spent),
              **({"grow_error": grower.error} if grower.error else {}))


def rounded(spent):
    """Seconds by part of the making, as the log shows them."""
    return {k: round(v, 1) for k, v in spent.items()}


def save_run(a, model, text, done, step, seconds, tasks):
    """The averaged DiT (and text encoder, when it trained) into the
    snapshot, and what the run did into its h3studio.json; the samples seen."""
    step0 = int(done.get("steps", 0))
    demo.save_dit(model, a.snapshot)
    if text is not None:
        text_encoder.save(text, a.snapshot)
        before = demo.trained(a.snapshot, "text_encoder")
        demo.record(a.snapshot, "text_encoder", steps=int(before.get("steps", 0)) + step,
                    dit_steps=step0 + step, lr=a.text_lr)
    samples = int(done.get("samples", 0)) + step * a.accum * a.batch * a.ranks
    demo.record(a.snapshot, "dit", steps=step0 + step, samples=samples,
                seconds=float(done.get("seconds", 0)) + seconds,
                examples_seen=int(done.get("examples_seen", 0)) + a.examples, tasks=tasks)
    return samples


def train(rank, a):
    world = a.ranks
    # the ranks and their example makers share the machine's cores: torch's
    # default (every core per process) thrashed at 8 ranks on 16 cores
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // (2 * world)))
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % a.port, rank=rank, world_size=world)
    if a.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    log = Log(a.log if rank == 0 else "")
    part = demo.part_dir(a.snapshot)
    tasks = set(a.tasks.split(","))
    done = demo.trained(a.snapshot, "dit")
    step0 = int(done.get("steps", 0))
    rng = random.Random("%d:%d:%d" % (a.seed, step0, rank))
    t0 = time.time()
    items, grower = make_items(a, rank, part, tasks, rng, int(done.get("examples_seen", 0)), log, t0)
    ref = demo.dit_training_shims()
    model = demo.load_dit(a.snapshot, device=a.device)
    # --text-lr: the text encoder's layers train beside the DiT, at their own rate
    text = text_encoder.TextLayers(part).to(a.device).train() if a.text_lr else None
    modules = [model] + ([text] if text is not None else [])
    params = [p for m in modules for p in m.parameters()]
    ema = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in modules] if rank == 0 else None
    if ema is not None:  # state_dict's tensors share the parameters' storage: the optimizer's steps show
        live = [v for m in modules for v in m.state_dict().values()]
        ema_vals = [v for e in ema for v in e.values()]
    groups = [{"params": list(model.parameters()), "base": a.lr}]
    if text is not None:
        groups.append({"params": list(text.parameters()), "base": a.text_lr})
    opt = torch.optim.AdamW(groups, lr=a.lr, weight_decay=0.01, betas=(0.9, 0.99))
    # the average (ema) is the snapshot's DiT; resumed, the live weights are the last call's
    resumed = load_state(a.state, step0, model, opt, text)
    gen = torch.Generator().manual_seed(a.seed * 1000 + step0 + rank)
    dist.barrier()
    t1, step, run = time.time(), 0, []
    budget = a.minutes * 60 - (t1 - t0)
    while True:
        warm = 1.0 if resumed else min(1.0, (step + 1) / 100)
        frac = min(1.0, (time.time() - t1) / budget)
        for g in opt.param_groups:
            g["lr"] = g["base"] * warm * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        opt.zero_grad(set_to_none=True)
        for _ in range(a.accum):
            batch = [items[rng.randrange(len(items))] for _ in range(a.batch)]
            if text is not None:
                batch = restate(text, batch, a.bind > 0)
            loss, lv, la, hinge = flow_loss(model, ref, batch, gen, rng, boost=a.boost, key_boost=a.key_boost,
                                            bind=a.bind)
            (loss / a.accum).backward()
            run.append((float(lv), float(la), float(hinge)))
        if reduce_grads(params, world, time.time() - t1 >= budget):
            break
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if ema is not None:
            # two kernels over every tensor rather than two per tensor: rank 0
            # alone keeps the average, and the other ranks wait for it each step
            d = a.ema if resumed else min(a.ema, (1 + step) / (10 + step))
            with torch.no_grad():
                torch._foreach_mul_(ema_vals, d)
                torch._foreach_add_(ema_vals, live, alpha=1 - d)
        if step % 50 == 0 and rank == 0:
            lv, la, hinge = np.mean(run, axis=0)
            log.write(stage="dit", step=step0 + step, loss_video=float(lv), loss_audio=float(la),
                      **({"bind": float(hinge)} if a.bind else {}), lr=opt.param_groups[0]["lr"], pool=len(items),
                      t=time.time() - t0)
            run = []
        step += 1
    if grower is not None:
        stop_growing(a, rank, grower, items, log)
    if rank == 0:
        save_state(a.state, step0 + step, model, opt, text)
        for m, avg in zip(modules, ema):
            m.load_state_dict(avg)
        samples = save_run(a, model, text, done, step, time.time() - t1, sorted(tasks))
        log.write(stage="dit", done=True, steps=step0 + step, samples=samples, t=time.time() - t0)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--examples", type=int, default=12000, help="examples made and encoded (all ranks together)")
    p.add_argument("--tasks", default="t2va,fl2va,ref2va")
    p.add_argument("--minutes", type=float, default=6.0, help="wall time of the run, making the examples included")
    p.add_argument("--ranks", type=int, default=4, help="data-parallel processes on the one GPU")
    p.add_argument("--workers", type=int, default=12, help="example-making processes (all ranks together)")
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--batch", type=int, default=16, help="clips per packed forward (each rank)")
    p.add_argument("--accum", type=int, default=1)
    p.add_argument("--ema", type=float, default=0.999)
    p.add_argument("--boost", type=float, default=4.0, help="extra video-loss weight on the shapes' latent cells")
    p.add_argument("--key-boost", type=float, default=0.0,
                   help="extra video-loss weight on an FL2VA clip's keyframe latent steps (untried: 0)")
    p.add_argument("--bind", type=float, default=0.0,
                   help="weight of the binding term on two-object T2VA and Ref2VA clips (flow_loss; untried: 0)")
    p.add_argument("--text-lr", type=float, default=0.0,
                   help="train the text encoder's layers beside the DiT at this peak rate (text_encoder.py; 0: frozen)")
    p.add_argument("--state", default="", help="a folder on this machine for what the next call here resumes "
                   "(prepared examples, optimizer); none: a fresh start each run")
    p.add_argument("--two-share", type=float, default=None,
                   help="the share of two-object clips among the examples made (the world's own: about 0.15)")
    p.add_argument("--task-share", type=world.parse_task_shares, default=None,
                   help="the tasks' weights among the examples made, e.g. t2va=0.35,fl2va=0.25,ref2va=0.4 "
                   "(the world's own: a third each)")
    p.add_argument("--cold", type=int, default=0,
                   help="examples each rank makes before training; the rest of its share are made beside "
                   "the training, as many as the minutes allow (making.PoolGrower; 0: all before)")
    p.add_argument("--keep", type=int, default=3000, help="with --state: examples each rank keeps across calls")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", default="")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    if a.ranks == 1:
        train(0, a)
    else:
        mp.spawn(train, args=(a,), nprocs=a.ranks)


if __name__ == "__main__":
    main()
