#!/usr/bin/env python3
"""PyTorch reference for `h3studio bench --vae`: ComfyUI's MiniMax-H3 video
VAE decode of a seeded latent, with random weights of the release config,
on the same GPU in the same run.

Reference: ComfyUI `comfy/ldm/minimax/vae.py` at the commit
tools/fixtures/vae/gen.py pins (bd34f338ac505ea79e43968753968a464060e609),
loaded from tools/fixtures/vae/_ref/ by gen.py's own load_ref, which checks
the copy's sha256 against gen.PINS; where that copy is absent (the code
index no longer serves that commit), the copy tools/fixtures/e2e/REFS.md
pins (2266077b597c71c4d3076e1a6abce151fb166704), through refmodels.load_ref
and its sha256 check; the JSON's "ref" says which. Either after
gen.install_shims (plain torch
layers, SDPA for ComfyUI's attention, torch's rms_norm, the pure-torch
split-half RoPE ComfyUI uses without its kernels, the CPU as the
intermediate device, as ComfyUI's default). Nothing of ComfyUI is copied
here.

The decode is ComfyUI's own: MiniMaxH3VideoVAE.decode, temporal chunks of
7 latents (decode_temporal) and its own spatial tiling (tiled_decode:
split_tiles with the release's 256-px tiles and 64-px minimum overlap,
blended in pixel space, finished chunks moved to the CPU); --tile sets the
tile to the one ggml ran with (bench --vae's tile_px) when the planner
chose another, --overlap the minimum overlap. Weights are drawn by name as gen.py's init_video draws them
(on the CPU, then moved), in --dtype (f32: the official checkpoint's; f16:
ComfyUI's repack); the latent is unit normal in the same dtype, of the
shape whose decode gives the geometry's frames (decode_output_shape).

Deviations, declared: the encoder and quant_conv are dropped after
construction (decode never calls them), so the peak counts the decoder's
weights only; _decode_pixels is wrapped to count decoder calls; TF32 stays
off (PyTorch's default) unless --tf32.

Prints one JSON object: per geometry the decode's seconds (CUDA events,
one decode after a one-tile warm-up), decoder calls, frames, and
torch.cuda.max_memory_allocated (weights included) beside the weights'
bytes. --tiny builds gen.py's tiny decoder (2 layers of 2x32, 32-px tiles)
and may run on the CPU: a smoke test with Debian's torch 1.13.

usage: vae_ref.py --geometries 1344x768x124 [--dtype f32|f16] [--tile 256] [--overlap 64] [--tf32] [--tiny] [--device cpu]
"""
import argparse
import importlib.util
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "fixtures", "vae", "gen.py")


def load_gen():
    spec = importlib.util.spec_from_file_location("vae_fixture_gen", GEN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_vae_ref(gen):
    """The pinned vae.py: the VAE fixtures' copy, else the e2e fixtures'."""
    if os.path.exists(os.path.join(gen.REF, "vae.py")):
        return gen.load_ref("vae"), "ComfyUI bd34f338 (tools/fixtures/vae/_ref)"
    sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "e2e"))
    import refmodels
    return refmodels.load_ref("vae.py"), "ComfyUI 2266077b (tools/fixtures/e2e/_ref)"


def build(gen, ref, tiny, tile, overlap):
    """MiniMaxH3VideoVAE with ComfyUI's release defaults (or gen.py's tiny decoder)."""
    if tiny:
        vit = gen.TINY_VIDEO_SOURCE["vit_decoder_kwargs"]
        vae = ref.MiniMaxH3VideoVAE(tile_size=tile or gen.TINY_TILE, tile_overlap_min=overlap or gen.TINY_TILE_OVERLAP,
                                    tiling=True)
        vae.decoder = ref.ViT3DDecoder(patch_size=vae.vae_ratio, patch_size_t=vae.vae_ratio_t, in_channels=24, out_channels=3,
                                       num_layers=vit["num_layers"], heads=vit["heads"], dim_head=vit["dim_head"],
                                       rope_theta=vit["rope_theta"], rope_dim_ratio=vit["rope_dim_ratio"])
    else:
        vae = ref.MiniMaxH3VideoVAE(tile_size=tile or 256, tile_overlap_min=overlap or 64, tiling=True)
    vae.encoder, vae.quant_conv = None, None
    weights = gen.init_video(vae.state_dict(), torch.Generator().manual_seed(20261201))
    missing, unexpected = vae.load_state_dict(weights, strict=False)
    assert set(missing) <= {"latents_mean", "latents_std"} and not unexpected, (missing, unexpected)
    return vae.eval()


def latent_steps(vae, frames):
    """The latent length whose decode gives frames (ComfyUI's own frame plan)."""
    for t in range(1, frames + 1):
        if vae.decode_output_shape((1, 24, t, 1, 1))[2] == frames:
            return t
    sys.exit(f"vae_ref.py: no latent length decodes to {frames} frames")


def timed(dev, fn):
    if dev.type != "cuda":
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    from gputime import timed as cuda_timed
    return cuda_timed(fn, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--geometries", required=True, help="comma-separated WIDTHxHEIGHTxFRAMES")
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16"])
    ap.add_argument("--tile", type=int, default=0, help="spatial tile in pixels (0: the config's)")
    ap.add_argument("--overlap", type=int, default=0, help="minimum tile overlap in pixels (0: the config's)")
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    dev, dt = torch.device(args.device), {"f32": torch.float32, "f16": torch.float16}[args.dtype]
    gen = load_gen()
    gen.install_shims()
    ref, ref_name = load_vae_ref(gen)
    vae = build(gen, ref, args.tiny, args.tile, args.overlap).to(device=dev, dtype=dt)
    calls = [0]
    decode_pixels = vae._decode_pixels

    def counted(z):
        calls[0] += 1
        return decode_pixels(z)

    vae._decode_pixels = counted
    cuda = dev.type == "cuda"
    weight_bytes = sum(p.numel() * p.element_size() for p in vae.parameters())
    res = {"device": torch.cuda.get_device_name(0) if cuda else str(dev), "torch": torch.__version__,
           "ref": ref_name, "dtype": args.dtype, "tf32": args.tf32, "tile": vae.tile_size, "overlap": vae.tile_overlap_min, "weight_bytes": weight_bytes, "geometries": []}
    cell = vae.tile_size // vae.vae_ratio
    vae.decode(torch.randn(1, 24, 7, cell, cell, device=dev, dtype=dt))  # warm-up: one call
    for g in args.geometries.split(","):
        w, h, f = (int(v) for v in g.split("x"))
        t = latent_steps(vae, f)
        z = torch.randn(1, 24, t, h // vae.vae_ratio, w // vae.vae_ratio, generator=torch.Generator().manual_seed(5)).to(dev, dt)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        calls[0] = 0
        out = []
        s = timed(dev, lambda: out.append(vae.decode(z)))
        r = {"geometry": g, "latent": [t, z.shape[3], z.shape[4]], "frames": out[0].shape[2], "calls": calls[0],
             "seconds": s, "peak_bytes": torch.cuda.max_memory_allocated() if cuda else None}
        res["geometries"].append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
        del out
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
