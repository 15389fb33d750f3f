#!/usr/bin/env python3
"""Launch overhead with and without driver API tracing (issue 6).

Compiles an empty kernel with nvcc and times N back-to-back launches
(cudaLaunchKernel -> cuLaunchKernel, after a warm-up; the loop is timed by
the program itself with std::chrono, so process start and compilation are
not counted), reporting microseconds per launch:

  --driver zmlir  (default): on our runtime (`zmlir run`), without
                  ZMLIR_TRACE and with it. Tracing off is the driver's
                  normal path: one attribute test per call.
  --driver nvidia: on NVIDIA's driver directly, and under the interposer
                  (`zmlir trace`); needs no virtualenv, only python3 + cffi.

Writes bench/results/trace_overhead.json (zmlir) or
bench/results/trace_overhead_nvidia.json unless --out says otherwise. Not a
test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SOURCE = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void empty() {}
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  for (int i = 0; i < 20; ++i) empty<<<1, 1>>>();
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("FAIL sync\n"); return 1; }
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) empty<<<1, 1>>>();
  auto t1 = std::chrono::steady_clock::now();
  cudaError_t err = cudaDeviceSynchronize();
  auto t2 = std::chrono::steady_clock::now();
  if (err != cudaSuccess || cudaGetLastError() != cudaSuccess) { printf("FAIL\n"); return 1; }
  double launch = std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
  double total = std::chrono::duration<double, std::micro>(t2 - t0).count() / n;
  printf("{\"launches\": %d, \"us_per_launch\": %.3f, \"us_per_launch_incl_sync\": %.3f}\n",
         n, launch, total);
  return 0;
}
"""


def _import_tracing() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        import zmlir  # noqa: F401
    except Exception:
        for name in [m for m in sys.modules if m == "zmlir" or m.startswith("zmlir.")]:
            del sys.modules[name]
        package = types.ModuleType("zmlir")
        package.__path__ = [str(ROOT / "zmlir")]
        sys.modules["zmlir"] = package


def _run(cmd: list[str], env: dict[str, str]) -> dict:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n"
                           f"{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", choices=("zmlir", "nvidia"), default="zmlir")
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arch", default="sm_80")
    parser.add_argument("--out", help="result file")
    args = parser.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    tmp = Path(tempfile.mkdtemp(prefix="zmlir-bench-"))
    (tmp / "empty.cu").write_text(SOURCE)
    exe = tmp / "empty"
    subprocess.run([nvcc, f"-arch={args.arch}", str(tmp / "empty.cu"), "-o", str(exe)],
                   check=True, capture_output=True)
    trace = tmp / "trace.jsonl"
    base_env = dict(os.environ)
    base_env.pop("ZMLIR_TRACE", None)
    configs: dict[str, tuple[list[str], dict[str, str]]] = {}
    cmd = [str(exe), str(args.launches)]
    if args.driver == "zmlir":
        zmlir = [sys.executable, "-m", "zmlir.cli", "run", "--"]
        configs["tracing_off"] = (zmlir + cmd, base_env)
        configs["tracing_on"] = (zmlir + cmd, dict(base_env, ZMLIR_TRACE=str(trace)))
    else:
        _import_tracing()
        from zmlir.trace import interposer

        real = interposer.find_real_libcuda()
        if real is None:
            print("NVIDIA's libcuda.so.1 not found", file=sys.stderr)
            return 1
        libdir = tmp / "interposer"
        interposer.build(libdir)
        configs["nvidia_direct"] = (cmd, base_env)
        configs["nvidia_interposer"] = (cmd, dict(
            base_env, ZMLIR_REAL_LIBCUDA=real, ZMLIR_TRACE_INTERPOSER=str(trace),
            LD_LIBRARY_PATH=os.pathsep.join(p for p in (str(libdir),
                                                         base_env.get("LD_LIBRARY_PATH", ""))
                                            if p)))
    results: dict[str, dict] = {}
    for name, (command, env) in configs.items():
        runs = [_run(command, env) for _ in range(args.repeat)]
        per = [r["us_per_launch"] for r in runs]
        results[name] = {"us_per_launch_median": round(statistics.median(per), 3),
                         "us_per_launch_runs": per,
                         "us_per_launch_incl_sync_median": round(statistics.median(
                             r["us_per_launch_incl_sync"] for r in runs), 3)}
        print(f"{name}: {results[name]['us_per_launch_median']} us per launch", flush=True)
    keys = list(results)
    overhead = round(results[keys[1]]["us_per_launch_median"]
                     - results[keys[0]]["us_per_launch_median"], 3)
    record = {"driver": args.driver, "launches": args.launches, "repeat": args.repeat,
              "machine": platform.machine(), "cpus": os.cpu_count(),
              "results": results, "tracing_overhead_us_per_launch": overhead}
    if trace.exists():
        record["trace_lines"] = trace.read_bytes().count(b"\n")
    default = ROOT / "bench" / "results" / ("trace_overhead.json" if args.driver == "zmlir"
                                            else "trace_overhead_nvidia.json")
    out = Path(args.out) if args.out else default
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"tracing adds {overhead} us per launch; written to {out}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
