# zmlir: `make demo` and `make test` bootstrap everything they need on a fresh
# Debian 12 machine (as root), idempotently: a second run only checks.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
LIBCUDA := zmlir/runtime/cuda/lib/libcuda.so.1
# Our cuBLAS, cuFFT and cuRAND (zmlir/libraries/), next to it.
CUBLAS := zmlir/runtime/cuda/lib/libcublas.so.13
CUFFT := zmlir/runtime/cuda/lib/libcufft.so.12
CURAND := zmlir/runtime/cuda/lib/libcurand.so.10
# LLVM/MLIR 22's prefix: `make LLVM_ROOT=/opt/llvm-22 ...` for another one.
# CMake gets it as ZMLIR_LLVM_ROOT, and so do the tests, lit and zmlir's
# targets (zmlir/toolchain.py) through the environment.
LLVM_ROOT ?= /usr/lib/llvm-22
LLVM_BIN := $(LLVM_ROOT)/bin

APT_PACKAGES := mlir-22-tools libmlir-22-dev llvm-22-dev llvm-22-tools lld-22 \
	clang-format-22 spirv-tools ninja-build ocl-icd-libopencl1 clinfo libamdhip64-5 libze1
PIP_PACKAGES := 'scikit-build-core>=0.10' 'nanobind>=2.0' cmake ninja \
	lark numpy cffi zstandard lz4 pytest lit filecheck ruff 'nvidia-cuda-nvrtc==13.0.*' \
	intel-opencl-rt intel-cmplr-lib-rt 'tbb==2023.*' 'nvidia-cublas==13.0.*' scipy-openblas32 \
	'nvidia-cufft==12.0.*' mkl mkl-include

NATIVE_SOURCES := $(shell find zmlir -name '*.cpp' -o -name '*.h' -o -name '*.td' \
	-o -name CMakeLists.txt) CMakeLists.txt pyproject.toml
# NVIDIA's own cuRAND (a 77 MB wheel), run unmodified by test/libraries/test_curand.py
# and compared there with ours; its headers build ours.
PIP_PACKAGES += 'nvidia-curand==10.4.*'
# The C++ that `make lint` checks against .clang-format and `make format` rewrites.
CXX_SOURCES := $(filter %.cpp %.h,$(NATIVE_SOURCES))
CLANG_FORMAT := $(LLVM_BIN)/clang-format

export PATH := $(CURDIR)/$(VENV)/bin:$(LLVM_BIN):$(PATH)
export ZMLIR_LLVM_ROOT := $(LLVM_ROOT)

.PHONY: all bootstrap apt demo test lit pytest lint format clean

all: bootstrap

bootstrap: apt $(STAMPS)/build $(LIBCUDA) $(CUBLAS) $(CUFFT) $(CURAND)

# Intel's SYCL runtime and oneMKL's SYCL BLAS, unpacked from PyPI wheels into
# .sycl (nothing installed), for our libcublas's SYCL route
# (docs/library-backends.md); the libraries' build makes its plugin from them.
$(STAMPS)/sycl: $(STAMPS)/pip tools/sycl_root.sh
	tools/sycl_root.sh .sycl >/dev/null
	rm -rf .sycl/wheels
	@touch $@

# System packages: installed only when one is missing.
apt:
	@if ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
	  echo "== installing Debian packages: $(APT_PACKAGES)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMPS)/pip: $(PY) Makefile
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(PIP_PACKAGES)
	@mkdir -p $(STAMPS) && touch $@

# The native core (zmlir._native, zmlir-opt), rebuilt when a C++/TableGen/
# CMake input changes; scikit-build-core keeps its build tree in build/.
$(STAMPS)/build: $(STAMPS)/pip $(NATIVE_SOURCES)
	$(PY) -m pip install -q --no-build-isolation --no-deps \
	  --config-settings=cmake.define.ZMLIR_LLVM_ROOT=$(LLVM_ROOT) -e .
	@touch $@

# Our libcuda.so.1; its Python driver is loaded from the tree at run time, so
# only the exported API, the C launch fast path and the build recipe make it
# stale, and the passthrough's declarations, which the build writes out as
# backends/_cuda_backend_ffi.py (a stale one is parsed again at each cuInit).
$(LIBCUDA): $(STAMPS)/build zmlir/runtime/cuda/api.py zmlir/runtime/cuda/build.py \
            zmlir/runtime/cuda/fastpath.c zmlir/runtime/cuda/nvrtc_preload.c \
            zmlir/runtime/cuda/dlsym_preload.c zmlir/runtime/cuda/nvjitlink_preload.c \
            zmlir/runtime/cuda/jit_preload.h zmlir/runtime/cuda/arch_preload.c \
            zmlir/runtime/cuda/nvidia_exports.txt zmlir/runtime/backends/cuda_ffi.py
	$(PY) -m zmlir.runtime.cuda.build >/dev/null

# NVIDIA's headers (the nvidia-cublas and nvidia-cufft wheels), OpenBLAS
# (scipy-openblas32) and oneMKL (mkl, mkl-include); one build makes them all
# (and our cuRAND, where nvcc is; and the SYCL route's plugin, from .sycl).
$(CUBLAS) $(CUFFT) &: $(LIBCUDA) $(STAMPS)/sycl zmlir/libraries/build.py \
            $(wildcard zmlir/libraries/common/*) $(wildcard zmlir/libraries/cublas/*) \
            $(wildcard zmlir/libraries/cufft/*) $(wildcard zmlir/libraries/sycl/*)
	$(PY) -m zmlir.libraries.build >/dev/null

# Our cuRAND's kernels are compiled by nvcc: without it (said on stderr),
# no libcurand.so.10 of ours, and programs find NVIDIA's if anywhere.
$(CURAND): $(LIBCUDA) zmlir/libraries/build.py $(wildcard zmlir/libraries/common/*) \
            $(wildcard zmlir/libraries/curand/*)
	$(PY) -m zmlir.libraries.build --only libcurand.so.10 --allow-missing >/dev/null

demo: bootstrap
	$(PY) examples/demo.py

lit: bootstrap
	lit -sv test/lit

pytest: bootstrap
	$(PY) -m pytest test

test: bootstrap
	lit -s test/lit
	$(PY) -m pytest test

# Python through ruff, C++ through clang-format (a dry run: `make format` applies it).
lint: apt $(STAMPS)/pip
	$(PY) -m ruff check zmlir test examples bench tools
	$(CLANG_FORMAT) --dry-run -Werror $(CXX_SOURCES)

format: apt
	$(CLANG_FORMAT) -i $(CXX_SOURCES)

clean:
	rm -rf build $(STAMPS)
