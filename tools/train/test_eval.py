"""eval.py's requests, resumption and summary: what it asks the engine for
each task, and that it scores what the engine made.

  python3 -m unittest test_eval     (or make train-check)
"""

import math
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import clipio
import eval as ev
import world


def held_out(count=12):
    heldout = world.load_heldout()
    return [world.example(ev.HELDOUT_SEED, i, "heldout", heldout) for i in range(count)]


def flag(args, name):
    """The value after flag name in args, None when absent."""
    return args[args.index(name) + 1] if name in args else None


def by_task(items):
    out = {}
    for i, (meta, arrays) in enumerate(items):
        out.setdefault(meta["task"], (i, meta, arrays))
    return out


class Requests(unittest.TestCase):
    """Each task's render asks for the example's length, canvas, prompt and
    pictures, in the CLI's flags."""

    @classmethod
    def setUpClass(cls):
        cls.items = held_out()
        cls.tasks = by_task(cls.items)

    def test_every_task_is_in_the_split(self):
        self.assertEqual(set(self.tasks), set(world.TASKS))

    def test_common_flags(self):
        for i, (meta, arrays) in enumerate(self.items):
            clip = world.Clip.from_json(meta["spec"])
            args, _ = ev.request(meta, arrays, "/r", "demo", i)
            self.assertEqual(args[0], "render")
            self.assertEqual(flag(args, "-d"), "demo")
            self.assertEqual(flag(args, "-p"), meta["prompt"])
            self.assertEqual(flag(args, "--frames"), str(clip.frames))
            self.assertEqual((flag(args, "--width"), flag(args, "--height")), (str(clip.width), str(clip.height)))
            self.assertEqual(flag(args, "-o"), os.path.join("/r", meta["id"] + ".mp4"))
        seeds = {flag(ev.request(m, a, "/r", "demo", i)[0], "--seed") for i, (m, a) in enumerate(self.items)}
        self.assertEqual(len(seeds), len(self.items), "every example has its own seed")

    def test_steps_only_when_asked(self):
        meta, arrays = self.items[0]
        self.assertNotIn("--steps", ev.request(meta, arrays, "/r", "demo", 0)[0])
        self.assertEqual(flag(ev.request(meta, arrays, "/r", "demo", 0, steps=40)[0], "--steps"), "40")

    def test_t2va_has_no_pictures(self):
        i, meta, arrays = self.tasks["T2VA"]
        args, pictures = ev.request(meta, arrays, "/r", "demo", i)
        self.assertEqual(pictures, [])
        for name in ("--first-frame", "--last-frame", "--ref-image"):
            self.assertNotIn(name, args)

    def test_fl2va_anchors_in_order(self):
        i, meta, arrays = self.tasks["FL2VA"]
        args, pictures = ev.request(meta, arrays, "/r", "demo", i)
        written = dict((p, img) for p, img in pictures)
        np.testing.assert_array_equal(written[flag(args, "--first-frame")], arrays["frames"][0])
        np.testing.assert_array_equal(written[flag(args, "--last-frame")], arrays["frames"][-1])
        self.assertNotIn("--ref-image", args)

    def test_ref2va_picture_is_picture_1(self):
        i, meta, arrays = self.tasks["Ref2VA"]
        args, pictures = ev.request(meta, arrays, "/r", "demo", i)
        self.assertEqual(args.count("--ref-image"), 1)
        self.assertEqual(len(pictures), 1)
        self.assertEqual(pictures[0][0], flag(args, "--ref-image"))
        np.testing.assert_array_equal(pictures[0][1], arrays["picture"])
        self.assertIn("Picture 1", meta["prompt"])


class Resume(unittest.TestCase):
    """A render is reused only when the same binary made it with the same
    arguments: new weights (a new binary) render everything again."""

    def test_key_decides(self):
        with tempfile.TemporaryDirectory() as tmp:
            args = ["render", "-p", "x"]
            key = ev.render_key("binary-a", args)
            self.assertIsNone(ev.cached_seconds(tmp, "e", key), "nothing rendered yet")
            with open(os.path.join(tmp, "e.json"), "w", encoding="utf-8") as f:
                f.write('{"key": "%s", "seconds": 7.5}' % key)
            self.assertIsNone(ev.cached_seconds(tmp, "e", key), "a record without its MP4")
            open(os.path.join(tmp, "e.mp4"), "wb").close()
            self.assertEqual(ev.cached_seconds(tmp, "e", key), 7.5)
            self.assertIsNone(ev.cached_seconds(tmp, "e", ev.render_key("binary-b", args)))
            self.assertIsNone(ev.cached_seconds(tmp, "e", ev.render_key("binary-a", args + ["--seed", "2"])))


class Selection(unittest.TestCase):
    """--first and --tasks choose the examples rendered, each keeping its
    index in the split (the index sets its seed)."""

    def test_first_and_tasks(self):
        items = held_out()
        picked = ev.selected(items, ["T2VA", "Ref2VA"], 5)
        want = [i for i, (meta, _) in enumerate(items) if i >= 5 and meta["task"] in ("T2VA", "Ref2VA")]
        self.assertEqual([i for i, _, _ in picked], want)
        self.assertTrue(want and len(want) < len(items) - 5, "the sample holds FL2VA examples past 5")
        for i, meta, _ in picked:
            self.assertIs(meta, items[i][0])
        self.assertEqual(len(ev.selected(items, list(world.TASKS), 0)), len(items))


class Summary(unittest.TestCase):
    """Scored on the generator's own clips every row is 100 %, and each
    row counts only the examples it is about."""

    def test_perfect_renders(self):
        rows = []
        for meta, arrays in held_out(30):
            row = ev.measured(meta, arrays, {"frames": arrays["frames"], "audio": arrays["audio"]})
            clip = world.Clip.from_json(meta["spec"])
            self.assertEqual("pitch" in row, clip.sound in world.TONES, meta["id"])
            self.assertEqual("psnr" in row, meta["task"] == "FL2VA")
            self.assertEqual("picture" in row, meta["task"] == "Ref2VA")
            self.assertEqual("two objects" in row, len(clip.things) == 2)
            self.assertTrue(all(v for k, v in row.items() if k != "psnr"), (meta["id"], row))
            if "psnr" in row:
                self.assertTrue(math.isinf(row["psnr"]))
            rows.append((meta["task"], row, 1.0))
        text = "\n".join(ev.table(rows))
        self.assertTrue(any("two objects" in r for _, r, _ in rows))
        self.assertIn("two-object clips", text)
        self.assertNotIn(" 0.0 %", text)
        self.assertIn("100.0 %", text)

    def test_a_wrong_render_scores_zero(self):
        meta, arrays = by_task(held_out())["FL2VA"][1:]
        clip = world.Clip.from_json(meta["spec"])
        other = next(c for n, c in world.BACKGROUNDS.items() if n != clip.background)
        blank = np.broadcast_to(np.asarray(other, np.uint8), arrays["frames"].shape)
        row = ev.measured(meta, arrays, {"frames": blank, "audio": np.zeros_like(arrays["audio"])})
        self.assertFalse(row["colour+direction"])
        self.assertFalse(row["background"])
        self.assertLess(row["psnr"], 25)


class Detail(unittest.TestCase):
    """--detail names, per object, the motion asked and the one measured."""

    def test_the_generators_clips_move_as_asked(self):
        items = held_out(12)
        rows = [(m["id"], m["task"], ev.motions_seen(m, a["frames"])) for m, a in items]
        for (example_id, _, objects), (meta, _) in zip(rows, items):
            clip = world.Clip.from_json(meta["spec"])
            self.assertEqual([o[:3] for o in objects], [(t.colour, t.shape, t.motion) for t in clip.things])
            self.assertTrue(all(asked == got for _, _, asked, got in objects), (example_id, objects))
        lines = ev.detail(rows)
        self.assertEqual(len(lines), len(rows) + 1)
        self.assertNotIn("absent", lines[-1])

    def test_a_shape_drawn_still_or_missing(self):
        meta, arrays = next((m, a) for m, a in held_out(30)
                            if world.Clip.from_json(m["spec"]).things[0].motion in ("left", "right", "up", "down"))
        still = np.repeat(arrays["frames"][:1], len(arrays["frames"]), axis=0)
        self.assertEqual(ev.motions_seen(meta, still)[0][3], "still")
        clip = world.Clip.from_json(meta["spec"])
        blank = np.broadcast_to(np.asarray(world.BACKGROUNDS[clip.background], np.uint8), arrays["frames"].shape)
        self.assertEqual(ev.motions_seen(meta, blank)[0][3], "absent")
        asked = clip.things[0].motion
        self.assertIn(f"{asked} -> absent", ev.detail([(meta["id"], meta["task"], ev.motions_seen(meta, blank))])[-1])


@unittest.skipUnless(shutil.which("ffmpeg"), "needs ffmpeg (make deps installs it)")
class Pictures(unittest.TestCase):
    def test_png_is_lossless(self):
        _, meta, arrays = by_task(held_out())["Ref2VA"]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p.png")
            clipio.write_png(path, arrays["picture"])
            h, w, _ = arrays["picture"].shape
            raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"],
                                 capture_output=True, check=True).stdout
            np.testing.assert_array_equal(np.frombuffer(raw, np.uint8).reshape(h, w, 3), arrays["picture"])


if __name__ == "__main__":
    unittest.main()
