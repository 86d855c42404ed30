"""average_dit.py: one snapshot comes back byte for byte; two give their
mean, in the snapshot's dtypes, with the sources recorded.

  python3 -m unittest test_average_dit   (needs torch and the pinned
  ComfyUI copies, as the DiT is the reference module; make train-check)
"""

import os
import shutil
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
REF_MODEL = os.path.join(HERE, "..", "fixtures", "e2e", "_ref", "model.py")
SNAPSHOT = os.path.join(HERE, "..", "..", "models", "demo", "snapshot")


@unittest.skipIf(torch is None or not os.path.exists(REF_MODEL), "needs torch and tools/fixtures/e2e/_ref")
class Average(unittest.TestCase):
    def setUp(self):
        import average_dit
        import demo
        self.avg, self.demo = average_dit, demo
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def shards(self, snap):
        d = os.path.join(self.demo.part_dir(snap), "transformer")
        out = {}
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".safetensors"):
                with open(os.path.join(d, fn), "rb") as f:
                    out[fn] = f.read()
        return out

    def test_one_snapshot_comes_back_unchanged(self):
        out = os.path.join(self.tmp, "one")
        self.avg.average(out, [SNAPSHOT])
        self.assertEqual(self.shards(out), self.shards(SNAPSHOT))

    def test_two_give_their_mean(self):
        # a second snapshot: the shipped DiT with every weight moved by +1 x its own scale
        other = os.path.join(self.tmp, "other")
        shutil.copytree(SNAPSHOT, other)
        model = self.demo.load_dit(SNAPSHOT)
        base = {k: v.detach().float().clone() for k, v in model.state_dict().items()}
        with torch.no_grad():
            for v in model.state_dict().values():
                v.add_(v.abs().mean() + 1e-3)
        self.demo.save_dit(model, other)
        moved = {k: v.detach().float() for k, v in self.demo.load_dit(other).state_dict().items()}
        out = os.path.join(self.tmp, "mean")
        self.avg.average(out, [SNAPSHOT, other])
        got = self.demo.load_dit(out).state_dict()
        for k, v in got.items():
            want = (base[k] + moved[k]) / 2
            # bfloat16 storage: 8 bits of mantissa
            torch.testing.assert_close(v.float(), want, rtol=1 / 128, atol=1e-6, msg=k)
            self.assertFalse(torch.equal(v.float(), base[k]), k)
        sources = self.demo.trained(out, "dit")["averaged"]
        self.assertEqual([s["sha256"] for s in sources], [self.avg.dit_digest(SNAPSHOT), self.avg.dit_digest(other)])

    def test_an_existing_folder_is_refused(self):
        with self.assertRaises(SystemExit):
            self.avg.average(self.tmp, [SNAPSHOT])


if __name__ == "__main__":
    unittest.main()
