#!/bin/sh
# cuda-samples through zmlir's CUDA passthrough on an NVIDIA machine (nvcc 13,
# NVIDIA's driver, python3; no LLVM), unattended, from the repository root:
#
#   here:   python bench/cuda_samples.py build CHECKOUT OUT --cuda-libs DIR
#           python bench/cuda_samples.py nvptx OUT --gpu sm_90
#           then carry OUT (binaries, data, OUT/sm_75/nvptx) as a tarball
#           made with `tar -C $(dirname OUT) -cJf TARBALL $(basename OUT)`,
#           and wheels of cffi, pycparser, zstandard, lz4, lark, setuptools
#           for that machine's python3 in .whl/
#   there:  sh bench/h200_cuda_samples.sh TARBALL [ONLY]
#
# Unpacks the built samples, builds our libcuda.so.1 against that machine's
# python3, and runs every sample (or the comma-separated ONLY) through the
# passthrough with the NVPTX compiled here; the results JSON goes to $OUT.
set -eu
TARBALL=$1
ONLY=${2:-}
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/zmlir-samples}
mkdir -p "$WORK"
tar -xf "$TARBALL" -C "$WORK"
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl cffi pycparser zstandard lz4 lark \
        setuptools 2>&1 | tail -2 || true
fi
"$PY" -m zmlir.runtime.cuda.build >/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
nvcc --version | tail -1
# NVRTC from the machine's toolkit: the samples' DT_RPATH names this machine's wheel.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUTDIR=$(ls -d "$WORK"/*/ | head -1)
"$PY" bench/cuda_samples.py run "$OUTDIR" --backend cuda --jobs 8 --timeout 240 \
    ${ONLY:+--only "$ONLY"} --results "${OUT:-/tmp}/h200_passthrough_sm75.md" || true
