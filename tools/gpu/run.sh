#!/usr/bin/env bash
# One call on a Linux machine with an NVIDIA GPU: builds ggml's CUDA backend
# (unless bin/libggml-cuda.so is already there), times the release DiT's
# 50-block stack with `h3studio bench --dit` on it, the Qwen3-VL prefill
# with `--qwen`, the video VAE decode with `--vae` and a whole render with
# `--render`, times the DiT, Qwen and VAE work in PyTorch (dit_ref.py,
# qwen_ref.py, vae_ref.py here) in the same run, and prints the tables.
#
#   tools/gpu/run.sh [GEOMETRIES]      default 512x512x22,864x480x56,1344x768x124
#
# Environment (all optional):
#   GGML_DIR            the pinned ggml sources (default: from `go list`)
#   CUDA_ARCHITECTURES  for the build (default native; 90-real for H100/H200)
#   DIT                 none skips the DiT stacks, their PyTorch reference
#                       and the planner's rows (the other steps still run)
#   DIT_WEIGHTS         weight types of the ggml stacks (default bf16,q8_0)
#   QWEN                Qwen prefill lengths (default 10231,100000; none skips)
#   VAE                 video VAE decode geometries (default 1344x768x124; none skips)
#   VAE_WEIGHTS         the decoder's matrices: f32 (default, the official
#                       checkpoint's) or f16 (ComfyUI's repack)
#   RENDER              whole T2VA renders at 20 steps on synthetic release
#                       weights in the release's dtypes (default 864x480x56;
#                       none skips); needs FFmpeg for the mux
#   OUT                 where the logs and tables go (default build/gpu)
#   SANITIZE            1: only run compute-sanitizer's memcheck on a one-block
#                       q8_0 DiT stack (with CUDA graphs off, so their update
#                       failures do not fill the print limit) into
#                       sanitizer.log, to name the kernel behind the illegal
#                       memory accesses docs/PERFORMANCE.md lists
# Needs bin/h3studio (make build, or Go to build it), python3 with PyTorch
# and CUDA, and for the build cmake and nvcc.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
geoms=${1:-512x512x22,864x480x56,1344x768x124}
out=${OUT:-$root/build/gpu}
mkdir -p "$out"
bin=bin/h3studio

if [ ! -x "$bin" ]; then
    command -v go >/dev/null || { echo "run.sh: no $bin and no Go to build it (make build)" >&2; exit 1; }
    make build
fi
if [ ! -f bin/libggml-cuda.so ]; then
    ggml=${GGML_DIR:-$(go list -m -f '{{.Dir}}' github.com/ollama/ollama)/ml/backend/ggml/ggml}
    t0=$(date +%s)
    if ! tools/cuda/build.sh "$ggml" bin "${CUDA_ARCHITECTURES:-native}" >"$out/build.log" 2>&1; then
        tail -40 "$out/build.log" >&2
        exit 1
    fi
    echo "cuda build: $(($(date +%s) - t0)) s, $(du -h bin/libggml-cuda.so | cut -f1)" | tee -a "$out/build.log"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"

if [ "${SANITIZE:-}" = 1 ]; then
    cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    GGML_CUDA_DISABLE_GRAPHS=1 timeout 300 "$cs" --tool memcheck --print-limit 20 \
        "$bin" bench --size 64 --tokens 64 --dit 512x512x22 --dit-weights q8_0 --dit-blocks 1 --json \
        >"$out/sanitizer.log" 2>&1 || true
    grep -m20 -A10 "Invalid\|illegal" "$out/sanitizer.log" | head -80
    exit 0
fi

# The binary must find the GPU on its own: a CPU fallback would time the
# CPU (and fill host memory with 38 GB of weights), so check first.
"$bin" bench --size 64 --tokens 64 --json >"$out/probe.jsonl" 2>"$out/ggml.stderr" || { cat "$out/ggml.stderr" >&2; exit 1; }
grep -q '"backend":"CUDA' "$out/probe.jsonl" || { echo "run.sh: h3studio did not load the CUDA backend:" >&2; cat "$out/ggml.stderr" >&2; exit 1; }
if [ "${DIT:-}" != none ]; then
    "$bin" bench --size 8192 --tokens 16384 --dit "$geoms" --dit-weights "${DIT_WEIGHTS:-bf16,q8_0}" --json \
        >"$out/ggml.jsonl" 2>>"$out/ggml.stderr" || { tail -20 "$out/ggml.stderr" >&2; exit 1; }

    # The planner on this machine (--machine auto must describe the GPU), per
    # geometry, for its predicted denoise memory against the measured buffers.
    for g in ${geoms//,/ }; do
        IFS=x read -r w h f <<<"$g"
        "$bin" plan --machine auto -d official-bf16 --width "$w" --height "$h" --frames "$f" \
            -p "a red fox running through snow at dawn" --no-fit --json >"$out/plan-$g.json" 2>>"$out/ggml.stderr" ||
            true # a refused plan still writes its JSON, and its memory is what the table compares
    done
    python3 -c 'import json,sys; print("plan --machine auto:", json.load(open(sys.argv[1]))["machine"])' "$out/plan-${geoms%%,*}.json"

    rows=$(python3 tools/gpu/table.py rows "$out/ggml.jsonl")
    python3 tools/gpu/dit_ref.py --rows "$rows" >"$out/torch.json" 2>"$out/torch.stderr" ||
        { tail -20 "$out/torch.stderr" >&2; exit 1; }
    python3 tools/gpu/table.py table "$out" | tee "$out/table.md"
fi

# A render of the embedded tiny model through the same binary: the engine
# opens the CUDA backend like bench does (the mux needs FFmpeg, which a
# GPU box may lack; the phases before it still show).
"$bin" render -p "a red fox running through snow" --width 256 --height 256 -o "$out/tiny.mp4" \
    >"$out/render.log" 2>&1 || echo "run.sh: tiny render failed (see render.log)" >&2
grep -E "^backend|done in|wrote|h3studio render" "$out/render.log" | tail -8 || true

# One whole T2VA render per geometry (bench --render: the engine's
# Generate and mux on synthetic release weights generated on the GPU),
# per phase against the planner; its failure leaves the tables above.
render=${RENDER:-864x480x56}
if [ "$render" != none ]; then
    command -v ffmpeg >/dev/null || echo "run.sh: no ffmpeg on PATH; bench --render's mux will fail" >&2
    : >"$out/render.jsonl"
    for g in ${render//,/ }; do
        "$bin" bench --size 64 --tokens 64 --render "$g" --render-steps 20 --json >>"$out/render.jsonl" 2>>"$out/ggml.stderr" ||
            { echo "run.sh: bench --render $g failed:" >&2; tail -5 "$out/ggml.stderr" >&2; }
    done
    python3 tools/gpu/table.py render "$out" | tee -a "$out/table.md" || true
fi

# The Qwen3-VL prefill, after the DiT tables are written: its failure
# leaves them intact.
qwen=${QWEN:-10231,100000}
if [ "$qwen" != none ]; then
    if ! "$bin" bench --size 64 --tokens 64 --qwen "$qwen" --json >"$out/qwen.jsonl" 2>>"$out/ggml.stderr"; then
        tail -5 "$out/ggml.stderr" >&2
        exit 1
    fi
    python3 tools/gpu/qwen_ref.py --tokens "$qwen" >"$out/qwen_torch.json" 2>"$out/qwen_torch.stderr" ||
        { tail -20 "$out/qwen_torch.stderr" >&2; exit 1; }
    python3 tools/gpu/table.py qwen "$out" | tee -a "$out/table.md"
fi

# The video VAE decode with the tiling the planner picks on this machine,
# then ComfyUI's decode (tools/fixtures/vae/_ref/, which gen.py's header
# says how to fill) of a latent of the same shape with the same tile.
vae=${VAE:-1344x768x124}
[ "$vae" = none ] && exit 0
if ! "$bin" bench --size 64 --tokens 64 --vae "$vae" --vae-weights "${VAE_WEIGHTS:-f32}" --json \
    >"$out/vae.jsonl" 2>>"$out/ggml.stderr"; then
    tail -5 "$out/ggml.stderr" >&2
    exit 1
fi
for g in ${vae//,/ }; do
    tile=$(python3 tools/gpu/table.py vaetile "$out/vae.jsonl" "$g")
    python3 tools/gpu/vae_ref.py --geometries "$g" --dtype "${VAE_WEIGHTS:-f32}" --tile "$tile" \
        >"$out/vae_torch-$g.json" 2>"$out/vae_torch.stderr" || { tail -20 "$out/vae_torch.stderr" >&2; exit 1; }
done
python3 tools/gpu/table.py vae "$out" | tee -a "$out/table.md"
