"""head_rank's bound: patches cut and put back exactly, the components'
rebuild exact at full width and the mean at width 0, and a clip grouped as
the VAE's latent frames see it.

  python3 -m unittest test_head_rank     (numpy; make train-check)
"""

import unittest

import numpy as np

import head_rank


def world_like(rng, frames):
    """Plain backgrounds with a few flat squares: patches of low rank."""
    x = np.full((frames, 64, 64, 3), 20, np.uint8)
    for _ in range(3):
        c, y0, x0, s = rng.integers(40, 240, 3), *rng.integers(0, 44, 2), int(rng.integers(8, 20))
        x[:, y0:y0 + s, x0:x0 + s] = c
    return x


class Bound(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(0)

    def test_patches_round_trip(self):
        clip = self.rng.integers(0, 256, (4, 48, 32, 3), dtype=np.uint8)
        rows = head_rank.patches(clip)
        self.assertEqual(rows.shape, (3 * 2, 4 * 16 * 16 * 3))
        np.testing.assert_array_equal(head_rank.unpatch(rows, 4, 48, 32), clip)
        # a row is one cell: the top-left 16x16 of every frame
        np.testing.assert_array_equal(rows[0].reshape(4, 16, 16, 3), clip[:, :16, :16] / 255.0)

    def test_full_width_exact_and_zero_width_the_mean(self):
        basis = head_rank.Basis(16 * 16 * 3)
        pics = [world_like(self.rng, 1) for _ in range(40)]
        for p in pics:
            basis.add(head_rank.patches(p))
        basis.fit()
        rows = head_rank.patches(pics[0])
        np.testing.assert_allclose(basis.rebuild(rows, 768), rows, atol=1e-9)
        np.testing.assert_allclose(basis.rebuild(rows, 0), np.broadcast_to(basis.mean, rows.shape), atol=1e-12)
        errs = [np.abs(basis.rebuild(rows, w) - rows).mean() for w in (0, 4, 16, 64)]
        self.assertEqual(errs, sorted(errs, reverse=True))
        self.assertGreater(errs[0], 5 * errs[-1])

    def test_groups_first_frame_then_fours(self):
        clip = np.arange(22, dtype=np.uint8)[:, None, None, None] * np.ones((1, 16, 16, 3), np.uint8)
        got = head_rank.groups(clip)
        self.assertEqual([g.shape[0] for g in got], [1] + [4] * 6)
        self.assertEqual([int(f[0, 0, 0]) for f in got[-1]], [21, 21, 21, 21])
        self.assertEqual([int(f[0, 0, 0]) for f in got[1]], [1, 2, 3, 4])

    def test_rebuilt_clip_keeps_length(self):
        one, four = head_rank.Basis(768), head_rank.Basis(3072)
        clips = [world_like(self.rng, 22) for _ in range(8)]
        for c in clips:
            for g in head_rank.groups(c):
                (one if g.shape[0] == 1 else four).add(head_rank.patches(g))
        one.fit()
        four.fit()
        got = head_rank.rebuilt_clip(clips[0], one, four, 3072)
        self.assertEqual(got.shape, clips[0].shape)
        self.assertLessEqual(np.abs(got.astype(int) - clips[0]).max(), 1)


class Pull(unittest.TestCase):
    def test_codes_are_whitened_on_what_they_were_fitted_on(self):
        code = head_rank.PictureCode(count=6, seed=2, width=8)
        pics = np.stack([a["picture"] if "picture" in a else a["frames"][0]
                         for _, a in head_rank.data.stream(2, "train", count=6, workers=1)])
        c = code(pics)
        self.assertEqual(c.shape, (6, 8, 1, pics.shape[1] // 16, pics.shape[2] // 16))
        flat = c.transpose(1, 0, 2, 3, 4).reshape(8, -1)
        np.testing.assert_allclose(flat.mean(1), 0, atol=1e-5)
        np.testing.assert_allclose(flat.var(1), 1, rtol=1e-4)


class Readout(unittest.TestCase):
    """An encoder that is the pull's own code reads out as the components'
    rebuild, with R^2 1; one whose latents say nothing reads out as the
    mean patch, with R^2 0."""

    def setUp(self):
        pics = [head_rank.picture_of(a)[0] for _, a in head_rank.data.stream(2, "train", count=16, workers=1)]
        self.train, self.anchors = pics[:12], pics[12:]
        self.code = head_rank.PictureCode(count=12, seed=2, width=24)

    def test_the_code_itself(self):
        encode = lambda p: self.code(p[None])[0, :, 0].reshape(24, -1).T  # noqa: E731
        got, r2 = head_rank.readout(encode, self.train, self.anchors, self.code)
        np.testing.assert_allclose(r2, 1, atol=1e-6)
        basis = head_rank.Basis(16 * 16 * 3)
        for p in self.train:
            basis.add(head_rank.patches(p[None]))
        basis.fit()
        rebuilt = [head_rank.unpatch(basis.rebuild(head_rank.patches(a[None]), 24), 1, 128, 128)[0]
                   for a in self.anchors]
        want = [head_rank.measure.psnr(r, a) for r, a in zip(rebuilt, self.anchors)]
        np.testing.assert_allclose(got, want, atol=0.05)

    def test_latents_that_say_nothing(self):
        encode = lambda p: np.zeros((p.shape[0] * p.shape[1] // 256, 24))  # noqa: E731
        got, r2 = head_rank.readout(encode, self.train, self.anchors, self.code)
        np.testing.assert_allclose(r2, 0, atol=1e-4)
        self.assertLess(max(got), 22)


if __name__ == "__main__":
    unittest.main()
