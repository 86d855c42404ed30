#!/usr/bin/env python3
"""Renders the demo world's held-out examples with our Go engine and scores
them with measure.py: issue 15's evaluation of the demo model.

  python3 eval.py [--binary bin/h3studio] [--count 50] [--out DIR] [--tasks T2VA,FL2VA,Ref2VA]

makes the held-out split (world.py, seed 1), renders each example through
the CLI as a creator would (`h3studio render -d demo`, the example's frame
count and canvas, a fixed seed per example): T2VA from the prompt, FL2VA
with the anchors as --first-frame/--last-frame, Ref2VA with the picture as
--ref-image (Picture 1). It prints one table per task and overall.

Renders stay in DIR (default eval-out/ in the current folder): a rerun
renders only what is missing or was made by another binary, model or
request (each <id>.mp4 has an <id>.json saying what made it and how long
it took), so it resumes after a stop and starts over when the weights
change (the demo model is embedded in the binary).
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import clipio
import measure
import world

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The held-out split the figures are measured on.
HELDOUT_SEED = 1
HELDOUT_COUNT = 50
# Render seeds are the example's index plus this, so an example's noise
# never depends on which other examples or tasks are asked for.
RENDER_SEED_BASE = 1000


def task_inputs(meta, arrays, folder):
    """The task's pictures as (flag, path, image): FL2VA's two anchors,
    Ref2VA's Picture 1; none for T2VA."""
    base = os.path.join(folder, meta["id"])
    if meta["task"] == "FL2VA":
        return [("--first-frame", base + ".first.png", arrays["anchors"][0]),
                ("--last-frame", base + ".last.png", arrays["anchors"][1])]
    if meta["task"] == "Ref2VA":
        return [("--ref-image", base + ".picture.png", arrays["picture"])]
    return []


def request(meta, arrays, folder, model, index, steps=0):
    """The h3studio render arguments for one example, and the pictures
    they name as (path, uint8 [H,W,3]), to write before it runs."""
    clip = world.Clip.from_json(meta["spec"])
    args = ["render", "-d", model, "-p", meta["prompt"], "--seed", str(RENDER_SEED_BASE + index),
            "--frames", str(clip.frames), "--width", str(clip.width), "--height", str(clip.height),
            "-o", os.path.join(folder, meta["id"] + ".mp4")]
    if steps:
        args += ["--steps", str(steps)]
    inputs = task_inputs(meta, arrays, folder)
    for flag, path, _ in inputs:
        args += [flag, path]
    return args, [(path, image) for _, path, image in inputs]


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def render_key(binary_digest, args):
    """What a render depends on: the binary (which embeds the demo model)
    and its arguments. A model folder's own changes are not seen: give such
    runs a fresh --out."""
    return hashlib.sha256(json.dumps([binary_digest, args]).encode()).hexdigest()


def cached_seconds(folder, example_id, key):
    """The recorded wall time of a render already in folder made by the
    same key, else None."""
    mp4, record = (os.path.join(folder, example_id + ext) for ext in (".mp4", ".json"))
    if not (os.path.exists(mp4) and os.path.exists(record)):
        return None
    with open(record, encoding="utf-8") as f:
        doc = json.load(f)
    return doc["seconds"] if doc.get("key") == key else None


def render(binary, args, pictures, folder, example_id, key):
    """Runs one render (after writing its pictures) and records it; the
    wall time in seconds, cold binary start included."""
    for path, image in pictures:
        clipio.write_png(path, image)
    t0 = time.monotonic()
    p = subprocess.run([binary] + args, capture_output=True, check=False)
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        tail = "\n".join(p.stderr.decode(errors="replace").strip().splitlines()[-3:])
        raise SystemExit(f"eval: render of {example_id} failed (exit {p.returncode}):\n{tail}")
    with open(os.path.join(folder, example_id + ".json"), "w", encoding="utf-8") as f:
        json.dump({"key": key, "args": args, "seconds": seconds}, f, indent=1)
    return seconds


def measured(meta, arrays, rendered):
    """The summary's values for one render: the table's checks plus the
    FL2VA first-frame PSNR."""
    checks = measure.score(meta, dict(arrays, **rendered))
    clip = world.Clip.from_json(meta["spec"])
    row = {"colour+direction": checks["colour"] and checks["motion"]}
    # Not one of the figures: what a partly trained model gets
    # right first, so the table shows progress before the objects do.
    row["background"] = measure.background_of(rendered["frames"]) == clip.background
    # Nor this: the two-object clips alone, a fifth of the held-out split
    # and where a partly trained DiT leaves the second object out.
    if len(clip.things) == 2:
        row["two objects"] = row["colour+direction"]
    if clip.sound in world.TONES:
        row["pitch"] = checks["sound"]
    if "pan" in checks:
        row["pan"] = checks["pan"]
    if meta["task"] == "FL2VA":
        row["psnr"] = measure.psnr(rendered["frames"][0], arrays["anchors"][0])
    if meta["task"] == "Ref2VA":
        row["picture"] = checks["picture"]
    return row


def motions_seen(meta, frames):
    """[(colour, shape, the motion asked, the motion measured)] for each of
    the clip's objects: the motion None where the colour is missing at the
    clip's ends, "absent" where it is nowhere."""
    clip = world.Clip.from_json(meta["spec"])
    lab = measure.labels(frames)
    seen = measure.colours_seen(frames, lab)
    side = min(clip.width, clip.height)
    return [(t.colour, t.shape, t.motion,
             measure.motion_of(*measure.track(lab, t.colour), side) if t.colour in seen else "absent")
            for t in clip.things]


def detail(rows):
    """rows: [(example id, task, motions_seen)] -> a line per example, then
    how often each asked motion came out as each measured one."""
    lines, tally = [], {}
    for example_id, task, objects in rows:
        lines.append(f"{example_id} {task}: " + ", ".join(f"{c} {s} {m} -> {g}" for c, s, m, g in objects))
        for _, _, m, g in objects:
            tally[(m, str(g))] = tally.get((m, str(g)), 0) + 1
    lines.append("asked -> measured: " + ", ".join(f"{m} -> {g} {n}" for (m, g), n in sorted(tally.items())))
    return lines


def percent(values):
    return f"{100 * sum(values) / len(values):.1f} % ({sum(values)}/{len(values)})" if values else "-"


def table(rows):
    """rows: [(task, measured row, seconds)] -> the summary's lines, one
    column per task present and one for all."""
    tasks = [t for t in world.TASKS if any(r[0] == t for r in rows)]
    columns = [(t, [r for r in rows if r[0] == t]) for t in tasks] + [("all", rows)]

    def cell(name, group):
        if name == "psnr median":
            v = [r[1]["psnr"] for r in group if "psnr" in r[1]]
            return f"{statistics.median(v):.1f} dB" if v else "-"
        if name == "psnr >= 25 dB":
            return percent([r[1]["psnr"] >= measure.FL2VA_PSNR_DB for r in group if "psnr" in r[1]])
        if name == "render s (median, max)":
            v = [r[2] for r in group]
            return f"{statistics.median(v):.1f}, {max(v):.1f}"
        return percent([r[1][name] for r in group if name in r[1]])

    names = ["colour+direction", "two objects", "background", "pitch", "pan", "psnr median", "psnr >= 25 dB",
             "picture", "render s (median, max)"]
    labels = {"colour+direction": "colour and direction right", "two objects": "... of two-object clips (extra)",
              "background": "background right (extra)",
              "pitch": "pitch within a semitone",
              "pan": "pan side right", "psnr median": "FL2VA first-frame PSNR, median",
              "psnr >= 25 dB": "FL2VA first-frame PSNR >= 25 dB", "picture": "Ref2VA colour+shape kept",
              "render s (median, max)": "render wall s (median, max)"}
    grid = [[""] + [f"{t} ({len(g)})" for t, g in columns]]
    grid += [[labels[n]] + [cell(n, g) for _, g in columns] for n in names]
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in grid]


def examples(folder, count, seed, split="heldout"):
    """The held-out examples (or, as a diagnostic, the training split's:
    combinations the model has seen), written by world.py into folder
    (cheap, and the same bytes every time) and read back as (meta, arrays)."""
    world.write(folder, split, count, seed)
    out = []
    with open(os.path.join(folder, "examples.jsonl"), encoding="utf-8") as f:
        for line in f:
            meta = json.loads(line)
            with np.load(os.path.join(folder, meta["id"] + ".npz")) as z:
                out.append((meta, dict(z)))
    return out


def selected(items, tasks, first):
    """The examples to render, each with its index in the split: those of
    the tasks asked, from index first on. A later range (--first) is set
    beside an earlier run's first examples, whose renders the same binary
    and model would only make again."""
    return [(i, meta, arrays) for i, (meta, arrays) in enumerate(items) if i >= first and meta["task"] in tasks]


def parse_tasks(text):
    tasks = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in tasks if t not in world.TASKS]
    if bad or not tasks:
        raise argparse.ArgumentTypeError(f"--tasks {text}: use a comma list of {', '.join(world.TASKS)}")
    return tasks


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--binary", default=os.path.join(ROOT, "bin", "h3studio"), help="the h3studio to render with (make build)")
    p.add_argument("--model", default="demo", help="the model to render with (-d): demo, or a snapshot folder")
    p.add_argument("--count", type=int, default=HELDOUT_COUNT, help="held-out examples to make (the issue's figure: 50)")
    p.add_argument("--out", default="eval-out", help="folder for the examples, renders (<id>.mp4) and their records")
    p.add_argument("--tasks", type=parse_tasks, default=list(world.TASKS), help="comma list of tasks to render (default all)")
    p.add_argument("--steps", type=int, default=0, help="denoising steps (0: the model's default)")
    p.add_argument("--split", default="heldout", choices=("heldout", "train"),
                   help="held-out combinations (the issue's figures) or seen ones (a diagnostic)")
    p.add_argument("--first", type=int, default=0,
                   help="render from this example on (the ones before it scored in an earlier run)")
    p.add_argument("--detail", action="store_true",
                   help="also each example's objects, the motion asked and the motion measured")
    a = p.parse_args()
    if not os.access(a.binary, os.X_OK):
        raise SystemExit(f"eval: no h3studio at {a.binary}; run make build or pass --binary")
    renders = os.path.join(a.out, "renders")
    os.makedirs(renders, exist_ok=True)
    digest = file_digest(a.binary)
    rows, motions = [], []
    items = examples(os.path.join(a.out, "examples"), a.count, HELDOUT_SEED, a.split)
    for index, meta, arrays in selected(items, a.tasks, a.first):
        args, pictures = request(meta, arrays, renders, a.model, index, a.steps)
        key = render_key(digest, args)
        seconds = cached_seconds(renders, meta["id"], key)
        if seconds is None:
            seconds = render(a.binary, args, pictures, renders, meta["id"], key)
            print(f"{meta['id']} {meta['task']}: {seconds:.1f} s  {meta['prompt']}", file=sys.stderr, flush=True)
        frames, audio = clipio.read_mp4(os.path.join(renders, meta["id"] + ".mp4"))
        rows.append((meta["task"], measured(meta, arrays, {"frames": frames, "audio": audio}), seconds))
        if a.detail:
            motions.append((meta["id"], meta["task"], motions_seen(meta, frames)))
    if not rows:
        raise SystemExit(f"eval: none of examples {a.first}-{a.count - 1} is a {', '.join(a.tasks)} example; raise --count")
    print("\n".join(table(rows)))
    if a.detail:
        print("\n".join(detail(motions)))


if __name__ == "__main__":
    main()
