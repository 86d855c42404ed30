# H3 Studio build and test entry points. `make run` and `make test` set up a
# fresh machine themselves (see README.md).

SHELL := /bin/bash
GO    ?= go
UNAME_S := $(shell uname -s)
UNAME_M := $(shell uname -m)

# ggml's cgo directives pass no -march on x86, which compiles its CPU
# kernels for baseline SSE2: 25-40x slower. Every cgo build on amd64 uses
# the same flags so the build cache is shared between targets.
ifeq ($(UNAME_M),x86_64)
export CGO_CFLAGS   := -O3 -march=x86-64-v3
export CGO_CXXFLAGS := -O3 -march=x86-64-v3
endif

BIN       := bin/h3studio
GGML_DIR   = $(shell $(GO) list -m -f '{{.Dir}}' github.com/ollama/ollama)/ml/backend/ggml/ggml
GGML_INC   = $(GGML_DIR)/include
# CMake's CUDA architecture list for make cuda: native is the GPUs of the
# machine building; 90-real builds for H100/H200 alone (fastest to compile).
CUDA_ARCHITECTURES ?= native
# Packages that build without cgo: everything but Fyne (main, ui and the
# screenshot tool that drives the real window).
NOCGO_PKGS = $(shell $(GO) list ./... | grep -v -e '^h3studio$$' -e '^h3studio/ui' -e '^h3studio/tools/screenshots')

.PHONY: all build cuda cuda-lib run test test-long bench vet abi-check ci deps workflows app mac-test mac-bench screenshots train-deps train-check clean

all: build

deps:
	@tools/setup-deps.sh

build: deps
	$(GO) build -o $(BIN) .

# Linux with an NVIDIA GPU (nvcc, CMake): ggml's CUDA backend from the
# pinned ggml sources as bin/libggml-cuda.so (+ libggml-base), which the
# binary loads at run time; without it the binary runs on the CPU.
# cuda-lib builds the library alone, for a GPU machine without Go that
# runs a binary built elsewhere (GGML_DIR=the pinned ggml sources).
cuda: build cuda-lib

cuda-lib:
	tools/cuda/build.sh $(GGML_DIR) bin "$(CUDA_ARCHITECTURES)"

run: build
	@tools/run-app.sh $(BIN)

test: deps vet abi-check
	$(GO) test -timeout 20m ./...
	@tools/gui-smoke.sh

# The long tests that time a render against a limit (the phone clip's
# 60 s, the estimate's tolerance) run alone after the rest: beside
# another package's tests on two cores the phone clip took 150 s.
LONG_TIMED = PhoneClip$$|^TestLongEstimateWithinTolerance$$

test-long: deps
	$(GO) test -tags long -timeout 60m -skip '$(LONG_TIMED)' ./...
	$(GO) test -tags long -timeout 20m -count=1 -run '$(LONG_TIMED)' ./app

bench: deps
	@for d in tools/bench/*/; do $(GO) run ./$$d || exit 1; done

vet: deps workflows
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $(NOCGO_PKGS)

# The CI workflows, checked with a pinned actionlint kept under bin/.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := bin/tools/actionlint-$(ACTIONLINT_VERSION)/actionlint

$(ACTIONLINT):
	GOBIN=$(CURDIR)/$(dir $(ACTIONLINT)) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

workflows: $(ACTIONLINT)
	$(ACTIONLINT) .github/workflows/*.yml

abi-check:
	gcc -std=c11 -fsyntax-only -I$(GGML_INC) tools/abicheck/abicheck.c

ci: vet abi-check test

# The double-clickable bin/H3 Studio.app, from FyneApp.toml (a Mac only;
# elsewhere it says so in one line).
app:
	@tools/mac-app.sh

# On a Mac (Xcode command line tools): the backend suite on Metal against the
# CPU backend; then the model parity fixtures (DiT, Qwen3-VL, video and
# audio VAE, and the engine's end-to-end parity, which MAC_PARITY names) on
# Metal with half-precision tolerances, failing on any node the scheduler
# puts on the CPU (engine/ggml/ggmltest: a test opts in by opening its
# backend there); and Metal timings for matmul and attention.
MAC_PARITY = ^Test(Parity|SamplerTrajectory|EndToEndParity|AudioEncode|AudioDecode|VideoEncode|VideoDecode)
mac-test:
	$(GO) test -tags metal -timeout 30m ./engine/ggml/... ./metal/...
	$(GO) test -tags metal -timeout 60m -run '$(MAC_PARITY)' ./engine/ ./engine/dit/ ./engine/textenc/ ./engine/vae/

mac-bench:
	$(GO) test -tags metal -run '^$$' -bench . -benchtime 3x ./metal/...

# PNGs of the studio window's main states for the README (Linux: Xvfb).
screenshots: deps
	@tools/screenshots/run.sh

# The demo world's generator and metrics (tools/train/README.md), in Python
# with numpy: the first python3 that has it, or TRAIN_PYTHON (looked for
# once train-deps has run). Not part of `make test`: nothing the app builds
# or tests uses these tools yet.
TRAIN_PYTHON ?= $(firstword $(foreach p,python3 /usr/bin/python3,$(shell $(p) -c 'import numpy' 2>/dev/null && echo $(p))))
train-deps:
	@tools/setup-deps.sh train

train-check: train-deps
	@test -n "$(TRAIN_PYTHON)" || { echo "make train-check needs python3 with numpy: apt-get install python3-numpy (Debian) or pip3 install numpy, or set TRAIN_PYTHON" >&2; exit 1; }
	cd tools/train && PYTHONDONTWRITEBYTECODE=1 $(TRAIN_PYTHON) -m unittest test_world test_eval test_packed test_motion_probe test_demo test_head_rank test_vae_shapes test_train_dit test_run_budget test_average_dit test_binding_states test_text_encoder test_grow_dit

clean:
	rm -rf bin build
