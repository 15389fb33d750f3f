"""SGEMM GFLOP/s on this CPU: the host BLAS called directly, and through our
libcublas (cublasSgemm under `zmlir run`), with the ratio between the two.

  python bench/blas_sgemm.py [--sizes 1024,2048] [--reps 5] [--rounds 3]
      [--mkl LIBMKL_RT] [--json bench/results/blas_sgemm.json]

Each size is measured in --rounds alternating rounds (direct, ours, direct,
...), each the best of --reps calls, and the best round is kept: on a shared
machine a round that ran during another job's burst does not decide.

Why OpenBLAS: with --mkl (a libmkl_rt.so.* from the `mkl` wheel; needs
libgomp, MKL_THREADING_LAYER=GNU is set) it also measures oneMKL's
cblas_sgemm in the same run, the comparison zmlir/libraries/build.py's choice
rests on. Direct calls run in this process (numpy arrays, ctypes); ours in a
CUDA program (bench/cublas_sgemm.cu, built with nvcc) whose device memory is
host memory on the OpenCL CPU backend.

With --sycl, ours also under ZMLIR_LIBRARY_ROUTE=sycl (oneMKL's SYCL BLAS on
the OpenCL CPU device, in our driver's context: docs/library-backends.md;
needs ZMLIR_SYCL_ROOT and libzmlir_sycl_blas.so built), as "cublasSgemm_sycl".
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
_COL_MAJOR, _NO_TRANS = 102, 111


def direct_gflops(library: str, symbol: str, n: int, reps: int) -> float:
    sgemm = getattr(ctypes.CDLL(library), symbol)
    pointer = ctypes.c_void_p
    sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, pointer, ctypes.c_int, pointer,
                                           ctypes.c_int, ctypes.c_float, pointer, ctypes.c_int]
    a = np.asfortranarray(np.arange(n * n, dtype=np.float32).reshape(n, n) % 17 / 17)
    c = np.zeros((n, n), np.float32, order="F")
    best = float("inf")
    for rep in range(reps + 1):  # the first is a warm-up
        start = time.perf_counter()
        sgemm(_COL_MAJOR, _NO_TRANS, _NO_TRANS, n, n, n, 1.0, a.ctypes.data, n, a.ctypes.data, n,
              0.0, c.ctypes.data, n)
        if rep:
            best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def _openblas() -> str:
    import scipy_openblas32 as openblas

    return str(Path(openblas.get_lib_dir()) / f"lib{openblas.get_library()}.so")


def ours_gflops(n: int, reps: int, build: Path, route: str = "host") -> float:
    exe = build / "cublas_sgemm"
    if not exe.exists():
        from zmlir.libraries.build import nvidia_wheel_dir

        wheel = nvidia_wheel_dir()
        libdir = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(["nvcc", "-O2", "-arch=sm_80", f"-I{wheel / 'include'}",
                        str(HERE / "cublas_sgemm.cu"), "-o", str(exe), f"-L{libdir}", "-lcublas"],
                       check=True)
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), str(n),
                          str(reps)], check=True, capture_output=True, text=True,
                         env={**os.environ, "ZMLIR_LIBRARY_ROUTE": route}).stdout
    return float(out.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,2048")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mkl", help="libmkl_rt.so.* to compare with")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--sycl", action="store_true",
                        help="ours on the SYCL route too (ZMLIR_LIBRARY_ROUTE=sycl)")
    args = parser.parse_args()
    if args.mkl:
        os.environ.setdefault("MKL_THREADING_LAYER", "GNU")
        ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    rows = []
    with tempfile.TemporaryDirectory(prefix="zmlir-sgemm-") as tmp:
        for n in map(int, args.sizes.split(",")):
            row = {"n": n, "openblas": 0.0, "cublasSgemm": 0.0}
            for _ in range(args.rounds):
                row["openblas"] = max(row["openblas"], round(direct_gflops(
                    _openblas(), "scipy_cblas_sgemm", n, args.reps), 1))
                if args.mkl:
                    row["mkl"] = max(row.get("mkl", 0.0), round(direct_gflops(
                        args.mkl, "cblas_sgemm", n, args.reps), 1))
                row["cublasSgemm"] = max(row["cublasSgemm"], round(ours_gflops(
                    n, args.reps, Path(tmp)), 1))
                if args.sycl:
                    row["cublasSgemm_sycl"] = max(row.get("cublasSgemm_sycl", 0.0), round(
                        ours_gflops(n, args.reps, Path(tmp), "sycl"), 1))
            row["ratio"] = round(row["cublasSgemm"] / row["openblas"], 3)
            rows.append(row)
            print("  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"cpus": os.cpu_count(), "results": rows},
                                              indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
