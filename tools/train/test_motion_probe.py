"""motion_probe's prompt swaps: every motion phrase becomes its opposite
motion's, every colour another colour, a two-shape prompt's colours each
other's, and nothing else changes.

  python3 -m unittest test_motion_probe     (needs torch; make train-check)
"""

import unittest

try:
    import motion_probe
except ImportError:  # motion_probe needs torch
    motion_probe = None

import world


@unittest.skipIf(motion_probe is None, "needs torch")
class Swaps(unittest.TestCase):
    def test_each_motion_phrase_becomes_the_opposite(self):
        for motion, phrases in world.MOTION_WORDS.items():
            opposite = motion_probe.OPPOSITE[motion]
            self.assertEqual(motion_probe.OPPOSITE[opposite], motion)
            for phrase in phrases:
                p = f"a red circle {phrase} on a black background, a low hum on the left"
                t = world.Thing("circle", "red", motion, 0.0, 0.0, 10.0)
                got = motion_probe.swapped_motion(p, t)
                self.assertEqual(got, p.replace(phrase, world.MOTION_WORDS[opposite][0]), phrase)

    def test_colour_swap_changes_only_the_shape_colour(self):
        p = "a red square moves up on a gray background, a middle tone centered"
        got = motion_probe.swapped_colour(p, world.Thing("square", "red", "up", 0.0, 0.0, 10.0))
        self.assertTrue(got.endswith(" square moves up on a gray background, a middle tone centered"), got)
        self.assertNotIn("red ", got)
        self.assertIn(got.split()[1], world.COLOURS)

    def test_colour_swap_keeps_the_article_right(self):
        p = "an orange circle grows on a navy background, in silence"
        got = motion_probe.swapped_colour(p, world.Thing("circle", "orange", "grow", 0.0, 0.0, 10.0))
        self.assertEqual(got, "a blue circle grows on a navy background, in silence")

    def test_binding_clips_have_two_shapes_and_the_same_words(self):
        for arr, clip, (own, exchanged) in motion_probe.binding_clips(3):
            self.assertEqual(len(clip.things), 2)
            self.assertEqual(arr["frames"].shape[0], 39)
            self.assertNotEqual(own, exchanged)
            self.assertEqual(sorted(own.split()), sorted(exchanged.split()))

    def test_second_colour_swaps_only_the_second_shapes_word_to_a_third_colour(self):
        for task in ("T2VA", "Ref2VA"):
            for arr, clip, (own, swapped) in motion_probe.second_colour_clips(task, 3):
                first, second = clip.things
                self.assertNotEqual(first.colour, second.colour)
                words, other = own.split(), swapped.split()
                changed = [(a, b) for a, b in zip(words, other) if a != b]
                self.assertEqual(len(words), len(other))
                self.assertEqual(len(changed), 1, (own, swapped))
                self.assertEqual(changed[0][0], second.colour)
                self.assertNotIn(changed[0][1], (first.colour, second.colour))

    def test_bounce_clips_bounce_and_swap_to_staying_still(self):
        for arr, clip, (own, motion, colour) in motion_probe.bounce_clips(3):
            self.assertEqual([t.motion for t in clip.things], ["bounce"])
            self.assertEqual(motion, motion_probe.swapped_motion(own, clip.things[0]))
            self.assertIn(world.MOTION_WORDS["still"][0], motion)
            self.assertNotEqual(colour, own)

    def test_colour_cells_cover_the_second_shape_and_not_the_first(self):
        import numpy as np

        arr, clip, _ = motion_probe.second_colour_clips("T2VA", 1)[0]
        first, second = clip.things
        cells = motion_probe.colour_cells(world.COLOURS[second.colour])(arr["frames"], 1)[0]
        both = world.object_cells(arr["frames"], world.BACKGROUNDS[clip.background], 1)[0]
        firsts = motion_probe.colour_cells(world.COLOURS[first.colour])(arr["frames"], 1)[0]
        self.assertGreater(cells.sum(), 0)
        self.assertTrue(np.all(cells <= both))  # inside the shapes' cells
        self.assertLess(cells.sum(), both.sum())  # and not all of them: the first's are apart
        self.assertGreater(firsts.sum(), 0)

    def test_pool_clips_are_the_examples_a_call_made_from_there(self):
        import data
        import train_dit

        start = 150404  # in the shipped DiT's last cold call's pool, a T2VA clip of 22 frames
        made = [meta["prompt"] for meta, arr in data.stream(train_dit.stream_seed(1), "train", start=start, count=12,
                                                            workers=1)
                if meta["task"] == "T2VA" and arr["frames"].shape[0] <= 39]
        got = [ps[0] for _, _, ps in motion_probe.pool_clips(start, len(made))]
        self.assertGreater(len(made), 3)  # (and one of 56 frames among the twelve, left out)
        self.assertEqual(got, made)


if __name__ == "__main__":
    unittest.main()
