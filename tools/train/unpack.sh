#!/usr/bin/env bash
# Put a GPU run's results in place: tools/train/unpack.sh DIR (the run's $OUT).
set -euo pipefail
cd "$(dirname "$0")/../.."
cat "$1"/snapshot.tar.* | tar xf -
mkdir -p tools/train/logs/gpu
# run_gpu.sh bundles its logs as logs.tar at a call's end (a call cut short
# leaves them loose)
logs=$1
if [ -f "$1/logs.tar" ]; then
  logs=$(mktemp -d) && trap 'rm -rf "$logs"' EXIT && tar xf "$1/logs.tar" -C "$logs"
fi
cp "$logs"/*.jsonl tools/train/logs/ 2>/dev/null || true
stamp=$(ls "$logs"/dit-*.jsonl "$logs"/video_vae-*.jsonl 2>/dev/null | head -1 | sed 's/.*-\([0-9T]*\)\.jsonl$/\1/') || true
[ -z "$stamp" ] || [ ! -f "$logs/gpu-util.log" ] || cp "$logs/gpu-util.log" "tools/train/logs/gpu/gpu-util-$stamp.log"
[ -f "$1/demo-training.png" ] && cp "$1/demo-training.png" docs/demo-training.png
git status --short models tools/train docs | head
