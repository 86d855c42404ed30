"""The demo world's generator and metrics: the metrics must say what the
generator made, and the held-out split must hold.

  python3 -m unittest discover -s tools/train     (or make train-check)
"""

import argparse
import collections
import dataclasses
import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import unittest

import numpy as np

import clipio
import data
import measure
import world

RECOVERY_CLIPS = 200
RECOVERY_RATE = 0.99


def examples(seed, count, split="train", task=None):
    heldout = world.load_heldout()
    return [world.example(seed, i, split, heldout, task) for i in range(count)]


def with_spec(meta, **changes):
    """A copy of meta whose clip spec asks for something else."""
    clip = world.Clip.from_json(meta["spec"])
    return dict(meta, spec=dataclasses.replace(clip, **changes).to_json())


def first_thing(meta, **changes):
    clip = world.Clip.from_json(meta["spec"])
    things = (dataclasses.replace(clip.things[0], **changes),) + clip.things[1:]
    return dict(meta, spec=dataclasses.replace(clip, things=things).to_json())


class Recovery(unittest.TestCase):
    """On 200 random clips every check passes in >= 99 %, and the clips
    cover every colour, shape, motion, sound, pan and task."""

    @classmethod
    def setUpClass(cls):
        cls.examples = examples(seed=20261201, count=RECOVERY_CLIPS)

    def test_checks_pass(self):
        results = collections.defaultdict(list)
        for meta, arrays in self.examples:
            for name, ok in measure.score(meta, arrays).items():
                results[name].append(ok)
        for name in ("colour", "motion", "sound", "pan", "clicks", "anchor", "picture"):
            self.assertTrue(results[name], f"no clip has a {name} check")
            rate = sum(results[name]) / len(results[name])
            print(f"{name}: {sum(results[name])}/{len(results[name])}")
            self.assertGreaterEqual(rate, RECOVERY_RATE, name)

    def test_clips_cover_the_world(self):
        seen = collections.defaultdict(set)
        for meta, _ in self.examples:
            clip = world.Clip.from_json(meta["spec"])
            for t in clip.things:
                seen["colour"].add(t.colour)
                seen["shape"].add(t.shape)
                seen["motion"].add(t.motion)
            seen["background"].add(clip.background)
            seen["sound"].add(clip.sound)
            seen["pan"].add(clip.pan)
            seen["task"].add(clip.task)
            seen["things"].add(len(clip.things))
        self.assertEqual(seen["colour"], set(world.COLOURS))
        self.assertEqual(seen["shape"], set(world.SHAPES))
        self.assertEqual(seen["motion"], set(world.MOTIONS))
        self.assertEqual(seen["background"], set(world.BACKGROUNDS))
        self.assertEqual(seen["sound"], set(world.SOUNDS))
        self.assertEqual(seen["pan"], set(world.PANS))
        self.assertEqual(seen["task"], set(world.TASKS))
        self.assertEqual(seen["things"], {1, 2})

    def test_measured_values_are_the_generated_ones(self):
        for meta, arrays in self.examples[:60]:
            clip = world.Clip.from_json(meta["spec"])
            lab = measure.labels(arrays["frames"])
            self.assertEqual(measure.colours_seen(arrays["frames"], lab), {t.colour for t in clip.things}, meta["id"])
            self.assertEqual(measure.background_of(arrays["frames"]), clip.background, meta["id"])
            for t in clip.things:
                self.assertEqual(measure.shape_in(lab, t.colour), t.shape, meta["id"])


def degraded(frames, audio, rng, sigma=8.0):
    """frames through a 3x3 box blur and Gaussian noise, audio with noise:
    roughly what a VAE's decode does to sharp flat shapes."""
    x = np.pad(frames.astype(np.float32), ((0, 0), (1, 1), (1, 1), (0, 0)), mode="edge")
    h, w = frames.shape[1:3]
    x = sum(x[:, i : i + h, j : j + w] for i in range(3) for j in range(3)) / 9
    x = np.clip(np.rint(x + rng.normal(0, sigma, x.shape)), 0, 255).astype(np.uint8)
    return x, (audio + rng.normal(0, 0.01, audio.shape)).astype(np.float32)


class Robustness(unittest.TestCase):
    """The checks still pass on blurred, noisy held-out clips, so a render
    is judged on what it shows rather than on exact pixels."""

    def test_blur_and_noise(self):
        rng = np.random.default_rng(1)
        results = collections.defaultdict(list)
        for meta, arrays in examples(seed=2, count=60, split="heldout"):
            frames, audio = degraded(arrays["frames"], arrays["audio"], rng)
            for name, ok in measure.score(meta, dict(arrays, frames=frames, audio=audio)).items():
                results[name].append(ok)
        for name, oks in results.items():
            self.assertGreaterEqual(sum(oks) / len(oks), 0.95, name)


@unittest.skipUnless(shutil.which("ffmpeg") and shutil.which("ffprobe"), "needs ffmpeg (make deps installs it)")
class Codec(unittest.TestCase):
    """The checks hold on held-out clips written to MP4 as the app writes
    them (H.264 yuv420p, AAC) and read back, the path renders take."""

    def test_mp4_round_trip(self):
        results = collections.defaultdict(list)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "clip.mp4")
            for meta, arrays in examples(seed=3, count=20, split="heldout"):
                clipio.write_mp4(path, arrays["frames"], arrays["audio"])
                frames, audio = clipio.read_mp4(path)
                self.assertEqual(frames.shape, arrays["frames"].shape)
                for name, ok in measure.score(meta, dict(arrays, frames=frames, audio=audio)).items():
                    results[name].append(ok)
        for name, oks in results.items():
            self.assertGreaterEqual(sum(oks) / len(oks), 0.95, name)


class ChecksCanFail(unittest.TestCase):
    """Each check says no when the clip is not what the spec asks."""

    def find(self, pred, task=None):
        for meta, arrays in examples(seed=5, count=300, task=task):
            if pred(world.Clip.from_json(meta["spec"])):
                return meta, arrays
        self.fail("no such clip in 300")

    def test_wrong_motion_colour_sound_pan(self):
        meta, arrays = self.find(
            lambda c: len(c.things) == 1 and c.things[0].motion == "left" and c.sound == "hum" and c.pan == "left"
        )
        self.assertTrue(all(measure.score(meta, arrays).values()))
        for motion in set(world.MOTIONS) - {"left"}:
            self.assertFalse(measure.score(first_thing(meta, motion=motion), arrays)["motion"], motion)
        other = next(c for c in world.COLOURS if c != world.Clip.from_json(meta["spec"]).things[0].colour)
        self.assertFalse(measure.score(first_thing(meta, colour=other), arrays)["colour"])
        for sound in set(world.SOUNDS) - {"hum"}:
            self.assertFalse(measure.score(with_spec(meta, sound=sound), arrays)["sound"], sound)
        for pan in ("center", "right"):
            self.assertFalse(measure.score(with_spec(meta, pan=pan), arrays)["pan"], pan)

    def test_clicks_off_the_bounces(self):
        meta, arrays = self.find(lambda c: c.sound == "clicks")
        self.assertTrue(measure.score(meta, arrays)["clicks"])
        late = dict(arrays, audio=np.roll(arrays["audio"], world.SAMPLE_RATE // 10, axis=1))
        self.assertFalse(measure.score(meta, late)["clicks"])

    def test_fl2va_anchor_psnr(self):
        meta, arrays = self.find(lambda c: c.things[0].motion in ("left", "right", "up", "down"), task="FL2VA")
        self.assertTrue(math.isinf(measure.psnr(arrays["frames"][0], arrays["anchors"][0])))
        moved = dict(arrays, anchors=arrays["anchors"][::-1])
        self.assertFalse(measure.score(meta, moved)["anchor"])

    def test_ref2va_picture_shape_and_colour(self):
        meta, arrays = self.find(lambda c: True, task="Ref2VA")
        self.assertTrue(measure.score(meta, arrays)["picture"])
        clip = world.Clip.from_json(meta["spec"])
        for shape in set(world.SHAPES) - {clip.things[0].shape}:
            other = world.render_picture(world.Clip.from_json(first_thing(meta, shape=shape)["spec"]))
            self.assertFalse(measure.score(meta, dict(arrays, picture=other))["picture"], shape)
        colour = next(c for c in world.COLOURS if c not in {t.colour for t in clip.things})
        other = world.render_picture(world.Clip.from_json(first_thing(meta, colour=colour)["spec"]))
        self.assertFalse(measure.score(meta, dict(arrays, picture=other))["picture"])


class Pitch(unittest.TestCase):
    def sine(self, hz):
        t = np.arange(world.SAMPLE_RATE) / world.SAMPLE_RATE
        return np.stack([0.3 * np.sin(2 * np.pi * hz * t)] * 2)

    def test_within_a_semitone(self):
        for name, hz in world.TONES.items():
            for st in (-0.9, 0.0, 0.9):
                self.assertEqual(measure.sound_of(self.sine(hz * 2 ** (st / 12))), name, (name, st))
            for st in (-1.2, 1.2):
                self.assertIsNone(measure.sound_of(self.sine(hz * 2 ** (st / 12))), (name, st))

    def test_peak_frequency(self):
        for hz in (220.0, 300.0, 880.0):
            self.assertAlmostEqual(measure.pitch_of(self.sine(hz)[0]), hz, delta=0.5)


class HeldOut(unittest.TestCase):
    def test_train_never_holds_a_heldout_triple(self):
        heldout = world.load_heldout()
        for i in range(600):
            clip = world.sample_clip(random.Random(f"t:{i}"), "train", heldout)
            for t in clip.things:
                self.assertNotIn(world.triple(t), heldout)

    def test_heldout_split_is_made_of_them(self):
        heldout = world.load_heldout()
        seen = set()
        for i in range(300):
            clip = world.sample_clip(random.Random(f"h:{i}"), "heldout", heldout)
            self.assertIn(world.triple(clip.things[0]), heldout)
            seen.add(world.triple(clip.things[0]))
        self.assertEqual(seen, heldout)

    def test_every_name_stays_in_training(self):
        heldout = world.load_heldout()
        self.assertEqual(len(heldout), 16)
        for c in world.COLOURS:
            for s in world.SHAPES:
                self.assertTrue(any((c, s, m) not in heldout for m in world.MOTIONS), (c, s))


class TwoObjectShare(unittest.TestCase):
    # train_dit.py's --two-share: the DiT sees more two-object clips than
    # the world's own share, under the same rules, and only when asked.
    def share(self, two_share, split="train", n=400):
        heldout = world.load_heldout()
        clips = [world.sample_clip(random.Random(f"s:{i}"), split, heldout, two_share=two_share) for i in range(n)]
        for clip in clips:
            self.assertTrue(world.valid(clip.things, clip.sound, clip.frames, split, heldout))
        return sum(len(c.things) == 2 for c in clips) / n

    def test_asked_share(self):
        self.assertAlmostEqual(self.share(0.5), 0.5, delta=0.08)
        self.assertEqual(self.share(0.0), 0.0)
        self.assertAlmostEqual(self.share(0.5, "heldout"), 0.5, delta=0.08)

    def test_world_share_unless_asked(self):
        self.assertLess(self.share(None), 0.25)
        self.assertGreater(self.share(None), 0.08)


class TaskShares(unittest.TestCase):
    # train_dit.py's --task-share: the tasks in the asked proportions, a
    # task left out never drawn, the world's own thirds unless asked, and
    # a clear refusal of a malformed option.
    def tasks(self, task_shares, n=600):
        heldout = world.load_heldout()
        clips = [world.sample_clip(random.Random(f"t:{i}"), "train", heldout, task_shares=task_shares)
                 for i in range(n)]
        return {t: sum(c.task == t for c in clips) / n for t in world.TASKS}

    def test_asked_shares(self):
        got = self.tasks(world.parse_task_shares("t2va=0.3,fl2va=0.1,ref2va=0.6"))
        for task, want in (("T2VA", 0.3), ("FL2VA", 0.1), ("Ref2VA", 0.6)):
            self.assertAlmostEqual(got[task], want, delta=0.06, msg=task)

    def test_left_out_task_never_drawn(self):
        got = self.tasks(world.parse_task_shares("T2VA=1,Ref2VA=3"))
        self.assertEqual(got["FL2VA"], 0.0)
        self.assertAlmostEqual(got["Ref2VA"], 0.75, delta=0.06)

    def test_training_stream_passes_them_on(self):
        # what train_dit.py reads: data.stream, both its paths
        only = world.parse_task_shares("ref2va=1")
        for audio_only, count in ((True, 40), (False, 3)):
            got = [m["task"] for m, _ in data.stream(1, count=count, workers=1, audio_only=audio_only,
                                                      task_shares=only)]
            self.assertEqual(got, ["Ref2VA"] * count, audio_only)

    def test_thirds_unless_asked(self):
        for share in self.tasks(None).values():
            self.assertAlmostEqual(share, 1 / 3, delta=0.06)

    def test_malformed_refused(self):
        for text in ("t2va=x", "video=1", "t2va=1,T2VA=2", "t2va=-1", "t2va=inf", "t2va=0,fl2va=0"):
            with self.assertRaises(argparse.ArgumentTypeError, msg=text):
                world.parse_task_shares(text)


class BindingNegative(unittest.TestCase):
    def clip(self, task, colours=("red", "cyan")):
        things = tuple(world.Thing(shape, c, "up", 0.0, 0.0, 10.0) for shape, c in zip(("square", "circle"), colours))
        return world.Clip(128, 128, 39, "gray", things[:len(colours)], "tone", "center", task)

    def test_t2va_exchanges_the_two_colours_and_nothing_else(self):
        p = "a red square moves up and a cyan circle grows on a gray background, a middle tone centered"
        got = world.binding_negative(self.clip("T2VA"), p)
        self.assertEqual(got, "a cyan square moves up and a red circle grows on a gray background, "
                              "a middle tone centered")
        self.assertEqual(world.binding_negative(self.clip("T2VA"), got), p)

    def test_articles_follow_the_colours(self):
        p = "an orange square rises and a white circle sinks over a black background, in silence"
        got = world.binding_negative(self.clip("T2VA", ("orange", "white")), p)
        self.assertEqual(got, "a white square rises and an orange circle sinks over a black background, in silence")

    def test_ref2va_gives_the_second_object_picture_1s_colour(self):
        p = "the object in Picture 1 moves up and a yellow circle grows on a navy background, a low hum centered"
        got = world.binding_negative(self.clip("Ref2VA", ("purple", "yellow")), p)
        self.assertEqual(got, "the object in Picture 1 moves up and a purple circle grows on a navy background, "
                              "a low hum centered")

    def test_none_for_one_object_and_for_fl2va(self):
        p = "a red square moves up on a gray background, a middle tone centered"
        self.assertIsNone(world.binding_negative(self.clip("T2VA", ("red",)), p))
        self.assertIsNone(world.binding_negative(self.clip("FL2VA"), p))

    def test_every_drawn_two_object_prompt_changes(self):
        heldout = world.load_heldout()
        for i in range(60):
            meta, _ = world.example(5, i, "train", heldout, ("T2VA", "Ref2VA")[i % 2], two_share=1.0)
            clip = world.Clip.from_json(meta["spec"])
            neg = world.binding_negative(clip, meta["prompt"])
            self.assertNotEqual(neg, meta["prompt"])
            self.assertEqual(len(neg.split()), len(meta["prompt"].split()))


class Clips(unittest.TestCase):
    # A changed generator makes a new dataset, which checkpoints trained on
    # the old one no longer match: these digests (sha256 of the meta JSON and
    # of the frames) change only on purpose. Audio is left out because
    # numpy's sin and exp may round differently from one CPU to another.
    PINNED = [
        ("the object shown in Picture 1 gets bigger against a black backdrop, with no sound", "10b593f16318c997", "37e56f5b33a44491"),
        ("a blue triangle sinks and an orange circle sinks against a cream backdrop, in silence", "38b549dba9bb3d96", "32707995f47305c8"),
        ("a white square expands over a cream background, a high-pitched beep on the right", "4162ffd23e548de3", "481b79b1dcbc58f6"),
    ]

    def test_pinned_examples(self):
        heldout = world.load_heldout()
        for i, (prompt, meta_digest, frames_digest) in enumerate(self.PINNED):
            meta, arrays = world.example(1, i, "train", heldout)
            self.assertEqual(meta["prompt"], prompt)
            self.assertEqual(hashlib.sha256(json.dumps(meta, sort_keys=True).encode()).hexdigest()[:16], meta_digest)
            self.assertEqual(hashlib.sha256(arrays["frames"].tobytes()).hexdigest()[:16], frames_digest)

    def test_deterministic(self):
        heldout = world.load_heldout()
        a = world.example(3, 17, "train", heldout)
        b = world.example(3, 17, "train", heldout)
        self.assertEqual(a[0], b[0])
        for k in a[1]:
            np.testing.assert_array_equal(a[1][k], b[1][k])
        self.assertNotEqual(a[0]["prompt"], world.example(4, 17, "train", heldout)[0]["prompt"])

    def test_shapes_lengths_and_canvas(self):
        for meta, arrays in examples(seed=9, count=40):
            clip = world.Clip.from_json(meta["spec"])
            self.assertIn(clip.frames, world.LENGTHS)
            self.assertEqual((clip.frames - 5) % 17, 0)
            self.assertEqual(clip.width % 32, 0)
            self.assertEqual(clip.height % 32, 0)
            self.assertEqual(arrays["frames"].shape, (clip.frames, clip.height, clip.width, 3))
            self.assertEqual(arrays["frames"].dtype, np.uint8)
            self.assertEqual(arrays["audio"].shape, (2, round(clip.frames * 40 / 24) * 800))
            self.assertEqual(arrays["audio"].dtype, np.float32)
            # Every object stays whole on the canvas: the border is background.
            f = arrays["frames"]
            border = np.concatenate([f[:, 0], f[:, -1], f[:, :, 0], f[:, :, -1]], axis=1)
            np.testing.assert_array_equal(border, np.broadcast_to(world.BACKGROUNDS[clip.background], border.shape), meta["id"])

    def test_prompts(self):
        for meta, _ in examples(seed=11, count=60):
            clip = world.Clip.from_json(meta["spec"])
            p = meta["prompt"]
            self.assertIn(clip.background, p)
            first = clip.things[0]
            if clip.task == "Ref2VA":
                self.assertIn("Picture 1", p)
                self.assertNotIn(f"{first.colour} {first.shape}", p)
            else:
                self.assertIn(f"{first.colour} {first.shape}", p)
            self.assertTrue(any(w in p for w in world.MOTION_WORDS[first.motion]), p)


if __name__ == "__main__":
    unittest.main()


class ObjectCells(unittest.TestCase):
    """The latent cells train_dit.py weighs up are the shapes' and only theirs."""

    def test_a_square_marks_its_cells_and_steps(self):
        bg = world.BACKGROUNDS["navy"]
        frames = np.broadcast_to(np.asarray(bg, np.uint8), (8, 64, 64, 3)).copy()
        frames[4:, 20:40, 36:50] = world.COLOURS["red"]  # frames 4-7: cells rows 1-2, columns 2-3
        cells = world.object_cells(frames, bg, latent_t=2)
        want = np.zeros((2, 4, 4), np.float32)
        want[1, 1:3, 2:4] = 1
        np.testing.assert_array_equal(cells, want)

    def test_a_pixel_is_a_shapes_past_12_on_any_channel_either_way(self):
        bg = world.BACKGROUNDS["gray"]  # (120, 120, 120): room above and below
        frames = np.broadcast_to(np.asarray(bg, np.uint8), (1, 32, 32, 3)).copy()
        frames[0, 0, 0] = (132, 108, 120)  # 12 over and 12 under: still the background
        frames[0, 0, 16] = (120, 120, 133)  # 13 over on blue alone
        frames[0, 16, 0] = (120, 107, 120)  # 13 under on green alone
        cells = world.object_cells(frames, bg, latent_t=1)
        np.testing.assert_array_equal(cells[0], [[0, 1], [1, 0]])

    def test_world_clips_cover_a_few_cells(self):
        for meta, arrays in examples(seed=2, count=6):
            clip = world.Clip.from_json(meta["spec"])
            cells = world.object_cells(arrays["frames"], world.BACKGROUNDS[clip.background], latent_t=4)
            self.assertEqual(cells.shape, (4, clip.height // 16, clip.width // 16))
            self.assertGreater(cells.mean(), 0.0, meta["prompt"])
            # two of the world's shapes sweep up to about two thirds of a clip's cells
            self.assertLess(cells.mean(), 0.8, meta["prompt"])
