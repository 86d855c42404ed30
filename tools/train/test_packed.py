"""packed.velocity against the reference _forward, one clip at a time: a
T2VA, an FL2VA (first and last keyframes) and a Ref2VA clip of different
lengths through the committed demo DiT, their velocities and the
gradients of a loss on them.

  python3 -m unittest test_packed     (needs torch; make train-check)
"""

import unittest

import os

try:
    import torch
except ImportError:  # the numpy-only checks still run
    torch = None

# the pinned ComfyUI copies the reference forward comes from (ignored by
# git: tools/fixtures/e2e/REFS.md says how to fetch them)
REF_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "e2e", "_ref", "model.py")


def clips(gen, dim=64):
    def lat(*shape):
        return torch.randn(*shape, generator=gen)

    def tags(n, vision=()):
        t = torch.ones(n, dtype=torch.long)
        for a, b in vision:
            t[a:b] = 0
        return t

    t2va = (lat(1, 24, 5, 8, 8), lat(1, 32, 2, 27), torch.tensor([930.0]), lat(21, dim),
            {"text_token_tags": tags(21), "seed": 7})
    k0, k1 = lat(1, 24, 1, 8, 8), lat(1, 24, 1, 8, 8)
    fl2va = (lat(1, 24, 3, 8, 8), lat(1, 32, 2, 17), torch.tensor([410.0]), lat(40, dim),
             {"text_token_tags": tags(40, [(4, 12), (14, 22)]), "seed": 11,
              "keyframes": [{"resolved_frame_index": 0, "latent": k0}, {"resolved_frame_index": 21, "latent": k1}],
              "cond_video_latents": [k0, k1]})
    r = lat(1, 24, 1, 8, 8)
    ref2va = (lat(1, 24, 7, 8, 8), lat(1, 32, 2, 37), torch.tensor([55.0]), lat(33, dim),
              {"text_token_tags": tags(33, [(5, 21)]), "seed": 3,
               "refs": [{"kind": "image", "latent_h": 8, "latent_w": 8}], "cond_video_latents": [r]})
    return [t2va, fl2va, ref2va]


def loss(outs):
    return sum((v.pow(2).mean() + a.pow(2).mean()) * (i + 1) for i, (v, a) in enumerate(outs))


def on(device, clip):
    """A clip's tensors on device (the tags stay on the host, as inputs.py makes them)."""
    def mv(x):
        return x.to(device) if torch.is_tensor(x) else x
    xv, xa, ts, st, pl = clip
    pl = {k: (v if k == "text_token_tags" else
              [dict(kf, latent=mv(kf["latent"])) for kf in v] if k == "keyframes" else
              [mv(z) for z in v] if k == "cond_video_latents" else v) for k, v in pl.items()}
    return mv(xv), mv(xa), mv(ts), mv(st), pl


@unittest.skipIf(torch is None, "needs torch")
@unittest.skipUnless(os.path.exists(REF_MODEL), "needs the pinned ComfyUI copies (tools/fixtures/e2e/REFS.md)")
class Packed(unittest.TestCase):
    def check(self, device, tol):
        import demo
        import packed

        torch.manual_seed(0)
        ref = demo.dit_training_shims()
        model = demo.load_dit(demo.SNAPSHOT, device=device)
        batch = [on(device, c) for c in clips(torch.Generator().manual_seed(1))]
        alone = [model._forward([c[0], c[1]], c[2], c[3][None], transformer_options={}, minimax_payload=c[4])
                 for c in batch]
        loss(alone).backward()
        want = {n: p.grad.clone() for n, p in model.named_parameters()}
        model.zero_grad()
        together = packed.velocity(model, ref, batch)
        loss(together).backward()
        for (va, aa), (vt, at) in zip(alone, together):
            self.assertEqual(va.shape, vt.shape)
            # relative L2: a few float32 roundings over the whole velocity (the
            # packed attention sums in another order), where a missing mask or
            # an unshifted modulation row costs 1e-2 or more; the largest
            # single difference grows with the weights' scale, so it gets 10x
            for want_v, got in ((va, vt), (aa, at)):
                self.assertLess(float((want_v - got).norm() / want_v.norm()), tol)
                self.assertLess(float((want_v - got).abs().max()), 10 * tol * (1 + float(want_v.abs().max())))
        for n, p in model.named_parameters():
            g = want[n]
            err = float((p.grad - g).norm() / (g.norm() + 1e-30))
            self.assertLess(err, 50 * tol, n)
        # the recorders are gone: the model's own forward answers again
        self.assertNotIn("forward", vars(model.token_refiner))

    def test_matches_the_reference_forward_clip_by_clip(self):
        self.check("cpu", 2e-6)

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "needs a GPU")
    def test_the_same_on_the_gpu(self):
        """CUDA's attention kernels take the padded, masked batch (run_gpu.sh runs this first)."""
        tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            self.check("cuda", 1e-5)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = tf32


if __name__ == "__main__":
    unittest.main()
