#!/usr/bin/env python3
"""PyTorch reference for `h3studio bench --qwen`: the Qwen3-VL-32B language
layers MiniMax-H3 runs (50 of 64), prefilling a text prompt, in bf16, on the
same GPU in the same run.

Each layer is engine/textenc's TextLayer: RMSNorm, q/k/v projections (64
query and 8 key/value heads of 128), per-head q/k RMSNorm, rotary
embedding (a text-only prompt has equal t/h/w positions, where Qwen3-VL's
interleaved mRoPE is plain RoPE), causal SDPA with the K/V heads repeated
as transformers' SDPA path does, the output projection and a residual,
then RMSNorm and the SwiGLU MLP (25600) with a residual. Every layer has
its own weights (48.8 GB in bf16).

Prints one JSON object: per prompt length the prefill's seconds (CUDA
events; the median of 3 below 16k tokens, else one run), TFLOP/s and the
peak of allocated device memory.

usage: qwen_ref.py --tokens 10231,100000 [--layers 50]
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F

from gputime import timed

HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM = 5120, 25600, 64, 8, 128
THETA, EPS = 5_000_000.0, 1e-6


def prefill_flops(tokens, layers):
    """Counted as engine/textenc PrefillBench.Flops: causal attention is half."""
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    linear = 2 * tokens * (HIDDEN * q * 2 + HIDDEN * kv * 2 + 3 * HIDDEN * INTER)
    return layers * (linear + 2 * tokens * tokens * q)


def make_layer(dev, dt):
    def mat(out_f, in_f):
        return (torch.rand(out_f, in_f, device=dev, dtype=dt) * 2 - 1) * (3.0 / in_f) ** 0.5

    def gain(n):
        return 1 + (torch.rand(n, device=dev, dtype=dt) * 2 - 1) * 0.1 * 3 ** 0.5

    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    return {"q": mat(q, HIDDEN), "k": mat(kv, HIDDEN), "v": mat(kv, HIDDEN), "o": mat(HIDDEN, q),
            "gate": mat(INTER, HIDDEN), "up": mat(INTER, HIDDEN), "down": mat(HIDDEN, INTER),
            "in": gain(HIDDEN), "post": gain(HIDDEN), "qn": gain(HEAD_DIM), "kn": gain(HEAD_DIM)}


def rms(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def rotary(tokens, dev, dt):
    inv = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2, device=dev, dtype=torch.float32) / HEAD_DIM)
    ang = torch.arange(tokens, device=dev, dtype=torch.float32)[:, None] * inv[None]
    ang = torch.cat([ang, ang], dim=-1)[:, None, :]  # [S, 1, hd]
    return ang.cos().to(dt), ang.sin().to(dt)


def rope(t, cos, sin):
    a, b = t[..., :HEAD_DIM // 2], t[..., HEAD_DIM // 2:]
    return t * cos + torch.cat([-b, a], dim=-1) * sin


def layer(w, x, cos, sin):
    s = x.shape[0]
    h = rms(x, w["in"])
    q = rope(rms((h @ w["q"].t()).view(s, HEADS, HEAD_DIM), w["qn"]), cos, sin)
    k = rope(rms((h @ w["k"].t()).view(s, KV_HEADS, HEAD_DIM), w["kn"]), cos, sin)
    v = (h @ w["v"].t()).view(s, KV_HEADS, HEAD_DIM)
    rep = HEADS // KV_HEADS
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
                                       is_causal=True)
    x = x + o[0].transpose(0, 1).reshape(s, HEADS * HEAD_DIM) @ w["o"].t()
    h = rms(x, w["post"])
    return x + (F.silu(h @ w["gate"].t()) * (h @ w["up"].t())) @ w["down"].t()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", required=True, help="comma-separated prompt lengths")
    ap.add_argument("--layers", type=int, default=50)
    args = ap.parse_args()
    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(2)
    layers = [make_layer(dev, dt) for _ in range(args.layers)]
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "layers": args.layers,
           "weight_bytes": sum(t.numel() * t.element_size() for l in layers for t in l.values()), "lengths": []}

    def prefill(x, cos, sin):
        for w in layers:
            x = layer(w, x, cos, sin)
        return x

    with torch.no_grad():
        cos, sin = rotary(256, dev, dt)
        prefill(torch.randn(256, HIDDEN, device=dev, dtype=dt), cos, sin)  # warm-up
        for n in (int(t) for t in args.tokens.split(",")):
            x = torch.randn(n, HIDDEN, device=dev, dtype=dt)
            cos, sin = rotary(n, dev, dt)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            s = timed(lambda: prefill(x, cos, sin), 3 if n < 16384 else 1)
            res["lengths"].append({"tokens": n, "seconds": s, "tflops": prefill_flops(n, args.layers) / s / 1e12,
                                   "peak_bytes": torch.cuda.max_memory_allocated()})
            print(json.dumps(res["lengths"][-1]), file=sys.stderr, flush=True)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
