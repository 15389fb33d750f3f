#!/bin/sh
# NVIDIA's cuFFT against our test program, on an NVIDIA machine (nvcc and
# cuFFT of the CUDA toolkit in /usr/local/cuda; no network), from the
# repository root:
#
#   sh bench/h200_cufft.sh
#
# 1. Native: test/libraries/cufft/cufft_api.cu built with nvcc against the
#    toolkit's cufft.h and linked with NVIDIA's libcufft (the reference:
#    every case PASS, "ALL PASSED"; its NOTE lines are NVIDIA's answers to
#    what our libcufft answers without NVIDIA's word: compare them with
#    bench/results/cufft.md).
# 2. zmlir's passthrough: the same executable under `zmlir run`, NVIDIA's
#    cuFFT running on zmlir's driver, its machine code loaded as it is
#    (runtime/cuda/native.py): through our libcufft, which hands each call
#    to NVIDIA's (libraries/common/route.c), where ours could be built (it
#    needs oneMKL), else directly. Expected: the same lines as natively.
# 3. Throughput (bench/cufft_exec.cu, the transforms of bench/cufft_cases.h):
#    NVIDIA's cuFFT natively and through zmlir in the same run, ms per
#    transform (best of 5 rounds of $FFT_REPS back to back); ratio =
#    native ms / zmlir ms, a throughput ratio (issue 18's goal: >= 0.95).
#    FFT_REPS=0 skips it.
# Output goes to stdout and, when set, $OUT/h200_cufft.txt.
set -u
# zmlir from this checkout, whatever folder a program runs in.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
CUDA=${CUDA_HOME:-/usr/local/cuda}
BUILD=${BUILD:-/tmp/zmlir-cufft-h200}
mkdir -p "$BUILD"
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    echo "== native: cufft_api against $CUDA/lib64/libcufft.so.12"
    nvcc -arch=sm_90 -I"$CUDA/include" test/libraries/cufft/cufft_api.cu -o "$BUILD/cufft_api" \
        -L"$CUDA/lib64" -l:libcufft.so.12 -Xlinker -rpath -Xlinker "$CUDA/lib64" || exit 1
    (cd "$BUILD" && ./cufft_api > native.log 2>&1; echo "exit $?"; cat native.log)
    echo "== passthrough"
    "$PY" -m zmlir.runtime.cuda.build >/dev/null &&
        "$PY" -m zmlir.libraries.build --allow-missing >/dev/null
    LIBDIR=$("$PY" -m zmlir.cli libdir)
    [ -e "$LIBDIR/libcufft.so.12" ] || echo "our libcufft.so.12 is not built here (no oneMKL)"
    (cd "$BUILD" && ZMLIR_BACKEND=cuda "$PY" -m zmlir.cli run -- ./cufft_api \
         > passthrough.log 2>&1; echo "exit $?"; tail -40 passthrough.log)
    if grep -v "^zmlir" "$BUILD/passthrough.log" | cmp -s - "$BUILD/native.log"; then
        echo "SAME cufft_api"
    else
        echo "DIFFERENT cufft_api"
    fi
    reps=${FFT_REPS:-100}
    if [ "$reps" != 0 ]; then
        nvcc -arch=sm_90 -I"$CUDA/include" -Ibench bench/cufft_exec.cu -o "$BUILD/cufft_exec" \
            -L"$CUDA/lib64" -l:libcufft.so.12 -Xlinker -rpath -Xlinker "$CUDA/lib64" || exit 1
        (cd "$BUILD" && ./cufft_exec "$reps" 5 > exec.native.txt; echo "native exit $?")
        (cd "$BUILD" && ZMLIR_BACKEND=cuda "$PY" -m zmlir.cli run -- ./cufft_exec "$reps" 5 \
             > exec.zmlir.txt; echo "zmlir exit $?")
        # "<case> <plan ms> <ms per transform>" from each; one line per case.
        awk 'NR == FNR {plan[$1] = $2; ms[$1] = $3; next}
             ($1 in ms) && $3 > 0 {printf "fft %s plan ms native %s zmlir %s; ms per transform native %s zmlir %s ratio %.3f\n",
                                   $1, plan[$1], $2, ms[$1], $3, ms[$1] / $3}' \
            "$BUILD/exec.native.txt" "$BUILD/exec.zmlir.txt"
    fi
} 2>&1 | tee "${OUT:-$BUILD}/h200_cufft.txt"
