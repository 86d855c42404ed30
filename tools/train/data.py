"""Demo-world examples for training, made on the fly by worker processes.

world.example(seed, index, ...) is deterministic per (seed, split, index),
so a stream is reproducible and a resumed run can start at the index the
last one reached (h3studio.json's training record keeps it)."""

import multiprocessing as mp
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import world  # noqa: E402

_HELDOUT = None


def _one(args):
    global _HELDOUT
    if _HELDOUT is None:
        _HELDOUT = world.load_heldout()
    seed, split, index, task, audio_only, two_share, task_shares = args
    if not audio_only:
        return world.example(seed, index, split, _HELDOUT, task, two_share=two_share, task_shares=task_shares)
    # the same draws as world.example (rendering takes no randomness),
    # without drawing the frames
    rng = world.random.Random(f"demo-world:{seed}:{split}:{index}")
    clip = world.sample_clip(rng, split, _HELDOUT, task, world.CANVAS, two_share, task_shares)
    meta = {"id": f"{split}-{seed}-{index:06d}", "task": clip.task, "prompt": world.prompt_for(clip, rng)}
    return meta, {"audio": world.render_audio(clip)}


def stream(seed, split="train", start=0, count=None, task=None, workers=4, audio_only=False, chunk=256,
           two_share=None, task_shares=None):
    """(meta, arrays) for indices start, start+1, ... (count of them, or
    forever). Work is handed out `chunk` indices at a time: a pool fed an
    endless iterator reads it ahead without bound. two_share, task_shares:
    see world.sample_clip."""
    end = None if count is None else start + count
    args = lambda i0, i1: [(seed, split, i, task, audio_only, two_share, task_shares) for i in range(i0, i1)]  # noqa: E731
    if workers <= 1:
        i = start
        while end is None or i < end:
            yield _one(args(i, i + 1)[0])
            i += 1
        return
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        i = start
        while end is None or i < end:
            j = i + chunk if end is None else min(i + chunk, end)
            for ex in pool.imap(_one, args(i, j), chunksize=8):
                yield ex
            i = j
