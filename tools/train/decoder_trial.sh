#!/usr/bin/env bash
# A wider video decoder trained on the snapshot's encoder, beside a DiT run
# (see README.md), in a copy of the snapshot the GPU machine keeps between
# warm calls, so the shipped snapshot is untouched until the trial wins:
#   tools/train/decoder_trial.sh MINUTES HEADS [DELAY_S]
# The first call on a machine makes the copy with a new ViT decoder of HEADS
# heads of 64; later calls resume it. DELAY_S: seconds to wait first (the DiT's
# ranks hold most of the GPU's memory while they make their examples). Its
# video VAE comes back as decoder-trial.tar.* (15 MiB parts) in $OUT; unpack
# with `cat DIR/decoder-trial.tar.* | tar xf - -C SNAPSHOT_COPY`.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
MIN=$1; HEADS=$2; sleep "${3:-0}"
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
TRIAL=${TRIAL:-/tmp/h3-decoder-trial}
# run_gpu.sh's MPS server, when it runs one: share the GPU with the DiT's
# ranks rather than take turns with them (this must end before run_gpu.sh does)
[ -z "${MPS:-}" ] || export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
if [ ! -f "$TRIAL/h3studio.json" ]; then  # made whole, then moved into place
  rm -rf "$TRIAL.new" && cp -r models/demo/snapshot "$TRIAL.new"
  python3 -c 'import sys; sys.path.insert(0, "tools/train"); import demo; demo.new_decoder(sys.argv[1], int(sys.argv[2]))' \
    "$TRIAL.new" "$HEADS"
  rm -rf "$TRIAL" && mv "$TRIAL.new" "$TRIAL"
fi
python3 tools/train/train_vae.py video --decoder-only --snapshot "$TRIAL" --minutes "$MIN" \
  --batch "${VBATCH:-24}" --workers "${WORKERS:-3}" --log "$OUT/decoder-trial-$(date -u +%Y%m%dT%H%M).jsonl" \
  >"$OUT/decoder-trial.log" 2>&1 || { tail -n 20 "$OUT/decoder-trial.log"; exit 1; }
tail -n 2 "$OUT/decoder-trial.log"
rm -f "$OUT"/decoder-trial.tar.*
tar cf - -C "$TRIAL" FL2VA/video_vae h3studio.json | split -b 15M - "$OUT/decoder-trial.tar."
