"""The DiT's training examples, made from the demo world's raw clips by the
reference code the parity tests pin (inputs.py), and a rank's pool grown
while it trains.

Why grow the pool during training: a call that makes all its examples
first spends a third of a cold call on them and then draws each one 24-39
times, and the DiT learns that pool by heart (README, twenty-third
session: its loss on the pool's clips is 16-41 % under fresh clips' at
sigma 0.85-0.93). With train_dit.py --cold, a rank makes only the first
examples of its share before training and a PoolGrower makes the rest
beside the training loop, so the pool keeps growing through the call.
"""

import itertools
import threading
import time

import numpy as np
import torch

import demo
import inputs
import world
from train_vae import intermediate_on


class Maker:
    """Each example as (video latent, audio latent, Qwen states, tags,
    payload extras), encoded in groups of one frame count; the frames are
    dropped once encoded (20,000 clips would not fit in memory). Groups of
    8: at 32, eight ranks' encodes held 122 GB of the GPU at once, past an
    H100's 80. spent: seconds by part of the work (world, encode, each
    task's conditioning), added up there: where a call's making goes.
    negatives: each two-object T2VA and Ref2VA example also carries its
    binding negative's conditioning ("negative": states, tags, extras of
    world.binding_negative's prompt), for flow_loss's binding term.
    text: each example and negative also carries its TextLayers entry
    ("text"), for training the text encoder (restate). The encoders stay
    loaded between make() calls until close()."""

    def __init__(self, part, device, tasks, rng, group_size=8, spent=None, negatives=False, text=False):
        self.device, self.tasks, self.rng, self.group_size = device, tasks, rng, group_size
        self.spent = {} if spent is None else spent
        self.negatives, self.text = negatives, text
        intermediate_on(device)
        self.vae = demo.build_video_vae(part, device=device)
        self.avae = demo.build_audio_vae(part, device=device)
        self.cond = inputs.Conditioner(part, device, self.vae, text=text)

    def _timed(self, key, t):
        self.spent[key] = self.spent.get(key, 0.0) + time.time() - t

    def make(self, examples, stop=None):
        """The items of these (meta, arrays) examples; stop (a callable):
        read no further example once it says so (those read are finished)."""
        items, texts, pending = [], [], {}
        t = time.time()
        for meta, arr in examples:
            self._timed("world", t)
            if meta["task"].lower() in self.tasks:
                g = pending.setdefault(arr["frames"].shape[0], [])
                g.append((meta, arr))
                if len(g) == self.group_size:
                    self._flush(g, items, texts)
                    g.clear()
            if stop is not None and stop():
                break
            t = time.time()
        for g in pending.values():
            if g:
                self._flush(g, items, texts)
        if texts:
            self._text_states(items, texts)
        return items

    def _flush(self, group, items, texts):
        device, cond = self.device, self.cond
        fr = np.stack([arr["frames"] for _, arr in group])
        x = torch.from_numpy(fr).to(device).permute(0, 4, 1, 2, 3).float() * (2.0 / 255.0) - 1.0
        wav = torch.from_numpy(np.stack([arr["audio"] for _, arr in group])).to(device)
        t = time.time()
        with torch.no_grad():
            zv, za = self.vae.encode(x), self.avae.encode(wav)
        if str(device).startswith("cuda"):
            torch.cuda.synchronize()
        self._timed("encode", t)
        for j, (meta, arr) in enumerate(group):
            t = time.time()
            lat = (zv[j:j + 1].float().contiguous(), za[j:j + 1].float().contiguous())
            bg = world.BACKGROUNDS[meta["spec"]["background"]]
            cells = torch.from_numpy(world.object_cells(arr["frames"], bg, zv.shape[2])).to(device)[None, None]
            task = meta["task"].lower()
            if task == "fl2va":
                st, tags, extra = cond.fl2va(meta["prompt"], arr["frames"], self.rng.choice(("first", "last", "both")))
            elif task == "ref2va":
                st, tags, extra = cond.ref2va(meta["prompt"], arr["picture"])
            else:
                st, tags, extra = None, None, {}
                texts.append(meta["prompt"])
            item = {"task": task, "prompt": meta["prompt"], "lat": lat, "states": st, "tags": tags,
                    "extra": extra, "cells": cells}
            if self.text and task != "t2va":
                item["text"] = cond.last_entry
            neg = self.negatives and world.binding_negative(world.Clip.from_json(meta["spec"]), meta["prompt"])
            if neg and task == "ref2va":
                item["negative"] = dict(zip(("states", "tags", "extra"), cond.ref2va(neg, arr["picture"])))
                if self.text:
                    item["negative"]["text"] = cond.last_entry
            elif neg:
                item["negative"] = {"prompt": neg, "extra": {}}
                texts.append(neg)
            self._timed(task, t)
            items.append(item)

    def _text_states(self, items, texts):
        """The T2VA items' and the negatives' states, encoded together."""
        t = time.time()
        states = self.cond.text_only(texts)
        self._timed("t2va", t)
        for it in items:
            if it["states"] is None:
                it["states"], it["tags"] = states[it["prompt"]]
                if self.text:
                    it["text"] = self.cond.entries[it["prompt"]]
            neg = it.get("negative")
            if neg and "prompt" in neg:
                if self.text:
                    neg["text"] = self.cond.entries[neg["prompt"]]
                neg["states"], neg["tags"] = states[neg.pop("prompt")]

    def close(self):
        # the encoders' cached buffers go back to the GPU for training: at 12
        # ranks the H200 read 138 of its 141 GB used through a whole run
        del self.vae, self.avae, self.cond
        if str(self.device).startswith("cuda"):
            torch.cuda.empty_cache()


class PoolGrower:
    """Makes a rank's further examples on a thread beside its training
    loop and appends their items (through finish, e.g. with_layouts) to
    the pool the loop draws from, `chunk` examples at a time, so each
    becomes drawable within seconds of its making. The stream's first
    example is read here, on the caller's thread: a stream with worker
    processes forks them then, and a fork from a thread beside a training
    loop could copy its locks held. The thread's CUDA work goes on the
    default stream, after the loop's, so the latents are whole before the
    loop reads them. A failure stops the growing and is kept in `error`;
    the pool stays as it was."""

    def __init__(self, maker, examples, pool, finish, chunk=32):
        self.maker, self.pool, self.finish, self.chunk = maker, pool, finish, chunk
        self.made, self.error = 0, None
        self._stop = threading.Event()
        examples = iter(examples)
        first = next(examples, None)
        self._examples = itertools.chain([first] if first is not None else [], examples)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                new = self.maker.make(itertools.islice(self._examples, self.chunk), stop=self._stop.is_set)
                if not new:
                    return
                self.pool.extend(self.finish(new))
                self.made += len(new)
        except Exception as e:  # the call's training goes on without more examples
            self.error = "%s: %s" % (type(e).__name__, e)

    def stop(self, timeout=120.0):
        """Stop and wait for the thread; the examples it made (0 if it
        stopped at its first)."""
        self._stop.set()
        self._thread.join(timeout)
        return self.made
