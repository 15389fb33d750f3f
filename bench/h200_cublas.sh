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
# 2. zmlir's passthrough: the same executables under `zmlir run`: one line
#    saying why NVIDIA's libcublas cannot run there (NVIDIA's driver crashes
#    in a link-map namespace of its own, zmlir/runtime/backends/cuda.py), and
#    cublasCreate fails with CUBLAS_STATUS_NOT_SUPPORTED (exit != 0).
# Output goes to stdout and, when set, $OUT/h200_cublas.txt.
set -u
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
WHEEL=$("$PY" -c "from zmlir.libraries.build import nvidia_wheel_dir as w; print(w())")
NV="$WHEEL/lib"
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
args() { [ "$1" = cublas_api ] && echo --nvidia; }
{
    for p in $PROGRAMS; do
        echo "== native: $p"
        (cd "$BUILD" && LD_LIBRARY_PATH="$NV" ./"$p" $(args "$p") > "$p.native.log" 2>&1
         echo "exit $?"; tail -60 "$p.native.log")
    done
    echo "== passthrough: cublaslt_matmul (expected: one line, then a failure)"
    (cd "$BUILD" && ZMLIR_BACKEND=cuda "$PY" -m zmlir.cli run -- ./cublaslt_matmul \
         > plain.log 2>&1; echo "exit $?"; tail -5 plain.log)
    ls -la "$LIBDIR"
} 2>&1 | tee "${OUT:-$BUILD}/h200_cublas.txt"
