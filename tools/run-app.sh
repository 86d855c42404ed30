#!/usr/bin/env bash
# Starts the studio window, or, where there is no display, says so in one
# line and shows the headless command that does the same work.
set -euo pipefail
bin=$1
if [ "$(uname -s)" = Linux ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
	echo "no display found; render headless instead: $bin render -p \"a red fox running through snow\" --seconds 1 -o fox.mp4"
	exit 0
fi
LANG=${LANG:-en_US.UTF-8} exec "$bin"
