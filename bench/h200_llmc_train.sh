#!/bin/sh
# llm.c's GPT-2 trainers (train_gpt2_fp32.cu, train_gpt2.cu in bf16) on an NVIDIA
# machine with NVIDIA's driver and libraries: the reference for
# bench/llmc_train.py's run on zmlir. Needs nvcc 13 and CUDA_HOME (default
# /usr/local/cuda, with libcublas and libcublasLt), python3 (standard library
# only: the script writes the same inputs, byte for byte, as on zmlir's side).
# llm.c is not ours: carry a copy of its trainers, from the repository root:
#
#   here:   mkdir -p .device/llmc && cp -r /work/src/llm.c/llmc \
#             /work/src/llm.c/train_gpt2.cu /work/src/llm.c/train_gpt2_fp32.cu .device/llmc/
#   there:  sh bench/h200_llmc_train.sh .device/llmc        (carry .device/llmc)
#
# Writes $OUT/llmc_train_h200.{json,md,txt}; then, here:
#   python bench/llmc_train.py /work/src/llm.c WORK --compare llmc_train_h200.json
set -u
PY=${PYTHON:-python3}
LLMC=${1:?usage: sh bench/h200_llmc_train.sh LLMC_CHECKOUT}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
export LD_LIBRARY_PATH="$CUDA_HOME/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
WORK=${WORK:-/tmp/zmlir-llmc-train-h200}
DEST=${OUT:-$WORK}
mkdir -p "$WORK" "$DEST"
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
    nvcc --version | tail -1
    ls "$CUDA_HOME"/lib64/libcublas*.so* "$CUDA_HOME"/include/cublasLt.h
    "$PY" bench/llmc_train.py "$LLMC" "$WORK" --native --arch sm_80 \
        --results "$DEST/llmc_train_h200.md"
    echo "exit $?"
    for t in train_gpt2_fp32 train_gpt2_bf16 train_gpt2_bf16_d6; do
        echo "== $t output (tail)"
        tail -25 "$WORK/run_$t/output.txt" 2>/dev/null
    done
} 2>&1 | tee "$DEST/llmc_train_h200.txt"
