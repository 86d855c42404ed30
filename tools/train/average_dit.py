#!/usr/bin/env python3
"""A snapshot whose DiT is the uniform mean of several snapshots' DiTs
(checkpoint averaging), everything else the first one's:

  python3 tools/train/average_dit.py --out DIR SNAPSHOT [SNAPSHOT ...]

The weights are averaged in float32 and stored in the snapshot's own
dtypes (demo.save_dit), so one snapshot alone comes back byte for byte.
The eighteenth session's test of it (tools/train/README.md): the mean of
four DiTs of one trajectory scored no better than the best of them.
h3studio.json records the mean's sources under training.dit.averaged.
"""

import argparse
import hashlib
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import demo  # noqa: E402


def dit_digest(snap):
    """sha256 over the DiT's shards, in name order: which weights a mean used."""
    h = hashlib.sha256()
    d = os.path.join(demo.part_dir(snap), "transformer")
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".safetensors"):
            with open(os.path.join(d, fn), "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def average(out, snaps):
    if os.path.exists(out):
        raise SystemExit(f"average_dit.py: {out} exists; name a new folder for the averaged snapshot")
    shutil.copytree(snaps[0], out)
    models = [demo.load_dit(s) for s in snaps]
    states = [m.state_dict() for m in models]
    mean = {k: sum(sd[k].float() for sd in states) / len(states) for k in states[0]}
    model = models[0]
    model.load_state_dict(mean)
    demo.save_dit(model, out)
    if len(snaps) > 1:
        sources = [{"steps": int(demo.trained(s, "dit").get("steps", 0)), "sha256": dit_digest(s)} for s in snaps]
        demo.record(out, "dit", averaged=sources)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="a new folder for the averaged snapshot")
    p.add_argument("snapshots", nargs="+", help="snapshot folders (models/demo/snapshot's layout)")
    a = p.parse_args()
    average(a.out, a.snapshots)


if __name__ == "__main__":
    with torch.no_grad():
        main()
