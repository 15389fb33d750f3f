#!/bin/sh
# The runtime benchmark on an NVIDIA machine (nvcc 13, NVIDIA's driver,
# python3 with numpy; no LLVM), unattended, from the repository root:
#
#   here:   python bench/runtime_bench.py prepare .device/runtime_bench
#           (and wheels of cffi, pycparser, zstandard, setuptools for its
#           python3 in .whl/, e.g. pip download --only-binary=:all:
#           --python-version 3.12 --platform manylinux2014_x86_64 -d .whl ...)
#   there:  sh bench/h200_runtime_bench.sh .device/runtime_bench
#           with .device and .whl carried.
#
# Builds our libcuda.so.1 against that machine's python3, then prints NVIDIA's
# driver vs zmlir's CUDA passthrough in µs per launch and their ratio, and the
# passthrough's warm module load; the JSON goes to $OUT (when set) and to
# bench/results/h200/runtime_passthrough.json.
set -eu
DIR=${1:-.device/runtime_bench}
PY=${PYTHON:-python3}
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl cffi pycparser zstandard setuptools \
        2>&1 | tail -2 || true
fi
"$PY" -m zmlir.runtime.cuda.build >/dev/null
"$PY" -c "import sys; print(sys.version.split()[0])" | sed 's/^/python3 /'
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$PY" bench/runtime_bench.py --real-driver "$DIR"
if [ -n "${OUT:-}" ]; then
    cp bench/results/h200/runtime_passthrough.json "$OUT/"
fi
