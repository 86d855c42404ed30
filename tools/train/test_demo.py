"""demo.py's fresh video VAE at another encoder width: the options'
checks, and that the width reaches the source config and the weights.

  python3 -m unittest test_demo     (needs torch and the pinned ComfyUI
                                     copies; make train-check)
"""

import argparse
import os
import shutil
import tempfile
import unittest

try:
    import torch
except ImportError:
    torch = None

REF_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "e2e", "_ref", "vae.py")


class Refused(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Refused(message)


def parse(*args):
    import demo
    p = Parser()
    p.add_argument("which")
    p.add_argument("--fresh", action="store_true")
    demo.add_encoder_args(p)
    return demo.encoder_from_args(p, p.parse_args(list(args)))


@unittest.skipIf(torch is None, "needs torch")
@unittest.skipUnless(os.path.exists(REF_MODEL), "needs the pinned ComfyUI copies (tools/fixtures/e2e/REFS.md)")
class EncoderWidth(unittest.TestCase):
    def test_options(self):
        self.assertEqual(parse("video"), {})
        self.assertEqual(parse("video", "--fresh", "--encoder-ch", "64", "--encoder-blocks", "2"),
                         {"ch": 64, "num_res_blocks": 2})
        with self.assertRaisesRegex(Refused, "with video --fresh"):
            parse("video", "--encoder-ch", "64")
        with self.assertRaisesRegex(Refused, "with video --fresh"):
            parse("audio", "--fresh", "--encoder-blocks", "2")
        with self.assertRaisesRegex(Refused, "multiple of 32"):
            parse("video", "--fresh", "--encoder-ch", "48")
        self.assertEqual(parse("video", "--fresh", "--encoder-mult", "1,1,2,4"), {"ch_mult": [1, 1, 2, 4]})
        for bad in ("1,2,4", "1,1,0,4", "1,x,2,4"):
            with self.assertRaisesRegex(Refused, "four whole multipliers"):
                parse("video", "--fresh", "--encoder-mult", bad)
        with self.assertRaisesRegex(Refused, "with video --fresh"):
            parse("video", "--encoder-mult", "1,1,2,4")

    def test_fresh_vae_takes_the_width(self):
        import demo
        tmp = tempfile.mkdtemp()
        own = demo.read_json(os.path.join(demo.part_dir(demo.SNAPSHOT), "video_vae", "source", "config.json"))
        try:
            counts = {}
            variants = (("snapshot's", {}), ("narrow", {"ch": 32, "ch_mult": [1, 1, 1, 2]}),
                        ("wide", {"ch": 64, "ch_mult": [1, 1, 1, 2]}), ("deep", {"ch": 32, "ch_mult": [1, 1, 2, 4]}))
            for name, enc in variants:
                snap = os.path.join(tmp, name)
                shutil.copytree(demo.SNAPSHOT, snap)
                demo.fresh_video_vae(snap, encoder=enc)
                src = demo.read_json(os.path.join(demo.part_dir(snap), "video_vae", "source", "config.json"))
                self.assertEqual(src["ch"], enc.get("ch", own["ch"]))
                self.assertEqual(src["ch_mult"], enc.get("ch_mult", own["ch_mult"]))
                vae = demo.build_video_vae(demo.part_dir(snap))
                counts[name] = sum(p.numel() for p in vae.encoder.parameters())
                if name == "deep":  # the last stage's width, which its final group norm splits in 32
                    self.assertEqual(vae.encoder.norm_out.num_channels, 128)
            # convolutions' weights grow with the square of the width
            self.assertGreater(counts["wide"], 3 * counts["narrow"])
            self.assertGreater(counts["deep"], 2 * counts["narrow"])
            with self.assertRaises(ValueError):
                demo.fresh_video_vae(os.path.join(tmp, "wide"), keep_encoder=True, encoder={"ch": 64})
        finally:
            shutil.rmtree(tmp)


class EncoderSteps(unittest.TestCase):
    """The DiT's kept examples outlive a decoder-only run, not an encoder's."""

    def test_decoder_steps_apart(self):
        import demo
        snap = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, snap)
        self.assertEqual(demo.encoder_steps(snap, "video_vae"), 0)
        demo.record(snap, "video_vae", steps=5512)
        self.assertEqual(demo.encoder_steps(snap, "video_vae"), 5512)
        demo.record(snap, "video_vae", steps=6000, decoder_steps=488)
        self.assertEqual(demo.encoder_steps(snap, "video_vae"), 5512)
        demo.record(snap, "video_vae", steps=6100)
        self.assertEqual(demo.encoder_steps(snap, "video_vae"), 5612)


if __name__ == "__main__":
    unittest.main()
