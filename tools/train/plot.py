#!/usr/bin/env python3
"""Loss curves of the demo model's training logs (tools/train/logs/*.jsonl)
as one PNG: python3 tools/train/plot.py --out docs/demo-training.png"""

import argparse
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def series(paths):
    """(stage, key, run) -> [(step, value)]: one line per log file, as a
    fresh VAE run starts again at step 0 and would zigzag with the last."""
    out = {}
    for p in sorted(paths):
        name, run = os.path.basename(p).removesuffix(".jsonl").rsplit("-", 1)
        # the decoder-only runs log as video_vae: their file name tells them apart
        run = run + (" decoder only" if name == "video_decoder" else "")
        with open(p, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if "step" not in r or r.get("done"):
                    continue
                for k in ("loss", "loss_video", "loss_audio"):
                    if k in r:
                        out.setdefault((r["stage"], k, run), []).append((r["step"], r[k]))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--logs", default=os.path.join(HERE, "logs"))
    p.add_argument("--out", required=True)
    a = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = series(glob.glob(os.path.join(a.logs, "*.jsonl")))
    stages = sorted({st for st, _, _ in s})
    fig, axes = plt.subplots(1, len(stages), figsize=(5 * len(stages), 5.2))
    axes = axes if len(stages) > 1 else [axes]
    # one colour per run, one line style per loss: the DiT's video and
    # audio losses of a run share its colour
    runs = sorted({run for _, _, run in s})
    colour = {run: plt.cm.tab20(i % 20) for i, run in enumerate(runs)}
    style = {"loss": "-", "loss_video": "-", "loss_audio": ":"}
    for ax, st in zip(axes, stages):
        for (st2, k, run), pts in sorted(s.items()):
            if st2 == st:
                pts.sort()
                ax.plot([x for x, _ in pts], [y for _, y in pts], style[k], color=colour[run],
                        label=f"{k.removeprefix('loss_') if k != 'loss' else 'loss'} {run}", lw=1)
        ax.set_title(st)
        ax.set_xlabel("optimizer step")
        ax.set_yscale("log")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
