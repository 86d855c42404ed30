"""grow_dit: the grown DiT computes what the snapshot's did, for every task
(the packed forward on test_packed's three clips), its config and record
say so, and training reaches the new blocks through their gates.

  python3 -m unittest test_grow_dit     (needs torch; make train-check)
"""

import os
import shutil
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

from test_packed import REF_MODEL, clips, loss


class Sources(unittest.TestCase):
    def test_copies_follow_the_last_blocks(self):
        import grow_dit

        self.assertEqual(grow_dit.sources(4, 7),
                         [(0, False), (1, False), (1, True), (2, False), (2, True), (3, False), (3, True)])
        self.assertEqual(grow_dit.sources(4, 4), [(i, False) for i in range(4)])
        with self.assertRaises(ValueError):
            grow_dit.sources(4, 3)


@unittest.skipIf(torch is None, "needs torch")
@unittest.skipUnless(os.path.exists(REF_MODEL), "needs the pinned ComfyUI copies (tools/fixtures/e2e/REFS.md)")
class Grown(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import demo
        import grow_dit

        cls.snap = tempfile.mkdtemp()
        shutil.copytree(demo.SNAPSHOT, cls.snap, dirs_exist_ok=True)
        # two blocks more than the shipped DiT has, whatever its depth
        cls.layers = grow_dit.blocks(demo.SNAPSHOT) + 2
        cls.old = grow_dit.grow(cls.snap, cls.layers)
        cls.copies = [j for j, (_, copy) in enumerate(grow_dit.sources(cls.old, cls.layers)) if copy]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.snap)

    def velocities(self, snap):
        import demo
        import packed

        ref = demo.dit_training_shims()
        model = demo.load_dit(snap).eval()
        with torch.no_grad():
            return model, packed.velocity(model, ref, clips(torch.Generator().manual_seed(1)))

    def test_the_grown_dit_gives_the_same_velocities(self):
        import demo

        _, want = self.velocities(demo.SNAPSHOT)
        model, got = self.velocities(self.snap)
        self.assertEqual(len(model.blocks), self.layers)
        for (wv, wa), (gv, ga) in zip(want, got):
            self.assertTrue(torch.equal(wv, gv))
            self.assertTrue(torch.equal(wa, ga))

    def test_config_and_record_say_what_grew(self):
        import demo

        tdir = os.path.join(demo.part_dir(self.snap), "transformer")
        self.assertEqual(demo.read_json(os.path.join(tdir, "config.json"))["num_layers"], self.layers)
        steps = demo.trained(demo.SNAPSHOT, "dit")["steps"]
        self.assertEqual(demo.trained(self.snap, "dit")["grown"][-1], {"from": self.old, "to": self.layers, "at_steps": steps})
        index = demo.read_json(os.path.join(tdir, "model.safetensors.index.json"))["weight_map"]
        self.assertEqual(index[f"blocks.{self.layers - 1}.adaln_proj.linear.weight"], "model-00002-of-00002.safetensors")
        self.assertEqual(index["final_layer.video_out.weight"], "model-00001-of-00002.safetensors")

    def test_training_reaches_the_new_blocks_through_their_gates(self):
        import demo
        import packed

        ref = demo.dit_training_shims()
        model = demo.load_dit(self.snap)
        loss(packed.velocity(model, ref, clips(torch.Generator().manual_seed(1)))).backward()
        hidden = model.blocks[0].attn.out_proj.weight.shape[0]
        self.assertEqual(len(self.copies), 2)
        for j in self.copies:  # the gated-off copies of the last two blocks
            w = model.blocks[j].adaln_proj.linear.weight
            self.assertEqual(float(w.detach().view(3, 6, hidden, -1)[:, (2, 5)].abs().max()), 0.0)
            self.assertGreater(float(w.grad.view(3, 6, hidden, -1)[:, (2, 5)].abs().max()), 0.0)
            # and nothing but the gates, until they open
            self.assertEqual(float(model.blocks[j].mlp.fc1.weight.grad.abs().max()), 0.0)

    def test_the_last_calls_optimizer_is_not_loaded_into_a_grown_dit(self):
        import demo
        import train_dit

        state = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, state)
        old = demo.load_dit(demo.SNAPSHOT)
        train_dit.save_state(state, 100, old, torch.optim.AdamW(old.parameters()))
        grown = demo.load_dit(self.snap)
        self.assertFalse(train_dit.load_state(state, 100, grown, torch.optim.AdamW(grown.parameters())))
        again = demo.load_dit(demo.SNAPSHOT)
        self.assertTrue(train_dit.load_state(state, 100, again, torch.optim.AdamW(again.parameters())))


if __name__ == "__main__":
    unittest.main()
