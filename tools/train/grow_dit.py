#!/usr/bin/env python3
"""Deepens the demo snapshot's DiT without changing what it computes, so
training goes on from its steps with more layers to learn in.

  python3 tools/train/grow_dit.py --layers 7 [--snapshot S]

Why: after some 13,000 steps on the current world the held-out figures sit
at 73-79 % whatever the mix, and renders of training-split prompts score
no better than held-out ones (the twenty-second session, README): the DiT
is short everywhere, not only on combinations it never saw. Its four
blocks are 2.7 M of its 3.7 M parameters; the snapshot's budget (40 MB)
leaves room for about four more.

How: each new block is a copy of the block before it with the two gate
chunks of its adaLN projection (gate_msa, gate_mlp, for every modality)
set to zero. A block adds gate * attn(...) and gate * mlp(...) to the
stream, so a zero gate adds nothing: the grown DiT's output is the old
one's exactly. The gates still get gradients (their product's other
factor is the copied block's output), so training opens them; the copy
starts from features that already mean something, where fresh weights
would start from noise. Copies go after the last blocks (4 -> 7: blocks
0, 1, 1', 2, 2', 3, 3'), the first block keeps its place next to the
patch embedding.

The snapshot's transformer config takes the new num_layers (the engine
and the reference read it from there), h3studio.json records the growth
under training.dit.grown, and the shards keep their split and names.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402

# AdalnProj's output is [modality][chunk][hidden]: six chunks a modality,
# in the order shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp
ADALN_CHUNKS = 6
GATE_CHUNKS = (2, 5)


def sources(old, new):
    """For each of the new blocks, (the old block it copies, whether it is
    a gated-off copy): the copies follow the last new - old blocks."""
    if new < old:
        raise ValueError(f"grow_dit: {new} layers is fewer than the snapshot's {old}")
    extra, out = new - old, []
    for i in range(old):
        out.append((i, False))
        if i >= old - extra:
            out.append((i, True))
    return out


def gated_off(adaln_weight, adaln_bias, hidden):
    """The adaLN projection with its gate chunks zeroed (new tensors)."""
    w, b = adaln_weight.clone(), adaln_bias.clone()
    modalities = w.shape[0] // (ADALN_CHUNKS * hidden)
    for m in range(modalities):
        for c in GATE_CHUNKS:
            rows = slice((m * ADALN_CHUNKS + c) * hidden, (m * ADALN_CHUNKS + c + 1) * hidden)
            w[rows] = 0
            b[rows] = 0
    return w, b


def grown_tensors(tensors, old, new, hidden):
    out = {k: v for k, v in tensors.items() if not k.startswith("blocks.")}
    for j, (i, copy) in enumerate(sources(old, new)):
        prefix = f"blocks.{i}."
        for name, t in tensors.items():
            if name.startswith(prefix):
                out[f"blocks.{j}." + name[len(prefix):]] = t.clone()
        if copy:
            w, b = gated_off(out[f"blocks.{j}.adaln_proj.linear.weight"], out[f"blocks.{j}.adaln_proj.linear.bias"],
                             hidden)
            out[f"blocks.{j}.adaln_proj.linear.weight"], out[f"blocks.{j}.adaln_proj.linear.bias"] = w, b
    return out


def blocks(snap):
    """The snapshot's DiT blocks (its first partition's config)."""
    first = os.path.join(demo.part_dir(snap, demo.PARTITIONS[0]), "transformer")
    return demo.read_json(os.path.join(first, "config.json"))["num_layers"]


def grow(snap, layers):
    """Grows every partition's transformer to `layers` blocks; returns the
    old count (the snapshot is left as it is when it already has them)."""
    old = blocks(snap)
    if layers == old:
        return old
    for part in demo.PARTITIONS:
        tdir = os.path.join(demo.part_dir(snap, part), "transformer")
        cfg = demo.read_json(os.path.join(tdir, "config.json"))
        tensors = demo.R.read_dir_safetensors(tdir)
        out = grown_tensors(tensors, old, layers, cfg["hidden_size"])
        demo.write_sharded(tdir, out, lambda k: not k.startswith("blocks."))
        demo.write_json(os.path.join(tdir, "config.json"), dict(cfg, num_layers=layers))
    done = demo.trained(snap, "dit")
    demo.record(snap, "dit", grown=list(done.get("grown", [])) +
                [{"from": old, "to": layers, "at_steps": int(done.get("steps", 0))}])
    return old


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--snapshot", default=demo.SNAPSHOT)
    p.add_argument("--layers", type=int, required=True, help="the DiT's blocks after growing")
    a = p.parse_args()
    old = grow(a.snapshot, a.layers)
    print(f"grow_dit: {old} -> {a.layers} blocks" if old != a.layers else f"grow_dit: already {old} blocks")


if __name__ == "__main__":
    main()
