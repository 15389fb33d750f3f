#!/bin/sh
# Our libcublas/libcublasLt through the CUDA passthrough, against NVIDIA's own,
# on an NVIDIA machine (nvcc 13, NVIDIA's driver, python3, gcc; no LLVM),
# unattended, from the repository root:
#
#   here:   pip download --only-binary=:all: --python-version 3.12 \
#             --platform manylinux2014_x86_64 -d .whl cffi pycparser zstandard \
#             setuptools 'nvidia-cublas==13.0.*' scipy-openblas32
#   there:  sh bench/h200_cublas.sh [CUDA_SAMPLES_CHECKOUT]   with .whl carried
#
# 1. NVIDIA's cuBLAS natively: our test programs (test/libraries/cublas/) and
#    cuda-samples' simpleCUBLAS, matrixMulCUBLAS, batchCUBLAS linked with
#    NVIDIA's libraries (the reference: every line PASS).
# 2. zmlir's passthrough: the same executables under `zmlir run`: our
#    libcublas hands each call to NVIDIA's (zmlir/libraries/common/route.c),
#    which runs on zmlir's driver; its kernels are NVIDIA's machine code for
#    the GPU, loaded as it is (zmlir/runtime/cuda/native.py). Expected: the
#    same exit status and result lines as natively.
# Output goes to stdout and, when set, $OUT/h200_cublas.txt.
set -u
# zmlir from this checkout, whatever folder a program runs in.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
SAMPLES=${1:-}
BUILD=${BUILD:-/tmp/zmlir-cublas-h200}
mkdir -p "$BUILD"
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl cffi pycparser zstandard setuptools \
        'nvidia-cublas==13.0.*' scipy-openblas32 2>&1 | tail -2 || true
fi
"$PY" -m zmlir.runtime.cuda.build >/dev/null || exit 1
"$PY" -m zmlir.libraries.build --allow-missing >/dev/null || exit 1
LIBDIR=$("$PY" -m zmlir.cli libdir)
# NVIDIA's cuBLAS: the nvidia-cublas wheel's, else the toolkit's.
WHEEL=$("$PY" -c "from zmlir.libraries.build import nvidia_wheel_dir as w; print(w() or '')")
WHEEL=${WHEEL:-${CUDA_HOME:-/usr/local/cuda}}
NV="$WHEEL/lib"
[ -d "$WHEEL/lib64" ] && NV="$WHEEL/lib64"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
# Linked with NVIDIA's libcublas (its soname, libcublas.so.13, is ours too).
build() {  # build NAME SOURCES...
    name=$1; shift
    nvcc -arch=sm_90 -std=c++17 -I"$WHEEL/include" ${SAMPLES:+-I"$SAMPLES/Common"} "$@" \
        -o "$BUILD/$name" -L"$NV" -l:libcublas.so.13 -l:libcublasLt.so.13
}
build cublas_api test/libraries/cublas/cublas_api.cu
build cublaslt_matmul test/libraries/cublas/cublaslt_matmul.cu
PROGRAMS="cublas_api cublaslt_matmul"
if [ -n "$SAMPLES" ]; then
    L="$SAMPLES/Samples/4_CUDA_Libraries"
    build simpleCUBLAS "$L/simpleCUBLAS/simpleCUBLAS.cpp"
    build matrixMulCUBLAS "$L/matrixMulCUBLAS/matrixMulCUBLAS.cpp"
    build batchCUBLAS "$L/batchCUBLAS/batchCUBLAS.cpp"
    PROGRAMS="$PROGRAMS simpleCUBLAS matrixMulCUBLAS batchCUBLAS"
fi
args() { case "$1" in cublas_api|cublaslt_matmul) echo --nvidia;; esac; }
{
    for p in $PROGRAMS; do
        echo "== native: $p"
        (cd "$BUILD" && LD_LIBRARY_PATH="$NV" ./"$p" $(args "$p") > "$p.native.log" 2>&1
         echo "exit $?"; tail -60 "$p.native.log")
    done
    for p in $PROGRAMS; do
        echo "== passthrough: $p"
        (cd "$BUILD" && LD_LIBRARY_PATH="$NV" ZMLIR_BACKEND=cuda ZMLIR_LOG=${ZMLIR_LOG:-} \
             "$PY" -m zmlir.cli run -- \
             ./"$p" $(args "$p") > "$p.zmlir.log" 2>&1
         echo "exit $?"; tail -60 "$p.zmlir.log")
        # The lines that say a result, natively and through zmlir.
        grep -iE "pass|fail|error|result|match" "$BUILD/$p.native.log" > "$BUILD/$p.n" || true
        grep -iE "pass|fail|error|result|match" "$BUILD/$p.zmlir.log" | grep -v "^zmlir" \
            > "$BUILD/$p.z" || true
        if cmp -s "$BUILD/$p.n" "$BUILD/$p.z"; then echo "SAME $p"; else echo "DIFFERENT $p"; fi
    done
    ls -la "$LIBDIR"
} 2>&1 | tee "${OUT:-$BUILD}/h200_cublas.txt"
