#!/usr/bin/env python3
"""Whether the demo model's Qwen states bind each colour word to its shape:
linear probes on the text encoder's output for two-shape T2VA prompts.

  python3 tools/train/binding_states.py [--snapshot S] [--count 2400] [--log F]

The DiT can only paint "a cyan square ... and a yellow circle" right if
the states it reads say which colour belongs to which shape. The token
refiner has no positions (H3-FACTS: no RoPE there), so that has to be in
the states themselves: a causal encoder carries it to a shape word's
state from the words before it. For each prompt the probe takes the
state at the last token of each shape word and, trained on most prompts
and scored on the rest, predicts the colour named for that shape (one
linear map, softmax over the 8 colours). "pairwise" is how often the
probe ranks the shape's own colour above the other shape's: 50 % is a
state that knows both colours are in the prompt and not which is its
own. The same probe at the colour words' own last tokens is the scale:
there the colour is the token itself. "shape 2 + colour 1" reads two
rows at once (their features side by side), the second shape's and the
first colour's: what attention over several rows has to go on. Each
probe runs twice: on the Qwen states, and on the rows the DiT's token
refiner makes of them (what the video rows attend to; the snapshot's
DiT).

The Qwen states come from HF's Qwen3-VL through inputs.Conditioner, as in
training (the GPU machine's Python: transformers).
"""

import argparse
import json
import os
import random
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402
import world  # noqa: E402

SEED = 23  # apart from training's streams and motion_probe's clips
SITES = ("shape 1", "shape 2", "colour 1", "colour 2")
STAGES = ("Qwen states", "refined rows")
PAIR = "shape 2 + colour 1"


def prompts(count, seed=SEED):
    """count two-shape T2VA training-split prompts with their clips."""
    rng, heldout = random.Random(seed), world.load_heldout()
    out = []
    while len(out) < count:
        clip = world.sample_clip(rng, "train", heldout, "T2VA", two_share=1.0)
        out.append((world.prompt_for(clip, rng), clip))
    return out


def word_ends(prompt, things):
    """Character index of the last letter of each site's word, in SITES
    order: both shape words, then both colour words."""
    spans = [re.search(r"\b%s %s\b" % (t.colour, t.shape), prompt) for t in things]
    return [m.end() - 1 for m in spans] + [m.start() + len(t.colour) - 1 for m, t in zip(spans, things)]


def token_at(offsets, char):
    """Index of the token whose characters cover `char`."""
    return next(i for i, (s, e) in enumerate(offsets) if s <= char < e)


def fit_probe(x, y, classes, steps=400, decay=1e-3):
    """Multinomial logistic regression on standardised features."""
    mean, std = x.mean(0), x.std(0) + 1e-8
    w = torch.zeros(x.shape[1], classes, requires_grad=True)
    b = torch.zeros(classes, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(((x - mean) / std) @ w + b, y) + decay * w.pow(2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    return lambda z: ((z - mean) / std) @ w.detach() + b.detach()


def scores(feats, own, other, train):
    """(top-1 accuracy, pairwise accuracy) of a probe fitted on the first
    `train` rows and scored on the rest."""
    probe = fit_probe(feats[:train], own[:train], len(world.COLOURS))
    logits = probe(feats[train:])
    rows = torch.arange(logits.shape[0])
    top1 = (logits.argmax(1) == own[train:]).float().mean()
    pair = (logits[rows, own[train:]] > logits[rows, other[train:]]).float().mean()
    return float(top1), float(pair)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--count", type=int, default=2400)
    p.add_argument("--log", default="", help="a jsonl file to append the figures to")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()
    import inputs

    cond = inputs.Conditioner(demo.part_dir(a.snapshot), a.device, None)
    model = demo.load_dit(a.snapshot, device=a.device).eval()
    items = prompts(a.count)
    states = cond.text_only([q for q, _ in items])
    colours = sorted(world.COLOURS)
    feats = {(g, s): [] for g in STAGES for s in SITES}
    own, other = [], []
    for q, clip in items:
        enc = cond.tok(q, add_special_tokens=False, return_offsets_mapping=True)
        st = states[q][0]
        assert len(enc["input_ids"]) == st.shape[0], "the probe's tokens differ from the presentation's"
        with torch.no_grad():
            rows = model.preprocess_text_embeds(st[None].to(a.device))[0].float()
        for site, char in zip(SITES, word_ends(q, clip.things)):
            i = token_at(enc["offset_mapping"], char)
            feats[STAGES[0], site].append(st[i].cpu())
            feats[STAGES[1], site].append(rows[i].cpu())
        c = [colours.index(t.colour) for t in clip.things]
        own.append(c)
        other.append(c[::-1])
    own, other = torch.tensor(own), torch.tensor(other)
    train = a.count * 3 // 4
    result = {g: {} for g in STAGES}
    print(f"{a.count} two-shape prompts, probes fitted on {train}, scored on {a.count - train}")
    print("rows          site      own colour (top-1)  own over the other's (pairwise)")
    for g in STAGES:
        for site in SITES:
            k = int(site[-1]) - 1
            top1, pair = scores(torch.stack(feats[g, site]).float(), own[:, k], other[:, k], train)
            result[g][site] = {"top1": top1, "pairwise": pair}
            print(f"{g:12s}  {site:8s}  {100 * top1:17.1f} %  {100 * pair:30.1f} %")
        both = torch.cat([torch.stack(feats[g, "shape 2"]), torch.stack(feats[g, "colour 1"])], 1).float()
        top1, pair = scores(both, own[:, 1], other[:, 1], train)
        result[g][PAIR] = {"top1": top1, "pairwise": pair}
        print(f"{g:12s}  {PAIR}  {100 * top1:7.1f} %  {100 * pair:30.1f} %")
    if a.log:
        with open(a.log, "a", encoding="utf-8") as f:
            step = int(demo.trained(a.snapshot, "dit").get("steps", 0))
            f.write(json.dumps({"stage": "binding_states", "dit_steps": step, "count": a.count,
                                "probe": result}) + "\n")


if __name__ == "__main__":
    main()
