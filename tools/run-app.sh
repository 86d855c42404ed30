#!/usr/bin/env bash
# Starts the studio window. Where there is no display the binary says so
# in one line, with the headless command that does the same work, and
# exits 2; make run ends there without an error of its own.
set -uo pipefail
LANG=${LANG:-en_US.UTF-8} "$1"
rc=$?
[ $rc -eq 2 ] && exit 0
exit $rc
