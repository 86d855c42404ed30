"""train_dit's video-loss weights: the shapes' cells and, with --key-boost,
an FL2VA clip's keyframe steps; and flow_loss weighing by them.

  python3 -m unittest test_train_dit     (needs torch and the pinned
  ComfyUI copies for the flow_loss case; make train-check)
"""

import os
import random
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
                _, lv, _ = train_dit.flow_loss(model, ref, batch, torch.Generator().manual_seed(1), random.Random(2),
                                               boost=4.0, key_boost=key_boost)
            return float(lv)

        self.assertEqual(video_loss(0.0), video_loss(0.0))  # the same draws each time
        self.assertNotAlmostEqual(video_loss(0.0), video_loss(6.0), places=4)


if __name__ == "__main__":
    unittest.main()
