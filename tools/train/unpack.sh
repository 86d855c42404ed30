#!/usr/bin/env bash
# Put a GPU run's results in place: tools/train/unpack.sh DIR (the run's $OUT).
set -euo pipefail
cd "$(dirname "$0")/../.."
cat "$1"/snapshot.tar.* | tar xf -
mkdir -p tools/train/logs
cp "$1"/*.jsonl tools/train/logs/ 2>/dev/null || true
[ -f "$1/demo-training.png" ] && cp "$1/demo-training.png" docs/demo-training.png
git status --short models tools/train docs | head
