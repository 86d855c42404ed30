#!/usr/bin/env bash
# Fresh video VAEs side by side on the GPU machine (see README.md), each in
# its own copy of the snapshot, then each one's ceilings (vae_ceiling.py on
# the held-out split): which recipe the next VAE is trained with.
#   tools/train/vae_trials.sh MINUTES "NAME:OPTIONS" ...
#   e.g. tools/train/vae_trials.sh 6.5 "base:" "pull:--pca-pull 1" "mult:--encoder-mult 1,1,2,4"
# OPTIONS go to train_vae.py video --fresh. Logs and ceilings come back as
# vae-trials.tar in $OUT; the copies stay in $TRIALS (/tmp/h3-vae-trials)
# while the machine is warm; CEIL_COUNT: held-out examples scored (50), and WEIGHTS=NAME packs that one's video VAE as
# NAME-video_vae.tar.* (15 MiB parts) beside it. WEIGHTS=best: the trial whose
# anchors come back best (the picture median, then Picture 1 kept), named in
# logs/best.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
MIN=$1; shift
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
TRIALS=${TRIALS:-/tmp/h3-vae-trials}; LOGS="$TRIALS/logs"; mkdir -p "$LOGS"
# MPS=1: the trials share the GPU at once through CUDA's MPS server (run_gpu.sh's
# pipe directory), started here and stopped on exit
if [ -n "${MPS:-}" ] && command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d && trap 'echo quit | nvidia-cuda-mps-control' EXIT
fi
pids=()
for trial in "$@"; do
  name=${trial%%:*}; opts=${trial#*:}
  rm -rf "${TRIALS:?}/$name" && cp -r models/demo/snapshot "$TRIALS/$name"
  # shellcheck disable=SC2086 # OPTIONS are words for train_vae.py
  python3 tools/train/train_vae.py video --fresh $opts --snapshot "$TRIALS/$name" --minutes "$MIN" \
    --batch "${VBATCH:-24}" --workers "${WORKERS:-3}" --log "$LOGS/$name.jsonl" >"$LOGS/$name.log" 2>&1 &
  pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
[ "$fails" = 0 ] || echo "vae_trials.sh: $fails trial(s) failed; their logs are in vae-trials.tar"
for trial in "$@"; do
  name=${trial%%:*}
  [ -f "$TRIALS/$name/h3studio.json" ] || continue
  OMP_NUM_THREADS=$(( ($(nproc) + $# - 1) / $# )) python3 tools/train/vae_ceiling.py --out "$TRIALS/$name-eval" \
    --count "${CEIL_COUNT:-50}" --snapshot "$TRIALS/$name" \
    --summary "$LOGS/$name-ceiling.json" >"$LOGS/$name-ceiling.txt" 2>&1 &
done
wait
for trial in "$@"; do name=${trial%%:*}; echo "== $name"; tail -n 4 "$LOGS/$name-ceiling.txt" 2>/dev/null || true; done
if [ "${WEIGHTS:-}" = best ]; then
  WEIGHTS=$(python3 - "$LOGS" "$@" <<'PICK'
import json, os, sys
def rank(name):
    path = os.path.join(sys.argv[1], name + "-ceiling.json")
    if not os.path.exists(path):
        return (-1.0, -1)
    s = json.load(open(path))
    return (s.get("picture_median", -1.0), s.get("picture1_kept", [-1])[0])
names = [t.split(":", 1)[0] for t in sys.argv[2:]]
print(max(names, key=rank))
PICK
)
  echo "best: $WEIGHTS" | tee "$LOGS/best.txt"
fi
tar cf "$OUT/vae-trials.tar" -C "$TRIALS" logs
if [ -n "${WEIGHTS:-}" ]; then
  tar cf - -C "$TRIALS/$WEIGHTS" FL2VA/video_vae h3studio.json | split -b 15M - "$OUT/$WEIGHTS-video_vae.tar."
fi
