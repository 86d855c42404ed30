#!/usr/bin/env bash
# Installs what a fresh machine lacks to build and test H3 Studio: on
# Debian/Ubuntu with apt (Fyne's X11/GL headers, ffmpeg, Xvfb, OpenBLAS and
# curl for the bench references); on macOS it says what to install. Quiet
# when everything is present.
#   tools/setup-deps.sh          # the app's build and tests
#   tools/setup-deps.sh train    # and Python with numpy, torch, torchaudio, Pillow
#                                # and matplotlib for tools/train's CPU side (make train-check)
set -euo pipefail
train=""
[ "${1:-}" != train ] || train=1

case "$(uname -s)" in
Darwin)
	missing=()
	xcode-select -p >/dev/null 2>&1 || missing+=("Xcode command line tools (xcode-select --install)")
	command -v ffmpeg >/dev/null 2>&1 || missing+=("ffmpeg (brew install ffmpeg)")
	command -v go >/dev/null 2>&1 || missing+=("Go 1.26 (https://go.dev/dl/)")
	[ -z "$train" ] || python3 -c 'import numpy, torch, torchaudio, PIL, matplotlib' 2>/dev/null ||
		missing+=("Python 3 with numpy, torch, torchaudio, Pillow and matplotlib (pip3 install numpy torch torchaudio pillow matplotlib)")
	if ((${#missing[@]})); then
		printf 'H3 Studio needs: %s\n' "${missing[@]}" >&2
		exit 1
	fi
	;;
Linux)
	pkgs=(gcc g++ pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev libasound2-dev ffmpeg xvfb xauth imagemagick libopenblas-dev curl)
	# Debian's torch (1.13) runs tools/train's CPU side; the GPU machine has its own
	[ -z "$train" ] || pkgs+=(python3 python3-numpy python3-torch python3-torchaudio python3-pil python3-matplotlib)
	need=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
	done
	# Node (the tokenizer tests compare against a JS reference) may come from
	# nodesource rather than Debian, so look for the commands, not packages.
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
	if ((${#need[@]})); then
		if ! command -v apt-get >/dev/null 2>&1; then
			echo "H3 Studio needs these packages (or your distribution's equivalents): ${need[*]}" >&2
			exit 1
		fi
		sudo=""
		[ "$(id -u)" = 0 ] || sudo="sudo"
		echo "installing: ${need[*]}"
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	fi
	;;
esac
