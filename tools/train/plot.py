#!/usr/bin/env python3
"""Loss curves of the demo model's training logs (tools/train/logs/*.jsonl)
as one PNG: python3 tools/train/plot.py --out docs/demo-training.png
(run_gpu.sh makes it after each call; unpack.sh puts it in docs/)"""

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
    fig, axes = plt.subplots(1, len(stages), figsize=(5 * len(stages), 4))
    axes = axes if len(stages) > 1 else [axes]
    # one colour per loss (a decoder-only run's loss apart), one line per
    # run, and a legend of the losses alone: with a legend entry per run,
    # sixty runs left no room for the curves
    colour = {"loss": "tab:blue", "loss_video": "tab:blue", "loss_audio": "tab:orange",
              "decoder": "tab:green"}
    for ax, st in zip(axes, stages):
        labelled = set()
        for (st2, k, run), pts in sorted(s.items()):
            if st2 != st:
                continue
            kind = "decoder" if run.endswith("decoder only") else k
            name = {"decoder": "loss, decoder only", "loss": "loss"}.get(kind, kind.removeprefix("loss_"))
            pts.sort()
            ax.plot([x for x, _ in pts], [y for _, y in pts], color=colour[kind], lw=1,
                    label=None if kind in labelled else name)
            labelled.add(kind)
        runs = len({run for st2, _, run in s if st2 == st})
        ax.set_title(f"{st} ({runs} runs)")
        ax.set_xlabel("optimizer step")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
