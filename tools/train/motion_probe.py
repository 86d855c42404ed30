#!/usr/bin/env python3
"""How much the DiT reads its prompts' motion words: a training-time probe
of what eval.py's "colour and direction" measures on renders.

  python3 tools/train/motion_probe.py [--snapshot S] [--count 12] [--log F]

On training-split T2VA clips of one shape, the flow-matching loss on the
shape's latent cells (train_dit.py's objective, the same noise for each
prompt) with the clip's own prompt, with its motion phrase swapped for the
opposite motion's ("moves left" -> "moves right", "grows" -> "shrinks",
"stays still" <-> "bounces"), and with its colour swapped. A DiT that
draws the named motion loses more with the wrong motion word; one that
ignores the word loses the same (ratio 1). The colour swap gives the
scale of a word the DiT does read.

Then the binding of colours to shapes, on two-shape T2VA clips: the loss
on both shapes' cells with the clip's own prompt and with the two colour
words exchanged ("a cyan square grows and a yellow circle sinks" -> "a
yellow square grows and a cyan circle sinks"). The same words are there
in both; only which shape each belongs to differs, so a ratio of 1 is a
DiT that paints both colours without knowing which goes where (what the
eighteenth session saw in its two-object renders).

Last, the second shape's colour word alone, on two-shape T2VA and Ref2VA
clips (the same clips' specs in both), on that shape's cells: swapped for
a third colour. In Ref2VA the prompt names no other colour (the first
shape is Picture 1's), so a ratio of 1 there, where T2VA's is above it,
is a DiT that paints the picture's colour on both shapes (the held-out
Ref2VA two-object clips: 0 of 9 right in every evaluation so far).

The Qwen states come from HF's Qwen3-VL through inputs.Conditioner, as in
training (the GPU machine's Python: transformers).
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import demo  # noqa: E402
import packed  # noqa: E402
import train_dit  # noqa: E402
import world  # noqa: E402

OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up",
            "grow": "shrink", "shrink": "grow", "still": "bounce", "bounce": "still"}
SIGMAS = (0.5, 0.7, 0.85, 0.93)
PROBE_INDEX = 900000  # far past any training stream's indices
VARIANTS = ("own", "motion swapped", "colour swapped")
BINDING = ("own", "colours exchanged")


def swapped_motion(prompt, thing):
    phrase = next(w for w in sorted(world.MOTION_WORDS[thing.motion], key=len, reverse=True) if w in prompt)
    return prompt.replace(phrase, world.MOTION_WORDS[OPPOSITE[thing.motion]][0], 1)


def swapped_colour(prompt, thing):
    other = next(c for c in sorted(world.COLOURS) if c != thing.colour and c not in prompt)
    return world.recoloured(prompt, {thing.colour: other})


def training_clips(seed, count, frames, shapes, two_share, prompts, task="T2VA"):
    """count training-split examples of the task, of `frames` frames and
    `shapes` shapes, each as (arrays, clip, prompts(its prompt, clip));
    seeded apart from any training stream (PROBE_INDEX on)."""
    heldout, out, i = world.load_heldout(), [], PROBE_INDEX
    while len(out) < count:
        meta, arr = world.example(seed, i, "train", heldout, task, two_share=two_share)
        i += 1
        clip = world.Clip.from_json(meta["spec"])
        if len(clip.things) == shapes and arr["frames"].shape[0] == frames:
            out.append((arr, clip, prompts(meta["prompt"], clip)))
    return out


def binding_clips(count, frames=39):
    """Two-shape clips, each with (its prompt, the colours exchanged)."""
    return training_clips(22, count, frames, 2, 1.0, lambda p, c: (p, world.binding_negative(c, p)))


def probe_clips(count, frames=39):
    """One-shape clips, each with its three prompts (own, motion swapped,
    colour swapped)."""
    return training_clips(21, count, frames, 1, None,
                          lambda p, c: (p, swapped_motion(p, c.things[0]), swapped_colour(p, c.things[0])))


def bounce_clips(count, frames=39):
    """probe_clips' rows for bouncing shapes only (bounce -> stays still):
    the held-out renders draw most bounces still."""
    def prompts(p, c):
        t = c.things[0]
        return (p, swapped_motion(p, t), swapped_colour(p, t)) if t.motion == "bounce" else None
    clips = training_clips(31, count * 12, frames, 1, None, prompts)
    return [c for c in clips if c[2] is not None][:count]


def second_colour_clips(task, count, frames=39):
    """Two-shape clips of the task whose shapes differ in colour, each with
    (its prompt, the second shape's colour word swapped). In a Ref2VA clip
    the first shape is Picture 1's and the prompt names only the second's
    colour, so there the word has nothing to be bound against."""
    def prompts(p, c):
        a, b = c.things[0].colour, c.things[1].colour
        near = np.abs(np.subtract(world.COLOURS[b], world.BACKGROUNDS[c.background])) <= 40
        if a == b or near.all():  # (colour_cells could not tell white from cream)
            return None
        # a third colour: in Ref2VA the picture's own would also be absent from the prompt
        other = next(k for k in sorted(world.COLOURS) if k not in (a, b) and k not in p)
        return p, world.recoloured(p, {b: other})
    clips = training_clips(23, count * 2, frames, 2, 1.0, prompts, task)
    return [c for c in clips if c[2] is not None][:count]


def pool_clips(start, count, frames=39, seed=1):
    """T2VA clips of the DiT's training stream from index start on (a call
    makes its pool from there: train_dit.make_items), up to `frames` frames,
    each with its prompt (the stream read as make_items reads it, for a call
    run without DTWO or DTASKS)."""
    out = []
    if count <= 0:
        return out
    for meta, arr in data.stream(train_dit.stream_seed(seed), "train", start=start, workers=1):
        if meta["task"] == "T2VA" and arr["frames"].shape[0] <= frames:
            out.append((arr, world.Clip.from_json(meta["spec"]), (meta["prompt"],)))
            if len(out) == count:
                return out


def pool_gap(model, ref, part, cond, start, count, device):
    """[sigma, set]: the loss on the shapes' cells of T2VA clips of the last
    call's pool (stream indices from start) and of fresh ones (from
    PROBE_INDEX, never drawn). A DiT that learns its pools by heart loses
    far less on the first at the high sigmas, where a render's shapes and
    paths are decided (the twenty-third session's looks at 0.85: 1.40
    against 1.98 on the CPU, 1.63 against 1.90 on the device, other clips)."""
    out = []
    for first in (start, PROBE_INDEX):
        clips = pool_clips(first, count)
        by_prompt = cond.text_only([ps[0] for _, _, ps in clips])
        states = [[by_prompt[ps[0]]] for _, _, ps in clips]
        out.append(losses(model, ref, encode(part, clips, device), states)[:, 0])
    return np.stack(out, axis=1)


def colour_cells(rgb):
    """A cells function for encode: the latent cells of the pixels within 40
    (of 255, each channel) of one colour, the one shape of it in a clip."""
    def cells(frames, latent_t, cell=16):
        px = (np.abs(frames.astype(np.int16) - np.array(rgb, np.int16)) <= 40).all(-1)
        return world.pixel_cells(px, latent_t, cell)
    return cells


def encode(part, clips, device, second_only=False):
    """Each clip's (video latent, audio latent, shape cells), by the
    snapshot's VAEs; second_only: the cells of the clip's second shape."""
    vae, avae = demo.build_video_vae(part, device=device), demo.build_audio_vae(part, device=device)
    out = []
    for arr, clip, _ in clips:
        x = torch.from_numpy(arr["frames"][None]).to(device).permute(0, 4, 1, 2, 3).float() * (2 / 255) - 1
        with torch.no_grad():
            zv = vae.encode(x).float()
            za = avae.encode(torch.from_numpy(arr["audio"][None]).to(device)).float()
        if second_only:
            cells = colour_cells(world.COLOURS[clip.things[1].colour])(arr["frames"], zv.shape[2])
        else:
            cells = world.object_cells(arr["frames"], world.BACKGROUNDS[clip.background], zv.shape[2])
        out.append((zv, za, torch.from_numpy(cells).to(device)[None, None].expand_as(zv)))
    return out


def losses(model, ref, latents, states, sigmas=SIGMAS, reps=2, seed=0):
    """[sigma, variant] mean loss on the shapes' cells; states[k][v] is
    (Qwen states, tags[, extras]) of clip k's prompt variant v (extras: a
    Ref2VA conditioning's picture rows)."""
    gen = torch.Generator().manual_seed(seed)
    items = [train_dit.with_layouts([{"lat": (zv, za), "states": sv[0], "tags": sv[1],
                                      "extra": dict(sv[2]) if len(sv) > 2 else {}} for sv in sts])
             for (zv, za, _), sts in zip(latents, states)]
    out = np.zeros((len(sigmas), len(states[0])))
    for i, s in enumerate(sigmas):
        for _ in range(reps):
            for (zv, za, cells), variants in zip(latents, items):
                ev = torch.randn(zv.shape, generator=gen).to(zv.device)
                ea = torch.randn(za.shape, generator=gen).to(za.device)
                # one noise for the clip's three prompts: train_dit's clip and target
                clips, targets = zip(*(train_dit.at_sigma(ref, it, s, ev, ea, seed=1) for it in variants))
                with torch.no_grad():
                    outs = packed.velocity(model, ref, list(clips))
                for v, ((ov, _), (tv, _)) in enumerate(zip(outs, targets)):
                    out[i, v] += float(train_dit.cell_loss(ov, tv, cells))
    return out / (reps * len(latents))


def second_colour(model, ref, part, cond, count, device):
    """[sigma, task, variant]: the second shape's colour word read in T2VA
    and in Ref2VA two-shape clips, on that shape's cells."""
    out = []
    for task in ("T2VA", "Ref2VA"):
        clips = second_colour_clips(task, count)
        lat = encode(part, clips, device, second_only=True)
        if task == "T2VA":
            by_prompt = cond.text_only([q for _, _, ps in clips for q in ps])
            states = [[by_prompt[q] for q in ps] for _, _, ps in clips]
        else:
            states = [[cond.ref2va(q, arr["picture"]) for q in ps] for arr, _, ps in clips]
        out.append(losses(model, ref, lat, states))
    return np.stack(out, axis=1)


def report_second(table, sigmas=SIGMAS):
    lines = ["sigma  second shape: T2VA own  colour swapped (ratio)  Ref2VA own  colour swapped (ratio)"]
    for s, ((t_own, t_sw), (r_own, r_sw)) in zip(sigmas, table):
        lines.append(f"{s:5.2f}  {t_own:20.4f}  {t_sw:14.4f} ({t_sw / t_own:.3f})  {r_own:10.4f}  "
                     f"{r_sw:14.4f} ({r_sw / r_own:.3f})")
    return "\n".join(lines)


def report_words(table, sigmas=SIGMAS, title="own prompt"):
    lines = [f"sigma  {title}  motion swapped (ratio)  colour swapped (ratio)"]
    for s, (own, mot, col) in zip(sigmas, table):
        lines.append(f"{s:5.2f}  {own:10.4f}  {mot:14.4f} ({mot / own:.3f})  {col:14.4f} ({col / own:.3f})")
    return lines


def report(table, binding, sigmas=SIGMAS):
    lines = report_words(table, sigmas)
    lines.append("sigma  two shapes  colours exchanged (ratio)")
    for s, (own, ex) in zip(sigmas, binding):
        lines.append(f"{s:5.2f}  {own:10.4f}  {ex:14.4f} ({ex / own:.3f})")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--count", type=int, default=12)
    p.add_argument("--log", default="", help="a jsonl file to append the figures to")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--pool-last", type=int, default=0,
                   help="the last call's examples (its DIT_N): its pool's loss against fresh clips'")
    p.add_argument("--pool-count", type=int, default=36)
    a = p.parse_args()
    import inputs

    part = demo.part_dir(a.snapshot)
    clips, pairs, bounces = probe_clips(a.count), binding_clips(a.count), bounce_clips(a.count)
    latents, pair_latents = encode(part, clips, a.device), encode(part, pairs, a.device)
    cond = inputs.Conditioner(part, a.device, demo.build_video_vae(part, device=a.device))
    by_prompt = cond.text_only([q for _, _, ps in clips + pairs + bounces for q in ps])
    states = [[by_prompt[q] for q in ps] for _, _, ps in clips]
    pair_states = [[by_prompt[q] for q in ps] for _, _, ps in pairs]
    ref = demo.dit_training_shims()
    model = demo.load_dit(a.snapshot, device=a.device).eval()
    table = losses(model, ref, latents, states)
    binding = losses(model, ref, pair_latents, pair_states)
    second = second_colour(model, ref, part, cond, a.count, a.device)
    bounce = losses(model, ref, encode(part, bounces, a.device), [[by_prompt[q] for q in ps] for _, _, ps in bounces])
    print(report(table, binding))
    print(report_second(second))
    print("\n".join(report_words(bounce, title="bouncing shape")))
    done, gap = demo.trained(a.snapshot, "dit"), None
    if a.pool_last:
        start = int(done.get("examples_seen", 0)) - a.pool_last
        gap = pool_gap(model, ref, part, cond, start, a.pool_count, a.device)
        print("sigma  last call's pool  fresh clips (ratio)")
        print("\n".join(f"{s:5.2f}  {pl:16.4f}  {fr:11.4f} ({fr / pl:.3f})" for s, (pl, fr) in zip(SIGMAS, gap)))
    if a.log:
        step = int(done.get("steps", 0))
        with open(a.log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"stage": "motion_probe", "dit_steps": step, "sigmas": list(SIGMAS),
                                "loss": {v: list(map(float, table[:, j])) for j, v in enumerate(VARIANTS)},
                                "binding": {v: list(map(float, binding[:, j])) for j, v in enumerate(BINDING)},
                                "second_colour": {t: {v: list(map(float, second[:, i, j])) for j, v in
                                                      enumerate(("own", "colour swapped"))}
                                                  for i, t in enumerate(("T2VA", "Ref2VA"))},
                                "bounce": {v: list(map(float, bounce[:, j])) for j, v in enumerate(VARIANTS)},
                                "pool_gap": None if gap is None else
                                {v: list(map(float, gap[:, j])) for j, v in enumerate(("pool", "fresh"))}}) + "\n")


if __name__ == "__main__":
    main()
