"""Runtime benchmark: launch overhead (µs per cuLaunchKernel of an empty
kernel) and warm-cache module load time, on zmlir's driver.

    python bench/runtime_bench.py [--real-driver]

With --real-driver (on a machine with an NVIDIA GPU) the same program also
runs on NVIDIA's driver and through zmlir's CUDA passthrough backend, and the
ratio passthrough / real is printed. Results go to bench/results/runtime.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LAUNCHES = 2000


def launch_overhead(exe: Path, env: dict[str, str], runner: list[str]) -> float:
    out = subprocess.run([*runner, str(exe), str(LAUNCHES)], capture_output=True, text=True,
                         env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{runner} {exe}: {out.stderr.strip()[-300:]}")
    return float(out.stdout.strip().splitlines()[-1])


_LOAD = """
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
ptx = open(sys.argv[2], "rb").read() + b"\\0"
mod = ctypes.c_void_p()
start = time.perf_counter()
assert lib.cuModuleLoadData(ctypes.byref(mod), ptx) == 0
print((time.perf_counter() - start) * 1000)
"""


def warm_load_ms(libdir: str, ptx: Path, cache_dir: str) -> tuple[float, float]:
    """(cold, warm) cuModuleLoadData time in ms, each in a fresh process."""
    env = {**os.environ, "ZMLIR_CACHE_DIR": cache_dir}
    times = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _LOAD, libdir, str(ptx)], env=env,
                             capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times[0], times[1]


def main() -> int:
    real = "--real-driver" in sys.argv
    results: dict[str, object] = {"launches": LAUNCHES}
    with tempfile.TemporaryDirectory(prefix="zmlir-bench-") as tmp_name:
        tmp = Path(tmp_name)
        exe = tmp / "launch_overhead"
        subprocess.run(["nvcc", "-arch=sm_80", str(HERE / "launch_overhead.cu"), "-o", str(exe)],
                       check=True, capture_output=True)
        zmlir_run = [sys.executable, "-m", "zmlir.cli", "run", "--"]
        env = dict(os.environ)
        us = launch_overhead(exe, env, zmlir_run)
        results["zmlir_default_backend_us_per_launch"] = us
        print(f"launch overhead, zmlir (default backend): {us:.1f} µs/launch")
        if real:
            native = launch_overhead(exe, env, [])
            passthrough = launch_overhead(exe, {**env, "ZMLIR_BACKEND": "cuda"}, zmlir_run)
            results.update(real_driver_us_per_launch=native,
                           passthrough_us_per_launch=passthrough,
                           passthrough_over_real=passthrough / native)
            print(f"launch overhead, NVIDIA driver: {native:.1f} µs/launch; passthrough: "
                  f"{passthrough:.1f} µs/launch; ratio {passthrough / native:.2f}")
        libdir = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"],
                                capture_output=True, text=True, check=True).stdout.strip()
        ptx = tmp / "k.ptx"
        subprocess.run(["nvcc", "-ptx", "-arch=sm_80", str(HERE.parent / "test" / "cuda" /
                                                            "matmul_tiled.cu"), "-o", str(ptx)],
                       check=True)
        cold, warm = warm_load_ms(libdir, ptx, str(tmp / "cache"))
        results.update(module_load_cold_ms=cold, module_load_warm_ms=warm)
        print(f"cuModuleLoadData of matmul_tiled: cold {cold:.1f} ms, warm cache {warm:.2f} ms")
    out = HERE / "results" / "runtime.json"
    out.parent.mkdir(exist_ok=True)
    results["when"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
