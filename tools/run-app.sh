#!/usr/bin/env bash
# Starts the studio window. Where there is no display the binary says so
# in one line, with the headless command that does the same work, and
# make run ends there without an error of its own.
set -uo pipefail
bin=$1
LANG=${LANG:-en_US.UTF-8} "$bin"
rc=$?
if [ $rc -eq 2 ] && [ "$(uname -s)" != Darwin ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
	exit 0
fi
exit $rc
