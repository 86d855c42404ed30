"""text_encoder.TextLayers, the trainable copy of the demo's Qwen3-VL
language layers: against Hugging Face's states (the committed t2va fixture
here; HF itself, pictures included, where transformers is installed: the
GPU machine), its batching, its pictures' rows and deepstack features, its
rope axes, saving into the snapshot, and train_dit.restate.

  python3 -m unittest test_text_encoder     (make train-check)
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
T2VA_FIXTURE = os.path.join(HERE, "..", "fixtures", "e2e", "testdata", "t2va.safetensors")


def have_transformers():
    try:
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


@unittest.skipIf(torch is None, "needs torch")
class TextLayersTest(unittest.TestCase):
    def setUp(self):
        import demo
        import text_encoder

        self.te, self.demo = text_encoder, demo
        self.part = demo.part_dir(demo.SNAPSHOT)
        self.m = text_encoder.TextLayers(self.part)
        # (the fixtures stay here when a GPU call is made: slim.sh)
        self.fx = demo.R.read_safetensors(T2VA_FIXTURE) if os.path.exists(T2VA_FIXTURE) else None
        self.ids = self.fx["qwen.ids"] if self.fx else torch.arange(500, 522, dtype=torch.int32)

    def states(self, entries):
        with torch.no_grad():
            return self.m(entries)

    @unittest.skipUnless(os.path.exists(T2VA_FIXTURE), "needs the t2va fixture")
    def test_text_only_states_match_the_hf_fixture(self):
        # gen.py's t2va case: HF's Qwen3VLForConditionalGeneration on the
        # tiny snapshot's text encoder as it was made. Once the encoder has
        # trained (a resumed DTEXT call), the fixture no longer holds its
        # states; AgainstHF then checks the trained one on the GPU machine.
        if self.demo.trained(self.demo.SNAPSHOT, "text_encoder"):
            self.skipTest("the snapshot's text encoder has trained since the fixture was made")
        e = self.te.empty_entry(self.ids, 64)
        self.assertTrue(torch.equal(e["pos"], self.fx["qwen.positions"]))
        got = self.states([e])[0]
        torch.testing.assert_close(got, self.fx["qwen.hidden"].float(), atol=2e-5, rtol=0)

    def test_a_batch_keeps_each_prompts_states(self):
        ids = self.ids
        a, b = self.te.empty_entry(ids, 64), self.te.empty_entry(ids[:9], 64)
        both = self.states([a, b])
        torch.testing.assert_close(both[0], self.states([a])[0], atol=1e-5, rtol=0)
        torch.testing.assert_close(both[1], self.states([b])[0], atol=1e-5, rtol=0)
        self.assertEqual(tuple(both[1].shape), (9, 64))

    def picture_entry(self, deep):
        """The t2va prompt with rows 3-6 taken as a picture's, their rows
        the embeddings the ids give: the same input, through the picture path."""
        e = self.te.empty_entry(self.ids, 64)
        e["vis"][3:7] = True
        e["vis_embeds"] = self.m.w("embed_tokens.weight")[e["ids"][3:7].long()].detach().clone()
        e["deep"] = deep
        return e

    def test_a_pictures_rows_replace_its_tokens_embeddings(self):
        plain = self.states([self.te.empty_entry(self.ids, 64)])[0]
        pic = self.picture_entry(torch.zeros(2, 4, 64))
        torch.testing.assert_close(self.states([pic])[0], plain, atol=1e-6, rtol=0)
        pic["vis_embeds"] = pic["vis_embeds"] + 1.0
        self.assertGreater(float((self.states([pic])[0] - plain).abs().max()), 1e-3)

    def test_deepstack_adds_after_its_layer_at_the_pictures_rows(self):
        # the last layer's features are added after it: exactly them at the
        # picture's rows, nothing elsewhere
        plain = self.states([self.picture_entry(torch.zeros(2, 4, 64))])[0]
        deep = torch.zeros(2, 4, 64)
        deep[1] = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
        got = self.states([self.picture_entry(deep)])[0]
        torch.testing.assert_close(got[3:7] - plain[3:7], deep[1], atol=1e-5, rtol=0)
        torch.testing.assert_close(got[:3], plain[:3], atol=0, rtol=0)
        # the first layer's features reach every later row through attention
        deep = torch.zeros(2, 4, 64)
        deep[0] = 0.5
        got = self.states([self.picture_entry(deep)])[0]
        self.assertGreater(float((got[7:] - plain[7:]).abs().max()), 1e-4)

    def test_rope_pairs_follow_the_interleaved_sections(self):
        # mrope_section [6, 5, 5] over 16 pairs: t h w repeated five times, then t
        self.assertEqual(self.m.axis.tolist(), [0, 1, 2] * 5 + [0])
        _, sin = self.m.rope(torch.tensor([[0], [7], [0]]))
        turned = [j for j in range(16) if float(sin[0, j]) != 0.0]
        self.assertEqual(turned, [1, 4, 7, 10, 13])

    def test_save_writes_the_trained_tensors_and_keeps_the_rest(self):
        snap = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, snap)
        enc = os.path.join(snap, "FL2VA", "text_encoder")
        shutil.copytree(os.path.join(self.part, "text_encoder"), enc)
        before = dict(self.demo.R.read_dir_safetensors(enc))
        with torch.no_grad():
            self.m.w("layers.1.mlp.up_proj.weight").add_(0.25)
        self.te.save(self.m, snap)
        after = self.demo.R.read_dir_safetensors(enc)
        name = self.te.PREFIX + "layers.1.mlp.up_proj.weight"
        self.assertEqual(after[name].dtype, torch.bfloat16)
        torch.testing.assert_close(after[name], (before[name].float() + 0.25).to(torch.bfloat16), atol=0, rtol=0)
        for k in before:
            if k != name:
                self.assertTrue(torch.equal(after[k], before[k]), k)
        # the shards keep their split, the index its map
        old = self.demo.read_json(os.path.join(self.part, "text_encoder", "model.safetensors.index.json"))
        new = self.demo.read_json(os.path.join(enc, "model.safetensors.index.json"))
        self.assertEqual(new["weight_map"], old["weight_map"])

    def test_restate_encodes_a_clip_drawn_twice_once(self):
        import train_dit

        seen = []

        def counting(entries):
            seen.append(len(entries))
            return self.m(entries)

        item = {"states": torch.zeros(22, 64), "text": self.te.empty_entry(self.ids, 64)}
        out = train_dit.restate(counting, [item, item], negatives=False)
        self.assertEqual(seen, [1])
        self.assertIs(out[0]["states"], out[1]["states"])
        self.assertEqual(tuple(out[1]["states"].shape), (22, 64))

    def test_kept_examples_outlive_the_text_encoders_steps_only_while_it_trains(self):
        import train_dit

        snap = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, snap)
        versions = []
        for steps in (0, 1500):
            self.demo.record(snap, "text_encoder", steps=steps)
            versions.append((train_dit.inputs_version(snap), train_dit.inputs_version(snap, text=True)))
        self.assertNotEqual(versions[0][0], versions[1][0])  # frozen: its states were another encoder's
        self.assertEqual(versions[0][1], versions[1][1])  # training: states made again from the entries
        self.assertNotEqual(versions[1][0], versions[1][1])  # and the two kinds never mix

    def test_restate_carries_gradients_to_the_text_layers(self):
        import train_dit

        ids = self.ids
        neg = {"states": torch.zeros(9, 64), "text": self.te.empty_entry(ids[:9], 64)}
        items = [{"states": torch.zeros(22, 64), "text": self.te.empty_entry(ids, 64), "negative": neg}]
        out = train_dit.restate(self.m, items, negatives=True)
        self.assertIs(items[0]["states"].requires_grad, False)  # the kept item is left as it was
        (out[0]["states"].sum() + 2 * out[0]["negative"]["states"].sum()).backward()
        g = self.m.w("layers.0.self_attn.q_proj.weight").grad
        self.assertIsNotNone(g)
        self.assertGreater(float(g.abs().max()), 0.0)
        self.assertEqual(tuple(out[0]["negative"]["states"].shape), (9, 64))
        without = train_dit.restate(self.m, items, negatives=False)
        self.assertIs(without[0]["negative"], neg)


@unittest.skipIf(torch is None or not os.path.exists(os.path.join(HERE, "..", "fixtures", "e2e", "_ref", "model.py")),
                 "needs torch and the pinned ComfyUI copies")
class ThroughTheDiT(unittest.TestCase):
    def test_the_flow_loss_reaches_the_text_layers(self):
        # the DiT reads the restated states, not the ones the item was made with
        import random

        import demo
        import test_train_dit
        import text_encoder
        import train_dit

        ref = demo.dit_training_shims()
        model = demo.load_dit(demo.SNAPSHOT, device="cpu")
        text = text_encoder.TextLayers(demo.part_dir(demo.SNAPSHOT))
        item = test_train_dit.fl2va_item(torch.Generator().manual_seed(2))
        item["text"] = text_encoder.empty_entry(torch.arange(500, 540, dtype=torch.int32), 64)
        batch = train_dit.restate(text, train_dit.with_layouts([item]), negatives=False)
        loss = train_dit.flow_loss(model, ref, batch, torch.Generator().manual_seed(1), random.Random(2))[0]
        loss.backward()
        table = text.w("embed_tokens.weight").grad
        self.assertGreater(float(table[500:540].abs().max()), 0.0)
        self.assertEqual(float(table[:500].abs().max()), 0.0)  # only the prompt's tokens
        self.assertGreater(float(text.w("layers.1.mlp.down_proj.weight").grad.abs().max()), 0.0)


    def test_a_runs_end_saves_both_and_records_their_steps(self):
        import types

        import demo
        import text_encoder
        import train_dit

        snap = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, snap)
        shutil.copytree(demo.SNAPSHOT, snap, dirs_exist_ok=True)
        # (a snapshot whose encoder trained before adds to its steps)
        before = int(demo.trained(snap, "text_encoder").get("steps", 0))
        model = demo.load_dit(snap, device="cpu")
        text = text_encoder.TextLayers(demo.part_dir(snap))
        with torch.no_grad():
            text.w("layers.0.self_attn.v_proj.weight").mul_(0.5)
        a = types.SimpleNamespace(snapshot=snap, text_lr=1e-4, accum=1, batch=24, ranks=8, examples=7200)
        done = {"steps": 100, "samples": 10, "seconds": 1.0, "examples_seen": 50}
        self.assertEqual(train_dit.save_run(a, model, text, done, 7, 2.0, ["t2va"]), 10 + 7 * 24 * 8)
        self.assertEqual(demo.trained(snap, "dit")["steps"], 107)
        self.assertEqual(demo.trained(snap, "dit")["examples_seen"], 7250)
        self.assertEqual(demo.trained(snap, "text_encoder")["steps"], before + 7)
        again = text_encoder.TextLayers(demo.part_dir(snap))
        torch.testing.assert_close(again.w("layers.0.self_attn.v_proj.weight"),
                                   text.w("layers.0.self_attn.v_proj.weight").detach().to(torch.bfloat16).float())
        # the frozen encoder's runs leave it and its record alone
        train_dit.save_run(dict_ns(a, text_lr=0.0), model, None, demo.trained(snap, "dit"), 3, 1.0, ["t2va"])
        self.assertEqual(demo.trained(snap, "dit")["steps"], 110)
        self.assertEqual(demo.trained(snap, "text_encoder")["steps"], before + 7)


def dict_ns(ns, **kw):
    import types

    return types.SimpleNamespace(**dict(vars(ns), **kw))


@unittest.skipIf(torch is None or not have_transformers(), "needs transformers (the GPU machine)")
class AgainstHF(unittest.TestCase):
    """inputs.Conditioner(text=True) checks TextLayers against HF's states
    on every conditioning it makes (an assertion): pictures, their
    positions and deepstack features included."""

    def test_each_task_matches(self):
        import demo
        import inputs
        import world

        part = demo.part_dir(demo.SNAPSHOT)
        vae = demo.build_video_vae(part)
        cond = inputs.Conditioner(part, "cpu", vae, text=True)
        heldout = world.load_heldout()
        for task in ("T2VA", "FL2VA", "Ref2VA"):
            meta, arr = world.example(3, 0, "train", heldout, task=task)
            if task == "FL2VA":
                cond.fl2va(meta["prompt"], arr["frames"], "both")
                self.assertTrue(bool(cond.last_entry["vis"].any()))
                self.assertGreater(int(cond.last_entry["pos"][1].max()), 0)
            elif task == "Ref2VA":
                cond.ref2va(meta["prompt"], arr["picture"])
                self.assertEqual(cond.last_entry["deep"].shape[0], 2)
            else:
                cond.text_only([meta["prompt"]])
                self.assertIn(meta["prompt"], cond.entries)


if __name__ == "__main__":
    unittest.main()
