#!/usr/bin/env bash
# Builds ggml's CUDA backend library (see CMakeLists.txt here) and copies
# it, with the libggml-base it links to, into OUT_DIR beside h3studio.
#   tools/cuda/build.sh GGML_DIR OUT_DIR [CUDA_ARCHITECTURES]
# CUDA_ARCHITECTURES is CMake's list: "native" (default: the GPUs of this
# machine), "90-real" (H100/H200 only, the fastest build), "89-real;90-real"...
# Needs cmake, a C++17 compiler and nvcc; ninja when present.
set -euo pipefail
ggml=${1:?usage: build.sh GGML_DIR OUT_DIR [CUDA_ARCHITECTURES]}
out=${2:?usage: build.sh GGML_DIR OUT_DIR [CUDA_ARCHITECTURES]}
arch=${3:-native}
here=$(cd "$(dirname "$0")" && pwd)
build=${CUDA_BUILD_DIR:-$here/../../build/cuda}
jobs=${JOBS:-$(nproc)}

command -v cmake >/dev/null || { echo "build.sh: cmake not found" >&2; exit 1; }
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || { echo "build.sh: nvcc not found (install the CUDA toolkit)" >&2; exit 1; }
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH

mkdir -p "$build"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$here" -B "$build" "${gen[@]}" -DGGML_DIR="$ggml" -DCMAKE_CUDA_ARCHITECTURES="$arch" >"$build/configure.log" 2>&1 ||
    { tail -30 "$build/configure.log" >&2; exit 1; }
cmake --build "$build" --target ggml-cuda -j "$jobs"
mkdir -p "$out"
cp -a "$build"/lib/libggml-base.so* "$out"/
cp "$build"/lib/libggml-cuda.so "$out"/
echo "build.sh: $(ls -1 "$out"/libggml-*.so* | tr '\n' ' ')"
if ldd "$out/libggml-cuda.so" | grep "not found" >&2; then
    echo "build.sh: the loader cannot find the libraries above; add their folder to LD_LIBRARY_PATH" >&2
fi
