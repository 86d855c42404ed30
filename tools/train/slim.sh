#!/usr/bin/env bash
# Moves the test fixtures out of the checkout before a device call, and
# back after: everything tracked travels to the GPU machine, under a
# 64 MiB limit that the fixtures and a growing demo snapshot would pass,
# and a training run needs none of them. The checkpoints under
# tools/train/checkpoints go too: a call trains the snapshot, so copy a
# checkpoint over the snapshot before hiding (README: Next runs). A hidden
# tracked file is absent on the device too.
#   tools/train/slim.sh hide       # before the call
#   tools/train/slim.sh restore    # right after it
set -euo pipefail
cd "$(dirname "$0")/../.."
stash=${SLIM_STASH:-${TMPDIR:-/tmp}/h3studio-slim}
list="$stash/files"
case "${1:-}" in
hide)
  [ ! -e "$list" ] || { echo "slim.sh: $stash already holds hidden files; restore first" >&2; exit 1; }
  # every call carries the reference copies (git-ignored, so a fresh checkout
  # lacks them; REFS.md and REFS-sglang.md say how to make them): without
  # them the device would spend its start on a call that fails at once
  "${TRAIN_PYTHON:-python3}" - <<'PY' || exit 1
import sys
sys.path.insert(0, "tools/fixtures/e2e")
import refmodels, sglref
try:
    refmodels.verify_copies()
    sglref.verify_copies()
except RuntimeError as e:
    sys.exit("slim.sh: %s; make them as REFS.md and REFS-sglang.md say before a device call" % e)
PY
  mkdir -p "$stash"
  # (the gen.py fixtures of the demo's three parity cases stay: a DTEXT call
  # remakes the demo fixtures from them, run_gpu.sh)
  git ls-files -- '*/testdata/*' 'tools/fixtures/*.safetensors' 'tools/fixtures/*.gz' 'tools/train/checkpoints/*' |
    grep -v -x -e 'tools/fixtures/e2e/testdata/t2va.safetensors' -e 'tools/fixtures/e2e/testdata/fl2va_first_last.safetensors' \
      -e 'tools/fixtures/e2e/testdata/ref2va_mixed.safetensors' | while read -r f; do
    [ -f "$f" ] && echo "$f"
  done >"$list"
  while read -r f; do mkdir -p "$stash/$(dirname "$f")" && mv "$f" "$stash/$f"; done <"$list"
  echo "slim.sh: $(wc -l <"$list") files hidden in $stash; the tree now travels $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes"
  ;;
restore)
  [ -e "$list" ] || { echo "slim.sh: nothing hidden in $stash" >&2; exit 1; }
  while read -r f; do mkdir -p "$(dirname "$f")" && mv "$stash/$f" "$f"; done <"$list"
  rm -rf "$stash"
  echo "slim.sh: restored"
  git status --short | head
  ;;
*)
  echo "usage: tools/train/slim.sh hide|restore" >&2
  exit 2
  ;;
esac
