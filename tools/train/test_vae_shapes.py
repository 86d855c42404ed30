"""vae_shapes.py's draws, and the world's sizes it measured.

  python3 -m unittest test_vae_shapes     (needs torch; make train-check)
"""

import random
import unittest

try:
    import vae_shapes
except ImportError:  # vae_shapes needs torch
    vae_shapes = None

import measure
import world

# The sizes of the README's table, in pixels of the 128-px canvas.
TABLE_SIZES = (10, 13, 16, 20, 24)
# The smallest half-extent at which the measured VAE kept 8 of 10
# triangles and 9 of 10 squares (README: "Why, and the world's new sizes").
KEPT_FROM_PX = 20


@unittest.skipIf(vae_shapes is None, "needs torch")
class Draws(unittest.TestCase):
    def test_every_draw_reads_back_as_its_shape_without_the_vae(self):
        # so a shape the table counts as lost was lost in the VAE, not in measure.py
        rng = random.Random(3)
        for half in TABLE_SIZES:
            for shape in world.SHAPES:
                for _ in range(4):
                    frames, colour = vae_shapes.still_clip(rng, shape, half)
                    self.assertEqual(frames.shape, (vae_shapes.FRAMES, vae_shapes.SIDE, vae_shapes.SIDE, 3))
                    self.assertEqual(measure.shape_in(measure.labels(frames), colour), shape, (half, shape, colour))


class WorldSizes(unittest.TestCase):
    def test_still_and_moving_shapes_are_where_the_vae_keeps_them(self):
        self.assertGreaterEqual(world.SIZE[0] * world.CANVAS[0], KEPT_FROM_PX)
        # grow ends and shrink starts there too, so most of their frames are
        self.assertGreaterEqual(world.GROW_SIZE[0] * world.GROW_SCALE[0] * world.CANVAS[0], KEPT_FROM_PX)
        self.assertGreaterEqual(world.SHRINK_SIZE[0] * world.CANVAS[0], KEPT_FROM_PX)


if __name__ == "__main__":
    unittest.main()
