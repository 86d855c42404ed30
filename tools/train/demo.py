"""The demo model's shape, and its snapshot as the training checkpoint.

The demo model is the real MiniMax-H3 architecture at a small size, in the
official layout (model_index.json, FL2VA/ and Ref2VA/ partitions, official
tensor names and dtypes). The snapshot under models/demo/snapshot is both
what the app ships and what training resumes from: every stage reads the
weights it trains from there and writes them back, so a later run on the
GPU machine continues where the last one stopped (the optimizer restarts
with a short warm-up; its state is not kept, to keep the repository small).

The models are ComfyUI's classes (tools/fixtures/e2e/refmodels.py loads
them from the pinned copies under tools/fixtures/e2e/_ref with the shims it
declares). Training adds one shim of its own, declared here:
  - audio_vae.snake, AttnProjection.forward, GeGluMlp.forward: the same
    formulas written out of place (x + sin(alpha x)^2 / (beta + 1e-9);
    proj(norm3 x) + attn(norm1 x), then + mlp(norm2 x); w2(gelu(w0 x) *
    w1 x)); ComfyUI updates tensors in place that autograd still needs.
  - model._mod_scale_shift, _mod_gate, RefinerBlock.forward: the same
    per-segment modulation, gated residual and residual adds, built out of
    place (torch.cat over the segments) for the same reason; and ComfyUI's
    own comfy.model_management.in_training switch, which takes its
    out-of-place RMSNorm + RoPE path.
  - with them, packed.py's shims for several clips in one forward
    (declared there).
The text encoder, tokenizer and processors are the tiny snapshot's
(`h3studio tiny-model`), frozen: the Qwen3-VL states are a fixed function
of the prompt's tokens, which is all a conditioning signal needs; training
them would change the text path the engine's Qwen parity tests cover for
no gain in a world of a few hundred words.
"""

import hashlib
import json
import os
import shutil
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "fixtures", "e2e"))
sys.dont_write_bytecode = True

import refmodels as R  # noqa: E402

SNAPSHOT = os.path.join(ROOT, "models", "demo", "snapshot")
# The repository keeps one partition's files: the demo's two partitions
# share every weight (one DiT trained on all tasks), so Ref2VA/ holds only
# its model_index.json and the app fills in the rest when it unpacks the
# snapshot (models/demo).
PARTITIONS = ("FL2VA",)

# DiT: 4 blocks of width 192 (3 heads of 64), a 2-block token refiner. Sized
# so a 56-frame 128x128 clip (272 video + 93 audio + ~40 text rows) takes
# a few seconds for 20 steps on two CPU cores, and the snapshot stays small
# (the repository travels to the GPU machine whole, under 64 MiB).
DIT_CONFIG = {
    "_class_name": "MiniMaxH3DiTModel",
    "hidden_size": 192,
    "num_layers": 4,
    "token_refiner_num_layers": 2,
    "num_attention_heads": 3,
    "attention_head_dim": 64,
    "ffn_hidden_size": 512,
    "latents_dim": 24,
    "audio_latents_dim": 32,
    "patch_size": [1, 2, 2],
    "text_dim": 64,  # the tiny Qwen3-VL's hidden size
    "timestep_input_dim": 128,
    "time_embed_hidden_size": 192,
    "time_embed_dim": 64,
    "rope_inv_freq_len": 8,
    "norm_eps": 1e-5,
    "qk_norm_eps": 1e-5,
    "final_norm_eps": 1e-5,
    "adaln_out_features": 18 * 192,
    "final_adaln_out_features": 2 * 192,
}

# Video VAE source config changes against the tiny one: a ViT decoder of
# width 256 (4 heads of 64). Its head maps each token linearly to a
# 4-frame 16x16 RGB patch, so the width bounds the patches it can draw: at
# the first runs' width 96 (3 heads of 32) the decoder stayed at 22 dB on
# the world and overfit eight pictures to only 24.7 dB in 300 steps;
# widths 192 (3 blocks), 256 and 384 reached 27.4, 28.2 and 28.2 dB
# (shapes 32.5, 32.1, 32.0; overfit_vae.py, fresh weights, CPU). Heads of
# 64 are also a flash-attention size ggml-cuda has (32 is not).
VIDEO_VIT = {"num_layers": 2, "heads": 4, "dim_head": 64}

# Audio VAE kwargs changes against the tiny one: a wider encoder stem (the
# tiny one starts from 2 channels), and four decoder stages (x8 x5 x5 x4,
# the same 800 samples per latent) instead of seven: BigVGAN halves its
# width per stage, and the tiny decoder's seventh stage has one channel,
# which collapsed the first run's decoder to a constant.
AUDIO_KWARGS = {"encoder_dim": 4, "decoder_rates": [8, 5, 5, 4], "decoder_kernel_sizes": [16, 11, 11, 8]}

# DiT tensors the release stores in float32 (the rest is bfloat16).
DIT_F32 = ("video_patch_proj.", "audio_patch_proj.", "time_embedder.", "rope.inv_freq",
           "final_layer.video_out.", "final_layer.audio_out.")


def part_dir(snap, part="FL2VA"):
    return os.path.join(snap, part)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------- safetensors

def write_safetensors(path, tensors):
    R.write_safetensors(path, tensors, {"format": "pt"})


def write_sharded(dirpath, tensors, first):
    """Two shards and an index, as the release's components: the tensors
    whose name `first` accepts, then the rest."""
    shards = [{k: v for k, v in tensors.items() if first(k)}, {k: v for k, v in tensors.items() if not first(k)}]
    for fn in os.listdir(dirpath):
        if fn.endswith(".safetensors") or fn.endswith(".safetensors.index.json"):
            os.remove(os.path.join(dirpath, fn))
    weight_map, total = {}, 0
    for i, shard in enumerate(shards):
        name = "model-%05d-of-%05d.safetensors" % (i + 1, len(shards))
        write_safetensors(os.path.join(dirpath, name), shard)
        for k, v in shard.items():
            weight_map[k] = name
            total += v.numel() * v.element_size()
    write_json(os.path.join(dirpath, "model.safetensors.index.json"),
               {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})


# ---------------------------------------------------------------- init

def _init_module(m):
    """torch's default initialisation for the layers ComfyUI builds empty
    (its operations skip reset_parameters because they always load)."""
    for sub in m.modules():
        if isinstance(sub, (nn.Linear, nn.Conv1d, nn.Conv3d, nn.ConvTranspose1d)):
            base = next(c for c in type(sub).__mro__ if c.__module__.startswith("torch.nn"))
            base.reset_parameters(sub)
        elif isinstance(sub, (nn.GroupNorm, nn.LayerNorm)):
            if sub.weight is not None:
                nn.init.ones_(sub.weight)
                nn.init.zeros_(sub.bias)
        elif type(sub).__name__ == "_RMSNorm" and sub.weight is not None:
            nn.init.ones_(sub.weight)
    named = dict(m.named_parameters())
    named.update(m.named_buffers())
    with torch.no_grad():
        for name, p in named.items():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("q_bias", "v_bias", "zero_k_bias", "mask_token"):
                p.zero_()
            elif leaf == "register_tokens":
                p.normal_(0.0, 0.02)
            elif leaf in ("scale1", "scale2"):  # the ViT's residual scales
                p.fill_(0.1)
    for name, p in m.named_parameters():
        if name.endswith("alpha") or name.endswith("beta"):
            with torch.no_grad():
                if p.dim() == 1:  # SnakeBeta stores log(alpha), log(beta): start at 1
                    p.zero_()
                else:  # Snake1d stores alpha itself
                    p.fill_(1.0)


def init_dit(device="cpu"):
    ref = R.load_ref("model.py")
    kw = {k: v for k, v in DIT_CONFIG.items() if not k.startswith("_")}
    m = ref.MiniMaxH3Model(**kw, dtype=torch.float32, device=device, operations=R.OPS)
    _init_module(m)
    n = DIT_CONFIG["rope_inv_freq_len"]
    m.rope.inv_freq.copy_(torch.tensor([10000.0 ** (-i / n) for i in range(n)]))
    # zero the final projections (adaLN-zero style): the first velocity is 0
    for lin in (m.final_layer.video_out, m.final_layer.audio_out):
        nn.init.zeros_(lin.weight)
        nn.init.zeros_(lin.bias)
    m.h3_config = dict(DIT_CONFIG)
    return m


def init_snapshot(template, snap=SNAPSHOT):
    """A fresh demo snapshot: the template's (tiny snapshot's) FL2VA files
    and Ref2VA/model_index.json, with the demo configs and freshly
    initialised DiT and VAEs."""
    if os.path.exists(snap):
        shutil.rmtree(snap)
    shutil.copytree(os.path.join(template, "FL2VA"), part_dir(snap))
    os.makedirs(os.path.join(snap, "Ref2VA"))
    for rel in ("model_index.json", os.path.join("Ref2VA", "model_index.json")):
        shutil.copy(os.path.join(template, rel), os.path.join(snap, rel))
    write_json(os.path.join(part_dir(snap), "transformer", "config.json"), DIT_CONFIG)
    torch.manual_seed(0)
    save_dit(init_dit(), snap)
    fresh_video_vae(snap)
    fresh_audio_vae(snap)


def fresh_video_vae(snap=SNAPSHOT, vit=None, keep_encoder=False, encoder=None):
    """The video VAE at demo.py's config (its ViT decoder's kwargs updated
    by vit) with new weights (train_vae.py video --fresh); the DiT has to
    learn the new latents afterwards. keep_encoder: only the decoder is
    new, on the snapshot's encoder and latent statistics (a probe's).
    encoder: source config keys of the convolutional encoder to change
    (ch, num_res_blocks: a probe's candidate widths)."""
    d = part_dir(snap)
    old = build_video_vae(d).state_dict() if keep_encoder else None
    src = read_json(os.path.join(d, "video_vae", "source", "config.json"))
    src["vit_decoder_kwargs"].update(VIDEO_VIT if vit is None else vit)
    if encoder:
        if keep_encoder:
            raise ValueError("a new encoder config cannot keep the snapshot's encoder")
        src.update(encoder)
    write_json(os.path.join(d, "video_vae", "source", "config.json"), src)
    torch.manual_seed(1)
    vae = R.build_video_vae(os.path.join(d, "video_vae"))
    _init_module(vae)
    if old is not None:
        vae.load_state_dict({k: v for k, v in old.items() if k.startswith(("encoder.", "quant_conv."))}, strict=False)
        save_video_vae(vae, snap)
        return
    save_video_vae(vae, snap, mean=[0.0] * 24, std=[1.0] * 24)
    record(snap, "video_vae", steps=0, examples=0, seconds=0.0)


def fresh_vae(which, snap=SNAPSHOT, encoder=None):
    """--fresh of train_vae.py and overfit_vae.py: the video VAE (its
    encoder's config changed by encoder) or the audio VAE, new weights."""
    if which == "video":
        fresh_video_vae(snap, encoder=encoder)
    else:
        fresh_audio_vae(snap)


def add_encoder_args(p):
    """The video encoder's candidate widths, for a fresh video VAE
    (train_vae.py and overfit_vae.py take the same two options)."""
    p.add_argument("--encoder-ch", type=int, default=0,
                   help="video, with --fresh: the encoder's base channels (a multiple of 32; the snapshot's: 64)")
    p.add_argument("--encoder-blocks", type=int, default=0,
                   help="video, with --fresh: residual blocks per encoder stage (the snapshot's: 1)")
    p.add_argument("--encoder-mult", default="",
                   help="video, with --fresh: the four stages' channel multipliers, e.g. 1,1,2,4 (the snapshot's: "
                        "1,1,1,2)")


def encoder_from_args(p, a):
    """The source config keys add_encoder_args' options change ({} when
    none is given); one sentence through p.error when they cannot apply."""
    enc = {k: v for k, v in (("ch", a.encoder_ch), ("num_res_blocks", a.encoder_blocks)) if v}
    if a.encoder_mult:
        try:
            enc["ch_mult"] = [int(m) for m in a.encoder_mult.split(",")]
        except ValueError:
            enc["ch_mult"] = []
        if len(enc["ch_mult"]) != 4 or min(enc["ch_mult"]) < 1:
            p.error(f"--encoder-mult {a.encoder_mult}: give four whole multipliers, one a stage, e.g. 1,1,2,4")
    if enc and not (a.fresh and a.which == "video"):
        p.error("--encoder-ch, --encoder-blocks and --encoder-mult make a new video encoder: give them with video --fresh")
    if enc.get("ch", 32) % 32:
        p.error(f"--encoder-ch {a.encoder_ch}: the encoder's group norms take 32 groups, so give a multiple of 32")
    return enc


def add_decoder_args(p):
    """A new, wider ViT decoder on the snapshot's encoder (overfit_vae.py;
    decoder_trial.sh calls new_decoder itself): the latents and what the
    DiT learnt of them stay."""
    p.add_argument("--decoder-heads", type=int, default=0,
                   help="video: first a new ViT decoder of this many heads of 64 on the snapshot's encoder")


def new_decoder(snap, heads):
    """add_decoder_args' option applied to the snapshot at snap."""
    fresh_video_vae(snap, vit=dict(VIDEO_VIT, heads=heads, dim_head=64), keep_encoder=True)


def fresh_audio_vae(snap=SNAPSHOT):
    """The audio VAE at demo.py's config with new weights (train_vae.py
    audio --fresh)."""
    d = part_dir(snap)
    meta = read_json(os.path.join(d, "audio_vae", "metadata.json"))
    meta["metadata"]["kwargs"].update(AUDIO_KWARGS)
    write_json(os.path.join(d, "audio_vae", "metadata.json"), meta)
    torch.manual_seed(2)
    audio_training_shims()
    avae = R.build_audio_vae(os.path.join(d, "audio_vae"))
    _init_module(avae)
    # Convolution biases start at zero: at torch's default (uniform, as
    # large as the weights) they swamp the waveform over the encoder's ~20
    # convolutions, and a fresh encoder's latents differed by 1 % from one
    # clip to another (0.7 % between a panned clip's channels); with zero
    # biases by 100 % (50 %). The one output for every clip that training
    # then gave was the loss's doing (tools/train/README.md, "The audio VAE
    # collapsed").
    with torch.no_grad():
        for m in avae.modules():
            if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)) and m.bias is not None:
                m.bias.zero_()
    save_audio_vae(avae, snap, mean=[0.0] * 32, std=[1.0] * 32)
    record(snap, "audio_vae", steps=0, examples=0, seconds=0.0)


# ---------------------------------------------------------------- DiT io

def _mod_scale_shift(h, shift, scale, segments):
    return torch.cat([h[a:b] * (1.0 + scale[row].to(h.dtype)) + shift[row].to(h.dtype) for a, b, row in segments])


def _mod_gate(x, gate, other, segments):
    return torch.cat([x[a:b] + other[a:b] * gate[row].to(x.dtype) for a, b, row in segments])


def _refiner_block_forward(self, x, transformer_options={}):
    x = self.attn(self.norm1(x), transformer_options=transformer_options) + x
    return self.mlp(self.norm2(x)) + x


def dit_training_shims():
    """The declared training shims of the DiT (module header), and
    ComfyUI's own training switch (its out-of-place norm + rope path)."""
    ref = R.load_ref("model.py")
    ref._mod_scale_shift = _mod_scale_shift
    ref._mod_gate = _mod_gate
    ref.RefinerBlock.forward = _refiner_block_forward
    sys.modules["comfy.model_management"].in_training = True
    import packed  # packed imports this module: imported here, its shims extend these
    packed.install(ref)
    return ref


def load_dit(snap=SNAPSHOT, device="cpu"):
    dit_training_shims()
    m = R.load_dit(os.path.join(part_dir(snap), "transformer"), device=device)
    return m.train().requires_grad_(True)


def save_dit(model, snap=SNAPSHOT):
    """Official names and dtypes: qkv back to the per-head interleave."""
    cfg = DIT_CONFIG
    heads, hd = cfg["num_attention_heads"], cfg["attention_head_dim"]
    out = {}
    for name, w in model.state_dict().items():
        w = w.detach().float().cpu()
        if name.endswith("qkv_proj.weight"):  # flat [q | k | v] -> per head [q k v]
            w = w.view(3, heads, hd, -1).transpose(0, 1).reshape(3 * heads * hd, -1)
        out[name] = w.contiguous() if name.startswith(DIT_F32) else w.to(torch.bfloat16).contiguous()
    for part in PARTITIONS:
        write_sharded(os.path.join(part_dir(snap, part), "transformer"), out, lambda k: not k.startswith("blocks."))


# ---------------------------------------------------------------- video VAE io

def build_video_vae(part, device="cpu"):
    """The ComfyUI video VAE at the snapshot's config, weights as stored."""
    return R.load_video_vae(os.path.join(part, "video_vae"), device=device)


def save_video_vae(vae, snap=SNAPSHOT, mean=None, std=None):
    sd = {k: v.detach().float().cpu().contiguous() for k, v in vae.state_dict().items()
          if k not in ("latents_mean", "latents_std")}
    for part in PARTITIONS:
        d = os.path.join(part_dir(snap, part), "video_vae")
        write_safetensors(os.path.join(d, "source", "model.safetensors"), sd)
        if mean is not None:
            cfg = read_json(os.path.join(d, "config.json"))
            cfg["latents_mean"], cfg["latents_std"] = [float(x) for x in mean], [float(x) for x in std]
            write_json(os.path.join(d, "config.json"), cfg)


# ---------------------------------------------------------------- audio VAE io

def _snake_out_of_place(x, alpha, beta):
    return x + torch.sin(alpha * x).pow(2) / (beta + 1e-9)


def _attn_projection_forward(self, x):
    x = self.proj(self.norm3(x)) + self.attn(self.norm1(x))
    return x + self.mlp(self.norm2(x))


def _geglu_forward(self, x):
    x = self.norm(x)
    return self.w2(self.act(self.w0(x)) * self.w1(x))


def audio_training_shims():
    """The declared training shims of the audio VAE (module header)."""
    ref = R.load_ref("audio_vae.py")
    ref.snake = _snake_out_of_place
    ref.AttnProjection.forward = _attn_projection_forward
    ref.GeGluMlp.forward = _geglu_forward


def build_audio_vae(part, device="cpu"):
    audio_training_shims()
    return R.load_audio_vae(os.path.join(part, "audio_vae"), device=device)


def save_audio_vae(avae, snap=SNAPSHOT, mean=None, std=None):
    """Weight-normed convolutions go back to (weight_g, weight_v) as the
    release stores them: v = W and g = |W| per output channel, which
    torch._weight_norm(v, g, 0) folds back to W exactly."""
    tmpl = R.read_safetensors(os.path.join(part_dir(snap), "audio_vae", "model.safetensors"))
    normed = {k[:-len("weight_g")] for k in tmpl if k.endswith(".weight_g")}
    sd = {}
    for k, v in avae.state_dict().items():
        if k in ("latents_mean", "latents_std"):
            continue
        v = v.detach().float().cpu()
        base = k[:-len("weight")] if k.endswith(".weight") else None
        if base is not None and base in normed:
            sd[base + "weight_v"] = v.contiguous()
            sd[base + "weight_g"] = torch.norm_except_dim(v, 2, 0).contiguous()
        else:
            sd[k] = v.contiguous()
    for part in PARTITIONS:
        d = os.path.join(part_dir(snap, part), "audio_vae")
        write_safetensors(os.path.join(d, "model.safetensors"), sd)
        if mean is not None:
            cfg = read_json(os.path.join(d, "config.json"))
            cfg["latents_mean"], cfg["latents_std"] = [float(x) for x in mean], [float(x) for x in std]
            write_json(os.path.join(d, "config.json"), cfg)


# ---------------------------------------------------------------- training record

def record(snap, stage, **facts):
    """The snapshot's h3studio.json keeps what each stage did (steps, time,
    final loss), so a resumed run continues its counts."""
    path = os.path.join(snap, "h3studio.json")
    doc = read_json(path) if os.path.exists(path) else {}
    doc.setdefault("training", {}).setdefault(stage, {}).update(facts)
    write_json(path, doc)


def trained(snap, stage):
    path = os.path.join(snap, "h3studio.json")
    if not os.path.exists(path):
        return {}
    return read_json(path).get("training", {}).get(stage, {})


def encoder_steps(snap, stage):
    """A VAE stage's steps that moved its latents: all of them less those of
    decoder-only runs (train_vae.py --decoder-only records them apart), so
    examples encoded before a decoder run stay the DiT's to reuse."""
    done = trained(snap, stage)
    return int(done.get("steps", 0)) - int(done.get("decoder_steps", 0))


def digest(snap):
    h = hashlib.sha256()
    for dp, _, fns in sorted(os.walk(snap)):
        for fn in sorted(fns):
            with open(os.path.join(dp, fn), "rb") as f:
                h.update(fn.encode() + f.read())
    return h.hexdigest()[:16]
