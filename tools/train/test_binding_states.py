"""binding_states' sites and probe: each site is the last letter of its
word in the prompt, a token is found by the characters it covers, and the
probe scores a feature that names the colour far above one that does not.

  python3 -m unittest test_binding_states     (needs torch; make train-check)
"""

import unittest

try:
    import torch

    import binding_states
except ImportError:  # binding_states needs torch
    binding_states = None

import world


@unittest.skipIf(binding_states is None, "needs torch")
class Sites(unittest.TestCase):
    def test_sites_are_each_words_last_letter(self):
        p = "a red square sinks and a green circle rises on a black background, a low hum on the left"
        things = (world.Thing("square", "red", "down", 0.0, 0.0, 10.0),
                  world.Thing("circle", "green", "up", 0.0, 0.0, 10.0))
        ends = binding_states.word_ends(p, things)
        self.assertEqual([p[:i + 1].split()[-1] for i in ends], ["square", "circle", "red", "green"])

    def test_token_at_finds_the_covering_token(self):
        offsets = [(0, 1), (1, 5), (5, 6), (6, 12)]
        self.assertEqual([binding_states.token_at(offsets, c) for c in (0, 1, 4, 5, 11)], [0, 1, 1, 2, 3])

    def test_drawn_prompts_have_two_shapes(self):
        for q, clip in binding_states.prompts(20):
            self.assertEqual(len(clip.things), 2)
            self.assertEqual(len(binding_states.word_ends(q, clip.things)), 4)


@unittest.skipIf(binding_states is None, "needs torch")
class Probe(unittest.TestCase):
    def setUp(self):
        gen = torch.Generator().manual_seed(0)
        self.own = torch.randint(0, 8, (400,), generator=gen)
        self.other = (self.own + 1 + torch.randint(0, 7, (400,), generator=gen)) % 8
        self.noise = torch.randn(400, 64, generator=gen)

    def test_a_feature_naming_the_colour_scores_high(self):
        x = self.noise.clone()
        x[torch.arange(400), self.own] += 3
        top1, pair = binding_states.scores(x, self.own, self.other, 300)
        self.assertGreater(top1, 0.6)
        self.assertGreater(pair, 0.85)

    def test_noise_scores_near_chance(self):
        top1, pair = binding_states.scores(self.noise, self.own, self.other, 300)
        self.assertLess(top1, 0.3)
        self.assertLess(abs(pair - 0.5), 0.15)

    def test_knowing_both_colours_but_not_which_scores_half_pairwise(self):
        x = self.noise.clone()
        x[torch.arange(400), self.own] += 3
        x[torch.arange(400), self.other] += 3
        _, pair = binding_states.scores(x, self.own, self.other, 300)
        self.assertLess(abs(pair - 0.5), 0.15)


if __name__ == "__main__":
    unittest.main()
