#!/usr/bin/env bash
# `make screenshots`: runs the studio window under a virtual X server,
# renders a clip with the built-in demo model and saves PNGs of the window's
# main states into docs/screenshots (Linux; needs xvfb and imagemagick,
# which `make deps` installs).
set -euo pipefail
[ "$(uname -s)" = Linux ] || { echo "screenshots: run on Linux (Xvfb)" >&2; exit 1; }
for c in Xvfb import; do
	command -v "$c" >/dev/null 2>&1 || { echo "screenshots: $c missing (make deps installs it)" >&2; exit 1; }
done
bin=$(mktemp -d)/screenshots
go build -o "$bin" ./tools/screenshots
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
# Xvfb machines have no sound card: give ALSA a null device so the timeline
# plays its soundtrack (silently) instead of showing "no audio device".
asound=$(mktemp)
printf 'pcm.!default { type null }\n' >"$asound"
trap 'kill $xvfb 2>/dev/null || true; rm -f "$asound"' EXIT
# A fresh settings folder: the window reopens with the last request it
# saved, which would put an earlier run's references in the empty shot.
config=$(mktemp -d)
trap 'kill $xvfb 2>/dev/null || true; rm -rf "$asound" "$config"' EXIT
DISPLAY=$display LANG=en_US.UTF-8 ALSA_CONFIG_PATH=$asound XDG_CONFIG_HOME=$config "$bin" -out docs/screenshots
