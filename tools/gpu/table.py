#!/usr/bin/env python3
"""Tables for tools/gpu/run.sh from `h3studio bench --json` lines and
dit_ref.py's JSON, both measured in the same run on the same GPU.

  table.py rows GGML_JSONL   the DiT row counts, comma-separated
  table.py table OUT         markdown tables from OUT/ggml.jsonl,
                             OUT/torch.json and OUT/plan-*.json
  table.py qwen OUT          the prefill table from OUT/qwen.jsonl and
                             OUT/qwen_torch.json
  table.py vaetile JSONL G   the tile bench --vae decoded geometry G with
  table.py vae OUT           the decode table from OUT/vae.jsonl and
                             OUT/vae_torch-*.json
  table.py render OUT        the whole-render table from OUT/render.jsonl

A ratio is ggml's seconds over PyTorch's for the same forward (same rows,
blocks and FLOP count): 1.00x is parity, above it ggml is slower.
"""
import glob
import json
import os
import sys


def ggml_lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def gb(n):
    return f"{n / 2**30:.1f}" if n else "-"


def rows_cmd(path):
    seen = []
    for r in ggml_lines(path):
        if r.get("rows") and r["rows"] not in seen:
            seen.append(r["rows"])
    print(",".join(str(r) for r in seen))


def table_cmd(out):
    g = ggml_lines(os.path.join(out, "ggml.jsonl"))
    with open(os.path.join(out, "torch.json")) as f:
        t = json.load(f)
    by_rows = {s["rows"]: s for s in t["shapes"]}
    print(f"GPU: {t['device']}; ggml backend {g[0]['backend']}; PyTorch {t['torch']}; "
          f"{t['blocks']}-block DiT stack, AdaLN precomputed\n")
    print("| kernel | ggml | PyTorch |")
    print("|---|---:|---:|")
    for r in g:
        if not r.get("rows") and "bf16" in r["name"] and r["name"].startswith("matmul"):
            print(f"| {r['name']} (ggml, f32 activations) / 8192^3 bf16 (PyTorch) "
                  f"| {r['gflops'] / 1000:.0f} TFLOP/s | {t['gemm_bf16_8192_tflops']:.0f} TFLOP/s |")
        elif not r.get("rows"):
            print(f"| {r['name']} | {r['gflops'] / 1000:.1f} TFLOP/s | |")
    print()
    print("| forward | rows | ggml s | ggml TFLOP/s | PyTorch bf16 s | PyTorch TFLOP/s | ratio | "
          "weights GB | ggml compute GB | device in use GB | PyTorch peak GB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in g:
        if not r.get("rows"):
            continue
        ref = by_rows.get(r["rows"])
        rs, rt, ratio, peak = "-", "-", "-", "-"
        if ref:
            rs, rt = f"{ref['seconds']:.3f}", f"{ref['tflops']:.0f}"
            ratio, peak = f"{r['seconds'] / ref['seconds']:.2f}x", gb(ref["peak_bytes"])
        print(f"| {r['name'].replace('dit ', '')} | {r['rows']:,} | {r['seconds']:.3f} | {r['gflops'] / 1000:.0f} | "
              f"{rs} | {rt} | {ratio} | {gb(r.get('weight_bytes'))} | {gb(r.get('compute_bytes'))} | "
              f"{gb(r.get('device_used_bytes'))} | {peak} |")
    print()
    print("One block, ms: the forward's time per block, and its ops timed alone on the same backend "
          "(ggml: the four GEMMs with the stack's weight type, flash attention with f16 K/V; "
          "PyTorch: bf16 GEMMs and SDPA). The rest is the block less its GEMMs and attention.\n")
    print("| rows | engine | block | 4 GEMMs | attention | the rest | block / (GEMMs + attention) | splits |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in g:
        if not r.get("rows"):
            continue
        blk = r["seconds"] / r["blocks"]
        ops = r["block_gemm_seconds"] + r["block_attention_seconds"]
        print(f"| {r['rows']:,} | ggml {r['dtype']} | {blk * 1e3:.2f} | {r['block_gemm_seconds'] * 1e3:.2f} | "
              f"{r['block_attention_seconds'] * 1e3:.2f} | {(blk - ops) * 1e3:.2f} | {blk / ops:.2f} | {r['splits']} |")
    for s in t["shapes"]:
        b = s["breakdown"]
        ops = b["gemm_s"] + b["attention_s"]
        print(f"| {s['rows']:,} | PyTorch bf16 | {b['block_s'] * 1e3:.2f} | {b['gemm_s'] * 1e3:.2f} | "
              f"{b['attention_s'] * 1e3:.2f} | {b['rest_s'] * 1e3:.2f} | {b['block_s'] / ops:.2f} | |")


def plan_table(out):
    """The planner's denoise phase against the ggml stack's buffers."""
    g = [r for r in ggml_lines(os.path.join(out, "ggml.jsonl")) if r.get("rows")]
    plans = sorted(glob.glob(os.path.join(out, "plan-*.json")))
    if not plans or not g:
        return
    print("\nPlanner (`plan --machine auto -d official-bf16`) against the measured bf16 stack; "
          "scratch is compared per DiT row, since the plan counts its own prompt's rows.\n")
    print("| geometry | machine | planned rows | planned denoise scratch, KB/row | measured compute, KB/row | "
          "measured / planned | planned denoise weights GB | measured stack weights GB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for path in plans:
        with open(path) as f:
            p = json.load(f)
        geom = os.path.basename(path)[5:-5]
        dn = next(ph for ph in p["memory"]["phases"] if ph["name"] == "denoise")
        m = next((r for r in g if geom in r["name"] and r["dtype"] == "bf16"), None)
        if not m:
            continue
        planned = dn["scratch_bytes"] / p["dit_rows"]["total"]
        measured = m["compute_bytes"] / m["rows"]
        print(f"| {geom} | {p['machine']} | {p['dit_rows']['total']:,} | {planned / 1e3:.1f} | {measured / 1e3:.1f} | "
              f"{measured / planned:.2f} | {gb(dn['weights_bytes'])} | {gb(m['weight_bytes'])} |")


def qwen_table(out):
    g = [r for r in ggml_lines(os.path.join(out, "qwen.jsonl")) if r["name"].startswith("qwen")]
    with open(os.path.join(out, "qwen_torch.json")) as f:
        t = json.load(f)
    ref = {r["tokens"]: r for r in t["lengths"]}
    print(f"\nQwen3-VL language layers ({t['layers']}), prefill of a text prompt; ggml through engine/textenc's "
          "production layer loop (row groups of 4096; rows and one layer's K/V stay on the device between graphs). "
          "Work = the device's high-water mark during the prefill minus what it held with the weights placed; "
          "planned = the planner's QwenPrefillBytes for the same length.\n")
    print("| tokens | ggml s | ggml TFLOP/s | layer GEMMs alone s | PyTorch bf16 s | PyTorch TFLOP/s | ratio | "
          "ggml work GB | planned GB | planned/measured | ggml host peak GB | PyTorch peak GB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in g:
        p = ref.get(r["rows"])
        ps, pt, ratio, peak = "-", "-", "-", "-"
        if p:
            ps, pt, ratio, peak = f"{p['seconds']:.2f}", f"{p['tflops']:.0f}", f"{r['seconds'] / p['seconds']:.2f}x", gb(p["peak_bytes"])
        work, planned = r.get("compute_bytes", 0), r.get("planned_work_bytes", 0)
        pm = f"{planned / work:.2f}" if work else "-"
        gemm = r.get("block_gemm_seconds", 0) * r.get("blocks", 0)
        print(f"| {r['rows']:,} | {r['seconds']:.2f} | {r['gflops'] / 1000:.0f} | {gemm:.2f} | {ps} | {pt} | {ratio} | "
              f"{gb(work)} | {gb(planned)} | {pm} | {gb(r.get('host_peak_bytes'))} | {peak} |")
    if len(g) >= 2:
        a, b = g[0], g[-1]
        dn = (b["rows"] - a["rows"]) / 1000
        line = f"\nMemory per 1k tokens between {a['rows']:,} and {b['rows']:,}: ggml work " \
               f"{(b.get('compute_bytes', 0) - a.get('compute_bytes', 0)) / dn / 2**20:.0f} MiB, " \
               f"ggml host peak {(b.get('host_peak_bytes', 0) - a.get('host_peak_bytes', 0)) / dn / 2**20:.0f} MiB"
        pa, pb = ref.get(a["rows"]), ref.get(b["rows"])
        if pa and pb:
            line += f", PyTorch peak {(pb['peak_bytes'] - pa['peak_bytes']) / dn / 2**20:.0f} MiB"
        print(line + ".")


def gb2(n):
    return f"{n / 2**30:.2f}" if n else "-"


def vae_lines(path):
    return [r for r in ggml_lines(path) if r["name"].startswith("vae decode")]


def vaetile_cmd(path, geom):
    r = next((r for r in vae_lines(path) if r["name"].startswith(f"vae decode {geom},")), None)
    if not r:
        sys.exit(f"table.py: {path} has no decode of {geom}")
    print(r["tile_px"])


def vae_table(out):
    g = vae_lines(os.path.join(out, "vae.jsonl"))
    ref = {}
    for path in glob.glob(os.path.join(out, "vae_torch-*.json")):
        with open(path) as f:
            t = json.load(f)
        for s in t["geometries"]:
            ref[s["geometry"]] = dict(s, weight_bytes=t["weight_bytes"], torch=t["torch"], tf32=t["tf32"])
    print("\nVideo VAE decode of a seeded latent; ggml through engine/vae's production decode (7-latent chunks, "
          "the planner's tile, blended on the host), PyTorch through ComfyUI's MiniMaxH3VideoVAE.decode (its own "
          "tiled_decode, the same tile). ggml graphs = the decoder graphs' compute and read-back; the rest of ggml's "
          "time is host work. Work = the device's high-water mark during the decode minus what it held "
          "with the weights placed; call buffers = the compute buffers ggml's scheduler reserves for one decoder call; "
          "planned = the planner's VideoDecodeBytes for the canvas (planned/measured against the work).\n")
    print("| geometry | weights | tile px | calls (ggml / PyTorch) | ggml s | ggml graphs s | ggml TFLOP/s | PyTorch s | "
          "ratio | ggml work GB | ggml call buffers GB | planned GB | planned/measured | ggml weights GB | "
          "PyTorch peak GB (weights) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in g:
        geom = r["name"].split()[2].rstrip(",")
        p = ref.get(geom)
        ps, ratio, peak, calls = "-", "-", "-", f"{r['decode_calls']} / -"
        if p:
            ps, ratio = f"{p['seconds']:.2f}", f"{r['seconds'] / p['seconds']:.2f}x"
            peak, calls = f"{gb2(p['peak_bytes'])} ({gb2(p['weight_bytes'])})", f"{r['decode_calls']} / {p['calls']}"
        work, planned = r.get("compute_bytes", 0), r.get("planned_work_bytes", 0)
        pm = f"{planned / work:.2f}" if work else "-"
        print(f"| {geom} | {r['dtype']} | {r['tile_px']} | {calls} | {r['seconds']:.2f} | {r.get('graph_seconds', 0):.2f} | "
              f"{r['gflops'] / 1000:.0f} | "
              f"{ps} | {ratio} | {gb2(work)} | {gb2(r.get('call_buffer_bytes'))} | {gb2(planned)} | {pm} | "
              f"{gb2(r.get('weight_bytes'))} | {peak} |")


def render_table(out):
    g = [r for r in ggml_lines(os.path.join(out, "render.jsonl")) if r["name"].startswith("render ")]
    print("\nWhole T2VA render (bench --render): synthetic weights generated on the device, the engine's Generate "
          "and the MP4 mux. Per phase: its wall time (weights placed included), the device's and the process's "
          "high-water marks sampled every 5 ms while it ran, and the planner's peak for the phase of the same "
          "request. Net = the device's mark less its mark in the references phase, before any weight or graph "
          "(the CUDA context, cuBLAS, ggml's pool), since the planner counts the process's own allocations; "
          "planned/net is the prediction over it. The mux's planned bytes are FFmpeg's, in its own process, "
          "which no mark here samples.\n")
    print("| render | phase | s | planned GB | device GB | net GB | planned/net | host GB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in g:
        base = next((ph["device_peak_bytes"] for ph in r["phases"] if ph["name"] == "references"), 0)
        for ph in r["phases"]:
            dev, planned = ph["device_peak_bytes"], ph["planned_peak_bytes"]
            net = dev - base if dev else 0
            pm = f"{planned / net:.2f}" if net > 0 and planned and ph["name"] != "mux" else "-"
            print(f"| {r['name']} | {ph['name']} | {ph['seconds']:.2f} | {gb2(planned)} | {gb2(dev)} | "
                  f"{gb2(net)} | {pm} | {gb2(ph['host_peak_bytes'])} |")
        parts = ", ".join(f"{p['name']} {p['seconds']:.2f} s" for p in r.get("parts", []))
        print(f"| {r['name']} | total | {r['seconds']:.2f} | {gb2(r['planned_peak_bytes'])} | "
              f"{gb2(r.get('device_used_bytes'))} | | | {gb2(r['host_peak_bytes'])} |")
        print(f"\nParts of {r['name']}: {parts}.")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "rows":
        rows_cmd(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "qwen":
        qwen_table(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "vaetile":
        vaetile_cmd(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "vae":
        vae_table(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "render":
        render_table(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table_cmd(sys.argv[2])
        plan_table(sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
