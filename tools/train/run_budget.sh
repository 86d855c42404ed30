#!/usr/bin/env bash
# A DiT call sized to the device time left, for when a machine comes late
# (README: Next runs). The device tool counts its time from the asking,
# the machine's start included, and stops a call at what is left: a DiT
# stage stopped that way brings nothing back, since the snapshot is
# written at its end. So the call's own clock starts from when it was
# asked for, and the DiT's minutes are what remains of the budget:
#   tools/train/run_budget.sh ASKED_EPOCH BUDGET_S DIT_EXAMPLES
# ASKED_EPOCH: `date +%s` here just before the call; BUDGET_S: status's
# budget_left_s then. The other settings (MPS, RANKS, DBATCH, ...) pass
# through to run_gpu.sh as they are.
set -euo pipefail
asked=$1 budget=$2 examples=$3
# MARGIN: seconds kept for run_gpu.sh's stages around the DiT (the packed
# forward's test, the probe, the plot, the pack) and the files' way back;
# 115 by default: the probe with --pool-last takes about 100 s (the
# twenty-fourth session's calls, given 75, were stopped in it; the plot
# after it may be cut, which loses nothing: the snapshot and logs come back
# loose). With DTEXT, 180: the text encoder's HF test before the DiT and
# the demo fixtures after it (the twenty-second session's first call, given
# 150, lost its fixtures; run_gpu.sh now makes the fixtures before the
# probes and the binding probe only with BINDPROBE=1)
if [ -n "${DTEXT:-}" ]; then margin=${MARGIN:-180}; else margin=${MARGIN:-115}; fi
# (the two machines' clocks agree to a second or so; a start is taken
# to have cost at least 40 s, the least seen, should they not)
spent=$(($(date +%s) - asked)); [ "$spent" -ge 40 ] || spent=40
left=$((budget - spent - 15))
# and no more than what one command's limit (600 s) leaves, less those
# 15 s: the limit counts from the command's start, so what ran before this
# script in the same command (the binding probe) is spent from it too.
# CALL_START (epoch) says when the command started; without it, this
# process's own age, which is the command's when bash runs the command
# line's last part in its own shell (exec), as the calls in the README do,
# and about 0 otherwise (no more than before this was counted).
if [ -n "${CALL_START:-}" ]; then ran=$(($(date +%s) - CALL_START)); else ran=$(ps -o etimes= -p $$ 2>/dev/null | tr -d ' '); fi
cap=$((585 - ${ran:-0}))
[ "$left" -le "$cap" ] || left=$cap
# MIN_DIT: the fewest DiT minutes (whole) worth a call. The calls that
# moved the held-out figures had six or more; one of 4.2 minutes (631
# steps after a fresh warm-up) scored no better than its start (README,
# seventeenth). Tenths of a minute, rounded, in shell arithmetic:
tenths=$(((($left - margin) * 10 + 30) / 60))
if [ "$tenths" -ge $((${MIN_DIT:-6} * 10)) ]; then
  minutes=$((tenths / 10)).$((tenths % 10))
  echo "run_budget.sh: ${left} s left of ${budget}; the DiT gets ${minutes} minutes"
  exec timeout "$left" bash "$(dirname "$0")/run_gpu.sh" 0 "$minutes" "$examples"
fi
echo "run_budget.sh: ${left} s left of ${budget}, too little for the DiT to make its examples and train ${MIN_DIT:-6} minutes" >&2
exit 1
