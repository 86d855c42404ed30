"""The demo's Qwen3-VL language layers as a module the DiT's training can
move (train_dit.py --text-lr).

The demo keeps the tiny snapshot's text encoder, untrained, and the DiT
reads the state at its final norm's input after its two layers. Those
states name the second shape's colour at that shape's word in 88 % of
two-shape prompts (README: binding probe), and the renders paint the
second shape in the first one's colour. Training the layers with the DiT
lets the loss put that colour where the DiT reads it.

The vision tower stays frozen: its output for a picture is taken once,
from Hugging Face's Qwen3-VL while the example is made (inputs.Conditioner
with text=True), together with the positions HF's rope index gives every
token. This module redoes only what follows it, from the official tensors
(embed_tokens and the decoder layers; the final norm and lm_head are not
read by the DiT and stay as they are):

  x = embed(ids), the picture's rows in place of its image tokens
  for each layer i: x = layer(x); after layer i < len(deepstack), the
  picture's rows gain deepstack[i]
  states = x

A layer is Qwen3's: RMSNorm, q/k/v projections, q and k RMSNorm per head,
interleaved mRoPE (rotary pair j turns with the position of axis j % 3
while j is inside that axis' section, else with the temporal one; the
engine's float64 reference and HF agree on it), causal grouped-query
attention, o projection, RMSNorm, SiLU-gated MLP. It is checked against HF
three ways: test_text_encoder.py against a committed HF fixture (text
only, on this machine), the same test on the GPU machine against HF itself
with pictures, and inputs.Conditioner against HF on every example it makes
with text=True.
"""

import json
import os

import torch
import torch.nn.functional as F

import demo

PREFIX = "model.language_model."
# the tensors a training run moves; the rest of the text encoder is kept
LAYER_TENSORS = ("input_layernorm.weight", "post_attention_layernorm.weight", "self_attn.q_proj.weight",
                 "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                 "self_attn.q_norm.weight", "self_attn.k_norm.weight", "mlp.gate_proj.weight",
                 "mlp.up_proj.weight", "mlp.down_proj.weight")


def _rms(x, w, eps):
    x32 = x.float()
    return x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w


def _rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class TextLayers(torch.nn.Module):
    """Qwen3-VL's embedding and decoder layers, named as the release names
    them (less PREFIX, dots as double underscores in the parameters)."""

    def __init__(self, part):
        super().__init__()
        enc = os.path.join(part, "text_encoder")
        with open(os.path.join(enc, "config.json"), encoding="utf-8") as f:
            tc = json.load(f)["text_config"]
        self.heads, self.kv, self.hd = tc["num_attention_heads"], tc["num_key_value_heads"], tc["head_dim"]
        self.eps, self.layers = float(tc["rms_norm_eps"]), int(tc["num_hidden_layers"])
        inv = float(tc["rope_theta"]) ** (-torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd)
        self.register_buffer("inv_freq", inv.float(), persistent=False)
        # each rotary pair's axis (0 t, 1 h, 2 w): the interleave above
        sec, axis = tc["rope_scaling"]["mrope_section"], torch.zeros(self.hd // 2, dtype=torch.long)
        for j in range(self.hd // 2):
            if j % 3 == 1 and j < 3 * sec[1]:
                axis[j] = 1
            elif j % 3 == 2 and j < 3 * sec[2]:
                axis[j] = 2
        self.register_buffer("axis", axis, persistent=False)
        sd = demo.R.read_dir_safetensors(enc)
        self.params = torch.nn.ParameterDict({
            self.key(name): torch.nn.Parameter(sd[PREFIX + name].float().clone()) for name in self.names()})

    def names(self):
        """The trained tensors' release names, less PREFIX."""
        return ["embed_tokens.weight"] + ["layers.%d.%s" % (i, t) for i in range(self.layers) for t in LAYER_TENSORS]

    @staticmethod
    def key(name):
        return name.replace(".", "__")

    def w(self, name):
        return self.params[self.key(name)]

    def rope(self, pos):
        """cos, sin [L, head_dim] of positions [3, L] (t, h, w)."""
        p = pos.to(self.axis.device).float()[self.axis]  # [half, L]: each pair's own axis
        ang = (p * self.inv_freq[:, None]).t()
        ang = torch.cat((ang, ang), dim=-1)
        return ang.cos(), ang.sin()

    def layer(self, i, x, cos, sin, mask):
        p = "layers.%d." % i
        b, n, _ = x.shape
        h = _rms(x, self.w(p + "input_layernorm.weight"), self.eps)
        q = (h @ self.w(p + "self_attn.q_proj.weight").t()).view(b, n, self.heads, self.hd)
        k = (h @ self.w(p + "self_attn.k_proj.weight").t()).view(b, n, self.kv, self.hd)
        v = (h @ self.w(p + "self_attn.v_proj.weight").t()).view(b, n, self.kv, self.hd)
        q = _rms(q, self.w(p + "self_attn.q_norm.weight"), self.eps)
        k = _rms(k, self.w(p + "self_attn.k_norm.weight"), self.eps)
        c, s = cos[:, :, None], sin[:, :, None]
        q, k = q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s
        rep = self.heads // self.kv
        q, k, v = q.transpose(1, 2), k.repeat_interleave(rep, 2).transpose(1, 2), v.repeat_interleave(rep, 2).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) * self.hd ** -0.5
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        o = (att @ v).transpose(1, 2).reshape(b, n, self.heads * self.hd)
        x = x + o @ self.w(p + "self_attn.o_proj.weight").t()
        h = _rms(x, self.w(p + "post_attention_layernorm.weight"), self.eps)
        g = F.silu(h @ self.w(p + "mlp.gate_proj.weight").t()) * (h @ self.w(p + "mlp.up_proj.weight").t())
        return x + g @ self.w(p + "mlp.down_proj.weight").t()

    def forward(self, entries):
        """The states [L, D] of each entry (inputs.Conditioner's "text":
        ids [L], pos [3, L], vis [L] bool, vis_embeds [n, D], deep [k, n, D]),
        the entries right-padded into one batch: causal attention keeps each
        entry's states its own."""
        dev = self.inv_freq.device
        n = max(int(e["ids"].shape[0]) for e in entries)
        table = self.w("embed_tokens.weight")
        xs, coss, sins, vis = [], [], [], []
        for e in entries:
            ids, m = e["ids"].to(dev).long(), e["vis"].to(dev)
            x = table[ids]
            if bool(m.any()):
                x = x.masked_scatter(m[:, None], e["vis_embeds"].to(dev).float())
            pad = n - ids.shape[0]
            cos, sin = self.rope(e["pos"].to(dev))
            xs.append(F.pad(x, (0, 0, 0, pad)))
            coss.append(F.pad(cos, (0, 0, 0, pad)))
            sins.append(F.pad(sin, (0, 0, 0, pad)))
            vis.append(F.pad(m, (0, pad)))
        x, cos, sin, vis = torch.stack(xs), torch.stack(coss), torch.stack(sins), torch.stack(vis)
        mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
        for i in range(self.layers):
            x = self.layer(i, x, cos, sin, mask)
            add = [e["deep"][i].to(dev).float() if i < e["deep"].shape[0] else None for e in entries]
            if any(a is not None and a.numel() for a in add):
                x = x.clone()
                for j, a in enumerate(add):
                    if a is not None and a.numel():
                        x[j, vis[j]] = x[j, vis[j]] + a
        return [x[j, :e["ids"].shape[0]] for j, e in enumerate(entries)]

    def release_tensors(self):
        """The trained tensors under their release names, in the release's
        dtype (bfloat16), for the snapshot."""
        return {PREFIX + name: self.w(name).detach().cpu().to(torch.bfloat16).contiguous() for name in self.names()}


def save(model, snap):
    """The trained tensors into the snapshot's text encoder, every other
    tensor and the shards' split kept as they were."""
    for part in demo.PARTITIONS:
        enc = os.path.join(demo.part_dir(snap, part), "text_encoder")
        if not os.path.isdir(enc):
            continue
        index = demo.read_json(os.path.join(enc, "model.safetensors.index.json"))["weight_map"]
        first = sorted(set(index.values()))[0]
        sd = dict(demo.R.read_dir_safetensors(enc))
        sd.update(model.release_tensors())
        demo.write_sharded(enc, sd, lambda k: index[k] == first)


def empty_entry(ids, dim):
    """A text-only entry: positions 0.. on every axis, no picture."""
    n = int(ids.shape[0])
    return {"ids": ids.cpu().to(torch.int32), "pos": torch.arange(n).expand(3, n).to(torch.int32).clone(),
            "vis": torch.zeros(n, dtype=torch.bool), "vis_embeds": torch.zeros(0, dim),
            "deep": torch.zeros(0, 0, dim)}
