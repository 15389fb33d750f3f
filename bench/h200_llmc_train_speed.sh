#!/bin/sh
# llm.c's train_gpt2.cu (bf16, -e d6) natively and through zmlir's CUDA
# passthrough on an NVIDIA machine (nvcc 13, NVIDIA's driver and cuBLAS,
# python3; no LLVM), from the repository root:
#
#   here:   python bench/llmc_train_speed.py prepare /work/src/llm.c .device/lts
#   there:  sh bench/h200_llmc_train_speed.sh .device/lts   (carry it and .whl)
#   here:   python bench/llmc_train_speed.py parse $OUT/llmc_train_speed.log ...
#
# One untimed run under zmlir first (NVIDIA's JIT cache of our PTX warm, as
# on any run after a program's first), then each batch shape three times on each
# side, alternating.
set -u
DIR=$(cd "${1:?usage: sh bench/h200_llmc_train_speed.sh DIR}" && pwd)
PY=${PYTHON:-python3}
REPO=$(pwd)
DEST=${OUT:-/tmp/zmlir-llmc-train-speed}
mkdir -p "$DEST"
LOG=$DEST/llmc_train_speed.log
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl cffi pycparser zstandard lz4 lark \
        setuptools 2>&1 | tail -2 || true
fi
"$PY" -m zmlir.runtime.cuda.build >/dev/null || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
WORK=$(mktemp -d)
cd "$WORK" || exit 1
EXE=$DIR/train_gpt2_bf16
COMMON="-e d6 -i $DIR/inputs/train.bin -j $DIR/inputs/val.bin -v 1000 -m 1 -s 0 -u 10"
zmlir() {
    env ZMLIR_BACKEND=cuda ZMLIR_NVPTX_CACHE="$DIR/nvptx" PYTHONPATH="$REPO" \
        timeout 300 "$PY" -m zmlir.cli run -- "$@"
}
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    zmlir "$EXE" $COMMON -b 4 -t 64 -x 2 >/dev/null 2>&1 || echo "warm-up run failed"
    for shape in "-b 4 -t 64 -x 40" "-b 32 -t 1024 -x 30"; do
        for round in 1 2 3; do
            echo "=== native $shape"
            CUDA_MODULE_LOADING=EAGER timeout 300 "$EXE" $COMMON $shape 2>&1 | grep "^step\|rror"
            echo "=== zmlir $shape"
            zmlir "$EXE" $COMMON $shape 2>&1 | grep "^step\|rror\|^zmlir"
        done
    done
} >"$LOG" 2>&1
echo "written $LOG"
