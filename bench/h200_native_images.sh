#!/bin/sh
# NVIDIA machine code through zmlir's passthrough, on an NVIDIA machine (nvcc
# 13, NVIDIA's driver, python3 with cffi/zstandard/lz4; no LLVM), from the
# repository root:
#
#   sh bench/h200_native_images.sh [GPU_ARCH]      (default sm_90)
#
# Our test programs (test/cuda/programs) built with SASS only
# (-gencode arch=compute_XX,code=sm_XX: no PTX at all), run natively and
# under `zmlir run` with ZMLIR_BACKEND=cuda: zmlir's driver loads the
# machine code as it is (zmlir/runtime/cuda/native.py) and keeps its own
# objects in front of NVIDIA's driver. Expected: the same exit status and
# output. Output goes to stdout and, when set, $OUT/h200_native_images.txt.
set -u
# zmlir from this checkout, whatever folder a program runs in.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
ARCH=${1:-sm_90}
BUILD=${BUILD:-/tmp/zmlir-native-h200}
PROGRAMS=${PROGRAMS:-"vector_add struct_by_value kernel_by_value_params matmul_shared
    constant_memory shared_memory_size streams_events reduction scan transpose
    warp_divergence histogram multi_kernel device_functions"}
mkdir -p "$BUILD"
"$PY" -m zmlir.runtime.cuda.build >/dev/null || exit 1
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    same=0 total=0
    for p in $PROGRAMS; do
        src=test/cuda/programs/$p.cu
        [ -f "$src" ] || { echo "MISSING $p"; continue; }
        nvcc -gencode "arch=compute_${ARCH#sm_},code=$ARCH" -Itest/cuda/programs "$src" \
            -o "$BUILD/$p" || { echo "BUILD-FAILED $p"; continue; }
        total=$((total + 1))
        (cd "$BUILD" && ./"$p" > "$p.native.log" 2>&1; echo "exit $?" >> "$p.native.log")
        (cd "$BUILD" && ZMLIR_BACKEND=cuda "$PY" -m zmlir.cli run -- ./"$p" \
             > "$p.zmlir.all" 2>&1; echo "exit $?" >> "$p.zmlir.all")
        grep -v "^zmlir" "$BUILD/$p.zmlir.all" > "$BUILD/$p.zmlir.log"
        if cmp -s "$BUILD/$p.native.log" "$BUILD/$p.zmlir.log"; then
            same=$((same + 1)); echo "SAME $p ($(tail -1 "$BUILD/$p.native.log"))"
        else
            echo "DIFFERENT $p"
            echo "-- native:"; tail -8 "$BUILD/$p.native.log"
            echo "-- zmlir:"; tail -15 "$BUILD/$p.zmlir.all"
        fi
    done
    echo "native images: $same of $total the same natively and through zmlir"
} 2>&1 | tee "${OUT:-$BUILD}/h200_native_images.txt"
