#!/bin/sh
# Kernel speed, nvcc's machine code against zmlir's, on an NVIDIA machine
# (nvcc 13, NVIDIA's driver, python3; no LLVM), unattended, from the
# repository root:
#
#   here:   python bench/kernel_speed.py prepare .device/ks
#           (llm.c's dev/cuda programs built -arch=sm_90, the chosen
#           cuda-samples built -arch=sm_90, their PTX compiled to NVPTX for
#           sm_90; wheels of cffi, pycparser, zstandard, lz4, lark for that
#           machine's python3 in .whl/)
#   there:  sh bench/h200_kernel_speed.sh .device/ks/kernel_speed.tar.xz [SECONDS [PLAN]]
#           with .device/ks/kernel_speed.tar.xz and .whl carried
#   here:   python bench/kernel_speed.py parse LOG...  (each call's kernel_speed_h200.log)
#
# Runs each program of the plan twice, one after the other, never two at a
# time: natively (NVIDIA's driver, the sm_90 SASS nvcc built) and under
# `zmlir run` through the passthrough (ZMLIR_BACKEND=cuda, its compute_90 PTX
# compiled by zmlir, from the NVPTX cache made here; ZMLIR_LOG says so per
# module). Programs not started within SECONDS (default 400) are listed as
# not run; PLAN (a file of the tarball's plan.txt lines) runs those instead.
# (`python bench/kernel_speed.py remaining PLAN LOG...` writes that file.)
# WARM="SUITE ..." (e.g. "samples events") runs each program of those suites
# under zmlir once, untimed, before its timed run: the JIT caches (NVIDIA's
# of our PTX, ours) are then warm, as on any run after a program's first, so
# a sample timing its first launch times the launch, not the JIT (nvcc put
# SASS in the native side's binary). llm.c's programs time repetitions.
# ROUNDS=N runs each program N times, natively and under zmlir alternating,
# and the parse takes each time's median: for PLANs of programs whose timed
# region is short (a single run of a 0.25 ms sort moves by 0.07 ms).
# Everything the programs printed goes to $OUT/kernel_speed_h200.log.
set -u
TARBALL=${1:?usage: sh bench/h200_kernel_speed.sh TARBALL [SECONDS [PLAN]]}
BUDGET=${2:-400}
PLAN=${3:-}
WARM=" ${WARM:-} "
ROUNDS=${ROUNDS:-1}
PY=${PYTHON:-python3}
REPO=$(pwd)
WORK=${WORK:-/tmp/zmlir-kernel-speed}
DEST=${OUT:-$WORK}
mkdir -p "$WORK" "$DEST"
tar -xf "$TARBALL" -C "$WORK" || exit 1
ROOT=$WORK/kernel_speed
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl cffi pycparser zstandard lz4 lark \
        setuptools 2>&1 | tail -2 || true
fi
"$PY" -m zmlir.runtime.cuda.build >/dev/null || exit 1
LOG=$DEST/kernel_speed_h200.log
{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
    nvcc --version | tail -1
} >"$LOG" 2>&1
# NVIDIA's cuBLAS for the native runs (llm.c's programs link libcublas.so.13).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TAB=$(printf '\t')
# The GPU's clocks up before the first timed run (its output is not kept).
(cd "$ROOT/samples/matrixMul" && ./matrixMul) >/dev/null 2>&1 </dev/null
start=$(date +%s)
while IFS="$TAB" read -r suite folder name args; do
    if [ $(($(date +%s) - start)) -gt "$BUDGET" ]; then
        echo "not run (time limit): $suite $name $args" >>"$LOG"
        continue
    fi
    case $WARM in *" $suite "*)
        t0=$(date +%s.%N)
        (cd "$ROOT/$folder" && ZMLIR_BACKEND=cuda ZMLIR_NVPTX_CACHE="$ROOT/nvptx" \
            PYTHONPATH="$REPO" timeout 120 "$PY" -m zmlir.cli run -- "./$name" $args) \
            >/dev/null 2>&1 </dev/null
        rc=$?
        t1=$(date +%s.%N)
        printf '=== warm-up %s\t%s%s rc=%d seconds=%.1f\n\n' "$suite" "$name" \
            "${args:+$TAB$args}" "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" >>"$LOG" ;;
    esac
    for side in $(seq "$ROUNDS" | sed 's/.*/native zmlir/'); do
        t0=$(date +%s.%N)
        if [ "$side" = native ]; then
            # Eager, as zmlir tells the application's runtime (429aea5): else
            # a sample timing its first launch times NVIDIA's lazy load of the
            # module natively and not under zmlir (shfl_scan 3.7, 2026-12-04).
            (cd "$ROOT/$folder" && CUDA_MODULE_LOADING=EAGER timeout 120 "./$name" $args) \
                >"$WORK/out" 2>&1 </dev/null
        else
            (cd "$ROOT/$folder" && ZMLIR_BACKEND=cuda ZMLIR_NVPTX_CACHE="$ROOT/nvptx" ZMLIR_LOG=1 \
                PYTHONPATH="$REPO" timeout 120 "$PY" -m zmlir.cli run -- "./$name" $args) \
                >"$WORK/out" 2>&1 </dev/null
        fi
        rc=$?
        t1=$(date +%s.%N)
        printf '=== %s %s\t%s%s rc=%d seconds=%.1f\n' "$side" "$suite" "$name" \
            "${args:+$TAB$args}" "$rc" "$(awk "BEGIN { print $t1 - $t0 }")" >>"$LOG"
        if [ "$(wc -c <"$WORK/out")" -le 20000 ]; then
            cat "$WORK/out" >>"$LOG"
        else  # a chatty program (validation dumps): its start, our lines, its end
            { head -c 4000 "$WORK/out"; echo; echo "[... cut ...]"
              grep -a '^zmlir:' "$WORK/out" | head -40; tail -c 14000 "$WORK/out"; } >>"$LOG"
        fi
        echo >>"$LOG"
    done
done <"${PLAN:-$ROOT/plan.txt}"
echo "runs took $(($(date +%s) - start)) s" >>"$LOG"
tail -1 "$LOG"
