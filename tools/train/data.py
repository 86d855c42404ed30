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
    seed, split, index, task = args
    return world.example(seed, index, split, _HELDOUT, task)


def stream(seed, split="train", start=0, count=None, task=None, workers=None):
    """(meta, arrays) for indices start, start+1, ... (count of them, or forever)."""
    workers = workers or max(1, min(12, (os.cpu_count() or 2) - 2))
    def indices():
        i = start
        while count is None or i < start + count:
            yield (seed, split, i, task)
            i += 1
    if workers == 1:
        for a in indices():
            yield _one(a)
        return
    ctx = mp.get_context("fork")
    with ctx.Pool(workers) as pool:
        for ex in pool.imap(_one, indices(), chunksize=8):
            yield ex
