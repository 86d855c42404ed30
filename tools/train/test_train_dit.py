"""train_dit's video-loss weights: the shapes' cells and, with --key-boost,
an FL2VA clip's keyframe steps; flow_loss weighing by them, and its
binding term (--bind) on a clip carrying a negative.

  python3 -m unittest test_train_dit     (needs torch and the pinned
  ComfyUI copies for the flow_loss case; make train-check)
"""

import os
import random
import time
import unittest

try:
    import torch
except ImportError:
    torch = None

REF_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "e2e", "_ref", "model.py")


def fl2va_item(gen, which=(0, 21), t=6):
    keys = [{"resolved_frame_index": i, "latent": torch.randn(1, 24, 1, 8, 8, generator=gen)} for i in which]
    cells = torch.zeros(1, 1, t, 8, 8)
    cells[..., 2:4, 2:4] = 1
    return {"task": "fl2va", "lat": (torch.randn(1, 24, t, 8, 8, generator=gen), torch.randn(1, 32, 2, 20, generator=gen)),
            "states": torch.randn(40, 64, generator=gen),
            "tags": torch.tensor([1] * 4 + [0] * 8 + [1] * 2 + [0] * 8 + [1] * 18),
            "extra": {"keyframes": keys, "cond_video_latents": [k["latent"] for k in keys]}, "cells": cells}


@unittest.skipIf(torch is None, "needs torch")
class VideoWeights(unittest.TestCase):
    def setUp(self):
        import train_dit
        self.w = train_dit.video_weights
        self.gen = torch.Generator().manual_seed(5)

    def test_cells_weigh_one_plus_boost(self):
        it = fl2va_item(self.gen)
        w = self.w(it, it["lat"][0].shape, boost=4.0)
        self.assertEqual(float(w[0, 0, 1, 2, 2]), 5.0)
        self.assertEqual(float(w[0, 0, 1, 0, 0]), 1.0)

    def test_keyframe_steps_weigh_key_boost_more(self):
        it = fl2va_item(self.gen)
        shape = it["lat"][0].shape
        extra = self.w(it, shape, boost=4.0, key_boost=3.0) - self.w(it, shape, boost=4.0)
        # the first frame's step and the last's, every channel and cell
        torch.testing.assert_close(extra[:, :, [0, 5]], torch.full((1, 24, 2, 8, 8), 3.0))
        self.assertEqual(float(extra[:, :, 1:5].abs().max()), 0.0)

    def test_a_first_frame_alone_weighs_its_step_alone(self):
        it = fl2va_item(self.gen, which=(0,))
        shape = it["lat"][0].shape
        extra = self.w(it, shape, key_boost=2.0) - self.w(it, shape)
        self.assertEqual([float(extra[0, 0, s].max()) for s in range(6)], [2.0, 0, 0, 0, 0, 0])

    def test_clips_without_keyframes_are_left_alone(self):
        it = dict(fl2va_item(self.gen), extra={})
        shape = it["lat"][0].shape
        torch.testing.assert_close(self.w(it, shape, 4.0, 3.0), self.w(it, shape, 4.0))


@unittest.skipIf(torch is None or not os.path.exists(REF_MODEL), "needs torch and the pinned ComfyUI copies")
class FlowLossWeighs(unittest.TestCase):
    def test_key_boost_moves_an_fl2va_batch_loss(self):
        import demo
        import train_dit

        ref = demo.dit_training_shims()
        model = demo.load_dit(demo.SNAPSHOT, device="cpu")
        batch = train_dit.with_layouts([fl2va_item(torch.Generator().manual_seed(9))])

        def video_loss(key_boost):
            torch.manual_seed(3)  # noisy() draws the noise from torch's own generator
            with torch.no_grad():
                _, lv, _, _ = train_dit.flow_loss(model, ref, batch, torch.Generator().manual_seed(1), random.Random(2),
                                               boost=4.0, key_boost=key_boost)
            return float(lv)

        self.assertEqual(video_loss(0.0), video_loss(0.0))  # the same draws each time
        self.assertNotAlmostEqual(video_loss(0.0), video_loss(6.0), places=4)


def two_object_item(gen, negative_len=None, t=6):
    """A T2VA clip whose negative has its own states (negative_len tokens)
    or, with None, the clip's own conditioning again."""
    cells = torch.zeros(1, 1, t, 8, 8)
    cells[..., 1:3, 1:3] = cells[..., 5:7, 4:6] = 1
    tags = torch.tensor([1] * 4 + [0] * 18 + [1] * 18)
    lat = (torch.randn(1, 24, t, 8, 8, generator=gen), torch.randn(1, 32, 2, 20, generator=gen))
    item = {"task": "t2va", "lat": lat,
            "states": torch.randn(40, 64, generator=gen), "tags": tags, "extra": {}, "cells": cells}
    if negative_len is None:
        item["negative"] = {"states": item["states"], "tags": tags, "extra": {}}
    else:
        item["negative"] = {"states": torch.randn(negative_len, 64, generator=gen), "extra": {},
                            "tags": torch.tensor([1] * 4 + [0] * (negative_len - 22) + [1] * 18)}
    return item


@unittest.skipIf(torch is None or not os.path.exists(REF_MODEL), "needs torch and the pinned ComfyUI copies")
class BindingTerm(unittest.TestCase):
    def setUp(self):
        import demo
        import train_dit

        self.td = train_dit
        self.ref = demo.dit_training_shims()
        self.model = demo.load_dit(demo.SNAPSHOT, device="cpu")
        self.saved = (train_dit.BIND_MARGIN, train_dit.BIND_MIN_SIGMA)
        train_dit.BIND_MIN_SIGMA = 0.0  # every draw's sigma counts here

    def tearDown(self):
        self.td.BIND_MARGIN, self.td.BIND_MIN_SIGMA = self.saved

    def losses(self, batch, bind=1.0, margin=1.25):
        self.td.BIND_MARGIN = margin
        torch.manual_seed(3)
        with torch.no_grad():
            out = self.td.flow_loss(self.model, self.ref, self.td.with_layouts(batch), torch.Generator().manual_seed(1),
                                    random.Random(2), boost=4.0, bind=bind)
        return [float(x) for x in out]

    def test_a_negative_like_its_clip_falls_short_by_the_margin(self):
        # the negative rides the clip's own noise and sigma: with the same
        # prompt its loss is the clip's, so the term is (margin - 1) x it
        batch = [two_object_item(torch.Generator().manual_seed(4))]
        # (to a float's rounding: the clip and its negative sit at different
        # places in the packed batch, whose sums OpenBLAS's threads may split
        # differently; two threads here left 1.2e-7)
        self.assertAlmostEqual(self.losses(batch, margin=1.0)[3], 0.0, places=6)
        short = self.losses(batch)[3]
        self.assertGreater(short, 0.0)
        self.assertAlmostEqual(self.losses(batch, margin=2.0)[3], 4 * short, places=5)

    def test_the_term_adds_bind_times_itself_to_the_loss(self):
        batch = [two_object_item(torch.Generator().manual_seed(4), negative_len=44),
                 fl2va_item(torch.Generator().manual_seed(9))]
        total, lv, la, hinge = self.losses(batch, bind=0.5)
        self.assertGreater(hinge, 0.0)
        self.assertAlmostEqual(total, lv + la + 0.5 * hinge, places=5)  # lv, la: the means
        plain = self.losses(batch, bind=0.0)
        self.assertEqual(plain[3], 0.0)
        self.assertAlmostEqual(plain[1], lv, places=5)  # the negatives leave the clips' own loss alone

    def test_the_negative_reads_its_own_prompt(self):
        item = two_object_item(torch.Generator().manual_seed(4), negative_len=44)
        own = dict(item, negative={"states": item["states"], "tags": item["tags"], "extra": {}})
        self.assertNotAlmostEqual(self.losses([item])[3], self.losses([own])[3], places=4)

    def test_no_term_under_the_least_sigma(self):
        self.td.BIND_MIN_SIGMA = 1.01
        batch = [two_object_item(torch.Generator().manual_seed(4))]
        total, lv, la, hinge = self.losses(batch)
        self.assertEqual(hinge, 0.0)
        self.assertAlmostEqual(total, lv + la, places=6)


@unittest.skipIf(torch is None, "needs torch")
class RankShares(unittest.TestCase):
    def test_the_ranks_blocks_tile_the_calls_indices(self):
        import train_dit
        blocks = [train_dit.rank_share(28800, 8, r, 150400) for r in range(8)]
        self.assertEqual(blocks[0][0], 150400)
        for (s0, _, n0), (s1, _, _) in zip(blocks, blocks[1:]):
            self.assertEqual(s0 + n0, s1)
        self.assertEqual(blocks[-1][0] + blocks[-1][2], 150400 + 28800)

    def test_cold_makes_the_first_of_a_block_and_leaves_the_rest_to_the_grower(self):
        import train_dit
        self.assertEqual(train_dit.rank_share(28800, 8, 3, 0), (10800, 3600, 3600))
        self.assertEqual(train_dit.rank_share(28800, 8, 3, 0, cold=600), (10800, 600, 3600))
        self.assertEqual(train_dit.rank_share(4800, 8, 0, 0, cold=900), (0, 600, 600))


class CountingMaker:
    """Stands in for making.Maker's example work (the grower's threading is
    what is under test): each example's item is its index, made in `pause`
    seconds; fail_at raises there."""

    def __init__(self, pause=0.0, fail_at=None):
        self.pause, self.fail_at, self.spent = pause, fail_at, {}

    def make(self, examples, stop=None):
        out = []
        for i in examples:
            if i == self.fail_at:
                raise ValueError("no clip %d" % i)
            time.sleep(self.pause)
            out.append({"i": i})
            if stop is not None and stop():
                break
        return out


@unittest.skipIf(torch is None, "needs torch")
class PoolGrowerGrows(unittest.TestCase):
    def finish(self, new):
        return [dict(it, finished=True) for it in new]

    def wait(self, grower, pool, n):
        for _ in range(500):
            if len(pool) >= n or not grower._thread.is_alive():
                return
            time.sleep(0.01)

    def test_every_example_joins_the_pool_in_order_and_finished(self):
        import making
        pool = [{"i": -1}]
        grower = making.PoolGrower(CountingMaker(), range(100), pool, self.finish, chunk=7)
        self.wait(grower, pool, 101)
        self.assertEqual(grower.stop(), 100)
        self.assertEqual([it["i"] for it in pool], list(range(-1, 100)))
        self.assertTrue(all(it.get("finished") for it in pool[1:]))

    def test_stop_ends_the_growing_within_an_example(self):
        import making
        pool = []
        grower = making.PoolGrower(CountingMaker(pause=0.01), range(10000), pool, self.finish, chunk=200)
        self.wait(grower, pool, 200)
        t = time.time()
        made = grower.stop(timeout=5.0)
        # a chunk takes 2 s: stopped within an example, not at the chunk's end
        self.assertLess(time.time() - t, 1.0)
        self.assertFalse(grower._thread.is_alive())
        self.assertLess(made, 10000)
        self.assertEqual(len(pool), made)

    def test_a_failure_keeps_the_pool_and_says_what(self):
        import making
        pool = []
        grower = making.PoolGrower(CountingMaker(fail_at=30), range(100), pool, self.finish, chunk=10)
        self.wait(grower, pool, 100)
        self.assertEqual(grower.stop(), 30)
        self.assertEqual(len(pool), 30)
        self.assertIn("no clip 30", grower.error)


if __name__ == "__main__":
    unittest.main()
