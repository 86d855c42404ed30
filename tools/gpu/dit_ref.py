#!/usr/bin/env python3
"""PyTorch reference for `h3studio bench --dit`: the MiniMax-H3 DiT block
stack at the same row counts, in bf16, on the same GPU, in the same run.

Each block is the model's core as engine/dit/modules.go builds it: RMSNorm
and AdaLN modulation, fused QKV, per-head q/k RMSNorm, split-half RoPE on
the first 96 dims of each head, SDPA (flash attention) over all rows, out
projection and gated residual, then RMSNorm, modulation, SwiGLU MLP and a
gated residual. AdaLN tables are precomputed, as every engine does. Every
block has its own weights (50 release blocks are 38.5 GB in bf16), so the
forward streams each block's weights from device memory as ggml's does.

Prints one JSON object: the bf16 GEMM rate at 8192^3 and, per row count,
the forward's seconds (CUDA events, median), TFLOP/s and a per-block
breakdown (the four GEMMs, attention, the rest) timed op by op.

usage: dit_ref.py --rows 1966,7171 [--blocks 50]
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F

from gputime import timed

HIDDEN, HEADS, HEAD_DIM, FFN = 5376, 56, 128, 14336
INNER = HEADS * HEAD_DIM
ROPE_HALF = 48  # 3 axes x 16 frequencies: RoPE covers 2*48 = 96 dims of a head
EPS = 1e-5


def block_flops(rows):
    """Multiply-adds x2 of one block, counted as engine/dit BlockBench.Flops."""
    linear = 2 * rows * (HIDDEN * 3 * INNER + INNER * HIDDEN + HIDDEN * 2 * FFN + FFN * HIDDEN)
    return linear + 4 * rows * rows * INNER


def make_block(dev, dt):
    # The reference init's scale: uniform with std 1/sqrt(fan_in).
    def mat(out_f, in_f):
        a = (3.0 / in_f) ** 0.5
        return (torch.rand(out_f, in_f, device=dev, dtype=dt) * 2 - 1) * a

    def gain(n):
        return 1 + (torch.rand(n, device=dev, dtype=dt) * 2 - 1) * 0.2 * 3 ** 0.5

    return {"qkv": mat(3 * INNER, HIDDEN), "out": mat(HIDDEN, INNER), "fc1": mat(2 * FFN, HIDDEN),
            "fc2": mat(HIDDEN, FFN), "n1": gain(HIDDEN), "n2": gain(HIDDEN), "qn": gain(HEAD_DIM),
            "kn": gain(HEAD_DIM)}


def rms(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def rope(t, cos, sin):
    r, rest = t[..., :2 * ROPE_HALF], t[..., 2 * ROPE_HALF:]
    a, b = r[..., :ROPE_HALF], r[..., ROPE_HALF:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin, rest], dim=-1)


def attention(w, h, cos, sin):
    n = h.shape[0]
    # Flat [q | k | v] rows, PyTorch's fastest split; the release interleaves
    # per head, which changes no FLOP and only strides in ggml.
    q, k, v = (h @ w["qkv"].t()).split(INNER, dim=-1)
    q, k, v = q.view(n, HEADS, HEAD_DIM), k.view(n, HEADS, HEAD_DIM), v.view(n, HEADS, HEAD_DIM)
    q, k = rope(rms(q, w["qn"]), cos, sin), rope(rms(k, w["kn"]), cos, sin)
    o = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None])
    return o[0].transpose(0, 1).reshape(n, INNER) @ w["out"].t()


def block(w, x, mod, cos, sin):
    x = x + mod[2] * attention(w, rms(x, w["n1"]) * mod[1] + mod[0], cos, sin)
    g, u = ((rms(x, w["n2"]) * mod[4] + mod[3]) @ w["fc1"].t()).split(FFN, dim=-1)
    return x + mod[5] * ((F.silu(g) * u) @ w["fc2"].t())


def breakdown(w, rows, dev, dt):
    """One block's ops alone at rows rows: the four GEMMs, SDPA, the rest."""
    x = torch.randn(rows, HIDDEN, device=dev, dtype=dt)
    mod = [torch.randn(HIDDEN, device=dev, dtype=dt) * 0.5 for _ in range(6)]
    ang = torch.rand(rows, 1, ROPE_HALF, device=dev) * 6.28
    cos, sin = ang.cos().to(dt), ang.sin().to(dt)
    xi, xf = torch.randn(rows, INNER, device=dev, dtype=dt), torch.randn(rows, FFN, device=dev, dtype=dt)
    q = torch.randn(1, HEADS, rows, HEAD_DIM, device=dev, dtype=dt)
    with torch.no_grad():
        gemm = sum(timed(f, 5, 1) for f in (lambda: x @ w["qkv"].t(), lambda: xi @ w["out"].t(),
                                         lambda: x @ w["fc1"].t(), lambda: xf @ w["fc2"].t()))
        attn = timed(lambda: F.scaled_dot_product_attention(q, q, q), 5, 1)
        whole = timed(lambda: block(w, x, mod, cos, sin), 5, 1)
    return {"block_s": whole, "gemm_s": gemm, "attention_s": attn, "rest_s": max(whole - gemm - attn, 0.0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True, help="comma-separated row counts")
    ap.add_argument("--blocks", type=int, default=50)
    args = ap.parse_args()
    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(1)
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "blocks": args.blocks,
           "sdpa_backend": "flash (torch default for bf16, no mask)"}
    a = torch.randn(8192, 8192, device=dev, dtype=dt)
    res["gemm_bf16_8192_tflops"] = 2 * 8192 ** 3 / timed(lambda: a @ a, 10, 3) / 1e12
    del a
    blocks = [make_block(dev, dt) for _ in range(args.blocks)]
    res["weight_bytes"] = sum(t.numel() * t.element_size() for b in blocks for t in b.values())
    res["shapes"] = []
    for rows in (int(r) for r in args.rows.split(",")):
        x = torch.randn(rows, HIDDEN, device=dev, dtype=dt)
        mod = [torch.randn(HIDDEN, device=dev, dtype=dt) * 0.5 for _ in range(6)]
        ang = torch.rand(rows, 1, ROPE_HALF, device=dev) * 6.28
        cos, sin = ang.cos().to(dt), ang.sin().to(dt)

        def forward():
            y = x
            for w in blocks:
                y = block(w, y, mod, cos, sin)
            return y

        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad():
            s = timed(forward, 1 if rows > 16384 else 3, 1)
        fl = args.blocks * block_flops(rows)
        res["shapes"].append({"rows": rows, "seconds": s, "tflops": fl / s / 1e12,
                              "peak_bytes": torch.cuda.max_memory_allocated(),
                              "breakdown": breakdown(blocks[0], rows, dev, dt)})
        print(json.dumps(res["shapes"][-1]), file=sys.stderr, flush=True)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
