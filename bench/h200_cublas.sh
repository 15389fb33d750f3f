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
# 3. Throughput (bench/cublas_sgemm.cu): cublasSgemm and cublasGemmEx (bf16)
#    of square sizes $GEMM_SIZES, natively and through zmlir in the same
#    run; GFLOP/s, best of 5 rounds of back-to-back GEMMs each timed to a
#    synchronize; ratio = zmlir / native (issue 18's goal: >= 0.95).
#    GEMM_SIZES= (empty) skips it; PROGRAMS_TOO=0 skips 1. and 2.
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
PROGRAMS=""
if [ "${PROGRAMS_TOO:-1}" != 0 ]; then
    build cublas_api test/libraries/cublas/cublas_api.cu
    build cublaslt_matmul test/libraries/cublas/cublaslt_matmul.cu
    PROGRAMS="cublas_api cublaslt_matmul"
fi
GEMM_SIZES=${GEMM_SIZES-1024 4096 8192}
[ -n "$GEMM_SIZES" ] && build cublas_sgemm bench/cublas_sgemm.cu
if [ -n "$SAMPLES" ] && [ "${PROGRAMS_TOO:-1}" != 0 ]; then
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
    for type in f32 bf16; do
        for n in $GEMM_SIZES; do
            # Back-to-back GEMMs of about 8 ms (f32) a round at H200 speeds.
            k=400; [ "$type" = bf16 ] && k=1600
            calls=$(( k * 1073741824 / (n * n * n) ))
            [ "$calls" -ge 1 ] || calls=1
            native=$(cd "$BUILD" && LD_LIBRARY_PATH="$NV" ./cublas_sgemm "$n" 5 "$type" "$calls" \
                     | awk '{print $3}')
            zmlir=$(cd "$BUILD" && LD_LIBRARY_PATH="$NV" ZMLIR_BACKEND=cuda \
                    "$PY" -m zmlir.cli run -- ./cublas_sgemm "$n" 5 "$type" "$calls" \
                    | awk '/^(sgemm|gemmex)/ {print $3}')
            echo "gemm $type n=$n calls=$calls GFLOP/s native ${native:-failed}" \
                 "zmlir ${zmlir:-failed}" \
                 "ratio $(awk -v a="${zmlir:-0}" -v b="${native:-0}" \
                          'BEGIN {if (b > 0) printf "%.3f", a / b; else print "-"}')"
        done
    done
    ls -la "$LIBDIR"
} 2>&1 | tee "${OUT:-$BUILD}/h200_cublas.txt"
