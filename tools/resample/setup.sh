#!/usr/bin/env bash
# Installs the reference implementations that tools/resample/gen.py runs
# (Pillow, PyTorch, torchvision, torchaudio, NumPy) from Debian's archive,
# so the reference outputs in resample/testdata can be regenerated without
# pip. Quiet when everything is present.
set -euo pipefail

pkgs=(python3 python3-pil python3-numpy python3-torch python3-torchvision python3-torchaudio)
need=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
((${#need[@]})) || exit 0
if ! command -v apt-get >/dev/null 2>&1; then
	echo "tools/resample needs: ${need[*]} (or pip install pillow numpy torch torchvision torchaudio)" >&2
	exit 1
fi
sudo=()
((EUID == 0)) || sudo=(sudo)
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
