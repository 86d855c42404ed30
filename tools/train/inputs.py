"""Conditioning of the demo DiT, built by the reference code from a world
example's raw prompt, frames, anchors and picture (the steps of
tools/fixtures/e2e/gen.py, for the demo model's 128x128 canvas):

  T2VA   ids = SGLang minimax_h3_text_only_ids(prompt); tags all TEXT.
  FL2VA  the first and/or last frame: the first stretched to the canvas
         (canvas.minimax_h3_stretch_keyframe_canvas), a last one after it
         cover-fitted (minimax_h3_prepare_keyframe_canvas); both through the
         partition's Qwen image processor (HF) and
         minimax_h3_multi_image_presentation; each VAE-encoded as a picture
         (posterior mean, rounded to float16 as the official latent) into
         the payload's keyframes at frame 0 / F-1.
  Ref2VA Picture 1 resized by minimax_h3_resize_reference_image to the
         canvas the app gives it (the demo model declares a 128-px
         reference short edge), through the image processor and
         minimax_h3_ref2va_presentation, VAE-encoded into payload refs.
Qwen3-VL states: HF Qwen3VLForConditionalGeneration, the state at the final
norm's input after min(50, L) layers, in strict float32 (text-only prompts
batched with right padding: causal attention keeps each prompt's states).
"""

import contextlib
import inspect
import os
import sys

import numpy as np
import torch

import demo

sys.path.insert(0, os.path.join(demo.ROOT, "tools", "fixtures", "e2e"))


@contextlib.contextmanager
def strict_float32():
    """No TF32 matmuls inside (the engine's Qwen runs in float32; training
    turns TF32 on), gradients off."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        with torch.no_grad():
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


class Conditioner:
    """Loads the partition's tokenizer, processors and Qwen3-VL once.
    text=True: each conditioning also keeps what text_encoder.TextLayers
    needs to make its states again with grad (ids, HF's positions, the
    picture's rows and deepstack features): text_only's in self.entries by
    prompt, fl2va's and ref2va's in self.last_entry; each is checked
    against HF's states as it is made."""

    def __init__(self, part, device, vae, text=False):
        import sglref
        from transformers import (AutoImageProcessor, AutoTokenizer,
                                  Qwen3VLForConditionalGeneration)

        self.ns = sglref.load()
        self.device, self.vae = device, vae
        self.tok = AutoTokenizer.from_pretrained(os.path.join(part, "tokenizer"))
        self.improc = AutoImageProcessor.from_pretrained(os.path.join(part, "processor"))
        stats = demo.read_json(os.path.join(part, "video_vae", "config.json"))
        self.vae_mean = torch.tensor(stats["latents_mean"], dtype=torch.float64).view(1, -1, 1, 1, 1)
        self.vae_std = torch.tensor(stats["latents_std"], dtype=torch.float64).view(1, -1, 1, 1, 1)
        model = Qwen3VLForConditionalGeneration.from_pretrained(os.path.join(part, "text_encoder"),
                                                                dtype=torch.float32).eval().to(device)
        self.cfg = model.config
        lm = model.model.language_model
        lm.layers = torch.nn.ModuleList(list(lm.layers)[:min(50, len(lm.layers))])
        self.cap = {}
        lm.norm.register_forward_pre_hook(lambda mod, a: self.cap.update(final=a[0]))
        self.qwen = model.model
        self.typed = "mm_token_type_ids" in inspect.signature(self.qwen.forward).parameters
        self.entries, self.last_entry, self.layers = {}, None, None
        if text:
            import text_encoder

            self.layers = text_encoder.TextLayers(part).to(device)
            lm.register_forward_pre_hook(lambda mod, a, k: self.cap.update(lm=k), with_kwargs=True)

    def _states(self, ids, mask=None, vision=None):
        kw = dict(input_ids=ids.to(self.device))
        if mask is not None:
            kw["attention_mask"] = mask.to(self.device)
        for k, v in (vision or {}).items():
            kw[k] = v.to(self.device)
        if self.typed:
            tt = torch.zeros_like(kw["input_ids"])
            tt[kw["input_ids"] == self.cfg.image_token_id] = 1
            kw["mm_token_type_ids"] = tt
        with strict_float32():
            self.qwen(**kw)
        return self.cap["final"]

    def _entry(self, ids, states):
        """One prompt's TextLayers entry from the captured language-model
        inputs (batch of one), checked against HF's states."""
        import text_encoder

        k = self.cap["lm"]
        vis = k.get("visual_pos_masks")
        if vis is None:
            entry = text_encoder.empty_entry(ids, states.shape[-1])
        else:
            pos = k["position_ids"]
            vis = vis[0].cpu()
            entry = {"ids": ids.cpu().to(torch.int32), "pos": pos[-3:, 0, :].cpu().to(torch.int32),
                     "vis": vis, "vis_embeds": k["inputs_embeds"][0][vis.to(states.device)].detach().float().cpu(),
                     "deep": torch.stack([d.detach().float().cpu() for d in k["deepstack_visual_embeds"]])}
        self.check([entry], [states])
        return entry

    def check(self, entries, states):
        """TextLayers' states of the entries against HF's (relative to each
        prompt's largest value)."""
        with strict_float32():  # as HF's states were made (_states)
            mine = self.layers(entries)
        for m, s in zip(mine, states):
            err = float((m - s.to(m.device)).abs().max() / s.abs().max().clamp(min=1e-6))
            assert err < 1e-4, f"text_encoder.TextLayers differs from HF's Qwen3-VL by {err:.2e} (relative)"

    def text_only(self, prompts, batch=128):
        """prompt -> (states [L, D], tags [L]) for text-only prompts, batched."""
        ids = {p: self.ns.presentation.minimax_h3_text_only_ids(self.tok, p) for p in set(prompts)}
        uniq, out = sorted(ids), {}
        for i in range(0, len(uniq), batch):
            group = uniq[i:i + batch]
            n = max(ids[p].shape[0] for p in group)
            x = torch.zeros(len(group), n, dtype=torch.long)
            mask = torch.zeros(len(group), n, dtype=torch.long)
            for j, p in enumerate(group):
                x[j, :ids[p].shape[0]] = ids[p]
                mask[j, :ids[p].shape[0]] = 1
            h = self._states(x, mask)
            for j, p in enumerate(group):
                out[p] = (h[j, :ids[p].shape[0]].float().clone(), torch.ones(ids[p].shape[0], dtype=torch.long))
        alone = self._states(ids[uniq[0]][None])[0].float()
        diff = float((alone - out[uniq[0]][0]).abs().max())
        assert diff < 1e-4, f"batched Qwen states differ from one prompt's by {diff}"
        if self.layers is not None:
            import text_encoder

            for p in uniq:
                self.entries[p] = text_encoder.empty_entry(ids[p], out[p][0].shape[-1])
            for i in range(0, len(uniq), batch):
                group = uniq[i:i + batch]
                self.check([self.entries[p] for p in group], [out[p][0] for p in group])
        return out

    def picture_latent(self, rgb):
        """uint8 [H, W, 3] -> the official fp16-rounded normalised latent [1, 24, 1, h, w]."""
        z = demo.R.vae_encode(self.vae, rgb[None])[None].double().cpu()
        raw = z * self.vae_std + self.vae_mean
        return ((raw.float().half().double() - self.vae_mean) / self.vae_std).float().to(self.device)

    def _vision(self, images):
        v = self.improc(images=images, return_tensors="pt")
        merge = int(self.improc.merge_size) ** 2
        counts = [int(v["image_grid_thw"][i].prod()) // merge for i in range(len(images))]
        return {"pixel_values": v["pixel_values"], "image_grid_thw": v["image_grid_thw"]}, counts

    def fl2va(self, prompt, frames, which):
        """which: "first", "last" or "both" of the clip's own frames."""
        from PIL import Image

        cv = self.ns.canvas
        f, h, w = frames.shape[0], frames.shape[1], frames.shape[2]
        keys = [k for k in (("first", 0), ("last", f - 1)) if which in (k[0], "both")]
        images, kfs = [], []
        for n, (_, idx) in enumerate(keys):
            im = Image.fromarray(frames[idx])
            if n == 0:
                img = cv.minimax_h3_stretch_keyframe_canvas(im, target_width=w, target_height=h)
            else:
                img = cv.minimax_h3_prepare_keyframe_canvas(im, target_width=w, target_height=h, allow_upscale=True)
            images.append(img)
            kfs.append({"resolved_frame_index": idx,
                        "latent": self.picture_latent(np.asarray(img.convert("RGB"), dtype=np.uint8))})
        vision, counts = self._vision(images)
        ids, tags = self.ns.presentation.minimax_h3_multi_image_presentation(self.tok, prompt=prompt,
                                                                            image_token_counts=counts)
        states = self._states(ids[None].long(), vision=vision)[0].float().clone()
        self.last_entry = self._entry(ids, states) if self.layers is not None else None
        return states, tags.long(), {"keyframes": kfs, "cond_video_latents": [k["latent"] for k in kfs]}

    def ref2va(self, prompt, picture, canvas=128):
        from PIL import Image

        re_ = self.ns.reference_encoding
        img = re_.minimax_h3_resize_reference_image(Image.fromarray(picture), target_width=canvas,
                                                    target_height=canvas)
        z = self.picture_latent(np.asarray(img, dtype=np.uint8))
        vision, counts = self._vision([img])
        ids, tags = self.ns.presentation.minimax_h3_ref2va_presentation(
            self.tok, prompt=prompt, condition_labels=[("image", 1)], image_token_count=counts[0])
        states = self._states(ids[None].long(), vision=vision)[0].float().clone()
        self.last_entry = self._entry(ids, states) if self.layers is not None else None
        block = {"kind": "image", "latent_h": z.shape[3], "latent_w": z.shape[4]}
        return states, tags.long(), {"refs": [block], "cond_video_latents": [z]}
