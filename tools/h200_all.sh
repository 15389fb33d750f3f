#!/bin/bash
# Every H200 measurement of the project in one device call (NVIDIA's driver, nvcc and
# python3 with numpy there; no LLVM). Prepare here, from the repository root:
#   python tools/capture_golden.py --prepare-nvptx .device/nvptx
#   python tools/run_programs_passthrough.py prepare .device/passthrough
#   python bench/runtime_bench.py prepare .device/runtime_bench
#   wheels of cffi, pycparser, zstandard and lz4 for Python 3.12 in .whl/ (pip download)
# then run `bash tools/h200_all.sh` there with .device and .whl carried. $OUT receives
# the golden data (golden_a/b.tgz: test/ptx/golden/*.npz and nvptx.json, zmlir's NVPTX
# verdicts), the passthrough program runs, the launch/load benchmark and their logs.
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
M="$OUT/misc.log"
python3 -m pip install -q --no-index --find-links .whl cffi pycparser zstandard lz4 >"$M" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$M"
python3 --version >> "$M"
if [ "${SKIP_CAPTURE:-0}" != 1 ]; then
  mkdir -p /tmp/golden
  timeout 300 python3 tools/capture_golden.py /tmp/golden --nvptx .device/nvptx > "$OUT/capture.log" 2>&1
  echo "capture rc=$?" >> "$OUT/capture.log"
  (cd /tmp/golden && ls | sort > /tmp/all.txt && split -n l/2 /tmp/all.txt /tmp/part. && tar czf "$OUT/golden_a.tgz" -T /tmp/part.aa && tar czf "$OUT/golden_b.tgz" -T /tmp/part.ab)
fi
timeout 60 python3 tools/probe_brkpt.py "$OUT/brkpt.json" > "$OUT/brkpt.log" 2>&1
python3 -m zmlir.runtime.cuda.build >> "$M" 2>&1 || echo "libcuda build failed rc=$?" >> "$M"
timeout 200 python3 tools/run_programs_passthrough.py run .device/passthrough --prebuilt --python python3 > "$OUT/programs.log" 2>&1
echo "programs rc=$?" >> "$OUT/programs.log"
timeout 120 sh bench/h200_runtime_bench.sh .device/runtime_bench > "$OUT/bench.log" 2>&1
echo "bench rc=$?" >> "$OUT/bench.log"
mkdir -p /tmp/extra; cp -r .device/passthrough/logs /tmp/extra/ 2>/dev/null; cp bench/results/h200/runtime_passthrough.json /tmp/extra/ 2>/dev/null
tar czf "$OUT/extra.tgz" -C /tmp/extra .
tail -n 3 "$OUT/capture.log"; tail -n 3 "$OUT/programs.log"; tail -n 4 "$OUT/bench.log"
