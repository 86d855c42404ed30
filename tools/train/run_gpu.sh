#!/usr/bin/env bash
# One training run of the demo model on the GPU machine (see README.md):
#   tools/train/run_gpu.sh VAE_MINUTES DIT_MINUTES DIT_EXAMPLES
# VAE_MINUTES 0 skips the VAEs (they are trained once: the DiT learns their
# latents). Logs and the trained snapshot (FL2VA, as a tar in 15 MiB parts)
# go to $OUT; unpack here with tools/train/unpack.sh DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
VAE_MIN=${1:-3.5}; DIT_MIN=${2:-5}; DIT_N=${3:-12000}
# FRESH_VIDEO=1 / FRESH_AUDIO=1: that VAE starts from new weights at demo.py's config
# VARGS: more train_vae.py video options, e.g. FRESH_VIDEO=1 VARGS="--encoder-ch 64"
# VBATCH / ABATCH: the video and audio VAEs' batches (8, 16); RANKS: the DiT's (4)
# AUDIO_VAE=0: the VAE stage leaves the audio VAE as it is (its latents, and
#   what the DiT learnt of them, stay); VLR: the video VAE's learning rate (3e-4)
# DBATCH: the DiT's clips per packed forward and rank (16); DLR: its peak learning rate (5e-4)
# DTWO: the share of two-object clips among the DiT's new examples (the world's own, about 0.15)
# DTASKS: the tasks' weights among the DiT's new examples (train_dit.py --task-share; a third each)
# DKEY: the DiT's extra video-loss weight on FL2VA keyframes' latent steps (train_dit.py --key-boost)
# DBIND: the weight of the DiT's binding term on two-object clips (train_dit.py --bind; 0: none)
# DTEXT: the text encoder's layers train beside the DiT at this peak rate (train_dit.py --text-lr;
#   none: frozen); test_text_encoder.py checks them against HF here first, and without it they stay frozen
# BINDPROBE=1: binding_states.py after the DiT (whether the encoder's states bind colours to shapes)
# DCOLD: each rank makes this many of its examples before the DiT trains and the rest of its
#   share (DIT_EXAMPLES / RANKS) beside the training (train_dit.py --cold; none: all before)
# DWORKERS: the example-making processes of all ranks together (train_dit.py --workers, 12: one a
#   rank at 8 ranks, which then draws the world in its own process; with DCOLD give two or more a rank)
# DGROW: the DiT's blocks before it trains (grow_dit.py: 7 fits the snapshot's 40 MB; 4 now)
# DEMOFIX=1: with DIT_MINUTES 0, only the demo parity fixtures (demo_fixtures below)
# VDEC_MIN: minutes of video-decoder-only training beside the DiT (its
#   latents stay, so the DiT's targets do not move); finish it before the DiT
FV=${FRESH_VIDEO:+--fresh}; FA=${FRESH_AUDIO:+--fresh}
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M)
SNAP=models/demo/snapshot
# STATE: what a later call on this machine, while it stays warm, resumes:
# the snapshot as the last call left it (the carried one is older unless it
# was unpacked here in between), and train_dit.py's examples and optimizer
STATE=${STATE:-/tmp/h3-train-state}; mkdir -p "$STATE"
# (newer: more optimizer steps of its stages, the VAEs' and the DiT's, in all)
steps() { python3 -c 'import json,sys; print(sum(int(s.get("steps", 0)) for s in json.load(open(sys.argv[1]))["training"].values()))' "$1/h3studio.json"; }
if [ -f "$STATE/snapshot/h3studio.json" ] && [ "$(steps "$STATE/snapshot")" -gt "$(steps "$SNAP")" ]; then
  echo "resuming the snapshot this machine kept ($(steps "$STATE/snapshot") steps in all)"
  rm -rf "$SNAP" && cp -r "$STATE/snapshot" "$SNAP"
fi
keep() { rm -rf "$STATE/snapshot" && cp -r "$SNAP" "$STATE/snapshot"; }
# pack: the snapshot as it stands, in 15 MiB parts, into $OUT after every
# stage (the logs go there as they are written): a call cut short still
# brings back what finished, and nothing else would, since the next call
# replaces the device's copy with this checkout's.
pack() {
  rm -f "$OUT"/snapshot.tar.*
  tar cf - "$SNAP" | split -b 15M - "$OUT/snapshot.tar."
}
# MPS=1: CUDA's multi-process service, so the stages' and the ranks'
# processes share the GPU at once rather than in turns (each alone leaves
# the H200 mostly idle: the model is a few million parameters).
if [ -n "${MPS:-}" ] && command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && echo "MPS on" && mps=1
fi
# the demo parity fixtures on the snapshot's weights, HF's Qwen3-VL states
# included (demo_gen.py --qwen hf), into logs.tar's demo-fixtures/ for
# tools/fixtures/e2e/testdata/demo should the snapshot ship; DEMOFIX=1 with
# no DiT minutes makes only these (about a minute)
demo_fixtures() {
  rm -rf /tmp/full && cp -r "$SNAP" /tmp/full && for d in "$SNAP"/FL2VA/*/; do cp -r "$d" /tmp/full/Ref2VA/; done
  python3 tools/fixtures/e2e/demo_gen.py --snapshot /tmp/full --qwen hf --out "$OUT/demo-fixtures" \
    >"$OUT/demo_gen.log" 2>&1 || tail -n 5 "$OUT/demo_gen.log"
}
smi=
# on any exit, a failed stage's included: the sampler stopped, MPS shut down
cleanup() {
  [ -z "$smi" ] || kill "$smi" 2>/dev/null || true
  [ -z "${mps:-}" ] || echo quit | nvidia-cuda-mps-control
}
trap cleanup EXIT
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__, torch.cuda.get_device_name(0))'
# the DiT's packed forward against the reference's, on this GPU's kernels,
# before any minute goes to training on it (a few seconds)
if [ "$DIT_MIN" != 0 ]; then
  (cd tools/train && python3 -m unittest test_packed) >"$OUT/test_packed.log" 2>&1 ||
    { tail -n 20 "$OUT/test_packed.log"; echo "run_gpu.sh: packed.py differs from the reference forward; no training" >&2; exit 1; }
  if [ -n "${DTEXT:-}" ] && ! (cd tools/train && python3 -m unittest test_text_encoder) >"$OUT/test_text.log" 2>&1; then
    tail -n 20 "$OUT/test_text.log"; echo "run_gpu.sh: text_encoder.py differs from HF's Qwen3-VL; the text encoder stays frozen" >&2
    DTEXT=
  fi
fi
# the GPU's utilisation every 20 s through the call's stages: is it the limit?
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 20 >"$OUT/gpu-util.log" 2>/dev/null &
smi=$!
if [ "$VAE_MIN" != 0 ]; then
  rm -rf /tmp/smoke && cp -r "$SNAP" /tmp/smoke
  python3 tools/train/train_dit.py --snapshot /tmp/smoke --examples 64 --minutes 0.6 --ranks 2 --port 29611 \
    >"$OUT/smoke.log" 2>&1 &
  smoke=$!
  python3 tools/train/train_vae.py video $FV ${VARGS:-} --minutes "$VAE_MIN" --batch "${VBATCH:-8}" --lr "${VLR:-3e-4}" --workers 8 --log "$OUT/video_vae-$STAMP.jsonl" >"$OUT/vae.log" 2>&1 &
  v=$!
  a=
  if [ "${AUDIO_VAE:-1}" != 0 ]; then
    python3 tools/train/train_vae.py audio $FA --minutes "$VAE_MIN" --batch "${ABATCH:-16}" --workers 4 --log "$OUT/audio_vae-$STAMP.jsonl" >"$OUT/avae.log" 2>&1 &
    a=$!
  fi
  wait $smoke || echo "smoke run failed"; tail -3 "$OUT/smoke.log"
  wait $v; [ -z "$a" ] || wait $a
  tail -n 2 "$OUT/vae.log" "$OUT"/avae.log 2>/dev/null || true
  rm -f "$OUT/vae.log" "$OUT/avae.log"
  keep
  pack
fi
if [ -n "${VDEC_MIN:-}" ]; then
  python3 tools/train/train_vae.py video --decoder-only --minutes "$VDEC_MIN" --batch "${VBATCH:-8}" --workers 4 \
    --log "$OUT/video_decoder-$STAMP.jsonl" >"$OUT/vdec.log" 2>&1 &
  vdec=$!
fi
if [ "$DIT_MIN" != 0 ]; then
  # DGROW: the DiT deepened to that many blocks first, computing what it did (grow_dit.py;
  # a snapshot that has them already is left as it is)
  [ -z "${DGROW:-}" ] || python3 tools/train/grow_dit.py --snapshot "$SNAP" --layers "$DGROW"
  python3 tools/train/train_dit.py --minutes "$DIT_MIN" --examples "$DIT_N" --ranks "${RANKS:-4}" \
    --batch "${DBATCH:-16}" --lr "${DLR:-5e-4}" ${DTWO:+--two-share "$DTWO"} ${DTASKS:+--task-share "$DTASKS"} ${DKEY:+--key-boost "$DKEY"} ${DBIND:+--bind "$DBIND"} ${DTEXT:+--text-lr "$DTEXT"} ${DCOLD:+--cold "$DCOLD"} ${DWORKERS:+--workers "$DWORKERS"} --state "$STATE" --log "$OUT/dit-$STAMP.jsonl" 2>&1 | tail -n 4
  keep
  # packed now: a call stopped in the stages after this still brings the DiT back
  pack
  # the demo parity fixtures first (what shipping a trained encoder needs), then how
  # much the DiT reads its motion words (README: Evaluation), then with BINDPROBE=1
  # how surely the text encoder's states name each shape's colour (about a minute)
  [ -z "${DTEXT:-}" ] || demo_fixtures
  # (--pool-last: the loss on this call's own pool against fresh clips', README: twenty-third)
  python3 tools/train/motion_probe.py --pool-last "$DIT_N" --log "$OUT/probe-$STAMP.jsonl" 2>"$OUT/probe.err" ||
    tail -n 5 "$OUT/probe.err"
  if [ -n "${BINDPROBE:-}" ]; then
    python3 tools/train/binding_states.py --log "$OUT/binding-$STAMP.jsonl" 2>"$OUT/binding.err" ||
      tail -n 5 "$OUT/binding.err"
  fi
elif [ -n "${DEMOFIX:-}" ]; then
  demo_fixtures
fi
if [ -n "${VDEC_MIN:-}" ]; then
  wait $vdec || echo "decoder run failed"; tail -n 3 "$OUT/vdec.log"
  keep
fi
mkdir -p /tmp/logs && cp tools/train/logs/*.jsonl /tmp/logs/ 2>/dev/null || true
cp "$OUT"/*.jsonl /tmp/logs/ 2>/dev/null || true
python3 tools/train/plot.py --logs /tmp/logs --out "$OUT/demo-training.png" || true
pack
# the device tool brings back 8 files of $OUT and leaves out the rest (the
# decoder's log among them, every call so far): the logs go back as one tar
(cd "$OUT" && ls | grep -v -e '^snapshot\.tar\.' -e '^demo-training\.png$' -e '^logs\.tar$' >/tmp/out-logs &&
  tar cf logs.tar -T /tmp/out-logs && xargs rm -rf </tmp/out-logs)
ls -la "$OUT"
